"""``logsleuth timeline`` output: sparklines per event kind with cause markers on a terminal;
``ISO-time path:line:text`` when piped (in the display zone, with its offset); NDJSON, CSV or
Parquet (UTC) for further analysis."""

from __future__ import annotations

import datetime as dt
import sys

import polars as pl
from rich.table import Table
from rich.text import Text

from logsleuth.render.console import stdout_console
from logsleuth.safe import one_line, visible, visible_expr
from logsleuth.ingest.texts import with_raw
from logsleuth.timeline.histogram import Histogram, bucket_label, histogram
from logsleuth.render import clock
from logsleuth.render.paths import prefix_lines

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
        lab = clock.clock(t, seconds=False) if h.bucket_s < 86400 else clock.local(t).strftime("%m-%d")
        if i + len(lab) > h.n:  # a label that would be cut is left out
            break
        for j, ch in enumerate(lab):
            out[i + j] = ch
    return "".join(out)


def quoted_kinds(events: pl.DataFrame, findings: list) -> list[str]:
    """The event kinds of the lines the findings quote: the causes a timeline must never drop."""
    cited = {f"{e.path}:{e.line}" for f in findings for e in f.evidence}
    if not cited or events.height == 0:
        return []
    col = "file" if "file" in events.columns else "path"
    where = pl.col(col).cast(pl.String) + ":" + pl.col("line").cast(pl.String)
    return sorted(events.filter(where.is_in(list(cited)))["event"].unique().to_list())


def terminal(events: pl.DataFrame, notes: list[str], findings: list | None = None, pager: bool = True) -> None:
    """Sparklines per event kind over the terminal's width, the findings' periods on top (one row
    per finding, its number and severity), the causes marked; the kinds of every line a finding
    quotes are kept however rare."""
    import io

    from rich.console import Console

    from logsleuth.safe import SafeConsole

    from logsleuth.render.console import report_console

    con = report_console()
    findings = findings or []
    names = sorted({str(x) for x in events["path"].unique().to_list()}) if events.height else []
    files = sorted({str(x) for x in events["file"].unique().to_list()}) if events.height and "file" in events.columns else []
    from logsleuth.render.paths import Shortener

    short = Shortener(names + files)
    label_w = 30
    always = quoted_kinds(events, findings)
    target = max(20, con.width - label_w - 10)
    h = histogram(events, top=12, target=target, always=always)
    buf = io.StringIO()
    out = SafeConsole(file=buf, width=con.width, force_terminal=con.is_terminal, color_system=con.color_system,
                  markup=False, emoji=False, highlight=False, soft_wrap=False)
    _draw(out, h, events, notes, findings, always, short, label_w)
    text = buf.getvalue()
    from logsleuth.render import pager as pg
    from logsleuth.render.console import is_terminal

    if not (pager and is_terminal() and pg.page(text, con.size.height)):
        sys.stdout.write(text)


def _draw(con, h: Histogram | None, events: pl.DataFrame, notes: list[str], findings: list, always: list[str], short, label_w: int) -> None:
    if h is None:
        con.print(Text("no timestamped events"))
        return
    end = h.start + dt.timedelta(seconds=h.n * h.bucket_s)
    con.print(Text(f"{events.height:,} events, {clock.span(h.start, end, duration=False)}, one column = {bucket_label(h.bucket_s)}", style="bold"))
    if short.prefix:
        for part in prefix_lines(visible(short.prefix), con.width):
            con.print(Text(part, style="dim"))
    for n in notes:
        con.print(Text("note: " + short.text(visible(n)), style="dim"))
    t = Table(box=None, pad_edge=False, show_header=False)
    t.add_column(style="bold", no_wrap=True, max_width=label_w, overflow="ellipsis")
    t.add_column(justify="right", no_wrap=True)
    t.add_column(no_wrap=True)
    t.add_row(Text(""), Text(""), Text(axis(h), style="dim"))
    from logsleuth.render.report import SEV_STYLE

    shown = [(i, f) for i, f in enumerate(findings, 1) if f.severity != "info"][:8]
    for i, f in shown:  # the findings' periods
        row = [" "] * h.n
        if f.first_seen is not None:
            a = int((f.first_seen - h.start).total_seconds() // h.bucket_s)
            b = int(((f.last_seen or f.first_seen) - h.start).total_seconds() // h.bucket_s)
            for k in range(max(0, a), min(h.n, b + 1)):
                row[k] = "━"
        t.add_row(Text(f"{i} {f.severity.upper()}", style=SEV_STYLE[f.severity]), Text(""), Text("".join(row), style=SEV_STYLE[f.severity].replace("white on ", "")))
    mark = [" "] * h.n
    for m in h.markers:
        i = int((m["ts"] - h.start).total_seconds() // h.bucket_s)
        if 0 <= i < h.n:
            mark[i] = "▲"
    t.add_row(Text("causes"), Text(str(len(h.markers))), Text("".join(mark), style="bold red"))
    for name, total, series in h.rows:
        t.add_row(Text(name, style="bold yellow" if name in always else ""), Text(f"{total:,}"), Text(spark(series), style="cyan"))
    con.print(t)
    if always:
        con.print(Text("yellow: kinds of the lines the findings quote (always kept)", style="dim"))
    if shown:
        con.print()
        for i, f in shown:
            con.print(Text(f"{i} ", style="bold") + Text(f.severity.upper(), style=SEV_STYLE[f.severity]) + Text(" " + short.text(visible(f.title))))
    if h.markers:
        con.print()
        con.print(Text("causes marked ▲", style="bold"))
        for m in h.markers[:40]:
            line = Text(f"  {clock.when(m['ts'], ms=True)}  {m['label']}")
            if m["detail"]:
                line.append(f" {visible(str(m['detail']))}")
            if m.get("count", 1) > 1:
                line.append(f" (×{m['count']} in a row)", style="dim")
            line.append(f"  {short.path(m['path'])}:{m['line']}", style="magenta")
            con.print(line)
        if len(h.markers) > 40:
            con.print(Text(f"  … {len(h.markers) - 40} more", style="dim"))


def lines(events: pl.DataFrame, texts=None) -> None:
    from logsleuth.render.console import is_terminal

    from logsleuth.render.events import SLICE, _write_lines, visible_names

    safe = is_terminal()  # like `events --format grep`: as it was when piped, visible on a terminal
    # ``time path:line:text``, built by Polars in slices; a file name is shown escaped even to a
    # pipe (it is not the log's text)
    text = pl.concat_str(
        [clock.iso_expr("ts").fill_null("-"), pl.lit(" "), visible_names(events), pl.lit(":"), pl.col("line").cast(pl.String),
         pl.lit(":"), pl.col("raw").fill_null("")]
    )
    for start in range(0, events.height, SLICE):
        _write_lines(with_raw(events.slice(start, SLICE), texts).select((visible_expr(text) if safe else text).alias("t")).to_series())


def parquet(events: pl.DataFrame, out, texts=None) -> None:
    from logsleuth.recognise.eventstore import parquet_table

    from logsleuth import atomic

    with atomic.replacing_file(out) as tmp:
        parquet_table(events, texts).write_parquet(tmp)
