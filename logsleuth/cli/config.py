"""Settings set once: a TOML config file and environment variables, under the options of the command
line, and ``logsleuth config`` (the effective settings and where each came from).

Precedence, highest first: the command line, the environment variable, the config file, the
built-in default. A value from the config file replaces the default of the option of the same name
(click's ``default_map``), so a repeatable option given on the command line replaces the file's
list rather than adding to it. The file is ``--config FILE`` (or ``LOGSLEUTH_CONFIG``), else the
first of ``./logsleuth.toml`` and ``$XDG_CONFIG_HOME/logsleuth/config.toml`` (``~/.config`` when
``XDG_CONFIG_HOME`` is not set) that exists; ``--no-config`` reads none. docs/cli.md lists it all.
"""

from __future__ import annotations

import datetime as dt
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from logsleuth.errors import LogsleuthError


@dataclass(frozen=True)
class Key:
    name: str  # in the file, as the option is spelled without its '--'
    param: str | None  # the commands' parameter it sets (None: not an option, e.g. pager)
    env: str | None  # its environment variable
    kind: str  # "rules" (str, list or {glob: value}), "paths", "str", "choice", "pager", "settings"
    help: str


KEYS = [
    Key("tz", "tz", "LOGSLEUTH_TZ", "rules",
        "zone of stamps without an offset: \"Europe/Berlin\", or per file glob: [\"broker-*.log=Asia/Shanghai\", \"UTC\"] or a table {glob = zone}"),
    Key("date", "date", None, "rules", "date of the first line of time-only logs: \"2024-05-02\", a list, or a table {glob = date}"),
    Key("layout", "layout", None, "str", "a built-in layout id for every file"),
    Key("layout-pattern", "layout_pattern", None, "rules",
        "log4j/logback conversion pattern(s): one string, a list of 'GLOB=PATTERN', or a table {glob = pattern}"),
    Key("patterns", "patterns", "LOGSLEUTH_PATTERNS", "paths", "directories of your own packs (a list; relative to the config file)"),
    Key("sarama-config", "sarama_config", "LOGSLEUTH_SARAMA_CONFIG", "settings",
        "the sarama settings in use: \"Net.DialTimeout=5s,Producer.Retry.Max=1\" or a table {\"Net.DialTimeout\" = \"5s\"}"),
    Key("display-tz", "display_tz", "LOGSLEUTH_DISPLAY_TZ", "str", "the zone human outputs show times in: an IANA name, local or UTC"),
    Key("color", "color", "LOGSLEUTH_COLOR", "choice", "auto, always or never"),
    Key("memory-budget", "memory_budget", "LOGSLEUTH_MEMORY_BUDGET", "str",
        "memory for the events table: \"256M\", \"1G\"; past it the events go to disk (\"0\": always, \"off\": never)"),
    Key("engine", "engine", "LOGSLEUTH_ENGINE", "str", "where inputs are read: \"local\" or \"dask\" (docs/scale.md)"),
    Key("scheduler", "scheduler", None, "str", "with engine dask: the Dask scheduler's address (tcp://host:8786) or \"threads\""),
    Key("workers", "workers", None, "str", "with engine dask and no scheduler: the local cluster's workers"),
    Key("store", "store", None, "str", "with engine dask: where the workers write the events (a directory or a URL)"),
    Key("split-size", "split_size", None, "str", "with engine dask: plain files bigger than this are read in byte ranges (\"512M\", \"off\")"),
    Key("pager", None, "LOGSLEUTH_PAGER", "pager", "the pager for long terminal output (\"less -S\"), or false for none"),
    Key("ignore", "ignore", None, "rules", "findings to keep off the report: [\"kafka.broker-unreachable:billing-1\", \"pulsar.load-shedding\"] (as --ignore)"),
    Key("trust", None, None, "paths", "directories whose ./logsleuth.toml may set a pager, packs, ignores, a scheduler and a store (only in your own config)"),
]
# what a config file may only set when you wrote it or trust it: a command to run, packs that replace
# or add patterns, findings to hide (docs/robustness.md, "Configuration you did not write")
# and where the logs' events are sent or written (a scheduler or a store named by a bundle's config
# would ship your logs to someone else's machine)
TRUSTED_ONLY = ("pager", "patterns", "ignore", "trust", "scheduler", "store")
BY_NAME = {k.name: k for k in KEYS}
COLOR_CHOICES = ("auto", "always", "never")

