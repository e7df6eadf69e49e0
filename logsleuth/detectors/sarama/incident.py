"""One sarama incident read from its lines, for the sarama detectors: ``read_episode`` reads one
broker failure of the client model (client.py) — its lines, the line before them (the application's
last line on those partitions), and where its stall ends (the first error returned, else the
application's delivery on those partitions, else their recovery, else the end of the log);
``read_incident`` reads a stretch of the application's own lines when sarama's Logger was off. Both
then read the kind of outage, the broker and partitions, the retry that delivered the message, and
the shape of the chain the timing model needs.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from logsleuth.detectors.sarama.app_only import _unseen_kind
from logsleuth.detectors.sarama.chain import (
    OPENING_EVENTS, _brokers_seen, _delivering_retry, _first_line, _has, _log_starts_inside, _net_kind, _net_token,
)
from logsleuth.detectors.sarama.appfields import error_address, figure as app_figure, success_col
from logsleuth.detectors.sarama.client import Episode

DELIVERY_SLACK_S = 5.0  # a delivery this soon after the recovery line is the stall's true end (else the recovery is)
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
    end_bound: str = "error returned"  # what ends the stall: error returned | delivery | recovery | end of the log
    episode: Episode | None = None  # the client model's episode (broker state, partitions), Logger on
    delivery_row: dict | None = None  # the application's delivery that ended it (or came right after)
    delivery_latency: float | None = None  # that delivery's own latency figure
    tps_from: str | None = None  # "deliveries": the partitions inferred from the application's deliveries (none of the chain's lines names one)


def read_incident(path: str, df: pl.DataFrame, first: int, last: int, unseen: bool) -> Incident | None:
    """The incident of rows ``first``..``last`` of ``df`` (sarama's Logger off: the application's lines
    alone); None when it has no stamped lines or is no broker outage."""
    seg = df.slice(first, last - first + 1)
    rows = seg.filter(pl.col("ts").is_not_null()).to_dicts()
    if not rows:
        return None
    start_i = next(i for i, r in enumerate(rows) if r["chain"])
    # the application's last success before the chain (its last delivery; a status line of another
    # goroutine logged meanwhile says nothing about the send: appfields.success_col)
    before = df.filter((pl.col("idx") < rows[start_i]["idx"]) & pl.col("ts").is_not_null() & success_col(df)).tail(1).to_dicts()
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
    end_bound = {"error": "error returned", "recovery": "recovery", "end of the log": "end of the log"}[ended_by]
    return _read(path, df, seg, unseen, pre, body, end_j, ended_by, end_bound, None, None)


def read_episode(path: str, df: pl.DataFrame, ep: Episode) -> Incident | None:
    """The incident of one episode of the client model (client.py): the broker, the partitions it
    led and the lines of both; the stall ends at the first error returned for them, else at the
    application's delivery on one of them, else at their recovery ([normal] with the leader's
    connection up), else at the end of the log. None when the episode shows no stalled send (a lone
    dial or metadata failure: no partition retried, no produce request failed, no error returned)."""
    body = [r for r in ep.rows if r.get("ts") is not None]
    if not body or not any(r.get("ts") is not None for r in ep.fails) or ep.folded:
        return None
    produce = any(_has(r, *OPENING_EVENTS, *LEADER_EVENTS, "sarama_batch_retry", "sarama_batch_retry_failed") for r in body)
    if not (produce or ep.errors or ep.partitions):
        return None
    seg = df.filter(pl.col("idx").is_in([r["idx"] for r in body]))
    pre = _line_before(df, ep, body[0]["idx"])
    delivery = None
    if ep.delivery is not None:
        d = df.filter(pl.col("idx") == ep.delivery["idx"]).to_dicts()
        delivery = d[0] if d and d[0].get("ts") is not None else None
    end_j = next((j for j, r in enumerate(body) if r["app_error"]), None)
    extra = None
    if end_j is not None:
        ended_by, end_bound = "error", "error returned"
    else:
        rec_j = next((j for j, r in enumerate(body) if ep.recovery is not None and r["idx"] == ep.recovery["idx"]), None)
        if delivery is not None and (rec_j is None or (delivery["ts"] - body[rec_j]["ts"]).total_seconds() <= DELIVERY_SLACK_S):
            end_j = max((j for j, r in enumerate(body) if r["idx"] < delivery["idx"]), default=len(body) - 1)
            ended_by, end_bound, extra = "recovery", "delivery", delivery
        elif rec_j is not None:
            end_j, ended_by, end_bound = rec_j, "recovery", "recovery"
        else:
            end_j, ended_by, end_bound = len(body) - 1, "end of the log", "end of the log"
    inc = _read(path, df, seg, False, pre, body, end_j, ended_by, end_bound, extra, ep)
    if inc is not None and delivery is not None:
        inc.delivery_row = delivery
        inc.delivery_latency = app_figure(delivery.get("msg"), delivery.get("raw"))
    return inc


def _line_before(df: pl.DataFrame, ep: Episode, first_idx: int) -> dict | None:
    """The last stamped line before the chain that is not about another partition or broker: the
    application's last delivery on the episode's partitions (or one that names none), or sarama's last
    line about that broker or those partitions. The application's neutral lines (appfields.py: a status
    or access line of another goroutine) tell nothing about the send, so they do not bound it."""
    tps = set(ep.tps)
    parts = {int(tp.rpartition("/")[2]) for tp in tps if tp.rpartition("/")[2].isdigit()}
    topics = {tp.rpartition("/")[0] for tp in tps}
    tp_col = pl.concat_str([pl.col("topic"), pl.lit("/"), pl.col("partition").cast(pl.String)])
    other_app = (pl.col("ok") | pl.col("app_error")) & pl.col("app_partition").is_not_null() & (
        ~pl.col("app_partition").is_in(list(parts)) | (pl.col("app_topic").is_not_null() & ~pl.col("app_topic").is_in(list(topics)))
    )
    # with several partitions in the log, an application line that names none may be another partition's
    several = df.filter(pl.col("topic").is_not_null() & pl.col("partition").is_not_null()).select("topic", "partition").unique().height > 1
    if several:
        other_app = other_app | ((pl.col("ok") | pl.col("app_error")) & pl.col("app_partition").is_null())
    other_sarama = pl.col("internal") & (
        (pl.col("topic").is_not_null() & pl.col("partition").is_not_null() & ~tp_col.is_in(list(tps)))
        | (pl.col("node").is_not_null() & (pl.col("node") >= 0) & (pl.lit(ep.broker.node is not None)) & (pl.col("node") != (ep.broker.node if ep.broker.node is not None else -2)))
        | (pl.col("address").is_not_null() & pl.lit(bool(ep.broker.addresses)) & ~pl.col("address").is_in(list(ep.broker.addresses)))
    )
    neutral = pl.col("ok") & ~pl.col("delivery")
    before = df.filter(
        (pl.col("idx") < first_idx) & pl.col("ts").is_not_null() & ~neutral & ~other_app.fill_null(False) & ~other_sarama.fill_null(False)
    ).tail(1).to_dicts()
    return before[0] if before else None


def _read(path: str, df: pl.DataFrame, seg: pl.DataFrame, unseen: bool, pre: dict | None, body: list[dict], end_j: int,
          ended_by: str, end_bound: str, extra: dict | None, ep: Episode | None) -> Incident | None:
    """What the lines of an incident say, once its lines and its end are known. ``extra``: the line
    that ends the stall when it is not one of the chain's (the application's delivery)."""
    stall_rows = ([pre] if pre else []) + body[: end_j + 1] + ([extra] if extra else [])
    all_rows = body
    err_row = stall_rows[-1] if ended_by == "error" else None
    fig = app_figure(err_row["msg"], err_row.get("raw")) if err_row else None  # the application's own measure of the failing send

    coarse = all(r["ts"].microsecond == 0 for r in stall_rows)
    inside = not unseen and _log_starts_inside(df, body[0])

    # ---- kind and broker (the whole incident: with Retry.Max=0 the dials come after the first error)
    kind = _kind(all_rows, unseen, err_row)
    if kind is None:
        return None  # no broker outage (e.g. a leader move), or an error that is not sarama's wait
    broker, node = _broker(all_rows, unseen, err_row, ep)
    # the measured model is for one broker that is also the seed: a chain that names several brokers
    # (ids or addresses) is read from its gaps alone, and the model is not used for it
    seen_brokers: dict = {"nodes": [], "addresses": [], "several": False} if unseen else _brokers_seen(all_rows)
    several = seen_brokers["several"]
    # a chain that ends in recovery: the retry that got the message through
    # (only when the application's next line after the recovery is a success, not another failure: a mute
    # broker also logs [normal] between its retries)
    delivered = _delivering_retry(body, end_j) if ended_by == "recovery" else None
    if delivered:
        nxt = df.filter((pl.col("idx") > body[end_j]["idx"]) & (pl.col("delivery") | pl.col("chain"))).head(1).to_dicts()
        delivered = delivered | {"success_row": nxt[0]} if nxt and nxt[0]["delivery"] else None
    first_error = next((r.get("error") for r in all_rows if r.get("internal") and _net_kind(r.get("error"))), None)
    if unseen:
        assert err_row is not None, "an unseen chain has a kind only from its returned error (_unseen_kind)"
        first_error = _first_line(err_row["msg"])
    tps, tps_from = _partitions(df, body, stall_rows, ep)
    first_tok, shape = _shape(body, unseen, kind, err_row)
    return Incident(
        path=path, seg=seg, unseen=unseen, pre=pre, body=body, end_j=end_j, ended_by=ended_by, stall_rows=stall_rows,
        err_row=err_row, figure=fig, coarse=coarse, inside=inside, kind=kind, broker=broker, node=node,
        seen_brokers=seen_brokers, several=several, delivered=delivered, first_error=first_error, tps=tps,
        first_tok=first_tok, shape=shape, end_bound=end_bound, episode=ep, tps_from=tps_from,
    )


def _kind(all_rows: list[dict], unseen: bool, err_row: dict | None) -> str | None:
    """blackhole, refused or silent, as the chain's net errors tell it (the returned error's with
    sarama's Logger off); None for a retry chain without a broker outage (e.g. a leader move)."""
    if unseen:
        return _unseen_kind(err_row)
    kinds = [_net_kind(r.get("error")) for r in all_rows if r.get("internal") and r.get("error")]
    app_kinds = [_net_kind(r.get("msg")) for r in all_rows if r.get("app_error")]
    if "dial" in kinds:
        return "blackhole"
    if "refused" in kinds or "closed" in kinds:
        return "refused"
    if "read" in kinds or "write" in kinds:
        return "silent"
    if "dial" in app_kinds:
        return "blackhole"
    if "refused" in app_kinds or "closed" in app_kinds:
        return "refused"
    return None


