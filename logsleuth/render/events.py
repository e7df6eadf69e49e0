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
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from logsleuth.recognise.packs import PackSet
from logsleuth.render import clock
from logsleuth.render.console import color_mode, is_terminal, stdout_console
from logsleuth.safe import json_visible, one_line, visible
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


def grep(events: pl.DataFrame, with_event: bool = False) -> None:
    """``path:line:text`` (``with_event``: ``path:line:event:text``); the path and line coloured as rg
    does when colours are on (a terminal, or --color always)."""
    write = sys.stdout.write
    safe = is_terminal()  # a log line must not repaint the analyst's terminal; a pipe gets it as it was
    color = color_mode() == "always" or (safe and color_mode() == "auto")
    p, n, e, z = ("\x1b[35m", "\x1b[32m", "\x1b[33m", "\x1b[0m") if color else ("", "", "", "")
    for path, line, event, raw in events.select("path", "line", "event", "raw").iter_rows():
        what = f"{e}{event}{z}:" if with_event else ""
        if safe:
            path, raw = visible(str(path)), visible(raw)
        write(f"{p}{path}{z}:{n}{line}{z}:{what}{raw}\n")


def counts(events: pl.DataFrame) -> None:
    """``system:event:N`` per event kind, most first (``events --count``, like ``rg -c``)."""
    if events.height == 0:
        return
    per = events.group_by("system", "event").len().sort(["len", "system", "event"], descending=[True, False, False])
    sys.stdout.write("".join(f"{s}:{e}:{n}\n" for s, e, n in per.iter_rows()))


def names(paths: list[str]) -> None:
    """One input per line (``events --files-with-events``, like ``rg -l``)."""
    safe = is_terminal()
    sys.stdout.write("".join((visible(x) if safe else x) + "\n" for x in paths))


def ndjson(events: pl.DataFrame, packs: PackSet) -> None:
    write = sys.stdout.write
    safe = is_terminal()
    for d in records(events, packs):
        text = json.dumps(d, ensure_ascii=False, default=str)
        write((json_visible(text) if safe else text) + "\n")


def csv(events: pl.DataFrame, packs: PackSet) -> None:
    present = [f for f in packs.vocabulary if f in events.columns and events[f].null_count() < events.height]
    cols = BASE + ["raw"] + present
    out = events.select([c for c in cols if c in events.columns]).with_columns(
        pl.col("ts").map_elements(iso_utc, return_dtype=pl.String) if events.height else pl.col("ts").cast(pl.String)
    ).rename({"raw": "text"})
    text = out.write_csv()
    sys.stdout.write(visible(text, keep_newlines=True) if is_terminal() else text)


def table(events: pl.DataFrame, packs: PackSet, limit: int | None = None) -> None:
    """One row per event: when, where (path:line, wraps rather than cut), what, and the fields with
    the message under them, so the table stays readable in a narrow terminal."""
    con = stdout_console()
    if con.width < 150:
        return _list(con, events, packs, limit)
    t = Table(show_lines=False, box=None, pad_edge=False, header_style="bold", expand=False)
    t.add_column(f"time ({clock.zone_name()})", no_wrap=True, min_width=23)
    t.add_column("where", overflow="fold", ratio=2)
    t.add_column("event", overflow="fold", min_width=18, ratio=1)
    t.add_column("fields / message", overflow="fold", ratio=4)
    shown = events if limit is None else events.head(limit)
    for row in shown.iter_rows(named=True):
        ts = clock.when(row["ts"], ms=True, zone=False, missing="-")
        detail = Text(" ".join(f"{k}={visible(str(v))}" for k, v in fields_of(row, packs).items()))
        msg = one_line(row["msg"], 200)
        if msg:
            detail.append(("\n" if detail.plain else "") + msg, style="dim")
        t.add_row(
            Text(ts),
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
        head = Text(clock.when(row["ts"], ms=True, missing="-") + "  ")
        head.append(f"{row['system']}:{row['event']}", style=_style(row["severity"]))
        where = Text(visible(f"{row['path']}:{row['line']}"), style="magenta")
        if head.cell_len + 2 + where.cell_len <= con.width:
            con.print(head + Text("  ") + where)
        else:  # the path on a line of its own rather than cut by the wrap
            con.print(head)
            con.print(Padding(where, (0, 0, 0, 2)))
        fields = " ".join(f"{k}={visible(str(v))}" for k, v in fields_of(row, packs).items())
        if fields:
            con.print(Padding(Text(fields), (0, 0, 0, 4)))
        con.print(Padding(Text(one_line(row["msg"], 300), style="dim"), (0, 0, 0, 4)))
    if limit is not None and events.height > limit:
        con.print(Text(f"… {events.height - limit:,} more events (use --format ndjson or grep for all)"))


def _style(sev: str | None) -> str:
    return {"critical": "bold red", "error": "red", "warning": "yellow", "notice": "cyan"}.get(sev or "", "")
