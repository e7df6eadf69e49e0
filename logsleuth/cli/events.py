"""``logsleuth events``: every recognised event, for people and for pipes; filters by event, system,
time, level and message, and the counting modes of grep (``--count``, ``--files-with-events``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from logsleuth.cli.options import (
    ColorMode, ColorOpt, ConfigOpt, DateOpt, DisplayTzOpt, EngineName, EngineOpt, EventsFormat, KeepStoreOpt, LayoutOpt, LayoutPatternOpt,
    MemoryBudgetOpt, NoConfigOpt, Paths, PatternsOpt, SchedulerOpt, SinceOpt, SplitSizeOpt, StorageOpt, StoreOpt, TzOpt, UntilOpt, WorkersOpt, engine_options,
    read_options, set_view, show_in_logs_zone,
)
from logsleuth.errors import LogsleuthError

# a record's level, ranked (the names the reader normalises levels to); a line without a level is
# ranked by its event's severity in the pack
LEVEL_RANK = {"TRACE": 0, "DEBUG": 1, "INFO": 2, "WARN": 3, "ERROR": 4, "FATAL": 5}
SEVERITY_LEVEL = {"critical": "FATAL", "error": "ERROR", "warning": "WARN", "notice": "INFO", "info": "INFO", "debug": "DEBUG"}


def events(
    paths: Paths = None,
    format: Annotated[
        Optional[EventsFormat],
        typer.Option("--format", "-f", help="table (default on a terminal), grep (default when piped: path:line:text), ndjson, csv, parquet (a directory for 'analyze --events', needs -o)."),
    ] = None,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", metavar="DIR", help="With --format parquet: the directory to write (partitioned by system).")] = None,
    event: Annotated[
        Optional[list[str]],
        typer.Option("--event", "-e", metavar="EVENT", help="Only these events: names or globs such as 'bundle_*' (repeatable). Unlike grep's -e this is an event name, not a pattern: use -g for text."),
    ] = None,
    system: Annotated[Optional[list[str]], typer.Option("--system", "-s", metavar="SYSTEM", help="Only these systems or packs: pulsar, kafka, sarama, pulsar-broker, ... (repeatable).")] = None,
    level: Annotated[
        Optional[str],
        typer.Option("--level", metavar="LEVEL", help="Only events logged at this level or above: trace, debug, info, warn, error, fatal (a line without a level: its event's severity in the pack)."),
    ] = None,
    grep: Annotated[Optional[str], typer.Option("--grep", "-g", metavar="REGEX", help="Only events whose message matches this regular expression (Rust regex syntax, as rg).")] = None,
    ignore_case: Annotated[bool, typer.Option("--ignore-case", "-i", help="--grep ignores case.")] = False,
    count: Annotated[bool, typer.Option("--count", "-c", help="Print how many events of each kind, as 'system:event:N' (most first), instead of the events.")] = False,
    files_with_events: Annotated[bool, typer.Option("--files-with-events", "-l", help="Print only the inputs that hold an event, one per line.")] = False,
    with_event: Annotated[bool, typer.Option("--with-event", help="grep format with the event name: 'path:line:event:text' (for awk -F:).")] = False,
    whole: Annotated[bool, typer.Option("--whole", "-w", help="grep format: every line of each event's record (its stack trace, its 'Caused by'), each as path:line:text, so a grep after it finds them.")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="On a terminal: each event with its fields and whole message (default: one line per event).")] = False,
    no_pager: Annotated[bool, typer.Option("--no-pager", help="On a terminal, do not page long output (also LOGSLEUTH_PAGER=).")] = False,
    since: SinceOpt = None,
    until: UntilOpt = None,
    patterns: PatternsOpt = None,
    tz: TzOpt = None,
    date: DateOpt = None,
    layout: LayoutOpt = None,
    layout_pattern: LayoutPatternOpt = None,
    memory_budget: MemoryBudgetOpt = None,
    engine: EngineOpt = EngineName.local,
    scheduler: SchedulerOpt = None,
    workers: WorkersOpt = None,
    store: StoreOpt = None,
    keep_store: KeepStoreOpt = False,
    storage_option: StorageOpt = None,
    split_size: SplitSizeOpt = None,
    display_tz: DisplayTzOpt = None,
    color: ColorOpt = ColorMode.auto,
    config: ConfigOpt = None,
    no_config: NoConfigOpt = False,
) -> None:
    """The events the packs recognise, one per matching record. Exit 0 if any, 1 if none (like grep)."""
    from logsleuth.recognise import events as ev
    from logsleuth.recognise.packs import load_packs
    from logsleuth.render import events as view_
    from logsleuth.render.console import is_terminal

    zone = set_view(display_tz, color)
    if count and files_with_events:
        raise LogsleuthError("give --count or --files-with-events, not both")
    modes = [name for name, on in (("--count", count), ("--files-with-events", files_with_events), ("--with-event", with_event), ("--whole", whole)) if on]
    if modes and format not in (None, EventsFormat.grep):
        raise LogsleuthError(f"{modes[0]} prints lines for pipes: give no --format (or --format grep)")
    rank = _level(level)
    matches = _regex(grep, ignore_case)
    opts = read_options(tz, date, layout, layout_pattern, memory_budget)
    eng = engine_options(opts, engine, scheduler, workers, store, keep_store, storage_option, split_size)
    packs = load_packs(patterns)
    flt = ev.EventFilter(since_text=since, until_text=until, zone=zone, events=event or [], systems=system or [], say_copies=True,
                         auto_zone=display_tz is None)
    if eng is not None:
        from logsleuth.recognise import cluster

        result = cluster.collect(paths or [], opts, packs, eng, flt)
    else:
        result = ev.collect(paths, opts, packs, flt)
    show_in_logs_zone(flt, display_tz)
    events = _keep(result.events, rank, matches, result.texts)
    if count:
        view_.counts(events)
        raise typer.Exit(0 if events.height else 1)
    if files_with_events:
        present = set(events["path"].cast(str).unique().to_list()) if events.height else set()
        view_.names([r.name for r in result.inputs if r.name in present])
        raise typer.Exit(0 if present else 1)
    fmt = format or (EventsFormat.grep if with_event or whole or not is_terminal() else EventsFormat.table)
    if fmt == EventsFormat.parquet:
        from logsleuth.recognise import eventstore

        if output is None:
            raise LogsleuthError("--format parquet writes a directory: give -o DIR")
        result.events = events  # (its texts are still in result.texts)
        n = eventstore.write(result, output)
        print(f"wrote {n:,} events of {len(result.inputs)} input(s) to {output}", file=sys.stderr)
    elif output is not None:
        raise LogsleuthError("-o is for --format parquet; redirect the other formats")
    elif fmt == EventsFormat.grep:
        view_.grep(events, with_event=with_event, texts=result.texts, whole=whole)
    elif fmt == EventsFormat.ndjson:
        view_.ndjson(events, packs, result.texts)
    elif fmt == EventsFormat.csv:
        view_.csv(events, packs, result.texts)
    elif verbose:
        view_.table(events, packs, limit=2000)
    else:
        _paged(view_.brief(events, _width(), limit=20_000), pager=not no_pager)
    raise typer.Exit(0 if events.height else 1)


def _width() -> int:
    from logsleuth.render.console import stdout_console

    return stdout_console().width


def _paged(text: str, pager: bool) -> None:
    """A terminal's text through the pager when longer than the screen (render/pager.py)."""
    from logsleuth.render import pager as pg
    from logsleuth.render.console import is_terminal, stdout_console

    if not (pager and is_terminal() and pg.page(text, stdout_console().size.height)):
        sys.stdout.write(text)


