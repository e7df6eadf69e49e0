"""The events table on disk: ``events --format parquet -o DIR`` writes it, ``analyze --events DIR``
reads it back, so matching (per file, anywhere) and correlation (once, over all events) can run
apart. See docs/scale.md.

    DIR/events/system=<system>/part-<n>.parquet   the events table, hive-partitioned by system, in parts of WRITE_ROWS
    DIR/coverage.parquet                          {path, ts, level, n}: each input's coverage table (coverage.py)
    DIR/inputs.json                               each input's report (inputs[] of the JSON contract)
"""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

import polars as pl

from logsleuth import __version__
from logsleuth.errors import LogsleuthError
from logsleuth.safe import json_dumps
from logsleuth.recognise.events import EventSet, file_enum
from logsleuth.recognise.matcher import as_strings, categories
from logsleuth.ingest.inputs import InputReport, input_json
from logsleuth.ingest.stats import ReadStats

FORMAT = "logsleuth-events/1"
WRITE_ROWS = 50_000  # events written per part (with their texts)


# the columns every events table has (the records' and the matcher's); vocabulary fields come after
BASE_SCHEMA: dict[str, pl.DataType] = {
    "line": pl.Int64, "raw": pl.String, "ts_text": pl.String, "level": pl.String, "logger": pl.String,
    "thread": pl.String, "msg": pl.String, "host": pl.String, "line_end": pl.Int64,
    "ts": pl.Datetime("us", "UTC"), "component": pl.String, "pack": pl.String, "pattern": pl.String,
    "event": pl.String, "severity": pl.String, "path": pl.String, "system": pl.String,
}


def parquet_table(events: pl.DataFrame, texts) -> pl.DataFrame:
    """The events table as the Parquet outputs write it (the events directory, ``timeline --format
    parquet``): the texts held apart put back where the reader had them, no ``file`` (``path``
    names the log), categories as plain strings (for any reader)."""
    from logsleuth.ingest.texts import with_raw

    ev = with_raw(events, texts, every=True)
    return as_strings(ev.drop([c for c in ("file",) if c in ev.columns]))


def write(result: EventSet, out: Path) -> int:
    """The events directory, written beside ``out`` and renamed into place when complete (a full
    disk or a killed run leaves no partial directory: logsleuth/atomic.py)."""
    from logsleuth import atomic

    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise LogsleuthError(f"{out}: the directory is not empty (give a new or empty one)")
    with atomic.replacing_dir(out) as tmp:
        (tmp / "events").mkdir(parents=True, exist_ok=True)
        events = result.events
        if events.height == 0:  # no event: a part with no rows still says what the table holds
            d = tmp / "events" / "system=unknown"
            d.mkdir(parents=True, exist_ok=True)
            parquet_table(events, result.texts).drop("system").write_parquet(d / "part-000000.parquet")
        # a slice at a time, its texts put back and written: memory bounded by the slice, not the
        # table (an events table past the memory budget is on disk; all of it with its texts is GBs)
        for n, rows in enumerate(events.iter_slices(WRITE_ROWS)):
            ev = parquet_table(rows, result.texts).with_columns(pl.col("system").fill_null("unknown"))
            for (system,), part in ev.group_by("system", maintain_order=True):
                d = tmp / "events" / f"system={system}"
                d.mkdir(parents=True, exist_ok=True)
                part.drop("system").write_parquet(d / f"part-{n:06d}.parquet")
            del ev, rows
        cov = [r.coverage.with_columns(path=pl.lit(r.name)) for r in result.inputs if r.coverage is not None and r.coverage.height]
        if cov:
            pl.concat(cov, how="vertical_relaxed").write_parquet(tmp / "coverage.parquet")
        doc = {"format": FORMAT, "tool": "logsleuth", "version": __version__, "inputs": [input_json(r) for r in result.inputs]}
        # absolute paths, so that analyze --events DIR run from another directory can read a log
        # again when a detector needs its lines (Context.records)
        doc["locations"] = {r.name: str(Path(r.name).resolve()) for r in result.inputs if r.name != "<stdin>"}
        (tmp / "inputs.json").write_text(json_dumps(doc, indent=2), encoding="utf-8")
    return result.events.height