def _broker(all_rows: list[dict], unseen: bool, err_row: dict | None, ep: Episode | None) -> tuple[str | None, int | None]:
    """The broker's address (the one sarama dialled most) and id."""
    addr_rows = [r for r in all_rows if _has(r, "sarama_dial_failed") and r.get("address")]
    addr_rows = addr_rows or [r for r in all_rows if _has(r, "sarama_connection_closed") and r.get("address")]
    addr_rows = addr_rows or [r for r in all_rows if _has(r, "sarama_metadata_fetch") and r.get("address")]
    broker = None
    if addr_rows:
        counts: dict[str, int] = {}
        for r in addr_rows:
            counts[r["address"]] = counts.get(r["address"], 0) + 1
        broker = max(counts, key=lambda a: (counts[a], -list(counts).index(a)))
    if broker is None and unseen:  # sarama's Logger off: the address the returned error names, if any
        broker = error_address(_first_line(err_row["msg"]) if err_row else None)
    node = next((r["node"] for r in all_rows if _has(r, "sarama_broker_closing") and r.get("node") is not None), None)
    if ep is not None:  # the client model knows the broker by all its names
        broker = broker if broker in ep.broker.addresses else ep.broker.name if (ep.broker.addresses or ep.broker.ips) else broker
        node = ep.broker.node if ep.broker.node is not None else node
    return broker, node


