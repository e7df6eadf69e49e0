"""The timeline chart's content, read from the findings and the events table: one lane per finding
subject (each stuck producer, expired partition, stalled send) with the period it was affected;
the causes as distinct, labelled markers (shedding decision, bundle unload, outage start and end,
connection failures, a recovery); a strip of event rates per kind (linear, each row to its own
scale; the cause kinds always kept); all zoomed to the incident window around the worst finding,
with the whole span of the logs as a thin overview. render/svg.py draws it.

Nothing here is drawn with a plotting library: the chart is SVG written from this model
(docs/reports.md says why)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

import polars as pl

from logsleuth.detectors.finding import SEVERITY_RANK, Finding
from logsleuth.findings import Analysis
from logsleuth.render import subjects as subj
from logsleuth.safe import visible

MAX_LANES = 30
MAX_MARKERS = 14
RATE_ROWS = 8
RATE_BUCKETS = 120

# cause events: (label, shape, colour); shapes are drawn by svg.py
CAUSES = {
    "shedder_unloading": ("shedding decision", "triangle", "#e65100"),
    "bundle_disabling": ("bundle unload", "diamond", "#6a1b9a"),
    "connection_failed": ("broker unreachable", "cross", "#b71c1c"),
    "node_disconnected": ("broker disconnected", "cross", "#c62828"),
    "node_connect_timeout": ("connect timeout", "cross", "#ad1457"),
    "sarama_broker_closing": ("connection closing", "cross", "#b71c1c"),
    "sarama_dial_failed": ("dial failed", "cross", "#880e4f"),
    "sarama_breaker_open": ("circuit breaker open", "square", "#4e342e"),
}
RECOVERED = ("recovered", "circle", "#2e7d32")
SEV_COLOR = {"critical": "#b71c1c", "high": "#e65100", "medium": "#9e9d24", "low": "#00838f", "info": "#757575"}


@dataclass
class Lane:
    finding: int  # the finding's number in the report (1 = worst)
    severity: str
    label: str
    start: dt.datetime | None
    end: dt.datetime | None
    ongoing: bool = False  # still affected when the logs end
    outside: bool = False  # the period lies outside the zoomed window


@dataclass
class Marker:
    ts: dt.datetime
    kind: str  # the label of CAUSES / RECOVERED
    shape: str
    color: str
    detail: str  # what and where ('public/default/0x4…', 'broker-1.log:1457')
    end: dt.datetime | None = None  # a run of the same cause (an outage): its last event
    count: int = 1
    cited: bool = False  # a line a finding quotes as evidence
    letter: str = ""


@dataclass
class Chart:
    window: tuple[dt.datetime, dt.datetime]
    span: tuple[dt.datetime, dt.datetime]
    lanes: list[Lane]
    markers: list[Marker]
    rates: list[tuple[str, list[int]]]  # (event kind, counts per bucket in the window)
    bucket_s: float
    overview: list[int]  # all events per bucket over the whole span
    periods: list[tuple[dt.datetime, dt.datetime, str]]  # every finding's period, for the overview
    more_lanes: int = 0
    more_markers: int = 0
    prefixes: list[str] = field(default_factory=list)  # label prefixes taken out (said in the caption)
    zoomed: bool = False
    rate_start: dt.datetime | None = None  # the first rate bucket's start (a round time)


def _utc(t):
    return t.astimezone(dt.timezone.utc) if isinstance(t, dt.datetime) else None


def period(f: Finding, s: dict | None = None) -> tuple[dt.datetime | None, dt.datetime | None]:
    """When a subject (or the finding) was affected: its typed window (detectors.facts.Subject),
    else the first of its time keys that it has."""
    win = getattr(s, "window", None)
    if win is not None and win.start.ts is not None:
        return _utc(win.start.ts), _utc(win.end.ts) or _utc(win.start.ts)
    if s is not None:
        start = next((_utc(s[k]) for k in ("first_seen", "from", "at") if isinstance(s.get(k), dt.datetime)), None)
        end = next((_utc(s[k]) for k in ("resolved_at", "last_seen", "to", "at") if isinstance(s.get(k), dt.datetime)), None)
        if start is not None:
            return start, end or start
    return _utc(f.first_seen), _utc(f.last_seen or f.first_seen)


CAUSE_REACH = dt.timedelta(hours=6)  # a cause further before its finding is named in words, not drawn


def _cause_time(f: Finding) -> dt.datetime | None:
    """When the cause a finding names happened (its ``cause``'s ``at`` or ``from``), if it says."""
    c = f.cause if isinstance(f.cause, dict) else None
    for k in ("at", "from"):
        t = _utc(c.get(k)) if c else None
        if isinstance(t, dt.datetime):
            return t
    return None


def _window(a: Analysis, span: tuple[dt.datetime, dt.datetime]) -> tuple[tuple[dt.datetime, dt.datetime], bool]:
    """The incident window: the periods of the findings that run together with the worst one
    (non-info; merged while the gap between them is under max(15 min, their length)), padded."""
    fs = [f for f in a.findings if f.severity != "info"] or list(a.findings)
    spans = sorted((p for p in (period(f) for f in fs) if p[0] is not None), key=lambda p: p[0])
    if not spans:
        return span, False
    worst = period(fs[0])
    if worst[0] is None:
        worst = spans[0]
    lo, hi = worst
    changed = True
    while changed:
        changed = False
        for s0, s1 in spans:
            gap = max(dt.timedelta(minutes=15), hi - lo)
            if s0 <= hi + gap and s1 >= lo - gap and (s0 < lo or s1 > hi):
                lo, hi = min(lo, s0), max(hi, s1)
                changed = True
    # the causes the findings name, however long before (an unload minutes before the first
    # rejection, an outage's first failed connection): the chart shows what the report says
    for f in fs:
        t = _cause_time(f)
        if t is not None and lo - CAUSE_REACH <= t < lo:
            lo = t
    lo -= max(dt.timedelta(seconds=30), (hi - lo) * 0.06)
    hi += max(dt.timedelta(seconds=30), (hi - lo) * 0.06)
    lo, hi = max(lo, span[0]), min(hi, span[1])
    if hi <= lo:
        hi = lo + dt.timedelta(seconds=1)
    zoomed = (hi - lo) < (span[1] - span[0]) * 0.9
    return (lo, hi), zoomed


def _bucket_index(ts: pl.Expr, start: dt.datetime, bucket_s: float) -> pl.Expr:
    return ((ts - pl.lit(start)).dt.total_microseconds() / 1e6 / bucket_s).floor().cast(pl.Int64)


def _counts(ev: pl.DataFrame, start: dt.datetime, bucket_s: float, n: int, by: str | None = None) -> dict:
    if ev.height == 0:
        return {}
    df = ev.with_columns(_b=_bucket_index(pl.col("ts"), start, bucket_s)).filter(pl.col("_b").is_between(0, n - 1))
    out: dict = {}
    keys = [by, "_b"] if by else ["_b"]
    for row in df.group_by(keys, maintain_order=True).len().iter_rows():
        k, b, c = (row[0], row[1], row[2]) if by else (None, row[0], row[1])
        out.setdefault(k, [0] * n)[int(b)] = int(c)
    return out


def build(a: Analysis, short=lambda p: visible(p)) -> Chart | None:
    """``short``: how paths are shown (render/paths.py)."""
    ev = a.events.filter(pl.col("ts").is_not_null())
    first, last = a.span
    if ev.height:
        first = min(x for x in (first, ev["ts"].min()) if x is not None)
        last = max(x for x in (last, ev["ts"].max()) if x is not None)
    if first is None or last is None:
        return None
    span = (_utc(first), _utc(last))
    if span[1] <= span[0]:
        span = (span[0], span[0] + dt.timedelta(seconds=1))
    (w0, w1), zoomed = _window(a, span)

    lanes: list[Lane] = []
    more = 0
    for i, f in enumerate(a.findings, 1):
        if f.severity == "info" and any(x.severity != "info" for x in a.findings):
            continue  # info findings are causes (load shedding), drawn as markers
        for s in f.subjects or [None]:
            if len(lanes) >= MAX_LANES:
                more += 1
                continue
            start, end = period(f, s)
            lane = Lane(i, f.severity, subj.label(s, short) if s else f.id, start, end, ongoing=bool(s and s.get("still_stuck")))
            if lane.ongoing:
                lane.end = span[1]
            lane.outside = start is not None and (start > w1 or (end or start) < w0)
            lanes.append(lane)
    p = subj.common_prefix([ln.label for ln in lanes]) if len(lanes) > 1 else ""
    prefixes = [p] if p else []
    for ln in lanes:
        ln.label = ln.label[len(p):] if p else ln.label

    cited = {(str(e.path), int(e.line)) for f in a.findings for e in f.evidence}
    markers = _markers(ev, (w0, w1), cited)
    for i, f in enumerate(a.findings, 1):  # a producer that recovered: when it did
        for s in f.subjects:
            t = _utc(s.get("resolved_at"))
            if t is not None and w0 <= t <= w1:
                markers.append(Marker(t, RECOVERED[0], RECOVERED[1], RECOVERED[2], visible(str(s.get("resolved_by") or "")), cited=True))
    markers.sort(key=lambda m: m.ts)
    more_markers = 0
    if len(markers) > MAX_MARKERS:  # the quoted ones first, then in time order
        keep = sorted(markers, key=lambda m: (not m.cited, m.ts))[:MAX_MARKERS]
        more_markers = len(markers) - len(keep)
        markers = sorted(keep, key=lambda m: m.ts)
    for k, m in enumerate(markers):
        m.letter = chr(ord("A") + k)

    bucket_s = nice_bucket((w1 - w0).total_seconds() / RATE_BUCKETS)
    start = dt.datetime.fromtimestamp((w0.timestamp() // bucket_s) * bucket_s, tz=dt.timezone.utc)
    n = int((w1 - start).total_seconds() // bucket_s) + 1
    inwin = ev.filter(pl.col("ts").is_between(w0, w1))
    per_kind = _counts(inwin, start, bucket_s, n, by="event")
    totals = sorted(per_kind.items(), key=lambda kv: (-sum(kv[1]), kv[0]))
    # the cause kinds and the kinds of the lines the findings quote are always kept, however rare
    where = pl.col("file" if "file" in inwin.columns else "path").cast(pl.String) + ":" + pl.col("line").cast(pl.String)
    quoted = set(inwin.filter(where.is_in([f"{p}:{ln}" for p, ln in cited]))["event"].unique().to_list()) if cited and inwin.height else set()
    keep = [k for k, _ in totals if k in CAUSES or k in quoted]
    others = [k for k, _ in totals if k not in keep]
    rows = keep[:RATE_ROWS] + others[: max(0, RATE_ROWS - len(keep))]
    rows.sort(key=lambda k: -sum(per_kind[k]))
    rates = [(k, per_kind[k]) for k in rows]
    rate_start = start
    over_s = max((span[1] - span[0]).total_seconds() / 200, 0.001)
    overview = _counts(ev, span[0], over_s, 200).get(None, [0] * 200)
    periods = []
    for f in a.findings:
        p0, p1 = period(f)
        if p0 is not None:
            periods.append((p0, p1 or p0, f.severity))
    return Chart((w0, w1), span, lanes, markers, rates, bucket_s, overview, periods, more, more_markers, prefixes, zoomed, rate_start)


def _markers(ev: pl.DataFrame, window: tuple[dt.datetime, dt.datetime], cited: set) -> list[Marker]:
    """One marker per run of one cause (a reconnect loop, an outage): its first and last event."""
    w0, w1 = window
    mk = ev.filter(pl.col("event").is_in(list(CAUSES)) & pl.col("ts").is_between(w0, w1))
    if mk.height == 0:
        return []
    gap = max(60.0, (w1 - w0).total_seconds() * 0.02)
    cols = [c for c in ("bundle", "address", "broker", "node") if c in mk.columns]
    mk = mk.sort("event", "ts").with_columns(
        _run=(
            (pl.col("event") != pl.col("event").shift(1))
            | ((pl.col("ts") - pl.col("ts").shift(1)).dt.total_microseconds() / 1e6 > gap)
        ).fill_null(True).cum_sum()
    )
    where = pl.col("file" if "file" in mk.columns else "path").cast(pl.String) + ":" + pl.col("line").cast(pl.String)
    mk = mk.with_columns(_cited=where.is_in([f"{p}:{ln}" for p, ln in cited]) if cited else pl.lit(False))
    runs = mk.group_by("_run", maintain_order=True).agg(
        pl.col("event").first(), pl.col("ts").min().alias("t0"), pl.col("ts").max().alias("t1"), pl.len().alias("n"),
        pl.col("_cited").any(), *(pl.col(c).drop_nulls().first() for c in cols),
    )
    out = []
    for r in runs.iter_rows(named=True):
        label, shape, color = CAUSES[r["event"]]
        detail = next(((f"node {r[c]}" if c == "node" else visible(str(r[c]))) for c in cols if r.get(c) is not None), "")
        t0, t1 = _utc(r["t0"]), _utc(r["t1"])
        out.append(Marker(t0, label, shape, color, detail, end=t1 if r["n"] > 1 and t1 > t0 else None, count=int(r["n"]), cited=bool(r["_cited"])))
    return out


NICE = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400]


def nice_bucket(seconds: float) -> float:
    """The round bucket width at or above ``seconds`` (sub-second widths stay as they are)."""
    if seconds < 1:
        return max(seconds, 0.001)
    return float(next((b for b in NICE if b >= seconds), NICE[-1]))


def severity_rank(lane: Lane) -> int:
    return SEVERITY_RANK[lane.severity]
