"""kafka.delivery-timeout: records the Kafka producer expired without delivering them, per
topic-partition, linked to the drain problem that kept them in the accumulator. See
docs/findings/kafka.delivery-timeout.md; the shared model (clients, episodes, batch counting,
linking) is in _kafka_model.py.

One finding per client file and cause: the batches of a file linked to the same episode (or to
none). Records are counted from Kafka's own text (``Expiring N record(s)``), never from the number
of lines: an application logs the same exception once per record of the batch. The finding's totals
are ``_kafka_model.loss_of`` for its (file, episode): the same numbers kafka.broker-unreachable and
kafka.buffer-exhausted state for that outage.
"""

from __future__ import annotations

import datetime as dt

import polars as pl

from logsleuth.detectors.kafka import model as km
from logsleuth.detectors.kafka.broker import link_episode
from logsleuth.detectors.kafka import text as kt
from logsleuth.detectors.base import Context, Detector, fmt_duration, fmt_time, ordered_evidence, safe, sat_sum
from logsleuth.detectors.finding import Evidence, Finding

EXPIRY_TEXT = r"Expiring \d+ record\(s\) for"
MAX_TP_EVIDENCE = 6


def run(ctx: Context) -> list[Finding]:
    m = km.build(ctx)
    if m is None or m.batches.height == 0:
        return []
    b = m.batches.with_columns(g_ep=pl.col("ep").fill_null(-1))
    per_tp = (
        b.sort("first_seen")
        .group_by(["path", "g_ep", "topic_partition"], maintain_order=True)
        .agg(
            pl.col("topic").first(),
            pl.col("partition").first(),
            records=sat_sum(pl.col("total_records")),
            batches=sat_sum(pl.col("batches")),
            lines=pl.col("lines").sum(),
            first_seen=pl.col("first_seen").min(),
            last_seen=pl.col("last_seen").max(),
            elapsed_ms_min=pl.col("elapsed_ms").min(),
            elapsed_ms_max=pl.col("elapsed_ms").max(),
            client_id=pl.col("client").drop_nulls().first(),
            named_match=pl.col("named_match").all(),
            legacy=(pl.col("detail") != "batch creation").any(),
            texts=pl.col("detail").unique(),
            first_row=pl.col("first_row").first(),
            last_row=pl.col("last_row").sort_by(pl.col("last_seen")).last(),
            loggers=pl.col("loggers").max(),
            batch_list=pl.struct("records", "elapsed_ms", "lines", "loggers", "batches", "first_seen"),
        )
        .sort(["path", "g_ep", "first_seen", "topic_partition"])
    )
    eps = {r["ep"]: r for r in m.episodes.iter_rows(named=True)} if m.episodes.height else {}
    out = []
    for (path, g_ep), tps in per_tp.partition_by(["path", "g_ep"], as_dict=True, maintain_order=True).items():
        ep = eps.get(g_ep)
        f = _finding(ctx, m, path, ep, tps, km.loss_of(m, path, ep["ep"] if ep else None))
        if ep is not None:
            link_episode(ctx, ep, f)  # the broker's own logs, when given (broker.py)
        out.append(f)
    return out


# how each <=2.0 expiry text measures a batch's wait (ProducerBatch.maybeExpire compares it with request.timeout.ms)
LEGACY_MEASURE = {
    "last append": "from its last append (a full batch)",
    "batch creation plus linger time": "from its creation plus linger.ms",
    "last attempt plus backoff time": "from its last attempt plus retry.backoff.ms (a batch being retried)",
}


