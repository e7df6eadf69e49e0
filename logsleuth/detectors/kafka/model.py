"""The model of a Kafka producer incident that the Kafka detectors share (kafka_outage,
kafka_delivery, kafka_buffer; kafka_callback reads its events), and the queries they ask of it.
See docs/findings/kafka.broker-unreachable.md.

Built from the events table with Polars (no loop over events):

  role       Kafka's NetworkClient / Metadata texts are shared by producers, consumers and admin
             clients; their prefix names the kind (``client_role``: ``[Consumer clientId=…,
             groupId=…]``). Only producer lines and lines without the prefix (an old client, role
             unknown) are read: a consumer's or an admin client's trouble is no producer's episode.
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
             lines of one logger count ceil(K / N) batches, since one batch cannot produce more
             than N callbacks. Several loggers logging the same records (Spring Kafka's
             LoggingProducerListener and the application's own callback) each see the same
             batches: the cluster counts the largest of their ceil(K_logger / N), not their sum.
             Lines without a time stamp are one batch when they are no more than
             ``POSITION_WINDOW_LINES`` apart in their file; such a batch whose lines name no logger
             counts once (several loggers quoting it cannot be told from one logger quoting several).
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

from logsleuth.detectors.words import Prose

import datetime as dt
from dataclasses import dataclass

import polars as pl

from logsleuth.detectors.base import Context, keep, sat_mul, sat_sum
from logsleuth.detectors.facts import Window, absence

EPISODE_GAP = dt.timedelta(minutes=2)  # a quieter stretch than this ends an episode
DUP_GAP = dt.timedelta(seconds=30)  # identical expiry lines closer than this are one batch
POSITION_WINDOW_LINES = 100  # identical expiry lines without a time stamp this close in the file are one batch
SLACK = dt.timedelta(seconds=30)  # tolerance between a batch's lifetime and an episode window
RECOVERY_QUIET = dt.timedelta(minutes=1)  # the file goes on this long without trouble: recovered
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
QUOTE_COLS = ("path", "file", "line", "line_end", "ts", "raw", "msg")  # what evidence() / quote() read from a row


def quote_row() -> pl.Expr:
    """A struct of the QUOTE_COLS the frame has (events carry no ``raw``: evidence() fetches it later)."""
    return pl.struct(pl.col("^(" + "|".join(QUOTE_COLS) + ")$"))


@dataclass
class Model:
    kev: pl.DataFrame  # Kafka events with client / err_node
    trouble: pl.DataFrame  # trouble lines with their episode id (ep)
    episodes: pl.DataFrame  # one row per episode
    batches: pl.DataFrame  # one row per expired-batch cluster, with the linked episode (ep, may be null)
    runs: pl.DataFrame  # one row per run of buffer exhaustions, with the linked episode (ep, may be null)
    waits: pl.DataFrame  # one row per metadata-wait timeout (a failed send()), with the linked episode (ep, may be null)
    nets: pl.DataFrame  # one row per send failed with a NetworkException (no retry left), with the linked episode (ep, may be null)
    loss: dict  # (path, ep or None) -> expired records / batches and failed sends linked to it (see loss_of)


PRODUCER_ROLES = ("Producer",)  # client_role values of producer lines; null (no prefix, an old client) is kept too


def kafka_events(ctx: Context) -> pl.DataFrame:
    """The Kafka events of producers: lines whose prefix names a Consumer or an AdminClient (the
    NetworkClient and Metadata texts are shared) are left out, so a consumer's trouble is never read
    as a producer's; lines without the prefix (client_role null) stay."""
    ev = ctx.system("kafka")
    if "client_role" in ev.columns:
        ev = keep(ev, pl.col("client_role").is_null() | pl.col("client_role").is_in(list(PRODUCER_ROLES)))
    from_thread = pl.col("thread").cast(pl.String).str.extract(r"\| ([^|\s]+)\s*$", 1)
    named = pl.coalesce(pl.col("error_message"), pl.col("detail")).str.extract(r"\bnode (-?\d+)\b", 1).cast(pl.Int64, strict=False)
    client = pl.coalesce(pl.col("client_id"), from_thread)
    # a log in which no line names its client (a client older than 1.0 without thread names, such as
    # the console producer): one unnamed producer, "" (the texts say "the producer in LOG")
    unnamed = client.is_null().all().over("path")
    return ev.with_columns(
        client=pl.coalesce(client, pl.when(unnamed).then(pl.lit(""))),
        err_node=pl.when(pl.col("event").is_in(list(RETRY_EVENTS))).then(named).otherwise(None),
    )


