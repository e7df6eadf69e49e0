"""``logsleuth timeline``: all inputs' events on one time axis (shown in the display zone)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from logsleuth.cli.options import (
    ColorMode, ColorOpt, ConfigOpt, DateOpt, DisplayTzOpt, LayoutOpt, LayoutPatternOpt, MemoryBudgetOpt, NoConfigOpt, Paths, PatternsOpt,
    SinceOpt, SkewMode, SkewOpt, TimelineFormat, TzOpt, UntilOpt, read_options, set_view,
)
from logsleuth.errors import LogsleuthError

def timeline(
    paths: Paths = None,
    format: Annotated[
        Optional[TimelineFormat],
        typer.Option("--format", "-f", help="terminal (default on a terminal): sparklines and cause markers; lines (default when piped): 'ISO-time path:line:text' (the time in the display zone with its offset); ndjson; csv; parquet (needs -o)."),
    ] = None,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write to this file (required for parquet).")] = None,
    chart: Annotated[Optional[Path], typer.Option("--chart", help="Also write the swimlane chart (findings' subjects, causes, rates) to this SVG file.")] = None,
    around: Annotated[Optional[str], typer.Option("--around", metavar="TIME", help="Zoom in: a time (absolute or relative, like --since).")] = None,
    window: Annotated[str, typer.Option("--window", help="With --around: how far either side (e.g. 5m, 30s, 2h).")] = "5m",
    event: Annotated[Optional[list[str]], typer.Option("--event", "-e", help="Only these events (names or globs).")] = None,
    system: Annotated[Optional[list[str]], typer.Option("--system", "-s", help="Only these systems or packs.")] = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    skew: SkewOpt = SkewMode.auto,
    patterns: PatternsOpt = None,
    tz: TzOpt = None,
    date: DateOpt = None,
    layout: LayoutOpt = None,
    layout_pattern: LayoutPatternOpt = None,
    memory_budget: MemoryBudgetOpt = None,
    no_pager: Annotated[bool, typer.Option("--no-pager", help="On a terminal, do not page long output.")] = False,
    display_tz: DisplayTzOpt = None,
    color: ColorOpt = ColorMode.auto,
    config: ConfigOpt = None,
    no_config: NoConfigOpt = False,
) -> None:
    """All inputs' events on one time axis (client clocks corrected for skew), with causes marked."""
    from logsleuth.recognise import events as ev
    from logsleuth.timeline import histogram as tl
    import polars as pl

    from logsleuth.timeline.merge import as_logs, correlate
    from logsleuth.recognise.packs import load_packs
    from logsleuth.render import events as evview
    from logsleuth.render import timeline as view
    from logsleuth.render.console import is_terminal
    from logsleuth.render.report import clock_notes
    from logsleuth.timeline.histogram import parse_duration
    from logsleuth.ingest.timeparse import parse_when

    zone = set_view(display_tz, color)
    opts = read_options(tz, date, layout, layout_pattern, memory_budget)
    packs = load_packs(patterns)
    flt = ev.EventFilter(since_text=since, until_text=until, zone=zone, events=event or [], systems=system or [], say_copies=True)
    from logsleuth.render.console import colors_forced

    fmt = format or (TimelineFormat.terminal if (is_terminal() or colors_forced()) and output is None else TimelineFormat.lines)
    findings = []
    if fmt == TimelineFormat.terminal or chart is not None:
        # the findings too: their cause events are never dropped, their periods are marked
        import dataclasses

        from logsleuth.analysis import analyze as run_analysis

        flt.check(packs)
        whole = dataclasses.replace(flt, events=[], systems=[])
        analysis = run_analysis(paths, opts, packs, whole, skew_mode=skew.value)
        findings = analysis.findings
        result = ev.EventSet(analysis.events, analysis.inputs, [r.name for r in analysis.inputs], analysis.texts)
        logs = analysis.logs
        events = analysis.events
        if flt.events:
            events = events.filter(pl.col("event").is_in(flt.keep_names(events["event"].unique().to_list(), flt.events)))
        if flt.systems:
            events = events.filter(pl.col("system").is_in(flt.systems) | pl.col("pack").is_in(flt.systems))
        if chart is not None:
            from logsleuth.render import svg

            drawing = svg.render(analysis, standalone=True)
            if drawing is None:
                raise LogsleuthError("no timestamped events to chart")
            from logsleuth import atomic

            atomic.write_text(chart, drawing)
            print(f"wrote {chart}", file=sys.stderr)
    else:
        result = ev.collect(paths, opts, packs, flt)
        # the segments of a rotated log share one clock estimate (as in analyze); lines are still
        # cited by the file they are in
        logs = as_logs(result)
        events, _ = correlate(result, skew.value, logs)
    if logs:
        events = events.with_columns(path=pl.col("file").cast(pl.String))
    if around:
        first, last = result.span
        center = parse_when(around, zone, first, last)
        events = tl.around(events, center, parse_duration(window))
    notes = list(clock_notes(result.inputs, logs).values())
    if fmt == TimelineFormat.parquet:
        if output is None:
            raise LogsleuthError("--format parquet writes a file: give -o FILE.parquet")
        view.parquet(events, output, result.texts)
        print(f"wrote {events.height:,} events to {output}", file=sys.stderr)
    elif output is not None:
        raise LogsleuthError("-o is for --format parquet; redirect the other formats")
    elif fmt == TimelineFormat.terminal:
        from logsleuth.render.clock import localised_findings

        view.terminal(events, notes, localised_findings(findings), pager=not no_pager)
    elif fmt == TimelineFormat.ndjson:
        evview.ndjson(events, packs, result.texts)
    elif fmt == TimelineFormat.csv:
        evview.csv(events, packs, result.texts)
    else:
        view.lines(events, result.texts)
    raise typer.Exit(0 if events.height else 1)
