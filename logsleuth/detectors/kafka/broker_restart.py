"""kafka.broker-restart: a Kafka broker that went away, told from its own logs alone: a shutdown
(controlled or not) and start-up, a start-up banner with no shutdown before it (a crash), a log
directory failure, a ZooKeeper session expiry. One finding per node and episode (lines of the node
closer than GAP). Low unless a client log given shows that node failing in an overlapping window and
losing records or sends there (then medium); the client finding names the same cause either way. The
verdict and the words are in kafka.broker-restart.toml beside this file; see docs/findings/kafka.broker-restart.md.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

import polars as pl

from logsleuth.detectors.base import Context, Detector, ordered_evidence, safe
from logsleuth.detectors.finding import Finding
from logsleuth.detectors.kafka.broker import AT_LOG_START, LABEL, REMEDY, BrokerStory, broker_events, explain, identities, impact_by_node, node_words, remedy_for
from logsleuth.detectors.kafka.text import client_in
from logsleuth.detectors.words import Text
from logsleuth.detectors.verdict import Verdict

VERDICT = Verdict.load(__file__, "kafka.broker-restart")
GAP = dt.timedelta(seconds=VERDICT.thresholds["gap_s"])
NEAR = dt.timedelta(seconds=VERDICT.thresholds["near_s"])
# the client findings that tell the same window from the clients' side, per client library
CLIENT_FINDINGS = {"kafka": "kafka.broker-unreachable / kafka.delivery-timeout", "sarama": "sarama.broker-refused / sarama.retry-redial-stall"}
TRIGGERS = ("broker_shutting_down", "broker_controlled_shutdown", "broker_starting", "broker_started", "broker_fatal",
            "log_dir_failure", "log_dir_offline", "zk_session_expired")


@dataclass
class BrokerRestartFacts:
    """One episode of one node (or of one log that names no node id), as its own logs tell it."""

    node: int | None
    unnamed_path: str | None  # the log, when its lines name no node id
    node_name: str  # 'node 2', or 'the broker'
    kind: str  # the story's kind (broker.BrokerStory.kind)
    label: str  # its words: 'controlled restart', 'failed to start', ...
    at: dt.datetime  # when it began, by the node's own lines
    first: dt.datetime
    last: dt.datetime
    story: Text  # the node's story from its own logs (broker.explain, shared with the client findings)
    logs: list[str]
    clients: list[str] = field(default_factory=list)  # 'client in path' of the client logs that show the node failing in the window
    losers: list[str] = field(default_factory=list)  # those of them that lost records or sends
    lost: bool = False
    down_for_good: bool = False  # it failed to start and its logs show no recovery
    see: str = ""  # the client findings that tell the same window
    covering: list[str] = field(default_factory=list)  # client logs given that cover the window and show no failure of the node
    client_logs: int = 0  # client logs given
    remedies: list[str] = field(default_factory=list)
    ruled_out_texts: list[Text] = field(default_factory=list)
    broker_story: BrokerStory | None = field(default=None, repr=False)


def episodes(ctx: Context) -> list[BrokerRestartFacts]:
    bev = broker_events(ctx)
    if bev.height == 0:
        return []
    ids = identities(bev)
    trig = bev.filter(pl.col("event").is_in(list(TRIGGERS)) & pl.col("ts").is_not_null()).join(ids.select("path", bnode="node"), on="path", how="inner")
    if trig.height == 0:
        return []
    # one key per node, or per log when its lines name no node id
    trig = trig.with_columns(key=pl.coalesce(pl.col("bnode").cast(pl.String), pl.lit("log:") + pl.col("path").cast(pl.String)))
    trig = trig.sort(["key", "ts"]).with_columns(
        grp=((pl.col("ts").diff().over("key") > GAP).fill_null(True) | (pl.int_range(pl.len()).over("key") == 0)).cum_sum()
    )
    eps = trig.group_by(["key", "grp"], maintain_order=True).agg(
        node=pl.col("bnode").first(), first=pl.col("ts").min(), last=pl.col("ts").max(), events=pl.col("event").unique(),
        first_row=pl.struct(pl.all()).first(),
    )
    impact = impact_by_node(ctx)
    out = []
    for ep in eps.iter_rows(named=True):
        if set(ep["events"]) <= {"broker_starting", "broker_started"} and not _after_gap(ctx, ep):
            continue  # a start-up at the beginning of the log: not a restart
        path = str(ep["first_row"]["path"])
        story = explain(ctx, ep["node"], ep["first"], ep["last"], logs=None if ep["node"] is not None else [path])
        if story is None or not story.explains:
            continue
        hit = impact.filter((pl.col("node") == ep["node"]) & (pl.col("from") <= ep["last"] + NEAR) & (pl.col("to") >= ep["first"] - NEAR))
        out.append(_facts(ctx, ep, path, story, hit))
    return out


def _facts(ctx: Context, ep: dict, path: str, story: BrokerStory, hit: pl.DataFrame) -> BrokerRestartFacts:
    node = ep["node"]

    def named(rows: pl.DataFrame) -> list[str]:
        return sorted({client_in(c, str(p)) for p, c in rows.select("path", "client").iter_rows()})

    clients = named(hit)
    systems = set(hit["system"].to_list()) if hit.height and "system" in hit.columns else {"kafka"}
    covering, client_logs = _clients_covering(ctx, ep) if not clients else ([], 0)
    remedies = [remedy_for(story.kind, node)] if story.kind in REMEDY else []
    if story.disk_full:
        remedies.append(remedy_for("disk-full", node))
    return BrokerRestartFacts(
        node=node, unnamed_path=None if node is not None else path, node_name=node_words(node), kind=story.kind,
        label=LABEL.get(story.kind, story.kind), at=story.first or ep["first"], first=ep["first"], last=ep["last"],
        story=story.own_text, logs=list(story.logs),
        clients=clients, losers=named(hit.filter(pl.col("lost"))) if hit.height else [],
        lost=bool(hit.height and hit["lost"].any()),
        down_for_good=story.kind == "startup-failed" and not story.recovered,
        see=" / ".join(CLIENT_FINDINGS[s] for s in ("kafka", "sarama") if s in systems),
        covering=covering, client_logs=client_logs, remedies=remedies, ruled_out_texts=list(story.ruled_out), broker_story=story,
    )


def _clients_covering(ctx: Context, ep: dict) -> tuple[list[str], int]:
    """When no client log shows the node failing: the client logs given that cover the episode's
    window (and so show nothing), and how many client logs were given."""
    ev = ctx.events
    w0, w1 = ep["first"] - NEAR, ep["last"] + NEAR
    clientish = (pl.col("system") == "sarama") | ((pl.col("system") == "kafka") & (pl.col("component").fill_null("") != "broker"))
    paths = ev.filter(clientish)["path"].unique(maintain_order=True).to_list() if ev.height and "component" in ev.columns else []
    reps = [r for r in (ctx.input(p) for p in paths) if r is not None]
    covering = [safe(r.name) for r in reps if r.first_ts is not None and r.last_ts is not None and r.first_ts <= w1 and r.last_ts >= w0]
    return covering, len(reps)


def _after_gap(ctx: Context, ep: dict) -> bool:
    """A start-up banner is a restart when the log has lines before it (a start-up at its very beginning is not)."""
    rep = ctx.input(ep["first_row"]["path"])
    return rep is not None and rep.first_ts is not None and ep["first"] - rep.first_ts > AT_LOG_START


def finding(f: BrokerRestartFacts) -> Finding:
    story = f.broker_story
    assert story is not None
    return Finding(
        **VERDICT.parts(f),
        first_seen=story.first or f.first,
        last_seen=story.last or f.last,
        subjects=[{"node": f.node, "logs": f.logs, "kind": f.kind, "clients_hit": f.clients}],
        cause=story.cause(),
        evidence=ordered_evidence(story.evidence),
        details={"kind": f.kind, "leaders_moved": [m["topic_partition"] for m in story.moved],
                 "down_s": round((f.last - f.first).total_seconds(), 3), "down": _duration(f.last - f.first)},
    )


def _duration(d: dt.timedelta) -> str:
    from logsleuth.detectors.base import fmt_duration

    return fmt_duration(d.total_seconds())


def run(ctx: Context) -> list[Finding]:
    return [finding(f) for f in episodes(ctx)]


DETECTOR = Detector(id=VERDICT.id, title=VERDICT.title, systems=("kafka",), run=run, doc=VERDICT.doc, facts=BrokerRestartFacts, verdict=VERDICT)