def _ts(s: object) -> dt.datetime | None:
    if not s:
        return None
    if not isinstance(s, str):
        raise ValueError(f"a time that is not text: {s!r}")
    try:
        return dt.datetime.fromisoformat(s.replace("Z", "+00:00"))
    except ValueError:
        return None  # a stamp Python cannot hold (year 1 written as '1-01-01'): no time


def _bad(store: Path, what: str) -> LogsleuthError:
    from logsleuth.safe import visible

    return LogsleuthError(f"{store}: not a valid events directory ({visible(what)[:300]}); write one with 'events --format parquet -o DIR'")


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


MAX_JSON_BYTES = 256 * 2**20  # inputs.json of a million inputs is far less
MAX_PART_BYTES = 64 * 2**30


def _checked(store: Path, path: Path, limit: int) -> Path:
    """A file of the events directory as untrusted input: a regular file inside the directory (no
    FIFO, device or socket, no symbolic link out of it), no larger than ``limit``."""
    import stat as _stat

    try:
        st = os.stat(path)
        inside = path.resolve().is_relative_to(store.resolve())
    except (OSError, RuntimeError) as e:
        raise _bad(store, f"{path.relative_to(store)}: {getattr(e, 'strerror', None) or e}") from None
    if not inside:
        raise _bad(store, f"{path.relative_to(store)} points outside the directory")
    if not _stat.S_ISREG(st.st_mode):
        raise _bad(store, f"{path.relative_to(store)} is not a regular file")
    if st.st_size > limit:
        raise _bad(store, f"{path.relative_to(store)} is larger than {limit // 2**20} MiB")
    return path


def _no_constant(name: str):
    raise ValueError(f"{name} is not a number JSON allows")


def _parts(store: Path) -> list[tuple[str, pl.LazyFrame]]:
    """Each part of the events table as (system, a lazy scan of it), checked as untrusted files."""
    files = sorted((store / "events").glob("system=*/*.parquet"))
    if not files:
        raise _bad(store, "no events/system=*/part-*.parquet")
    files = [_checked(store, f, MAX_PART_BYTES) for f in files]
    return [(f.parent.name.partition("=")[2], pl.scan_parquet(f, glob=False)) for f in files]


def typed(events: pl.DataFrame, packs, bad) -> pl.DataFrame:
    """The events table read back with the columns and types a fresh one has (a vocabulary field
    the table was written without: nulls); ``bad(what)`` makes the error for a table that is not
    one."""
    expected = dict(BASE_SCHEMA)
    if packs is not None:
        for f in packs.vocabulary:
            expected.setdefault(f, packs.field_type(f))
    fixes = []
    for col, dtype in expected.items():
        have = events.schema.get(col)
        if have is None:
            if col in BASE_SCHEMA and col not in ("line_end", "ts_text", "host", "thread", "logger", "level", "component"):
                raise bad(f"the events table has no column {col!r}")
            fixes.append(pl.lit(None, dtype=dtype).alias(col))  # a field this table was written without
        elif have != dtype:
            fixes.append(pl.col(col).cast(dtype, strict=True))
    if fixes:
        try:
            events = events.with_columns(fixes)
        except Exception as e:
            raise bad(f"a column of the events table has the wrong type: {_first_line(e)}") from None
    return events