def _assessment(e_min: float | None, e_max: float | None, legacy: bool, texts: list[str] | None = None) -> tuple[str, bool]:
    """What the elapsed times say about the timeout in force; True when it matches the default."""
    if e_min is None or e_max is None:  # 0.10.0: 'Batch containing N record(s) expired due to timeout while requesting metadata'
        return (
            "waited in the accumulator without metadata for its partition until request.timeout.ms ran out (the 0.10.0 text "
            "names no elapsed time, so whether that timeout was the default "
            f"{km.DEFAULT_REQUEST_TIMEOUT_MS} ms cannot be told). There is no delivery.timeout.ms before 2.1",
            False,
        )
    span = f"{e_min:.0f} ms" if e_min == e_max else f"{e_min:.0f}–{e_max:.0f} ms"
    if legacy:
        measures = [LEGACY_MEASURE[t] for t in LEGACY_MEASURE if t in (texts or [])]
        how = f", counted {' or '.join(measures)} as its text says" if measures else ""
        d = km.DEFAULT_REQUEST_TIMEOUT_MS
        head = (
            f"waited {span}{how}. These are the pre-2.1 texts: there is no delivery.timeout.ms before 2.1, and a batch "
            "expires in the accumulator once that wait passes request.timeout.ms"
        )
        if d <= e_min < d + 10_000:
            return f"{head}; just past it here, consistent with the default {d} ms", True
        if e_min < d:
            return f"{head}; here request.timeout.ms is at most {e_min:.0f} ms, below the default {d} ms, so it was lowered", False
        return (
            f"{head}; here request.timeout.ms is at most {e_min:.0f} ms, above the default {d} ms (raised, or the sender "
            "thread was stalled before it could expire them)",
            False,
        )
    d = km.DEFAULT_DELIVERY_TIMEOUT_MS
    if d <= e_min < d + 10_000:
        return f"waited {span}, just past delivery.timeout.ms: consistent with the default {d} ms (since 2.1)", True
    if e_min < d:
        return f"waited {span}: delivery.timeout.ms is at most {e_min:.0f} ms here, below the default {d} ms, so it was lowered", False
    return (
        f"waited {span}: delivery.timeout.ms is at most {e_min:.0f} ms here, above the default {d} ms "
        "(raised, or the sender thread was stalled before it could expire them)",
        False,
    )


def _lifetime_unseen(ctx: Context, path: str, first, e_min: float | None) -> tuple[str, object] | None:
    """(why, since) when ``path`` does not cover the lifetime of its first expired batch — from
    ``e_min`` ms before the first expiry to it — with WARN lines; None when it does (or the times
    are not known)."""
    if first is None or e_min is None:
        return None
    try:
        since = first - dt.timedelta(milliseconds=e_min)
    except OverflowError:  # an age no clock can hold: nothing is said of the time before the expiry
        return f"the stated age, {e_min:.0f} ms, reaches past any log", None
    cov = ctx.coverage(path)
    if cov is None:
        return None
    ok, why = cov.covers(since, first)
    if ok and not cov.shows("WARN"):
        ok, why = False, f"{path} holds no WARN or INFO lines"
    return None if ok else (why, since)


def _untimed_drain(m: km.Model, path: str) -> tuple | None:
    """In a log without time stamps: (node, line numbers, failed connections, other drain lines,
    the first expiry's line) of the failed connections, disconnects and produce retries written
    before its first expiry; None when there are none."""
    kev = m.kev.filter(pl.col("path") == path)
    if kev.height == 0 or kev["ts"].drop_nulls().len():
        return None
    exp = kev.filter(pl.col("event") == "batch_expired")
    if exp.height == 0:
        return None
    first_exp = int(exp["line"].min())
    before = kev.filter((pl.col("line") < first_exp) & pl.col("event").is_in([*km.UNREACHABLE, *km.SOFT, *km.RETRY_EVENTS])).sort("line")
    if before.height == 0:
        return None
    fails = before.filter(pl.col("event").is_in(list(km.UNREACHABLE)))
    others = before.filter(~pl.col("event").is_in(list(km.UNREACHABLE)))
    nodes = [n for n in (fails if fails.height else before).get_column("node").drop_nulls().to_list()] if "node" in before.columns else []
    node = max(set(nodes), key=nodes.count) if nodes else None
    lines = fails["line"].to_list() + others["line"].to_list()
    return node, [int(x) for x in lines], fails.height, others.height, first_exp


