"""``logsleuth events`` output: a rich table on a terminal; grep-style ``path:line:text`` when piped;
NDJSON and CSV for programs.

When piped, ``grep`` and ``csv`` keep each line's text as it was (control characters included), the
way ``grep -n`` would print it, and ``ndjson`` escapes what JSON escapes; on a terminal every format
shows control characters as visible escapes (see render/safe.py and docs/robustness.md).
"""

from __future__ import annotations

import json
import sys

import polars as pl
from rich.table import Table
from rich.text import Text

from logsleuth.recognise.packs import PackSet
from logsleuth.render.console import is_terminal, stdout_console
from logsleuth.safe import csv_expr, json_dumps, json_visible, one_line, visible
from logsleuth.ingest.timeparse import iso_utc

BASE = ["path", "line", "line_end", "ts", "system", "component", "event", "pattern", "severity", "level", "logger", "thread", "host"]


def fields_of(row: dict, packs: PackSet) -> dict:
    return {f: row[f] for f in packs.vocabulary if row.get(f) is not None}


def records(events: pl.DataFrame, packs: PackSet) -> list[dict]:
    out = []
    for row in events.iter_rows(named=True):
        d = {k: row.get(k) for k in BASE}
        d["ts"] = iso_utc(row.get("ts"))
        d["text"] = row.get("raw")
        d["message"] = row.get("msg")
        d.update(fields_of(row, packs))
        out.append(d)
    return out


def grep(events: pl.DataFrame) -> None:
    write = sys.stdout.write
    safe = is_terminal()  # a log line must not repaint the analyst's terminal; a pipe gets it as it was
    for path, line, raw in events.select("path", "line", "raw").iter_rows():
        text = f"{path}:{line}:{raw}"
        write((visible(text) if safe else text) + "\n")


def ndjson(events: pl.DataFrame, packs: PackSet) -> None:
    write = sys.stdout.write
    safe = is_terminal()
    for d in records(events, packs):
        text = json_dumps(d, default=str)
        write((json_visible(text) if safe else text) + "\n")


def csv(events: pl.DataFrame, packs: PackSet) -> None:
    present = [f for f in packs.vocabulary if f in events.columns and events[f].null_count() < events.height]
    cols = BASE + ["raw"] + present
    out = events.select([c for c in cols if c in events.columns]).with_columns(
        pl.col("ts").map_elements(iso_utc, return_dtype=pl.String) if events.height else pl.col("ts").cast(pl.String)
    ).rename({"raw": "text"})
    # a cell a spreadsheet would run as a formula (=, +, -, @ first) gets a leading ' (safe.csv_cell)
    out = out.with_columns(csv_expr(c) for c, t in out.schema.items() if t == pl.String)
    text = out.write_csv()
    sys.stdout.write(visible(text, keep_newlines=True) if is_terminal() else text)


def table(events: pl.DataFrame, packs: PackSet, limit: int | None = None) -> None:
    """One row per event: when, where (path:line, wraps rather than cut), what, and the fields with
    the message under them, so the table stays readable in a narrow terminal."""
    con = stdout_console()
    if con.width < 150:
        return _list(con, events, packs, limit)
    t = Table(show_lines=False, box=None, pad_edge=False, header_style="bold", expand=False)
    t.add_column("time (UTC)", no_wrap=True, min_width=23)
    t.add_column("where", overflow="fold", ratio=2)
    t.add_column("event", overflow="fold", min_width=18, ratio=1)
    t.add_column("fields / message", overflow="fold", ratio=4)
    shown = events if limit is None else events.head(limit)
    for row in shown.iter_rows(named=True):
        ts = iso_utc(row["ts"]) or "-"
        detail = Text(" ".join(f"{k}={visible(str(v))}" for k, v in fields_of(row, packs).items()))
        msg = one_line(row["msg"], 200)
        if msg:
            detail.append(("\n" if detail.plain else "") + msg, style="dim")
        t.add_row(
            Text(ts[:23].replace("T", " ")),
            Text(visible(f"{row['path']}:{row['line']}")),
            Text(f"{row['system']}:{row['event']}", style=_style(row["severity"])),
            detail,
        )
    con.print(t)
    if limit is not None and events.height > limit:
        con.print(Text(f"… {events.height - limit:,} more events (use --format ndjson or grep for all)"))


def _list(con, events: pl.DataFrame, packs: PackSet, limit: int | None) -> None:
    """Narrow terminals: each event as a head line (time, event, path:line) and indented details."""
    shown = events if limit is None else events.head(limit)
    for row in shown.iter_rows(named=True):
        head = Text((iso_utc(row["ts"]) or "-")[:23].replace("T", " ") + "  ")
        head.append(f"{row['system']}:{row['event']}", style=_style(row["severity"]))
        head.append("  " + visible(f"{row['path']}:{row['line']}"), style="magenta")
        con.print(head)
        fields = " ".join(f"{k}={visible(str(v))}" for k, v in fields_of(row, packs).items())
        if fields:
            con.print(Text("    " + fields))
        con.print(Text("    " + one_line(row["msg"], 300), style="dim"))
    if limit is not None and events.height > limit:
        con.print(Text(f"… {events.height - limit:,} more events (use --format ndjson or grep for all)"))


def _style(sev: str | None) -> str:
    return {"critical": "bold red", "error": "red", "warning": "yellow", "notice": "cyan"}.get(sev or "", "")