def build(ctx: Context) -> Model | None:
    """The producer incident model of this run's events, built once and shared by the detectors that
    read it (``ctx.memo``)."""
    return ctx.memo(("kafka.model",), lambda: _build(ctx))


def _build(ctx: Context) -> Model | None:
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
        nets = _waits(kev, episodes, "send_failed_network")
        model = Model(kev, trouble, episodes, batches, runs, waits, nets, _loss(batches, runs, waits, nets))
    return model


def _trouble(kev: pl.DataFrame) -> pl.DataFrame:
    """The client lines that show trouble with a broker, each with its node (``tnode``) and how it failed."""
    ev = pl.col("event")
    tr = kev.filter(
        (pl.col("client_id").is_not_null() | (pl.col("client") == "")) & pl.col("ts").is_not_null() & ev.is_in(list(TROUBLE))
    )
    # 'Bootstrap broker host:port disconnected' without a node id is the 0.10/0.11 text. Those clients
    # log it when a connection to a bootstrap broker is dropped before any metadata came back, and log
    # a refused connection only at DEBUG: so it is their one WARN trace of a cluster they cannot use,
    # counted as a hard failure of that bootstrap node (newer clients log the connection failures
    # themselves; their bootstrap disconnects stay soft). Bootstrap nodes are -1, -2, ... in the order of
    # bootstrap.servers; the log does not say which is which, so they are numbered by first appearance.
    bdrop = (ev == "bootstrap_disconnected") & pl.col("node").is_null() & pl.col("address").is_not_null()
    tr = tr.with_columns(_bdrop=bdrop)
    if tr.select(pl.col("_bdrop").any()).item():
        ids = (
            tr.filter(pl.col("_bdrop")).sort(["path", "ts", "file", "line"]).select("path", "address").unique(maintain_order=True)
            .with_columns(_bnode=-(pl.int_range(pl.len()).over("path") + 1).cast(pl.Int64))
        )
        tr = tr.join(ids, on=["path", "address"], how="left", maintain_order="left")
    else:
        tr = tr.with_columns(_bnode=pl.lit(None, dtype=pl.Int64))
    tr = (
        tr.with_columns(
            tnode=pl.when(pl.col("_bdrop")).then(pl.col("_bnode"))
            .when(ev.is_in(list(NODE_EVENTS))).then(pl.col("node")).otherwise(pl.col("err_node")),
            unreachable=ev.is_in(list(UNREACHABLE)),
            dropped=ev.is_in(list(DROPPED)),
            soft=ev.is_in(list(SOFT)) & ~pl.col("_bdrop"),
            bootstrap_drop=pl.col("_bdrop"),
            retry=ev == "produce_retry",
            named=ev.is_in(list(RETRY_EVENTS)) & pl.col("err_node").is_not_null(),
        )
        .drop("_bdrop", "_bnode")
        .sort(["path", "client", "ts", "file", "line"])
    )
    return tr


