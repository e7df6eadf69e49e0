"""The events table of a set of inputs: every file read with the matcher's prefilter, matched,
tagged with its file and path, time-filtered, and ordered (time, then file, then line)."""

from __future__ import annotations

import datetime as dt
import fnmatch
import re
import sys
from dataclasses import dataclass, field

import polars as pl

from logsleuth.errors import LogsleuthError

from logsleuth.recognise.matcher import EVENT_COLUMNS, Matcher, categories
from logsleuth.recognise.packs import PackSet, clamped_notes
from logsleuth.ingest.reader import iter_read
from logsleuth.ingest.texts import TextStore
from logsleuth.ingest.inputs import InputReport, ReadOptions


@dataclass
class EventFilter:
    since_text: str | None = None  # absolute or relative (see timeparse.parse_when)
    until_text: str | None = None
    zone: str = "UTC"  # for zone-less absolute times
    auto_zone: bool = False  # no display zone chosen: read them in the zone the logs' stamps are in (logs_zone), when they agree
    zone_chosen: str | None = None  # that zone, once the inputs are read
    logs_zone: str | None = None  # the zone the inputs' stamps agree on (None: they do not, or not read yet)
    events: list[str] = field(default_factory=list)  # names or globs
    systems: list[str] = field(default_factory=list)
    say_copies: bool = False  # a note on stderr for an input skipped as a copy of another (events, timeline: no summary says it)
    since: dt.datetime | None = None  # resolved once the inputs' time span is known
    until: dt.datetime | None = None

    def adopt_zone(self, reports: list[InputReport]) -> None:
        """With ``auto_zone``: the zone the inputs' stamps agree on becomes the one times are read
        and shown in (said by ``zone_chosen``)."""
        self.logs_zone = logs_zone(reports)
        if self.auto_zone and self.zone_chosen is None and self.logs_zone is not None:
            self.zone = self.zone_chosen = self.logs_zone

    def resolve(self, first: dt.datetime | None, last: dt.datetime | None) -> None:
        from logsleuth.ingest.timeparse import parse_when

        if self.since_text:
            self.since = parse_when(self.since_text, self.zone, first, last)
        if self.until_text:
            self.until = parse_when(self.until_text, self.zone, first, last)
        if self.since and self.until and self.since > self.until:
            raise LogsleuthError(f"--since ({self.since:%Y-%m-%d %H:%M:%S} UTC) is after --until ({self.until:%Y-%m-%d %H:%M:%S} UTC)")
        if first is not None and last is not None and ((self.since and self.since > last) or (self.until and self.until < first)):
            raise LogsleuthError(
                f"--since/--until select nothing: the logs run from {first:%Y-%m-%d %H:%M:%S} to {last:%Y-%m-%d %H:%M:%S} UTC" + self._zone_hint()
            )

    def _zone_hint(self) -> str:
        """Which zone a zone-less --since/--until was read in, and how to give another."""
        given = [t for t in (self.since_text, self.until_text) if t and not _RELATIVE_OR_ZONED.search(t)]
        if not given:
            return ""
        from logsleuth.ingest.timeparse import zone_label

        read_in = zone_label(self.zone)
        logs = self.logs_zone
        if logs is not None and zone_label(logs) != read_in:
            return (f" ('{given[0]}' was read in {read_in}, but the logs' stamps are in {zone_label(logs)}: give "
                    f"'{given[0]}{offset_of(logs, self.since or self.until)}' or --display-tz {zone_label(logs)})")
        return (f" ('{given[0]}' was read in {read_in}; give the offset the log shows, e.g. '{given[0]}+02:00', "
                "or --display-tz ZONE to read and show times in that zone)")

    def expr(self) -> pl.Expr:
        e = pl.lit(True)
        if self.since is not None:
            e = e & (pl.col("ts") >= self.since)
        if self.until is not None:
            e = e & (pl.col("ts") <= self.until)
        return e

    def check(self, packs: PackSet) -> None:
        """An --event or --system that no pack can produce is a typo: say so (exit 2), rather than
        answer "no events"."""
        events = sorted({p.event for p in packs.patterns})
        for w in self.events:
            if not any(fnmatch.fnmatchcase(e, w) for e in events):
                close = [e for e in events if w.strip("*").lower() in e.lower()][:6]
                hint = f" (did you mean {', '.join(close)}?)" if close else " (see 'logsleuth patterns list')"
                raise LogsleuthError(f"--event {w!r}: no pattern emits such an event{hint}")
        systems = {p.system for p in packs.patterns} | {p.pack for p in packs.patterns}
        for w in self.systems:
            if w not in systems:
                raise LogsleuthError(f"--system {w!r}: unknown (known: {', '.join(sorted(systems))})")

    def keep_names(self, names: list[str], wanted: list[str]) -> list[str]:
        return [n for n in names if any(fnmatch.fnmatchcase(n, w) for w in wanted)]


