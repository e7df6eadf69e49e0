"""What every command shares: the option types, the format choices, and the options turned into
``ReadOptions`` (validated: a bad value is one line and exit 2)."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from logsleuth.cli import config
from logsleuth.errors import LogsleuthError

Paths = Annotated[Optional[list[str]], typer.Argument(help="Log files, directories (recursive), globs, or - for stdin (read also when no PATH is given and a log is piped in).", show_default=False, metavar="PATH")]


TzOpt = Annotated[
    Optional[list[str]],
    typer.Option("--tz", envvar="LOGSLEUTH_TZ", metavar="ZONE|GLOB=ZONE",
                 help="Zone the logs' stamps without an offset are in: an IANA name, or GLOB=ZONE for some files (repeatable). Default: this machine's zone."),
]


DateOpt = Annotated[
    Optional[list[str]],
    typer.Option("--date", metavar="DATE|GLOB=DATE", help="Date of the first line of time-only logs: YYYY-MM-DD, or GLOB=YYYY-MM-DD (repeatable)."),
]


MemoryBudgetOpt = Annotated[
    Optional[str],
    typer.Option("--memory-budget", envvar="LOGSLEUTH_MEMORY_BUDGET", metavar="SIZE",
                 help="Memory for the events table (default 64M): past it the events go to Parquet files in a temporary directory "
                      "($LOGSLEUTH_SPILL_DIR, else $TMPDIR) and are read back as needed; 0: always on disk; off: never."),
]


LayoutOpt = Annotated[Optional[str], typer.Option("--layout", metavar="ID", help="Force a built-in layout by id (see 'logsleuth patterns layouts').")]


LayoutPatternOpt = Annotated[
    Optional[list[str]],
    typer.Option(
        "--layout-pattern",
        metavar="PATTERN|GLOB=PATTERN",
        help="Force a log4j/logback conversion pattern, e.g. '%d{ISO8601} [%t] %-5level %logger{36} - %msg%n', "
        "or GLOB=PATTERN for some files (repeatable; text before the first '=' is a glob only when it holds no '%').",
    ),
]


PatternsOpt = Annotated[
    Optional[list[Path]],
    typer.Option("--patterns", envvar="LOGSLEUTH_PATTERNS", metavar="DIR",
                 help="A directory of your own *.toml packs (repeatable); a pattern id that exists already replaces the built-in one."),
]


_WHEN_HELP = (
    "'2020-06-02 10:00' or an ISO time (without an offset: in the display zone, --display-tz); relative to the logs: "
    "'-2h', '30m ago' (from their end), '+10m' (from their start); or the wall clock: 'now', 'now-2h', 'today', "
    "'yesterday', 'monday' (midnight, or a time after it: 'yesterday 22:00')."
)
IgnoreOpt = Annotated[
    Optional[list[str]],
    typer.Option("--ignore", metavar="ID[:SUBJECT]",
                 help="Keep a finding you know about off the report: its id (or a glob, 'kafka.*'), and optionally ':SUBJECT', a value every one of its subjects has (a client id, a log's name, a broker). Repeatable; the ignored are counted in the summary."),
]
SinceOpt = Annotated[Optional[str], typer.Option("--since", metavar="TIME", help="Only from this time: " + _WHEN_HELP)]


UntilOpt = Annotated[Optional[str], typer.Option("--until", metavar="TIME", help="Only up to this time (the same forms as --since).")]


DisplayTzOpt = Annotated[
    Optional[str],
    typer.Option("--display-tz", envvar="LOGSLEUTH_DISPLAY_TZ", metavar="ZONE",
                 help="The zone times are shown in (and --since/--until/--around without an offset are read in): an IANA "
                 "name, local (this machine's zone) or UTC. Default: the zone the logs' stamps agree on, else UTC. JSON, NDJSON, CSV and Parquet stay in UTC."),
]


class ColorMode(str, Enum):
    auto = "auto"
    always = "always"
    never = "never"


ColorOpt = Annotated[
    ColorMode,
    typer.Option("--color", "--colour", envvar="LOGSLEUTH_COLOR",
                 help="Colours: auto (on a terminal, unless NO_COLOR is set; FORCE_COLOR turns them on), always (also when piped), never."),
]


ConfigOpt = config.ConfigOpt
NoConfigOpt = config.NoConfigOpt


class EngineName(str, Enum):
    local = "local"
    dask = "dask"


EngineOpt = Annotated[
    EngineName,
    typer.Option("--engine", envvar="LOGSLEUTH_ENGINE",
                 help="Where the inputs are read: local (this process) or dask (a Dask cluster, one task per input; needs "
                      "pip install 'logsleuth-broker[dask]')."),
]
SchedulerOpt = Annotated[
    Optional[str],
    typer.Option("--scheduler", metavar="ADDRESS",
                 help="With --engine dask: the Dask scheduler (tcp://host:8786; default $DASK_SCHEDULER_ADDRESS), or threads "
                      "for a cluster in this process. None: a local cluster of --workers processes."),
]
WorkersOpt = Annotated[
    Optional[int],
    typer.Option("--workers", min=1,
                 help="With --engine dask and no scheduler: the local cluster's workers (default: this machine's cores)."),
]
StoreOpt = Annotated[
    Optional[str],
    typer.Option("--store", metavar="DIR|URL",
                 help="With --engine dask: where the workers write the events (an empty directory, or a URL such as "
                      "s3://bucket/prefix); default a temporary directory on this machine, removed at the end."),
]
KeepStoreOpt = Annotated[bool, typer.Option("--keep-store", help="With --engine dask: keep the temporary events store (its place is said on stderr).")]
StorageOpt = Annotated[
    Optional[list[str]],
    typer.Option("--storage-option", metavar="KEY=VALUE",
                 help="An fsspec storage option for URL inputs (s3://, gs://, ...) and a URL --store, e.g. "
                      "endpoint_url=http://minio:9000 or anon=true (repeatable)."),
]


SplitSizeOpt = Annotated[
    Optional[str],
    typer.Option("--split-size", metavar="SIZE",
                 help="With --engine dask: plain files bigger than this are read in byte ranges of this size, a task each "
                      "(default 512M; off: one task per file)."),
]


def engine_options(opts, engine: "EngineName | str", scheduler: str | None, workers: int | None, store: str | None, keep_store: bool,
                   storage_option: list[str] | None, split_size: str | None = None):
    """The scale-out options checked together -> a cluster.Engine (None: read in this process).
    ``opts`` (ReadOptions) gets the storage options, which URL inputs need with either engine."""
    from logsleuth.ingest.remote import parse_storage_options

    opts.storage_options = parse_storage_options(storage_option)
    name = engine.value if isinstance(engine, EngineName) else str(engine)
    if name != EngineName.dask.value:
        given = [o for o, v in (("--scheduler", scheduler), ("--workers", workers), ("--store", store), ("--keep-store", keep_store),
                                ("--split-size", split_size)) if v]
        if given:
            raise LogsleuthError(f"{given[0]} is for --engine dask")
        return None
    from logsleuth.recognise.cluster import SPLIT_SIZE, Engine
    from logsleuth.recognise.spill import parse_budget

    split = SPLIT_SIZE
    if split_size is not None:
        try:
            split = parse_budget(split_size)
        except LogsleuthError:
            split = 0
        if split == 0:
            raise LogsleuthError(f"--split-size {split_size!r}: expected a size such as 512M or 2G, or off") from None
    eng = Engine(name, scheduler=scheduler, workers=workers, store=store, keep_store=keep_store, storage_options=opts.storage_options,
                 split_size=split)
    if workers and eng.address and eng.address != "threads":
        raise LogsleuthError(f"--workers is for a local cluster; the scheduler at {eng.address} has its own workers")
    if keep_store and store:
        raise LogsleuthError("--keep-store keeps the temporary store; a --store you named is always kept")
    return eng


def set_view(display_tz: str | None = None, color: "ColorMode | str | None" = None) -> str:
    """How this run shows things: the display zone and colours (render/clock.py, render/console.py).
    Returns the display zone's name (zone-less --since/--until/--around are read in it)."""
    from logsleuth.render import clock, console

    console.set_color(color.value if isinstance(color, ColorMode) else color)
    return clock.set_zone(display_tz)


