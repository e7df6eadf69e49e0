"""What every detector gets and gives.

A detector is a module in ``logsleuth/detectors/`` with a module-level ``DETECTOR`` (a
:class:`Detector`). It reads the events table in a :class:`Context` and returns findings; it never
reads files itself. Detectors are found automatically (see ``detectors/__init__.py``).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import polars as pl

from logsleuth.detectors.finding import Evidence, Finding
from logsleuth.detectors.words import Prose

INT_MAX, INT_MIN = 2**63 - 1, -(2**63)


def sat_sum(expr: pl.Expr) -> pl.Expr:
    """``expr.sum()`` that cannot wrap around: summed in 128 bits, clamped to the Int64 range
    (record counts in logs are untrusted: two near 2^63 must not add up to a negative number)."""
    return expr.cast(pl.Int128).sum().clip(INT_MIN, INT_MAX).cast(pl.Int64)


def sat_mul(a: pl.Expr, b: pl.Expr) -> pl.Expr:
    """``a * b`` for Int64 counts, clamped instead of wrapping around."""
    return (a.cast(pl.Int128) * b.cast(pl.Int128)).clip(INT_MIN, INT_MAX).cast(pl.Int64)
from logsleuth.ingest.coverage import Coverage
from logsleuth.ingest.coverage import compute as compute_coverage
from logsleuth.timeline.links import Links
from logsleuth.ingest.inputs import InputReport, ReadOptions
from logsleuth.safe import visible


def keep(frame: pl.DataFrame, rows: pl.Expr) -> pl.DataFrame:
    """``frame.filter(rows)``, but ``frame`` itself when every row is kept: a filter copies every
    column, and on a log made of one kind of event that is a second copy of the whole table."""
    rows = rows.fill_null(False)
    if frame.height == 0 or frame.select(rows.all()).item():
        return frame
    return frame.filter(rows)


def take(frame: pl.DataFrame, rows: pl.Expr, *columns, **named) -> pl.DataFrame:
    """``frame.filter(rows).select(*columns, **named)`` with only the selected columns filtered (an
    eager filter copies every column of the kept rows before the select drops most of them)."""
    from logsleuth.recognise.spill import _collect

    return _collect(frame.lazy().filter(rows).select(*columns, **named))


def take_for(frame: pl.DataFrame, rows: pl.Expr, keys: pl.DataFrame, *columns, **named) -> pl.DataFrame:
    """``take(frame, rows, *columns, **named)``, only the rows whose values of ``keys``' columns (as
    selected) are those of a row of ``keys`` (nulls equal to nulls), in the table's order: all a join
    or as-of join on those columns with ``keys`` can match, read without holding the others (a
    reconnect storm's hundreds of thousands of creations, for the few producers a detector asks about)."""
    from logsleuth.recognise.spill import _collect

    lf = frame.lazy().filter(rows).select(*columns, **named)
    return _collect(lf.join(keys.lazy().unique(), on=keys.columns, how="semi", nulls_equal=True, maintain_order="left"))


def gather(frame, idx: pl.Series, *exprs: pl.Expr) -> pl.DataFrame:
    """``frame.select(e.gather(idx) for e in exprs)``: rows of ``frame`` by position (repeats and any
    order allowed). On a table on disk (recognise/spill.py) only those rows are read, not the
    columns whole."""
    if isinstance(frame, pl.DataFrame):
        return frame.select([e.gather(idx) for e in exprs])
    from logsleuth.recognise.spill import _collect

    want = idx.cast(pl.UInt32).unique()
    if getattr(frame, "parts", None) is not None and frame.change is None:  # the table on disk: only its parts that hold those rows
        got = frame.at(want.sort()).select("_gi", *exprs)
    else:
        got = _collect(frame.lazy().with_row_index("_gi").filter(pl.col("_gi").is_in(want.implode())).select("_gi", *exprs))
    order = pl.DataFrame({"_gi": idx.cast(pl.UInt32)})
    return order.join(got, on="_gi", how="left", maintain_order="left").drop("_gi")


def rows_at(frame, positions: list[int]) -> dict[int, dict]:
    """{position: ``frame.row(position, named=True)``} for these positions: on a table on disk, one
    read for all of them instead of one per row."""
    if isinstance(frame, pl.DataFrame) or not positions:
        return {i: frame.row(i, named=True) for i in positions}
    idx = pl.Series(sorted(set(positions)), dtype=pl.UInt32)
    got = gather(frame, idx, pl.exclude("_gi"))
    return dict(zip(idx.to_list(), got.iter_rows(named=True)))


@dataclass
class Context:
    events: pl.DataFrame  # every event of every input, ordered by (ts, file, line)
    inputs: list[InputReport]
    options: dict = field(default_factory=dict)  # detector options from the CLI (e.g. sarama_config)
    read_options: ReadOptions | None = None  # how the inputs were read (for records())
    links: Links | None = None  # broker connection -> client log
    logs: dict = field(default_factory=dict)  # rotated log -> its segments, oldest first (rotation.py)
    texts: object = None  # the events' record texts (an ingest.texts.TextStore; the table has no raw column)
    packs: object = None  # the recognise.packs.PackSet the events were matched with (near misses)
    failures: list = field(default_factory=list)  # detectors that raised (facts.DetectorFailure): the others' findings stand
    _records: dict = field(default_factory=dict, repr=False)
    _coverage: dict = field(default_factory=dict, repr=False)
    _merged: dict = field(default_factory=dict, repr=False)
    _memo: dict = field(default_factory=dict, repr=False)

    def memo(self, key, make: Callable):
        """``make()`` once per run for ``key``: what several detectors read from the same log (e.g. the
        sarama client model that sarama.retry-redial-stall and sarama.broker-refused share)."""
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]

    # A log is what the events' ``path`` names: one input, or the rotated segments of one log
    # (``path`` is then its current segment's name, and ``file`` the segment a line is in).

    def segments(self, path: str) -> list[str]:
        """The files of one log, oldest first (just ``[path]`` unless it was rotated)."""
        return list(self.logs.get(path) or [path])

    def coverage(self, path: str) -> Coverage | None:
        """Span, gaps and levels of one log (see logsleuth/coverage.py), all its segments together."""
        if path not in self._coverage:
            rep = self.input(path)
            if rep is None:
                return None
            self._coverage[path] = compute_coverage(rep, self.events.filter(pl.col("path") == path))
        return self._coverage[path]

    def client_of(self, connection: str | None):
        """The client log that made a broker-side connection (a links.Link), if the logs tell."""
        if self.links is None:
            self.links = Links(self.events)
        return self.links.client_of(connection)

    def records(self, path: str) -> pl.DataFrame:
        """Every record of one log (file, line, line_end, ts, level, logger, thread, msg, raw; the
        segments of a rotated log oldest first, ``line`` counted in ``file``), read again on demand
        and cached: for detectors that need the lines no pattern matched (e.g. the application's
        last successful send before a stall). Costs a full read of those files."""
        if path not in self._records:
            from logsleuth.recognise.events import file_enum
            from logsleuth.ingest.reader import read_source
            from logsleuth.ingest import remote
            from logsleuth.ingest.sources import Source

            from logsleuth.ingest.reader import _empty_records

            files = self.segments(path)
            reps = {r.name: r for r in self.inputs}
            frames = []
            for name in files:
                if name == "<stdin>":
                    raise ValueError("records() cannot re-read stdin")
                rep = reps.get(name)
                if remote.is_url(name):  # an object in a store (ingest/remote.py): fetched again
                    src = Source(name, None, remote=remote.Remote(name, None, rep.stats.mtime if rep else None),
                                 storage_options=(self.read_options or ReadOptions()).storage_options)
                    recs, _ = read_source(src, self.read_options or ReadOptions())
                    frames.append(recs.with_columns(file=pl.lit(name).cast(file_enum(files))))
                    continue
                where = Path(name) if Path(name).exists() or rep is None or not rep.location else Path(rep.location)
                if not where.exists():  # an events dir read away from its logs: say what is missing
                    if rep is not None:
                        rep.stats.note(f"cannot read {name} again (not found from here): its lines that are not events are not used")
                    frames.append(_empty_records().with_columns(file=pl.lit(name).cast(file_enum(files))))
                    continue
                recs, _ = read_source(Source(name, where), self.read_options or ReadOptions())
                frames.append(recs.with_columns(file=pl.lit(name).cast(file_enum(files))))
            self._records[path] = frames[0] if len(frames) == 1 else pl.concat(frames, how="diagonal_relaxed")
        return self._records[path]

    def near_misses(self, path: str, events, window: tuple | None = None, limit: int = 5) -> list:
        """Lines of one log that carry the literal text of a pattern emitting one of ``events`` but
        became no event at all (a wording the packs do not know): ``facts.NearMiss`` rows, at most
        ``limit``, in ``window`` (UTC, both ends) when given. Reads the log again (``records``), once
        per run; stdin cannot be read again (none are found there)."""
        from logsleuth.detectors.facts import NearMiss

        pats = [p for p in getattr(self.packs, "patterns", []) if p.event in set(events)]
        lits = sorted({lit for p in pats for lit in p.contains})
        if not lits or "<stdin>" in self.segments(path):
            return []
        try:
            recs = self.records(path)
        except (OSError, ValueError):
            return []
        if recs.height == 0:
            return []
        text = pl.col("msg").fill_null("")
        hit = recs.filter(text.str.contains_any(lits, ascii_case_insensitive=any(p.ignore_case for p in pats)))
        if window is not None and window[0] is not None and window[1] is not None:
            hit = hit.filter(pl.col("ts").is_between(window[0], window[1]))
        if hit.height == 0:
            return []
        known = self.events.filter(pl.col("path") == path).select(pl.col("file").cast(pl.String), "line").unique()
        hit = hit.with_columns(pl.col("file").cast(pl.String)).join(known, on=["file", "line"], how="anti").sort("file", "line")
        return [NearMiss(str(r["file"]), int(r["line"]), r["ts"], (r["raw"] or "").split("\n", 1)[0][:300])
                for r in hit.head(limit).iter_rows(named=True)]

    def with_raw(self, frame: pl.DataFrame) -> pl.DataFrame:
        """``frame`` (rows of the events table) with the ``raw`` text of each row's record."""
        from logsleuth.ingest.texts import with_raw

        return with_raw(frame, self.texts)  # type: ignore[arg-type]

    def of(self, *names: str) -> pl.DataFrame:
        """Events with one of these event names."""
        return self.events.filter(pl.col("event").is_in(list(names)))

    def system(self, system: str) -> pl.DataFrame:
        """The events of one system: the table itself when it holds no other (a filter copies every
        column, which on a log made of one system's events is a second copy of the whole table)."""
        return keep(self.events, pl.col("system") == system)

    def input(self, path: str) -> InputReport | None:
        """What was read of one log. For a rotated log, its current segment's report with the span,
        record counts and coverage sample of all its segments."""
        reps = {r.name: r for r in self.inputs}
        segs = [reps[n] for n in self.segments(path) if n in reps and not reps[n].skipped_input]
        if len(segs) <= 1:
            return reps.get(path)
        if path not in self._merged:
            self._merged[path] = merged(segs, reps.get(path) or segs[-1])
        return self._merged[path]

    def log_inputs(self) -> list[InputReport]:
        """One report per log (rotated segments merged, see ``input``)."""
        grouped = {seg for segs in self.logs.values() for seg in segs}
        out = [r for r in self.inputs if r.name not in grouped]
        return out + [rep for rep in (self.input(log) for log in self.logs) if rep is not None]


