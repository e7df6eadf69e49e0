"""``logsleuth inspect``: what logsleuth finds in each input."""

from __future__ import annotations

from typing import Annotated

import typer

from logsleuth.cli.options import (
    ColorMode, ColorOpt, ConfigOpt, DateOpt, DisplayTzOpt, InspectFormat, LayoutOpt, LayoutPatternOpt, NoConfigOpt, Paths,
    TzOpt, read_options, set_view,
)

def inspect(
    paths: Paths = None,
    format: Annotated[InspectFormat, typer.Option("--format", "-f", help="table on a terminal, json for scripts.")] = InspectFormat.table,
    tz: TzOpt = None,
    date: DateOpt = None,
    layout: LayoutOpt = None,
    layout_pattern: LayoutPatternOpt = None,
    display_tz: DisplayTzOpt = None,
    color: ColorOpt = ColorMode.auto,
    config: ConfigOpt = None,
    no_config: NoConfigOpt = False,
) -> None:
    """What logsleuth finds in each input: compression, encoding, envelope, layout, lines, records, time span."""
    from logsleuth.ingest.reader import inspect_all
    from logsleuth.render import inspect as view

    set_view(display_tz, color)
    opts = read_options(tz, date, layout, layout_pattern)
    reports = inspect_all(paths, opts)
    if format == InspectFormat.json:
        view.json_out(reports)
    else:
        view.table(reports)
