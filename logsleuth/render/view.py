"""How this run shows things to people, in one object: the display zone, the colour mode and the
command line (for the reports that record it). The command line starts a run with :func:`begin`
(cli/app.py) and sets the zone and colours from its options (``clock.set_zone``,
``console.set_color``); the renderers read :func:`current`. Data flows one way: the CLI writes the
view, render reads it, nothing in render reaches back into the CLI."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

UTC = dt.timezone.utc


@dataclass
class View:
    zone: dt.tzinfo = UTC  # the display zone (clock.set_zone)
    zone_name: str = "UTC"  # its IANA name
    color: str = "auto"  # always | never | auto (console.set_color)
    argv: list[str] = field(default_factory=list)  # the run's arguments (provenance.command_line)


_current = View()


def current() -> View:
    """The view of this run."""
    return _current


def begin(argv: list[str] | None = None) -> View:
    """A new run's view (UTC, colours by the terminal, this command line): nothing of an earlier
    run in this process carries over."""
    global _current
    _current = View(argv=list(argv or []))
    return _current
