"""Ingest: from the bytes of each input to its records.

In: paths, globs, directories or stdin (``sources``: compression by magic bytes, encodings, chunks
of whole lines). Out: per input, a frame of records (one row per log record, stack traces attached,
``ts`` in UTC, level, logger, thread, message) and an ``InputReport`` of what was found (envelope,
layout, lines, span, coverage). Stages inside, in order: ``sources`` -> ``envelopes`` (docker, CRI,
JSON wrappers peeled) -> ``layouts/`` (detected per file, or a user's conversion pattern) ->
``timeparse`` (stamps to UTC) -> ``records`` (multi-line records) -> ``reader`` (drives them chunk by
chunk); ``rotation`` (segments of one log) and ``coverage`` (span, gaps, levels) beside them.
"""
