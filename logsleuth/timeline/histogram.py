"""The merged timeline: every input's events on one UTC axis (skew-corrected), bucketed per event
kind, with the causes marked. Data for ``logsleuth timeline`` and the report charts."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import polars as pl

from logsleuth.errors import LogsleuthError
from logsleuth.ingest.timeparse import _RELATIVE, _UNIT_SECONDS

# events that mark a cause on the timeline, and how to label them
MARKERS = {
    "shedder_unloading": "load shedding",
    "bundle_disabling": "bundle unload",
    "connection_failed": "broker unreachable",
    "node_disconnected": "broker disconnected",
    "node_connect_timeout": "connect timeout",
    "sarama_broker_closing": "sarama: broker connection closing",
    "sarama_dial_failed": "sarama: dial failed",
    "sarama_breaker_open": "sarama: circuit breaker open",
}
BUCKETS = [1, 2, 5, 10, 15, 20, 30, 60, 120, 180, 300, 600, 900, 1200, 1800, 3600, 7200, 10800, 21600, 43200, 86400]  # seconds


@dataclass
class Histogram:
    start: dt.datetime
    bucket_s: int
    n: int
    rows: list[tuple[str, int, list[int]]]  # (event kind, total, counts per bucket)
    markers: list[dict]  # {ts, label, path, line, text}: path is the file the line is in


def bucket_label(seconds: int) -> str:
    """'5 min', '1 h', ... for a bucket width."""
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min"
    if seconds < 86400:
        return f"{seconds // 3600} h"
    return f"{seconds // 86400} d"


def pick_bucket(span_s: float, target: int = 60) -> int:
    for b in BUCKETS:
        if span_s / b <= target:
            return b
    return BUCKETS[-1]


def histogram(events: pl.DataFrame, top: int = 12, target: int = 60, always: tuple[str, ...] | list[str] = ()) -> Histogram | None:
    """``always``: event kinds kept however rare (the kinds of the lines a finding quotes)."""
    ev = events.filter(pl.col("ts").is_not_null())
    if ev.height == 0:
        return None
    t0, t1 = ev["ts"].min(), ev["ts"].max()
    b = pick_bucket(max((t1 - t0).total_seconds(), 1.0), target)
    start = dt.datetime.fromtimestamp((int(t0.timestamp()) // b) * b, tz=dt.timezone.utc)
    n = int((t1 - start).total_seconds() // b) + 1
    idx = ((pl.col("ts") - pl.lit(start)).dt.total_seconds() // b).cast(pl.Int64)
    counts = ev.with_columns(_b=idx).group_by("event", "_b", maintain_order=True).len()
    totals = counts.group_by("event", maintain_order=True).agg(pl.col("len").sum()).sort(["len", "event"], descending=[True, False])
    # the busiest kinds, and every kind that marks a cause even if rare (an unload is one line)
    keep = totals.head(top)["event"].to_list() + [e for e in totals["event"].to_list() if e in MARKERS][:6] + list(always)
    totals = totals.filter(pl.col("event").is_in(keep))
    rows = []
    for name, total in totals.iter_rows():
        series = [0] * n
        for bi, c in counts.filter(pl.col("event") == name).select("_b", "len").iter_rows():
            series[int(bi)] = int(c)
        rows.append((name, int(total), series))
    mk = ev.filter(pl.col("event").is_in(list(MARKERS))).with_columns(_b=idx)
    # a run of the same cause (one reconnect loop, one outage) is one marker: the first line, and how many
    mk = mk.sort("event", "ts", maintain_order=True).with_columns(
        _run=((pl.col("_b").diff().fill_null(99) > 2) | (pl.col("event") != pl.col("event").shift(1))).cum_sum()
    )
    runs = mk.group_by("_run", maintain_order=True).agg(pl.all().first(), n=pl.len()).sort("ts").head(200)
    markers = [
        {"ts": r["ts"], "label": MARKERS[r["event"]], "event": r["event"], "path": r.get("file") or r["path"], "line": r["line"], "text": r.get("raw"), "count": int(r["n"]),
         "detail": r.get("bundle") or r.get("address") or r.get("broker") or (str(r["node"]) if r.get("node") is not None else None)}
        for r in runs.iter_rows(named=True)
    ]
    return Histogram(start, b, n, rows, markers)


def around(events: pl.DataFrame, center: dt.datetime, window: dt.timedelta) -> pl.DataFrame:
    lo = center - window if center - dt.datetime.min.replace(tzinfo=center.tzinfo) > window else dt.datetime.min.replace(tzinfo=center.tzinfo)
    hi = center + window if dt.datetime.max.replace(tzinfo=center.tzinfo) - center > window else dt.datetime.max.replace(tzinfo=center.tzinfo)
    return events.filter(pl.col("ts").is_between(lo, hi))


def parse_duration(text: str) -> dt.timedelta:
    """'5m', '30s', '2h', '1d' -> timedelta (``--window``)."""
    m = _RELATIVE.match(text)
    if not m or m.group("sign") or m.group("ago"):
        raise LogsleuthError(f"cannot read the duration {text!r} (use e.g. 30s, 5m, 2h)")
    unit = m.group("unit").lower()
    key = "ms" if unit == "ms" else unit[0]
    try:
        return dt.timedelta(seconds=float(m.group("n")) * _UNIT_SECONDS[key])
    except OverflowError:
        raise LogsleuthError(f"the duration {text!r} is out of range") from None
