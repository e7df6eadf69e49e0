"""``logsleuth show N PATH…``: finding N's evidence lines with the lines around them, paged on a
terminal — the step after the report ("open the evidence with context")."""

from __future__ import annotations

import sys
from typing import Annotated, Optional

import typer

from logsleuth.cli.options import (
    ConfigOpt, DateOpt, DisplayTzOpt, IgnoreOpt, LayoutOpt, LayoutPatternOpt, NoConfigOpt, Paths, PatternsOpt, SinceOpt,
    StorageOpt, TzOpt, UntilOpt, read_options, set_view, show_in_logs_zone,
)
from logsleuth.errors import LogsleuthError


def show(
    number: Annotated[int, typer.Argument(help="The finding's number, as analyze numbers them (1 is the worst).", metavar="N")],
    paths: Paths = None,
    context: Annotated[int, typer.Option("--context", "-C", min=0, max=10_000, help="Lines shown before and after each evidence line.")] = 20,
    no_pager: Annotated[bool, typer.Option("--no-pager", help="On a terminal, do not page long output (also LOGSLEUTH_PAGER=).")] = False,
    ignore: IgnoreOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    patterns: PatternsOpt = None,
    tz: TzOpt = None,
    date: DateOpt = None,
    layout: LayoutOpt = None,
    layout_pattern: LayoutPatternOpt = None,
    storage_option: StorageOpt = None,
    display_tz: DisplayTzOpt = None,
    config: ConfigOpt = None,
    no_config: NoConfigOpt = False,
) -> None:
    """Finding N's evidence with the lines around it: give the same logs and options as to analyze."""
    from logsleuth.analysis import analyze as run
    from logsleuth.ingest.excerpt import lines_around
    from logsleuth.recognise import events as ev
    from logsleuth.recognise.packs import load_packs
    from logsleuth.render import clock
    from logsleuth.render.console import is_terminal
    from logsleuth.safe import visible

    if not paths:
        raise LogsleuthError("name the logs given to analyze (and the same options): logsleuth show N PATH…")
    zone = set_view(display_tz)
    flt = ev.EventFilter(since_text=since, until_text=until, zone=zone, auto_zone=display_tz is None)
    from logsleuth.ingest.remote import parse_storage_options

    opts = read_options(tz, date, layout, layout_pattern)
    opts.storage_options = parse_storage_options(storage_option)
    result = run(paths, opts, load_packs(patterns), flt, ignore=ignore)
    show_in_logs_zone(flt, display_tz)
    fs = result.findings
    if not fs:
        raise LogsleuthError("no findings in these logs: nothing to show")
    if not 1 <= number <= len(fs):
        raise LogsleuthError(f"finding {number}: these logs have findings 1–{len(fs)} (as 'logsleuth analyze' numbers them)")
    f = clock.localised_findings([fs[number - 1]])[0]
    out = [f"finding {number} · {f.id} · {f.severity.upper()} · {visible(str(f.title))}", ""]
    by_path: dict[str, list] = {}
    for e in f.evidence:
        by_path.setdefault(e.path, []).append(e)
    width = 0
    for path, evs in by_path.items():
        try:
            got = lines_around(path, [e.line for e in evs], context, opts.storage_options)
        except LogsleuthError as err:
            out += [f"── {visible(path)}: {err}", ""]
            continue
        width = max([width] + [len(str(n)) for n in got])
        marked = {e.line: e for e in evs}
        blocks: list[list] = []  # evidence lines whose windows touch are one block
        for e in sorted(evs, key=lambda x: x.line):
            if blocks and e.line - context <= blocks[-1][-1].line + context + 1:
                blocks[-1].append(e)
            else:
                blocks.append([e])
        for b in blocks:
            for e in b:
                note = f" ({visible(str(e.note))})" if e.note else ""
                out.append(f"── {visible(path)}:{e.line}{note}")
            for n in range(max(1, b[0].line - context), b[-1].line + context + 1):
                if n in got:
                    out.append(f"{'>' if n in marked else ' '}{n:>{width}}  {visible(got[n])}")
            out.append("")
    text = "\n".join(out) + "\n"
    if is_terminal() and not no_pager:
        from logsleuth.render import pager
        from logsleuth.render.console import report_console

        if pager.page(text, report_console().size.height):
            return
    sys.stdout.write(text)
