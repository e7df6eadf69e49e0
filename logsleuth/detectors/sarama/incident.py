"""One sarama incident read from its lines, for sarama.retry-redial-stall (``read_incident``): the
line before the chain, the chain's own lines and where the stall ends (an error returned to the
application, recovery, or the end of the log), the kind of outage, the broker and partitions, the
retry that delivered the message, and the shape of the chain the timing model needs.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from logsleuth.detectors.sarama.app_only import _unseen_kind
from logsleuth.detectors.sarama.chain import (
    OPENING_EVENTS, _brokers_seen, _delivering_retry, _first_line, _has, _log_starts_inside, _net_kind, _net_token,
)
from logsleuth.detectors.sarama.waits import _figure

LEADER_EVENTS = {"sarama_leader_retrying", "sarama_leader_abandon", "sarama_leader_flushing", "sarama_leader_normal", "sarama_leader_selected"}


@dataclass
class Incident:
    """What the lines of one incident say. ``body``: the chain's own lines (sarama's, and the errors
    handed to the application) over the whole incident; ``stall_rows``: the line before the chain
    (``pre``) and the body up to where the stall ends (``end_j``, ``ended_by``)."""

    path: str
    seg: pl.DataFrame  # the incident's records
    unseen: bool  # sarama's Logger was off: only the application's lines
    pre: dict | None
    body: list[dict]
    end_j: int
    ended_by: str  # "error", "recovery" or "end of the log"
    stall_rows: list[dict]
    err_row: dict | None
    figure: float | None  # the application's own measure of the failing send
    coarse: bool  # 1-second stamps
    inside: bool  # the log begins inside the chain
    kind: str  # "blackhole", "refused" or "silent"
    broker: str | None
    node: int | None
    seen_brokers: dict
    several: bool  # the chain names several brokers: the one-broker model does not apply
    delivered: dict | None  # the retry that got the message through
    first_error: str | None
    tps: list[str]
    first_tok: str | None  # the Go net error that ended the first wait
    shape: dict  # what the model needs of the chain's shape


def read_incident(path: str, df: pl.DataFrame, first: int, last: int, unseen: bool) -> Incident | None:
    """The incident of rows ``first``..``last`` of ``df``; None when it has no stamped lines or is no
    broker outage. ``unseen``: the file holds none of sarama's lines (its Logger was off), so only the
    application's own lines tell of the failing send."""
    seg = df.slice(first, last - first + 1)
    rows = seg.filter(pl.col("ts").is_not_null()).to_dicts()
    if not rows:
        return None
    start_i = next(i for i, r in enumerate(rows) if r["chain"])
    # the last line the process logged before the chain: in this segment, or the line before it
    if start_i > 0:
        pre = rows[start_i - 1]
    else:
        before = df.filter((pl.col("idx") < first) & pl.col("ts").is_not_null()).tail(1).to_dicts()
        pre = before[0] if before else None
    # the chain's own lines (sarama's, and the errors handed to the application): lines that other
    # parts of the service logged meanwhile would cut the waits in two
    body = [r for r in rows[start_i:] if not r["ok"]]
    end_j = next((j for j, r in enumerate(body) if r["app_error"]), None)
    ended_by = "error"
    if end_j is None:
        # no error reached the application's log: the stall ends when the leader is back for good
        # (the first [normal] / selected broker after the last failure line; a mute broker shows
        # [normal] between its retries too)
        last_fail = max(j for j, r in enumerate(body) if r["chain"])
        back = [j for j, r in enumerate(body) if j > last_fail and _has(r, "sarama_leader_normal", "sarama_leader_selected")]
        if back:
            end_j, ended_by = back[0], "recovery"
        else:
            end_j, ended_by = len(body) - 1, "end of the log"
    stall_rows = ([pre] if pre else []) + body[: end_j + 1]
    all_rows = body
    err_row = stall_rows[-1] if ended_by == "error" else None
    figure = _figure(err_row["msg"]) if err_row else None  # the application's own measure of the failing send

    coarse = all(r["ts"].microsecond == 0 for r in stall_rows)
    inside = not unseen and _log_starts_inside(df, body[0])

    # ---- kind and broker (the whole incident: with Retry.Max=0 the dials come after the first error)
    kinds = [_net_kind(r.get("error")) for r in all_rows if r.get("internal") and r.get("error")]
    app_kinds = [_net_kind(r.get("msg")) for r in all_rows if r.get("app_error")]
    if unseen:
        kind = _unseen_kind(err_row)
        if kind is None:
            return None
    elif "dial" in kinds:
        kind = "blackhole"
    elif "refused" in kinds or "closed" in kinds:
        kind = "refused"
    elif "read" in kinds or "write" in kinds:
        kind = "silent"
    elif "dial" in app_kinds:
        kind = "blackhole"
    elif "refused" in app_kinds or "closed" in app_kinds:
        kind = "refused"
    else:
        return None  # a retry chain without a broker outage (e.g. a leader move): not this finding's business
    addr_rows = [r for r in all_rows if _has(r, "sarama_dial_failed") and r.get("address")]
    addr_rows = addr_rows or [r for r in all_rows if _has(r, "sarama_connection_closed") and r.get("address")]
    addr_rows = addr_rows or [r for r in all_rows if _has(r, "sarama_metadata_fetch") and r.get("address")]
    broker = None
    if addr_rows:
        counts: dict[str, int] = {}
        for r in addr_rows:
            counts[r["address"]] = counts.get(r["address"], 0) + 1
        broker = max(counts, key=lambda a: (counts[a], -list(counts).index(a)))
    node = next((r["node"] for r in all_rows if _has(r, "sarama_broker_closing") and r.get("node") is not None), None)
    # the measured model is for one broker that is also the seed: a chain that names several brokers
    # (ids or addresses) is read from its gaps alone, and the model is not used for it
    seen_brokers = {"nodes": [], "addresses": [], "several": False} if unseen else _brokers_seen(all_rows)
    several = seen_brokers["several"]
    # a chain that ends in recovery: the retry that got the message through
    # (only when the application's next line after the recovery is a success, not another failure: a mute
    # broker also logs [normal] between its retries)
    delivered = _delivering_retry(body, end_j) if ended_by == "recovery" else None
    if delivered:
        nxt = df.filter((pl.col("idx") > body[end_j]["idx"]) & (pl.col("ok") | pl.col("chain"))).head(1).to_dicts()
        delivered = delivered | {"success_row": nxt[0]} if nxt and nxt[0]["ok"] else None
    first_error = next((r.get("error") for r in all_rows if r.get("internal") and _net_kind(r.get("error"))), None)
    if unseen:
        first_error = _first_line(err_row["msg"])

    # ---- partitions
    tps: list[str] = []
    for r in all_rows:
        tp = None
        if _has(r, *LEADER_EVENTS, "sarama_broker_retrying", "sarama_batch_retry", "sarama_batch_retry_failed") and r.get("topic") and r.get("partition") is not None:
            tp = f"{r['topic']}/{r['partition']}"
        if tp and tp not in tps:
            tps.append(tp)
    if not tps:
        topic = next((r.get("topic") for r in all_rows if r.get("topic")), None)
        tps = [f"{topic}/?" if topic else "unknown"]

    # ---- which wait the produce request's failure ended: the error text tells (reference §C.3)
    opening = body[0] if _has(body[0], *OPENING_EVENTS) else None
    first_tok = _net_token(opening.get("error")) if opening else None
    if unseen and kind == "silent":
        first_tok = _net_token(err_row["msg"])
    shape = {
        "first": "Net.WriteTimeout" if first_tok == "write tcp" else "Net.ReadTimeout",
        # the retry's metadata refresh first waits on the seed's idle connection (1.22.1); a chain seen
        # from its opening line without such a wait shows a sarama that closed it on the socket error
        "seed_read": not (opening is not None and not any(_has(r, "sarama_metadata_error") and _net_kind(r.get("error")) in ("read", "write") for r in all_rows)),
    }
    return Incident(
        path=path, seg=seg, unseen=unseen, pre=pre, body=body, end_j=end_j, ended_by=ended_by, stall_rows=stall_rows,
        err_row=err_row, figure=figure, coarse=coarse, inside=inside, kind=kind, broker=broker, node=node,
        seen_brokers=seen_brokers, several=several, delivered=delivered, first_error=first_error, tps=tps,
        first_tok=first_tok, shape=shape,
    )
