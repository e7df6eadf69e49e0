"""The ``logsleuth`` command line. Thin: parse options, call a stage, hand the result to a renderer.

Heavy modules (polars, the pipeline) are imported inside the commands so ``--help`` stays fast.
Exit codes: 0 done, 1 "nothing found" (events) or a finding at/above ``--fail-on`` (analyze),
2 bad input or usage, 130 interrupted.
"""

from __future__ import annotations

import datetime as dt
import os
import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from logsleuth import __version__
from logsleuth.errors import LogsleuthError

app = typer.Typer(
    name="logsleuth",
    help="Log forensics for message-broker incidents (Pulsar, Kafka Java producer, sarama).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)

Paths = Annotated[list[str], typer.Argument(help="Log files, directories (recursive), globs, or - for stdin.", show_default=False)]
TzOpt = Annotated[
    Optional[list[str]],
    typer.Option("--tz", help="Zone for stamps without an offset: an IANA name, or GLOB=ZONE for some files (repeatable). Default: this machine's zone."),
]
DateOpt = Annotated[
    Optional[list[str]],
    typer.Option("--date", help="Date of the first line of time-only logs: YYYY-MM-DD, or GLOB=YYYY-MM-DD (repeatable)."),
]
LayoutOpt = Annotated[Optional[str], typer.Option("--layout", help="Force a built-in layout by id (see 'logsleuth patterns layouts').")]
LayoutPatternOpt = Annotated[
    Optional[list[str]],
    typer.Option(
        "--layout-pattern",
        help="Force a log4j/logback conversion pattern, e.g. '%d{ISO8601} [%t] %-5level %logger{36} - %msg%n', "
        "or GLOB=PATTERN for some files (repeatable; text before the first '=' is a glob only when it holds no '%').",
    ),
]


PatternsOpt = Annotated[
    Optional[list[Path]],
    typer.Option("--patterns", help="A directory of your own *.toml packs (repeatable); a pattern id that exists already replaces the built-in one."),
]
SinceOpt = Annotated[Optional[str], typer.Option("--since", help="Only from this time: '2020-06-02 10:00', an ISO time, or relative to the end of the logs: '-2h', '30m ago' ('+10m': from the start).")]
UntilOpt = Annotated[Optional[str], typer.Option("--until", help="Only up to this time (same forms as --since).")]


class EventsFormat(str, Enum):
    table = "table"
    grep = "grep"
    ndjson = "ndjson"
    csv = "csv"
    parquet = "parquet"


class AnalyzeFormat(str, Enum):
    terminal = "terminal"
    text = "text"
    markdown = "markdown"
    html = "html"
    json = "json"


# -o FILE: the name decides the format (analyze: anything else is text; report: html or markdown only)
_FORMAT_BY_SUFFIX = {
    ".html": AnalyzeFormat.html, ".htm": AnalyzeFormat.html,
    ".md": AnalyzeFormat.markdown, ".markdown": AnalyzeFormat.markdown,
    ".json": AnalyzeFormat.json,
}


class SkewMode(str, Enum):
    auto = "auto"
    report = "report"
    off = "off"


SkewOpt = Annotated[
    SkewMode,
    typer.Option("--skew", help="Client clock skew: auto = estimate, report, and correct it when the evidence is strong; report = estimate only; off."),
]


class Severity(str, Enum):
    critical = "critical"
    high = "high"
    medium = "medium"
    low = "low"
    info = "info"


class InspectFormat(str, Enum):
    table = "table"
    json = "json"


def _version(value: bool) -> None:
    if value:
        print(f"logsleuth {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")] = False,
) -> None:
    pass