@dataclass
class EventSet:
    events: pl.DataFrame  # no ``raw`` column when ``texts`` holds it (texts.with_raw puts it back on the rows that need it)
    inputs: list[InputReport]
    files: list[str]
    texts: TextStore | None = None

    @property
    def span(self) -> tuple[dt.datetime | None, dt.datetime | None]:
        firsts = [r.first_ts for r in self.inputs if r.first_ts is not None]
        lasts = [r.last_ts for r in self.inputs if r.last_ts is not None]
        return (min(firsts) if firsts else None, max(lasts) if lasts else None)


TIME_ORDER = ["ts", "file", "line"]


def in_time_order(held: list[pl.DataFrame]) -> pl.DataFrame:
    """The events table taken out of ``held`` (a one-item list: the caller hands the table over and
    keeps no reference to it), sorted by time, then file (as read), then line; ties keep their order.

    A table already in that order (one log, or logs read in time order) is returned as it is. The
    hand-over matters: with the caller still holding the unsorted table, two logs of 0.7M events
    peaked at 1,056 MB instead of 862 (memory in use, jemalloc decay 0). Putting the columns in
    order one at a time instead of one sort was measured too, and saved nothing (848-864 MB)."""
    events = held.pop()
    if events.height < 2:
        return events
    from logsleuth.recognise.spill import LazyTable, time_order

    if isinstance(events, LazyTable):
        return time_order(events, TIME_ORDER)
    order = events.select(pl.arg_sort_by(TIME_ORDER, nulls_last=True, maintain_order=True)).to_series()
    if order.is_sorted():  # a permutation in ascending order is the identity
        return events
    return events.sort(TIME_ORDER, nulls_last=True, maintain_order=True)


def file_enum(names: list[str]) -> pl.Enum:
    """The dtype of the events' ``file`` column: the input names, sorting in this order."""
    return pl.Enum(list(dict.fromkeys(names)))


_RELATIVE_OR_ZONED = re.compile(r"(?:Z|UTC|GMT|[+-]\d\d:?\d\d|\bago|^\s*[+-]|now|today|yesterday|day\b)\s*$|^\s*[+-]\d", re.IGNORECASE)
_OFFSET = re.compile(r"(?:^|[\d\s.,\]])(Z|UTC|GMT|[+-]\d\d:?\d\d)\]?\s*$")


