"""kafka.broker-unreachable: a broker node a producer could not reach, or that dropped its
connections and let its requests time out, one finding per episode of the shared model
(_kafka_model.py), with what was lost meanwhile, whether it recovered, the topics Kafka refused
meanwhile and whether other clients saw the same node fail. See docs/findings/kafka.broker-unreachable.md.
"""

from __future__ import annotations

import datetime as dt

import polars as pl

from logsleuth.detectors.kafka.broker import link_episode
from logsleuth.detectors.kafka.model import (
    RECOVERY_QUIET, Model, build, loss_of, pre_2_1, refusals, same_node_elsewhere, waits_of,
)
from logsleuth.detectors.kafka.text import (
    LEGACY_REFERENCE, REFERENCES, cause_of, client_in, client_label, connection_failures, episode_facts, episode_quotes,
    lost_text, no_metadata, node_label, plural, quote,
)
from logsleuth.detectors.base import Context, Detector, evidence, fmt_duration, fmt_time, ordered_evidence, safe
from logsleuth.detectors.finding import Finding

SHORT_BLIP = dt.timedelta(seconds=10)
# the finding's minimum evidence: trouble shorter than this, with no more failed connections than
# this, nothing lost and over, is a blip the retries absorbed (a start-up race, one reconnect): no finding
TRANSIENT_S = SHORT_BLIP.total_seconds()
TRANSIENT_FAILED_CONNECTIONS = 2
TRANSIENT_RETRIES = 1  # produce retries: retries counting down to their last attempt are worth a (low) finding
# an unreachable broker that came back within this, with nothing lost, is context (low), not an alert:
# a routine (rolling) restart; half the default delivery.timeout.ms
LONG_OUTAGE = dt.timedelta(minutes=1)


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


def metadata_after(m: Model, ep: dict) -> dict | None:
    """For a bootstrap connection's trouble (node < 0): the client's 'Cluster ID: …' after it and
    before its next trouble — it got the cluster's metadata, so a bootstrap broker answered."""
    node = ep.get("node")
    if node is None or node >= 0 or ep.get("to") is None:
        return None
    nxt = next_trouble(m, ep)
    same_client = (pl.col("client_id").is_null() | (pl.col("client_id") == ep["client"])) if ep.get("client") else pl.lit(True)
    ok = m.kev.filter((pl.col("path") == ep["path"]) & (pl.col("event") == "cluster_id") & (pl.col("ts") > ep["to"]) & same_client)
    if nxt is not None:
        ok = ok.filter(pl.col("ts") < nxt)
    return ok.sort("ts").row(0, named=True) if ok.height else None


def recovered(ctx: Context, m: Model, ep: dict) -> tuple[bool, str]:
    meta = metadata_after(m, ep)
    if meta is not None:
        return True, (f"the client got the cluster's metadata at {fmt_time(meta['ts'])} ('Cluster ID: …', line {meta['line']}): "
                      "a bootstrap broker answered")
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


# ----------------------------------------------------------------------------- the finding


def run(ctx: Context) -> list[Finding]:
    m = build(ctx)
    if m is None or m.episodes.height == 0:
        return []
    out = []
    for ep in m.episodes.iter_rows(named=True):
        loss = loss_of(m, ep["path"], ep["ep"])
        # retries and errors that name no node are a finding only when sends failed with a
        # NetworkException after NETWORK_EXCEPTION retries: requests cut by disconnects, records lost
        # (pre-2.8 texts name no node); other node-less errors are the delivery finding's context
        if ep["kind"] == "produce-errors" and not (ep["network_retries"] and loss["network_failures"]):
            continue
        if transient(ctx, m, ep, loss):
            continue
        f = _finding(ctx, m, ep, loss)
        link_episode(ctx, ep, f)  # the broker's own logs, when given (broker.py)
        out.append(f)
    return out


def transient(ctx: Context, m: Model, ep: dict, loss: dict) -> bool:
    """The minimum evidence of this finding is not met: a blip the client's retries absorbed —
    shorter than TRANSIENT_S, at most TRANSIENT_FAILED_CONNECTIONS failed connections and
    TRANSIENT_RETRIES produce retries, nothing lost or refused, and over (the client got metadata after it, or went on without trouble). A start-up
    race with a bootstrap server, or one reconnect, is not an outage."""
    if ep["duration_s"] is None or ep["duration_s"] >= TRANSIENT_S or (ep["failed_connections"] or 0) > TRANSIENT_FAILED_CONNECTIONS:
        return False
    if (ep["retries"] or 0) > TRANSIENT_RETRIES:
        return False
    if loss["expired_records"] or loss["failed_sends"] or loss["metadata_timeouts"] or loss["network_failures"]:
        return False
    if refusals(m, ep).height:
        return False
    return recovered(ctx, m, ep)[0]