def split_layout_pattern(item: str) -> tuple[str | None, str]:
    """``GLOB=PATTERN`` -> (glob, pattern); a bare pattern -> (None, pattern). A conversion pattern
    may hold '=' itself (``%replace{%m}{a=b}{}``, ``%highlight{..}{ERROR=red}``): the text is split
    at its first '=' only when that '=' comes before the first '%' (a glob holds no '%'), so a
    pattern that starts with '%' or has no '=' before its first '%' is bare. A pattern whose
    literal text before the first '%' holds an '=' (``time=%d ...``) is given as ``*=time=%d ...``."""
    eq = item.find("=")
    pct = item.find("%")
    if eq <= 0 or (pct != -1 and pct < eq):
        return None, item
    return item[:eq], item[eq + 1 :]


def read_options(tz: list[str] | None, date: list[str] | None, layout: str | None, layout_pattern: list[str] | None):
    """CLI strings -> ReadOptions (validated; errors are one line, exit 2)."""
    import datetime as dt

    from logsleuth.layouts.catalog import from_conversion, layout_by_id
    from logsleuth.reader import ReadOptions
    from logsleuth.timeparse import check_zone

    opts = ReadOptions()
    for item in tz or []:
        if "=" in item:
            pattern, zone = item.rsplit("=", 1)
            opts.tz_rules.append((pattern, check_zone(zone)))
        else:
            opts.tz = check_zone(item)
    for item in date or []:
        pattern, _, value = item.rpartition("=")
        try:
            d = dt.date.fromisoformat(value.strip())
        except ValueError:
            raise LogsleuthError(f"--date {item!r}: expected YYYY-MM-DD or GLOB=YYYY-MM-DD") from None
        if pattern:
            opts.date_rules.append((pattern, d))
        else:
            opts.date = d
    bare_patterns: list[str] = []
    pattern_rules: list[tuple[str, str]] = []
    for item in layout_pattern or []:
        glob, pattern = split_layout_pattern(item)
        if glob is None:
            bare_patterns.append(pattern)
        else:
            pattern_rules.append((glob, pattern))
    if len(bare_patterns) > 1:
        raise LogsleuthError("give one --layout-pattern for all files; for some files use --layout-pattern 'GLOB=PATTERN'")
    if layout and bare_patterns:
        raise LogsleuthError("give --layout or --layout-pattern, not both (--layout-pattern 'GLOB=PATTERN' can go with --layout)")
    from logsleuth.render.progress import for_terminal
    from logsleuth.sources import _python_handles_sigint

    _python_handles_sigint()  # again: anything Polars set up since its import must not swallow Ctrl-C
    opts.progress = for_terminal()
    if opts.progress is not None:
        import atexit

        atexit.register(opts.progress.close)
    if layout:
        opts.layout = layout_by_id(layout)
    for pattern in bare_patterns:
        try:
            opts.layout = from_conversion(pattern, "custom")
        except LogsleuthError as e:
            raise LogsleuthError(f"--layout-pattern {pattern!r}: {e}") from None
    for glob, pattern in pattern_rules:
        try:
            opts.layout_rules.append((glob, from_conversion(pattern, "custom")))
        except LogsleuthError as e:
            raise LogsleuthError(f"--layout-pattern {glob + '=' + pattern!r}: {e}") from None
    return opts


@app.command()
def inspect(
    paths: Paths,
    format: Annotated[InspectFormat, typer.Option("--format", "-f", help="table on a terminal, json for scripts.")] = InspectFormat.table,
    tz: TzOpt = None,
    date: DateOpt = None,
    layout: LayoutOpt = None,
    layout_pattern: LayoutPatternOpt = None,
) -> None:
    """What logsleuth finds in each input: compression, encoding, envelope, layout, lines, records, time span."""
    from logsleuth.reader import inspect_all
    from logsleuth.render import inspect as view

    opts = read_options(tz, date, layout, layout_pattern)
    reports = inspect_all(paths, opts)
    if format == InspectFormat.json:
        view.json_out(reports)
    else:
        view.table(reports)


