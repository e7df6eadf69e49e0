"""Where the time of a sarama failure chain went, for sarama.retry-redial-stall: each gap between two
lines of the chain attributed to a wait (``_classify_gap``: dial, read or write timeout, back-off,
the idle time before the send), the typical value of a kind of wait, the application's own figure
for the failing send and its usual pace, and what the log shows of ``Metadata.Timeout``.
"""

from __future__ import annotations

import re
from statistics import median

import polars as pl

from logsleuth.errors import LogsleuthError

from logsleuth.detectors.sarama.chain import _first_line, _has, _net_kind, _same_failure, _seconds
from logsleuth.detectors.sarama.appfields import success_col
from logsleuth.detectors.sarama.config import parse_duration

# budget components: key -> (label, sarama setting)
COMPONENTS = {
    "idle": ("before the failing send began (no line marks a send's start)", None),
    "produce_read_timeout": ("produce read timeout", "Net.ReadTimeout"),
    "produce_write_timeout": ("produce write timeout", "Net.WriteTimeout"),
    "metadata_read_timeout": ("metadata read timeout", "Net.ReadTimeout"),
    "metadata_write_timeout": ("metadata write timeout", "Net.WriteTimeout"),
    "dial_timeout": ("dial timeout", "Net.DialTimeout"),
    "dial_refused": ("refused dial", None),
    "dial_connected": ("dial that connected late (the broker reachable again)", None),
    "retry_backoff": ("producer retry back-off", "Producer.Retry.Backoff"),
    "metadata_backoff": ("metadata back-off", "Metadata.Retry.Backoff"),
    "before_log": ("before the log begins (the chain started earlier; from the application's own figure)", None),
    "unseen": ("inside the failing send, not broken down (sarama's Logger was off)", None),
    "other": ("between other lines", None),
}
READ_TIMEOUTS = ("produce_read_timeout", "metadata_read_timeout")
WRITE_TIMEOUTS = ("produce_write_timeout", "metadata_write_timeout")
PRODUCE_TIMEOUTS = ("produce_read_timeout", "produce_write_timeout")
# the application's own measure of how long the failing send took: 'failed after 180.85s', 'took 3m0.85s'
FIGURE_RE = re.compile(r"\b(?:after|took|elapsed|duration)[=:]?\s*((?:\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h))+)(?!\w)")


def _classify_gap(prev: dict, cur: dict, first_wait: bool) -> str:
    err_kind = _net_kind(cur.get("error"))
    if _has(cur, "sarama_connected") and not first_wait:
        return "dial_connected"  # a dial inside the chain that connected: its wait ends here
    if _has(cur, "sarama_dial_failed"):
        return "dial_timeout" if err_kind == "dial" else "dial_refused" if err_kind == "refused" else "other"
    if _same_failure(prev, cur):
        return "other"
    if _has(cur, "sarama_metadata_error"):
        if err_kind == "read":
            return "metadata_read_timeout"
        if err_kind == "write":
            return "metadata_write_timeout"
        return "other"
    if _has(cur, "sarama_broker_closing", "sarama_broker_socket_error"):
        if err_kind == "read":
            return "produce_read_timeout"
        if err_kind == "write":
            return "produce_write_timeout"
        return "idle" if first_wait else "other"
    if _has(cur, "sarama_metadata_fetch"):
        if _has(prev, "sarama_metadata_retry"):
            return "metadata_backoff"
        if _has(prev, "sarama_leader_abandon", "sarama_broker_shutdown", "sarama_leader_retrying"):
            return "retry_backoff"
    if first_wait and cur.get("app_error"):
        return "idle"  # nothing sarama logged: the whole wait is before / inside the send
    return "other"


