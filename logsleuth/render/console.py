"""The terminal: one rich Console for stdout and one for stderr, with markup and emoji turned off."""

from __future__ import annotations

import sys

from rich.console import Console


def stdout_console() -> Console:
    # piped: wide enough that no table wraps an id or a path (grep sees whole rows)
    width = None if is_terminal() else 400
    return Console(markup=False, emoji=False, highlight=False, soft_wrap=False, width=width)


def stderr_console() -> Console:
    return Console(file=sys.stderr, markup=False, emoji=False, highlight=False)


def is_terminal() -> bool:
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False