def _finding(ctx: Context, m: Model, ep: dict, loss: dict) -> Finding:
    expired, expired_batches, failed_sends = loss["expired_records"], loss["expired_batches"], loss["failed_sends"]
    meta_fails = loss["metadata_timeouts"]
    net_fails = loss["network_failures"]
    waits = waits_of(m, ep["path"], ep["ep"])
    refused = refusals(m, ep)
    legacy = pre_2_1(m, ep["path"])
    unreachable = ep["kind"] == "broker-unreachable"
    span = fmt_duration(ep["duration_s"])
    ok, recovery = recovered(ctx, m, ep)
    others = same_node_elsewhere(m, ep)
    who = client_label(ep)
    what = node_label(ep) if ep.get("node") is not None else "a broker these texts do not name"
    node_said = f"node {ep['node']}" if ep.get("node") is not None else "the broker (which node: not in these texts)"
    lost = bool(expired or failed_sends or meta_fails or net_fails)
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
    title = f"{what[0].upper() + what[1:]} {verb} for {span} ({safe(ep['client']) + ' in ' if ep['client'] else ''}{safe(ep['path'])})"
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
    if net_fails:
        nets = m.nets.filter((pl.col("path") == ep["path"]) & (pl.col("ep") == ep["ep"]))
        said = nets["detail"].drop_nulls().first() if nets.height and "detail" in nets.columns else None
        story += (
            f" {plural(net_fails, 'send')} failed with a NetworkException" + (f" ({safe(said)})" if said else "")
            + ": the last attempt was cut by the disconnect and no retry was left (retries or delivery.timeout.ms spent), "
            + ("so that record was" if net_fails == 1 else "so those records were")
            + " not delivered unless the application sent them again."
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
            sorted({safe(client_in(o["client"], o["path"])) for o in others})
        ) + ": the broker or the network to it, not this client."

    conf = 0.55
    reasons = []
    if unreachable:
        conf += 0.2
        reasons.append(f"+ Kafka's own NetworkClient logged {connection_failures(ep)} to node {ep['node']}")
    else:
        conf += 0.1
        reasons.append(f"+ {node_said} dropped connections or timed requests out, but no connection attempt failed")
    if ep["failed_connections"] + ep["bootstrap_drops"] >= 3 or ep["duration_s"] >= SHORT_BLIP.total_seconds():
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
            if ep["failed_connections"] or not ep["bootstrap_drops"] else no_metadata(ep)
        )
    else:
        ruled_out.append(f"A broker that was down: every reconnection to {node_said} succeeded (no 'could not be established')")
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
            f"Look at {'broker ' + node_said if ep.get('node') is not None else 'the brokers this client writes to (the partitions it retried name their leaders)'} "
            "for that window: request handler saturation, long GC pauses, disk latency; "
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
    if net_fails:
        nets = m.nets.filter((pl.col("path") == ep["path"]) & (pl.col("ep") == ep["ep"]))
        if nets.height:
            evid.append(quote(nets["row"][0], "NetworkException", "send failed: NetworkException with no retry left (not delivered)"))
    for r in refused.head(1).iter_rows(named=True):
        evid.append(evidence(r, "sends to these topics fail"))
    evid = ordered_evidence(evid)
    first_seen, last_seen = ep["from"], ep["to"]
    subject = {
        "path": ep["path"],
        "client_id": ep.get("client") or None,
        "node": ep.get("node"),
        "address": ep.get("address"),
        "duration_s": ep["duration_s"],  # the window itself is the finding's first_seen / last_seen (and cause.from / cause.to)
        "failed_connections": ep["failed_connections"],
        "expired_records": expired,
        "buffer_exhausted": failed_sends,
        "metadata_timeouts": meta_fails,
        "network_failures": net_fails,
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
            "same_node_elsewhere": [{"path": o["path"], "client_id": o["client"] or None, "from": o["from"], "to": o["to"]} for o in others],
        },
    )


DETECTOR = Detector(
    id="kafka.broker-unreachable",
    title="Kafka producer: a broker node unreachable or dropping requests",
    systems=("kafka",),
    run=run,
    doc="docs/findings/kafka.broker-unreachable.md",
)
