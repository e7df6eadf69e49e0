"""kafka.broker-unreachable: a broker node a producer could not reach, or that dropped its
connections and let its requests time out, one finding per episode of the shared model
(_kafka_model.py), with what was lost meanwhile, whether it recovered, the topics Kafka refused
meanwhile and whether other clients saw the same node fail. See docs/findings/kafka.broker-unreachable.md.
"""

from __future__ import annotations

import datetime as dt

import polars as pl

from dataclasses import dataclass, field

from logsleuth.detectors.kafka.broker import link_episode
from logsleuth.detectors.kafka.model import (
    RECOVERY_QUIET, Model, build, loss_of, pre_2_1, refusals, same_node_elsewhere, waits_of,
)
from logsleuth.detectors.kafka import text as kt
from logsleuth.detectors.base import Context, Detector, evidence, number_of, ordered_evidence, safe, str_of, time_of
from logsleuth.detectors.facts import Window, absence
from logsleuth.detectors.finding import Finding
from logsleuth.detectors.verdict import Verdict

VERDICT = Verdict.load(__file__, "kafka.broker-unreachable")
VERDICT.filters.update(kt.EPISODE_FILTERS)
TH = VERDICT.thresholds
# the finding's minimum evidence (kafka.broker-unreachable.toml): trouble shorter than this, with no
# more failed connections than this, nothing lost and over, is a blip the retries absorbed
TRANSIENT_S = float(TH["transient_s"])
TRANSIENT_FAILED_CONNECTIONS = TH["transient_failed_connections_count"]
TRANSIENT_RETRIES = TH["transient_retries_count"]
LONG_OUTAGE = dt.timedelta(seconds=TH["long_outage_s"])

METADATA_TEXT = r"(?:not present in metadata|Failed to update metadata) after \d+ ms"


def refused_topics(refused: pl.DataFrame) -> list[str]:
    """The topic names of refused-topic lines ('[orders, payments]' -> orders, payments)."""
    t = refused.get_column("topics").drop_nulls().str.strip_chars("[] ").str.split(",").explode().str.strip_chars()
    return t.filter(t.str.len_chars() > 0).unique().sort().to_list()


def file_end(ctx: Context, path: str) -> dt.datetime | None:
    rep = ctx.input(path)
    return rep.last_ts if rep is not None else None


def next_trouble(m: Model, ep: dict) -> dt.datetime | None:
    """The client's next trouble line after the episode (the start of its next episode), if any."""
    later = m.trouble.filter((pl.col("path") == ep["path"]) & (pl.col("client") == ep["client"]) & (pl.col("ts") > ep["to"]))
    return time_of(later.get_column("ts").min()) if later.height else None


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


def recovery(ctx: Context, m: Model, ep: dict) -> dict:
    """Whether the trouble is over, and how the log shows it (the words are the verdict's
    'recovery'): ok, kind (metadata | unknown-end | until-next | quiet-to-end | ends-soon), and the
    times and line it rests on."""
    meta = metadata_after(m, ep)
    if meta is not None:
        return {"ok": True, "kind": "metadata", "meta_ts": meta["ts"], "meta_line": meta["line"], "quiet_s": None, "next_ts": None}
    quiet, nxt = quiet_after(ctx, m, ep), next_trouble(m, ep)
    out = {"meta_ts": None, "meta_line": None, "quiet_s": quiet, "next_ts": nxt}
    if quiet is None:
        return {**out, "ok": False, "kind": "unknown-end"}
    enough = quiet >= RECOVERY_QUIET.total_seconds()
    if nxt is not None:
        return {**out, "ok": enough, "kind": "until-next"}
    return {**out, "ok": enough, "kind": "quiet-to-end" if enough else "ends-soon"}


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
    return recovery(ctx, m, ep)["ok"]


