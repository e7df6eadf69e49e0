"""Coverage: which time each input really covers, where it has gaps, and which levels it holds.

Built while reading (``reader.read_source``) without keeping a row per record: the input's
timeline is cut into one-minute buckets (``BUCKET``) and, for every bucket that holds a record, the
earliest and the latest record of each level in it are kept (``edges``) — so memory follows the
time the input spans, not its size. Every record's time is known exactly where the log is sparse
(the reader parses every record between two sampled records more than a bucket apart), so the
occupied buckets are exact and every gap longer than two buckets is bounded by the true last
record before it and the true first record after it. The input's events are added too.
Detectors ask it whether a key window is covered by the log that should show it, and lower their
confidence when it is not.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

import polars as pl

from logsleuth.ingest.inputs import InputReport

BUCKET = "1m"  # resolution of the occupied-time table (a gap must be longer than 2 buckets to be exact)
BUCKET_S = 60.0
MIN_GAP = dt.timedelta(minutes=5)
GAP_FACTOR = 10  # a gap is longer than MIN_GAP and than 10x the typical spacing of occupied buckets


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
    levels: dict[str, int] = field(default_factory=dict)  # records per level among those read for coverage, and events

    @property
    def has_info(self) -> bool:
        return self.levels.get("INFO", 0) > 0 or self.levels.get("DEBUG", 0) > 0 or self.levels.get("TRACE", 0) > 0

    def shows(self, level: str) -> bool:
        """Could this input hold lines of ``level``? Yes when it holds that level or a lower one, or
        when no level is known (a log without levels is not said to lack any)."""
        order = ["TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"]
        known = {("WARN" if k == "WARNING" else k): v for k, v in self.levels.items() if v}
        if not any(k in order for k in known):
            return True
        want = order.index(level)
        return any(order.index(k) <= want for k in known if k in order)

    def uncovered(self, t0: dt.datetime, t1: dt.datetime) -> tuple[str, dt.datetime | None, dt.datetime | None] | None:
        """Why [t0, t1] is not inside the file's span and free of gaps, as data (None when it is):
        ('no-times', None, None), ('outside', first, last), ('starts-after', first, t0),
        ('ends-before', last, t1) or ('gap', gap start, gap end). The detectors word it."""
        if self.first is None or self.last is None:
            return "no-times", None, None
        if t1 < self.first or t0 > self.last:
            return "outside", self.first, self.last
        if t0 < self.first:
            return "starts-after", self.first, t0
        if t1 > self.last:
            return "ends-before", self.last, t1
        for g in self.gaps:
            if g.start < t1 and g.end > t0:
                return "gap", g.start, g.end
        return None

    def covers(self, t0: dt.datetime, t1: dt.datetime) -> tuple[bool, str]:
        """Is [t0, t1] inside the file's span and free of gaps? (and why not, in UTC: a sort key,
        not words for a person — detectors.facts words ``uncovered``)"""
        why = self.uncovered(t0, t1)
        if why is None:
            return True, ""
        kind, a, b = why
        if kind == "no-times":
            return False, f"{self.path} has no timestamps"
        text = {"outside": "covers {a} to {b} only", "starts-after": "starts at {a}, after {b}", "ends-before": "ends at {a}, before {b}",
                "gap": "has no lines from {a} to {b}"}[kind]
        return False, f"{self.path} " + text.format(a=_t(a), b=_t(b))  # type: ignore[arg-type]

    def to_json(self) -> dict:
        from logsleuth.ingest.timeparse import iso_utc

        return {
            "first_ts": iso_utc(self.first),
            "last_ts": iso_utc(self.last),
            "gaps": [{"from": iso_utc(g.start), "to": iso_utc(g.end), "seconds": round(g.seconds, 1)} for g in self.gaps],
            "levels": dict(self.levels),
        }


def _t(t: dt.datetime) -> str:
    return t.astimezone(dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def edges(frame: pl.DataFrame, key: pl.Expr, keep: list[str]) -> pl.DataFrame:
    """Per (bucket, level) of ``key`` (a UTC datetime): the rows with the earliest and the latest
    key, columns ``keep`` + ``n`` (the earliest row carries how many rows it stands for — the rows'
    own ``n`` summed when they have one — the latest 0). Rows without a key are dropped."""
    n = pl.col("n").fill_null(1) if "n" in frame.columns else pl.lit(1, dtype=pl.Int64)
    f = frame.select(*keep, _k=key, _n=n.cast(pl.Int64)).filter(pl.col("_k").is_not_null())
    if f.height == 0:
        return f.select(*keep, n=pl.col("_n"))
    f = f.with_columns(_b=pl.col("_k").dt.truncate(BUCKET))
    by = ["_b", "level"]
    f = f.with_columns(
        _lo=pl.col("_k") == pl.col("_k").min().over(by),
        _hi=pl.col("_k") == pl.col("_k").max().over(by),
        _sum=pl.col("_n").sum().over(by),
    )
    f = f.filter(pl.col("_lo") | pl.col("_hi")).unique(subset=[*by, "_lo"], keep="first", maintain_order=True)
    return f.select(*keep, n=pl.when(pl.col("_lo")).then(pl.col("_sum")).otherwise(0))


def _event_edges(events, ts_type: pl.DataType) -> pl.DataFrame:
    """``edges`` of the events (``ts``, ``level`` as text, ``n`` 1 each): the same rows in the same
    order, from two streamed aggregations of two narrow columns (the earliest and latest time and
    the count per bucket and level; then where each group's earliest and latest row is, which
    orders the rows as ``edges`` does). The events may be a table on disk of millions of rows
    (recognise/spill.py): the windows of ``edges`` held seven columns of them (200 MB for a
    reconnect storm of 2.7M events), an in-memory aggregation 260 MB, these 60."""
    ts, by = pl.col("ts"), ["_b", "level"]
    lf = (events.lazy().select(ts.cast(ts_type), "level").filter(ts.is_not_null())
          .with_row_index("_i").with_columns(_b=ts.dt.truncate(BUCKET)))
    g = lf.group_by(by).agg(lo=ts.min(), hi=ts.max(), n=pl.len().cast(pl.Int64)).collect(engine="streaming")
    at = lf.join(g.lazy().select(*by, "lo", "hi"), on=by, nulls_equal=True).group_by(by).agg(  # (the first row of each)
        lo_i=pl.when(ts == pl.col("lo")).then(pl.col("_i")).min(), hi_i=pl.when(ts == pl.col("hi")).then(pl.col("_i")).min(),
    ).collect(engine="streaming")
    g = g.join(at, on=by, nulls_equal=True)
    level = pl.col("level").cast(pl.String)
    lo = g.select(_i="lo_i", ts="lo", level=level, n="n")
    hi = g.filter(pl.col("hi") != pl.col("lo")).select(_i="hi_i", ts="hi", level=level, n=pl.lit(0, dtype=pl.Int64))
    return pl.concat([lo, hi]).sort("_i").drop("_i")


def compute(rep: InputReport, events: pl.DataFrame | None = None) -> Coverage:
    schema = {"ts": pl.Datetime("us", "UTC"), "level": pl.String, "n": pl.Int64}
    times = rep.coverage if rep.coverage is not None else pl.DataFrame(schema=schema)
    if "n" not in times.columns:  # an event store written before the bucket table: one row, one record
        times = times.with_columns(n=pl.lit(1, dtype=pl.Int64))
    times = times.select(pl.col("ts").cast(schema["ts"]), pl.col("level").cast(pl.String), pl.col("n").cast(pl.Int64))
    if events is not None and events.height:
        times = pl.concat([times, _event_edges(events, schema["ts"])])
    times = times.filter(pl.col("ts").is_not_null()).sort("ts")
    cov = Coverage(rep.name, rep.first_ts, rep.last_ts)
    if times.height:
        lv = times.group_by("level", maintain_order=True).agg(pl.col("n").sum()).drop_nulls("level").filter(pl.col("n") > 0)
        cov.levels = {k: int(v) for k, v in lv.iter_rows()}
    if times.height >= 2:
        # typical spacing: the median step between consecutive occupied buckets (one bucket when
        # the log writes every minute; 10 minutes for a log that writes every 10 minutes)
        steps = times.select(b=pl.col("ts").dt.truncate(BUCKET).unique().sort().diff().dt.total_seconds()).drop_nulls()
        typical = float(steps["b"].median() or BUCKET_S) if steps.height else BUCKET_S
        threshold = max(MIN_GAP.total_seconds(), GAP_FACTOR * typical)
        d = times.select(gap=pl.col("ts").diff().dt.total_microseconds() / 1e6, start=pl.col("ts").shift(1), end=pl.col("ts"))
        for start, end in d.filter(pl.col("gap") > threshold).select("start", "end").iter_rows():
            cov.gaps.append(Gap(start, end))
    return cov