@app.command()
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
    from logsleuth import events as ev
    from logsleuth.packs import load_packs
    from logsleuth.render import events as view
    from logsleuth.render.console import is_terminal

    opts = read_options(tz, date, layout, layout_pattern)
    packs = load_packs(patterns)
    flt = ev.EventFilter(since_text=since, until_text=until, zone=opts.tz or opts.zone_for("")[0], events=event or [], systems=system or [])
    result = ev.collect(paths, opts, packs, flt)
    fmt = format or (EventsFormat.table if is_terminal() else EventsFormat.grep)
    if fmt == EventsFormat.parquet:
        from logsleuth import eventstore

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


@app.command()
def analyze(
    paths: Annotated[Optional[list[str]], typer.Argument(help="Log files, directories (recursive), globs, or - for stdin.", show_default=False)] = None,
    events_dir: Annotated[
        Optional[Path],
        typer.Option("--events", help="Analyse an events directory written by 'events --format parquet -o DIR' instead of reading logs."),
    ] = None,
    format: Annotated[
        Optional[AnalyzeFormat],
        typer.Option("--format", "-f", help="terminal (default on a terminal), text (default when piped), markdown, html, json. markdown and html add the chart and 'what else changed' (like 'logsleuth report')."),
    ] = None,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write the report to this file instead of stdout (markdown: the chart is written beside it as <name>.png).")] = None,
    fail_on: Annotated[Optional[Severity], typer.Option("--fail-on", help="Exit 1 when a finding at or above this severity exists (for CI/cron).")] = None,
    detector: Annotated[Optional[list[str]], typer.Option("--detector", "-d", help="Run only these detectors (ids or prefixes ending in *, repeatable).")] = None,
    sarama_config: Annotated[
        Optional[str],
        typer.Option("--sarama-config", help="The sarama settings in use, e.g. 'Net.DialTimeout=5s,Net.ReadTimeout=3s,Producer.Retry.Max=1' (default: sarama's defaults)."),
    ] = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    skew: SkewOpt = SkewMode.auto,
    patterns: PatternsOpt = None,
    tz: TzOpt = None,
    date: DateOpt = None,
    layout: LayoutOpt = None,
    layout_pattern: LayoutPatternOpt = None,
) -> None:
    """Find the root cause: read broker and client logs together, run every detector, report findings with evidence."""
    from logsleuth import events as ev
    from logsleuth.analysis import analyze as run
    from logsleuth.findings import at_or_above
    from logsleuth.packs import load_packs
    from logsleuth.render.console import is_terminal

    from logsleuth.detectors import check_names

    check_names(detector)
    opts = read_options(tz, date, layout, layout_pattern)
    packs = load_packs(patterns)
    det_opts: dict = {}
    if sarama_config:
        from logsleuth.detectors.sarama_config import parse_sarama_config

        det_opts["sarama_config"] = parse_sarama_config(sarama_config)
    flt = ev.EventFilter(since_text=since, until_text=until, zone=opts.tz or opts.zone_for("")[0])
    fmt = format or (_FORMAT_BY_SUFFIX.get(output.suffix.lower(), AnalyzeFormat.text) if output is not None else None)
    fmt = fmt or (AnalyzeFormat.terminal if is_terminal() else AnalyzeFormat.text)
    rich_report = fmt in (AnalyzeFormat.markdown, AnalyzeFormat.html)
    stored = None
    if events_dir is not None:
        from logsleuth import eventstore

        if paths:
            raise LogsleuthError("give log paths or --events DIR, not both")
        stored = eventstore.read(events_dir)
        rich_report = False  # templates need the log lines themselves
    elif not paths:
        raise LogsleuthError("no input given (name files, directories, globs, - for stdin, or --events DIR)")
    result = run(paths or [], opts, packs, flt, det_opts, detector, skew_mode=skew.value, templates=rich_report, stored=stored)
    _emit_report(result, fmt, output)
    if fail_on is not None and any(at_or_above(f.severity, fail_on.value) for f in result.findings):
        raise typer.Exit(1)


