"""Read one input into records: sources -> envelopes -> layouts -> records, chunk by chunk.

This is the record stream every command starts from. The compiled reading core
(``ingest/compiled.py``, ``rust/``) scans each chunk once: an input's bytes, or the texts of an
input with an envelope once Polars unwrapped them. Memory stays proportional to one chunk plus what
the caller keeps: ``select`` restricts the records that are parsed to those with a line that holds
one of its literals (the event matcher passes its patterns' required literals here), so the lines
of the other records never become a column.
"""

from __future__ import annotations

import datetime as dt
import re
import sys
import threading
from typing import Callable, Iterator

import polars as pl

from logsleuth.ingest import envelopes
from logsleuth.ingest import compiled
from logsleuth.ingest import wrappers as wrap
from logsleuth.ingest.compiled import Chunk, Scanner, TextScanner, compact
from logsleuth.ingest.layouts import infer
from logsleuth.ingest.layouts.catalog import builtin_layouts, record_start_regex
from logsleuth.ingest.layouts.detect import MIN_RATE, SAMPLE_LINES, Detection, detect
from logsleuth.ingest.records import RECORD_SCHEMA, from_parser, parser_args
from logsleuth.ingest.timeparse import stamp_expr
from logsleuth.ingest.sources import RANGE_END, Source, Span, finish_reading, line_chunks, split_chunk, utf8_text
from logsleuth.ingest.encodings import encoding_label
from logsleuth.ingest.stats import ReadStats
from logsleuth.ingest.timeparse import FileClock
from logsleuth.ingest.inputs import InputReport, ReadOptions, _glob_match

# (case-sensitive, ASCII-case-insensitive) literals: the records with a line that holds one are
# selected (the matcher's required literals; none holds a line end or a NUL: compiled.LINE_BREAKERS)
Select = tuple[list[str], list[str]]
COVERAGE_EVERY = 100  # every 100th record is parsed while reading, to find where the log is sparse (coverage)
_PROVISIONAL = pl.coalesce(pl.col("_ts_aware"), pl.col("env_ts"), pl.col("_ts_naive").dt.replace_time_zone("UTC"))
_TIME_COLS = ["_ts_aware", "_ts_naive", "env_ts", "level"]


def concat_aligned(parts: list[pl.DataFrame]) -> pl.DataFrame:
    """``pl.concat(parts, how="diagonal_relaxed")`` as one chunk per column, made one column at a time.

    A diagonal concat of parts whose columns differ (a field only some batches have) gives columns
    of different chunk counts, and Polars rechunks the whole frame (a copy of every column at once)
    at the next ``with_columns``: on a log of 0.7M events that copy was the peak of the run. Here
    the columns are made one chunk each in turn, so the extra memory is one column's copy, not the
    table's. ``parts`` is emptied: the caller hands the parts over."""
    if not parts:
        raise ValueError("concat_aligned: no parts")
    frame = parts[0] if len(parts) == 1 else pl.concat(parts, how="diagonal_relaxed")
    parts.clear()
    for i, n in enumerate(frame.n_chunks("all")):
        if n > 1:
            frame.replace_column(i, frame.to_series(i).rechunk())
    return frame


class _OneBehind:
    """Runs ``fn(item)`` on a daemon thread, one item behind the caller: the next chunk's scan
    overlaps this chunk's parsing and matching (two chunks in flight on the two cores, no
    more), in order, errors raised in the caller."""

    def __init__(self, fn: Callable[[Chunk], None]):
        self.fn = fn
        self.pending = None

    def submit(self, item: Chunk) -> None:
        import queue
        import threading

        self.wait()
        box: queue.Queue = queue.Queue(maxsize=1)

        def run() -> None:
            try:
                self.fn(item)
                box.put((True, None))
            except BaseException as e:  # handed to the caller
                box.put((False, e))

        threading.Thread(target=run, daemon=True, name="logsleuth-chunk").start()
        self.pending = box

    def wait(self) -> None:
        if self.pending is not None:
            ok, err = self.pending.get()
            self.pending = None
            if not ok:
                raise err


# records -> what the caller keeps; a ``constant_columns`` attribute names the string columns of its
# output that hold no text of the input (literals), which need no copy when kept across chunks
Process = Callable[[pl.DataFrame], pl.DataFrame]
PROCESS_ROWS = 20_000  # selected records handed to process at a time (the last batch of an input may be smaller)


