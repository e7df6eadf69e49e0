"""Coverage: which time each input really covers, where it has gaps, and which levels it holds.

Built from the times and levels of a sample of every input's records (every 100th record, plus the
first and last; all of them for ``inspect``) and from its events. Detectors ask it whether a key
window is covered by the log that should show it, and lower their confidence when it is not.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

import polars as pl

from logsleuth.reader import InputReport

MIN_GAP = dt.timedelta(minutes=5)
GAP_FACTOR = 10  # a gap is longer than MIN_GAP and than 10x the typical spacing of samples (~1000 records)


@dataclass
class Gap:
    start: dt.datetime
    end: dt.datetime

    @property
    def seconds(self) -> float:
        return (self.end - self.start).total_seconds()


@dataclass
class Coverage:
    path: str
    first: dt.datetime | None
    last: dt.datetime | None
    gaps: list[Gap] = field(default_factory=list)
    levels: dict[str, int] = field(default_factory=dict)  # sampled records and events per level

    @property
    def has_info(self) -> bool:
        return self.levels.get("INFO", 0) > 0 or self.levels.get("DEBUG", 0) > 0 or self.levels.get("TRACE", 0) > 0

    def covers(self, t0: dt.datetime, t1: dt.datetime) -> tuple[bool, str]:
        """Is [t0, t1] inside the file's span and free of gaps? (and why not)"""
        if self.first is None or self.last is None:
            return False, f"{self.path} has no timestamps"
        if t1 < self.first or t0 > self.last:
            return False, f"{self.path} covers {_t(self.first)} to {_t(self.last)} only"
        if t0 < self.first:
            return False, f"{self.path} starts at {_t(self.first)}, after {_t(t0)}"
        if t1 > self.last:
            return False, f"{self.path} ends at {_t(self.last)}, before {_t(t1)}"
        for g in self.gaps:
            if g.start < t1 and g.end > t0:
                return False, f"{self.path} has no lines from {_t(g.start)} to {_t(g.end)}"
        return True, ""

    def to_json(self) -> dict:
        from logsleuth.timeparse import iso_utc

        return {
            "first_ts": iso_utc(self.first),
            "last_ts": iso_utc(self.last),
            "gaps": [{"from": iso_utc(g.start), "to": iso_utc(g.end), "seconds": round(g.seconds, 1)} for g in self.gaps],
            "levels": dict(self.levels),
        }


def _t(t: dt.datetime) -> str:
    return t.astimezone(dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def compute(rep: InputReport, events: pl.DataFrame | None = None) -> Coverage:
    times = rep.coverage if rep.coverage is not None else pl.DataFrame(schema={"ts": pl.Datetime("us", "UTC"), "level": pl.String})
    if events is not None and events.height:
        times = pl.concat([times, events.select("ts", "level").filter(pl.col("ts").is_not_null())], how="vertical_relaxed")
    times = times.sort("ts")
    cov = Coverage(rep.name, rep.first_ts, rep.last_ts)
    if times.height:
        lv = times.group_by("level").len().drop_nulls("level")
        cov.levels = {k: int(v) for k, v in lv.iter_rows()}
    if times.height >= 3:
        d = times.select(gap=pl.col("ts").diff().dt.total_microseconds() / 1e6, start=pl.col("ts").shift(1), end=pl.col("ts"))
        typical = d["gap"].drop_nulls().median() or 0.0
        threshold = max(MIN_GAP.total_seconds(), GAP_FACTOR * float(typical))
        for start, end in d.filter(pl.col("gap") > threshold).select("start", "end").iter_rows():
            cov.gaps.append(Gap(start, end))
    return cov
