"""Untrusted log text on a terminal: never markup, never escape sequences.

Rich only interprets markup in strings it is told to; logsleuth hands it :class:`rich.text.Text`
objects built from :func:`visible`, which also shows control characters (ANSI escapes, NUL,
carriage returns, bidi overrides) as visible ``\\x1b``-style escapes so a log line cannot repaint
or reorder the analyst's terminal.
"""

from __future__ import annotations

import re

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _escape(m: re.Match) -> str:
    c = m.group(0)
    o = ord(c)
    if o <= 0xFF:
        return f"\\x{o:02x}"
    return f"\\u{o:04x}"


def visible(text: str | None, keep_newlines: bool = False) -> str:
    """``text`` with control characters shown as escapes (tabs kept; newlines kept if asked)."""
    if text is None:
        return ""
    s = _CONTROL.sub(_escape, text)
    if not keep_newlines:
        s = s.replace("\n", "\\n")
    return s


# an evidence line in a report to paste: long enough for any real log line, short enough that one
# 50 MB line does not make a 50 MB postmortem (the path:line next to it leads to the whole line)
EVIDENCE_CHARS = 2000


def one_line(text: str | None, limit: int | None = None) -> str:
    """First line of ``text``, made visible and cut to ``limit`` characters."""
    if text is None:
        return ""
    first = text.split("\n", 1)[0]
    s = visible(first)
    if limit is not None and len(s) > limit:
        s = s[: max(0, limit - 1)] + "…"
    return s


def json_visible(text: str) -> str:
    """JSON text for a terminal: ``json.dumps`` escapes C0 controls but leaves DEL, C1 controls and
    bidi overrides raw; this escapes them too, as ``\\uXXXX`` (still valid JSON)."""
    return _CONTROL.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)