def _episodes(kev: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    tr = _trouble(kev)
    if tr.height == 0:
        return tr.with_columns(ep=pl.lit(None, dtype=pl.Int64)), pl.DataFrame()
    # a new episode after a quiet stretch longer than EPISODE_GAP, or longer than RECOVERY_QUIET (the
    # first one was over) when the node changes across it: the next broker of a rolling restart
    by = ["path", "client"]
    gap = pl.col("ts").diff().over(by)
    hard = pl.when(pl.col("unreachable") | pl.col("dropped") | pl.col("named") | pl.col("bootstrap_drop")).then(pl.col("tnode"))
    node_before = hard.shift(1).forward_fill().over(by)
    node_after = hard.backward_fill().over(by)
    switch = ((gap > RECOVERY_QUIET) & (node_before != node_after)).fill_null(False)
    tr = tr.with_columns(ep=(gap.is_null() | (gap > EPISODE_GAP) | switch).cum_sum().cast(pl.Int64))
    return tr, _episode_rows(tr, _primary_nodes(tr))


def _primary_nodes(tr: pl.DataFrame) -> pl.DataFrame:
    """Per episode, its node: of the nodes that failed hard in it, the worst."""
    # per (episode, node): how the node failed; the episode's node is the worst one
    per_node = (
        tr.filter(pl.col("tnode").is_not_null())
        .group_by(["ep", "tnode"], maintain_order=True)
        .agg(
            n_unreachable=pl.col("unreachable").sum(),
            n_dropped=pl.col("dropped").sum(),
            n_named=pl.col("named").sum(),
            n_soft=pl.col("soft").sum(),
            n_bootstrap=pl.col("bootstrap_drop").sum(),
            address=pl.col("address").filter(pl.col("address").str.contains("/")).first(),
            address_any=pl.col("address").drop_nulls().first(),
            node_from=pl.col("ts").min(),
            node_to=pl.col("ts").max(),
        )
        .with_columns(hard=pl.col("n_unreachable") + pl.col("n_dropped") + pl.col("n_named") + pl.col("n_bootstrap"))
        .filter(pl.col("hard") > 0)
        .sort(["ep", "n_unreachable", "hard", "n_soft", "tnode"], descending=[False, True, True, True, False])
    )
    return per_node.group_by("ep", maintain_order=True).agg(
        node=pl.col("tnode").first(),
        address=pl.coalesce(pl.col("address"), pl.col("address_any")).first(),
        node_from=pl.col("node_from").first(),
        node_to=pl.col("node_to").first(),
        other_nodes=pl.col("tnode").slice(1),
    )


def _episode_rows(tr: pl.DataFrame, primary: pl.DataFrame) -> pl.DataFrame:
    """One row per episode: its window, its counts by kind of trouble, its node."""
    errors = (
        tr.filter(pl.col("retry") & pl.col("error").is_not_null())
        .group_by(["ep", "error"], maintain_order=True).agg(n=pl.len(), first=pl.col("ts").min())
        .sort(["ep", "n", "first"], descending=[False, True, False])
        .group_by("ep", maintain_order=True).agg(retries_by_error=pl.struct(pl.col("error"), pl.col("n")))
    )
    eps = (
        tr.group_by(["ep", "path", "client"], maintain_order=True)
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
            bootstrap_drops=pl.col("bootstrap_drop").sum(),
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
            .when(pl.col("failed_connections") + pl.col("auth_failures") + pl.col("bootstrap_drops") > 0).then(pl.lit("broker-unreachable"))
            .otherwise(pl.lit("broker-disconnects")),
            duration_s=((pl.col("to") - pl.col("from")).dt.total_milliseconds() / 1000.0).round(3),
        )
        .sort(["from", "path"])
    )
    return eps