def read_source(
    src: Source, opts: ReadOptions, select: Select | None = None, reduce: Callable[[pl.DataFrame], pl.DataFrame] | None = None,
    process: Process | None = None, texts: Callable[[pl.DataFrame], None] | None = None, hold=None,
) -> tuple[pl.DataFrame, InputReport]:
    """All records of ``src`` (or those ``select`` picks, plus the first and last for the time span).

    ``reduce``, when given, sees every record of every chunk (with ``_selected`` and the
    provisional time columns ``_ts_aware``/``_ts_naive``/``env_ts``, which it must keep) and returns
    a small aggregate; the aggregates, with their times made final, land in ``report.reduced``.

    ``process`` (with ``select``): one pass per chunk from candidate records to what the caller
    keeps (the matcher's events): each chunk's selected records are parsed and handed to it at
    once, and only what it returns is kept (with its provisional times made final at the end);
    that is what this returns, instead of records. ``texts`` (with ``process``): each batch's
    ``line`` and ``raw`` go to it (a texts.TextStore sink) instead of staying in what is kept, which
    then has no ``raw`` column. ``hold`` (with ``process``): a recognise.spill.Holder for what
    process returns (in memory while the run's memory budget lasts, on disk past it: what this
    returns is then a spill.EventsOnDisk)."""
    from logsleuth.ingest.coverage import BUCKET as COVERAGE_BUCKET, BUCKET_S as COVERAGE_BUCKET_S, edges

    stats = ReadStats()
    report = InputReport(src.name, stats)
    layouts = list(builtin_layouts())
    det: Detection | None = None
    clock: FileClock | None = None
    rid_base = 0
    parts: list[pl.DataFrame] = []
    keeper = hold if hold is not None and process is not None else None  # process's output past the budget
    settler: _Settler | None = None  # what writes the keeper's parts final (an input whose times are final from the start)
    rparts: list[pl.DataFrame] = []
    cparts: list[pl.DataFrame] = []  # coverage sample: time and level only
    edge_parts: list[pl.DataFrame] = []  # with process: the first and last record of each chunk (the time span)

    pending: list[pl.DataFrame] = []  # with process: selected records not processed yet

    def flush() -> None:
        """The pending records processed at once: a few matcher passes per input instead of one per
        chunk (each pass has a fixed cost per pattern; a sparse log has a few hundred candidates a chunk)."""
        if not pending:
            return
        batch = pending[0] if len(pending) == 1 else pl.concat(pending, how="diagonal_relaxed")
        pending.clear()
        out = process(batch)  # type: ignore[misc]
        if texts is not None and "raw" in out.columns:
            texts(out.select("line", "raw", *(["ts_text"] if "ts_text" in out.columns else [])))
            out = out.drop("raw")  # (ts_text is still needed for the span's stamps; dropped at the end)
        if out.height:
            # (copied even when the batch's strings are the core's own: measured, the events kept as
            # views into the batch's buffers peaked 40 MB higher on a 300k-line storm's events -o)
            out = compact(out, constant=getattr(process, "constant_columns", ()))
            if keeper is not None:
                keeper.add(out)
            else:
                parts.append(out)

    def processed(rec: pl.DataFrame, edge_rids: list[int], owned: bool = False) -> None:
        """A chunk's records parsed: the edges kept for the span, the selected ones processed (in
        batches of at least PROCESS_ROWS records: memory stays bounded by the batch). ``owned``:
        the records' strings are in buffers made for them (the compiled core parsed only these
        records), not views into the chunk's lines: nothing to copy before matching."""
        edge_parts.append(compact(rec.filter(pl.col("rid").is_in(edge_rids))))
        sel = rec.filter(pl.col("_selected")).drop("_selected")
        if sel.height:
            pending.append(sel if owned else compact(sel))
            if sum(x.height for x in pending) >= PROCESS_ROWS:
                flush()

    def timed_edges(every: pl.DataFrame, n_starts: int) -> list[int]:
        """The span's edges among a chunk's records, every one parsed: the first and last records
        with a time (not a line of prose on top), else the chunk's first and last."""
        timed = every.filter(_PROVISIONAL.is_not_null())["rid"]
        return [int(timed.min()), int(timed.max())] if timed.len() else [rid_base, rid_base + n_starts - 1]  # type: ignore[arg-type]

    def coverage_sample(lines, n_starts: int, naive: pl.DataFrame | None) -> tuple[pl.DataFrame, list[int]]:
        """The coverage table of one chunk (coverage.edges) without parsing every record, and the
        chunk's edges for the time span: its first and last records that carry a time. Every
        COVERAGE_EVERY-th record and the chunk's first and last are parsed; where two of them
        are more than a bucket apart (the log is sparse there, or has a hole) every record between
        them is parsed too, and so is every record before the first and after the last of them
        that has a time (a line of prose, a banner or a stack trace without stamps at the top of
        a log: its first record has none). So every occupied minute is seen, every gap longer
        than two buckets is bounded by its true records, and the span by the true first and last
        stamps. ``lines``: the chunk (a :class:`_Compiled`), of which only the records' first
        lines are parsed here."""
        assert det is not None and clock is not None
        rid = pl.col("rid")
        first, last = rid_base, rid_base + n_starts - 1
        picked = (rid % COVERAGE_EVERY == 0) | (rid == first) | (rid == last)
        sample = lines.parsed_heads(picked, naive).select("rid", *_TIME_COLS)
        timed = sample.filter(_PROVISIONAL.is_not_null())["rid"]
        if timed.len() and (timed.min() > first or timed.max() < last):  # the edges have no time
            lo, hi = timed.min(), timed.max()
            outer = lines.parsed_heads(~picked & ((rid < lo) | (rid > hi)), naive)
            if outer.height:
                more = outer.select("rid", *_TIME_COLS)
                sample = pl.concat([sample, more]).sort("rid")
                timed = sample.filter(_PROVISIONAL.is_not_null())["rid"]
                picked = picked | (rid < lo) | (rid > hi)
        edge_rids = [int(timed.min()), int(timed.max())] if timed.len() else [first, last]
        keyed = sample.select("rid", _b=_PROVISIONAL.dt.truncate(COVERAGE_BUCKET)).drop_nulls("_b")
        far = keyed.select(
            "rid", _to=rid.shift(-1), _far=(pl.col("_b").shift(-1) - pl.col("_b")).abs() > pl.duration(seconds=COVERAGE_BUCKET_S)
        ).filter(pl.col("_far"))
        if far.height:  # parse every record inside those stretches
            inside = lines.start_rids().filter(~picked).join_asof(far, on="rid", strategy="backward")
            inside = inside.filter(pl.col("_far").fill_null(False) & (rid < pl.col("_to")))["rid"]
            if inside.len():
                more = lines.parsed_heads(rid.is_in(inside.implode()), naive)
                sample = pl.concat([sample, more.select("rid", *_TIME_COLS)])
        if sample.height > 2_000:  # a sparse stretch: keep the earliest and latest per minute and level
            return compact(edges(sample, _PROVISIONAL, _TIME_COLS)), edge_rids
        return compact(sample.select(*_TIME_COLS, n=pl.lit(1, dtype=pl.Int64))), edge_rids

    def handle(chunk: Chunk) -> None:
        """A chunk the compiled core scanned (its bytes, or an envelope's unwrapped texts): only
        the records asked for are parsed, by the core (every record with ``reduce`` or without
        ``select``); without ``process`` they are kept as they are. Time-only stamps: every
        record's time of day dates it, counting midnights."""
        nonlocal rid_base
        assert det is not None and clock is not None and chunk.rid_base == rid_base
        n_starts = chunk.n_records
        report.records += n_starts
        report.lines_in_records += chunk.lines
        assert scanner is not None and scanner.parser is not None
        naive = None
        if clock.time_only and chunk.tod is not None:
            tod = stamp_expr(pl.col("_tod_text"), det.layout.time, None)[2]  # type: ignore[arg-type]
            starts = chunk.start_rids().with_columns(_tod_text=chunk.tod).select("rid", _tod=tod)
            naive = clock.naive_from_tod(starts).select("rid", "_ts_naive")
            clock.observe_naive(naive)
        view = _Compiled(chunk, scanner.parser, det.layout, clock)
        if select is None:  # every record, kept (no coverage table: it is made from them at the end)
            parts.append(compact(view.records(chunk.start_rids()["rid"], naive).with_columns(_selected=pl.lit(True))))
            rid_base += n_starts
            return
        if reduce is not None:  # every record parsed, the selected ones processed
            every = view.records(chunk.start_rids()["rid"], naive).with_columns(_selected=pl.col("rid").is_in(chunk.wanted.implode()))
            rparts.append(compact(reduce(every)))
            cparts.append(compact(edges(every, _PROVISIONAL, _TIME_COLS)))
            edge_rids = timed_edges(every, n_starts)
            if process is not None:
                processed(every, edge_rids, owned=True)
            else:  # the selected records and the edges kept
                parts.append(compact(every.filter(pl.col("_selected") | pl.col("rid").is_in(edge_rids))))
            rid_base += n_starts
            return
        table, edge_rids = coverage_sample(view, n_starts, naive)
        cparts.append(table)
        if sum(c.height for c in cparts) > 50_000:  # fold the chunks' rows into one table now and then
            cparts[:] = [edges(pl.concat(cparts, how="diagonal_relaxed"), _PROVISIONAL, _TIME_COLS)]
        wanted = chunk.wanted
        keep = pl.concat([wanted, pl.Series("rid", edge_rids, dtype=pl.Int64)]).unique().sort()
        # (raw: without an envelope the text, NUL padding stripped, or with ANSI escapes the line as
        # it is; with an envelope the line as it was before unwrapping, from Chunk.side)
        rec = view.records(keep, naive).with_columns(_selected=pl.col("rid").is_in(wanted.implode()))
        if process is not None:
            processed(rec, edge_rids, owned=True)
        else:  # kept as they are
            parts.append(compact(rec))
        rid_base += n_starts

    def unwrapped(frame: pl.DataFrame) -> pl.DataFrame:
        joined = envelopes.join_partials(frame, det.envelope)
        report.lines_in_records += frame.height - joined.height  # physical lines joined into one
        return envelopes.unwrap(joined, det.envelope, clock.year_hint() if clock is not None else None)

    held: pl.DataFrame | None = None
    fed_last = False  # a range's last record was given to the core: nothing more to feed
    behind = _OneBehind(handle)
    total = src.remote.size if src.remote is not None else src.path.stat().st_size if src.path is not None and src.path.is_file() else None  # type: ignore[attr-defined]
    scanner: Scanner | TextScanner | None = None  # how the compiled core reads this input (decided on its first chunk)
    next_line = 1

    def scanned(text: bytes | memoryview, last: bool = False, counted: bool = True) -> None:
        assert scanner is not None
        chunk, new = scanner.feed(text, last)
        if counted:
            stats.lines += new
        if chunk is not None:
            behind.submit(chunk)

    def to_core(text: bytes | memoryview) -> bool:
        """A chunk's whole lines to the core, and a byte range's edges: the lines before the
        range's first record start are the range before's (counted in the range's lines, not
        read); past the range's end, the lines up to the next record start finish the range's
        last record (read, not counted). True: the range is finished."""
        nonlocal skipping
        assert scanner is not None
        if skipping:
            at, k, total = scanner.first_start(text)
            if at is None:
                stats.lines += total
                return False
            stats.lines += k
            scanner.next_line += k  # (the range's lines are numbered from its first, skipped ones too)
            text, skipping = text[at:], False
        if past_end:
            at, _, _ = scanner.first_start(text)
            scanned(text if at is None else text[:at], counted=False)
            return at is not None
        scanned(text)
        return False

    span = src.span  # one byte range of a big file (sources.Span): its own lines, then up to the next record start
    skipping = span is not None and span.index > 0  # the lines before the range's first record start: the range before's
    past_end = False  # past the range's end: reading on to finish its last record
    chunks = line_chunks(src, stats, opts.chunk_bytes)
    for data, tail in chunks:
        if tail == RANGE_END:
            past_end = True
            if skipping:  # no record starts in this range: every line of it belongs to the range before's last record
                break
            continue
        if opts.progress is not None:
            opts.progress(src.name, stats.bytes_read, total)
        if isinstance(scanner, Scanner):
            if to_core(utf8_text(data, tail, stats, scanner.is_utf8)):
                break
            continue
        raw, transcoded = split_chunk(data, tail, stats)
        n = raw.len()
        if n == 0:
            continue
        frame = pl.DataFrame({"line": pl.int_range(next_line, next_line + n, dtype=pl.Int64, eager=True), "raw": raw})
        next_line += n
        if det is None:
            if span is not None:  # found once on the file's head (cluster.plan), the same for every range
                det = span.detection  # type: ignore[assignment]
            else:
                det = detect(frame["raw"].head(SAMPLE_LINES).to_list(), layouts, opts.layout_for(src.name))
            assert det is not None
            zone, zone_source = opts.zone_for(src.name)
            clock = FileClock(src.name, zone, det.layout.time, opts.date_for(src.name), stats.mtime, zone_source=zone_source)
            if src.follows is not None:
                clock.follows, clock.follows_name = src.follows  # type: ignore[assignment]
            if keeper is not None and not clock.time_only:  # its times final from the start: parts written final
                settler = _Settler(clock, ("rid", "env_ts", "ts_text") if texts is not None else ("rid", "env_ts"))
                keeper.settle = settler
            if span is not None and span.clock is not None:  # where the ranges before left the file's clock
                clock.day, clock.last_tod = span.clock["day"], span.clock["last_tod"]
                clock._shift_days, clock.date_source = span.clock["shift_days"], span.clock["date_source"]
            report.envelope = det.envelope.name
            report.layout = det.layout.id
            report.layout_rate = det.rate
            report.runner_up = det.runner_up.id if det.runner_up else None
            report.runner_up_rate = det.runner_rate
            report.layout_forced = det.forced
            scanner = _scanner(det, clock, select, span)
            if isinstance(scanner, Scanner):  # this chunk's bytes go to the core too (its split served the detection)
                if to_core(transcoded if transcoded is not None else (memoryview(data)[: len(data) - tail] if tail else data)):
                    break
                continue
        if not past_end:
            stats.lines += n
        assert isinstance(scanner, TextScanner)  # (an input without an envelope went to the core as bytes, above)
        if held is not None:  # CRI partial lines that the previous chunk ended with
            frame = pl.concat([held, frame])
        frame, held = envelopes.split_partial_tail(frame, det.envelope)
        lines = unwrapped(frame)  # the unwrapped texts to the core
        if skipping or past_end:
            at = scanner.first_start(lines)
            if skipping:  # the end of the range before's last record: it reads these lines
                if at is None:
                    continue
                lines, skipping = lines.slice(at), False
            elif at is not None:  # the next range's first record: this range's last one is finished
                if (chunk := scanner.feed(lines.head(at), last=True)) is not None:
                    behind.submit(chunk)
                held, fed_last = None, True  # (held partial lines would be the next range's)
                break
        if (chunk := scanner.feed(lines)) is not None:
            behind.submit(chunk)
    if isinstance(scanner, Scanner):
        scanned(b"", last=True)  # the input's last record
    elif isinstance(scanner, TextScanner) and not fed_last:  # the input's last record (with the partial lines it ends with)
        assert det is not None
        if (chunk := scanner.feed(unwrapped(held) if held is not None and held.height else None, last=True)) is not None:
            behind.submit(chunk)
        held = None
    chunks.close()
    if span is None:
        finish_reading(stats)
    else:  # a range's notes on long lines are the whole file's to say (cluster.merge_ranges)
        stats.encoding = encoding_label(stats)
    behind.wait()
    flush()

    if clock is None:  # empty input (or a byte range in which no line starts: a line longer than the range)
        if span is None:
            stats.note("empty input: no lines")
        nothing = _nothing_processed(process) if process is not None else _empty_records()
        return (nothing.drop("raw", "ts_text") if texts is not None and process is not None else nothing), report
    if process is not None:  # what process kept, and the chunks' edge records for the time span
        empty = process(_provisional_records())
        if texts is not None:
            empty = empty.drop("raw", strict=False)
        if keeper is not None and keeper.spill is not None:
            kept = keeper.view()  # on disk: the parts' times made final one part at a time, below
        elif keeper is not None:
            kept = concat_aligned(keeper.frames) if keeper else empty
        else:
            kept = concat_aligned(parts) if parts else empty
        spans = pl.concat(edge_parts, how="diagonal_relaxed") if edge_parts else _provisional_records()
        if isinstance(kept, pl.DataFrame) or not kept.settled or settler is None:
            time_from = _time_sources(pl.concat([kept.select(_TIME_COLS[:3]), spans.select(_TIME_COLS[:3])]))
        else:  # (counted as its parts were written)
            time_from = {k: v + settler.sources[k] for k, v in _time_sources(spans.select(_TIME_COLS[:3])).items()}
        recs = clock.finalize(spans)
        if isinstance(kept, pl.DataFrame):
            out = clock.finalize(kept)
        else:
            out = settler.done(kept) if kept.settled and settler is not None else _finalize_parts(clock, kept)
    else:
        recs = pl.concat(parts, how="vertical_relaxed") if parts else _empty_records().with_columns(_selected=pl.lit(True))
        time_from = _time_sources(recs)
        recs = clock.finalize(recs)
        out = None
    if isinstance(out, pl.DataFrame) and out.height and out["ts"].null_count() < out.height:
        recs = pl.concat([recs.select("ts", "ts_text"), out.select("ts", "ts_text")])
    elif out is not None and not isinstance(out, pl.DataFrame) and out.ends is not None:  # on disk (see _finalize_parts)
        recs = pl.concat([recs.select("ts", "ts_text"), out.ends])
    if clock.out_of_range:  # issue 21: dates outside the range are noted (timeparse.YEAR_MIN..YEAR_MAX)
        stats.note(clock.range_note() or "")
    if rparts:
        report.reduced = clock.finalize(pl.concat(rparts, how="diagonal_relaxed"))
    report.times = dict(zone=clock.describe_zone(), date_source=clock.date_source, rollovers=clock.rollovers,
                        time_only=clock.time_only, time_from=time_from)
    if span is not None and clock.time_only:  # what reader.day_states needs of a range's first pass
        report.times.update(first_tod=clock.first_tod, last_tod=clock.last_tod, day=clock.day, last_naive=clock.last_naive)
    describe_times(report)
    if recs["ts"].null_count() < recs.height:
        first = recs.row(int(recs["ts"].arg_min()), named=True)  # type: ignore[arg-type]
        last = recs.row(int(recs["ts"].arg_max()), named=True)  # type: ignore[arg-type]
        report.first_ts, report.first_stamp = first["ts"], first["ts_text"]
        report.last_ts, report.last_stamp = last["ts"], last["ts_text"]
    # coverage: the chunks' tables (or, every record having been parsed, all records) merged
    # into one row per minute, level and edge (coverage.edges)
    cov = clock.finalize(pl.concat(cparts, how="diagonal_relaxed")) if cparts else recs.select("ts", "level")
    report.coverage = edges(cov, pl.col("ts"), ["ts", "level"]).sort("ts")
    if out is not None:
        # the stamps' texts went to the text store with the records' (texts.STORED): not kept twice
        gone = ("rid", "env_ts", "ts_text") if texts is not None else ("rid", "env_ts")
        recs = out.drop([c for c in gone if c in out.columns]) if isinstance(out, pl.DataFrame) else out.later(gone)
    else:
        recs = recs.filter(pl.col("_selected")).drop("_selected", "rid", "env_ts")
    if select is None:
        report.records_without_ts = int(recs["ts"].null_count())
    report.skipped_lines = stats.lines - report.lines_in_records
    if det is not None and span is None:  # a range's: said once for the whole file (cluster.merge_ranges)
        layout_notes(report, det)
    return recs, report


