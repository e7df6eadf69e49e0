"""Recognise: from records to the events table.

In: the records ``ingest`` reads, and the pattern packs (``patterns/packs/*.toml``, loaded and
validated by ``packs``/``packcheck``). Out: the events table (``events.EventSet``: one row per
recognised record, with the pack's fields), merged and ordered across inputs, and the unrecognised
messages as templates (``templates``). ``matcher`` is the vectorised matcher, ``eventstore`` keeps
the events table on disk, ``patterntest`` is ``patterns test``.
"""
