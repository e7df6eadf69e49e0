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

from logsleuth.recognise.matcher import as_strings
from logsleuth.recognise.packs import PackSet
from logsleuth.render import clock
from logsleuth.render.console import color_mode, is_terminal, stdout_console
from logsleuth.safe import csv_expr, one_line, visible, visible_expr
from logsleuth.ingest.texts import TextStore, with_raw
from logsleuth.ingest.timeparse import iso_utc

BASE = ["path", "line", "line_end", "ts", "system", "component", "event", "pattern", "severity", "level", "logger", "thread", "host"]


def fields_of(row: dict, packs: PackSet) -> dict:
    return {f: row[f] for f in packs.vocabulary if row.get(f) is not None}


def records(events: pl.DataFrame, packs: PackSet) -> list[dict]:
    """The events as ``ndjson`` writes them: ``json.dumps(record, ensure_ascii=False)`` of each of
    these is its line (the reference the compiled writer is tested against)."""
    out = []
    for row in events.iter_rows(named=True):
        d = {k: row.get(k) for k in BASE}
        d["ts"] = iso_utc(row.get("ts"))
        d["text"] = row.get("raw")
        d["message"] = row.get("msg")
        d.update(fields_of(row, packs))
        out.append(d)
    return out


SLICE = 20_000  # rows formatted and written at a time (memory: one slice of text, not the whole output; 50,000 peaked
# 120 MB higher on a reconnect storm, for the same CPU)


def iso_expr(col: str = "ts") -> pl.Expr:
    """``timeparse.iso_utc`` as an expression: milliseconds, or microseconds when they are there."""
    return clock.iso_expr(col, "UTC")


def _write_lines(lines: pl.Series) -> None:
    """Lines to stdout, one write per slice."""
    if lines.len():
        sys.stdout.write("\n".join(lines.to_list()) + "\n")


def visible_names(events: pl.DataFrame) -> pl.Expr:
    """The ``path`` column with each distinct name made visible (one call per file, not per row)."""
    names = events["path"].cast(pl.String).unique().drop_nulls().to_list() if events.height else []
    hostile = {n: visible(n) for n in names if visible(n) != n}
    path = pl.col("path").cast(pl.String)
    return path.replace(hostile) if hostile else path


def grep(events: pl.DataFrame, with_event: bool = False, texts: TextStore | None = None, whole: bool = False) -> None:
    """``path:line:text`` (``with_event``: ``path:line:event:text``); the path, line and event
    coloured as rg does when colours are on (a terminal, or --color always). ``whole``: every line
    of each event's record, each as ``path:N:text`` (a stack trace's ``Caused by`` and the
    exception texts in it are found by a grep after it)."""
    terminal = is_terminal()  # a log line must not repaint the analyst's terminal; a pipe gets it as it was
    color = color_mode() == "always" or (terminal and color_mode() == "auto")
    p, n, e, z = ("\x1b[35m", "\x1b[32m", "\x1b[33m", "\x1b[0m") if color else ("", "", "", "")
    names_ = visible_names(events)
    path, raw = names_, pl.col("raw").fill_null("")  # a file name is shown escaped even to a pipe: it is not the log's text
    if terminal:  # each field made visible, so that the colours stay codes
        path, raw = visible_expr(path), visible_expr(raw)
    parts = [pl.lit(p), path, pl.lit(z + ":" + n), pl.col("line").cast(pl.String), pl.lit(z + ":")]
    if with_event:
        parts += [pl.lit(e), pl.col("event").cast(pl.String), pl.lit(z + ":")]
    for start in range(0, events.height, SLICE):
        part = with_raw(events.slice(start, SLICE), texts)
        if not whole:  # written by the core: the path and the text made visible there on a terminal
            names = [(p, "p", "t", False), (z + ":" + n, "n", "j", False)]
            exprs = [names_.alias("p"), pl.col("line").cast(pl.Int64).alias("n")]
            if with_event:
                names.append((z + ":" + e, "e", "p", False))
                exprs.append(pl.col("event").cast(pl.String).alias("e"))
            names.append((z + ":", "t", "t", False))
            exprs.append(pl.col("raw").fill_null("").alias("t"))
            _write_fields(part.select(exprs), names, "\n", terminal)
            continue
        first = part.select(pl.concat_str([*parts, raw]).alias("out"))
        _write_lines(_whole_records(part, first, parts, terminal))


