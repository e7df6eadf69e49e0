"""The terminal: rich Consoles for stdout and stderr, with markup and emoji turned off; colours by
``--color`` (``auto``: on a terminal, unless ``NO_COLOR``; ``FORCE_COLOR`` turns them on when
piped), the width of the terminal or ``COLUMNS``, and no trailing padding on any line."""

from __future__ import annotations

import os
import re
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # rich is loaded by SafeConsole when a console is built: JSON output never needs it
    from rich.console import Console

from logsleuth.render.view import current
from logsleuth.safe import SafeConsole


def set_color(mode: str | None) -> None:
    """``--color`` of this run, kept in its view (render/view.py)."""
    current().color = (mode or "auto").lower()


def color_mode() -> str:
    """``always``, ``never`` or ``auto``: ``--color``, else ``NO_COLOR`` (never) or ``FORCE_COLOR``
    (always) when they are set and not empty, else auto (colours on a terminal)."""
    color = current().color
    if color in ("always", "never"):
        return color
    if os.environ.get("NO_COLOR"):
        return "never"
    if os.environ.get("FORCE_COLOR"):
        return "always"
    return "auto"


def colors_forced() -> bool:
    return color_mode() == "always"


def _color_kwargs() -> dict:
    mode = color_mode()
    if mode == "never":
        return {"color_system": None, "no_color": True}
    if mode == "always":
        term = os.environ.get("TERM", "").lower()
        system = "truecolor" if os.environ.get("COLORTERM", "").lower() in ("truecolor", "24bit") else "256" if "256" in term else "standard"
        return {"force_terminal": True, "color_system": system, "no_color": False}
    return {}


_STYLE = re.compile(r"\x1b\[[0-9;]*m")


def _rstrip(line: str) -> str:
    """The line without the spaces at its end, the styles among them kept."""
    codes = []
    while True:
        line = line.rstrip(" \t")
        i = line.rfind("\x1b[")
        if i < 0 or not _STYLE.fullmatch(line, i):
            return line + "".join(reversed(codes))
        codes.append(line[i:])
        line = line[:i]


class _NoTrailingSpace:
    """A text stream that writes whole lines without the spaces rich pads tables with."""

    def __init__(self, out) -> None:
        self.out = out
        self.pending = ""

    def write(self, s: str) -> int:
        text = self.pending + s
        cut = text.rfind("\n")
        if cut < 0:
            self.pending = text
        else:
            self.out.write("".join(_rstrip(ln) + "\n" for ln in text[:cut].split("\n")))
            self.pending = text[cut + 1 :]
        return len(s)

    def flush(self) -> None:
        if self.pending:
            self.out.write(self.pending)
            self.pending = ""
        self.out.flush()

    def isatty(self) -> bool:
        return is_terminal()

    def fileno(self) -> int:
        return self.out.fileno()

    @property
    def encoding(self) -> str:
        return getattr(self.out, "encoding", None) or "utf-8"


MAX_COLUMNS = 1000  # COLUMNS=99999999 would write rules and padding of that width on every line


def _columns() -> int | None:
    try:
        cols = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        return None
    return min(MAX_COLUMNS, max(40, cols)) if cols > 0 else None


def stdout_console() -> Console:
    # piped: COLUMNS when it is set, else wide enough that no table wraps an id or a path (grep sees
    # whole rows); never padded with trailing spaces
    width = None if is_terminal() else (_columns() or 400)
    return SafeConsole(file=_NoTrailingSpace(sys.stdout), markup=False, emoji=False, highlight=False, soft_wrap=False, width=width, **_color_kwargs())


def stderr_console() -> Console:
    return SafeConsole(file=sys.stderr, markup=False, emoji=False, highlight=False)


def is_terminal() -> bool:
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def report_width(default: int = 100) -> int:
    """Columns for a report written as text: ``COLUMNS``, else the terminal stderr is on (``analyze
    | less`` wraps for the screen it is read on), else ``default``."""
    cols = _columns()
    if cols:
        return cols
    try:
        if sys.stderr.isatty():
            return max(40, os.get_terminal_size(sys.stderr.fileno()).columns)
    except (AttributeError, ValueError, OSError):
        pass
    return default


def report_console() -> Console:
    """The terminal report's console: the terminal's width (or ``COLUMNS``; when piped, the width of
    the terminal stderr is on, else 100 as for text), colours by ``--color``."""
    width = None if is_terminal() else report_width()
    return SafeConsole(markup=False, emoji=False, highlight=False, soft_wrap=False, width=width, **_color_kwargs())