def _opening_timeout(rows: list[dict]) -> str | None:
    """The produce request's own timeout that the chain's first line ends (``produce_read_timeout``:
    ``producer/broker/N state change to [closing] because read tcp …: i/o timeout``;
    ``produce_write_timeout`` for ``write tcp``), for a chain that no earlier line bounds; None when
    it opens otherwise (a dial, a metadata error, EOF). Newer sarama's 'close broker … due to socket
    error: E' logged first counts when the '[closing] because E' line of the same failure follows."""
    if not rows:
        return None
    first = rows[0]
    if _has(first, "sarama_broker_socket_error") and not _has(first, "sarama_broker_closing"):
        if not (len(rows) > 1 and _has(rows[1], "sarama_broker_closing") and _same_failure(first, rows[1])):
            return None
    elif not _has(first, "sarama_broker_closing"):
        return None
    kind = _net_kind(first.get("error"))
    return "produce_read_timeout" if kind == "read" else "produce_write_timeout" if kind == "write" else None


def _typical(values: list[float], coarse: bool) -> float | None:
    if not values:
        return None
    if coarse:  # second-resolution stamps: gaps are the true value or one more
        s = sorted(values)
        return float(s[(len(s) - 1) // 2])
    return round(median(values), 3)


def _cadence(df: pl.DataFrame, before_idx: int) -> float | None:
    """The application's send interval just before the chain (median gap between its last deliveries,
    appfields.success_col: not its status lines)."""
    ok = df.filter(success_col(df) & (pl.col("idx") <= before_idx)).tail(12)
    if ok.height < 3:
        return None
    gaps = ok.select((pl.col("ts").diff().dt.total_microseconds() / 1e6).alias("g"))["g"].drop_nulls().to_list()
    gaps = [g for g in gaps if g > 0]
    return round(median(gaps), 3) if gaps else None



def _figure(msg: str | None) -> float | None:
    """The application's own measure of the failing send ('send failed after 180.85s: …'), in seconds."""
    m = FIGURE_RE.search(_first_line(msg))
    if not m:
        return None
    try:
        return parse_duration(m.group(1))
    except LogsleuthError:
        return None



def _metadata_deadline(rows: list[dict], backoff: float, coarse: bool) -> dict | None:
    """What the log shows of Metadata.Timeout (newer sarama stops a metadata refresh at that deadline).
    'skipping last retries as we would go past the metadata timeout' e seconds into the refresh: the next
    back-off would have passed it (Metadata.Timeout ≤ e + Metadata.Retry.Backoff); 'not fetching metadata
    from broker … as we would go past the metadata timeout': it had passed (≤ e). The last 'fetching
    metadata' before it was still inside the deadline (the lower bound). The refresh begins at the
    chain's first 'fetching metadata' line."""
    skip = next((r for r in rows if _has(r, "sarama_metadata_skip")), None)
    if skip is None:
        return None
    fetches = [r for r in rows if _has(r, "sarama_metadata_fetch") and r["idx"] < skip["idx"]]
    if not fetches:
        return None
    not_fetching = "not fetching metadata" in (skip.get("msg") or "")
    elapsed = _seconds(fetches[0]["ts"], skip["ts"])
    upper = elapsed + (0.0 if not_fetching else backoff)
    lower = _seconds(fetches[0]["ts"], fetches[-1]["ts"])
    margin = min(0.5 * max(upper - lower, 0.0), 1.0 if coarse else 0.05)
    return {
        "row": skip,
        "text": "not fetching metadata from broker … as we would go past the metadata timeout" if not_fetching
        else "skipping last retries as we would go past the metadata timeout",
        "elapsed": round(elapsed, 3),
        "lower": round(lower, 3),
        "upper": round(upper, 3),
        "model_value": round(upper - margin, 3),  # inside the range, clear of stamp rounding
    }


def _deadline_fits(value: float, deadline: dict, tol: float) -> bool:
    """Whether a Metadata.Timeout (0: none) agrees with where the log shows the refresh stopped."""
    return value > 0 and deadline["lower"] - tol < value <= deadline["upper"] + tol

