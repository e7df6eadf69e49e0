"""Layout detection of a tiny sample in one pass of Python's ``re``, instead of ~100 Polars queries.

Detecting a file's wrappers and layout runs each wrapper, layout and stamp regex over the sample's
lines; on Polars each query compiles its regex in Rust's engine (~1 ms for a Unicode-aware
pattern), which is most of the CPU a small input costs (~0.15 CPU-s for a one-line log). Python's
``re`` compiles the same patterns in a fraction of that, and for a few lines its per-line cost does
not matter. It is used only where it gives the same answers as Rust's engine:

* the sample is tiny (``MAX_CHARS`` in all, so the per-line Python stays bounded) and every
  character in it is printable ASCII or a tab (so ``\\w``, ``\\s``, ``\\d``, ``\\b``, case folding,
  character counts and ``strip`` agree between the engines);
* the pattern is ASCII and uses only syntax both engines read alike (``safe``): the escapes
  listed below, groups ``(?:``, ``(?P<name>``, ``(?i:`` (``(?i)`` only first), counted repetition
  ``{n}``, ``{n,}``, ``{n,m}``, and classes without nesting or set operations. Anything else
  (``\\p{..}``, ``[[:alpha:]]``, ``\\<``, ``\\z``, other flags, a non-ASCII character, ...) answers
  None and the caller asks Polars for that pattern as before.
"""

from __future__ import annotations

import re
from functools import lru_cache

MAX_CHARS = 4096  # a sample at most this long (characters, newlines included) is checked here
_PRINTABLE = re.compile(r"[\t\x20-\x7e]*")
_ESC_OUT = set("dDwWsSbBtnrfv") | set(".\\-[](){}*+?|^$/:\"'#&~=,%@!;_ ")
_ESC_IN = set("dDwWsStnrfv") | set(".\\-[](){}*+?|^$/:\"'#&~=,%@!;_ ")
_COUNT = re.compile(r"\{[0-9]{1,3}(?:,[0-9]{0,3})?\}")
_NAME = re.compile(r"\(\?P<[A-Za-z_][A-Za-z0-9_]*>")


def tiny(lines: list[str]) -> bool:
    """Are these lines few and plain enough to be checked here?"""
    total = 0
    for x in lines:
        total += len(x) + 1
        if total > MAX_CHARS or not _PRINTABLE.fullmatch(x):
            return False
    return True


def _syntax_ok(p: str) -> bool:
    if not p.isascii():
        return False
    i, n, in_class = 0, len(p), False
    while i < n:
        c = p[i]
        if c == "\\":
            if i + 1 >= n or p[i + 1] not in (_ESC_IN if in_class else _ESC_OUT):
                return False
            i += 2
            continue
        if in_class:
            if c == "[" or (c in "&-~|" and p[i + 1 : i + 2] == c):
                return False  # a nested class or a set operation in Rust's syntax (re would warn of them)
            if c == "]":
                in_class = False
            i += 1
            continue
        if c == "[":
            j = i + 1 + (p[i + 1 : i + 2] == "^")
            if p[j : j + 1] in ("]", ""):
                return False  # '[]...]' and '[^]...]': read differently
            in_class = True
            i = j
            continue
        if c == "(" and p[i + 1 : i + 2] == "?":
            if p.startswith("(?:", i) or p.startswith("(?i:", i):
                i += 3 if p[i + 2] == ":" else 4
                continue
            m = _NAME.match(p, i)
            if m:
                i = m.end()
                continue
            if i == 0 and p.startswith("(?i)"):
                i = 4
                continue
            return False
        if c == "}":
            return False
        if c == "{":
            m = _COUNT.match(p, i)
            if not m:
                return False
            i = m.end()
            continue
        i += 1
    return not in_class


@lru_cache(maxsize=512)
def safe(pattern: str) -> re.Pattern | None:
    """``pattern`` compiled by ``re`` when both engines read it alike, else None."""
    if not _syntax_ok(pattern):  # (which also keeps out what re would warn of: no warnings filter is touched here, inputs are read in threads)
        return None
    try:
        return re.compile(pattern)
    except (re.error, RecursionError, OverflowError):
        return None
