"""``analyze``: read everything, build the events table, run every detector, rank the findings."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

import polars as pl

from logsleuth import events as ev
from logsleuth.detectors import run_all
from logsleuth.detectors.base import Context
from logsleuth.findings import Finding
from logsleuth.packs import PackSet
from logsleuth.reader import InputReport, ReadOptions


@dataclass
class Analysis:
    inputs: list[InputReport]
    events: pl.DataFrame
    findings: list[Finding]
    since: dt.datetime | None = None
    until: dt.datetime | None = None
    options: dict = field(default_factory=dict)

    @property
    def span(self) -> tuple[dt.datetime | None, dt.datetime | None]:
        firsts = [r.first_ts for r in self.inputs if r.first_ts is not None]
        lasts = [r.last_ts for r in self.inputs if r.last_ts is not None]
        return (min(firsts) if firsts else None, max(lasts) if lasts else None)

    @property
    def lines(self) -> int:
        return sum(r.lines for r in self.inputs)

    @property
    def records(self) -> int:
        return sum(r.records for r in self.inputs)

    def events_by_file(self) -> dict[str, int]:
        if self.events.height == 0:
            return {}
        return dict(self.events.group_by("path").len().iter_rows())


def analyze(
    paths: list[str],
    opts: ReadOptions,
    packs: PackSet,
    flt: ev.EventFilter | None = None,
    detector_options: dict | None = None,
    only: list[str] | None = None,
) -> Analysis:
    result = ev.collect(paths, opts, packs, flt)
    ctx = Context(result.events, result.inputs, detector_options or {}, read_options=opts)
    findings = run_all(ctx, only)
    return Analysis(
        inputs=result.inputs,
        events=result.events,
        findings=findings,
        since=flt.since if flt else None,
        until=flt.until if flt else None,
        options=detector_options or {},
    )