def logfmt_message(expr: pl.Expr) -> pl.Expr:
    """A logfmt record's message (logrus' and slog's text formatters print ``msg="..." key=value``;
    those layouts keep the whole so that packs read the fields): the value of ``msg``, unquoted, for a
    detector that reads an application's own words (a line that is not logfmt is as it was)."""
    inner = expr.str.extract(r'^msg="((?:[^"\\]|\\.)*)"', 1)
    bare = expr.str.extract(r"^msg=([^\s\"]\S*)", 1)
    unq = inner.str.replace_all(r"\\n", "\n").str.replace_all(r"\\t", "\t").str.replace_all('\\"', '"', literal=True).str.replace_all("\\\\", "\\", literal=True)
    return pl.coalesce(unq, bare, expr)


def merged(segments: list[InputReport], head: InputReport) -> InputReport:
    """One report for the segments of a rotated log: ``head``'s name, the layout, envelope and zone
    of the segment with the most records (the current segment is often empty right after a
    rotation), and the span, counts and coverage sample of all of them."""
    fullest = max(segments, key=lambda r: r.records) if segments else head
    firsts = [r.first_ts for r in segments if r.first_ts is not None]
    lasts = [r.last_ts for r in segments if r.last_ts is not None]
    samples = [r.coverage for r in segments if r.coverage is not None]
    return dataclasses.replace(
        head,
        layout=fullest.layout,
        envelope=fullest.envelope,
        zone=fullest.zone,
        first_ts=min(firsts) if firsts else None,
        last_ts=max(lasts) if lasts else None,
        records=sum(r.records for r in segments),
        records_without_ts=sum(r.records_without_ts for r in segments),
        events=sum(r.events or 0 for r in segments),
        coverage=pl.concat(samples, how="diagonal_relaxed").sort("ts") if samples else None,
    )


