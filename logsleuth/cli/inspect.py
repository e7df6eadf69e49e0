"""``logsleuth inspect``: what logsleuth finds in each input."""

from __future__ import annotations

from typing import Annotated

import typer

from logsleuth.cli.options import DateOpt, InspectFormat, LayoutOpt, LayoutPatternOpt, Paths, TzOpt, read_options

def inspect(
    paths: Paths,
    format: Annotated[InspectFormat, typer.Option("--format", "-f", help="table on a terminal, json for scripts.")] = InspectFormat.table,
    tz: TzOpt = None,
    date: DateOpt = None,
    layout: LayoutOpt = None,
    layout_pattern: LayoutPatternOpt = None,
) -> None:
    """What logsleuth finds in each input: compression, encoding, envelope, layout, lines, records, time span."""
    from logsleuth.ingest.reader import inspect_all
    from logsleuth.render import inspect as view

    opts = read_options(tz, date, layout, layout_pattern)
    reports = inspect_all(paths, opts)
    if format == InspectFormat.json:
        view.json_out(reports)
    else:
        view.table(reports)
