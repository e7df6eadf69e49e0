"""What every detector gets and gives.

A detector is a module in ``logsleuth/detectors/`` with a module-level ``DETECTOR`` (a
:class:`Detector`). It reads the events table in a :class:`Context` and returns findings; it never
reads files itself. Detectors are found automatically (see ``detectors/__init__.py``).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import polars as pl

from logsleuth.findings import Evidence, Finding
from logsleuth.coverage import Coverage
from logsleuth.coverage import compute as compute_coverage
from logsleuth.links import Links
from logsleuth.reader import InputReport, ReadOptions
from logsleuth.render.safe import visible


@dataclass
class Context:
    events: pl.DataFrame  # every event of every input, ordered by (ts, file, line)
    inputs: list[InputReport]
    options: dict = field(default_factory=dict)  # detector options from the CLI (e.g. sarama_config)
    read_options: ReadOptions | None = None  # how the inputs were read (for records())
    links: Links | None = None  # broker connection -> client log
    _records: dict = field(default_factory=dict, repr=False)
    _coverage: dict = field(default_factory=dict, repr=False)

    def coverage(self, path: str) -> Coverage | None:
        """Span, gaps and levels of one input (see logsleuth/coverage.py)."""
        if path not in self._coverage:
            rep = self.input(path)
            if rep is None:
                return None
            self._coverage[path] = compute_coverage(rep, self.events.filter(pl.col("path") == path))
        return self._coverage[path]

    def client_of(self, connection: str | None):
        """The client log that made a broker-side connection (a links.Link), if the logs tell."""
        if self.links is None:
            self.links = Links(self.events)
        return self.links.client_of(connection)

    def records(self, path: str) -> pl.DataFrame:
        """Every record of one input (line, line_end, ts, level, logger, thread, msg, raw), read
        again on demand and cached: for detectors that need the lines no pattern matched (e.g.
        the application's last successful send before a stall). Costs a full read of that file."""
        if path not in self._records:
            from logsleuth.reader import read_source
            from logsleuth.sources import Source

            src = Source("-", None) if path == "-" else Source(path, Path(path))
            if src.is_stdin:
                raise ValueError("records() cannot re-read stdin")
            recs, _ = read_source(src, self.read_options or ReadOptions())
            self._records[path] = recs
        return self._records[path]

    def of(self, *names: str) -> pl.DataFrame:
        """Events with one of these event names."""
        return self.events.filter(pl.col("event").is_in(list(names)))

    def system(self, system: str) -> pl.DataFrame:
        return self.events.filter(pl.col("system") == system)

    def input(self, path: str) -> InputReport | None:
        for r in self.inputs:
            if r.name == path:
                return r
        return None


@dataclass(frozen=True)
class Detector:
    id: str
    title: str
    systems: tuple[str, ...]
    run: Callable[[Context], list[Finding]]
    doc: str = ""  # docs/findings/<id>.md


def evidence(row: dict, note: str = "") -> Evidence:
    """An evidence line from an events-table row: its path, first line and original text."""
    text = row.get("raw") or ""
    return Evidence(path=row["path"], line=int(row["line"]), text=text, ts=row.get("ts"), note=note)


def rows(df: pl.DataFrame) -> list[dict]:
    return list(df.iter_rows(named=True))


def fmt_time(t: dt.datetime | None) -> str:
    if t is None:
        return "an unknown time"
    return t.astimezone(dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def fmt_duration(seconds: float | None) -> str:
    if seconds is None:
        return "unknown"
    s = float(seconds)
    if s < 1:
        return f"{s * 1000:.0f} ms"
    if s < 120:
        return f"{s:.1f} s"
    if s < 7200:
        return f"{s / 60:.1f} min"
    if s < 172800:
        return f"{s / 3600:.1f} h"
    return f"{s / 86400:.1f} days"


def safe(text: str | None) -> str:
    """Log-derived text placed inside a finding's prose."""
    return visible(text or "")
