"""``analyze``, the wiring of the stages for one run: ingest and recognise every input, put the
events on one timeline, run the detectors, and hand back the ranked findings (``findings.Analysis``)
with, for reports, what else changed."""

from __future__ import annotations

import dataclasses

from logsleuth.detectors import run_all
from logsleuth.detectors.base import Context, resolve_texts
from logsleuth.findings import Analysis, ignore_rules, overlaps, rank, split_ignored
from logsleuth.ingest.inputs import ReadOptions
from logsleuth.recognise import events as ev
from logsleuth.recognise.packs import PackSet
from logsleuth.timeline.merge import as_logs, correlate


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
    ignore: list[str] | None = None,
    engine=None,
) -> Analysis:
    """``templates``: also rank the unrecognised messages whose rate changed in the incident window
    (``window`` = ((start, end), (baseline start, baseline end)), else derived from the findings)."""
    # --since/--until narrow what is shown, not what the detectors read: a producer stuck since
    # before the window is still stuck since then, and its cause is before the window too
    window_flt = flt if flt is not None and (flt.since_text or flt.until_text) else None
    read_flt = dataclasses.replace(flt, since_text=None, until_text=None) if window_flt else flt
    if stored is not None:  # an events directory (eventstore): filter it like freshly read events
        result = stored
    elif engine is not None:  # read on a Dask cluster (recognise/cluster.py): the same EventSet
        from logsleuth.recognise import cluster

        result = cluster.collect(paths, opts, packs, engine, read_flt, templates=templates)
    else:
        result = ev.collect(paths, opts, packs, read_flt, templates=templates)
    if flt is not None:  # no display zone chosen: the zone the logs' stamps agree on
        flt.adopt_zone(result.inputs)
    if window_flt is not None:
        window_flt.resolve(*result.span)
    logs = as_logs(result)
    events, links = correlate(result, skew_mode, logs)
    ctx = Context(events, result.inputs, detector_options or {}, read_options=opts, links=links, logs=logs, texts=result.texts, packs=packs)
    findings = run_all(ctx, only)
    resolve_texts(findings, result.texts)  # the quoted lines' texts, in one pass
    findings = rank(findings)
    if window_flt is not None:
        findings = [f for f in findings if overlaps(f, window_flt.since, window_flt.until)]
        events = events.filter(window_flt.expr())
    findings, ignored = split_ignored(findings, ignore_rules(ignore))
    out = Analysis(
        inputs=result.inputs,
        events=events,
        findings=findings,
        since=flt.since if flt else None,
        until=flt.until if flt else None,
        options=detector_options or {},
        logs=logs,
        texts=result.texts,
        failures=ctx.failures,
        ignored=ignored,
        replaced_patterns=list(getattr(packs, "replaced", [])),
    )
    if templates:
        from logsleuth.recognise import templates as tpl

        out.templates_counted = True
        if callable(window):
            out.window = window(*out.span)
        else:
            out.window = window or tpl.incident_window(findings, out.span)
        if out.window is not None:
            out.changes = tpl.changes(tpl.collect(result.inputs), out.window[0], out.window[1], spans=out.spans_by_path())
    return out