def _finding(ctx: Context, m: km.Model, path: str, ep: dict | None, tps: pl.DataFrame, loss: dict) -> Finding:
    subjects_rows = list(tps.iter_rows(named=True))
    records = loss["expired_records"]
    batches = loss["expired_batches"]
    lines = loss["expired_log_records"]
    first = loss["expired_first"]
    last = loss["expired_last"]
    lo, hi = tps["elapsed_ms_min"].min(), tps["elapsed_ms_max"].max()
    e_min = float(lo) if lo is not None else None  # type: ignore[arg-type]  (None: the text names no time, 0.10.0)
    e_max = float(hi) if hi is not None else None  # type: ignore[arg-type]
    legacy = bool(tps["legacy"].any())
    texts = sorted({t for ts_ in tps["texts"].to_list() for t in (ts_ or []) if t})
    budget = "request.timeout.ms" if legacy else "delivery.timeout.ms"  # what ran out (<=2.0: request.timeout.ms)
    clients = sorted({c for c in tps["client_id"].to_list() if c}) or ([ep["client"]] if ep and ep.get("client") else [])
    names = [r["topic_partition"] for r in subjects_rows]
    shown = ", ".join(safe(t) for t in names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
    assess, default_ok = _assessment(e_min, e_max, legacy, texts)
    who = (f"Producer {safe(clients[0])} in {safe(path)}" if len(clients) == 1 else f"The producer in {safe(path)}")

    story = (
        f"{who} expired {kt.lost_text(records, batches)} on "
        f"{kt.plural(len(names), 'partition')} ({shown}) " + (f"between {fmt_time(first)} and {fmt_time(last)}" if first is not None else "(at times this log does not say: it has no time stamps)") + "; each batch "
        f"{assess}. These records were NOT delivered to Kafka: unless the application re-sent them, they are lost."
    )
    all_named = bool(tps["named_match"].all())
    some_named = bool(tps["named_match"].any())
    conf = 0.55
    reasons = [
        f"+ Kafka's own expiry text (TimeoutException: Expiring N record(s) …) for {kt.plural(batches, 'batch', 'batches')}: "
        "the producer itself gave up on these records"
    ]
    loggers = int(tps["loggers"].max() or 1)
    if lines > batches and loggers > 1:
        reasons.append(
            f"  ({kt.plural(lines, 'log record')} from {loggers} loggers carry "
            f"{'this expiry' if batches == 1 else f'these {batches} expiries'}: "
            "each logger logged each batch's exception once per record (Spring Kafka's LoggingProducerListener and the "
            "application's own callback both do); counted once per batch, not once per logger)"
        )
    elif lines > batches:
        reasons.append(
            f"  ({kt.plural(lines, 'log record')} carry these {kt.plural(batches, 'expiry', 'expiries')}: the application logged "
            "each batch's exception once per record; counted once per batch)"
        )
    ruled_out: list[str] = []
    remediation: list[str] = [
        f"These {kt.plural(records, 'record')} were not delivered unless the application re-sent them: find them by "
        f"the keys/ids the application logged next to each expiry ({safe(path)}, {fmt_time(first)} → {fmt_time(last)}) "
        "and re-publish them, or reconcile from the system of record."
    ]
    evid: list[Evidence] = []
    if ep is not None:
        cause = kt.cause_of(ep)
        what = kt.node_label(ep)
        span = fmt_duration(ep["duration_s"])
        facts = kt.episode_facts(ep)
        if ep["kind"] == "broker-unreachable":
            story += (
                f" Cause: {what} was unreachable from this client from {fmt_time(ep['from'])} to {fmt_time(ep['to'])} "
                f"({span}): {facts}. The producer could not send the batches waiting for that node, so they sat in the "
                f"accumulator until {budget} ran out."
            )
            conf += 0.25
            reasons.append(
                f"+ the same client logged {kt.connection_failures(ep)} to node "
                f"{ep['node']} while these batches waited ({fmt_time(ep['from'])} → {fmt_time(ep['to'])})"
            )
            ruled_out.append(
                f"A slow broker that stayed reachable: this client could not connect to node {ep['node']} at all "
                f"({ep['failed_connections']} failed attempts)" + ("" if ep["timeout_retries"] else "; no REQUEST_TIMED_OUT retries")
                if ep["failed_connections"] or not ep.get("bootstrap_drops") else kt.no_metadata(ep)
            )
        elif ep["kind"] == "broker-disconnects":
            story += (
                f" Cause: {what} kept dropping connections or timing requests out from {fmt_time(ep['from'])} to "
                f"{fmt_time(ep['to'])} ({span}): {facts}. Connections could be re-opened, but produce requests to it did "
                f"not complete, so its batches aged until {budget} ran out."
            )
            conf += 0.15
            reasons.append(f"+ the same client logged request timeouts / dropped connections to node {ep['node']} while these batches waited")
            ruled_out.append(f"A broker that was down: every reconnection to node {ep['node']} succeeded (no 'could not be established')")
        else:
            story += (
                f" Cause: the client logged produce errors from {fmt_time(ep['from'])} to {fmt_time(ep['to'])} ({span}): "
                f"{facts}, without naming a broker node; the batches could not be sent before they expired."
            )
            conf += 0.05
            reasons.append("+ the same client logged produce retries / metadata errors while these batches waited, but no broker node is named")
        if all_named and ep.get("node") is not None:
            conf += 0.1
            reasons.append(f"+ the retries name node {ep['node']} for every expired partition: they are the partitions it led")
            story += f" The retries name node {ep['node']} for {shown}: the partitions it led."
        elif some_named and ep.get("node") is not None:
            conf += 0.05
            reasons.append(f"+ the retries name node {ep['node']} for some of the expired partitions")
        others = km.same_node_elsewhere(m, ep)
        if others:
            conf += 0.05
            reasons.append(f"+ {kt.plural(len({(o['path'], o['client']) for o in others}), 'other client log')} saw node {ep['node']} fail in the same window")
        if not ep["not_leader_retries"] and not ep["metadata_errors"] and not ep["invalid_metadata"]:
            ruled_out.append("A leader change: no NOT_LEADER_OR_FOLLOWER / NOT_LEADER_FOR_PARTITION retries and no metadata errors")
        evid += kt.episode_quotes(m, ep, limit_retries=2)
        if ep.get("node") is not None:
            remediation.append(
                f"Restore and explain node {ep['node']} ({safe(ep.get('address') or ep.get('host') or 'address not logged')}) for "
                f"{fmt_time(ep['from'])} → {fmt_time(ep['to'])}: broker log and GC log, host health, network path from this "
                "client. Partitions can only move away from a dead leader if another in-sync replica exists "
                "(replication.factor ≥ 3, min.insync.replicas = 2)."
            )
    elif first is None and (untimed := _untimed_drain(m, path)) is not None:
        # no time stamps: "during these batches' lifetime" cannot be checked by time, but the log's
        # own order can: the failed connections and retries written before the first expiry
        node, lines_of, n_fail, n_other, first_exp_line = untimed
        cause = {"kind": "broker-unreachable" if n_fail else "produce-errors", "node": node, "address": None, "from": None, "to": None}
        what = f"node {node}" if node is not None else "a broker (the lines name no node)"
        story += (
            f" This log has no time stamps, so the expiries cannot be placed in time; in its own order, before the "
            f"first expiry (line {first_exp_line}), it holds {kt.plural(n_fail, 'failed connection')} to {what}"
            + (f" and {kt.plural(n_other, 'disconnect or retry line', 'disconnect or retry lines')}" if n_other else "")
            + f" (lines {', '.join(str(x) for x in lines_of[:6])}{' …' if len(lines_of) > 6 else ''}): if these partitions "
            f"were led by {what}, their batches had nowhere to go until {budget} ran out. Time stamps would settle it "
            "(the same log written with times, or the broker's log for that node)."
        )
        conf += 0.1 if n_fail else 0.0
        reasons.append(
            f"+ the same log holds {kt.plural(n_fail + n_other, 'drain-problem line')} before the first expiry "
            "(by line order: the log has no time stamps, so not by time)"
        )
        reasons.append("- no time stamps: how long the node was unreachable, and whether it overlapped each batch's lifetime, is not known")
        evid += [Evidence(path, ln, None, None, note="before the expiries: " + ("failed connection" if k < n_fail else "disconnect / retry"))
                 for k, ln in enumerate(lines_of[:4])]
    elif (blind := _lifetime_unseen(ctx, path, first, e_min)) is not None:
        # the batches waited before the file begins (an excerpt) or the file holds no WARN lines:
        # that no trouble is logged says nothing about that time
        why, since = blind
        cause = {"kind": "not-in-log", "node": None, "address": None, "from": since, "to": first}
        story += (
            f" Why they could not be delivered is not in this log: it does not cover these batches' lifetime ({why}). "
            + (f"This client's log from {fmt_time(since)} to {fmt_time(first)}" if since is not None else "This client's log before the expiry")
            + ", with org.apache.kafka.clients at WARN or lower, would show "
            "whether it could reach the brokers (failed connections, disconnects, produce retries); if it was quiet, the brokers' "
            "logs of that time (slow produce requests, acks=all waiting for in-sync replicas)."
        )
        conf -= 0.15
        reasons.append(f"- the log does not cover these batches' lifetime ({why}): the cause is not in it")
    else:
        cause = {"kind": "none-found", "node": None, "address": None, "from": None, "to": None}
        story += (
            " No drain problem is logged by this client during these batches' lifetime: no failed connections, "
            "disconnects, produce retries or metadata errors with its client id. Either the Kafka client's WARN/INFO "
            "lines are not in this log (check the log level of org.apache.kafka.clients), or the brokers accepted "
            "connections but answered produce requests too slowly (acks=all waiting for in-sync replicas, overloaded "
            "brokers): look at the brokers for this window."
        )
        conf -= 0.15
        reasons.append("- no failed connections, disconnects, retries or metadata errors of this client around the expiries: the cause is not in these logs")
    if default_ok:
        default = km.DEFAULT_REQUEST_TIMEOUT_MS if legacy else km.DEFAULT_DELIVERY_TIMEOUT_MS
        conf += 0.05
        reasons.append(f"+ every batch waited just past the default {budget} ({default} ms)")
        ruled_out.append(f"A lowered {budget}: every batch waited at least {e_min:.0f} ms, the default is {default} ms")

    kev = m.kev.filter(pl.col("path") == path)
    count = lambda *evs: int(kev.filter(pl.col("event").is_in(list(evs))).height)  # noqa: E731
    runs = m.runs.filter(pl.col("path") == path)
    mine = runs.filter(pl.col("ep") == ep["ep"]) if ep is not None else runs.clear()
    if runs.height == 0:
        ruled_out.append("Producer overload: no buffer exhaustion (BufferExhaustedException) in this file")
    elif mine.height and mine["first_seen"].min() is not None and mine["first_seen"].min() > ep["from"]:
        ruled_out.append(
            f"Producer overload as the origin: the buffer ran out only from {fmt_time(mine['first_seen'].min())} "
            f"(send() failed {kt.plural(loss['failed_sends'], 'time')}), after the trouble began at {fmt_time(ep['from'])} — "
            "a consequence of the drain problem (see kafka.buffer-exhausted)"
        )
    if not count("metadata_wait_timeout", "topic_authorization_failed", "metadata_invalid_topics"):
        ruled_out.append("A missing topic or ACL: no 'not present in metadata' timeouts, authorization failures or invalid topics")
    if not count("callback_error"):
        ruled_out.append("Application callback errors: none in this file")

    if legacy:
        remediation.append(
            f"This client is older than 2.1 (its expiry texts say so), so there is no delivery.timeout.ms to tune: "
            f"request.timeout.ms (default {km.DEFAULT_REQUEST_TIMEOUT_MS} ms) is also how long a batch may wait in the "
            "accumulator. Raising it rides out longer broker outages, at the cost of more records held in buffer.memory, "
            "a later failure signal and slower detection of a dead broker (it is the produce request timeout too); "
            "retries (default 0 before 2.1) and retry.backoff.ms decide whether a failed produce request is retried at "
            f"all. Upgrading the client to 2.1+ replaces this with delivery.timeout.ms (KIP-91, default "
            f"{km.DEFAULT_DELIVERY_TIMEOUT_MS} ms): one budget per record from send() to acknowledgement, retries included."
        )
    else:
        remediation.append(
            f"delivery.timeout.ms (default {km.DEFAULT_DELIVERY_TIMEOUT_MS} ms since 2.1) is the whole budget for a record: "
            "raising it rides out longer broker outages, at the cost of more records held in buffer.memory and a later "
            "failure signal to the application; it must be ≥ linger.ms + request.timeout.ms."
        )
    remediation += [
        "Handle the failure the producer reports (the callback's exception / the failed future): retry from the "
        "application or park the records in a durable outbox; with enable.idempotence=true the producer's own "
        "retries do not duplicate records.",
        "Alert on the producer metrics record-error-rate and record-retry-rate, so an expiry is noticed when it starts.",
    ]

    # evidence: first and last expiry of each partition (the Kafka text itself, not just the ERROR line)
    for r in subjects_rows[:MAX_TP_EVIDENCE]:
        evid.append(kt.quote(r["first_row"], EXPIRY_TEXT, f"first expired batch of {r['topic_partition']}"))
        if r["last_row"] and (r["last_row"].get("file"), int(r["last_row"]["line"])) != (r["first_row"].get("file"), int(r["first_row"]["line"])):
            evid.append(kt.quote(r["last_row"], EXPIRY_TEXT, f"last expiry of {r['topic_partition']}"))
    evid = ordered_evidence(evid)

    client = ep.get("client") if ep else None
    subjects = [
        {
            "topic_partition": r["topic_partition"],
            "records": r["records"],
            "batches": r["batches"],
            "first_seen": r["first_seen"],
            "last_seen": r["last_seen"],
            "path": path,
            "client_id": r["client_id"] or client or None,
            "node": ep.get("node") if ep else None,
        }
        for r in subjects_rows
    ]
    by_partition = {
        r["topic_partition"]: {
            "topic": r["topic"],
            "partition": r["partition"],
            "log_records": r["lines"],
            "loggers": r["loggers"],
            "elapsed_ms_min": r["elapsed_ms_min"],
            "elapsed_ms_max": r["elapsed_ms_max"],
            "node_named_by_retries": r["named_match"],
            "batch_list": list(r["batch_list"]),
        }
        for r in subjects_rows
    }
    cause_txt = "" if ep is None else f" — {kt.node_label(ep)} {'unreachable' if ep['kind'] == 'broker-unreachable' else 'in trouble'}"
    title = f"{kt.plural(records, 'record')} expired undelivered on {kt.plural(len(names), 'partition')} ({safe(path)}){cause_txt}"
    return Finding(
        id="kafka.delivery-timeout",
        severity="critical",
        title=title,
        root_cause=story,
        confidence=min(max(conf, 0.3), 0.97),
        confidence_reasons=reasons,
        first_seen=first,
        last_seen=last,
        subjects=subjects,
        cause=cause,
        evidence=evid,
        remediation=remediation,
        references=list(kt.REFERENCES) + ([kt.LEGACY_REFERENCE] if legacy else []),
        ruled_out=ruled_out,
        details={
            "records": records,
            "batches": batches,
            "partitions": len(names),
            "log_records": lines,
            "elapsed_ms_min": e_min,
            "elapsed_ms_max": e_max,
            "delivery_timeout_ms_at_most": None if legacy else e_min,
            "request_timeout_ms_at_most": e_min if legacy else None,
            "default_delivery_timeout_ms": km.DEFAULT_DELIVERY_TIMEOUT_MS,
            "pre_2_1_texts": legacy,
            "failed_sends": loss["failed_sends"],
            "by_partition": by_partition,
        },
    )


DETECTOR = Detector(
    id="kafka.delivery-timeout",
    title="Kafka producer: records expired undelivered (delivery.timeout.ms)",
    systems=("kafka",),
    run=run,
    doc="docs/findings/kafka.delivery-timeout.md",
)
