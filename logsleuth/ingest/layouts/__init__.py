"""Layouts: how a line wraps its message. ``catalog`` (the built-in layouts of ``patterns/layouts.toml``
and user conversion patterns), ``convpattern`` (the pyparsing compiler for log4j/logback patterns),
``datefmt`` (``%d{…}`` to a regex and a ``TimeSpec``), ``detect`` (the best layout per file)."""
