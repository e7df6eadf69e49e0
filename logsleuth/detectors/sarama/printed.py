"""sarama settings the application prints in its own log, for the sarama detectors: many services log
their configuration at start-up (``producer config: Net.ReadTimeout=10s …``, a ``%+v`` of
``sarama.Config`` — ``Net:{MaxOpenRequests:5 DialTimeout:30s ReadTimeout:30s …}`` — or JSON fields
such as ``"net.read_timeout":"10s"``, ``"readTimeout":"10s"`` or ``"ReadTimeout":10000000000``, the
nanoseconds Go's json gives a ``time.Duration``). The last value printed before a stall is the one
its read-timeout arithmetic uses (budget.py); sarama's default when none is printed.
"""

from __future__ import annotations

import polars as pl

from logsleuth.errors import LogsleuthError

from logsleuth.detectors.sarama.config import parse_duration

_VALUE = r"""["']?\s*[:=]\s*["']?((?:\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h))+|\d{7,})\b"""
PRINTED = {
    "Net.ReadTimeout": r"(?i)\b(?:net[._-]?)?read[._-]?timeout" + _VALUE,
    "Net.WriteTimeout": r"(?i)\b(?:net[._-]?)?write[._-]?timeout" + _VALUE,
    "Net.DialTimeout": r"(?i)\b(?:net[._-]?)?dial[._-]?timeout" + _VALUE,
}


def _seconds(text: str) -> float | None:
    if text.isdigit():
        return int(text) / 1e9  # Go's json of a time.Duration: nanoseconds
    try:
        return parse_duration(text)
    except LogsleuthError:
        return None


def printed_settings(df: pl.DataFrame, before_idx: int) -> dict[str, dict]:
    """{setting: {"value": seconds, "line", "file", "text"}}: the last value of each timeout the
    application printed before row ``before_idx`` (sarama's own lines print none)."""
    cand = df.filter(
        (pl.col("idx") < before_idx) & ~pl.col("internal") & pl.col("raw").fill_null("").str.contains("(?i)timeout")
    )
    if cand.height == 0:
        return {}
    out: dict[str, dict] = {}
    for key, rx in PRINTED.items():
        hit = cand.select("line", "file", "raw", v=pl.col("raw").str.extract(rx, 1)).filter(pl.col("v").is_not_null()).tail(1).to_dicts()
        if hit:
            secs = _seconds(hit[0]["v"])
            if secs is not None and secs > 0:
                out[key] = {"value": secs, "line": hit[0]["line"], "file": hit[0]["file"], "text": hit[0]["v"]}
    return out