@dataclass
class OutageFacts:
    """One trouble episode of one client (the shared Kafka model's episode) and what it cost."""

    path: str
    client: str | None
    episode: dict = field(repr=False)
    unreachable: bool  # connections failed (else: the node dropped connections / let requests time out)
    node: int | None
    ep_from: dt.datetime | None
    ep_to: dt.datetime | None
    duration_s: float
    failed_connections: int
    failures_and_drops: int  # failed connections and bootstrap disconnects
    bootstrap_drops: int
    timeout_retries: int
    dns_failures: int
    auth_failures: int
    not_leader_retries: int
    metadata_errors: int
    invalid_metadata: int  # 'Received invalid metadata error in produce request' (a leader moved)
    named_tps: bool  # the produce retries name the node themselves
    expired: int
    expired_batches: int
    failed_sends: int
    meta_fails: int  # send() calls that failed waiting for metadata
    net_fails: int  # sends failed with a NetworkException, no retry left
    net_detail: str | None
    wait_topics: list[str]
    wait_ms: list[float]  # the metadata waits' max.block.ms values (the first three)
    wait_max_ms: int | None
    metadata_topics: list[str]
    denied: int  # topic authorization failures meanwhile
    denied_topics: list[str]
    invalid: int  # invalid-topic responses meanwhile
    invalid_topics: list[str]
    refused: int
    ok: bool  # the trouble is over, by the log
    recovery_kind: str  # metadata | unknown-end | until-next | quiet-to-end | ends-soon
    meta_ts: dt.datetime | None
    meta_line: int | None
    quiet_s: float | None
    next_ts: dt.datetime | None
    long_outage: bool
    others: list[str]  # 'client in path' of the other clients that saw the node fail meanwhile
    other_clients: int
    covering_others: list[str]  # the other client logs given that cover the episode's window
    legacy: bool
    address: str  # the node's address, or 'address not logged'
    bootstrap_address: str

    @property
    def lost(self) -> bool:
        return bool(self.expired or self.failed_sends or self.meta_fails or self.net_fails)

    @property
    def legacy_reference(self) -> str:
        return kt.LEGACY_REFERENCE


def facts(ctx: Context, m: Model, ep: dict, loss: dict) -> tuple[OutageFacts, pl.DataFrame, pl.DataFrame, pl.DataFrame, list[dict]]:
    waits = waits_of(m, ep["path"], ep["ep"])
    refused = refusals(m, ep)
    nets = m.nets.filter((pl.col("path") == ep["path"]) & (pl.col("ep") == ep["ep"]))
    others = same_node_elsewhere(m, ep)
    rec = recovery(ctx, m, ep)
    denied = refused.filter(pl.col("event") == "topic_authorization_failed")
    invalid = refused.filter(pl.col("event") == "metadata_invalid_topics")
    block = waits["wait_ms"].drop_nulls() if waits.height else pl.Series([], dtype=pl.Float64)
    f = OutageFacts(
        path=ep["path"], client=ep["client"] or None, episode=ep, unreachable=ep["kind"] == "broker-unreachable", node=ep.get("node"),
        ep_from=ep["from"], ep_to=ep["to"], duration_s=ep["duration_s"], failed_connections=ep["failed_connections"],
        failures_and_drops=ep["failed_connections"] + ep["bootstrap_drops"], bootstrap_drops=ep["bootstrap_drops"],
        timeout_retries=ep["timeout_retries"], dns_failures=ep["dns_failures"], auth_failures=ep["auth_failures"],
        not_leader_retries=ep["not_leader_retries"], metadata_errors=ep["metadata_errors"],
        invalid_metadata=ep["invalid_metadata"], named_tps=bool(ep["named_tps"]),
        expired=loss["expired_records"], expired_batches=loss["expired_batches"], failed_sends=loss["failed_sends"],
        meta_fails=loss["metadata_timeouts"], net_fails=loss["network_failures"],
        net_detail=(str_of(nets["detail"].drop_nulls().first()) if nets.height and "detail" in nets.columns else None),
        wait_topics=waits.get_column("topic").drop_nulls().unique().sort().to_list() if waits.height else [],
        wait_ms=waits.get_column("wait_ms").drop_nulls().unique().sort().to_list()[:3] if waits.height else [],
        wait_max_ms=int(number_of(block.max())) if block.len() else None, metadata_topics=list(loss["metadata_topics"] or []),
        denied=denied.height, denied_topics=refused_topics(denied) if denied.height else [],
        invalid=invalid.height, invalid_topics=refused_topics(invalid) if invalid.height else [], refused=refused.height,
        ok=rec["ok"], recovery_kind=rec["kind"], meta_ts=rec["meta_ts"], meta_line=rec["meta_line"], quiet_s=rec["quiet_s"], next_ts=rec["next_ts"],
        long_outage=ep["duration_s"] >= LONG_OUTAGE.total_seconds(),
        others=sorted({safe(kt.client_in(o["client"], o["path"])) for o in others}),
        other_clients=len({(o["path"], o["client"]) for o in others}), covering_others=_covering_others(ctx, m, ep),
        legacy=pre_2_1(m, ep["path"]), address=safe(ep.get("address") or ep.get("host") or "address not logged"),
        bootstrap_address=safe(ep.get("address") or ep.get("host") or "it (address not logged)"),
    )
    return f, waits, refused, nets, others