def offset_of(zone: str, at: dt.datetime | None) -> str:
    """'+02:00': the zone's offset at a time (now when None)."""
    import zoneinfo

    t = (at or dt.datetime.now(dt.timezone.utc)).astimezone(zoneinfo.ZoneInfo(zone))
    off = t.utcoffset() or dt.timedelta(0)
    mins = int(off.total_seconds() // 60)
    return f"{'+' if mins >= 0 else '-'}{abs(mins) // 60:02d}:{abs(mins) % 60:02d}"


def stamp_zone(rep: InputReport) -> str | None:
    """The zone one input's stamps are written in, as a zone name ``clock.set_zone`` takes: the
    offset the stamps carry (``+02:00`` -> ``Etc/GMT-2``; ``Z`` -> ``UTC``), or the zone zone-less
    stamps were read in; ``?`` when it is not one zone (offsets that change, half-hour ones) and
    None for an input without times."""
    if rep.first_ts is None or not rep.zone or rep.zone == "n/a":
        return None
    if rep.zone.startswith("from the stamps"):
        found = set()
        for stamp in (rep.first_stamp, rep.last_stamp):
            if not stamp:
                continue
            if re.fullmatch(r"\s*\d+(?:\.\d+)?\s*", stamp):  # epoch seconds or milliseconds: UTC
                found.add("UTC")
                continue
            m = _OFFSET.search(stamp)
            found.add(m.group(1) if m else "?")
        if len(found) != 1:
            return "?"
        off = found.pop()
        if off in ("Z", "UTC", "GMT", "+00:00", "-00:00", "+0000", "-0000"):
            return "UTC"
        if off == "?" or off[-2:] != "00":
            return "?"
        hours = int(off[1:3])
        return f"Etc/GMT{'-' if off[0] == '+' else '+'}{hours}"
    return rep.zone.split(" (", 1)[0].strip() or "?"


def logs_zone(reports: list[InputReport]) -> str | None:
    """The zone every input's stamps are in, when they agree (None otherwise): what people read
    times in when they did not choose a display zone (docs/cli.md)."""
    zones = {z for z in (stamp_zone(r) for r in reports if not r.skipped_input) if z is not None}
    if len(zones) != 1 or "?" in zones:
        return None
    z = zones.pop()
    from logsleuth.ingest.timeparse import check_zone

    try:
        return check_zone(z)
    except LogsleuthError:
        return None


class WrongInputWatch:
    """Says once on stderr, early, when what is being read does not look like broker or client logs
    at all (``analyze /etc/``): after WRONG_INPUTS inputs or WRONG_BYTES bytes without one event."""

    WRONG_INPUTS = 50
    WRONG_BYTES = 100 * 1024 * 1024

    def __init__(self) -> None:
        self.inputs = 0
        self.bytes = 0
        self.events = 0
        self.said = False

    def saw(self, rep: InputReport, events: int) -> None:
        self.inputs += 1
        self.bytes += rep.stats.bytes_text or rep.stats.bytes_read
        self.events += events
        if self.said or self.events or (self.inputs < self.WRONG_INPUTS and self.bytes < self.WRONG_BYTES):
            return
        self.said = True
        from logsleuth.safe import visible

        mb = self.bytes / (1024 * 1024)
        print(f"logsleuth: note: none of the {self.inputs} inputs read so far ({mb:,.0f} MB, the last {visible(rep.name)}) holds a "
              "line logsleuth recognises: these do not look like Pulsar, Kafka or sarama logs ('logsleuth inspect PATH' says "
              "what each file is); reading on", file=sys.stderr, flush=True)


def collect(paths: list[str], opts: ReadOptions, packs: PackSet, flt: EventFilter | None = None, templates: bool = False) -> EventSet:
    """``templates``: also count every unrecognised record per template and minute (for "what else
    changed"; costs a full parse of every record)."""
    if flt is not None:
        flt.check(packs)
    from logsleuth.ingest.compiled import required

    required()  # the matcher is compiled only: say so before reading, not as an unreadable input
    matcher = Matcher(packs)
    reduce = None
    if templates:
        from logsleuth.recognise.templates import reducer

        reduce = reducer(matcher)
    from logsleuth.recognise import spill

    budget = spill.Budget(opts.memory_budget)  # the events in memory up to the budget, on disk past it
    frames: list = []  # each input's events: a DataFrame, or a spill.EventsOnDisk
    files: list[str] = []
    reports: list[InputReport] = []
    seen: dict[tuple, str] = {}
    # each chunk's candidate records are matched as it is read; only the events are kept
    # the vocabulary fields no event of a batch has are added once, to the whole table (as
    # constant columns, which take no memory), instead of as a null column in every batch
    def match(records: pl.DataFrame) -> pl.DataFrame:
        return categories(matcher.match(records, complete=False))

    match.constant_columns = tuple(EVENT_COLUMNS)  # type: ignore[attr-defined]  (literals: no copy needed)

    select = matcher.literals()  # the records the reading core parses: those with a line that holds one

    texts = TextStore()  # the events' record texts, out of the table (on disk; see ingest/texts.py)
    wrong = WrongInputWatch()
    for i, (rep, ev) in enumerate(iter_read(paths, opts, select=select, reduce=reduce, process=match, texts=texts, hold=lambda: spill.Holder(budget))):
        files.append(rep.name)
        reports.append(rep)
        wrong.saw(rep, ev.height)
        if copy_of(rep, seen, flt):  # a copy (foo.log and foo.log.bak): counted once
            texts.drop(rep.name)
            del ev
            continue
        rep.events = ev.height
        matched_records = _records_with_events(ev) if ev.height else 0
        rep.unmatched_records = rep.records - matched_records
        # named in spill.finish (on disk: as its parts are read, or rewritten when their times were not final)
        frames.append((ev, dict(file=rep.name, path=rep.name)))
        del ev
    # ``file``: the file a line is in, ordered as the inputs were read (ties in time keep that order);
    # ``path``: the log it belongs to (the same, until analysis groups rotated segments)
    enum = file_enum(files)
    if budget.spill is not None:  # past the budget: the parts aligned, typed and completed one by one
        events = spill.finish(frames, lambda part: matcher.complete(categories(part.with_columns(pl.col("file").cast(enum)))))
        clamped_notes(events, packs, reports)
        held = [events]
        events = None
        events = in_time_order(held)
    else:
        if frames:
            events = spill.finish(frames, lambda table: table)  # one chunk per column, made a column at a time
            clamped_notes(events, packs, reports)  # issue 21: integers wider than 64 bits, clamped
        else:
            events = matcher.empty(pl.DataFrame()).with_columns(file=pl.lit(None, dtype=pl.String), path=pl.lit(None, dtype=pl.String))
        held = [categories(events.with_columns(pl.col("file").cast(enum)))]
        events = None
        events = matcher.complete(in_time_order(held))
    out = EventSet(events, reports, files, texts)
    if flt is not None:
        filtered(out, flt)
    return out


def _records_with_events(ev) -> int:
    """How many records (distinct lines) the events of one input come from. On disk, a part at a
    time: an input's events come in line order, so a record's events are neighbours and the records
    are the changes of line (a hash of every line of a 24M-line log's events was the run's peak);
    should a part not be in line order, the distinct lines of the whole column."""
    from logsleuth.recognise.spill import EventsOnDisk

    if not isinstance(ev, EventsOnDisk):
        return int(ev.select(pl.col("line").n_unique()).item())
    n, last = 0, None
    for part in ev.part_frames(["line"]):
        if part.height == 0:
            continue
        line = part["line"]
        if line.null_count() or not line.is_sorted() or (last is not None and line[0] is not None and line[0] < last):
            return int(ev.select(pl.col("line").n_unique()).item())
        n += int(part.select((pl.col("line") != pl.col("line").shift(1)).fill_null(True).sum()).item())
        if last is not None and line[0] == last:  # the first record of this part is the last of the one before
            n -= 1
        last = line[-1]
    return n


def copy_of(rep: InputReport, seen: dict[tuple, str], flt: EventFilter | None) -> bool:
    """Is this input a copy of one read before it (same fingerprint: foo.log and foo.log.bak)? Then
    it is marked skipped (counted once) and, for ``events`` and ``timeline``, said on stderr."""
    fp = rep.stats.fingerprint
    if fp is not None and fp in seen:
        rep.skipped_input = f"same content as {seen[fp]} (read once)"
        if flt is not None and flt.say_copies:  # events, timeline: a grep user would think both were searched
            from logsleuth.safe import visible

            print(f"logsleuth: note: {visible(rep.name)}: same content as {visible(seen[fp])}, read once", file=sys.stderr)
        rep.reduced = None
        return True
    if fp is not None:
        seen[fp] = rep.name
    return False


def filtered(out: EventSet, flt: EventFilter) -> None:
    """``out``'s events narrowed by --since/--until, --event and --system (their zone chosen from
    the inputs first), and each input's event count made what is left."""
    reports = out.inputs
    events = out.events
    flt.adopt_zone(reports)
    flt.resolve(*out.span)
    if flt.since or flt.until:
        events = events.filter(flt.expr())
    if flt.events:
        events = events.filter(pl.col("event").is_in(flt.keep_names(events["event"].unique().to_list(), flt.events)))
    if flt.systems:
        events = events.filter(pl.col("system").is_in(flt.systems) | pl.col("pack").is_in(flt.systems))
    out.events = events
    # (the column alone: a group_by of the whole table copies every column first)
    counts = dict(events.select("path").group_by("path", maintain_order=True).len().iter_rows()) if events.height else {}
    for rep in out.inputs:
        rep.events = int(counts.get(rep.name, 0))
