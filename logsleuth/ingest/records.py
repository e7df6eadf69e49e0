"""Records: lines -> log records (one per logged event), vectorised.

A line the layout recognises starts a record; every other line (``\\tat ...``, ``Caused by:``,
``... 12 more``, blank lines, anything the layout does not match) continues the record before it.
The first line of a file always starts a record, so no line is ever dropped. A record keeps its
first and last line number, the fields its layout found and its message with the continuation
lines appended (joined by newlines).
"""

from __future__ import annotations

import re

import polars as pl

from logsleuth.ingest.layouts import infer
from logsleuth.ingest.layouts.catalog import LEVELS, Layout, record_start_regex
from logsleuth.ingest.timeparse import FileClock, iso_stamps, stamp_expr

FIELD_COLUMNS = ("level", "logger", "thread", "pid", "srcfile", "srcline")

RECORD_SCHEMA = {
    "line": pl.Int64,
    "line_end": pl.Int64,
    "raw": pl.String,
    "ts_text": pl.String,
    "level": pl.String,
    "logger": pl.String,
    "thread": pl.String,
    "msg": pl.String,
    "host": pl.String,
    "isolated": pl.Boolean,
}


def start_expr(layout: Layout) -> pl.Expr:
    """``is_start``: does this line begin a record?

    A line starts a record when it begins the way the layout's lines begin, up to and including
    the timestamp (``Layout.ts_regex``): the cheapest test that tells a new record from a stack
    trace or a wrapped message line, measured 2-3x faster than the layout's whole head. Layouts
    without a timestamp use their whole head (``start_regex``)."""
    if layout.is_fallback:
        return pl.lit(True)
    extra = record_start_regex()  # lines that start a record under any layout (layouts.toml [[record_start]])
    if layout.inferred:  # a stamp near the start of the line (infer.py reads the line's head)
        start = infer.head(pl.col("text")).str.contains(layout.start_regex)
        return start if extra is None else start | pl.col("text").str.contains(extra)
    regex = layout.ts_regex if "(?P<ts>" in layout.start_regex else layout.start_regex
    return pl.col("text").str.contains(regex if extra is None else f"(?:{regex})|{extra}")


def full_regex(layout: Layout) -> str:
    return "(?s)" + layout.regex


def stamp_prefix_expr(layout: Layout) -> pl.Expr:
    """The ``ts`` text of a line, by the shortest regex that captures it (``_tsp``)."""
    regex = layout.ts_regex
    index = re.compile(regex).groupindex.get("ts", 0)
    return pl.col("text").str.extract(regex, index)


def assemble(lines: pl.DataFrame, layout: Layout, clock: FileClock, naive: pl.DataFrame | None) -> pl.DataFrame:
    """Lines (with ``is_start`` and ``rid``) of whole records -> one row per record.

    ``naive`` holds ``{rid, _ts_naive}`` computed over all record starts for time-only layouts.
    """
    cont = lines.filter(~pl.col("is_start"))
    rec = _heads(lines.filter(pl.col("is_start")), layout, "env_naive" in lines.columns)
    tails = cont.group_by("rid").agg(line_end=pl.col("line").max(), _cont=pl.col("text").str.join("\n")) if cont.height else None
    return finish(rec, layout, clock, naive, tails)


def parser_args(layout: Layout) -> tuple[str | None, str | None, str | None, list[str]]:
    """The compiled core's ``RecordParser`` arguments for this layout: the regexes :func:`assemble`
    runs on a record's first line, as the same texts (an inferred layout's whole regex; none for
    the message-only fallback, whose lines are their messages, not isolated)."""
    if layout.is_fallback:
        return None, None, None, list(layout.fields)
    if layout.tail_regex is None:
        return None, None, full_regex(layout), list(layout.fields)
    tail = f"(?P<_tail>{layout.tail_regex})$" if layout.tail_regex else None
    return layout.head_capture, tail, None, list(layout.fields)


RECORD_HEAD = ("rid", "line", "raw", "ts_text", "level", "logger", "thread", "msg", "isolated")  # the parser's, in _heads' order