def read(store: Path, packs=None, memory_budget: int | None = None) -> EventSet:
    """The events directory ``write`` made, validated: a tampered, truncated or foreign directory is
    one line (exit 2), never an internal error."""
    meta = store / "inputs.json"
    if meta.exists() or meta.is_symlink():
        _checked(store, meta, MAX_JSON_BYTES)
    try:
        doc = json.loads(meta.read_text(encoding="utf-8"), parse_constant=_no_constant)
    except (OSError, ValueError, RecursionError):
        raise LogsleuthError(f"{store}: not an events directory (no readable inputs.json; write one with 'events --format parquet -o DIR')") from None
    if not isinstance(doc, dict):
        raise _bad(store, "inputs.json is not an object")
    if doc.get("format") != FORMAT:
        raise LogsleuthError(f"{store}: events written in format {doc.get('format')!r}, this logsleuth reads {FORMAT!r}")
    parts = _parts(store)
    cov = None
    if (store / "coverage.parquet").exists() or (store / "coverage.parquet").is_symlink():
        _checked(store, store / "coverage.parquet", MAX_PART_BYTES)
        try:
            cov = pl.read_parquet(store / "coverage.parquet", glob=False)
            if not {"path", "ts", "level", "n"} <= set(cov.columns):
                raise ValueError("coverage.parquet lacks path, ts, level or n")
        except Exception as e:
            raise _bad(store, f"coverage.parquet cannot be read: {_first_line(e)}") from None
    inputs: list[InputReport] = []
    listed = doc.get("inputs", [])
    if not isinstance(listed, list):
        raise _bad(store, "inputs is not a list")
    locations = doc.get("locations") or {}
    for i, d in enumerate(listed):
        try:
            rep = _input(d, locations)
        except (TypeError, ValueError, KeyError, AttributeError) as e:
            raise _bad(store, f"input {i + 1} in inputs.json: {_first_line(e)}") from None
        if cov is not None:
            rep.coverage = cov.filter(pl.col("path") == rep.name).drop("path").sort("ts")
        inputs.append(rep)
    return streamed(parts, inputs, packs, memory_budget, lambda what: _bad(store, what))


READ_ROWS = 25_000  # events read back at a time


def streamed(parts: list[tuple[str, pl.LazyFrame]], inputs: list[InputReport], packs, memory_budget: int | None, bad) -> EventSet:
    """The events table read back a slice at a time, as ``collect`` builds it from fresh reads: the
    texts to the text store (on disk), the rest held per input within the memory budget and put on
    disk past it, then ``file`` an enum of the inputs in order and the whole in time order. So
    ``analyze --events DIR`` and a cluster's driver take about the memory a plain run takes, not
    the whole table with its texts. ``parts``: (system, lazy scan) in the order written; ``bad(what)``
    makes the error for a table that is not one (exit 2)."""
    from logsleuth.ingest.reader import concat_aligned
    from logsleuth.ingest.texts import STORED, TextStore
    from logsleuth.recognise import spill
    from logsleuth.recognise.events import in_time_order

    names = [r.name for r in inputs]
    if len(set(names)) != len(names):
        raise bad("an input is listed twice in inputs.json")
    known = set(names)
    budget = spill.Budget(memory_budget)
    texts = TextStore()  # the texts held apart, as for freshly read events (ingest/texts.py)
    holders: dict[str | None, spill.Holder] = {}
    sinks: dict[str, object] = {}
    for system, lf in parts:
        try:
            n = int(lf.select(pl.len()).collect().item())
            slices = [lf.slice(at, READ_ROWS).collect() for at in range(0, n, READ_ROWS)] if n <= READ_ROWS else None
        except Exception as e:  # a truncated or tampered part: Polars' ComputeError, OSError, ...
            raise bad(f"a part of the events table cannot be read: {_first_line(e)}") from None
        for at in range(0, n, READ_ROWS):
            if slices is not None:
                batch = slices[at // READ_ROWS]
            else:
                try:
                    batch = lf.slice(at, READ_ROWS).collect()
                except Exception as e:
                    raise bad(f"a part of the events table cannot be read: {_first_line(e)}") from None
            batch = typed(batch.with_columns(system=pl.lit(system)), packs, bad)
            if batch["event"].null_count():
                raise bad("an event without a name in the events table")
            batch = batch.select(["system"] + [c for c in batch.columns if c != "system"])
            for (path,), rows in batch.group_by("path", maintain_order=True):
                name = path if path in known else None
                if name is not None:
                    if name not in sinks:
                        sinks[name] = texts.sink(name)
                    sinks[name](rows.select("line", *STORED))  # type: ignore[operator]
                if name not in holders:
                    holders[name] = spill.Holder(budget)
                    holders[name].settle = lambda f: f  # its batches are final as they are (typed above)
                holders[name].add(categories(rows.drop(STORED)))
            del batch
    enum = file_enum(names)
    frames: list = []
    for name in [*names, None]:
        h = holders.pop(name, None)
        if not h:
            continue
        named = dict(file=name)
        frames.append((h.view() if h.parts else concat_aligned(h.frames), named))
    if not frames:  # no event: the columns the table was written with
        try:
            written = pl.DataFrame(schema=parts[0][1].collect_schema()) if parts else pl.DataFrame(schema=BASE_SCHEMA).drop("system")
        except Exception as e:  # noqa: BLE001 - a part whose footer cannot be read
            raise bad(f"a part of the events table cannot be read: {_first_line(e)}") from None
        empty = typed(written.with_columns(system=pl.lit(None, dtype=pl.String)), packs, bad)
        empty = empty.select(["system"] + [c for c in empty.columns if c != "system"])
        events = categories(empty.drop(STORED, strict=False).with_columns(file=pl.lit(None, dtype=pl.String).cast(enum)))
    elif budget.spill is not None:  # past the budget: the parts aligned and typed one by one, then put in time order on disk
        events = spill.finish(frames, lambda part: categories(part.with_columns(pl.col("file").cast(enum))))
        events = in_time_order([events])
    else:
        events = spill.finish(frames, lambda table: table)
        events = in_time_order([categories(events.with_columns(pl.col("file").cast(enum)))])
    return EventSet(events, inputs, names, texts)


def _int(d: dict, key: str, default: int = 0) -> int:
    v = d.get(key, default)
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, int):
        raise ValueError(f"{key} is not a whole number: {v!r}")
    return v


