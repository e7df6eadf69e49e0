"""``logsleuth timeline`` output: sparklines per event kind with cause markers on a terminal;
``ISO-time path:line:text`` when piped; NDJSON, CSV or Parquet for further analysis."""

from __future__ import annotations

import datetime as dt
import sys

import polars as pl
from rich.table import Table
from rich.text import Text

from logsleuth.render.console import stdout_console
from logsleuth.safe import one_line, visible
from logsleuth.timeline.histogram import Histogram, bucket_label
from logsleuth.ingest.timeparse import iso_utc

BLOCKS = " ▁▂▃▄▅▆▇█"


def spark(series: list[int]) -> str:
    top = max(series) or 1
    return "".join(BLOCKS[0] if v == 0 else BLOCKS[max(1, round(v / top * 8))] for v in series)


def axis(h: Histogram) -> str:
    """Tick labels (HH:MM) every ~12 columns."""
    out = [" "] * h.n
    step = max(12, 1)
    for i in range(0, h.n, step):
        t = h.start + dt.timedelta(seconds=i * h.bucket_s)
        lab = t.strftime("%H:%M") if h.bucket_s < 86400 else t.strftime("%m-%d")
        if i + len(lab) > h.n:  # a label that would be cut is left out
            break
        for j, ch in enumerate(lab):
            out[i + j] = ch
    return "".join(out)


def terminal(h: Histogram | None, events: pl.DataFrame, notes: list[str]) -> None:
    con = stdout_console()
    if h is None:
        con.print(Text("no timestamped events"))
        return
    end = h.start + dt.timedelta(seconds=h.n * h.bucket_s)
    con.print(Text(f"{events.height:,} events, {iso_utc(h.start)} → {iso_utc(end)}, one column = {bucket_label(h.bucket_s)}", style="bold"))
    for n in notes:
        con.print(Text("note: " + n, style="dim"))
    t = Table(box=None, pad_edge=False, show_header=False)
    t.add_column(style="bold", no_wrap=True)
    t.add_column(justify="right", no_wrap=True)
    t.add_column(no_wrap=True)
    t.add_row(Text(""), Text(""), Text(axis(h), style="dim"))
    mark = [" "] * h.n
    for m in h.markers:
        i = int((m["ts"] - h.start).total_seconds() // h.bucket_s)
        if 0 <= i < h.n:
            mark[i] = "▲"
    t.add_row(Text("causes"), Text(str(len(h.markers))), Text("".join(mark), style="bold red"))
    for name, total, series in h.rows:
        t.add_row(Text(name), Text(f"{total:,}"), Text(spark(series), style="cyan"))
    con.print(t)
    if h.markers:
        con.print()
        con.print(Text("causes marked ▲", style="bold"))
        for m in h.markers[:40]:
            line = Text(f"  {iso_utc(m['ts'])}  {m['label']}")
            if m["detail"]:
                line.append(f" {visible(str(m['detail']))}")
            if m.get("count", 1) > 1:
                line.append(f" (×{m['count']} in a row)", style="dim")
            line.append(f"  {visible(m['path'])}:{m['line']}", style="magenta")
            con.print(line)
        if len(h.markers) > 40:
            con.print(Text(f"  … {len(h.markers) - 40} more", style="dim"))


def lines(events: pl.DataFrame) -> None:
    from logsleuth.render.console import is_terminal

    write = sys.stdout.write
    safe = is_terminal()  # like `events --format grep`: as it was when piped, visible on a terminal
    for ts, path, line, raw in events.select("ts", "path", "line", "raw").iter_rows():
        text = f"{iso_utc(ts) or '-'} {path}:{line}:{raw}"
        write((visible(text) if safe else text) + "\n")


def parquet(events: pl.DataFrame, out) -> None:
    events.drop([c for c in ("file",) if c in events.columns]).write_parquet(out)
