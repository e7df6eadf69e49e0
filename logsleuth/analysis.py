"""``analyze``: read everything, build the events table, run every detector, rank the findings."""

from __future__ import annotations

import dataclasses
import datetime as dt
from dataclasses import dataclass, field

import polars as pl

from logsleuth import events as ev
from logsleuth import rotation, skew
from logsleuth.links import Links
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
    changes: list = field(default_factory=list)  # templates.Change: what else changed
    window: tuple | None = None  # (incident window, baseline window) the changes compare
    templates_counted: bool = False
    logs: dict = field(default_factory=dict)  # rotated log -> its segments, oldest first (rotation.group)

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

    def spans_by_path(self) -> dict:
        return {r.name: (r.first_ts, r.last_ts) for r in self.inputs if r.first_ts and r.last_ts}

    def log_inputs(self) -> list[InputReport]:
        """One report per log: the segments of a rotated log merged into one (detectors/base.merged)."""
        from logsleuth.detectors.base import merged

        reps = {r.name: r for r in self.inputs}
        grouped = {s for segs in self.logs.values() for s in segs}
        out = [r for r in self.inputs if r.name not in grouped]
        for log, segs in self.logs.items():
            live = [reps[s] for s in segs if s in reps and not reps[s].skipped_input]
            if live:
                out.append(merged(live, reps.get(log) or live[-1]))
        return out

    def events_by_file(self) -> dict[str, int]:
        if self.events.height == 0:
            return {}
        return {str(k): v for k, v in self.events.group_by("file").len().iter_rows()}


def as_logs(result: ev.EventSet) -> dict[str, list[str]]:
    """Read the rotated segments of one log as that log (rotation.py): their events get the log's
    name as ``path`` (its current segment's path, so ``Context.input`` and the layouts keep working)
    while ``file`` keeps the real file their line numbers refer to. Returns {log: segments}."""
    logs = rotation.group([r.name for r in result.inputs if not r.skipped_input])
    events = result.events
    if not logs or events.height == 0 or "path" not in events.columns:
        return logs
    log_of = rotation.log_of(logs)
    order: list[str] = []  # the inputs as read, each log's segments together, oldest first
    for name in result.files:
        order += logs[log_of[name]] if name in log_of else [name]
    result.events = events.with_columns(
        file=pl.col("file").cast(pl.String).cast(ev.file_enum(order)),
        path=pl.col("path").replace(log_of),
    ).sort(["ts", "file", "line"], nulls_last=True, maintain_order=True)
    return logs


def correlate(result: ev.EventSet, skew_mode: str = "auto", logs: dict | None = None) -> tuple[pl.DataFrame, Links]:
    """The one-timeline step: link client logs to broker connections, estimate each client's clock
    skew, and (``auto``) correct the strong ones. Says what it did on each input (``logs``: the
    segments of a rotated log share its skew)."""
    links = Links(result.events)
    events = result.events
    if skew_mode != "off":
        skews = skew.estimate(events, links)
        for log, segments in (logs or {}).items():
            if log in skews:
                skews.update({seg: skews[log] for seg in segments})
        if skew_mode == "auto":
            events = skew.apply(events, skews, result.inputs)
        for rep in result.inputs:
            rep.clock_skew = skews.get(rep.name)
    return events, links


def _overlaps(f: Finding, since: dt.datetime | None, until: dt.datetime | None) -> bool:
    """A finding belongs to the window when what it tells was going on in it (no times: kept)."""
    first, last = f.first_seen, f.last_seen or f.first_seen
    for x in f.subjects:  # a producer still stuck at the end is stuck after its last line too
        if x.get("still_stuck"):
            last = None
    if since is not None and last is not None and last < since:
        return False
    return not (until is not None and first is not None and first > until)


def analyze(
    paths: list[str],
    opts: ReadOptions,
    packs: PackSet,
    flt: ev.EventFilter | None = None,
    detector_options: dict | None = None,
    only: list[str] | None = None,
    skew_mode: str = "auto",
    templates: bool = False,
    window: tuple | None = None,
    stored: ev.EventSet | None = None,
) -> Analysis:
    """``templates``: also rank the unrecognised messages whose rate changed in the incident window
    (``window`` = ((start, end), (baseline start, baseline end)), else derived from the findings)."""
    # --since/--until narrow what is shown, not what the detectors read: a producer stuck since
    # before the window is still stuck since then, and its cause is before the window too
    window_flt = flt if flt is not None and (flt.since_text or flt.until_text) else None
    read_flt = dataclasses.replace(flt, since_text=None, until_text=None) if window_flt else flt
    if stored is not None:  # an events directory (eventstore): filter it like freshly read events
        result = stored
    else:
        result = ev.collect(paths, opts, packs, read_flt, templates=templates)
    if window_flt is not None:
        window_flt.resolve(*result.span)
    logs = as_logs(result)
    events, links = correlate(result, skew_mode, logs)
    ctx = Context(events, result.inputs, detector_options or {}, read_options=opts, links=links, logs=logs)
    findings = run_all(ctx, only)
    if window_flt is not None:
        findings = [f for f in findings if _overlaps(f, window_flt.since, window_flt.until)]
        events = events.filter(window_flt.expr())
    out = Analysis(
        inputs=result.inputs,
        events=events,
        findings=findings,
        since=flt.since if flt else None,
        until=flt.until if flt else None,
        options=detector_options or {},
        logs=logs,
    )
    if templates:
        from logsleuth import templates as tpl

        out.templates_counted = True
        if callable(window):
            out.window = window(*out.span)
        else:
            out.window = window or tpl.incident_window(findings, out.span)
        if out.window is not None:
            out.changes = tpl.changes(tpl.collect(result.inputs), out.window[0], out.window[1], spans=out.spans_by_path())
    return out
