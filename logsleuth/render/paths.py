"""Shorter paths in the reports people read: the directory every input shares is said once and left
out of every path after it (titles, root causes, evidence, subjects), so an 80-column terminal shows
the file names instead of the same prefix wrapped into pieces."""

from __future__ import annotations

import re

from logsleuth.safe import visible


class Shortener:
    def __init__(self, names: list[str]):
        names = [n for n in dict.fromkeys(names) if n]
        self.prefix = common_dir(names)
        self._map = {visible(n): visible(n[len(self.prefix):]) for n in names} if self.prefix else {}
        keys = sorted(self._map, key=len, reverse=True)
        self._re = re.compile("|".join(re.escape(k) for k in keys)) if keys else None

    def text(self, s: str) -> str:
        """``s`` with every input's full name replaced by its short name."""
        if self._re is None or not s:
            return s
        return self._re.sub(lambda m: self._map[m.group(0)], s)

    def path(self, p: str) -> str:
        v = visible(p)
        return self._map.get(v, v)


def common_dir(names: list[str]) -> str:
    """The directory prefix (ending in '/') all names share, '' when there is none (one of them has
    no directory, or they share nothing)."""
    if not names or any("/" not in n or n == "<stdin>" for n in names):
        return ""
    first, last = min(names), max(names)
    i = 0
    while i < min(len(first), len(last)) and first[i] == last[i]:
        i += 1
    cut = first[:i].rfind("/")
    return first[: cut + 1] if cut > 0 else ""  # "/" alone says nothing


def prefix_lines(prefix: str, width: int) -> list[str]:
    """The lines that name the directory left out of every path, each at most ``width`` columns:
    one line when it fits; else the directory on a line of its own and the explanation on the
    next (never broken mid-phrase); a directory longer than the width is cut at the width, its
    continuation indented by two."""
    from rich.cells import cell_len

    one = f"in {prefix} (named below without it)"
    if cell_len(one) <= width:
        return [one]
    lines, line = [], "in "
    for ch in prefix:
        if cell_len(line + ch) > width:
            lines.append(line)
            line = "  "
        line += ch
    return lines + [line, "(named below without it)"]