def show_in_logs_zone(flt, display_tz: str | None) -> None:
    """No display zone chosen (flag, environment or config): times are read and shown in the zone
    the logs' stamps agree on (recognise.events.logs_zone) once the inputs are read; ``flt`` is the
    run's EventFilter, told before the run (``auto_zone``) and read after it."""
    if display_tz is not None or flt is None or not flt.zone_chosen:
        return
    from logsleuth.render import clock

    clock.set_zone(flt.zone_chosen)


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
    oneline = "oneline"


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


class TimelineFormat(str, Enum):
    terminal = "terminal"
    lines = "lines"
    ndjson = "ndjson"
    csv = "csv"
    parquet = "parquet"


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


# the ReadOptions of this run: the inputs they could not read make the exit code 2 at the end (app.main)
RUN_OPTIONS: list = []


def unread_inputs() -> list[str]:
    return [msg for opts in RUN_OPTIONS for msg in opts.failed]


def read_options(tz: list[str] | None, date: list[str] | None, layout: str | None, layout_pattern: list[str] | None, memory_budget: str | None = None):
    """CLI strings -> ReadOptions (validated; errors are one line, exit 2)."""
    import datetime as dt

    from logsleuth.ingest.layouts.catalog import from_conversion, layout_by_id
    from logsleuth.ingest.inputs import ReadOptions
    from logsleuth.ingest.timeparse import check_zone

    opts = ReadOptions()
    RUN_OPTIONS.append(opts)
    if memory_budget is not None:
        from logsleuth.recognise.spill import parse_budget

        opts.memory_budget = parse_budget(memory_budget)
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
    from logsleuth.ingest.sources import _python_handles_sigint

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


def _incident_window(around: str | None, window: str, zone: str):
    """--around/--window -> a function of the logs' span giving (incident window, baseline before
    it), so relative times ('-2h') count from the logs' end like --since does."""
    if not around:
        return None
    from logsleuth.timeline.histogram import parse_duration
    from logsleuth.ingest.timeparse import parse_when

    width = parse_duration(window)

    def resolve(first, last):
        center = parse_when(around, zone, first, last)
        return (center, center + width), (first or center - width, center)

    return resolve