def _partitions(df: pl.DataFrame, body: list[dict], stall_rows: list[dict], ep: Episode | None) -> tuple[list[str], str | None]:
    """The partitions (an episode's: those that abandoned or retried on its broker, else those it led),
    and "deliveries" when they are inferred from the application's deliveries."""
    tps: list[str] = list(ep.tps) if ep is not None else []
    for r in body if ep is None else []:
        tp = None
        if _has(r, *LEADER_EVENTS, "sarama_broker_retrying", "sarama_batch_retry", "sarama_batch_retry_failed") and r.get("topic") and r.get("partition") is not None:
            tp = f"{r['topic']}/{r['partition']}"
        if tp and tp not in tps:
            tps.append(tp)
    tps_from = None
    if not tps:
        tps = _quiet_partitions(df, body, stall_rows)
        tps_from = "deliveries" if tps else None
    if not tps:
        topic = next((r.get("topic") or r.get("app_topic") for r in body if r.get("topic") or r.get("app_topic")), None)
        tps = [f"{topic}/?" if topic else "unknown"]
    return tps, tps_from


def _shape(body: list[dict], unseen: bool, kind: str, err_row: dict | None) -> tuple[str | None, dict]:
    """Which wait the produce request's failure ended (the error text tells: reference §C.3), and
    what the model needs of the chain's shape."""
    opening = body[0] if _has(body[0], *OPENING_EVENTS) else None
    first_tok = _net_token(opening.get("error")) if opening else None
    if unseen and kind == "silent":
        assert err_row is not None, "an unseen chain is silent only by its returned error (_unseen_kind)"
        first_tok = _net_token(err_row["msg"])
    shape = {
        "first": "Net.WriteTimeout" if first_tok == "write tcp" else "Net.ReadTimeout",
        # the retry's metadata refresh first waits on the seed's idle connection (1.22.1); a chain seen
        # from its opening line without such a wait shows a sarama that closed it on the socket error
        "seed_read": not (opening is not None and not any(_has(r, "sarama_metadata_error") and _net_kind(r.get("error")) in ("read", "write") for r in body)),
    }
    return first_tok, shape