@dataclass(frozen=True)
class Detector:
    id: str
    title: str
    systems: tuple[str, ...]
    run: Callable[[Context], list[Finding]]
    doc: str = ""  # docs/findings/<id>.md
    facts: type | None = None  # the typed facts its verdict reads (a dataclass), once migrated (docs/architecture.md)
    verdict: object = None  # its detectors.verdict.Verdict (the <id>.toml beside the module)


def evidence(row: dict, note: Prose = "") -> Evidence:
    """An evidence line from an events-table row: its file (the segment of a rotated log), first
    line and original text."""
    msg = row.get("msg") or ""
    if "raw" not in row:  # an events-table row: its text is fetched with every other quoted line (resolve_texts)
        return Evidence(path=row.get("file") or row["path"], line=int(row["line"]), text=None, ts=row.get("ts"), note=note, message=msg)
    text = row.get("raw") or ""
    return Evidence(path=row.get("file") or row["path"], line=int(row["line"]), text=text, ts=row.get("ts"), note=note,
                    message=msg if msg != text else "")


def resolve_texts(findings: list[Finding], texts) -> None:
    """The text of every evidence line quoted from an events-table row, read in one pass from
    where the reader kept the events' texts (ingest/texts.py)."""
    from logsleuth.ingest.texts import TextStore

    pending = [e for f in findings for e in f.evidence if e.text is None]
    if not pending:
        return
    found: dict = {}
    if isinstance(texts, TextStore):
        keys = pl.DataFrame({"file": [str(e.path) for e in pending], "line": [int(e.line) for e in pending]},
                            schema={"file": pl.String, "line": pl.Int64})
        found = {(f, n): r for f, n, r in texts.lookup(keys).select("file", "line", "raw").iter_rows()}
    for e in pending:
        e.text = found.get((str(e.path), int(e.line))) or ""
        if e.message == e.text:
            e.message = ""