def from_parser(cols: list[tuple[str, object]], layout: Layout, clock: FileClock, naive: pl.DataFrame | None = None) -> pl.DataFrame:
    """:func:`assemble` of records the compiled core parsed (``RecordParser.records``: the regex
    half, done there). The envelope's fields of each record's first line (``env_*``, with an
    envelope: compiled.Chunk.parse), else nulls. ``naive``: as for assemble."""
    frame = pl.DataFrame([pl.Series(col).alias(name) for name, col in cols])  # type: ignore[arg-type]
    tails = frame.select("rid", "line_end", "_cont") if "_cont" in frame.columns else None
    frame = frame.drop("line_end", "_cont", strict=False)
    if "env_ts" in frame.columns:  # as _heads takes them
        rec = frame.with_columns(
            level=pl.coalesce(pl.col("level"), pl.col("env_level")), logger=pl.coalesce(pl.col("logger"), pl.col("env_logger")),
        ).select(*RECORD_HEAD, host=pl.col("env_host"), env_ts=pl.col("env_ts"), _env_naive=pl.col("env_naive"))
    else:
        rec = frame.with_columns(
            host=pl.lit(None, dtype=pl.String), env_ts=pl.lit(None, dtype=pl.Datetime("us", "UTC")),
            _env_naive=pl.lit(None, dtype=pl.Datetime("us")),
        )
    return finish(rec, layout, clock, naive, tails, aligned=True)


def _heads(starts: pl.DataFrame, layout: Layout, has_env_naive: bool) -> pl.DataFrame:
    """The records' first lines parsed by the layout: fields, message, isolated (the regex half)."""
    fields = set(layout.fields)
    if layout.is_fallback:
        parsed = None
        msg_expr = pl.col("text")
    elif layout.tail_regex is None:  # the message is not at a known place: run the whole regex
        parsed = pl.col("text").str.extract_groups(full_regex(layout))
        msg_expr = parsed.struct.field("msg")
    else:
        # capture only the head (short, anchored); the message is the rest of the line
        starts = starts.with_columns(_h=pl.col("text").str.extract_groups(layout.head_capture))
        rest = pl.col("text").str.slice(pl.col("_h").struct.field("_head").str.len_chars())
        if layout.tail_regex:
            starts = starts.with_columns(_rest=rest)
            starts = starts.with_columns(_t=pl.col("_rest").str.extract_groups(f"(?P<_tail>{layout.tail_regex})$"))
            tail = pl.col("_t").struct.field("_tail")
            msg_expr = pl.when(tail.is_not_null()).then(
                pl.col("_rest").str.slice(0, pl.col("_rest").str.len_chars() - tail.str.len_chars())
            ).otherwise(pl.col("_rest"))
        else:
            msg_expr = rest
        parsed = None

    def field(name: str) -> pl.Expr:
        if name not in fields:
            return pl.lit(None, dtype=pl.String)
        if parsed is not None:
            return parsed.struct.field(name)
        if layout.tail_regex and name not in _head_groups(layout):
            return pl.col("_t").struct.field(name)
        return pl.col("_h").struct.field(name)

    msg = msg_expr if parsed is None else field("msg")
    cols = {
        "rid": pl.col("rid"),
        "line": pl.col("line"),
        "raw": pl.col("raw"),
        "ts_text": field("ts"),
        "level": pl.coalesce(field("level"), pl.col("env_level")),
        "logger": pl.coalesce(field("logger"), pl.col("env_logger")),
        "thread": field("thread"),
        "msg": pl.when(msg.is_not_null()).then(msg).otherwise(pl.col("text")),
        # did the layout isolate the message (patterns anchored at its start apply as written)?
        # otherwise the matcher searches the whole line (an unknown layout, a wrapper in front)
        "isolated": pl.lit(False) if layout.is_fallback else msg.is_not_null(),
        "host": pl.col("env_host"),
        "env_ts": pl.col("env_ts"),
        "_env_naive": pl.col("env_naive") if has_env_naive else pl.lit(None, dtype=pl.Datetime("us")),
    }
    return starts.select(**cols)