def _emit_report(result, fmt: "AnalyzeFormat", output: Path | None, title: str = "Incident analysis") -> None:
    from logsleuth.render import json_report, markdown, report
    from logsleuth.render.console import is_terminal, stdout_console

    if fmt == AnalyzeFormat.terminal and output is None:
        report.terminal(result, stdout_console())
        return
    if fmt == AnalyzeFormat.json:
        body = json_report.dumps(result)
        if output is None and is_terminal():  # no raw bidi/C1 controls on a terminal
            import json as _json

            body = _json.dumps(_json.loads(body), indent=2, ensure_ascii=True) + "\n"
    elif fmt == AnalyzeFormat.markdown:
        image = None
        if output is not None:
            from logsleuth.render import chart

            png = chart.draw(result, "png") if chart.available() else None
            if png:
                img_path = output.with_suffix(".png")
                try:
                    img_path.write_bytes(png)
                except OSError as e:
                    raise LogsleuthError(f"{img_path}: cannot write ({e.strerror or e})") from None
                image = img_path.name
        body = markdown.document(result, title, image)
    elif fmt == AnalyzeFormat.html:
        from logsleuth.render import html

        body = html.document(result, title)
    else:
        body = report.text(result)
    if output is None:
        sys.stdout.write(body)
        return
    try:
        output.write_text(body, encoding="utf-8")
    except OSError as e:
        raise LogsleuthError(f"{output}: cannot write ({e.strerror or e})") from None
    print(f"wrote {output}", file=sys.stderr)


@app.command()
def report(
    paths: Paths,
    output: Annotated[Path, typer.Option("--output", "-o", help="incident.html (one self-contained file) or incident.md (the chart is written beside it as incident.png).")],
    title: Annotated[str, typer.Option("--title", help="The report's title.")] = "Incident analysis",
    around: Annotated[Optional[str], typer.Option("--around", help="The incident's time for 'what else changed' (default: where the worst finding starts).")] = None,
    window: Annotated[str, typer.Option("--window", help="With --around: the incident window after that time (the baseline is everything before it).")] = "30m",
    sarama_config: Annotated[Optional[str], typer.Option("--sarama-config", help="The sarama settings in use (see analyze).")] = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    skew: SkewOpt = SkewMode.auto,
    patterns: PatternsOpt = None,
    tz: TzOpt = None,
    date: DateOpt = None,
    layout: LayoutOpt = None,
    layout_pattern: LayoutPatternOpt = None,
) -> None:
    """A postmortem to paste: findings with evidence, a timeline chart, what was ruled out, and what else changed."""
    from logsleuth import events as ev
    from logsleuth.analysis import analyze as run
    from logsleuth.packs import load_packs

    fmt = _FORMAT_BY_SUFFIX.get(output.suffix.lower())
    if fmt not in (AnalyzeFormat.html, AnalyzeFormat.markdown):
        raise LogsleuthError(f"{output}: the report is .html or .md (the name decides)")
    opts = read_options(tz, date, layout, layout_pattern)
    packs = load_packs(patterns)
    det_opts: dict = {}
    if sarama_config:
        from logsleuth.detectors.sarama_config import parse_sarama_config

        det_opts["sarama_config"] = parse_sarama_config(sarama_config)
    zone = opts.tz or opts.zone_for("")[0]
    flt = ev.EventFilter(since_text=since, until_text=until, zone=zone)
    result = run(paths, opts, packs, flt, det_opts, skew_mode=skew.value, templates=True, window=_incident_window(around, window, zone))
    _emit_report(result, fmt, output, title)


def _incident_window(around: str | None, window: str, zone: str):
    """--around/--window -> a function of the logs' span giving (incident window, baseline before
    it), so relative times ('-2h') count from the logs' end like --since does."""
    if not around:
        return None
    from logsleuth.timeline import parse_duration
    from logsleuth.timeparse import parse_when

    width = parse_duration(window)

    def resolve(first, last):
        center = parse_when(around, zone, first, last)
        return (center, center + width), (first or center - width, center)

    return resolve


