"""Records: lines -> log records (one per logged event).

A line the layout recognises starts a record; every other line (``\\tat ...``, ``Caused by:``,
``... 12 more``, blank lines, anything the layout does not match) continues the record before it.
The first line of a file always starts a record, so no line is ever dropped. A record keeps its
first and last line number, the fields its layout found and its message with the continuation
lines appended (joined by newlines).

The compiled core finds the records and parses their first lines with the layout's regexes
(``RecordParser``, given :func:`parser_args`); :func:`from_parser` does the rest, vectorised in
Polars: levels, the guess for lines the layout did not isolate, the times, the continuation lines.
"""

from __future__ import annotations


import polars as pl

from logsleuth.ingest.layouts import infer
from logsleuth.ingest.layouts.catalog import LEVELS, Layout
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


def full_regex(layout: Layout) -> str:
    return "(?s)" + layout.regex


def parser_args(layout: Layout) -> tuple[str | None, str | None, str | None, list[str]]:
    """The compiled core's ``RecordParser`` arguments for this layout: the regexes it runs on a
    record's first line (the head, captured, and the tail at the line's end; a layout whose message
    is not at a known place, an inferred one: the whole regex; none for the message-only fallback,
    whose lines are their messages, not isolated)."""
    if layout.is_fallback:
        return None, None, None, list(layout.fields)
    if layout.tail_regex is None:
        return None, None, full_regex(layout), list(layout.fields)
    tail = f"(?P<_tail>{layout.tail_regex})$" if layout.tail_regex else None
    return layout.head_capture, tail, None, list(layout.fields)


RECORD_HEAD = ("rid", "line", "raw", "ts_text", "level", "logger", "thread", "msg", "isolated")  # the parser's columns, in this order


def from_parser(cols: list[tuple[str, object]], layout: Layout, clock: FileClock, naive: pl.DataFrame | None = None) -> pl.DataFrame:
    """Records the compiled core parsed (``RecordParser.records``: the regex half, done there),
    finished (:func:`finish`). The envelope's fields of each record's first line (``env_*``, with
    an envelope: compiled.Chunk.parse), else nulls: the layout's level and logger first, the
    envelope's for a record without. ``naive``: ``{rid, _ts_naive}`` of a time-only layout's
    records (dated by the file's clock)."""
    frame = pl.DataFrame([pl.Series(col).alias(name) for name, col in cols])  # type: ignore[arg-type]
    tails = frame.select("rid", "line_end", "_cont") if "_cont" in frame.columns else None
    frame = frame.drop("line_end", "_cont", strict=False)
    if "env_ts" in frame.columns:
        rec = frame.with_columns(
            level=pl.coalesce(pl.col("level"), pl.col("env_level")), logger=pl.coalesce(pl.col("logger"), pl.col("env_logger")),
        ).select(*RECORD_HEAD, host=pl.col("env_host"), env_ts=pl.col("env_ts"), _env_naive=pl.col("env_naive"))
    else:
        rec = frame.with_columns(
            host=pl.lit(None, dtype=pl.String), env_ts=pl.lit(None, dtype=pl.Datetime("us", "UTC")),
            _env_naive=pl.lit(None, dtype=pl.Datetime("us")),
        )
    return finish(rec, layout, clock, naive, tails)


def finish(rec: pl.DataFrame, layout: Layout, clock: FileClock, naive: pl.DataFrame | None, tails: pl.DataFrame | None) -> pl.DataFrame:
    """Parsed first lines made records: levels, the guess for records the layout did not isolate,
    times, and the continuation lines (``tails``: ``{rid, line_end, _cont}``, one row per record of
    ``rec``, ``_cont`` null where there are none; None: first lines only)."""
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
    if tails is not None:
        rec = rec.with_columns(line_end=tails["line_end"], _cont=tails["_cont"]).with_columns(
            msg=pl.when(pl.col("_cont").is_not_null())
            .then(pl.concat_str([pl.col("msg"), pl.lit("\n"), pl.col("_cont")]))
            .otherwise(pl.col("msg")),
        ).drop("_cont")
    else:  # (first lines only: the coverage sample's)
        rec = rec.with_columns(line_end=pl.col("line"))
    return rec


def _normal_level(expr: pl.Expr) -> pl.Expr:
    up = expr.str.strip_chars().str.to_uppercase()
    return up.replace(LEVELS)
