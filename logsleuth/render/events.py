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
from logsleuth.safe import csv_expr, json_dumps, json_visible_expr, one_line, visible, visible_expr
from logsleuth.ingest.texts import TextStore, with_raw
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


SLICE = 20_000  # rows formatted and written at a time (memory: one slice of text, not the whole output; 50,000 peaked
# 120 MB higher on a reconnect storm, for the same CPU)
# JSON's escapes for the C0 controls, as Python's json.dumps writes them
_JSON_ESCAPES = [("\\", "\\\\"), ('"', '\\"'), ("\n", "\\n"), ("\r", "\\r"), ("\t", "\\t"), ("\x08", "\\b"), ("\x0c", "\\f")]
_OTHER_C0 = [chr(c) for c in range(32) if chr(c) not in "\n\r\t\x08\x0c"]


def iso_expr(col: str = "ts") -> pl.Expr:
    """``timeparse.iso_utc`` as an expression: milliseconds, or microseconds when they are there."""
    return clock.iso_expr(col, "UTC")


def _json_string(expr: pl.Expr, named: bool, controls: bool) -> pl.Expr:
    """A string as a JSON string literal, byte for byte as ``json.dumps(ensure_ascii=False)``
    writes it; null as ``null``. ``named``: some value holds a character JSON escapes by name
    (backslash, quote, \\n, ...); ``controls``: some value holds another C0 control. A column with
    neither (most: paths, loggers, event names) is quoted as it is, without a pass per escape."""
    e = expr
    if named:
        for a, b in _JSON_ESCAPES:
            e = e.str.replace_all(a, b, literal=True)
    if controls:
        for c in _OTHER_C0:
            e = e.str.replace_all(c, f"\\u{ord(c):04x}", literal=True)
    return pl.when(expr.is_null()).then(pl.lit("null")).otherwise(pl.concat_str([pl.lit('"'), e, pl.lit('"')]))


def _is_text(dtype: pl.DataType) -> bool:
    return dtype == pl.String or isinstance(dtype, (pl.Categorical, pl.Enum))


def _escapes(frame: pl.DataFrame, cols: list[str]) -> dict[str, tuple[bool, bool]]:
    """Per text column of ``cols``: (some value needs a named JSON escape, some value holds another
    C0 control), found in one pass over the frame."""
    strings = [c for c in cols if _is_text(frame.schema[c])]
    if not strings or frame.height == 0:
        return {}
    exprs = []
    for i, c in enumerate(strings):
        v = pl.col(c).cast(pl.String)
        exprs += [v.str.contains(r'[\\"\n\r\t\x08\x0c]').any().alias(f"n{i}"), v.str.contains(r"[\x00-\x07\x0b\x0e-\x1f]").any().alias(f"c{i}")]
    row = frame.select(exprs).row(0)
    return {c: (bool(row[2 * i]), bool(row[2 * i + 1])) for i, c in enumerate(strings)}


def _json_value(frame: pl.DataFrame, col: str, escapes: dict[str, tuple[bool, bool]]) -> pl.Expr:
    dtype = frame.schema[col]
    c = pl.col(col)
    if dtype.is_integer():
        return pl.when(c.is_null()).then(pl.lit("null")).otherwise(c.cast(pl.String))
    if dtype.is_float():  # Python's repr of a float (1e-05, Infinity): few values, rare fields
        return c.map_elements(lambda v: json.dumps(v), return_dtype=pl.String, skip_nulls=True).fill_null("null")
    if dtype == pl.Boolean:
        return pl.when(c.is_null()).then(pl.lit("null")).otherwise(pl.when(c).then(pl.lit("true")).otherwise(pl.lit("false")))
    if _is_text(dtype):
        return _json_string(c.cast(pl.String), *escapes.get(col, (False, False)))
    return _json_string(c.cast(pl.String), True, True)  # (no such column today: every escape, to be safe)


def ndjson_lines(events: pl.DataFrame, packs: PackSet) -> pl.Series:
    """One JSON object per event, as ``json.dumps`` of ``records()`` would write it: the base keys
    always, then ``text`` and ``message``, then the vocabulary fields that are not null."""
    frame = events.with_columns(ts=iso_expr("ts") if events.schema.get("ts") != pl.String else pl.col("ts"))
    frame = frame.with_columns([pl.lit(None, dtype=pl.String).alias(k) for k in BASE if k not in frame.columns])
    frame = frame.rename({"raw": "_text", "msg": "_message"}).with_columns(text=pl.col("_text"), message=pl.col("_message"))
    fixed = BASE + ["text", "message"]
    vocab = [f for f in packs.vocabulary if f in frame.columns and frame[f].null_count() < frame.height]  # an all-null field writes nothing
    escapes = _escapes(frame, fixed + vocab)
    parts: list[pl.Expr] = [pl.lit("{")]
    for i, k in enumerate(fixed):
        parts += [pl.lit(("" if i == 0 else ", ") + json.dumps(k) + ": "), _json_value(frame, k, escapes)]
    for f in vocab:
        parts.append(pl.when(pl.col(f).is_not_null()).then(pl.concat_str([pl.lit(", " + json.dumps(f) + ": "), _json_value(frame, f, escapes)])).otherwise(pl.lit("")))
    parts.append(pl.lit("}"))
    return frame.select(pl.concat_str(parts).alias("line"))["line"]


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
    path, raw = visible_names(events), pl.col("raw").fill_null("")  # a file name is shown escaped even to a pipe: it is not the log's text
    if terminal:  # each field made visible, so that the colours stay codes
        path, raw = visible_expr(path), visible_expr(raw)
    parts = [pl.lit(p), path, pl.lit(z + ":" + n), pl.col("line").cast(pl.String), pl.lit(z + ":")]
    if with_event:
        parts += [pl.lit(e), pl.col("event").cast(pl.String), pl.lit(z + ":")]
    for start in range(0, events.height, SLICE):
        part = with_raw(events.slice(start, SLICE), texts)
        first = part.select(pl.concat_str([*parts, raw]).alias("out"))
        if not whole:
            _write_lines(first.to_series())
            continue
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
    terminal = is_terminal()  # on a terminal, DEL, C1, bidi and zero-width characters escaped too
    for start in range(0, events.height, SLICE):
        lines = ndjson_lines(with_raw(events.slice(start, SLICE), texts), packs)
        _write_lines(lines.to_frame().select(json_visible_expr(pl.col(lines.name))).to_series() if terminal else lines)


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