def _whole_records(part: pl.DataFrame, first: pl.DataFrame, head: list, terminal: bool) -> pl.Series:
    """Each event's first line (``first``), then its record's continuation lines, ``path:N:text``
    with N counted on from the event's line: one frame, exploded and put back in order."""
    cont = pl.col("msg").fill_null("").str.split("\n").list.slice(1)
    more = part.with_row_index("_ev").select(
        "_ev", "path", "line", "event", _cont=cont, _n=pl.int_ranges(pl.col("line") + 1, pl.col("line") + 1 + cont.list.len()),
    ).explode("_cont", "_n").drop_nulls("_cont").with_columns(line=pl.col("_n"))
    text = visible_expr(pl.col("_cont")) if terminal else pl.col("_cont")
    rest = more.select("_ev", _sub=pl.lit(1, dtype=pl.Int64), out=pl.concat_str([*head, text]))
    firsts = first.with_row_index("_ev").select("_ev", _sub=pl.lit(0, dtype=pl.Int64), out="out")
    return pl.concat([firsts, rest]).sort("_ev", "_sub", maintain_order=True).get_column("out")


def brief(events: pl.DataFrame, width: int, limit: int | None = None) -> str:
    """One line per event for a terminal: time of day (milliseconds), the event, ``path:line`` and
    the start of its message, the message cut to ``width`` (never the path); a header names the
    day, the zone and the directory every path shares. ``-v`` shows each in full (``table``)."""
    from rich.cells import cell_len

    from logsleuth.render.paths import Shortener, prefix_lines

    shown = events if limit is None else events.head(limit)
    days = {clock.local(t).date() for t in shown["ts"].drop_nulls().to_list()} if shown.height else set()
    one_day = len(days) == 1
    out = []
    short = Shortener([str(x) for x in shown["path"].unique().to_list()] if shown.height else [])
    if shown.height:
        t0 = shown["ts"].drop_nulls().first() if shown["ts"].null_count() < shown.height else None
        zone = clock.abbr(t0) + ("" if clock.is_utc() else f" ({clock.zone_name()})")
        out.append(f"{shown.height:,} events" + (f" on {next(iter(days)).isoformat()}" if one_day else "") + f", times in {zone}")
        if short.prefix:
            out += prefix_lines(visible(short.prefix), width)
    for row in shown.iter_rows(named=True):
        t = row["ts"]
        if t is None:
            when = "-".ljust(12 if one_day else 18)
        else:
            x = clock.local(t)
            when = x.strftime("%H:%M:%S") + f".{x.microsecond // 1000:03d}"
            if not one_day:
                when = x.strftime("%m-%d ") + when
        head = f"{when}  {row['event']}  {short.path(str(row['path']))}:{row['line']}"
        room = width - cell_len(head) - 2
        msg = one_line(row["msg"], 400)
        if room >= 8 and msg:
            while cell_len(msg) > room:
                msg = msg[: max(1, len(msg) - (cell_len(msg) - room) - 1)] + "…"
            head += "  " + msg
        out.append(head)
    if limit is not None and events.height > limit:
        out.append(f"… {events.height - limit:,} more events (use --format ndjson or grep for all)")
    return "\n".join(out) + ("\n" if out else "")


def counts(events: pl.DataFrame) -> None:
    """``system:event:N`` per event kind, most first (``events --count``, like ``rg -c``)."""
    if events.height == 0:
        return
    per = events.group_by("system", "event").len().sort(["len", "system", "event"], descending=[True, False, False])
    sys.stdout.write("".join(f"{s}:{e}:{n}\n" for s, e, n in per.iter_rows()))


def names(paths: list[str]) -> None:
    """One input per line (``events --files-with-events``, like ``rg -l``)."""
    sys.stdout.write("".join(visible(x) + "\n" for x in paths))  # names are shown escaped even to a pipe


def ndjson(events: pl.DataFrame, packs: PackSet, texts: TextStore | None = None) -> None:
    """One JSON object per event, byte for byte ``json.dumps(ensure_ascii=False)`` of its
    ``records()`` dict (the base keys always, then ``text`` and ``message``, then the vocabulary
    fields that are not null), written by the compiled core from the events' columns
    (``_core.write_lines``: rust/src/writer.rs). On a terminal, DEL, C1, bidi and zero-width
    characters escaped too (``safe.json_visible``)."""
    terminal = is_terminal()
    for start in range(0, events.height, SLICE):
        part = with_raw(events.slice(start, SLICE), texts)
        names, exprs = _json_fields(part, packs)
        _write_fields(part.select(exprs), names, "}\n", terminal)


