"""What reading an input is told (``ReadOptions``: zones, dates, forced layouts per glob) and what it
finds (``InputReport``: envelope, layout, lines, span, notes; ``input_json`` its JSON form)."""

from __future__ import annotations

import datetime as dt
import fnmatch
from dataclasses import dataclass, field
from typing import Callable

import polars as pl

from logsleuth.ingest.layouts.catalog import Layout
from logsleuth.ingest.sources import CHUNK_BYTES
from logsleuth.ingest.stats import ReadStats
from logsleuth.ingest.timeparse import iso_utc, local_zone


@dataclass
class ReadOptions:
    tz: str | None = None  # global zone for zone-less stamps (None: this machine's)
    tz_rules: list[tuple[str, str]] = field(default_factory=list)  # (glob, zone), first match wins
    date: dt.date | None = None
    date_rules: list[tuple[str, dt.date]] = field(default_factory=list)
    layout: Layout | None = None  # forced for every input (--layout, a bare --layout-pattern)
    layout_rules: list[tuple[str, Layout]] = field(default_factory=list)  # --layout-pattern GLOB=PATTERN, first match wins
    chunk_bytes: int = CHUNK_BYTES
    memory_budget: int | None = 64 * 2**20  # bytes of events held in memory; past it they go to disk (recognise/spill.py); None: never
    progress: Callable[[str, int, int | None], None] | None = None  # (input, bytes read, total) after each chunk
    failed: list[str] = field(default_factory=list)  # named inputs that could not be read (said on stderr; exit 2 at the end)
    machine_zone: str | None = None  # "this machine's zone", fixed by the machine that runs the command (a cluster's workers may be elsewhere)
    storage_options: dict = field(default_factory=dict)  # fsspec's options for URL inputs (--storage-option)
    one_of_many: bool = False  # a cluster worker reading one input of the run: the run's notes about all inputs are the driver's to say

    def zone_for(self, name: str) -> tuple[str, str]:
        rule = _rule_for(self.tz_rules, name)
        if rule is not None:
            return rule[1], f"--tz {rule[0]}={rule[1]}"
        if self.tz:
            return self.tz, "--tz"
        return self.machine_zone or local_zone(), "this machine's zone; set --tz"

    def layout_for(self, name: str) -> Layout | None:
        rule = _rule_for(self.layout_rules, name)
        return rule[1] if rule is not None else self.layout

    def date_for(self, name: str) -> dt.date | None:
        rule = _rule_for(self.date_rules, name)
        return rule[1] if rule is not None else self.date


def _rule_for(rules: list, name: str) -> tuple | None:
    """The first (glob, value) rule whose glob matches the input's name."""
    return next(((p, v) for p, v in rules if _glob_match(name, p)), None)


def _glob_match(name: str, pattern: str) -> bool:
    """A GLOB of --tz/--date/--layout-pattern matches the input's name as shown (the path as given,
    or as found under a directory) or its file name; ``*`` also matches '/'."""
    base = name.rsplit("/", 1)[-1]
    return fnmatch.fnmatch(name, pattern) or fnmatch.fnmatch(base, pattern)


@dataclass
class InputReport:
    """What was found in one input: shown by ``inspect`` and in JSON ``inputs``."""

    name: str
    stats: ReadStats
    envelope: str = "none"
    layout: str = ""
    layout_rate: float = 0.0
    runner_up: str | None = None
    runner_up_rate: float = 0.0
    layout_forced: bool = False
    records: int = 0
    records_without_ts: int = 0
    first_ts: dt.datetime | None = None
    last_ts: dt.datetime | None = None
    first_stamp: str | None = None
    last_stamp: str | None = None
    zone: str = ""
    date_source: str = ""
    rollovers: int = 0
    lines_in_records: int = 0
    skipped_lines: int = 0
    stamps_from_envelope: bool = False  # every record's time is the envelope's stamp, not the text's
    skipped_input: str | None = None  # why the input was skipped (a binary file found in a directory)
    unread: bool = False  # a named input that could not be read (missing, unreadable, not text): skipped_input says why
    events: int | None = None  # filled in by the matcher (None: not matched, e.g. inspect)
    unmatched_records: int | None = None  # records no pattern recognised (None: not matched)
    coverage: pl.DataFrame | None = None  # {ts, level, n}: earliest/latest record per minute and level (coverage.edges)
    clock_skew: object | None = None  # logsleuth.skew.Skew, when estimated
    location: str | None = None  # where to read the file again (an events dir read from elsewhere)
    reduced: pl.DataFrame | None = None  # read_source(reduce=...) aggregates (templates)
    times: dict | None = None  # what the clock decided and where the times came from (reader.describe_times)

    @property
    def lines(self) -> int:
        return self.stats.lines


def input_json(rep: InputReport) -> dict:
    """The ``inputs[]`` object of every JSON output."""

    s = rep.stats
    return {
        "path": rep.name,
        "skipped": rep.skipped_input,
        "unread": rep.unread,
        "compression": s.compression,
        "encoding": s.encoding,
        "replaced_bytes": s.replaced_bytes,
        "line_ending": s.line_ending,
        "envelope": rep.envelope,
        "layout": rep.layout or None,
        "layout_match_rate": round(rep.layout_rate, 4),
        "layout_forced": rep.layout_forced,
        "runner_up": rep.runner_up,
        "runner_up_match_rate": round(rep.runner_up_rate, 4),
        "lines": s.lines,
        "records": rep.records,
        "records_without_ts": rep.records_without_ts,
        "lines_in_records": rep.lines_in_records,
        "skipped_lines": rep.skipped_lines,
        "events": rep.events,
        "unmatched_records": rep.unmatched_records,
        "first_ts": iso_utc(rep.first_ts),
        "last_ts": iso_utc(rep.last_ts),
        "first_stamp": rep.first_stamp,
        "last_stamp": rep.last_stamp,
        "zone": rep.zone,
        "clock_skew_s": rep.clock_skew.to_json()["clock_skew_s"] if rep.clock_skew is not None else None,
        "clock_skew_pairs": rep.clock_skew.pairs if rep.clock_skew is not None else None,
        "clock_skew": rep.clock_skew.to_json() if rep.clock_skew is not None else None,
        "date_source": rep.date_source or None,
        "midnight_rollovers": rep.rollovers,
        "notes": list(s.notes),
    }