def _covering_others(ctx: Context, m: Model, ep: dict) -> list[str]:
    """The other producer logs given that cover the episode's window (span and gaps): only they can
    say the node did not fail for other clients too."""
    if ep["from"] is None or ep["to"] is None:
        return []
    kev = m.kev.filter(pl.col("component").fill_null("") != "broker") if "component" in m.kev.columns else m.kev
    paths = [p for p in kev.get_column("path").unique(maintain_order=True).to_list() if p != ep["path"]]
    a = absence(ctx, f"node {ep.get('node')}", "failures of the node", Window.of(ep["from"], ep["to"]), paths)
    return [safe(p) for p in a.covered_by]


def _finding(ctx: Context, m: Model, ep: dict, loss: dict) -> Finding:
    f, waits, refused, nets, others = facts(ctx, m, ep, loss)
    v = VERDICT
    evid = kt.episode_quotes(m, ep)
    if waits.height:
        rows_ = list(waits.get_column("row"))
        evid.append(kt.quote(rows_[0], METADATA_TEXT, v.note("metadata_first", f)))
        if len(rows_) > 1:
            evid.append(kt.quote(rows_[-1], METADATA_TEXT, v.note("metadata_last", f)))
    if f.net_fails and nets.height:
        evid.append(kt.quote(nets["row"][0], "NetworkException", v.note("network", f)))
    for r in refused.head(1).iter_rows(named=True):
        evid.append(evidence(r, v.note("refused", f)))
    subject = {
        "path": ep["path"], "client_id": ep.get("client") or None, "node": ep.get("node"), "address": ep.get("address"),
        "duration_s": ep["duration_s"],  # the window itself is the finding's first_seen / last_seen (and cause.from / cause.to)
        "failed_connections": ep["failed_connections"], "expired_records": f.expired, "buffer_exhausted": f.failed_sends,
        "metadata_timeouts": f.meta_fails, "network_failures": f.net_fails, "recovered": f.ok,
    }
    return Finding(
        **v.parts(f),
        first_seen=ep["from"],
        last_seen=ep["to"],
        subjects=[subject],
        cause=kt.cause_of(ep),
        evidence=ordered_evidence(evid),
        details={
            "host": ep.get("host"), "disconnects": ep["disconnects"], "request_timeouts": ep["request_timeouts"],
            "cancelled_requests": ep["cancelled_requests"], "auth_failures": ep["auth_failures"], "retries": ep["retries"],
            "retries_by_error": {x["error"]: x["n"] for x in (ep.get("retries_by_error") or [])},
            "metadata_refreshes": ep["invalid_metadata"] + ep["metadata_errors"] + ep["rebootstraps"],
            "metadata_errors": ep["metadata_errors"], "invalid_metadata": ep["invalid_metadata"], "rebootstraps": ep["rebootstraps"],
            "other_nodes": list(ep.get("other_nodes") or []), "partitions_named_by_retries": list(ep.get("named_tps") or []),
            "node_window": {"from": ep.get("node_from"), "to": ep.get("node_to")},
            "recovery": v.phrase("recovery", f), "quiet_after_s": f.quiet_s,
            "expired_batches": f.expired_batches, "expired_partitions": loss["expired_partitions"],
            "metadata_timeout_topics": loss["metadata_topics"], "refused_sends": f.refused, "pre_2_1": f.legacy,
            "same_node_elsewhere": [{"path": o["path"], "client_id": o["client"] or None, "from": o["from"], "to": o["to"]} for o in others],
        },
    )


DETECTOR = Detector(id=VERDICT.id, title=VERDICT.title, systems=("kafka",), run=run, doc=VERDICT.doc, facts=OutageFacts, verdict=VERDICT)