def segment_of(row: dict) -> str | None:
    """The file of a row when it is a segment of a rotated log other than the log's path, else None."""
    f = row.get("file")
    return str(f) if f and f != row.get("path") else None


def line_ref(row: dict) -> str:
    """'line N' of a row, naming its file when that is a segment of a rotated log (not its path)."""
    f = segment_of(row)
    return f"line {row['line']}" if f is None else f"{Path(f).name} line {row['line']}"


def rows(df: pl.DataFrame) -> list[dict]:
    return list(df.iter_rows(named=True))


# Polars types a scalar result (Series.min() / .max() / .first() / .item(), series[i]) as any value a
# column of any dtype could give; these say what the column holds, checked where the value leaves Polars.

def time_of(v: object) -> dt.datetime | None:
    """A scalar of a Datetime column: a datetime, or None (null, or an empty series)."""
    if v is None or isinstance(v, dt.datetime):
        return v
    raise TypeError(f"a datetime was expected, not {type(v).__name__}")


def number_of(v: object) -> int | float:
    """A scalar of a numeric column that has a value (a non-empty series with no nulls, say)."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return v
    raise TypeError(f"a number was expected, not {type(v).__name__}")


def str_of(v: object) -> str | None:
    """A scalar of a String column: a str, or None."""
    if v is None or isinstance(v, str):
        return v
    raise TypeError(f"a str was expected, not {type(v).__name__}")


def plural(n: int, one: str, many: str | None = None) -> str:
    """'1 batch', '3 batches' (``many`` when the plural is not ``one`` + 's')."""
    return f"{n} {one if n == 1 else (many or one + 's')}"


def ordered_evidence(evid: list[Evidence], once: bool = True) -> list[Evidence]:
    """A finding's evidence in time order (lines without a time last), each file line once (or,
    ``once=False``, as often as it was quoted: one JSON line can hold a record and its stack trace,
    each quoted for its own reason)."""
    seen: set = set()
    out = []
    for e in sorted(evid, key=lambda e: (e.ts is None, e.ts, e.path, e.line)):
        if not once or (e.path, e.line) not in seen:
            seen.add((e.path, e.line))
            out.append(e)
    return out


def fmt_duration(seconds: float | None) -> str:
    if seconds is None:
        return "unknown"
    s = float(seconds)
    if s < 1:
        return f"{s * 1000:.0f} ms"
    if s < 120:
        return f"{s:.1f} s"
    if s < 7200:
        return f"{s / 60:.1f} min"
    if s < 172800:
        return f"{s / 3600:.1f} h"
    return f"{s / 86400:.1f} days"


def safe(text: str | None) -> str:
    """Log-derived text placed inside a finding's prose."""
    return visible(text or "")
