"""``logsleuth analyze`` and ``logsleuth report``: the root cause, on a terminal, for pipes, or as a
postmortem."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Annotated, Optional

import typer

from logsleuth.cli.options import (
    _FORMAT_BY_SUFFIX, AnalyzeFormat, ColorMode, ColorOpt, ConfigOpt, DateOpt, DisplayTzOpt, EngineName, EngineOpt, KeepStoreOpt, LayoutOpt,
    LayoutPatternOpt, MemoryBudgetOpt, IgnoreOpt, NoConfigOpt, Paths, PatternsOpt, SchedulerOpt, Severity, SinceOpt, SkewMode, SkewOpt,
    SplitSizeOpt, StorageOpt, StoreOpt, TzOpt, UntilOpt, WorkersOpt, _incident_window, engine_options, read_options, show_in_logs_zone, set_view,
)
from logsleuth.errors import LogsleuthError
from logsleuth.safe import document_text

def analyze(
    paths: Annotated[Optional[list[str]], typer.Argument(help="Log files, directories (recursive), globs, or - for stdin.", show_default=False, metavar="PATH")] = None,
    events_dir: Annotated[
        Optional[Path],
        typer.Option("--events", help="Analyse an events directory written by 'events --format parquet -o DIR' instead of reading logs."),
    ] = None,
    format: Annotated[
        Optional[AnalyzeFormat],
        typer.Option("--format", "-f", help="terminal (default on a terminal or with --color always; piped, e.g. to 'less -R', it is in colour with --color always), text (default when piped: the same without colours), markdown, html, json, oneline (one line per incident, to paste in chat or a ticket). markdown and html add the chart and 'what else changed' (like 'logsleuth report')."),
    ] = None,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write the report to this file instead of stdout (markdown: the chart is written beside it as <name>.svg).")] = None,
    fail_on: Annotated[Optional[Severity], typer.Option("--fail-on", help="Exit 1 when a finding at or above this severity exists (for CI/cron).")] = None,
    detector: Annotated[Optional[list[str]], typer.Option("--detector", "-d", help="Run only these detectors (ids or prefixes ending in *, repeatable).")] = None,
    sarama_config: Annotated[
        Optional[str],
        typer.Option("--sarama-config", envvar="LOGSLEUTH_SARAMA_CONFIG", metavar="KEY=VALUE,...",
                     help="The sarama settings in use, e.g. 'Net.DialTimeout=5s,Net.ReadTimeout=3s,Producer.Retry.Max=1' (default: sarama's defaults)."),
    ] = None,
    ignore: IgnoreOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    skew: SkewOpt = SkewMode.auto,
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
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Everything: routine notes, all evidence and subject fields, confidence reasons, info findings in full.")] = False,
    no_pager: Annotated[bool, typer.Option("--no-pager", help="On a terminal, do not page long output (also LOGSLEUTH_PAGER=).")] = False,
    display_tz: DisplayTzOpt = None,
    color: ColorOpt = ColorMode.auto,
    config: ConfigOpt = None,
    no_config: NoConfigOpt = False,
) -> None:
    """Find the root cause: read broker and client logs together, run every detector, report findings with evidence."""
    from logsleuth.recognise import events as ev
    from logsleuth.analysis import analyze as run
    from logsleuth.findings import at_or_above
    from logsleuth.recognise.packs import load_packs
    from logsleuth.render.console import colors_forced, is_terminal

    from logsleuth.detectors import check_names

    started = time.perf_counter()

    zone = set_view(display_tz, color)
    check_names(detector)
    opts = read_options(tz, date, layout, layout_pattern, memory_budget)
    eng = engine_options(opts, engine, scheduler, workers, store, keep_store, storage_option, split_size)
    packs = load_packs(patterns)
    det_opts: dict = {}
    if sarama_config:
        from logsleuth.detectors.sarama.config import parse_sarama_config

        det_opts["sarama_config"] = parse_sarama_config(sarama_config)
    flt = ev.EventFilter(since_text=since, until_text=until, zone=zone, auto_zone=display_tz is None)
    fmt = _format_for(format, output)
    fmt = fmt or (AnalyzeFormat.terminal if is_terminal() or colors_forced() else AnalyzeFormat.text)
    rich_report = fmt in (AnalyzeFormat.markdown, AnalyzeFormat.html)
    stored = None
    if events_dir is not None:
        from logsleuth.recognise import eventstore

        if paths:
            raise LogsleuthError("give log paths or --events DIR, not both")
        if eng is not None:
            raise LogsleuthError("--engine dask reads logs; an events directory is read here (drop --engine)")
        stored = eventstore.read(events_dir, packs, opts.memory_budget)
        rich_report = False  # templates need the log lines themselves
    elif not paths:
        from logsleuth.ingest.sources import stdin_has_data

        if not stdin_has_data():
            raise LogsleuthError("no input given (name files, directories, globs, - for stdin, or --events DIR; or pipe the log in)")
        paths = ["-"]
    result = run(paths or [], opts, packs, flt, det_opts, detector, skew_mode=skew.value, templates=rich_report, stored=stored, ignore=ignore, engine=eng)
    show_in_logs_zone(flt, display_tz)
    _emit_report(result, fmt, output, verbose=verbose, pager=not no_pager, elapsed=time.perf_counter() - started)
    if fail_on is not None and any(at_or_above(f.severity, fail_on.value) for f in result.findings):
        raise typer.Exit(1)


def _format_for(format: AnalyzeFormat | None, output: Path | None) -> AnalyzeFormat | None:
    """The format -o's name says, checked against --format: 'analyze -f html -o x.md' is an error,
    not HTML in a .md file."""
    if output is None:
        return format
    named = _FORMAT_BY_SUFFIX.get(output.suffix.lower())
    if format is None:
        return named or AnalyzeFormat.text
    named = named or (AnalyzeFormat.text if output.suffix.lower() == ".txt" else None)
    same = {AnalyzeFormat.terminal: AnalyzeFormat.text, AnalyzeFormat.oneline: AnalyzeFormat.text}.get(format, format)
    if named is not None and named != same:
        raise LogsleuthError(
            f"-o {output}: the name says {named.value} but --format is {format.value} (name the file .{_SUFFIX[format]} or drop --format)"
        )
    return format


_SUFFIX = {AnalyzeFormat.terminal: "txt", AnalyzeFormat.text: "txt", AnalyzeFormat.markdown: "md", AnalyzeFormat.html: "html", AnalyzeFormat.json: "json", AnalyzeFormat.oneline: "txt"}


def _emit_report(result, fmt: "AnalyzeFormat", output: Path | None, title: str = "Incident analysis", verbose: bool = False, pager: bool = True, elapsed: float | None = None) -> None:
    # each format imports its own renderer (the text ones pull in rich; JSON needs none of them)
    from logsleuth.render.console import is_terminal

    if fmt != AnalyzeFormat.json:  # people read it: the findings' times in the display zone (JSON stays UTC)
        from logsleuth.render import clock

        result = clock.localised(result)
    if fmt == AnalyzeFormat.terminal and output is None:
        from logsleuth.render import report
        from logsleuth.render.console import report_console

        con = report_console()
        if pager and is_terminal():
            _paged(result, con, verbose, elapsed)
        else:
            report.terminal(result, con, verbose=verbose, elapsed=elapsed)
        return
    if fmt == AnalyzeFormat.json:
        from logsleuth.render import json_report

        body = json_report.dumps(result)
        if output is None and is_terminal():  # no raw bidi/C1 controls on a terminal
            import json as _json

            body = _json.dumps(_json.loads(body), indent=2, ensure_ascii=True) + "\n"
    elif fmt == AnalyzeFormat.markdown:
        image = None
        if output is not None:
            from logsleuth.render import svg

            drawing = svg.render(result, standalone=True)
            if drawing:
                img_path = output.with_suffix(".svg")
                from logsleuth import atomic

                atomic.write_text(img_path, drawing)
                image = img_path.name
        from logsleuth.render import markdown

        body = markdown.document(result, title, image)
    elif fmt == AnalyzeFormat.html:
        from logsleuth.render import html

        body = html.document(result, title)
    elif fmt == AnalyzeFormat.oneline:
        from logsleuth.render import oneline

        body = oneline.text(result)
    else:
        from logsleuth.render import report
        from logsleuth.render.console import report_width

        body = report.text(result, width=report_width(), verbose=verbose, elapsed=elapsed)
    if fmt != AnalyzeFormat.json:
        body = document_text(body)  # any control, bidi or zero-width character a field let through
    if output is None:
        sys.stdout.write(body)
        return
    from logsleuth import atomic

    atomic.write_text(output, body, errors="backslashreplace")  # whole or not at all: the old one stays on failure
    print(f"wrote {output}", file=sys.stderr)


def _paged(result, con, verbose: bool, elapsed: float | None) -> None:
    """The terminal report through the pager when it is longer than the screen (render/pager.py)."""
    import io

    from rich.console import Console

    from logsleuth.safe import SafeConsole

    from logsleuth.render import pager, report

    height = con.size.height
    buf = io.StringIO()
    shadow = SafeConsole(file=buf, width=con.width, height=height, force_terminal=True, color_system=con.color_system,
                     markup=False, emoji=False, highlight=False, soft_wrap=False)
    report.terminal(result, shadow, height=height - 1, verbose=verbose, elapsed=elapsed)  # less keeps a line for its prompt
    text = buf.getvalue()
    if not pager.page(text, height):
        sys.stdout.write(text)


def report(
    output: Annotated[Path, typer.Option("--output", "-o", help="incident.html (one self-contained file) or incident.md (the chart is written beside it as incident.svg).")],
    paths: Paths = None,
    title: Annotated[str, typer.Option("--title", help="The report's title.")] = "Incident analysis",
    around: Annotated[Optional[str], typer.Option("--around", help="The incident's time for 'what else changed' (default: where the worst finding starts).")] = None,
    window: Annotated[str, typer.Option("--window", help="With --around: the incident window after that time (the baseline is everything before it).")] = "30m",
    sarama_config: Annotated[Optional[str], typer.Option("--sarama-config", envvar="LOGSLEUTH_SARAMA_CONFIG", metavar="KEY=VALUE,...", help="The sarama settings in use (see analyze).")] = None,
    ignore: IgnoreOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    skew: SkewOpt = SkewMode.auto,
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
    config: ConfigOpt = None,
    no_config: NoConfigOpt = False,
) -> None:
    """A postmortem to paste: findings with evidence, a timeline chart, what was ruled out, and what else changed."""
    from logsleuth.recognise import events as ev
    from logsleuth.analysis import analyze as run
    from logsleuth.recognise.packs import load_packs

    zone = set_view(display_tz)
    fmt = _FORMAT_BY_SUFFIX.get(output.suffix.lower())
    if fmt not in (AnalyzeFormat.html, AnalyzeFormat.markdown):
        raise LogsleuthError(f"{output}: the report is .html or .md (the name decides)")
    opts = read_options(tz, date, layout, layout_pattern, memory_budget)
    eng = engine_options(opts, engine, scheduler, workers, store, keep_store, storage_option, split_size)
    packs = load_packs(patterns)
    det_opts: dict = {}
    if sarama_config:
        from logsleuth.detectors.sarama.config import parse_sarama_config

        det_opts["sarama_config"] = parse_sarama_config(sarama_config)
    flt = ev.EventFilter(since_text=since, until_text=until, zone=zone, auto_zone=display_tz is None)
    result = run(paths, opts, packs, flt, det_opts, skew_mode=skew.value, templates=True, window=_incident_window(around, window, zone), ignore=ignore,
                 engine=eng)
    show_in_logs_zone(flt, display_tz)
    _emit_report(result, fmt, output, title)
