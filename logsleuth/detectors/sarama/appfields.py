"""What the application's own lines say about a send, for the sarama detectors: the topic and
partition a delivery or an error names (``app_partition``, ``app_topic``: vectorised over the
records), the broker address an error text names, and the application's own measure of how long a
send took (``figure``: ``failed after 180.85s``, ``took 3m0.85s``, or a structured field such as
zap's ``"latency":63.2`` (seconds), zerolog's ``"elapsed":63200.5`` (milliseconds), logrus'
``"latency_ms":63200`` or ``"latency":"1m3.2s"``).

The application writes these lines, not sarama, so no pack can know their words: the shapes read
here are the common ones (``partition 3``, ``partition=3``, ``"partition":3``, ``orders/3`` or
``orders-3`` for a topic sarama's own lines name, ``delivered to orders/3`` for any topic), and a
line that names none of them is simply not tied to a partition.

Which of the application's lines are deliveries (``delivery``): a line that says a send got through —
it names a partition or an offset, or says delivered / sent / produced / published / wrote / written /
stored / acked — and says nothing of a failure. Every other line the application logs (a status line
such as ``Buffer fullness: 800 / 10000 metrics``, an HTTP access line, ``heartbeat ok``, a metrics
dump: other goroutines keep logging while a send hangs) is neutral: it tells nothing about the send,
so it neither bounds a stall nor ends one.
"""

from __future__ import annotations

import json
import re

import polars as pl

from logsleuth.errors import LogsleuthError

from logsleuth.detectors.sarama.config import parse_duration

GO_DURATION = r"(?:\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h))+"
# a figure in the text: 'failed after 180.85s', 'took 3m0.85s', 'elapsed=1.2s', 'latency: 63.2s'
FIGURE_RE = re.compile(rf"\b(?:after|took|elapsed|duration|latency)[=:]?\s*({GO_DURATION})(?!\w)")
# a figure in a structured field: "latency":63.2 / "elapsed_ms":63200 / "took":"1m3s" / latency_ms=63200
FIELD_RE = re.compile(
    r"""["']?\b(latency|elapsed|duration|took)(?:[_.-]?(ns|us|µs|ms|millis|milliseconds|s|sec|secs|seconds))?["']?\s*[:=]\s*("?)([0-9][0-9.eE+-]*(?:ns|us|µs|ms|s|m|h)?(?:[0-9.]+(?:ns|us|µs|ms|s|m|h))*)\3""",
    re.IGNORECASE,
)
_SUFFIX = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "millis": 1e-3, "milliseconds": 1e-3, "s": 1.0, "sec": 1.0, "secs": 1.0, "seconds": 1.0}
MAX_FIGURE_S = 86_400.0  # a send measured longer than a day is no figure of ours

PARTITION_RE = r"""(?i)["']?\bpartition(?:_?id)?["']?\s*[:=]?\s*["']?(\d+)\b"""
TOPIC_RE = r"""(?i)["']?\btopic["']?\s*[:=]?\s*["']?([A-Za-z0-9._-]+)"""
# the words of a line that says a send got through, and of one that says it did not
DELIVERY_RE = r"(?i)\b(?:deliver(?:ed|y|ies)?|sent|produced|published|wrote|written|stored|ack(?:ed|nowledged)|offsets?|partitions?)\b"
OFFSET_RE = r"""(?i)["']?\boffset["']?\W{0,3}\d+"""
SENT_TO_TP_RE = r"(?i)\b(?:delivered|sent|produced|published|written|wrote)\b[^/\n]{0,40}?\b(?:to|on|into)\s+([A-Za-z0-9._-]+)/(\d+)\b"
NOT_DELIVERED_RE = (
    r"(?i)\b(?:fail\w*|errors?|unable|could ?n[o']t|cannot|can't|timed? ?out|timeout|refused|retrying|dropp\w*|discard\w*"
    r"|not (?:delivered|sent|produced|published|written|acked))\b"
)


