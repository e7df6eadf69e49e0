"""``logsleuth events``: every recognised event, for people and for pipes."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from logsleuth.cli.options import (
    DateOpt, EventsFormat, LayoutOpt, LayoutPatternOpt, Paths, PatternsOpt, SinceOpt, TzOpt, UntilOpt, read_options,
)
from logsleuth.errors import LogsleuthError

def events(
    paths: Paths,
    format: Annotated[
        Optional[EventsFormat],
        typer.Option("--format", "-f", help="table (default on a terminal), grep (default when piped: path:line:text), ndjson, csv, parquet (a directory for 'analyze --events', needs -o)."),
    ] = None,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="With --format parquet: the directory to write (partitioned by system).")] = None,
    event: Annotated[Optional[list[str]], typer.Option("--event", "-e", help="Only these events (names or globs, repeatable).")] = None,
    system: Annotated[Optional[list[str]], typer.Option("--system", "-s", help="Only these systems or packs: pulsar, kafka, sarama, pulsar-broker, ... (repeatable).")] = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    patterns: PatternsOpt = None,
    tz: TzOpt = None,
    date: DateOpt = None,
    layout: LayoutOpt = None,
    layout_pattern: LayoutPatternOpt = None,
) -> None:
    """The events the packs recognise, one per matching record. Exit 0 if any, 1 if none (like grep)."""
    from logsleuth.recognise import events as ev
    from logsleuth.recognise.packs import load_packs
    from logsleuth.render import events as view
    from logsleuth.render.console import is_terminal

    opts = read_options(tz, date, layout, layout_pattern)
    packs = load_packs(patterns)
    flt = ev.EventFilter(since_text=since, until_text=until, zone=opts.tz or opts.zone_for("")[0], events=event or [], systems=system or [])
    result = ev.collect(paths, opts, packs, flt)
    fmt = format or (EventsFormat.table if is_terminal() else EventsFormat.grep)
    if fmt == EventsFormat.parquet:
        from logsleuth.recognise import eventstore

        if output is None:
            raise LogsleuthError("--format parquet writes a directory: give -o DIR")
        n = eventstore.write(result, output)
        print(f"wrote {n:,} events of {len(result.inputs)} input(s) to {output}", file=sys.stderr)
    elif output is not None:
        raise LogsleuthError("-o is for --format parquet; redirect the other formats")
    elif fmt == EventsFormat.grep:
        view.grep(result.events)
    elif fmt == EventsFormat.ndjson:
        view.ndjson(result.events, packs)
    elif fmt == EventsFormat.csv:
        view.csv(result.events, packs)
    else:
        view.table(result.events, packs, limit=2000)
    raise typer.Exit(0 if result.events.height else 1)