class TimelineFormat(str, Enum):
    terminal = "terminal"
    lines = "lines"
    ndjson = "ndjson"
    csv = "csv"
    parquet = "parquet"


@app.command()
def timeline(
    paths: Paths,
    format: Annotated[
        Optional[TimelineFormat],
        typer.Option("--format", "-f", help="terminal (default on a terminal): sparklines and cause markers; lines (default when piped): 'ISO-time path:line:text'; ndjson; csv; parquet (needs -o)."),
    ] = None,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write to this file (required for parquet).")] = None,
    around: Annotated[Optional[str], typer.Option("--around", help="Zoom in: a time (absolute or relative, like --since).")] = None,
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
) -> None:
    """All inputs' events on one UTC axis (client clocks corrected for skew), with causes marked."""
    from logsleuth import events as ev
    from logsleuth import timeline as tl
    import polars as pl

    from logsleuth.analysis import as_logs, correlate
    from logsleuth.packs import load_packs
    from logsleuth.render import events as evview
    from logsleuth.render import timeline as view
    from logsleuth.render.console import is_terminal
    from logsleuth.render.report import clock_notes
    from logsleuth.timeline import parse_duration
    from logsleuth.timeparse import parse_when

    opts = read_options(tz, date, layout, layout_pattern)
    packs = load_packs(patterns)
    zone = opts.tz or opts.zone_for("")[0]
    flt = ev.EventFilter(since_text=since, until_text=until, zone=zone, events=event or [], systems=system or [])
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
    fmt = format or (TimelineFormat.terminal if is_terminal() and output is None else TimelineFormat.lines)
    if fmt == TimelineFormat.parquet:
        if output is None:
            raise LogsleuthError("--format parquet writes a file: give -o FILE.parquet")
        view.parquet(events, output)
        print(f"wrote {events.height:,} events to {output}", file=sys.stderr)
    elif output is not None:
        raise LogsleuthError("-o is for --format parquet; redirect the other formats")
    elif fmt == TimelineFormat.terminal:
        view.terminal(tl.histogram(events), events, notes)
    elif fmt == TimelineFormat.ndjson:
        evview.ndjson(events, packs)
    elif fmt == TimelineFormat.csv:
        evview.csv(events, packs)
    else:
        view.lines(events)
    raise typer.Exit(0 if events.height else 1)