def describe_times(report: InputReport) -> None:
    """``report.zone``, ``date_source``, ``rollovers`` and ``stamps_from_envelope`` from what the
    clock decided and where the records' times came from (``report.times``)."""
    t = report.times
    time_from = t["time_from"]
    report.zone, report.date_source, report.rollovers = t["zone"], t["date_source"], t["rollovers"]
    # say where the times came from: an envelope's stamp (UTC, full date) beats a zone-less or
    # time-only stamp in the text, so the zone and date guesses did not matter for those records
    if time_from["envelope"] and not time_from["own"]:
        report.stamps_from_envelope = True
        if report.zone == "n/a" or not time_from["aware"]:
            report.zone = "from the envelope's timestamps"
        report.date_source = "the envelope's timestamps" if t["time_only"] else ""
        report.rollovers = 0
    elif time_from["envelope"]:
        if report.zone == "n/a":
            report.zone = "from the envelope's timestamps"
        elif not time_from["aware"]:
            report.zone = f"from the envelope's timestamps; {report.zone} for records without one"
        if report.date_source:
            report.date_source = f"the envelope's timestamps; {report.date_source} for records without one"


def layout_notes(report: InputReport, det: Detection) -> None:
    """The notes on how well the layout read the input (forced but fitting almost no line,
    inferred, none found, few record starts), from the whole input's counts."""
    stats = report.stats
    lay = det.layout
    if det.forced and not lay.is_fallback and stats.lines >= 2 and det.rate < MIN_RATE:
        given = f"--layout-pattern {lay.conversion!r}" if lay.id == "custom" and lay.conversion else f"--layout {lay.id}"
        stats.note(
            f"{given} recognises almost none of these lines (a record starts on {report.records:,} of "
            f"{stats.lines:,} lines), so they were read as {report.records:,} record(s): this input has another "
            f"layout; give a pattern only to the files it fits (--layout-pattern 'GLOB=PATTERN') and let the others be detected"
        )
    elif lay.inferred:
        stamp = lay.id.partition("(")[2].rstrip(")") or "timestamp"
        stats.note(
            f"no built-in layout recognises these lines: they were read with the inferred head (records start at "
            f"lines with a {stamp} stamp near their start, {det.rate:.0%} of the sampled lines; levels and loggers "
            "from each line's head; messages searched in the whole line); for exact fields give the application's "
            "pattern with --layout-pattern '%d{...} [%t] %-5level %logger - %msg%n'"
        )
    elif lay.is_fallback and not det.envelope.outer and not det.envelope.json_time:
        stats.note(
            "no built-in layout recognises these lines, so they were read as plain messages without "
            "timestamps: give the application's pattern with --layout-pattern '%d{...} [%t] %-5level %logger - %msg%n'"
        )
    elif not lay.is_fallback and stats.lines >= 20 and report.records < 0.2 * stats.lines:
        stats.note(
            f"layout {lay.id} starts a record on only {report.records:,} of {stats.lines:,} lines "
            f"(the rest became continuation lines): if that is wrong, give --layout or --layout-pattern"
        )


