"""sarama.retry-redial-stall with sarama's Logger off (its default): only the application's own lines
are in the log. Whether a surfaced error is a stall at all (the application's figure for the send,
or the gap before the error against its usual pace), the kind as the returned error tells it, and
the two waits that can be told apart: the idle time before the send and the send itself.
"""

from __future__ import annotations

from logsleuth.detectors.sarama.chain import _first_line, _net_kind, _seconds
from logsleuth.detectors.sarama.stallverdict import VERDICT

# with sarama's Logger off only the application's lines are left: a send is reported as a stall when the
# application measured it at UNSEEN_MIN_S or more, or (no figure) when the gap before its error is that
# long and UNSEEN_CADENCE_FACTOR times its usual interval between lines (a refused broker fails in < 1 s);
# both are thresholds of sarama.retry-redial-stall.toml
UNSEEN_MIN_S = VERDICT.thresholds["unseen_min_s"]
UNSEEN_CADENCE_FACTOR = VERDICT.thresholds["unseen_pace_ratio"]


def _unseen_kind(err_row: dict | None) -> str | None:
    """With sarama's Logger off, the kind as the returned error tells it: 'run out of available brokers'
    (or a dial timeout) after a long send is a black hole, a read/write i/o timeout a silent broker. A
    refused or closed broker fails at once, so a long gap before its error is not sarama's wait."""
    msg = _first_line(err_row.get("msg")) if err_row else ""
    if not msg or "circuit breaker is open" in msg:
        return None
    k = _net_kind(msg)
    if k in ("refused", "closed"):
        return None
    if k == "dial" or "run out of available brokers" in msg:
        return "blackhole"
    return "silent" if k in ("read", "write") else None


def _unseen_waits(pre: dict | None, err_row: dict, figure: float | None, cadence: float | None,
                  coarse: bool) -> tuple[list[tuple[str, float, dict]], float, float, bool] | None:
    """The waits of a stall read from the application's last line before the error (``pre``) and the
    error, as (waits, idle seconds, stall seconds, whether the start is estimated); None when the
    error is no stall."""
    if pre is None or not pre.get("ok"):
        return None
    gap = _seconds(pre["ts"], err_row["ts"])
    # a single surfaced error is no stall: the send must be long by the application's own figure,
    # or the gap before the error must be long against the application's usual pace
    if figure is not None:
        if figure < UNSEEN_MIN_S:
            return None
    elif cadence is None or gap < max(UNSEEN_MIN_S, UNSEEN_CADENCE_FACTOR * cadence):
        return None
    if figure is not None:
        idle, inside_send = max(0.0, gap - figure), figure
    else:
        idle, inside_send = 0.0, gap  # nothing marks the write: the last line before the error bounds the start
    waits: list[tuple[str, float, dict]] = []
    if idle > 0:
        waits.append(("idle", idle, err_row))
    waits.append(("unseen", inside_send, err_row))
    start_estimated = inside_send > gap + (1.0 if coarse else 0.05)  # the application measured more than the gap shows
    return waits, idle, inside_send, start_estimated
