"""Layouts: the built-in ones (data in ``patterns/layouts.toml``) and user-given conversion patterns."""

from __future__ import annotations

import re
import threading
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from logsleuth.cache import parsed_toml
from logsleuth.errors import PackError, PatternError
from logsleuth.ingest.timeparse import TimeSpec
from logsleuth.resources import patterns_dir

LEVELS = {
    "I": "INFO", "W": "WARN", "E": "ERROR", "F": "FATAL", "D": "DEBUG", "T": "TRACE",
    "WARNING": "WARN", "ERR": "ERROR", "CRITICAL": "FATAL", "CRIT": "FATAL", "PANIC": "FATAL",
    "DPANIC": "FATAL", "SEVERE": "ERROR", "FINE": "DEBUG", "FINER": "TRACE", "FINEST": "TRACE",
    "NOTICE": "INFO", "INFORMATION": "INFO", "EMERG": "FATAL", "ALERT": "FATAL",
    # logrus on a terminal prints the first four letters; zerolog's console the first three
    "ERRO": "ERROR", "DEBU": "DEBUG", "TRAC": "TRACE", "PANI": "FATAL", "FATA": "FATAL",
    "INF": "INFO", "WRN": "WARN", "DBG": "DEBUG", "TRC": "TRACE", "FTL": "FATAL", "PNC": "FATAL",
}

# every word a layout's level column may hold (upper-cased): a column with another word in it is not a level
KNOWN_LEVELS = frozenset(LEVELS) | frozenset(LEVELS.values()) | {"TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL", "CONFIG", "VERBOSE", "ALL", "OFF"}

FALLBACK_ID = "message-only"


@dataclass(frozen=True)
class Sample:
    line: str
    expect: dict


@dataclass(frozen=True)
class Layout:
    id: str
    description: str
    regex: str
    start_regex: str
    fields: tuple[str, ...]
    time: TimeSpec | None
    conversion: str | None = None
    samples: tuple[Sample, ...] = field(default_factory=tuple)
    tail_regex: str | None = ""  # after the message, without "$"; None: cannot split (use the full regex)
    inferred: bool = False  # an ad-hoc layout from the file's stamps (layouts/infer.py), not a catalogued one

    @property
    def specificity(self) -> int:
        """How much of a line the layout pins down: used to break ties in detection. An MDC value
        (``%X{key}``, field ``mdc_*``) pins nothing — it is free text, and counting it let a layout
        with one win ties by reading part of the message as its MDC (a Pulsar client's
        ``L:/10.0.0.1:5 - R:…`` split at its ``-``)."""
        n = len([f for f in self.fields if f != "msg" and not f.startswith("mdc_")])
        if self.time is not None:
            n += 1 + int(self.time.has_date)
        return n

    @property
    def is_fallback(self) -> bool:
        return self.start_regex in ("", "^")

    @property
    def head_capture(self) -> str:
        """The start regex with the whole match captured as ``_head`` (its length is where the message starts)."""
        body = self.start_regex[1:] if self.start_regex.startswith("^") else self.start_regex
        return f"^(?P<_head>{body})"

    @property
    def ts_regex(self) -> str:
        """The shortest prefix of the start regex that still captures ``ts`` (cheap to run on every line)."""
        return _prefix_through_group(self.start_regex, "ts") or self.regex


def _prefix_through_group(regex: str, name: str) -> str | None:
    i = regex.find(f"(?P<{name}>")
    if i < 0:
        return None
    depth = 0
    j = i
    in_class = False
    while j < len(regex):
        c = regex[j]
        if c == "\\":
            j += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                prefix = regex[: j + 1]
                # a group opened before ts and still open (e.g. "^(?:(?P<ts>...)"): close it
                return prefix + ")" * _open_groups(prefix)
        j += 1
    return None


def _open_groups(regex: str) -> int:
    depth = 0
    j = 0
    in_class = False
    while j < len(regex):
        c = regex[j]
        if c == "\\":
            j += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        j += 1
    return depth


def _compile(pattern: str) -> dict:
    from dataclasses import asdict

    from logsleuth.ingest.layouts.convpattern import compile_pattern

    c = compile_pattern(pattern)
    return {
        "regex": c.regex,
        "start_regex": c.start_regex,
        "fields": list(c.fields),
        "tail_regex": c.tail_regex,
        "time": asdict(c.time) if c.time is not None else None,
    }


def from_conversion(pattern: str, id: str = "custom", description: str = "", cached: bool = False) -> Layout:
    """A layout from a log4j/logback conversion pattern (``cached``: remember the compiled form
    on disk, for the built-in layouts that every run loads)."""
    if cached:
        from logsleuth.cache import memo

        c = memo("layout", pattern, lambda: _compile(pattern),
                 "logsleuth.ingest.layouts.convpattern", "logsleuth.ingest.layouts.datefmt", "logsleuth.ingest.timeparse", "logsleuth.ingest.layouts.catalog")
    else:
        c = _compile(pattern)
    t = c["time"]
    time = None
    if t is not None:
        t = dict(t)
        t["normalize"] = tuple(tuple(x) for x in t["normalize"])
        time = TimeSpec(**t)
    return Layout(
        id=id,
        description=description or f"conversion pattern {pattern!r}",
        regex=c["regex"],
        start_regex=c["start_regex"],
        fields=tuple(c["fields"]),
        time=time,
        conversion=pattern,
        tail_regex=c["tail_regex"],
    )


