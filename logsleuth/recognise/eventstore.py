"""The events table on disk: ``events --format parquet -o DIR`` writes it, ``analyze --events DIR``
reads it back, so matching (per file, anywhere) and correlation (once, over all events) can run
apart. See docs/scale.md.

    DIR/events/system=<system>/part-<n>.parquet   the events table, hive-partitioned by system
    DIR/coverage.parquet                          {path, ts, level, n}: each input's coverage table (coverage.py)
    DIR/inputs.json                               each input's report (inputs[] of the JSON contract)
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import polars as pl

from logsleuth import __version__
from logsleuth.errors import LogsleuthError
from logsleuth.safe import json_dumps
from logsleuth.recognise.events import EventSet, file_enum
from logsleuth.ingest.inputs import InputReport, input_json
from logsleuth.ingest.stats import ReadStats

FORMAT = "logsleuth-events/1"


def write(result: EventSet, out: Path) -> int:
    if out.exists() and any(out.iterdir()):
        raise LogsleuthError(f"{out}: the directory is not empty (give a new or empty one)")
    try:
        (out / "events").mkdir(parents=True, exist_ok=True)
        ev = result.events.drop([c for c in ("file",) if c in result.events.columns])
        ev = ev.with_columns(pl.col("system").fill_null("unknown"))
        for (system,), part in ev.group_by("system", maintain_order=True):
            d = out / "events" / f"system={system}"
            d.mkdir(parents=True, exist_ok=True)
            part.drop("system").write_parquet(d / "part-0.parquet")
        cov = [r.coverage.with_columns(path=pl.lit(r.name)) for r in result.inputs if r.coverage is not None and r.coverage.height]
        if cov:
            pl.concat(cov, how="vertical_relaxed").write_parquet(out / "coverage.parquet")
        doc = {"format": FORMAT, "tool": "logsleuth", "version": __version__, "inputs": [input_json(r) for r in result.inputs]}
        # absolute paths, so that analyze --events DIR run from another directory can read a log
        # again when a detector needs its lines (Context.records)
        doc["locations"] = {r.name: str(Path(r.name).resolve()) for r in result.inputs if r.name != "-"}
        (out / "inputs.json").write_text(json_dumps(doc, indent=2), encoding="utf-8")
    except OSError as e:
        raise LogsleuthError(f"{out}: cannot write ({e.strerror or e})") from None
    return result.events.height


def _ts(s: str | None) -> dt.datetime | None:
    return dt.datetime.fromisoformat(s.replace("Z", "+00:00")) if s else None


def read(store: Path) -> EventSet:
    meta = store / "inputs.json"
    try:
        doc = json.loads(meta.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise LogsleuthError(f"{store}: not an events directory (no readable inputs.json; write one with 'events --format parquet -o DIR')") from None
    if doc.get("format") != FORMAT:
        raise LogsleuthError(f"{store}: events written in format {doc.get('format')!r}, this logsleuth reads {FORMAT!r}")
    files = sorted((store / "events").glob("system=*/*.parquet"))
    if files:
        events = pl.scan_parquet(files, hive_partitioning=True).collect()
    else:
        events = pl.DataFrame()
    cov = pl.read_parquet(store / "coverage.parquet") if (store / "coverage.parquet").exists() else None
    inputs: list[InputReport] = []
    for i, d in enumerate(doc.get("inputs", [])):
        st = ReadStats(
            compression=d.get("compression", "none"), encoding=d.get("encoding", "utf-8"), replaced_bytes=d.get("replaced_bytes", 0),
            line_ending=d.get("line_ending", "lf"), lines=d.get("lines", 0), notes=list(d.get("notes", [])),
        )
        rep = InputReport(
            d["path"], st, envelope=d.get("envelope", "none"), layout=d.get("layout") or "",
            layout_rate=d.get("layout_match_rate", 0.0), runner_up=d.get("runner_up"), runner_up_rate=d.get("runner_up_match_rate", 0.0),
            layout_forced=d.get("layout_forced", False), records=d.get("records", 0), records_without_ts=d.get("records_without_ts", 0),
            first_ts=_ts(d.get("first_ts")), last_ts=_ts(d.get("last_ts")), first_stamp=d.get("first_stamp"), last_stamp=d.get("last_stamp"),
            zone=d.get("zone", ""), date_source=d.get("date_source") or "", rollovers=d.get("midnight_rollovers", 0),
            lines_in_records=d.get("lines_in_records", 0), skipped_lines=d.get("skipped_lines", 0), skipped_input=d.get("skipped"),
            events=d.get("events"), unmatched_records=d.get("unmatched_records"),
        )
        rep.location = (doc.get("locations") or {}).get(rep.name)
        if cov is not None:
            rep.coverage = cov.filter(pl.col("path") == rep.name).drop("path").sort("ts")
        inputs.append(rep)
    names = [r.name for r in inputs]
    if events.height:
        cols = ["system"] + [c for c in events.columns if c != "system"]
        known = pl.when(pl.col("path").is_in(names)).then(pl.col("path"))
        events = events.select(cols).with_columns(file=known.cast(file_enum(names)))
        events = events.sort(["ts", "file", "line"], nulls_last=True, maintain_order=True)
    return EventSet(events, inputs, [r.name for r in inputs])