def with_app_fields(df: pl.DataFrame, topics: list[str]) -> pl.DataFrame:
    """``app_partition`` and ``app_topic`` of the application's own lines (``ok`` or ``app_error``),
    from their raw text: JSON fields, key=value, words, or ``topic/N`` / ``topic-N`` for a topic
    sarama's lines name (nulls elsewhere); and ``delivery``: an ``ok`` line that says a send got
    through (see the module text)."""
    mine = pl.col("ok") | pl.col("app_error")
    raw = pl.col("raw").fill_null("")
    part = raw.str.extract(PARTITION_RE, 1).cast(pl.Int64, strict=False)
    topic = raw.str.extract(TOPIC_RE, 1)
    if topics:
        alt = "|".join(re.escape(t) for t in sorted(set(topics), key=len, reverse=True))
        tp_re = rf"(?:^|[^A-Za-z0-9._-])({alt})[/-](\d+)\b"
        part = pl.coalesce(part, raw.str.extract(tp_re, 2).cast(pl.Int64, strict=False))
        topic = pl.coalesce(topic, raw.str.extract(tp_re, 1))
    # 'delivered to ledger/5', 'sent to orders/3 at offset 9' (sarama's own topic/partition notation)
    # when no sarama line names the topic (its Logger off)
    part = pl.coalesce(part, raw.str.extract(SENT_TO_TP_RE, 2).cast(pl.Int64, strict=False))
    topic = pl.coalesce(topic, raw.str.extract(SENT_TO_TP_RE, 1))
    first = pl.col("msg").fill_null("").str.split("\n").list.first()
    said = (first.str.contains(DELIVERY_RE) | raw.str.contains(OFFSET_RE) | part.is_not_null()) & ~first.str.contains(NOT_DELIVERED_RE)
    return df.with_columns(
        app_partition=pl.when(mine).then(part),
        app_topic=pl.when(mine).then(topic.str.strip_chars(".,:;")),
        delivery=pl.col("ok") & said.fill_null(False),
    )


def success_col(df: pl.DataFrame) -> pl.Expr:
    """The application's success lines where only its lines tell (sarama's Logger off): its deliveries
    (``delivery``), or, when none of its lines is worded as one, every line of it that is no error."""
    return pl.col("delivery") if "delivery" in df.columns and df["delivery"].any() else pl.col("ok")


def _family(raw: str) -> str | None:
    """Which JSON logger wrote a line: zap (``ts`` + ``msg``), zerolog (``message`` + ``time``) or
    logrus (``msg`` + ``time``): each prints a bare duration number in its own unit."""
    s = raw.lstrip()
    if not s.startswith("{"):
        return None
    try:
        keys = set(json.loads(s))
    except (ValueError, TypeError):
        return None
    if "ts" in keys and "msg" in keys:
        return "zap"
    if "message" in keys and "time" in keys:
        return "zerolog"
    if "msg" in keys and "time" in keys:
        return "logrus"
    return None


def figure(msg: str | None, raw: str | None = None) -> float | None:
    """The application's own measure of a send, in seconds: a Go duration after 'after', 'took',
    'elapsed', 'duration' or 'latency' in its text, or such a structured field. A bare number is read
    in the unit its key names (``_ms``, ``_s`` …), else in the unit its logger prints durations in
    (zap: seconds, zerolog: milliseconds, logrus: nanoseconds, as Go's json does); None when there
    is none or it is not a duration."""
    first = (msg or "").split("\n", 1)[0]
    m = FIGURE_RE.search(first)
    if m:
        try:
            return parse_duration(m.group(1))
        except LogsleuthError:
            pass
    text = raw or ""
    fm = FIELD_RE.search(text)
    if not fm:
        return None
    suffix, value = (fm.group(2) or "").lower(), fm.group(4)
    try:
        if re.search(r"[a-zµ]$", value):
            secs = parse_duration(value)
        else:
            num = float(value)
            if suffix:
                secs = num * _SUFFIX[suffix]
            else:
                unit = {"zap": 1.0, "zerolog": 1e-3, "logrus": 1e-9}.get(_family(text) or "", None)
                if unit is None:
                    return None  # a bare number with no unit and no logger that tells it
                secs = num * unit
    except (LogsleuthError, ValueError, KeyError):
        return None
    return secs if 0 <= secs <= MAX_FIGURE_S else None


def error_address(text: str | None) -> str | None:
    """The broker address a Go net error in a line names: ``dial tcp 10.0.0.7:9092``, the far end of
    ``read tcp a->10.0.0.7:9092``."""
    m = re.search(r"\b(?:dial|read|write) tcp (?:\S+?->)?(\[[0-9a-fA-F:.]+\]:\d+|[0-9A-Za-z._-]+:\d+)", text or "")
    return m.group(1) if m else None
