"""kafka.broker-unreachable, and the model of a Kafka producer incident the other Kafka detectors
share (kafka_delivery, kafka_buffer). See docs/findings/kafka.broker-unreachable.md.

The model, built from the events table with Polars (no loop over events):

  client     the producer a line belongs to: the ``[Producer clientId=…]`` prefix of Kafka's own
             lines, else the ``kafka-producer-network-thread | <clientId>`` thread name (callbacks
             run on it), else unknown. Everything is linked per input file (``path``) and client.
  trouble    Kafka's own lines (they carry the client id) that show a drain problem: failed
             connections, disconnects, request timeouts, cancelled in-flight requests, produce
             retries, invalid-metadata warnings, metadata errors, rebootstraps.
  episode    trouble lines of one (path, client) with no gap longer than ``EPISODE_GAP``, nor
             longer than ``RECOVERY_QUIET`` between two different nodes (the next broker of a
             rolling restart). Its node is the broker most of its node-level lines name (failed
             connections first); its window is the first to the last trouble line.
  kind       ``broker-unreachable`` (connections to the node failed), ``broker-disconnects`` (the
             node dropped connections or timed requests out, but no connection failed),
             ``produce-errors`` (retries / metadata errors that name no node).
  batch      expired batches: identical ``Expiring N record(s) for T-P:E ms …`` lines of one file
             closer than ``DUP_GAP`` are one batch of N records (Kafka hands every record's
             callback the same exception, and applications log it once per record); K identical
             lines count ceil(K / N) batches, since one batch cannot produce more than N.
  link       a batch belongs to the episode of its file (and client, when known) that started
             before it expired and was still going when it was created (``SLACK`` tolerance);
             among several, the one whose node the retries named for that partition, then the one
             with failed connections, then the busiest.
  runs       buffer exhaustions (failed send()s) of one file with no gap longer than ``EPISODE_GAP``.
             A run belongs to the latest episode of its file (and client, when known) that started
             at or before its first exhaustion and was still going within max.block.ms (+ ``SLACK``)
             of it.
  waits      metadata-wait timeouts (``Topic T not present in metadata after N ms.``, the
             partition form, and the pre-2.0 ``Failed to update metadata after N ms.``): send()
             blocked N ms (max.block.ms) for the topic's metadata and failed,
             the record was never accepted. One per log record; linked like a run, with N as the block.
  loss       per (file, episode or none): the expired records / batches linked to it, the failed
             send()s of the runs linked to it and the metadata-wait timeouts linked to it. Every
             finding that states such a number takes it from here (``loss_of``), so
             kafka.broker-unreachable, kafka.delivery-timeout and kafka.buffer-exhausted cannot
             disagree about the same outage.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

import polars as pl

from logsleuth.detectors.base import Context, Detector, evidence, fmt_duration, fmt_time, safe
from logsleuth.findings import Evidence, Finding

EPISODE_GAP = dt.timedelta(minutes=2)  # a quieter stretch than this ends an episode
DUP_GAP = dt.timedelta(seconds=30)  # identical expiry lines closer than this are one batch
SLACK = dt.timedelta(seconds=30)  # tolerance between a batch's lifetime and an episode window
RECOVERY_QUIET = dt.timedelta(minutes=1)  # the file goes on this long without trouble: recovered
SHORT_BLIP = dt.timedelta(seconds=10)
# an unreachable broker that came back within this, with nothing lost, is context (low), not an alert:
# a routine (rolling) restart; half the default delivery.timeout.ms
LONG_OUTAGE = dt.timedelta(minutes=1)
DEFAULT_REQUEST_TIMEOUT_MS = 30_000
LEGACY_EXPIRY = ("last append", "batch creation plus linger time", "last attempt plus backoff time")  # <=2.0 texts
DEFAULT_DELIVERY_TIMEOUT_MS = 120_000  # since 2.1 (KIP-91)
MAX_MS = 30 * 86_400_000  # numbers beyond this in a log line are not durations we compute with
DEFAULT_MAX_BLOCK_MS = 60_000

UNREACHABLE = ("connection_failed", "connect_error", "node_connect_timeout", "auth_terminated")
DROPPED = ("node_request_timeout", "request_cancelled")
SOFT = ("node_disconnected", "bootstrap_disconnected")
NODE_EVENTS = UNREACHABLE + DROPPED + SOFT
RETRY_EVENTS = ("produce_retry", "produce_invalid_metadata")
METADATA_EVENTS = ("metadata_error", "rebootstrap")
TROUBLE = NODE_EVENTS + RETRY_EVENTS + METADATA_EVENTS
NOT_LEADER = ("NOT_LEADER_OR_FOLLOWER", "NOT_LEADER_FOR_PARTITION")
QUOTE_COLS = ("path", "line", "line_end", "ts", "raw", "msg")  # what evidence() / quote() read from a row

REFERENCES = [
    "KIP-91 (Kafka 2.1): delivery.timeout.ms bounds the time a record may wait for delivery; default 120000 ms",
    "Kafka producer configs: retries, retry.backoff.ms, reconnect.backoff.ms, reconnect.backoff.max.ms, request.timeout.ms",
]
LEGACY_REFERENCE = (
    "Kafka <=2.0 producer (ProducerBatch): a batch expires in the accumulator once it has waited longer than "
    "request.timeout.ms (default 30000 ms); default retries 0"
)


# ----------------------------------------------------------------------------- model


@dataclass
class Model:
    kev: pl.DataFrame  # Kafka events with client / err_node
    trouble: pl.DataFrame  # trouble lines with their episode id (ep)
    episodes: pl.DataFrame  # one row per episode
    batches: pl.DataFrame  # one row per expired-batch cluster, with the linked episode (ep, may be null)
    runs: pl.DataFrame  # one row per run of buffer exhaustions, with the linked episode (ep, may be null)
    waits: pl.DataFrame  # one row per metadata-wait timeout (a failed send()), with the linked episode (ep, may be null)
    loss: dict  # (path, ep or None) -> expired records / batches and failed sends linked to it (see loss_of)


def kafka_events(ctx: Context) -> pl.DataFrame:
    ev = ctx.events.filter(pl.col("system") == "kafka")
    from_thread = pl.col("thread").str.extract(r"\| ([^|\s]+)\s*$", 1)
    named = pl.coalesce(pl.col("error_message"), pl.col("detail")).str.extract(r"\bnode (-?\d+)\b", 1).cast(pl.Int64, strict=False)
    return ev.with_columns(
        client=pl.coalesce(pl.col("client_id"), from_thread),
        err_node=pl.when(pl.col("event").is_in(list(RETRY_EVENTS))).then(named).otherwise(None),
    )


_last: tuple[pl.DataFrame, Model | None] | None = None  # (events table, its model): three detectors share one build


def build(ctx: Context) -> Model | None:
    global _last
    if _last is not None and _last[0] is ctx.events:
        return _last[1]
    kev = kafka_events(ctx)
    model = None
    if kev.height:
        trouble, episodes = _episodes(kev)
        batches = _batches(kev)
        if batches.height and episodes.height:
            batches = _link(batches, episodes, trouble)
        else:
            batches = batches.with_columns(ep=pl.lit(None, dtype=pl.Int64), named_match=pl.lit(False))
        runs = _runs(kev, episodes)
        waits = _waits(kev, episodes)
        model = Model(kev, trouble, episodes, batches, runs, waits, _loss(batches, runs, waits))
    _last = (ctx.events, model)
    return model


def _episodes(kev: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    ev = pl.col("event")
    tr = (
        kev.filter(pl.col("client_id").is_not_null() & pl.col("ts").is_not_null() & ev.is_in(list(TROUBLE)))
        .with_columns(
            tnode=pl.when(ev.is_in(list(NODE_EVENTS))).then(pl.col("node")).otherwise(pl.col("err_node")),
            unreachable=ev.is_in(list(UNREACHABLE)),
            dropped=ev.is_in(list(DROPPED)),
            soft=ev.is_in(list(SOFT)),
            retry=ev == "produce_retry",
            named=ev.is_in(list(RETRY_EVENTS)) & pl.col("err_node").is_not_null(),
        )
        .sort(["path", "client", "ts", "line"])
    )
    if tr.height == 0:
        return tr.with_columns(ep=pl.lit(None, dtype=pl.Int64)), pl.DataFrame()
    # a new episode after a quiet stretch longer than EPISODE_GAP, or longer than RECOVERY_QUIET (the
    # first one was over) when the node changes across it: the next broker of a rolling restart
    by = ["path", "client"]
    gap = pl.col("ts").diff().over(by)
    hard = pl.when(pl.col("unreachable") | pl.col("dropped") | pl.col("named")).then(pl.col("tnode"))
    node_before = hard.shift(1).forward_fill().over(by)
    node_after = hard.backward_fill().over(by)
    switch = ((gap > RECOVERY_QUIET) & (node_before != node_after)).fill_null(False)
    tr = tr.with_columns(ep=(gap.is_null() | (gap > EPISODE_GAP) | switch).cum_sum().cast(pl.Int64))

    # per (episode, node): how the node failed; the episode's node is the worst one
    per_node = (
        tr.filter(pl.col("tnode").is_not_null())
        .group_by(["ep", "tnode"])
        .agg(
            n_unreachable=pl.col("unreachable").sum(),
            n_dropped=pl.col("dropped").sum(),
            n_named=pl.col("named").sum(),
            n_soft=pl.col("soft").sum(),
            address=pl.col("address").filter(pl.col("address").str.contains("/")).first(),
            address_any=pl.col("address").drop_nulls().first(),
            node_from=pl.col("ts").min(),
            node_to=pl.col("ts").max(),
        )
        .with_columns(hard=pl.col("n_unreachable") + pl.col("n_dropped") + pl.col("n_named"))
        .filter(pl.col("hard") > 0)
        .sort(["ep", "n_unreachable", "hard", "n_soft", "tnode"], descending=[False, True, True, True, False])
    )
    primary = per_node.group_by("ep", maintain_order=True).agg(
        node=pl.col("tnode").first(),
        address=pl.coalesce(pl.col("address"), pl.col("address_any")).first(),
        node_from=pl.col("node_from").first(),
        node_to=pl.col("node_to").first(),
        other_nodes=pl.col("tnode").slice(1),
    )
    errors = (
        tr.filter(pl.col("retry") & pl.col("error").is_not_null())
        .group_by(["ep", "error"]).agg(n=pl.len(), first=pl.col("ts").min())
        .sort(["ep", "n", "first"], descending=[False, True, False])
        .group_by("ep", maintain_order=True).agg(retries_by_error=pl.struct(pl.col("error"), pl.col("n")))
    )
    eps = (
        tr.group_by(["ep", "path", "client"])
        .agg(
            **{"from": pl.col("ts").min()},
            to=pl.col("ts").max(),
            lines=pl.len(),
            failed_connections=(pl.col("unreachable") & (pl.col("event") != "auth_terminated")).sum(),
            auth_failures=(pl.col("event") == "auth_terminated").sum(),
            dns_failures=((pl.col("event") == "connect_error") & pl.col("msg").str.contains("UnknownHostException")).sum(),
            request_timeouts=(pl.col("event") == "node_request_timeout").sum(),
            cancelled_requests=(pl.col("event") == "request_cancelled").sum(),
            disconnects=pl.col("soft").sum(),
            retries=pl.col("retry").sum(),
            not_leader_retries=(pl.col("retry") & pl.col("error").is_in(list(NOT_LEADER))).sum(),
            timeout_retries=(pl.col("retry") & (pl.col("error") == "REQUEST_TIMED_OUT")).sum(),
            network_retries=(pl.col("retry") & (pl.col("error") == "NETWORK_EXCEPTION")).sum(),
            invalid_metadata=(pl.col("event") == "produce_invalid_metadata").sum(),
            metadata_errors=(pl.col("event") == "metadata_error").sum(),
            rebootstraps=(pl.col("event") == "rebootstrap").sum(),
            named_tps=pl.col("topic_partition").filter(pl.col("named")).unique().sort(),
        )
        .join(primary, on="ep", how="left")
        .join(errors, on="ep", how="left")
        .with_columns(
            host=pl.col("address").str.extract(r"^([^/:]+)", 1),
            kind=pl.when(pl.col("node").is_null()).then(pl.lit("produce-errors"))
            .when(pl.col("failed_connections") + pl.col("auth_failures") > 0).then(pl.lit("broker-unreachable"))
            .otherwise(pl.lit("broker-disconnects")),
            duration_s=((pl.col("to") - pl.col("from")).dt.total_milliseconds() / 1000.0).round(3),
        )
        .sort(["from", "path"])
    )
    return tr, eps


def _batches(kev: pl.DataFrame) -> pl.DataFrame:
    key = ["path", "topic_partition", "records", "elapsed_ms"]
    exp = kev.filter(
        (pl.col("event") == "batch_expired") & (pl.col("records") > 0) & pl.col("topic_partition").is_not_null()
        & pl.col("elapsed_ms").is_not_null()
    )
    # a new batch: the first line of its key, or one that comes DUP_GAP after the previous (lines without a
    # time stay with the batch before them)
    first = pl.int_range(pl.len()).over(key) == 0
    gap = pl.col("ts").diff().over(key)
    exp = exp.sort([*key, "ts", "line"], nulls_last=True).with_columns(
        batch=(first | (gap > DUP_GAP).fill_null(False)).cum_sum().cast(pl.Int64)
    )
    return (
        exp.group_by("batch")
        .agg(
            pl.col("path").first(),
            pl.col("topic_partition").first(),
            pl.col("topic").first(),
            pl.col("partition").first(),
            pl.col("records").first(),
            pl.col("elapsed_ms").first(),
            detail=pl.col("detail").first(),
            client=pl.col("client").drop_nulls().first(),
            lines=pl.len(),
            first_seen=pl.col("ts").min(),
            last_seen=pl.col("ts").max(),
            first_row=pl.struct(*QUOTE_COLS).first(),
            last_row=pl.struct(*QUOTE_COLS).last(),
        )
        .with_columns(
            batches=pl.max_horizontal(pl.lit(1), (pl.col("lines") / pl.col("records")).ceil().cast(pl.Int64)),
            created=pl.col("first_seen") - pl.duration(milliseconds=pl.col("elapsed_ms").clip(0, MAX_MS).cast(pl.Int64)),
        )
        .with_columns(total_records=pl.col("batches") * pl.col("records"))
        .sort(["first_seen", "path", "topic_partition"])
    )


def _link(batches: pl.DataFrame, eps: pl.DataFrame, tr: pl.DataFrame) -> pl.DataFrame:
    """Each batch's episode: same file, compatible client, started before the expiry and still
    going when the batch was created."""
    named = (
        tr.filter(pl.col("named") & pl.col("topic_partition").is_not_null())
        .select("path", "topic_partition", named_node="err_node").unique()
        .with_columns(named_match=pl.lit(True))
    )
    cand = (
        batches.select("batch", "path", "client", "topic_partition", "first_seen", "created")
        .join(eps.select("ep", "path", ep_client="client", ep_from="from", ep_to="to", ep_node="node",
                         ep_failed="failed_connections", ep_lines="lines"), on="path", how="inner")
        .filter(
            (pl.col("client").is_null() | (pl.col("client") == pl.col("ep_client")))
            & (pl.col("ep_from") <= pl.col("first_seen"))
            & (pl.col("ep_to") >= pl.col("created") - SLACK)
        )
        .join(named, left_on=["path", "topic_partition", "ep_node"], right_on=["path", "topic_partition", "named_node"], how="left")
        .with_columns(pl.col("named_match").fill_null(False))
        .sort(["batch", "named_match", "ep_failed", "ep_lines", "ep_from"], descending=[False, True, True, True, True])
        .group_by("batch", maintain_order=True)
        .agg(pl.col("ep").first(), pl.col("named_match").first())
    )
    return batches.join(cand, on="batch", how="left").with_columns(pl.col("named_match").fill_null(False))


def _runs(kev: pl.DataFrame, eps: pl.DataFrame) -> pl.DataFrame:
    """Runs of buffer exhaustions per file, each linked to the drain problem that filled the buffer."""
    bx = kev.filter(pl.col("event") == "buffer_exhausted")
    first = pl.int_range(pl.len()).over("path") == 0
    gap = pl.col("ts").diff().over("path")
    bx = bx.sort(["path", "ts", "line"], nulls_last=True).with_columns(
        run=(first | (gap > EPISODE_GAP).fill_null(False)).cum_sum().cast(pl.Int64)
    )
    runs = (
        bx.group_by("run", maintain_order=True)
        .agg(
            pl.col("path").first(),
            count=pl.len(),
            first_seen=pl.col("ts").min(),
            last_seen=pl.col("ts").max(),
            max_block_ms=pl.col("max_block_ms").drop_nulls().mode().sort().first(),
            max_block_values=pl.col("max_block_ms").drop_nulls().unique().sort(),
            exception=pl.col("exception").drop_nulls().mode().sort().first(),
            buffer_memory=pl.col("total_bytes").max(),
            available_min=pl.col("available_bytes").min(),
            request_bytes=pl.col("bytes").max(),
            client=pl.col("client").drop_nulls().first(),
            first_row=pl.struct(*QUOTE_COLS).first(),
            last_row=pl.struct(*QUOTE_COLS).last(),
        )
        .with_columns(
            block=pl.duration(milliseconds=pl.col("max_block_ms").fill_null(DEFAULT_MAX_BLOCK_MS).clip(0, MAX_MS).cast(pl.Int64))
        )
    )
    if runs.height == 0 or eps.height == 0:
        return runs.with_columns(ep=pl.lit(None, dtype=pl.Int64)).sort(["first_seen", "path"], nulls_last=True)
    cand = (
        runs.select("run", "path", "client", "first_seen", "block")
        .join(eps.select("ep", "path", ep_client="client", ep_from="from", ep_to="to",
                         ep_failed="failed_connections", ep_lines="lines"), on="path", how="inner")
        .filter(
            (pl.col("client").is_null() | (pl.col("client") == pl.col("ep_client")))
            & (pl.col("ep_from") <= pl.col("first_seen"))
            & (pl.col("ep_to") >= pl.col("first_seen") - pl.col("block") - SLACK)
        )
        .sort(["run", "ep_from", "ep_failed", "ep_lines"], descending=[False, True, True, True])
        .group_by("run", maintain_order=True)
        .agg(pl.col("ep").first())
    )
    return runs.join(cand, on="run", how="left").sort(["first_seen", "path"], nulls_last=True)


def _waits(kev: pl.DataFrame, eps: pl.DataFrame) -> pl.DataFrame:
    """Metadata-wait timeouts (send() failed after max.block.ms without the topic's metadata), one per
    log record, each linked to the latest episode of its file (and client, when known) that started at
    or before it and was still going within the wait (the N ms of the text, + SLACK) before it."""
    mw = (
        kev.filter(pl.col("event") == "metadata_wait_timeout")
        .unique(["path", "line"], keep="first", maintain_order=True)
        .sort(["path", "ts", "line"], nulls_last=True)
        .select(
            "path", "line", "ts", "client", "topic", "partition",
            wait_ms=pl.col("elapsed_ms"),
            row=pl.struct(*QUOTE_COLS),
        )
        .with_row_index("wait")
        .with_columns(
            block=pl.duration(milliseconds=pl.col("wait_ms").fill_null(DEFAULT_MAX_BLOCK_MS).clip(0, MAX_MS).cast(pl.Int64))
        )
    )
    if mw.height == 0 or eps.height == 0:
        return mw.with_columns(ep=pl.lit(None, dtype=pl.Int64))
    cand = (
        mw.select("wait", "path", "client", "ts", "block")
        .join(eps.select("ep", "path", ep_client="client", ep_from="from", ep_to="to",
                         ep_failed="failed_connections", ep_lines="lines"), on="path", how="inner")
        .filter(
            (pl.col("client").is_null() | (pl.col("client") == pl.col("ep_client")))
            & (pl.col("ep_from") <= pl.col("ts"))
            & (pl.col("ep_to") >= pl.col("ts") - pl.col("block") - SLACK)
        )
        .sort(["wait", "ep_from", "ep_failed", "ep_lines"], descending=[False, True, True, True])
        .group_by("wait", maintain_order=True)
        .agg(pl.col("ep").first())
    )
    return mw.join(cand, on="wait", how="left").sort(["path", "ts", "line"], nulls_last=True)


def _loss(batches: pl.DataFrame, runs: pl.DataFrame, waits: pl.DataFrame) -> dict:
    """(path, ep or None) -> what was lost while it lasted: the one computation behind every
    'N records in M batches expired', 'send() failed K times' (buffer) and 'J send() calls failed
    waiting for metadata' of the Kafka findings."""
    out: dict = {}

    def slot(path: str, ep) -> dict:
        key = (path, None if ep is None else int(ep))
        return out.setdefault(key, _empty_loss())

    if batches.height:
        per = batches.group_by(["path", "ep"]).agg(
            records=pl.col("total_records").sum(),
            batches=pl.col("batches").sum(),
            lines=pl.col("lines").sum(),
            tps=pl.col("topic_partition").unique().sort(),
            first=pl.col("first_seen").min(),
            last=pl.col("last_seen").max(),
        )
        for r in per.iter_rows(named=True):
            d = slot(r["path"], r["ep"])
            d.update(expired_records=int(r["records"]), expired_batches=int(r["batches"]), expired_log_records=int(r["lines"]),
                     expired_partitions=list(r["tps"]), expired_first=r["first"], expired_last=r["last"])
    if runs.height:
        per = runs.group_by(["path", "ep"]).agg(n=pl.col("count").sum(), k=pl.len())
        for r in per.iter_rows(named=True):
            d = slot(r["path"], r["ep"])
            d.update(failed_sends=int(r["n"]), exhaustion_runs=int(r["k"]))
    if waits.height:
        per = waits.group_by(["path", "ep"]).agg(n=pl.len(), topics=pl.col("topic").drop_nulls().unique().sort())
        for r in per.iter_rows(named=True):
            d = slot(r["path"], r["ep"])
            d.update(metadata_timeouts=int(r["n"]), metadata_topics=list(r["topics"]))
    return out


def _empty_loss() -> dict:
    return {"expired_records": 0, "expired_batches": 0, "expired_log_records": 0, "expired_partitions": [],
            "expired_first": None, "expired_last": None, "failed_sends": 0, "exhaustion_runs": 0,
            "metadata_timeouts": 0, "metadata_topics": []}


def loss_of(m: Model, path: str, ep: int | None) -> dict:
    """What was lost in ``path`` during episode ``ep`` (None: expiries / exhaustions linked to no
    episode): expired_records, expired_batches, expired_log_records, expired_partitions,
    expired_first / expired_last, failed_sends (buffer exhaustions), exhaustion_runs,
    metadata_timeouts (send()s that failed waiting for metadata) and metadata_topics."""
    d = m.loss.get((path, None if ep is None else int(ep)))
    if d is None:
        d = _empty_loss()
    return dict(d)


def waits_of(m: Model, path: str, ep: int | None) -> pl.DataFrame:
    """The metadata-wait timeouts counted by ``loss_of(m, path, ep)['metadata_timeouts']``."""
    w = m.waits.filter(pl.col("path") == path)
    return w.filter(pl.col("ep").is_null() if ep is None else (pl.col("ep") == int(ep)))


def refusals(m: Model, ep: dict) -> pl.DataFrame:
    """Topic authorization failures and invalid-topic responses Kafka logged for the episode's client
    during it: send() to those topics fails too (not a drain problem, but not 'nothing failed')."""
    return m.kev.filter(
        (pl.col("path") == ep["path"])
        & pl.col("event").is_in(["topic_authorization_failed", "metadata_invalid_topics"])
        & (pl.col("client").is_null() | (pl.col("client") == ep["client"]))
        & (pl.col("ts") >= ep["from"] - SLACK)
        & (pl.col("ts") <= ep["to"] + SLACK)
    )


def pre_2_1(m: Model, path: str) -> bool:
    """The Kafka texts of this file are a client older than 2.1 (no delivery.timeout.ms): a <=2.0
    expiry text, a failed connection without its address or a pre-2.0 metadata wait, and no text of
    a later client (the 2.1+ expiry, a failed connection with its address, NOT_LEADER_OR_FOLLOWER,
    'Error Message:')."""
    k = m.kev.filter(pl.col("path") == path)
    ev = pl.col("event")
    old = k.filter(
        ((ev == "batch_expired") & pl.col("detail").is_in(list(LEGACY_EXPIRY)))
        | ((ev == "connection_failed") & pl.col("client_id").is_not_null() & pl.col("address").is_null())
        | ((ev == "metadata_wait_timeout") & pl.col("topic").is_null())  # 'Failed to update metadata after N ms.'
    ).height
    if not old:
        return False
    new = k.filter(
        ((ev == "batch_expired") & (pl.col("detail") == "batch creation"))
        | ((ev == "connection_failed") & pl.col("address").is_not_null())
        | ((ev == "produce_retry") & ((pl.col("error") == "NOT_LEADER_OR_FOLLOWER") | pl.col("error_message").is_not_null()))
    ).height
    return new == 0


def unlinked_expiries(m: Model, path: str, since: dt.datetime, until: dt.datetime) -> dict:
    """The expired batches of ``path`` linked to no episode that were first logged between
    ``since`` and ``until``: a stated subset of ``loss_of(m, path, None)``."""
    b = m.batches.filter(
        (pl.col("path") == path) & pl.col("ep").is_null() & (pl.col("first_seen") >= since) & (pl.col("first_seen") <= until)
    )
    return {
        "expired_records": int(b["total_records"].sum()) if b.height else 0,
        "expired_batches": int(b["batches"].sum()) if b.height else 0,
        "expired_first": b["first_seen"].min() if b.height else None,
        "expired_last": b["last_seen"].max() if b.height else None,
    }


def lost_text(records: int, batches: int) -> str:
    """'209 records in 8 batches': the one wording of an expiry total, used by every finding."""
    return f"{plural(records, 'record')} in {plural(batches, 'batch', 'batches')}"


# ----------------------------------------------------------------------------- shared prose / evidence


def quote(row: dict, needle: str, note: str = "") -> Evidence:
    """The line of a record that holds ``needle`` (a regex): the record's first line, or the
    continuation line (a ``Caused by:``, the exception line) where the Kafka text actually is."""
    msg = row.get("msg") or ""
    lines = msg.split("\n")
    spans_lines = row.get("line_end") is not None and int(row["line_end"]) > int(row["line"])
    for i, text in enumerate(lines):
        if re.search(needle, text):
            # the i-th message line is the i-th file line only when the record spans file lines
            # (a JSON envelope's stack trace is one file line holding several message lines)
            if i == 0 or not spans_lines or int(row["line"]) + i > int(row["line_end"]):
                return evidence(row, note)
            return Evidence(path=row["path"], line=int(row["line"]) + i, text=text.rstrip(), ts=row.get("ts"), note=note)
    return evidence(row, note)


def node_label(ep: dict) -> str:
    node = ep.get("node")
    if node is None:
        return "no broker named"
    label = f"broker node {node}"
    if node < 0:
        label = f"bootstrap broker (node {node})"
    if ep.get("address"):
        label += f" ({safe(ep['address'])})"
    return label


def client_label(ep: dict) -> str:
    return f"producer {safe(ep['client'])} in {safe(ep['path'])}" if ep.get("client") else f"the producer in {safe(ep['path'])}"


def retry_summary(ep: dict) -> str:
    items = ep.get("retries_by_error") or []
    if not items:
        return "no produce retries"
    return plural(ep["retries"], "produce retry", "produce retries") + " (" + ", ".join(f"{safe(x['error'])} ×{x['n']}" for x in items) + ")"


def plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def connection_failures(ep: dict) -> str:
    """The failed connections of an episode, in the words episode_facts uses for them."""
    parts = []
    if ep["failed_connections"] or not ep.get("auth_failures"):
        parts.append(plural(ep["failed_connections"], "failed connection attempt"))
    if ep.get("auth_failures"):
        parts.append(plural(ep["auth_failures"], "connection") + " terminated during authentication")
    return " and ".join(parts)


def episode_facts(ep: dict) -> str:
    parts = []
    if ep["failed_connections"]:
        parts.append(plural(ep["failed_connections"], "failed connection attempt"))
    if ep.get("auth_failures"):
        parts.append(plural(ep["auth_failures"], "connection") + " terminated during authentication")
    if ep["request_timeouts"]:
        parts.append(plural(ep["request_timeouts"], "request-timeout disconnect"))
    if ep["cancelled_requests"]:
        parts.append(plural(ep["cancelled_requests"], "in-flight request") + " cancelled")
    if ep["disconnects"]:
        parts.append(plural(ep["disconnects"], "disconnect"))
    if ep["retries"]:
        parts.append(retry_summary(ep))
    bits = []
    if ep["invalid_metadata"]:
        bits.append(plural(ep["invalid_metadata"], "invalid-metadata warning"))
    if ep["metadata_errors"]:
        bits.append(plural(ep["metadata_errors"], "metadata error"))
    if ep["rebootstraps"]:
        bits.append(plural(ep["rebootstraps"], "rebootstrap"))
    if bits:
        parts.append(" and ".join(bits))
    return ", ".join(parts) if parts else "no details"


def cause_of(ep: dict) -> dict:
    """The ``cause`` object of a finding that links to an episode."""
    return {
        "kind": ep["kind"],
        "node": ep.get("node"),
        "address": ep.get("address"),
        "host": ep.get("host"),
        "from": ep["from"],
        "to": ep["to"],
        "duration_s": ep["duration_s"],
        "path": ep["path"],
        "client_id": ep.get("client"),
        "failed_connections": ep["failed_connections"],
        "disconnects": ep["disconnects"],
        "request_timeouts": ep["request_timeouts"],
        "retries": ep["retries"],
        "retries_by_error": {x["error"]: x["n"] for x in (ep.get("retries_by_error") or [])},
        "metadata_errors": ep["metadata_errors"],
        "invalid_metadata": ep["invalid_metadata"],
    }


def episode_quotes(m: Model, ep: dict, limit_retries: int = 3) -> list[Evidence]:
    """The lines a human would quote for an episode: where it starts, the first failed connection,
    the first retry of each error code, the first metadata error, where it ends."""
    rows = m.trouble.filter(pl.col("ep") == ep["ep"]).sort(["ts", "line"])
    if rows.height == 0:
        return []
    out: dict[int, Evidence] = {}

    def add(r: dict | None, note: str) -> None:
        if r is not None and int(r["line"]) not in out:
            out[int(r["line"])] = evidence(r, note)

    add(rows.row(0, named=True), "the trouble starts")
    node = ep.get("node")
    if node is not None:
        fc = rows.filter(pl.col("unreachable") & (pl.col("tnode") == node))
        add(fc.row(0, named=True) if fc.height else None, f"first failed connection to node {node}")
    retries = rows.filter(pl.col("retry")).unique("error", keep="first", maintain_order=True).head(limit_retries)
    for r in retries.iter_rows(named=True):
        add(r, f"first {r['error']} retry")
    for event, note in (("metadata_error", "first metadata error"), ("produce_invalid_metadata", "first metadata refresh request")):
        x = rows.filter(pl.col("event") == event)
        add(x.row(0, named=True) if x.height else None, note)
    add(rows.row(-1, named=True), "last trouble line (end of the window)")
    return sorted(out.values(), key=lambda e: (e.ts or dt.datetime.min.replace(tzinfo=dt.timezone.utc), e.line))


METADATA_TEXT = r"(?:not present in metadata|Failed to update metadata) after \d+ ms"


def topics_named(topics: list) -> str:
    if not topics:
        return "the topic"
    shown = ", ".join(safe(t) for t in topics[:4]) + (f" and {len(topics) - 4} more" if len(topics) > 4 else "")
    return ("topic " if len(topics) == 1 else "topics ") + shown


def metadata_text(waits: pl.DataFrame) -> str:
    """'topic audit-events, after 60000 ms': what the metadata-wait timeouts of a finding name."""
    topics = waits.get_column("topic").drop_nulls().unique().sort().to_list()
    ms = waits.get_column("wait_ms").drop_nulls().unique().sort().to_list()
    after = ", after " + " / ".join(f"{x:.0f}" for x in ms[:3]) + " ms" if ms else ""
    return topics_named(topics) + after


REFUSED_KINDS = {  # event -> (one, many): how the refused-topic lines are named in prose
    "topic_authorization_failed": ("topic authorization failure", "topic authorization failures"),
    "metadata_invalid_topics": ("invalid-topic response", "invalid-topic responses"),
}


def refused_topics(refused: pl.DataFrame) -> list[str]:
    """The topic names of refused-topic lines ('[orders, payments]' -> orders, payments)."""
    t = refused.get_column("topics").drop_nulls().str.strip_chars("[] ").str.split(",").explode().str.strip_chars()
    return t.filter(t.str.len_chars() > 0).unique().sort().to_list()


def names_text(names: list) -> str:
    return ", ".join(safe(t) for t in names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")


def refused_text(refused: pl.DataFrame) -> str:
    """'1 topic authorization failure (orders, payments) and 1 invalid-topic response (orders!)'."""
    parts = []
    for event, (one, many) in REFUSED_KINDS.items():
        r = refused.filter(pl.col("event") == event)
        if r.height:
            names = refused_topics(r)
            parts.append(plural(r.height, one, many) + (f" ({names_text(names)})" if names else ""))
    return " and ".join(parts)


def file_end(ctx: Context, path: str) -> dt.datetime | None:
    rep = ctx.input(path)
    return rep.last_ts if rep is not None else None


def next_trouble(m: Model, ep: dict) -> dt.datetime | None:
    """The client's next trouble line after the episode (the start of its next episode), if any."""
    later = m.trouble.filter((pl.col("path") == ep["path"]) & (pl.col("client") == ep["client"]) & (pl.col("ts") > ep["to"]))
    return later.get_column("ts").min() if later.height else None


def quiet_after(ctx: Context, m: Model, ep: dict) -> float | None:
    """Seconds without trouble of this client after the episode's last trouble line: up to its next
    trouble, else to the end of the file (None: the log's end is unknown)."""
    end = next_trouble(m, ep) or file_end(ctx, ep["path"])
    if end is None:
        return None
    return round(max(0.0, (end - ep["to"]).total_seconds()), 3)


def recovered(ctx: Context, m: Model, ep: dict) -> tuple[bool, str]:
    quiet = quiet_after(ctx, m, ep)
    nxt = next_trouble(m, ep)
    if quiet is None:
        return False, "the log's end is unknown"
    if nxt is not None:
        ok = quiet >= RECOVERY_QUIET.total_seconds()
        return ok, (f"no trouble logged for {fmt_duration(quiet)} after {fmt_time(ep['to'])}, until this client's next "
                    f"trouble at {fmt_time(nxt)}")
    if quiet >= RECOVERY_QUIET.total_seconds():
        return True, f"no trouble logged in the {fmt_duration(quiet)} the log goes on after {fmt_time(ep['to'])}"
    return False, f"the log ends {fmt_duration(quiet)} after the last trouble line: it may still be going on"


def same_node_elsewhere(m: Model, ep: dict) -> list[dict]:
    """Episodes of other files/clients that name the same node (and host, when both are known)
    with an overlapping window."""
    if ep.get("node") is None:
        return []
    o = m.episodes.filter(
        (pl.col("node") == ep["node"])
        & ((pl.col("path") != ep["path"]) | (pl.col("client") != ep["client"]))
        & (pl.col("from") <= ep["to"] + SLACK)
        & (pl.col("to") >= ep["from"] - SLACK)
    )
    if ep.get("host"):
        o = o.filter(pl.col("host").is_null() | (pl.col("host") == ep["host"]))
    return list(o.iter_rows(named=True))


# ----------------------------------------------------------------------------- the finding


def run(ctx: Context) -> list[Finding]:
    m = build(ctx)
    if m is None or m.episodes.height == 0:
        return []
    eps = m.episodes.filter(pl.col("kind") != "produce-errors")
    return [_finding(ctx, m, ep, loss_of(m, ep["path"], ep["ep"])) for ep in eps.iter_rows(named=True)]


def _finding(ctx: Context, m: Model, ep: dict, loss: dict) -> Finding:
    expired, expired_batches, failed_sends = loss["expired_records"], loss["expired_batches"], loss["failed_sends"]
    meta_fails = loss["metadata_timeouts"]
    waits = waits_of(m, ep["path"], ep["ep"])
    refused = refusals(m, ep)
    legacy = pre_2_1(m, ep["path"])
    unreachable = ep["kind"] == "broker-unreachable"
    span = fmt_duration(ep["duration_s"])
    ok, recovery = recovered(ctx, m, ep)
    others = same_node_elsewhere(m, ep)
    who = client_label(ep)
    what = node_label(ep)
    lost = bool(expired or failed_sends or meta_fails)
    long_outage = ep["duration_s"] >= LONG_OUTAGE.total_seconds()

    # high: something was lost on this client; medium: a long outage, one still going at the end of the
    # log, or sends refused for other reasons meanwhile; low: brief, over, nothing failed (a restart)
    if lost:
        severity = "high"
    elif (unreachable and (long_outage or not ok)) or refused.height:
        severity = "medium"
    else:
        severity = "low"

    verb = "unreachable" if unreachable else "dropping connections / timing out requests"
    title = f"{what[0].upper() + what[1:]} {verb} for {span} ({safe(ep['client'] or '?')} in {safe(ep['path'])})"
    facts = episode_facts(ep)
    if unreachable:
        story = (
            f"{who} could not reach {what} from {fmt_time(ep['from'])} to {fmt_time(ep['to'])} ({span}): {facts}."
        )
        if ep["dns_failures"]:
            story += f" {ep['dns_failures']} of the connection errors are UnknownHostException: the host name did not resolve (DNS)."
        if ep["auth_failures"] and not ep["failed_connections"]:
            story += " The connections were cut during authentication: a firewall or TLS problem, not a dead broker."
    else:
        story = (
            f"{who} kept connecting to {what}, but the node dropped connections or let requests time out from "
            f"{fmt_time(ep['from'])} to {fmt_time(ep['to'])} ({span}): {facts}. No connection attempt failed: the broker was "
            "up but slow, overloaded or restarting, or something on the path cut long requests."
        )
    if expired:
        story += (
            f" While it lasted the producer could not drain its batches: {lost_text(expired, expired_batches)} "
            "expired undelivered (see kafka.delivery-timeout)."
        )
    if failed_sends:
        story += f" The accumulator filled up and send() failed {plural(failed_sends, 'time')} (see kafka.buffer-exhausted)."
    if meta_fails:
        story += (
            f" {plural(meta_fails, 'send() call')} failed waiting for metadata ({metadata_text(waits)}): send() blocked "
            "for max.block.ms without learning the partitions' leaders and threw a TimeoutException. "
            + ("That record was" if meta_fails == 1 else "These records were")
            + " never accepted by the producer: not delivered unless the application retried them."
        )
    if not lost and refused.height:
        story += (
            f" Nothing expired and no send() timed out during this outage, but Kafka logged {refused_text(refused)} "
            "for this client meanwhile: send() to those topics failed" + (f"; {recovery}." if ok else f", and {recovery}.")
        )
    elif not lost:
        story += " Nothing expired and no send() failed on this client: Kafka's retries covered it" + (
            f"; {recovery}." if ok else f", but {recovery}."
        )
        if severity == "low" and unreachable:
            story += (
                f" Shorter than {fmt_duration(LONG_OUTAGE.total_seconds())}, over, and nothing lost: what a broker restart "
                "(a rolling restart, say) looks like from a client, so it is reported as context (low)."
            )
    else:
        story += f" {recovery[0].upper() + recovery[1:]}."
    if others:
        story += " The same node failed at the same time for " + ", ".join(
            sorted({f"{safe(o['client'] or '?')} in {safe(o['path'])}" for o in others})
        ) + ": the broker or the network to it, not this client."

    conf = 0.55
    reasons = []
    if unreachable:
        conf += 0.2
        reasons.append(f"+ Kafka's own NetworkClient logged {connection_failures(ep)} to node {ep['node']}")
    else:
        conf += 0.1
        reasons.append(f"+ node {ep['node']} dropped connections or timed requests out, but no connection attempt failed")
    if ep["failed_connections"] >= 3 or ep["duration_s"] >= SHORT_BLIP.total_seconds():
        conf += 0.05
        reasons.append(f"+ repeated over {span}, not a single blip")
    if ep["named_tps"]:
        conf += 0.05
        reasons.append(f"+ the produce retries name node {ep['node']} themselves (Error Message: Disconnected from node …)")
    if others:
        conf += 0.1
        reasons.append(f"+ {plural(len({(o['path'], o['client']) for o in others}), 'other client')} saw the same node fail in the same window")
    if not ok:
        conf -= 0.05
        reasons.append("- " + recovery + " (the end of the outage is not in the logs)")

    ruled_out = []
    if unreachable:
        ruled_out.append(
            f"A slow broker that stayed reachable: connection attempts to node {ep['node']} failed outright "
            f"({ep['failed_connections']} times)" + ("" if ep["timeout_retries"] else ", and no REQUEST_TIMED_OUT retries")
        )
    else:
        ruled_out.append(f"A broker that was down: every reconnection to node {ep['node']} succeeded (no 'could not be established')")
    if not ep["not_leader_retries"] and not ep["metadata_errors"]:
        ruled_out.append("A leader change alone: no NOT_LEADER_OR_FOLLOWER / NOT_LEADER_FOR_PARTITION retries and no metadata errors")
    if not ep["auth_failures"]:
        ruled_out.append("TLS/SASL, or a firewall cutting the handshake: no 'terminated during authentication' lines")
    if not ep["dns_failures"] and unreachable:
        ruled_out.append("A DNS failure: no UnknownHostException among the connection errors")
    if not others and (m.episodes.get_column("path").n_unique() > 1):
        ruled_out.append("A cluster-wide outage: the other client logs given show no failures of this node in this window")

    remediation = []
    node = ep.get("node")
    if unreachable and node is not None and node < 0:
        remediation.append(
            f"Node {node} is a bootstrap address (bootstrap.servers), not a broker id: this client could not reach "
            f"{safe(ep.get('address') or ep.get('host') or 'it (address not logged)')} to fetch the cluster's metadata from "
            f"{fmt_time(ep['from'])} to {fmt_time(ep['to'])}. Check that bootstrap.servers lists brokers reachable from "
            "this client (host name and DNS, port and listener — TLS vs PLAINTEXT, the brokers' advertised.listeners — "
            "security groups, firewall, load balancer), and the brokers' own logs for that window."
        )
    elif unreachable:
        remediation.append(
            f"Find out why node {ep['node']} ({safe(ep.get('address') or ep.get('host') or 'address not logged')}) refused or "
            f"dropped connections from {fmt_time(ep['from'])} to {fmt_time(ep['to'])}: the broker's own log (server.log) and "
            "GC log for that window, the host (reboot, disk, OOM killer), and the network path from this client (security "
            "groups, firewall, DNS, load balancer)."
        )
    else:
        remediation.append(
            f"Look at broker node {ep['node']} for that window: request handler saturation, long GC pauses, disk latency; "
            "request.timeout.ms (default 30000 ms) is how long the client waits before it disconnects and retries."
        )
    if node is None or node >= 0:  # a bootstrap address leads no partition
        remediation.append(
            "Partitions led by an unreachable broker stay unwritable until leadership moves: with replication.factor ≥ 3 and "
            "min.insync.replicas = 2 the controller can elect another in-sync replica; a partition whose only in-sync replica "
            "is on that node cannot move (unless unclean.leader.election.enable, which loses data)."
        )
    if meta_fails:
        block = waits["wait_ms"].drop_nulls()
        remediation.append(
            "send() blocks for up to max.block.ms (default 60000 ms"
            + (f"; {int(block.max())} ms here" if block.len() else "")
            + ") waiting for a topic's metadata (and for buffer space), then throws a TimeoutException and the record is "
            "never queued: restore the path to the brokers first (raising max.block.ms only delays the failure while no "
            f"broker answers, and blocks the calling thread longer), make sure {topics_named(loss['metadata_topics'])} "
            "exists (the same text appears when it does not and auto-creation is off), and handle the exception from "
            "send() / its future in the application: retry later or persist to an outbox."
        )
    if refused.height:
        denied = refused.filter(pl.col("event") == "topic_authorization_failed")
        invalid = refused.filter(pl.col("event") == "metadata_invalid_topics")
        todo = []
        if denied.height:
            todo.append(
                f"'Topic authorization failed' ({names_text(refused_topics(denied)) or 'topics not named'}): this client's "
                "principal lacks the ACLs to produce there; grant WRITE and DESCRIBE on those topics (kafka-acls --add "
                "--producer --allow-principal … --topic …) or fix the topic the application sends to"
            )
        if invalid.height:
            todo.append(
                f"'invalid topics' ({names_text(refused_topics(invalid)) or 'topics not named'}): not a legal topic name "
                "(letters, digits, '.', '_' and '-', at most 249 characters); fix the name the application sends to"
            )
        remediation.append(
            "Kafka refused these topics whatever the broker's state, so restoring the broker does not fix them: "
            + "; ".join(todo) + "."
        )
    if legacy:
        remediation.append(
            "This is a client older than 2.1 (its texts say so): there is no delivery.timeout.ms. The producer retries a "
            "failed produce request only `retries` times (default 0 before 2.1) and a batch expires once it has waited "
            "longer than request.timeout.ms (default 30000 ms) in the accumulator; reconnect.backoff.ms / "
            "reconnect.backoff.max.ms pace the reconnect attempts. Upgrading the client to 2.1+ (KIP-91) gives one "
            "budget per record, delivery.timeout.ms (default 120000 ms), with retries included. Make sure the "
            "application handles the failure it gets (callback exception / failed future)."
        )
    else:
        remediation.append(
            "The producer retries by itself (retries, default Integer.MAX_VALUE since 2.1) until delivery.timeout.ms (default "
            "120000 ms) runs out; reconnect.backoff.ms / reconnect.backoff.max.ms (50 ms / 1000 ms) pace the reconnect attempts. "
            "Make sure the application handles the failure it gets after that (callback exception / failed future)."
        )

    evid = episode_quotes(m, ep)
    if waits.height:
        rows_ = list(waits.get_column("row"))
        evid.append(quote(rows_[0], METADATA_TEXT, "send() failed: no metadata within max.block.ms (record never accepted)"))
        if len(rows_) > 1:
            evid.append(quote(rows_[-1], METADATA_TEXT, "last send() that failed waiting for metadata"))
    for r in refused.head(1).iter_rows(named=True):
        evid.append(evidence(r, "sends to these topics fail"))
    evid.sort(key=lambda e: (e.ts is None, e.ts, e.line))
    first_seen, last_seen = ep["from"], ep["to"]
    subject = {
        "path": ep["path"],
        "client_id": ep.get("client"),
        "node": ep.get("node"),
        "address": ep.get("address"),
        "duration_s": ep["duration_s"],  # the window itself is the finding's first_seen / last_seen (and cause.from / cause.to)
        "failed_connections": ep["failed_connections"],
        "expired_records": expired,
        "buffer_exhausted": failed_sends,
        "metadata_timeouts": meta_fails,
        "recovered": ok,
    }
    return Finding(
        id="kafka.broker-unreachable",
        severity=severity,
        title=title,
        root_cause=story,
        confidence=min(conf, 0.95),
        confidence_reasons=reasons,
        first_seen=first_seen,
        last_seen=last_seen,
        subjects=[subject],
        cause=cause_of(ep),
        evidence=evid,
        remediation=remediation,
        references=list(REFERENCES) + ([LEGACY_REFERENCE] if legacy else []),
        ruled_out=ruled_out,
        details={
            "host": ep.get("host"),
            "disconnects": ep["disconnects"],
            "request_timeouts": ep["request_timeouts"],
            "cancelled_requests": ep["cancelled_requests"],
            "auth_failures": ep["auth_failures"],
            "retries": ep["retries"],
            "retries_by_error": {x["error"]: x["n"] for x in (ep.get("retries_by_error") or [])},
            "metadata_refreshes": ep["invalid_metadata"] + ep["metadata_errors"] + ep["rebootstraps"],
            "metadata_errors": ep["metadata_errors"],
            "invalid_metadata": ep["invalid_metadata"],
            "rebootstraps": ep["rebootstraps"],
            "other_nodes": list(ep.get("other_nodes") or []),
            "partitions_named_by_retries": list(ep.get("named_tps") or []),
            "node_window": {"from": ep.get("node_from"), "to": ep.get("node_to")},
            "recovery": recovery,
            "quiet_after_s": quiet_after(ctx, m, ep),
            "expired_batches": expired_batches,
            "expired_partitions": loss["expired_partitions"],
            "metadata_timeout_topics": loss["metadata_topics"],
            "refused_sends": refused.height,
            "pre_2_1": legacy,
            "same_node_elsewhere": [{"path": o["path"], "client_id": o["client"], "from": o["from"], "to": o["to"]} for o in others],
        },
    )


DETECTOR = Detector(
    id="kafka.broker-unreachable",
    title="Kafka producer: a broker node unreachable or dropping requests",
    systems=("kafka",),
    run=run,
    doc="docs/findings/kafka.broker-unreachable.md",
)