def _level(text: str | None) -> int | None:
    if text is None:
        return None
    from logsleuth.ingest.layouts.catalog import LEVELS

    name = text.strip().upper()
    name = LEVELS.get(name, name)
    if name not in LEVEL_RANK:
        raise LogsleuthError(f"--level {text!r}: expected one of {', '.join(x.lower() for x in LEVEL_RANK)}")
    return LEVEL_RANK[name]


def _regex(pattern: str | None, ignore_case: bool) -> str | None:
    """--grep as a Polars (Rust) regex, checked here: a bad one is one line, exit 2."""
    if pattern is None:
        return None
    import polars as pl

    rx = f"(?i){pattern}" if ignore_case else pattern
    try:
        pl.select(pl.lit("").str.contains(rx))
    except pl.exceptions.PolarsError as e:
        why = next((ln.strip()[len("error: "):] for ln in str(e).splitlines() if ln.strip().startswith("error: ")), "")
        raise LogsleuthError(f"--grep {pattern!r}: not a valid regular expression" + (f" ({why})" if why else "")) from None
    return rx


def _keep(events, rank: int | None, rx: str | None, texts=None):
    """The events at --level or above whose message matches --grep (one Polars filter)."""
    import polars as pl

    from logsleuth.ingest.texts import with_raw

    if events.height == 0 or (rank is None and rx is None):
        return events
    keep = pl.lit(True)
    if rank is not None:
        by_level = pl.col("level").replace_strict(LEVEL_RANK, default=None, return_dtype=pl.Int8)
        by_severity = pl.col("severity").replace_strict(
            {s: LEVEL_RANK[lv] for s, lv in SEVERITY_LEVEL.items()}, default=None, return_dtype=pl.Int8
        )
        keep = keep & (pl.coalesce(by_level, by_severity) >= rank).fill_null(False)
    if rx is not None:  # the text only where there is no message
        keep = keep & pl.coalesce(pl.col("msg"), pl.col("raw")).str.contains(rx).fill_null(False)
        if "raw" not in events.columns:
            events = with_raw(events, texts) if events.select(pl.col("msg").is_null().any()).item() else events.with_columns(raw=pl.lit(None, dtype=pl.String))
            return events.filter(keep).drop("raw")
    return events.filter(keep)