# every environment variable logsleuth reads, for --help and docs/cli.md (tests/test_cli_manners.py
# checks the two against each other)
ENV_VARS = [
    ("LOGSLEUTH_CONFIG", "the config file (as --config)"),
    ("LOGSLEUTH_TZ", "--tz"),
    ("LOGSLEUTH_DISPLAY_TZ", "--display-tz"),
    ("LOGSLEUTH_COLOR", "--color"),
    ("LOGSLEUTH_PATTERNS", "--patterns (directories separated by ':')"),
    ("LOGSLEUTH_SARAMA_CONFIG", "--sarama-config"),
    ("LOGSLEUTH_MEMORY_BUDGET", "--memory-budget"),
    ("LOGSLEUTH_ENGINE", "--engine"),
    ("DASK_SCHEDULER_ADDRESS", "the Dask scheduler for --engine dask without --scheduler"),
    ("LOGSLEUTH_SPILL_DIR", "where the events past the budget go ($TMPDIR)"),
    ("LOGSLEUTH_PAGER", "the pager; empty or 'cat': none (--no-pager)"),
    ("PAGER", "the pager without LOGSLEUTH_PAGER (default: less)"),
    ("LESS", "less's options (default: FRX)"),
    ("NO_COLOR", "no colours with --color auto (no-color.org)"),
    ("FORCE_COLOR", "colours with --color auto, also piped"),
    ("COLUMNS", "the width of terminal and text output"),
    ("TZ", "this machine's zone (for --tz, --display-tz local)"),
    ("XDG_CONFIG_HOME", "where config.toml is looked for (~/.config)"),
    ("LOGSLEUTH_CACHE_DIR", "the cache of compiled layouts and patterns"),
    ("XDG_CACHE_HOME", "the cache's parent (~/.cache) without it"),
    ("LOGSLEUTH_NO_CACHE", "set: no cache"),
    ("LOGSLEUTH_DEBUG", "set: a traceback instead of an internal error"),
]


@dataclass
class Loaded:
    path: Path | None = None  # the file read (None: none)
    how: str = ""  # how it was found: "--config", "LOGSLEUTH_CONFIG", "the current directory", "XDG_CONFIG_HOME"
    values: dict[str, Any] = field(default_factory=dict)  # key -> value in the options' form
    looked: list[Path] = field(default_factory=list)  # where a file was looked for


LOADED = Loaded()  # what this run read (logsleuth config shows it)


def search_path() -> list[Path]:
    xdg = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return [Path("logsleuth.toml"), Path(xdg) / "logsleuth" / "config.toml"]


def find(explicit: Path | None, disabled: bool, how: str = "--config") -> tuple[Path | None, str, list[Path]]:
    """The config file to read: ``explicit`` (from ``how``: --config or LOGSLEUTH_CONFIG), else the
    first of the search path that exists; None with ``disabled`` (--no-config)."""
    if explicit is not None and disabled and how == "--config":
        raise LogsleuthError("give --config FILE or --no-config, not both")
    if disabled:
        return None, "", []
    if explicit is not None:
        explicit = explicit.expanduser()
        if not explicit.is_file():
            raise LogsleuthError(f"{explicit}: no such config file ({how})")
        return explicit, how, [explicit]
    looked = search_path()
    for p, how in zip(looked, ("the current directory", "XDG_CONFIG_HOME")):
        if p.is_file():
            return p, how, looked
    return None, "", looked