def _batches(kev: pl.DataFrame) -> pl.DataFrame:
    key = ["path", "topic_partition", "records", "elapsed_ms"]
    exp = kev.filter(
        (pl.col("event") == "batch_expired") & (pl.col("records") > 0) & pl.col("topic_partition").is_not_null()
    )  # elapsed_ms may be null: the 0.10 text names no time ('expired due to timeout while requesting metadata')
    # a new batch: the first line of its key, or one that comes DUP_GAP after the previous. Lines without a
    # time are told apart by their place instead: one that comes more than POSITION_WINDOW_LINES after the
    # previous line of its key in its file starts a new batch.
    timed = exp.filter(pl.col("ts").is_not_null()).sort([*key, "ts", "file", "line"]).with_columns(
        _new=(pl.int_range(pl.len()).over(key) == 0) | (pl.col("ts").diff().over(key) > DUP_GAP).fill_null(False)
    )
    untimed = exp.filter(pl.col("ts").is_null()).sort([*key, "file", "line"]).with_columns(
        _new=(pl.int_range(pl.len()).over([*key, "file"]) == 0) | (pl.col("line").diff().over([*key, "file"]) > POSITION_WINDOW_LINES).fill_null(False)
    )
    exp = pl.concat([timed, untimed], how="vertical_relaxed").with_columns(batch=pl.col("_new").cum_sum().cast(pl.Int64)).drop("_new")
    # each logger logs a failed record at most once: LoggingProducerListener and the application's
    # callback both logging every record of one batch is 2N lines of one batch, not two batches. The
    # lines of a layout without loggers are one logger (then K lines count ceil(K / N), as before) —
    # unless no time stamp tells them apart either: then several loggers quoting the one batch cannot
    # be told from one logger quoting several, and the batch counts once.
    exp = exp.with_columns(
        lg=pl.col("logger").cast(pl.String).fill_null("") if "logger" in exp.columns else pl.lit(""),
    ).with_columns(lg_lines=pl.len().over(["batch", "lg"]))
    return (
        exp.group_by("batch", maintain_order=True)
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
            loggers=pl.col("lg").n_unique(),
            loggers_known=(pl.col("lg") != "").sum(),
            untimed=pl.col("ts").is_null().all(),
            logger_lines=pl.col("lg_lines").max(),
            first_seen=pl.col("ts").min(),
            last_seen=pl.col("ts").max(),
            first_row=quote_row().first(),
            last_row=quote_row().last(),
        )
        .with_columns(
            batches=pl.when(pl.col("untimed") & (pl.col("loggers_known") == 0)).then(pl.lit(1, dtype=pl.Int64))
            .otherwise(pl.max_horizontal(pl.lit(1), (pl.col("logger_lines") / pl.col("records")).ceil().cast(pl.Int64))),
            # a batch whose text names no elapsed time was created by its expiry at the latest
            created=pl.coalesce(pl.col("first_seen") - pl.duration(milliseconds=pl.col("elapsed_ms").clip(0, MAX_MS).cast(pl.Int64)), pl.col("first_seen")),
        )
        .with_columns(total_records=sat_mul(pl.col("batches"), pl.col("records")))
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
    bx = bx.sort(["path", "ts", "file", "line"], nulls_last=True).with_columns(
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
            first_row=quote_row().first(),
            last_row=quote_row().last(),
        )
        .with_columns(
            block=pl.duration(milliseconds=pl.col("max_block_ms").fill_null(DEFAULT_MAX_BLOCK_MS).clip(0, MAX_MS).cast(pl.Int64))
        )
    )
    return _link_blocked(runs, eps, "run", "first_seen").sort(["first_seen", "path"], nulls_last=True)


def _link_blocked(df: pl.DataFrame, eps: pl.DataFrame, key: str, at: str) -> pl.DataFrame:
    """Add ``ep`` to rows of send() calls that blocked for ``block`` and failed at ``at``: the latest
    episode of the same file (and client, when known) that started at or before ``at`` and was
    still going within the block (+ SLACK) before it; ties go to the episode with more failures."""
    if df.height == 0 or eps.height == 0:
        return df.with_columns(ep=pl.lit(None, dtype=pl.Int64))
    cand = (
        df.select(key, "path", "client", at, "block")
        .join(eps.select("ep", "path", ep_client="client", ep_from="from", ep_to="to",
                         ep_failed="failed_connections", ep_lines="lines"), on="path", how="inner")
        .filter(
            (pl.col("client").is_null() | (pl.col("client") == pl.col("ep_client")))
            & (pl.col("ep_from") <= pl.col(at))
            & (pl.col("ep_to") >= pl.col(at) - pl.col("block") - SLACK)
        )
        .sort([key, "ep_from", "ep_failed", "ep_lines"], descending=[False, True, True, True])
        .group_by(key, maintain_order=True)
        .agg(pl.col("ep").first())
    )
    return df.join(cand, on=key, how="left")