def _json_fields(frame: pl.DataFrame, packs: PackSet) -> tuple[list[tuple[str, str, str, bool]], list[pl.Expr]]:
    """What ``write_lines`` writes for an NDJSON line of ``frame``'s rows: per field (its prefix:
    the key, after ``{`` or ``, ``; its column; its kind; whether a null leaves it out), and the
    expressions that make the columns (JSON's own types where the core writes them: String, Int64,
    Float64, Boolean; the timestamp as ``iso_utc`` text)."""
    schema = frame.schema
    fixed = [(k, k) for k in BASE] + [("text", "raw"), ("message", "msg")]
    # (a field no row of this slice has is left out of every line anyway: not handed to the writer)
    vocab = [(f, f) for f in packs.vocabulary if f in schema and frame[f].null_count() < frame.height]
    names: list[tuple[str, str, str, bool]] = []
    exprs: list[pl.Expr] = []
    for i, (key, col) in enumerate(fixed + vocab):
        name = f"_{i}"
        prefix = ("{" if i == 0 else ", ") + json.dumps(key) + ": "
        dtype = schema.get(col)
        if dtype is None:
            e, kind = pl.lit(None, dtype=pl.String), "j"
        elif key == "ts" and dtype != pl.String:
            e, kind = iso_expr(col), "j"
        else:
            e, kind = _json_column(pl.col(col), dtype)
        exprs.append(e.alias(name))
        names.append((prefix, name, kind, i >= len(fixed)))  # a vocabulary field that is null is left out
    return names, exprs


def _json_column(c: pl.Expr, dtype: pl.DataType) -> tuple[pl.Expr, str]:
    """A column as the core writes it as JSON (kind ``j``), or as JSON text made here (``v``)."""
    if dtype == pl.UInt64:  # (wider than Int64: its digits as they are)
        return c.cast(pl.String), "v"
    if dtype.is_integer():
        return c.cast(pl.Int64), "j"
    if dtype.is_float():  # Python's repr of a float (1e-05, Infinity), as json.dumps writes it
        return c.cast(pl.Float64), "j"
    if dtype == pl.Boolean:
        return c, "j"
    return c.cast(pl.String), "j"  # text (a category as its text; anything else as its text, escaped)


def _out_fd() -> int:
    """stdout's file descriptor when the core can write to it directly (a real file whose text layer
    writes UTF-8: the bytes are the ones it would write); else -1 (a test's captured stream, a
    closed stdout, another encoding): the core hands the lines back to be written here."""
    import codecs

    try:
        if codecs.lookup(sys.stdout.encoding).name != "utf-8":
            return -1
        fd = sys.stdout.fileno()
    except (AttributeError, ValueError, OSError, LookupError, TypeError):
        return -1
    sys.stdout.flush()  # what was written before goes first
    return fd


def _write_fields(cols: pl.DataFrame, names: list[tuple[str, str, str, bool]], end: str, terminal: bool) -> None:
    """The lines of ``cols`` (``write_lines``' fields) to stdout."""
    if cols.height == 0:
        return
    from logsleuth.ingest.compiled import required

    fields = [(prefix, cols.get_column(name).__arrow_c_stream__(), kind, optional) for prefix, name, kind, optional in names]
    got = required().write_lines(_out_fd(), fields, end, terminal)
    if got is not None:
        sys.stdout.write(got.decode("utf-8"))


def csv(events: pl.DataFrame, packs: PackSet, texts: TextStore | None = None) -> None:
    present = [f for f in packs.vocabulary if f in events.columns and events[f].null_count() < events.height]
    cols = BASE + ["raw"] + present
    terminal = is_terminal()
    for start in range(0, max(events.height, 1), SLICE):
        part = with_raw(events.slice(start, SLICE), texts)
        out = as_strings(part.select([c for c in cols if c in part.columns])).with_columns(
            iso_expr("ts") if part.height else pl.col("ts").cast(pl.String)
        ).rename({"raw": "text"})
        # a cell a spreadsheet would run as a formula (=, +, -, @ first) gets a leading ' (safe.csv_cell)
        out = out.with_columns(csv_expr(c) for c, t in out.schema.items() if t == pl.String)
        text = out.write_csv(include_header=start == 0)
        sys.stdout.write(visible(text, keep_newlines=True) if terminal else text)


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
