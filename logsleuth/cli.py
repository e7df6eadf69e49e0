"""The ``logsleuth`` command line. Thin: parse options, call a stage, hand the result to a renderer.

Heavy modules (polars, the pipeline) are imported inside the commands so ``--help`` stays fast.
Exit codes: 0 done, 1 "nothing found" (events) or a finding at/above ``--fail-on`` (analyze),
2 bad input or usage, 130 interrupted.
"""

from __future__ import annotations

import os
import sys
from enum import Enum
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
    Optional[str],
    typer.Option("--layout-pattern", help="Force a log4j/logback conversion pattern, e.g. '%d{ISO8601} [%t] %-5level %logger{36} - %msg%n'."),
]


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


def read_options(tz: list[str] | None, date: list[str] | None, layout: str | None, layout_pattern: str | None):
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
    if layout and layout_pattern:
        raise LogsleuthError("give --layout or --layout-pattern, not both")
    if layout:
        opts.layout = layout_by_id(layout)
    elif layout_pattern:
        opts.layout = from_conversion(layout_pattern, "custom")
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
    from logsleuth.reader import read_all
    from logsleuth.render import inspect as view

    opts = read_options(tz, date, layout, layout_pattern)
    results = read_all(paths, opts)
    reports = [rep for rep, _ in results]
    if format == InspectFormat.json:
        view.json_out(reports)
    else:
        view.table(reports)


def main(argv: list[str] | None = None) -> None:
    """Entry point: every failure becomes one line on stderr and an exit code."""
    try:  # typer >= 0.2x carries its own copy of click
        from typer._click.exceptions import ClickException
    except ImportError:  # pragma: no cover
        from click.exceptions import ClickException

    debug = bool(os.environ.get("LOGSLEUTH_DEBUG"))
    code = 0
    try:
        rv = app(args=argv, standalone_mode=False, prog_name="logsleuth")
        code = rv if isinstance(rv, int) else 0
    except typer.Exit as e:
        code = e.exit_code
    except (typer.Abort, KeyboardInterrupt):
        code = 130
    except ClickException as e:
        e.show()
        code = e.exit_code
    except LogsleuthError as e:
        print(f"logsleuth: error: {_one_line(str(e))}", file=sys.stderr)
        code = e.exit_code
    except BrokenPipeError:
        _quiet_stdout()
        code = 0
    except Exception as e:  # never a traceback for the user; LOGSLEUTH_DEBUG=1 shows it
        if debug:
            raise
        print(f"logsleuth: internal error: {type(e).__name__}: {_one_line(str(e))} (set LOGSLEUTH_DEBUG=1 for details)", file=sys.stderr)
        code = 2
    if code == 130:
        print("logsleuth: interrupted", file=sys.stderr)
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _quiet_stdout()
    sys.exit(code)


def _one_line(text: str) -> str:
    from logsleuth.render.safe import visible

    return visible(text.strip().splitlines()[0] if text.strip() else text)[:500]


def _quiet_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
