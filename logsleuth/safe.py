"""The one neutraliser for untrusted text on every way out (docs/robustness.md, "Untrusted text").

Untrusted: log text, file and directory names, envelope fields, pack contents, options echoed back.
Each way out has its rule, and each rule is here:

* terminal and text (:func:`visible`): control characters (ANSI/OSC escapes, BEL, NUL, carriage
  returns, C1), bidi overrides and isolates, zero-width characters and line/paragraph separators,
  and lone surrogates (a non-UTF-8 file name) are shown as visible escapes (``\\x1b``, ``\\u202e``,
  ``\\u200b``; a name's undecodable byte as ``\\xff``), so text cannot repaint or reorder the
  terminal or hide itself. Rich never reads markup in it: every console logsleuth makes is a
  :class:`SafeConsole` (markup, emoji and highlighting off), which also passes every segment it
  writes through :func:`visible` — a renderer that forgets to escape a field still cannot emit one.
* Markdown and HTML: each field escaped by its renderer (``render/markdown.md``, ``render/html.e``,
  both built on :func:`visible`), and the whole document through :func:`document_text`, which
  escapes any control, bidi or zero-width character that still got in.
* CSV (:func:`csv_cell`): a cell starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return
  is prefixed with ``'`` (OWASP's advice against spreadsheet formula injection).
* JSON (:func:`json_dumps`): valid JSON even with lone surrogates (escaped as ``\\udcff``, which any
  parser reads), control characters escaped by JSON itself; :func:`json_visible` for a terminal.
* names (:func:`display_name`): a file name that is not UTF-8 is shown with its bytes escaped.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any, Iterable

# C0 (but tab and newline), DEL, C1; Arabic letter mark, Mongolian vowel separator; zero-width space,
# joiners, LRM/RLM; line and paragraph separators, bidi embeddings and overrides; word joiner,
# invisible operators, bidi isolates; interlinear annotation; BOM/zero-width no-break space; and
# surrogates (never valid text: a file name's undecodable byte, a JSON "\ud800")
_UNSAFE = "\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ufff9-\ufffb\ud800-\udfff"
_CONTROL = re.compile(f"[{_UNSAFE}]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape(m: re.Match) -> str:
    c = m.group(0)
    o = ord(c)
    if o <= 0xFF:
        return f"\\x{o:02x}"
    if 0xDC80 <= o <= 0xDCFF:  # surrogateescape: the byte a non-UTF-8 name had
        return f"\\x{o - 0xDC00:02x}"
    return f"\\u{o:04x}"


def visible(text: object, keep_newlines: bool = False) -> str:
    """``text`` with unsafe characters shown as escapes (tabs kept; newlines kept if asked)."""
    if text is None:
        return ""
    s = _CONTROL.sub(_escape, text if isinstance(text, str) else str(text))
    if not keep_newlines:
        s = s.replace("\n", "\\n")
    return s


@functools.lru_cache(maxsize=1)
def _unsafe_chars() -> tuple[str, ...]:
    """Every character of ``_UNSAFE`` but the surrogates (a Polars string is valid UTF-8: it never
    holds one). All of them are below U+10000."""
    return tuple(chr(o) for o in [*range(0xD800), *range(0xE000, 0x10000)] if _CONTROL.match(chr(o)))


def visible_expr(expr: "pl.Expr", keep_newlines: bool = False) -> "pl.Expr":
    """:func:`visible` as a Polars expression (one Aho-Corasick pass over the column, no Python per
    row): the same escapes for the same characters."""
    chars = list(_unsafe_chars())
    escapes = [_escape(_CONTROL.match(c)) for c in chars]  # type: ignore[arg-type]
    if not keep_newlines:
        chars, escapes = chars + ["\n"], escapes + ["\\n"]
    return expr.str.replace_many(chars, escapes)


def json_visible_expr(expr: "pl.Expr") -> "pl.Expr":
    """:func:`json_visible` as a Polars expression."""
    chars = list(_unsafe_chars())
    return expr.str.replace_many(chars, [f"\\u{ord(c):04x}" for c in chars])


def has_unsafe(text: str) -> bool:
    return _CONTROL.search(text) is not None


def display_name(name: str) -> str:
    """A path as given (``sys.argv`` and ``os`` decode undecodable bytes as lone surrogates) as
    text that can be stored and printed: each undecodable byte as ``\\xNN``."""
    if _SURROGATE.search(name) is None:
        return name
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


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


def document_text(text: str) -> str:
    """A whole Markdown/HTML/text document: any unsafe character a field let through, escaped
    (newlines and tabs are the document's own)."""
    return visible(text, keep_newlines=True)


# --------------------------------------------------------------------------- JSON


def _json_surrogate(m: re.Match) -> str:
    return f"\\u{ord(m.group(0)):04x}"


def json_dumps(obj: Any, **kw: Any) -> str:
    """``json.dumps(obj, ensure_ascii=False)`` that is always valid UTF-8 JSON: a lone surrogate
    (Python keeps one from a JSON ``"\\ud800"`` or a non-UTF-8 name) is written as its escape."""
    kw.setdefault("ensure_ascii", False)
    return _SURROGATE.sub(_json_surrogate, json.dumps(obj, **kw))


def json_visible(text: str) -> str:
    """JSON text for a terminal: ``json.dumps`` escapes C0 controls but leaves DEL, C1 controls,
    bidi and zero-width characters raw; this escapes them too, as ``\\uXXXX`` (still valid JSON)."""
    return _CONTROL.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


# --------------------------------------------------------------------------- CSV

FORMULA_LEAD = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(text: str | None) -> str | None:
    """A CSV cell a spreadsheet will not run: one that starts like a formula gets a leading ``'``."""
    if text and text.startswith(FORMULA_LEAD):
        return "'" + text
    return text


def csv_expr(col: str):
    """:func:`csv_cell` as a Polars expression (for a String column)."""
    import polars as pl

    c = pl.col(col)
    lead = c.str.slice(0, 1).is_in(list(FORMULA_LEAD))
    return pl.when(lead).then(pl.lit("'") + c).otherwise(c).alias(col)


# --------------------------------------------------------------------------- rich


def _safe_segments(buffer: Iterable) -> Iterable:
    from rich.segment import Segment

    for seg in buffer:
        text, style, control = seg
        if control or _CONTROL.search(text) is None:
            yield seg
        else:
            yield Segment(visible(text, keep_newlines=True), style, control)


def _console_class():
    from rich.console import Console

    class SafeConsole(Console):
        """A rich console that never reads markup or emoji codes, and whose every written segment
        goes through :func:`visible` (rich's own escape codes are styles and controls, not text)."""

        def __init__(self, *args: Any, **kw: Any) -> None:
            kw["markup"] = False
            kw["emoji"] = False
            kw["highlight"] = False
            super().__init__(*args, **kw)

        def _render_buffer(self, buffer: Iterable) -> str:  # type: ignore[override]
            return super()._render_buffer(_safe_segments(buffer))

    return SafeConsole


_SAFE_CONSOLE = None


def SafeConsole(*args: Any, **kw: Any):  # noqa: N802 (a class, made on first use: rich loads late)
    global _SAFE_CONSOLE
    if _SAFE_CONSOLE is None:
        _SAFE_CONSOLE = _console_class()
    return _SAFE_CONSOLE(*args, **kw)