def finish(rec: pl.DataFrame, layout: Layout, clock: FileClock, naive: pl.DataFrame | None,
           tails: pl.DataFrame | None, aligned: bool = False) -> pl.DataFrame:
    """The rest of :func:`assemble` on parsed first lines: levels, the guess for records the layout
    did not isolate, times, and the continuation lines (``tails``: ``{rid, line_end, _cont}``, one
    row per record with continuation lines, or with ``aligned`` one row per record of ``rec``,
    ``_cont`` null where there are none)."""
    guess = rec.height > 0 and not rec["isolated"].all()
    if guess:  # records whose layout did not isolate the message: level and logger from the line's head
        head = pl.col("msg")
        cols = {"level": pl.coalesce(pl.col("level"), pl.when(~pl.col("isolated")).then(infer.level_expr(head)))}
        if not layout.is_fallback:  # a class name at the start of a plain message is an exception's, not a logger
            cols["logger"] = pl.coalesce(pl.col("logger"), pl.when(~pl.col("isolated")).then(infer.logger_expr(head)))
        rec = rec.with_columns(**cols)
    rec = rec.with_columns(level=_normal_level(pl.col("level")))
    spec = layout.time
    if spec is not None and not clock.time_only and layout.inferred:
        # each line's own stamp, whatever its shape (an offset on some lines, none on others)
        aware, naive_expr, text = infer.stamp_exprs(pl.col("msg"), clock.year_hint())
        rec = rec.with_columns(_ts_aware=aware, _ts_naive=naive_expr, ts_text=pl.coalesce(text, pl.col("ts_text")))
    elif spec is not None and not clock.time_only:
        fast = iso_stamps(rec["ts_text"], spec) if rec.height else None  # (the compiled core, when it can decide every stamp)
        if fast is None:
            aware, naive_expr, _ = stamp_expr(pl.col("ts_text"), spec, clock.year_hint())
            rec = rec.with_columns(_ts_aware=aware, _ts_naive=naive_expr)
        elif spec.has_zone:
            rec = rec.with_columns(_ts_aware=fast, _ts_naive=pl.lit(None, dtype=pl.Datetime("us")))
        else:
            rec = rec.with_columns(_ts_aware=pl.lit(None, dtype=pl.Datetime("us", "UTC")), _ts_naive=fast)
        if guess and rec["ts_text"].null_count():  # a line of another layout: any dated stamp
            g_aware, g_naive, g_text = infer.stamp_exprs(pl.col("msg"), clock.year_hint())
            lacking = pl.col("ts_text").is_null()
            rec = rec.with_columns(
                _ts_aware=pl.coalesce(pl.col("_ts_aware"), pl.when(lacking).then(g_aware)),
                _ts_naive=pl.coalesce(pl.col("_ts_naive"), pl.when(lacking).then(g_naive)),
                ts_text=pl.coalesce(pl.col("ts_text"), pl.when(lacking).then(g_text)),
            )
    elif spec is not None and naive is not None:
        rec = rec.join(naive, on="rid", how="left").with_columns(_ts_aware=pl.lit(None, dtype=pl.Datetime("us", "UTC")))
    else:
        rec = rec.with_columns(
            _ts_aware=pl.lit(None, dtype=pl.Datetime("us", "UTC")), _ts_naive=pl.lit(None, dtype=pl.Datetime("us"))
        )
    if not clock.time_only:  # a wrapper's stamp without an offset (syslog) for records without their own
        rec = rec.with_columns(
            _ts_naive=pl.when(pl.col("_ts_aware").is_null()).then(pl.coalesce(pl.col("_ts_naive"), pl.col("_env_naive")))
        )
    rec = rec.drop("_env_naive")
    if tails is not None and aligned:
        rec = rec.with_columns(line_end=tails["line_end"], _cont=tails["_cont"]).with_columns(
            msg=pl.when(pl.col("_cont").is_not_null())
            .then(pl.concat_str([pl.col("msg"), pl.lit("\n"), pl.col("_cont")]))
            .otherwise(pl.col("msg")),
        ).drop("_cont")
    elif tails is not None:
        rec = rec.join(tails, on="rid", how="left", maintain_order="left")
        rec = rec.with_columns(
            line_end=pl.coalesce(pl.col("line_end"), pl.col("line")),
            msg=pl.when(pl.col("_cont").is_not_null())
            .then(pl.concat_str([pl.col("msg"), pl.lit("\n"), pl.col("_cont")]))
            .otherwise(pl.col("msg")),
        ).drop("_cont")
    else:
        rec = rec.with_columns(line_end=pl.col("line"))
    return rec


def _head_groups(layout: Layout) -> set[str]:
    return set(re.compile(layout.head_capture).groupindex)


def _normal_level(expr: pl.Expr) -> pl.Expr:
    up = expr.str.strip_chars().str.to_uppercase()
    return up.replace(LEVELS)
