"""The terminal: one rich Console for stdout and one for stderr, with markup and emoji turned off."""

from __future__ import annotations

import sys

from rich.console import Console

from logsleuth.safe import SafeConsole


def stdout_console() -> Console:
    # piped: wide enough that no table wraps an id or a path (grep sees whole rows)
    width = None if is_terminal() else 400
    return SafeConsole(markup=False, emoji=False, highlight=False, soft_wrap=False, width=width)


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
    import os

    try:
        cols = int(os.environ.get("COLUMNS", ""))
        if cols > 0:
            return max(40, cols)
    except ValueError:
        pass
    try:
        if sys.stderr.isatty():
            return max(40, os.get_terminal_size(sys.stderr.fileno()).columns)
    except (AttributeError, ValueError, OSError):
        pass
    return default


def report_console() -> Console:
    """The terminal report's console: the terminal's width (or ``COLUMNS``; 80 when neither says)."""
    return SafeConsole(markup=False, emoji=False, highlight=False, soft_wrap=False)
