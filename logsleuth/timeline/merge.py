"""One timeline: the rotated segments of a log read as that log, broker connections linked to
client logs, and clients' clocks put on their brokers' clocks."""

from __future__ import annotations

import polars as pl

from logsleuth.ingest import rotation
from logsleuth.recognise import events as ev
from logsleuth.timeline import skew
from logsleuth.timeline.links import Links


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
    held = [events.with_columns(
        file=pl.col("file").cast(pl.String).cast(ev.file_enum(order)),
        path=pl.col("path").replace(log_of),
    )]
    events = result.events = None  # in_time_order holds the only reference
    result.events = ev.in_time_order(held)
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
            held = [events]
            events = result.events = None  # skew.apply holds the only reference
            events = result.events = skew.apply(held, skews, result.inputs)
        for rep in result.inputs:
            rep.clock_skew = skews.get(rep.name)
    return events, links