def _quiet_partitions(df: pl.DataFrame, body: list[dict], stall_rows: list[dict]) -> list[str]:
    """When no line of the chain names a partition (sarama's Logger off, and the failing sends name
    none): the partitions the application's own deliveries named before the chain and never during
    the stall — the ones that stopped getting messages while it lasted. Topic from those deliveries
    (or the failing sends) when they name one, else "partition N". None when the deliveries name no
    partition, every partition delivered before also got deliveries during the stall, or several did
    and none got any (a sender blocked as a whole tells nothing about which one stalled)."""
    if "app_partition" not in df.columns or not body or not stall_rows:
        return []
    first_idx, end_idx = body[0]["idx"], stall_rows[-1]["idx"]
    named = df.filter(pl.col("delivery") & pl.col("app_partition").is_not_null()).select("idx", "app_topic", "app_partition")
    before = named.filter(pl.col("idx") < first_idx)
    during = named.filter((pl.col("idx") > first_idx) & (pl.col("idx") < end_idx))
    seen = set(before["app_partition"].to_list())
    quiet = sorted(seen - set(during["app_partition"].to_list()))
    if not quiet or (len(quiet) > 1 and len(quiet) == len(seen)):
        return []  # several partitions before and none at all during: a blocked sender, not which partition stalled
    topics = {t for t in before.filter(pl.col("app_partition").is_in(quiet))["app_topic"].to_list() if t}
    topics = topics or {r.get("app_topic") for r in body if r.get("app_error") and r.get("app_topic")}
    topic = next(iter(topics)) if len(topics) == 1 else None
    return [f"{topic}/{p}" if topic else f"partition {p}" for p in quiet]