SPLITTABLE_ENVELOPES_NOT = ("cri",)  # its partial lines are joined across lines: a range could start inside one


def head_detection(src: Source, opts: ReadOptions):
    """The envelope and layout a plain read of ``src`` detects on its head (its first chunk), or
    None when it is not plain text."""
    from logsleuth.ingest.sources import binary_kind

    data, tail, stats = _first_chunk(src, opts)
    if binary_kind(data[:8192]):
        return None
    raw, _ = split_chunk(data, tail, stats)
    return detect(raw.head(SAMPLE_LINES).to_list(), list(builtin_layouts()), opts.layout_for(src.name))


def _first_chunk(src: Source, opts: ReadOptions) -> tuple[bytes, int, ReadStats]:
    stats = ReadStats()
    chunks = line_chunks(src, stats, opts.chunk_bytes)
    try:
        data, tail = next(chunks, (b"", 0))
    finally:
        chunks.close()
    return data, tail, stats


def byte_ranges(src: Source, opts: ReadOptions, size: int, split_size: int) -> list[Span] | str:
    """A big file's byte ranges, each to be read by a task of its own (``--split-size``), or why
    it is read whole: compressed or in a wide encoding (no byte offset is a line start), or a CRI
    envelope (partial lines joined across lines). The envelope and layout are detected here, once,
    on the file's head as a plain read detects them, and forced on every range. (Time-only stamps
    are split too: cluster.split gives the ranges their days, reader.day_states.)"""
    from logsleuth.ingest.sources import Span, binary_kind, not_plain

    probe = Source(src.name, src.path, remote=src.remote, storage_options=src.storage_options, span=Span(0, 0, size, None))
    data, tail, stats = _first_chunk(probe, opts)
    head = data[:65536]
    why = not_plain(head)
    if why is not None:
        return why
    if binary_kind(head[:8192]):
        return "not text"
    raw, _ = split_chunk(data, tail, stats)
    det = detect(raw.head(SAMPLE_LINES).to_list(), list(builtin_layouts()), opts.layout_for(src.name))
    if det.envelope.outer in SPLITTABLE_ENVELOPES_NOT:
        return f"its {det.envelope.outer} envelope joins partial lines"
    n = -(-size // split_size)
    return [Span(k, k * split_size, min(size, (k + 1) * split_size), det) for k in range(n)]


def day_states(src: Source, opts: ReadOptions, spans: list[Span], scans: list[InputReport]) -> list[Span]:
    """The ranges of a file with time-only stamps, each told where the file's clock stands at its
    start: the day and time of the last stamp before it, and the days to add to every provisional
    date (from --date, the file's name, or its modification time dating its last line, as a read
    of the whole file decides). ``scans``: each range's first pass (read from day 0, alone)."""
    from logsleuth.ingest.timeparse import MIDNIGHT_SLACK, ROLLOVER_BACKWARDS

    day, last_tod, last_naive = 0, None, None
    starts = []
    for sc in scans:
        t = sc.times or {}
        starts.append((day, last_tod))
        if t.get("first_tod") is None:  # no stamp in this range: the clock does not move
            continue
        s = t["first_tod"]
        if last_tod is not None:  # the midnight between the range before's last stamp and this one's first
            day += int(last_tod - s > ROLLOVER_BACKWARDS) - int(last_tod < MIDNIGHT_SLACK and s > 86400 - MIDNIGHT_SLACK)
        begin = day
        day, last_tod = begin + t["day"], t["last_tod"]
        if t.get("last_naive") is not None:
            last_naive = t["last_naive"] + dt.timedelta(days=begin)
    stats = scans[0].stats if scans else ReadStats()
    zone, zone_source = opts.zone_for(src.name)
    det = spans[0].detection
    clock = FileClock(src.name, zone, det.layout.time, opts.date_for(src.name), stats.mtime, zone_source=zone_source)  # type: ignore[attr-defined]
    clock.last_naive = last_naive
    shift = clock.shift_days()
    out = []
    for sp, (d, lt) in zip(spans, starts):
        out.append(Span(sp.index, sp.start, sp.end, sp.detection, dict(day=d, last_tod=lt, shift_days=shift, date_source=clock.date_source)))
    return out


def merge_ranges(parts: list[InputReport], det: Detection) -> tuple[InputReport, list[int]]:
    """The report of a file read in byte ranges, from the ranges' reports (in order), as a read of
    the whole file gives it; and the line number each range's first line has in the file, less
    one (what to add to the line numbers each range counted from its own first line)."""
    from logsleuth.ingest.coverage import edges
    from logsleuth.ingest.sources import finish_reading

    first = parts[0]
    bases, at = [], 0
    for r in parts:
        bases.append(at)
        at += r.stats.lines
    st = ReadStats(compression=first.stats.compression, line_ending=first.stats.line_ending, mtime=first.stats.mtime,
                   head_crc=first.stats.head_crc)
    for r in parts:
        s = r.stats
        st.replaced_bytes += s.replaced_bytes
        st.bytes_read += s.bytes_read
        st.bytes_text += s.bytes_text
        st.lines += s.lines
        st.long_lines += s.long_lines
        st.long_line_bytes += s.long_line_bytes
        st._encodings |= s._encodings
        for note in s.notes:
            st.note(note)
    finish_reading(st)
    out = InputReport(first.name, st, envelope=first.envelope, layout=first.layout, layout_rate=first.layout_rate,
                      runner_up=first.runner_up, runner_up_rate=first.runner_up_rate, layout_forced=first.layout_forced)
    for key in ("records", "records_without_ts", "lines_in_records", "skipped_lines"):
        setattr(out, key, sum(getattr(r, key) for r in parts))
    for key in ("events", "unmatched_records"):
        got = [getattr(r, key) for r in parts]
        setattr(out, key, None if any(v is None for v in got) else sum(got))
    timed = [r for r in parts if r.first_ts is not None]
    if timed:  # the earliest and latest records; on a tie the first read, as one read picks them
        lo = min(timed, key=lambda r: r.first_ts)  # type: ignore[arg-type,return-value]
        hi = max(timed, key=lambda r: r.last_ts)  # type: ignore[arg-type,return-value]
        out.first_ts, out.first_stamp, out.last_ts, out.last_stamp = lo.first_ts, lo.first_stamp, hi.last_ts, hi.last_stamp
    times = dict(first.times or {})
    if times:
        times["time_from"] = {k: sum((r.times or {}).get("time_from", {}).get(k, 0) for r in parts) for k in times["time_from"]}
        times["rollovers"] = sum((r.times or {}).get("rollovers", 0) for r in parts)
        out.times = times
        describe_times(out)
    covs = [r.coverage for r in parts if r.coverage is not None and r.coverage.height]
    out.coverage = edges(pl.concat(covs, how="diagonal_relaxed"), pl.col("ts"), ["ts", "level"]).sort("ts") if covs else (
        first.coverage)
    reduced = [r.reduced.with_columns(pl.col("line") + base) for r, base in zip(parts, bases) if r.reduced is not None]
    out.reduced = pl.concat(reduced, how="diagonal_relaxed") if reduced else None
    layout_notes(out, det)
    return out, bases


class _Compiled:
    """A chunk the compiled core scanned, seen as coverage_sample reads it: its records parsed by
    the core (``RecordParser``), the rest in Polars (records.from_parser)."""

    def __init__(self, chunk: Chunk, parser, layout, clock: FileClock):
        self.chunk = chunk
        self.parser = parser
        self.layout = layout
        self.clock = clock

    def start_rids(self) -> pl.DataFrame:
        return self.chunk.start_rids()

    def parsed_heads(self, cond: pl.Expr, naive: pl.DataFrame | None) -> pl.DataFrame:
        rids = self.chunk.start_rids().filter(cond)["rid"]
        return from_parser(self.chunk.parse(self.parser, rids, heads_only=True), self.layout, self.clock, naive)

    def records(self, rids: pl.Series, naive: pl.DataFrame | None = None) -> pl.DataFrame:
        """The records ``rids`` (ascending), assembled."""
        return from_parser(self.chunk.parse(self.parser, rids), self.layout, self.clock, naive)


def _scanner(det: Detection, clock: FileClock, select: Select | None, span: Span | None = None) -> Scanner | TextScanner:
    """The compiled core's scanner for this input: its bytes (:class:`Scanner`: the lines as they
    are or with their ANSI escapes removed) or, with an envelope, the texts Polars unwrapped
    (:class:`TextScanner`); a known layout, an inferred one or the message-only fallback (a
    time-only stamp: the core gives every record's stamp text, for the day's rollovers).
    ``select``: the literals of the lines whose records are wanted (none: every record)."""
    mod = compiled.required()
    literals = select if select is not None else ([], [])  # (no select: every record)
    if any(c in lit for side in literals for lit in side for c in compiled.LINE_BREAKERS):  # (the packs' literals never do)
        raise ValueError("a literal of the prefilter holds a line end or a NUL: it would match across lines")
    lay, env = det.layout, det.envelope
    tod = None
    if clock.time_only:  # the stamp's text on every record's first line (the layout's shortest regex that captures it)
        tod = (lay.ts_regex, re.compile(lay.ts_regex).groupindex.get("ts", 0))
    # a record starts at a line the layout's regex (to its stamp) finds, or one of layouts.toml's
    # [[record_start]], or a line with a dated stamp in its first infer.HEAD_CHARS characters
    # (another component's line interleaved: a record of its own)
    extra = record_start_regex()  # [[record_start]] lines start a record under any layout
    start: str | None
    if lay.is_fallback:  # every line is a record
        start, head = "", None
    elif lay.inferred:  # a stamp in the line's head, the file's shape or any dated one
        start, head = extra, f"(?:{lay.start_regex})|(?:{infer.any_dated_stamp()})"
    else:
        start = lay.ts_regex if "(?P<ts>" in lay.start_regex else lay.start_regex
        start, head = start if extra is None else f"(?:{start})|{extra}", infer.any_dated_stamp()
    if env.is_none:
        ansi = env.ansi  # each line read with its ANSI escapes removed (envelopes.unwrap), raw as it is
        return Scanner(mod, start, head, infer.HEAD_CHARS, literals, mod.RecordParser(*parser_args(lay), ansi=ansi), tod, ansi)
    # an envelope (unwrapped by Polars, the texts scanned by the core): the starts it forces
    forced = None
    if lay.is_fallback and (env.outer or wrap.stamped(env.wrappers)):
        # every line the envelope stamped starts a record; one it did not continues the one before
        start, head, forced = None, None, pl.col("env_ts").is_not_null() | pl.col("env_naive").is_not_null()
    elif env.json_text and (env.json_level or (env.nested is not None and env.nested.json_level)):
        forced = pl.col("env_level").is_not_null()  # a structured logger's object is a record of its own
    first_line = span is None or span.index == 0
    return TextScanner(mod, start, head, infer.HEAD_CHARS, literals, mod.RecordParser(*parser_args(lay)), tod, forced, first_line)


def _time_sources(recs: pl.DataFrame) -> dict[str, int]:
    """How many of these (provisional) records get their time from a stamp with an offset
    (``aware``), from the envelope (``envelope``), or from a zone-less/time-only stamp read in the
    guessed zone and date (``own``); the same precedence as :meth:`FileClock.finalize`."""
    if recs.height == 0 or not {"_ts_aware", "_ts_naive", "env_ts"} <= set(recs.columns):
        return {"aware": 0, "envelope": 0, "own": 0}
    aware, env = pl.col("_ts_aware").is_not_null(), pl.col("env_ts").is_not_null()
    row = recs.select(
        aware=aware.sum(), envelope=(~aware & env).sum(), own=(~aware & ~env & pl.col("_ts_naive").is_not_null()).sum()
    ).row(0, named=True)
    return {k: int(v or 0) for k, v in row.items()}


class _Settler:
    """``Holder.settle`` for an input whose clock is settled from its start (not time-only: no day
    to decide at the end): each batch's times made final as it is written, its provisional and
    ``gone`` columns dropped, and what the reader asks of the parts at the end counted as they
    go (``done``): the stamps out of range, where the times came from, the earliest and latest stamp."""

    def __init__(self, clock: FileClock, gone: tuple[str, ...]):
        self.clock = clock
        self.gone = gone
        self.total = 0
        self.example: str | None = None
        self.sources = {"aware": 0, "envelope": 0, "own": 0}
        self.ends: list[pl.DataFrame] = []

    def __call__(self, frame: pl.DataFrame) -> pl.DataFrame:
        clock = self.clock
        for k, v in _time_sources(frame).items():
            self.sources[k] += v
        state = clock.out_of_range, clock.out_of_range_example
        clock.out_of_range = 0
        final = clock.finalize(frame)
        if clock.out_of_range and self.total == 0:
            self.example = clock.out_of_range_example
        self.total += clock.out_of_range
        clock.out_of_range, clock.out_of_range_example = state
        if "ts_text" in final.columns:  # (made anew from its values: a slice of a text column keeps the batch's buffers alive)
            ends = _ends(final.select("ts", "ts_text"))
            self.ends.append(pl.DataFrame(ends.rows(), schema=ends.schema, orient="row"))
        return final.drop([c for c in self.gone if c in final.columns])

    def done(self, kept):
        """``_finalize_parts`` of the parts written final: the counts made as they were written."""
        clock = self.clock
        if self.total > clock.out_of_range:
            clock.out_of_range, clock.out_of_range_example = self.total, self.example
        kept.ends = _ends(pl.concat(self.ends)) if self.ends else None
        if kept.ends is not None and kept.ends.height == 0:
            kept.ends = None
        return kept


def _ends(final: pl.DataFrame) -> pl.DataFrame:
    """The first of the earliest and the first of the latest (ts, ts_text) row: none when no time."""
    if final["ts"].null_count() == final.height:
        return final.clear()
    return pl.concat([
        final.select([pl.col(c).filter(pl.col("ts") == pl.col("ts").min()).first() for c in ("ts", "ts_text")]),
        final.select([pl.col(c).filter(pl.col("ts") == pl.col("ts").max()).first() for c in ("ts", "ts_text")]),
    ])


def _finalize_parts(clock: FileClock, kept):
    """``clock.finalize`` of events on disk (a recognise.spill.EventsOnDisk), without rewriting them:
    the final times of the parts are worked out here from their time columns only, for what the
    reader needs of them now (the count of stamps out of range, as one call on the whole table
    would count them, and the earliest and latest stamp: ``.ends``); the parts themselves are
    made final when the run's table is put together (``.change``, applied by spill.finish)."""
    counted, example = clock.out_of_range, clock.out_of_range_example
    total = 0
    ends: list[pl.DataFrame] = []
    cols = [c for c in ("_ts_aware", "_ts_naive", "env_ts", "ts_text", "_tod") if c in kept.schema]
    for part in kept.part_frames(cols):
        clock.out_of_range = 0
        final = clock.finalize(part).select("ts", "ts_text")
        if clock.out_of_range and total == 0:
            example = clock.out_of_range_example
        total += clock.out_of_range
        if final["ts"].null_count() < final.height:  # the first of the earliest and the first of the latest
            two = _ends(final)  # (made anew from its values: a slice of a text column keeps the part's buffers alive)
            ends.append(pl.DataFrame(two.rows(), schema=two.schema, orient="row"))
    if total > counted:
        clock.out_of_range, clock.out_of_range_example = total, example
    else:
        clock.out_of_range, clock.out_of_range_example = counted, clock.out_of_range_example
    state = (clock.out_of_range, clock.out_of_range_example)

    def change(part: pl.DataFrame) -> pl.DataFrame:
        out = clock.finalize(part)
        clock.out_of_range, clock.out_of_range_example = state  # counted above, once
        return out

    kept.change = change
    kept.ends = None
    if ends:
        kept.ends = _ends(pl.concat(ends))
    return kept


def _nothing_processed(process: Process) -> pl.DataFrame:
    """What ``process`` gives for no records, with its times made final (an empty or skipped input)."""
    out = FileClock("", "UTC", None).finalize(process(_provisional_records()))
    return out.drop([c for c in ("rid", "env_ts") if c in out.columns])


def _provisional_records() -> pl.DataFrame:
    """No records, with the columns records.from_parser gives (provisional times, before ``finalize``)."""
    schema = dict(RECORD_SCHEMA)
    schema.update(rid=pl.Int64, env_ts=pl.Datetime("us", "UTC"), _ts_aware=pl.Datetime("us", "UTC"), _ts_naive=pl.Datetime("us"))
    return pl.DataFrame(schema=schema)


def _empty_records() -> pl.DataFrame:
    schema = dict(RECORD_SCHEMA)
    schema["ts"] = pl.Datetime("us", "UTC")
    return pl.DataFrame(schema=schema)


def _in_order(fn, items: list, workers: int) -> Iterator:
    """fn(item) for each item, at most ``workers`` at a time on daemon threads, yielded in order.
    With one worker, in this thread (stdin must be read here for Ctrl-C to work)."""
    if workers <= 1:
        for item in items:
            yield fn(item)
        return
    import queue
    import threading

    slots = threading.Semaphore(workers)
    boxes = [queue.Queue(maxsize=1) for _ in items]

    def run() -> None:
        for item, box in zip(items, boxes):
            slots.acquire()

            def work(item=item, box=box) -> None:
                try:
                    box.put((True, fn(item)))
                except BaseException as e:  # handed to the consumer
                    box.put((False, e))

            threading.Thread(target=work, daemon=True, name="logsleuth-input").start()

    threading.Thread(target=run, daemon=True, name="logsleuth-inputs").start()
    for box in boxes:
        ok, value = box.get()
        slots.release()
        if not ok:
            raise value
        yield value


def segments_in_order(sources: list[Source]) -> tuple[list[Source], dict[str, str]]:
    """The inputs with each rotated log's segments oldest first (in the places its segments had among
    the inputs: ``app.log`` given before ``app.log.1`` is read after it), and {segment: the segment
    before it}: a time-only segment without a date of its own continues from where that one ends."""
    from logsleuth.ingest import rotation

    names = [s.name for s in sources if s.error is None and s.span is None]
    sets = rotation.group(names)
    if not sets:
        return sources, {}
    by_name = {s.name: s for s in sources}
    order = {seg: k for segs in sets.values() for k, seg in enumerate(segs)}
    owner = {seg: log for log, segs in sets.items() for seg in segs}
    out = list(sources)
    slots = {log: [i for i, s in enumerate(sources) if owner.get(s.name) == log] for log in sets}
    for log, idx in slots.items():
        for i, seg in zip(idx, sorted((sources[i].name for i in idx), key=lambda n: order[n])):
            out[i] = by_name[seg]
    before = {segs[k]: segs[k - 1] for segs in sets.values() for k in range(1, len(segs))}
    return out, before


def iter_read(
    paths: list[str], opts: ReadOptions, select: Select | None = None, reduce: Callable[[pl.DataFrame], pl.DataFrame] | None = None,
    process: Process | None = None, texts=None, hold=None,
) -> Iterator[tuple[InputReport, pl.DataFrame]]:
    """Every input in order, one at a time (so a caller can reduce each before the next is read).
    A binary or unreadable file found while walking a directory is skipped and reported. One named
    input that cannot be read is an error; among several, it is said on stderr (one line), listed
    as unread and added to ``opts.failed``, and the others are read (as grep and rg do: the caller
    exits 2 at the end). Inputs none of which could be read are an error. ``texts`` (a
    texts.TextStore, with ``process``): the events' texts go there, one sink per input."""
    from logsleuth.errors import LogsleuthError
    from logsleuth.ingest.sources import expand

    sources = expand(list(paths or []), carry_on=len(paths or []) > 1, storage_options=opts.storage_options)
    skipped = 0
    if not opts.one_of_many:
        _warn_unmatched_globs(opts, [s.name for s in sources if s.error is None])
    sources, before = segments_in_order(sources)
    # the end of each segment another segment continues: set once it is read (or failed)
    ended = {name: threading.Event() for name in before.values()}
    last_ts: dict[str, dt.datetime] = {}

    def one(src: Source) -> tuple[InputReport, pl.DataFrame, BaseException | None]:
        try:
            return _one(src)
        finally:
            if src.name in ended:
                ended[src.name].set()

    def _one(src: Source) -> tuple[InputReport, pl.DataFrame, BaseException | None]:
        prev = before.get(src.name)
        if prev is not None:  # read after the segment before it (an earlier input: no deadlock)
            ended[prev].wait()
            if prev in last_ts:
                src.follows = (last_ts[prev], prev)
        try:
            if src.error is not None:
                raise LogsleuthError(src.error)
            recs, rep = read_source(src, opts, select, reduce, process, texts.sink(src.name) if texts is not None else None, hold() if hold else None)
            if rep.last_ts is not None:
                last_ts[src.name] = rep.last_ts
            return rep, recs, None
        except LogsleuthError as e:  # this input only (not there, unreadable, not text, damaged)
            if texts is not None:
                texts.drop(src.name)
            empty = _nothing_processed(process) if process else _empty_records()
            return InputReport(src.name, ReadStats()), (empty.drop("raw", "ts_text") if texts is not None else empty), e

    # two inputs at a time (Polars releases the GIL, so one input's Python steps overlap the other's
    # Polars work on the 2 cores; Polars' own pool is shared, not multiplied); results in order.
    # Daemon threads: Ctrl-C ends the program without waiting for a file to finish.
    results = _in_order(one, sources, 2 if len(sources) > 1 and not any(x.is_stdin for x in sources) else 1)
    for src, (rep, recs, err) in zip(sources, results):
        if err is not None:
            from logsleuth.errors import RunError

            if isinstance(err, RunError) or (len(sources) == 1 and not src.from_directory):
                raise err
            not_read(rep, src.name, src.from_directory, err, opts)
            skipped += 1
        yield rep, recs
    if sources and len(opts.failed) == len(sources) > 1:
        raise LogsleuthError(f"none of the {len(sources)} inputs could be read")
    if sources and skipped == len(sources):
        raise LogsleuthError(f"{', '.join(paths)}: no text logs found (every file was binary or unreadable)")


def not_read(rep: InputReport, name: str, from_directory: bool, err: BaseException, opts: ReadOptions) -> None:
    """One input of several that could not be read: a file found in a directory is skipped (a
    binary file among logs), a named one is said on stderr, listed as unread and counted in
    ``opts.failed`` (exit 2 at the end), as grep and rg do."""
    rep.skipped_input = str(err).split(": ", 1)[-1] if str(err).startswith(name + ": ") else str(err)
    if not from_directory:
        from logsleuth.safe import visible

        rep.unread = True
        opts.failed.append(str(err))
        print(f"logsleuth: error: {visible(str(err))}", file=sys.stderr)


def _warn_unmatched_globs(opts: ReadOptions, names: list[str]) -> None:
    """A GLOB=VALUE of --tz/--date/--layout-pattern that matches no input is a note on stderr
    (not an error: one command line is often reused for several sets of files)."""
    rules: list[tuple[str, str, str]] = [("--tz", p, v) for p, v in opts.tz_rules]
    rules += [("--date", p, str(v)) for p, v in opts.date_rules]
    rules += [("--layout-pattern", p, lay.conversion or lay.id) for p, lay in opts.layout_rules]
    for what, pattern, value in rules:
        if not any(_glob_match(n, pattern) for n in names):
            hint = "it is matched against each input's path as given and its file name"
            if what == "--layout-pattern" and not set(pattern) & set("*?["):
                hint += f"; if '{pattern}={value}' is one pattern for every file, write '*={pattern}={value}'"
            print(f"logsleuth: note: {what} '{pattern}={value}' matches no input ({hint})", file=sys.stderr)


# a select that picks no record (a read for the report, the span and coverage only)
select_nothing: Select = ([], [])


def read_all(
    paths: list[str], opts: ReadOptions, select: Select | None = None, reduce: Callable[[pl.DataFrame], pl.DataFrame] | None = None
) -> list[tuple[InputReport, pl.DataFrame]]:
    """:func:`iter_read`, collected."""
    return list(iter_read(paths, opts, select, reduce))


def inspect_all(paths: list[str], opts: ReadOptions) -> list[InputReport]:
    """``inspect``: every record is parsed and counted, none is kept (memory stays flat)."""

    def no_ts(recs: pl.DataFrame) -> pl.DataFrame:
        missing = pl.col("_ts_aware").is_null() & pl.col("_ts_naive").is_null() & pl.col("env_ts").is_null()
        # provisional times order records like the final ones (one file: one kind of stamp)
        t = pl.coalesce(pl.col("_ts_aware").dt.epoch("us"), pl.col("_ts_naive").dt.epoch("us"), pl.col("env_ts").dt.epoch("us"))
        return recs.select(
            _ts_aware=pl.lit(None, dtype=pl.Datetime("us", "UTC")),
            _ts_naive=pl.lit(None, dtype=pl.Datetime("us")),
            env_ts=pl.lit(None, dtype=pl.Datetime("us", "UTC")),
            no_ts=missing.sum(),
            back=(t < t.forward_fill().shift(1)).sum(),  # earlier than the record before it
            t_first=t.drop_nulls().first(),
            t_last=t.drop_nulls().last(),
        )

    out = []
    for rep, _ in iter_read(paths, opts, select=select_nothing, reduce=no_ts):
        if rep.reduced is not None and rep.reduced.height:
            r = rep.reduced
            rep.records_without_ts = int(r["no_ts"].sum())
            seams = r.select((pl.col("t_first") < pl.col("t_last").forward_fill().shift(1)).sum()).item()
            back = int(r["back"].sum()) + int(seams or 0)
            if back:
                rep.stats.note(f"{back} record(s) have a timestamp earlier than the record before them (out of order)")
        rep.reduced = None
        out.append(rep)
    return out