def _from_regex(entry: dict, where: str) -> Layout:
    regex = entry["regex"]
    try:
        cre = re.compile(regex)
    except re.error as e:
        raise PackError(f"{where}: bad regex: {e}") from None
    fields = tuple(cre.groupindex)
    if "msg" not in fields:
        raise PackError(f"{where}: the regex must have a (?P<msg>...) group")
    start = entry.get("start")
    i = regex.index("(?P<msg>")
    if start is None:
        start = regex[:i]
    tail: str | None = None
    for body in ("(?P<msg>.*)", "(?P<msg>.*?)"):
        if regex[i:].startswith(body):
            rest = regex[i + len(body):]
            tail = rest[:-1] if rest.endswith("$") else None
            break
    time = None
    if "ts" in fields:
        t = entry.get("time", {})
        if "format" not in t and "epoch" not in t:
            raise PackError(f"{where}: a layout with a ts group needs [time] format")
        time = TimeSpec(
            fmt=t.get("format", ""),
            has_date=t.get("has_date", True),
            has_year=t.get("has_year", True),
            has_zone=t.get("has_zone", False),
            zone=t.get("zone"),
            epoch=t.get("epoch"),
            normalize=tuple(tuple(x) for x in t.get("normalize", [])),
        )
    return Layout(
        id=entry["id"],
        description=entry.get("description", ""),
        regex=regex,
        start_regex=start,
        fields=fields,
        time=time,
        tail_regex=tail,
    )


def load_layouts(path: Path | None = None) -> list[Layout]:
    path = path or patterns_dir() / "layouts.toml"
    try:
        data = parsed_toml(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise PackError(f"{path}: cannot read layouts ({e})") from None
    out: list[Layout] = []
    seen: set[str] = set()
    for i, entry in enumerate(data.get("layout", [])):
        lid = entry.get("id")
        where = f"{path.name}: layout {lid or '#' + str(i + 1)}"
        if not lid:
            raise PackError(f"{where}: missing id")
        if lid in seen:
            raise PackError(f"{where}: duplicate id")
        seen.add(lid)
        try:
            if "conversion" in entry:
                lay = from_conversion(entry["conversion"], lid, entry.get("description", ""), cached=True)
            elif "regex" in entry:
                lay = _from_regex(entry, where)
            else:
                raise PackError(f"{where}: needs 'conversion' or 'regex'")
        except PatternError as e:
            raise PackError(f"{where}: {e}") from None
        samples = tuple(Sample(s["line"], {k: v for k, v in s.items() if k != "line"}) for s in entry.get("sample", []))
        if not samples:
            raise PackError(f"{where}: every layout needs at least one sample")
        out.append(
            Layout(lay.id, lay.description, lay.regex, lay.start_regex, lay.fields, lay.time, lay.conversion, samples, lay.tail_regex)
        )
    if not any(lay.is_fallback for lay in out):
        raise PackError(f"{path.name}: the message-only fallback layout is missing")
    return out


def load_record_starts(path: Path | None = None) -> tuple[str, ...]:
    """``[[record_start]]`` of layouts.toml: lines that begin a record of their own under any
    layout, though they do not begin the way the layout's lines do (Go's test output, four spaces
    and ``name_test.go:N:``, between a program's log lines: indented, so otherwise a continuation).
    Each regex is anchored at the line's start and every sample must match it."""
    path = path or patterns_dir() / "layouts.toml"
    try:
        data = parsed_toml(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise PackError(f"{path}: cannot read layouts ({e})") from None
    out = []
    for i, entry in enumerate(data.get("record_start", [])):
        where = f"{path.name}: record_start {entry.get('id') or '#' + str(i + 1)}"
        regex = entry.get("regex")
        if not isinstance(regex, str) or not regex.startswith("^"):
            raise PackError(f"{where}: needs a regex anchored with ^")
        samples = entry.get("sample") or []
        if not samples:
            raise PackError(f"{where}: needs at least one sample")
        import polars as pl  # the engine the reader runs the regex with (Rust's regex), not Python's re

        try:
            hits = pl.Series([str(x) for x in samples]).str.contains(regex).to_list()
        except pl.exceptions.PolarsError as e:
            raise PackError(f"{where}: bad regex ({str(e).splitlines()[0]})") from None
        for line, hit in zip(samples, hits):
            if not hit:
                raise PackError(f"{where}: sample does not match: {str(line)[:80]!r}")
        out.append(regex)
    return tuple(out)


@lru_cache(maxsize=1)
def record_start_regex() -> str | None:
    """One regex for every ``[[record_start]]`` (None when there are none)."""
    starts = load_record_starts()
    return "|".join(f"(?:{r})" for r in starts) if starts else None


_BUILTIN_LOCK = threading.Lock()


@lru_cache(maxsize=1)
def _builtin_layouts() -> tuple[Layout, ...]:
    return tuple(load_layouts())


def builtin_layouts() -> tuple[Layout, ...]:
    """Loaded once, even when two inputs are read side by side (``lru_cache`` alone would let both
    threads compile them)."""
    with _BUILTIN_LOCK:
        return _builtin_layouts()


def layout_by_id(lid: str) -> Layout:
    for lay in builtin_layouts():
        if lay.id == lid:
            return lay
    known = ", ".join(lay.id for lay in builtin_layouts())
    raise PatternError(f"unknown layout {lid!r} (known: {known})")