def _waits(kev: pl.DataFrame, eps: pl.DataFrame, event: str = "metadata_wait_timeout") -> pl.DataFrame:
    """Metadata-wait timeouts (send() failed after max.block.ms without the topic's metadata), one per
    log record, each linked to the latest episode of its file (and client, when known) that started at
    or before it and was still going within the wait (the N ms of the text, + SLACK) before it.
    ``event`` send_failed_network: sends failed with a NetworkException once no retry was left (the
    exception ends the attempts: no wait before it, so linked within SLACK of an episode's end)."""
    mw = (
        kev.filter(pl.col("event") == event)
        .unique(["path", "file", "line"], keep="first", maintain_order=True)
        .sort(["path", "ts", "file", "line"], nulls_last=True)
        .select(
            "path", "file", "line", "ts", "client", "topic", "partition", *(["detail"] if "detail" in kev.columns else []),
            wait_ms=pl.col("elapsed_ms") if event == "metadata_wait_timeout" else pl.lit(0.0),
            row=quote_row(),
        )
        .with_row_index("wait")
        .with_columns(
            block=pl.duration(milliseconds=pl.col("wait_ms").fill_null(DEFAULT_MAX_BLOCK_MS).clip(0, MAX_MS).cast(pl.Int64))
        )
    )
    return _link_blocked(mw, eps, "wait", "ts").sort(["path", "ts", "file", "line"], nulls_last=True)


def _loss(batches: pl.DataFrame, runs: pl.DataFrame, waits: pl.DataFrame, nets: pl.DataFrame) -> dict:
    """(path, ep or None) -> what was lost while it lasted: the one computation behind every
    'N records in M batches expired', 'send() failed K times' (buffer) and 'J send() calls failed
    waiting for metadata' of the Kafka findings."""
    out: dict = {}

    def slot(path: str, ep) -> dict:
        key = (path, None if ep is None else int(ep))
        return out.setdefault(key, _empty_loss())

    if batches.height:
        per = batches.group_by(["path", "ep"], maintain_order=True).agg(
            records=sat_sum(pl.col("total_records")),
            batches=sat_sum(pl.col("batches")),
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
        per = runs.group_by(["path", "ep"], maintain_order=True).agg(n=pl.col("count").sum(), k=pl.len())
        for r in per.iter_rows(named=True):
            d = slot(r["path"], r["ep"])
            d.update(failed_sends=int(r["n"]), exhaustion_runs=int(r["k"]))
    if waits.height:
        per = waits.group_by(["path", "ep"], maintain_order=True).agg(n=pl.len(), topics=pl.col("topic").drop_nulls().unique().sort())
        for r in per.iter_rows(named=True):
            d = slot(r["path"], r["ep"])
            d.update(metadata_timeouts=int(r["n"]), metadata_topics=list(r["topics"]))
    if nets.height:
        per = nets.group_by(["path", "ep"], maintain_order=True).agg(n=pl.len())
        for r in per.iter_rows(named=True):
            slot(r["path"], r["ep"]).update(network_failures=int(r["n"]))
    return out


def _empty_loss() -> dict:
    return {"expired_records": 0, "expired_batches": 0, "expired_log_records": 0, "expired_partitions": [],
            "expired_first": None, "expired_last": None, "failed_sends": 0, "exhaustion_runs": 0,
            "metadata_timeouts": 0, "metadata_topics": [], "network_failures": 0}


def loss_of(m: Model, path: str, ep: int | None) -> dict:
    """What was lost in ``path`` during episode ``ep`` (None: expiries / exhaustions linked to no
    episode): expired_records, expired_batches, expired_log_records, expired_partitions,
    expired_first / expired_last, failed_sends (buffer exhaustions), exhaustion_runs,
    metadata_timeouts (send()s that failed waiting for metadata), metadata_topics and
    network_failures (sends failed with a NetworkException once no retry was left)."""
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


def unseen_before(ctx: Context, path: str, until: dt.datetime | None, ms: float | None, too_long: str = "") -> tuple[Prose, dt.datetime | None] | None:
    """Why ``path`` cannot show the client's trouble in the ``ms`` before ``until`` (it does not
    cover that time, or holds no WARN lines, the level of failed connections and retries) and
    when that time began; None when it can, or when the times are unknown (a log without stamps is
    read in line order instead). ``too_long`` says why when ``ms`` is beyond any clock."""
    if until is None or ms is None or ctx.coverage(path) is None:
        return None
    try:
        since = until - dt.timedelta(milliseconds=ms)
    except OverflowError:  # a duration no clock can hold: nothing is said of the time before
        return too_long or f"{ms:.0f} ms reaches past any log", None
    a = absence(ctx, path, "failed connections, disconnects or retries", Window.of(since, until), [path], level="WARN")
    return None if a.covered_by else (a.missing_why, since)