@app.command()
def templates(
    paths: Paths,
    around: Annotated[Optional[str], typer.Option("--around", help="The incident's time (default: where the worst finding starts).")] = None,
    window: Annotated[str, typer.Option("--window", help="With --around: the incident window after that time.")] = "30m",
    top: Annotated[int, typer.Option("--top", help="How many templates to list.")] = 15,
    format: Annotated[InspectFormat, typer.Option("--format", "-f", help="table, or json for scripts.")] = InspectFormat.table,
    since: SinceOpt = None,
    until: UntilOpt = None,
    patterns: PatternsOpt = None,
    tz: TzOpt = None,
    date: DateOpt = None,
    layout: LayoutOpt = None,
    layout_pattern: LayoutPatternOpt = None,
) -> None:
    """What else changed: messages no pack recognises, as templates, ranked by how their rate in the incident window differs from before. Exit 0 if some changed, 1 if none."""
    import json as _json

    from logsleuth import events as ev
    from logsleuth import templates as tpl
    from logsleuth.analysis import analyze as run
    from logsleuth.packs import load_packs
    from logsleuth.render.console import stdout_console
    from logsleuth.render.templates import table

    opts = read_options(tz, date, layout, layout_pattern)
    zone = opts.tz or opts.zone_for("")[0]
    flt = ev.EventFilter(since_text=since, until_text=until, zone=zone)
    result = run(paths, opts, load_packs(patterns), flt, templates=True, window=_incident_window(around, window, zone))
    if result.window is not None and top != 10:
        result.changes = tpl.changes(tpl.collect(result.inputs), result.window[0], result.window[1], top, result.spans_by_path())
    if format == InspectFormat.json:
        from logsleuth.timeparse import iso_utc

        from logsleuth import __version__

        w = result.window
        doc = {
            "tool": "logsleuth",
            "version": __version__,
            "window": None if w is None else {"from": iso_utc(w[0][0]), "to": iso_utc(w[0][1]), "baseline_from": iso_utc(w[1][0]), "baseline_to": iso_utc(w[1][1])},
            "changes": [c.to_json() for c in result.changes],
        }
        sys.stdout.write(_json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    else:
        table(result, stdout_console())
    raise typer.Exit(0 if result.changes else 1)


patterns_app = typer.Typer(help="List, show, test and check pattern packs.", no_args_is_help=True, rich_markup_mode=None)
app.add_typer(patterns_app, name="patterns")


@patterns_app.command("list")
def patterns_list(patterns: PatternsOpt = None) -> None:
    """Every pack and its patterns: id, event, severity, versions."""
    from logsleuth.packs import load_packs
    from logsleuth.render import patterns as view

    view.listing(load_packs(patterns))


@patterns_app.command("show")
def patterns_show(pattern_id: Annotated[str, typer.Argument(help="A pattern id (see 'logsleuth patterns list').")], patterns: PatternsOpt = None) -> None:
    """One pattern: its regex, scope, versions, fields and samples."""
    from logsleuth.packs import load_packs
    from logsleuth.render import patterns as view

    packs = load_packs(patterns)
    view.show(packs, packs.pattern(pattern_id))


@patterns_app.command("test")
def patterns_test(
    paths: Annotated[Optional[list[str]], typer.Argument(help="Log files, or - (the default) for stdin.", show_default=False)] = None,
    patterns: PatternsOpt = None,
    tz: TzOpt = None,
    date: DateOpt = None,
    layout: LayoutOpt = None,
    layout_pattern: LayoutPatternOpt = None,
) -> None:
    """For each record: which pattern matched (or none) and the fields it extracted. Exit 0 if any matched."""
    from logsleuth.packs import load_packs
    from logsleuth.patterntest import run_test

    opts = read_options(tz, date, layout, layout_pattern)
    matched = run_test(paths or ["-"], opts, load_packs(patterns))
    raise typer.Exit(0 if matched else 1)


@patterns_app.command("check")
def patterns_check(
    directory: Annotated[Optional[Path], typer.Argument(help="A directory of your packs to check with the built-in ones (default: only the built-in packs).", show_default=False)] = None,
) -> None:
    """Validate packs: regexes (Rust engine), field names, ids, and every sample. Exit 2 on a problem."""
    from logsleuth.packcheck import check_layout_samples, check_pattern_samples
    from logsleuth.packs import load_packs, pack_problems

    def fail_on(problems: list[str]) -> None:  # every problem, one line each, then exit 2
        if problems:
            for p in problems:
                print(f"logsleuth: error: {p}", file=sys.stderr)
            raise typer.Exit(2)

    if directory is not None:
        fail_on(pack_problems(directory))  # every broken pack, not just the first
    packs = load_packs([directory] if directory else None)
    only = [p for pack in packs.packs if directory and Path(pack.source).parent.resolve() == directory.resolve() for p in pack.patterns] if directory else None
    fail_on(check_layout_samples() + check_pattern_samples(packs, only))
    n_pat = len(only) if only is not None else len(packs.patterns)
    n_samples = sum(len(p.samples) for p in (only if only is not None else packs.patterns))
    print(f"ok: {n_pat} patterns, {n_samples} samples checked" + (f" in {directory}" if directory else f" in {len(packs.packs)} built-in packs"))


@patterns_app.command("fields")
def patterns_fields() -> None:
    """The canonical field vocabulary every pack uses."""
    from logsleuth.packs import load_vocabulary
    from logsleuth.render import patterns as view

    view.fields(load_vocabulary())


@patterns_app.command("layouts")
def patterns_layouts() -> None:
    """The built-in layouts (how a line wraps its message) and their regexes."""
    from logsleuth.layouts.catalog import builtin_layouts
    from logsleuth.render import patterns as view

    view.layouts(list(builtin_layouts()))


def main(argv: list[str] | None = None) -> None:
    """Entry point: every failure becomes one line on stderr and an exit code."""
    try:  # typer >= 0.2x carries its own copy of click
        from typer._click.exceptions import ClickException
    except ImportError:  # pragma: no cover
        from click.exceptions import ClickException

    debug = bool(os.environ.get("LOGSLEUTH_DEBUG"))
    if not debug:
        _quiet_python()
    code = 0
    try:
        rv = app(args=argv, standalone_mode=False, prog_name="logsleuth")
        code = rv if isinstance(rv, int) else 0
    except typer.Exit as e:
        code = e.exit_code
    except (typer.Abort, KeyboardInterrupt):
        _ignore_sigint()
        code = 130
    except ClickException as e:  # usage errors: one line too, like every other error
        ctx = getattr(e, "ctx", None)
        if type(e).__name__ == "NoArgsIsHelpError" and ctx is not None:  # 'logsleuth' alone: the help
            print(ctx.get_help())
            sys.exit(0)
        where = ctx.command_path if ctx is not None and getattr(ctx, "command_path", None) else "logsleuth"
        print(f"logsleuth: error: {_one_line(e.format_message())} (see '{where} --help')", file=sys.stderr)
        code = e.exit_code
    except LogsleuthError as e:
        print(f"logsleuth: error: {_one_line(str(e))}", file=sys.stderr)
        code = e.exit_code
    except BrokenPipeError:
        _quiet_stdout()
        code = 0
    except SystemExit as e:
        if not _stdout_pipe_closed():
            raise
        code = 0  # typer turned a broken pipe (`logsleuth events ... | head -1`) into exit 1
    except Exception as e:  # never a traceback for the user; LOGSLEUTH_DEBUG=1 shows it
        if debug:
            raise
        print(f"logsleuth: internal error: {type(e).__name__}: {_one_line(str(e))} (set LOGSLEUTH_DEBUG=1 for details)", file=sys.stderr)
        code = 2
    if code == 130:
        _ignore_sigint()
        print("logsleuth: interrupted", file=sys.stderr)
    try:
        sys.stdout.flush()
    except (BrokenPipeError, ValueError):
        _quiet_stdout()
    sys.exit(code)


def _quiet_python() -> None:
    """What Python itself would print besides our one line: warnings, "Exception ignored in ..."
    (a generator closed while Ctrl-C unwinds, a flush into a closed pipe at exit), and
    UnicodeEncodeError on a terminal whose encoding cannot show a character (escaped instead)."""
    import warnings

    warnings.simplefilter("ignore")
    sys.unraisablehook = lambda _unraisable: None
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            pass


def _ignore_sigint() -> None:
    """After the first Ctrl-C, a second one (or one Polars re-raises) must not interrupt the exit."""
    import signal

    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except (ValueError, OSError):  # not the main thread
        pass


def _stdout_pipe_closed() -> bool:
    """Was that SystemExit a broken pipe? typer/click wrap stdout in PacifyFlushWrapper, rich points
    stdout at /dev/null before they exit 1."""
    if type(sys.stdout).__name__ == "PacifyFlushWrapper":
        return True
    try:
        out, null = os.fstat(sys.stdout.fileno()), os.stat(os.devnull)
        return (out.st_dev, out.st_ino) == (null.st_dev, null.st_ino)
    except (OSError, ValueError, AttributeError):
        return False


def _one_line(text: str) -> str:
    from logsleuth.render.safe import visible

    return visible(text.strip().splitlines()[0] if text.strip() else text)[:500]


def _quiet_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
