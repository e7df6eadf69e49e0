"""``logsleuth templates``: what else changed (the messages no pack recognises)."""

from __future__ import annotations

import sys
from typing import Annotated, Optional

import typer

from logsleuth.safe import json_dumps

from logsleuth.cli.options import (
    ColorMode, ColorOpt, ConfigOpt, DateOpt, DisplayTzOpt, InspectFormat, LayoutOpt, LayoutPatternOpt, NoConfigOpt, Paths,
    PatternsOpt, SinceOpt, TzOpt, UntilOpt, _incident_window, read_options, set_view,
)

def templates(
    paths: Paths = None,
    around: Annotated[Optional[str], typer.Option("--around", metavar="TIME", help="The incident's time, in the forms of --since (default: where the worst finding starts).")] = None,
    window: Annotated[str, typer.Option("--window", help="With --around: the incident window after that time.")] = "30m",
    top: Annotated[int, typer.Option("--top", min=0, clamp=True, help="How many templates to list.")] = 15,
    format: Annotated[InspectFormat, typer.Option("--format", "-f", help="table, or json for scripts.")] = InspectFormat.table,
    since: SinceOpt = None,
    until: UntilOpt = None,
    patterns: PatternsOpt = None,
    tz: TzOpt = None,
    date: DateOpt = None,
    layout: LayoutOpt = None,
    layout_pattern: LayoutPatternOpt = None,
    display_tz: DisplayTzOpt = None,
    color: ColorOpt = ColorMode.auto,
    config: ConfigOpt = None,
    no_config: NoConfigOpt = False,
) -> None:
    """What else changed: messages no pack recognises, as templates, ranked by how their rate in the incident window differs from before. Exit 0 if some changed, 1 if none."""
    import json as _json

    from logsleuth.recognise import events as ev
    from logsleuth.recognise import templates as tpl
    from logsleuth.analysis import analyze as run
    from logsleuth.recognise.packs import load_packs
    from logsleuth.render.console import stdout_console
    from logsleuth.render.templates import table

    zone = set_view(display_tz, color)
    opts = read_options(tz, date, layout, layout_pattern)
    flt = ev.EventFilter(since_text=since, until_text=until, zone=zone)
    result = run(paths, opts, load_packs(patterns), flt, templates=True, window=_incident_window(around, window, zone))
    top = min(top, 1_000_000)  # more than any log has templates; a huge number overflowed Polars' head()
    if result.window is not None and top != 10:
        result.changes = tpl.changes(tpl.collect(result.inputs), result.window[0], result.window[1], top, result.spans_by_path())
    if format == InspectFormat.json:
        from logsleuth.ingest.timeparse import iso_utc

        from logsleuth import __version__

        w = result.window
        doc = {
            "tool": "logsleuth",
            "version": __version__,
            "window": None if w is None else {"from": iso_utc(w[0][0]), "to": iso_utc(w[0][1]), "baseline_from": iso_utc(w[1][0]), "baseline_to": iso_utc(w[1][1])},
            "changes": [c.to_json() for c in result.changes],
        }
        sys.stdout.write(json_dumps(doc, indent=2) + "\n")
    else:
        table(result, stdout_console())
    raise typer.Exit(0 if result.changes else 1)