def load(path: Path) -> dict[str, Any]:
    """The file's settings, checked and in the options' form (lists of 'GLOB=VALUE' strings, paths
    resolved against the file's directory); a problem is one line naming the file and key."""
    import tomllib

    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise LogsleuthError(f"{path}: cannot read ({e.strerror or e})") from None
    except UnicodeDecodeError:
        raise LogsleuthError(f"{path}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as e:
        raise LogsleuthError(f"{path}: not valid TOML ({e})") from None
    except RecursionError:  # an array nested 100,000 deep
        raise LogsleuthError(f"{path}: not a config file (nested too deep)") from None
    out: dict[str, Any] = {}
    for raw_key, value in doc.items():
        name = raw_key.replace("_", "-")
        key = BY_NAME.get(name)
        if key is None:
            raise LogsleuthError(f"{path}: unknown key {raw_key!r} (known: {', '.join(BY_NAME)})")
        out[name] = _value(path, key, value)
    return out


def _value(path: Path, key: Key, v: Any) -> Any:
    where = f"{path}: {key.name}"

    def text(x: Any) -> str:
        if isinstance(x, (dt.date, dt.datetime)):  # date = 2024-05-02 unquoted is a TOML date
            return x.isoformat()
        if isinstance(x, bool) or not isinstance(x, (str, int, float)):
            raise LogsleuthError(f"{where}: expected text, not {type(x).__name__}")
        return str(x)

    if key.kind == "rules":
        if isinstance(v, dict):
            return [f"{glob}={text(x)}" for glob, x in v.items()]
        if isinstance(v, list):
            return [text(x) for x in v]
        return [text(v)]
    if key.kind == "paths":
        items = v if isinstance(v, list) else [v]
        return [str((path.parent / Path(text(x)).expanduser()) if not Path(text(x)).expanduser().is_absolute() else Path(text(x)).expanduser()) for x in items]
    if key.kind == "settings":
        if isinstance(v, dict):
            return ",".join(f"{k}={text(x)}" for k, x in v.items())
        return text(v)
    if key.kind == "choice":
        s = text(v).lower()
        if s not in COLOR_CHOICES:
            raise LogsleuthError(f"{where}: {v!r} is not one of {', '.join(COLOR_CHOICES)}")
        return s
    if key.kind == "pager":
        if v is False:
            return ""
        return text(v)
    if isinstance(v, (list, dict)):
        raise LogsleuthError(f"{where}: expected one value, not a {'list' if isinstance(v, list) else 'table'}")
    return text(v)


# ----------------------------------------------------------------------------- the options


def on_config_option(ctx, value):
    """The eager callback of ``--config``: read the file before the other options are parsed and
    make its values their defaults (click reads ``ctx.default_map`` when an option is not given)."""
    if ctx.resilient_parsing:  # shell completion
        return value
    from_env = value is not None and str(ctx.get_parameter_source("config")).endswith("ENVIRONMENT")
    path, how, looked = find(value, bool(ctx.meta.get("logsleuth.no_config")), "LOGSLEUTH_CONFIG" if from_env else "--config")
    values = load(path) if path is not None else {}
    if path is not None and how == "the current directory":
        values = _distrust(path, values)
    LOADED.path, LOADED.how, LOADED.values, LOADED.looked = (path.resolve() if path else None), how, values, looked
    params = {p.name for p in ctx.command.params}
    defaults = {k.param: values[k.name] for k in KEYS if k.name in values and k.param in params}
    if defaults:
        ctx.default_map = {**(ctx.default_map or {}), **defaults}
    if "pager" in values:
        from logsleuth.render import pager

        pager.CONFIGURED = values["pager"]
    return value


def _own_config() -> Path:
    xdg = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(xdg) / "logsleuth" / "config.toml"


def trusted_dirs() -> list[Path]:
    """The directories the user's own config trusts (its ``trust`` list); none when it has none or
    cannot be read (a broken own config is reported when it is the one in use)."""
    own = _own_config()
    try:
        if not own.is_file():
            return []
        vals = load(own)
    except LogsleuthError:
        return []
    return [Path(p).resolve() for p in vals.get("trust", [])]


def _distrust(path: Path, values: dict[str, Any]) -> dict[str, Any]:
    """A ./logsleuth.toml found in the current directory (it may have come with a log bundle): its
    pager, packs, ignores and trust list are used only when the file is the user's own (same owner)
    and the directory is in the ``trust`` list of the user's own config; otherwise they are dropped
    with one warning naming the file and what was ignored. The other settings (zones, layouts,
    colours, display) apply and the file is named on stderr, so a reader knows what shaped the run."""
    risky = [k for k in TRUSTED_ONLY if k in values]
    here = path.resolve().parent
    try:
        owner_ok = path.stat().st_uid == os.getuid()
    except (OSError, AttributeError):
        owner_ok = False
    trusted = owner_ok and any(here == d or d in here.parents for d in trusted_dirs())
    from logsleuth.safe import visible

    if risky and not trusted:
        why = "owned by another user" if not owner_ok else f"its directory is not in the trust list of {_own_config()}"
        print(f"logsleuth: warning: {visible(str(path))}: a config file in the current directory ({why}): "
              f"ignored {', '.join(risky)}; to use them, give --config {visible(str(path))} or add {visible(str(here))} to "
              f"trust in {_own_config()}", file=sys.stderr)
        values = {k: v for k, v in values.items() if k not in TRUSTED_ONLY}
    elif values:
        print(f"logsleuth: note: settings from {visible(str(path))} (the current directory): {', '.join(values)}", file=sys.stderr)
    if "trust" in values:
        values = {k: v for k, v in values.items() if k != "trust"}  # a trust list is only read from the user's own config
    return values


def on_no_config_option(ctx, value: bool):
    if value:
        if ctx.params.get("config") is not None and not str(ctx.get_parameter_source("config")).endswith("ENVIRONMENT"):  # --config FILE came first
            raise LogsleuthError("give --config FILE or --no-config, not both")
        ctx.meta["logsleuth.no_config"] = True
    return value


ConfigOpt = Annotated[
    Optional[Path],
    typer.Option("--config", metavar="FILE", is_eager=True, callback=on_config_option, envvar="LOGSLEUTH_CONFIG",
                 help="Read settings from this TOML file instead of ./logsleuth.toml or "
                 "$XDG_CONFIG_HOME/logsleuth/config.toml (see 'logsleuth config')."),
]


NoConfigOpt = Annotated[bool, typer.Option("--no-config", is_eager=True, callback=on_no_config_option, help="Read no config file.")]


def reset() -> None:
    """A new run (the tests call the CLI many times in one process)."""
    global LOADED
    LOADED = Loaded()
    pager = sys.modules.get("logsleuth.render.pager")  # not imported for it
    if pager is not None:
        pager.CONFIGURED = None


# ----------------------------------------------------------------------------- logsleuth config


def effective() -> list[tuple[str, str, str]]:
    """(key, value, where it came from) for every key, as the commands would get it."""
    rows = []
    for k in KEYS:
        env = os.environ.get(k.env) if k.env else None
        if k.env and env is not None and (env != "" or k.kind == "pager"):
            rows.append((k.name, env if env != "" else "(none)", f"environment {k.env}"))
        elif k.name in LOADED.values:
            v = LOADED.values[k.name]
            shown = ", ".join(v) if isinstance(v, list) else (v if v != "" else "(none)")
            rows.append((k.name, shown, str(LOADED.path)))
        elif k.kind == "pager" and os.environ.get("PAGER") is not None:
            rows.append((k.name, os.environ["PAGER"] or "(none)", "environment PAGER"))
        else:
            rows.append((k.name, _default(k), "default"))
    return rows


def _default(k: Key) -> str:
    from logsleuth.ingest.timeparse import local_zone

    return {
        "tz": f"this machine's zone ({local_zone()})",
        "date": "from the file name or its modification time",
        "layout": "detected per file",
        "layout-pattern": "none",
        "patterns": "the built-in packs only",
        "sarama-config": "sarama's defaults",
        "display-tz": "the zone the logs' stamps agree on, else UTC",
        "color": "auto",
        "memory-budget": "64M",
        "engine": "local",
        "scheduler": "$DASK_SCHEDULER_ADDRESS, else a local cluster",
        "workers": "this machine's cores",
        "store": "a temporary directory, removed at the end",
        "split-size": "512M",
        "pager": "less",
        "ignore": "none",
        "trust": "none (a ./logsleuth.toml sets no pager, packs or ignores)",
    }[k.name]


def config(config: ConfigOpt = None, no_config: NoConfigOpt = False) -> None:
    """The effective settings and where each came from (the command line aside): an environment
    variable, the config file, or the default."""
    show()


def show() -> None:
    from logsleuth.safe import visible

    out = lambda s: sys.stdout.write(visible(s, keep_newlines=True))  # noqa: E731
    if LOADED.path is not None:
        out(f"config file: {LOADED.path} ({LOADED.how})\n")
    elif LOADED.looked:
        out(f"config file: none (looked for {', '.join(str(p) for p in LOADED.looked)})\n")
    else:
        out("config file: none (--no-config)\n")
    rows = effective()
    w = max(len(r[0]) for r in rows)
    for name, value, where in rows:
        out(f"{name:<{w}}  {value}  [{where}]\n")