def _str(d: dict, key: str, default: str | None = "") -> str | None:
    v = d.get(key, default)
    if v is None:
        return default
    if not isinstance(v, str):
        raise ValueError(f"{key} is not text: {v!r}")
    return v


def _input(d: object, locations: dict) -> InputReport:
    if not isinstance(d, dict):
        raise ValueError("not an object")
    path = _str(d, "path", None)
    if not path:
        raise ValueError("no path")
    notes = d.get("notes", [])
    if not isinstance(notes, list):
        raise ValueError("notes is not a list")
    rate = d.get("layout_match_rate", 0.0)
    if not isinstance(rate, (int, float)):
        raise ValueError(f"layout_match_rate is not a number: {rate!r}")
    st = ReadStats(
        compression=_str(d, "compression", "none"), encoding=_str(d, "encoding", "utf-8"), replaced_bytes=_int(d, "replaced_bytes"),
        line_ending=_str(d, "line_ending", "lf"), lines=_int(d, "lines"), notes=[str(n) for n in notes],
    )
    events = d.get("events")
    rep = InputReport(
        path, st, envelope=_str(d, "envelope", "none"), layout=_str(d, "layout", "") or "",
        layout_rate=float(rate), runner_up=_str(d, "runner_up", None), runner_up_rate=float(d.get("runner_up_match_rate") or 0.0),
        layout_forced=bool(d.get("layout_forced", False)), records=_int(d, "records"), records_without_ts=_int(d, "records_without_ts"),
        first_ts=_ts(d.get("first_ts")), last_ts=_ts(d.get("last_ts")), first_stamp=_str(d, "first_stamp", None), last_stamp=_str(d, "last_stamp", None),
        zone=_str(d, "zone", ""), date_source=_str(d, "date_source", "") or "", rollovers=_int(d, "midnight_rollovers"),
        lines_in_records=_int(d, "lines_in_records"), skipped_lines=_int(d, "skipped_lines"), skipped_input=_str(d, "skipped", None),
        events=_int(d, "events") if events is not None else None,
        unmatched_records=_int(d, "unmatched_records") if d.get("unmatched_records") is not None else None,
    )
    loc = locations.get(path) if isinstance(locations, dict) else None
    rep.location = loc if isinstance(loc, str) else None
    return rep
