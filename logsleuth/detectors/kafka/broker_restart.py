"""kafka.broker-restart: a Kafka broker that went away, told from its own logs alone: a shutdown
(controlled or not) and start-up, a start-up banner with no shutdown before it (a crash), a log
directory failure, a ZooKeeper session expiry. One finding per node and episode (lines of the node
closer than GAP). Low unless a client log given shows that node failing in an overlapping window and
losing records or sends there (then medium); the client finding names the same cause either way. See docs/findings/kafka.broker-restart.md.
"""

from __future__ import annotations

import datetime as dt

import polars as pl

from logsleuth.detectors.base import Context, Detector, evidence, fmt_duration, fmt_time, ordered_evidence, plural, safe
from logsleuth.detectors.finding import Finding
from logsleuth.detectors.kafka.broker import LABEL, REMEDY, broker_events, explain, identities, impact_by_node, node_words, remedy_for
from logsleuth.detectors.kafka.text import client_in

GAP = dt.timedelta(minutes=10)
NEAR = dt.timedelta(minutes=3)  # a client episode this close to the node's counts as the same window
# the client findings that tell the same window from the clients' side, per client library
CLIENT_FINDINGS = {"kafka": "kafka.broker-unreachable / kafka.delivery-timeout", "sarama": "sarama.broker-refused / sarama.retry-redial-stall"}
TRIGGERS = ("broker_shutting_down", "broker_controlled_shutdown", "broker_starting", "broker_started", "broker_fatal",
            "log_dir_failure", "log_dir_offline", "zk_session_expired")


def run(ctx: Context) -> list[Finding]:
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
        story = explain(ctx, ep["node"], ep["first"], ep["last"], logs=None if ep["node"] is not None else [str(ep["first_row"]["path"])])
        if story is None or not story.explains:
            continue
        hit = impact.filter((pl.col("node") == ep["node"]) & (pl.col("from") <= ep["last"] + NEAR) & (pl.col("to") >= ep["first"] - NEAR))
        out.append(_finding(ep, story, hit, _unhit_text(ctx, ep)))
    return out


def _unhit_text(ctx: Context, ep: dict) -> str:
    """What the inputs say when no client log shows the node failing: which client logs cover the
    episode's window and show nothing, or that none covers it (then which log would tell)."""
    ev = ctx.events
    w0, w1 = ep["first"] - NEAR, ep["last"] + NEAR
    clientish = (pl.col("system") == "sarama") | ((pl.col("system") == "kafka") & (pl.col("component").fill_null("") != "broker"))
    paths = ev.filter(clientish)["path"].unique(maintain_order=True).to_list() if ev.height and "component" in ev.columns else []
    reps = [r for r in (ctx.input(p) for p in paths) if r is not None]
    covering = [r.name for r in reps if r.first_ts is not None and r.last_ts is not None and r.first_ts <= w1 and r.last_ts >= w0]
    if covering:
        shown = ", ".join(safe(n) for n in covering[:4]) + (f" and {len(covering) - 4} more" if len(covering) > 4 else "")
        return (f" The client logs given that cover that window ({shown}) show no failure of {node_words(ep['node'])} then; with "
                "replication.factor >= 3 the other brokers took over its partitions.")
    if reps:
        return (f" No client log given covers that window ({plural(len(reps), 'client log')} given, all outside it): the producers' "
                "logs of that time would say whether they were hit.")
    return " No client log was given: the producers' logs of that time would say whether they were hit."


def _after_gap(ctx: Context, ep: dict) -> bool:
    """A start-up banner is a restart when the log has lines before it (a start-up at its very beginning is not)."""
    rep = ctx.input(ep["first_row"]["path"])
    return rep is not None and rep.first_ts is not None and ep["first"] - rep.first_ts > dt.timedelta(minutes=1)


def _finding(ep: dict, story, hit: pl.DataFrame, unhit: str) -> Finding:
    node = ep["node"]
    label = LABEL.get(story.kind, story.kind)
    def named(rows: pl.DataFrame) -> list[str]:
        return sorted({client_in(c, str(p)) for p, c in rows.select("path", "client").iter_rows()})

    clients = named(hit)
    losers = named(hit.filter(pl.col("lost"))) if hit.height else []  # those that lost records or sends
    # medium when a client lost something while the node was away; clients that only reconnected
    # (a rolling restart they rode out) leave it low, as their own finding is (kafka.broker-unreachable)
    lost = bool(hit.height and hit["lost"].any())
    severity = "medium" if lost else "low"
    if story.kind == "startup-failed" and not story.recovered:  # down and not coming back by itself: not context
        severity = "high" if lost else "medium"
    text = story.text.replace("The broker's side (", "From its own logs (", 1)
    if clients:
        systems = set(hit["system"].to_list()) if "system" in hit.columns else {"kafka"}
        see = [CLIENT_FINDINGS[s] for s in ("kafka", "sarama") if s in systems]
        text += (f" Clients were hit: {', '.join(safe(c) for c in clients[:4])}" + (f" and {len(clients) - 4} more" if len(clients) > 4 else "")
                 + " could not use " + node_words(node) + f" in that window (see {' / '.join(see)}).")
    else:
        text += unhit
    reasons = [f"+ {node_words(node)}'s own log ({', '.join(story.logs)}) says so: {label}"]
    if lost:
        reasons.append(f"+ {plural(len(clients), 'client log')} show{'s' if len(clients) == 1 else ''} the node failing in the same window, and {plural(len(losers), 'of them', 'of them')} lost records or sends"
                       if len(losers) < len(clients) else
                       f"+ {plural(len(clients), 'client log')} show{'s' if len(clients) == 1 else ''} the node failing in the same window, and records or sends were lost")
    elif hit.height:
        reasons.append(f"- {plural(len(clients), 'client log')} show{'s' if len(clients) == 1 else ''} the node failing in the same window, but nothing was lost there (the clients rode it out): ranked low")
    elif story.kind == "startup-failed" and not story.recovered:
        reasons.append("- no client log given shows impact; ranked medium all the same: the broker is down and not coming back by itself")
    else:
        reasons.append("- no client log given shows impact: context, ranked low")
    rem = [remedy_for(story.kind, node)] if story.kind in REMEDY else []
    if story.disk_full:
        rem.append(remedy_for("disk-full", node))
    rem.append(f"Check that no partition was left without an in-sync replica while {node_words(node)} was away "
               "(kafka-topics --describe --under-min-isr-partitions / --unavailable-partitions).")
    return Finding(
        id="kafka.broker-restart",
        severity=severity,
        title=("Kafka broker" + (f" node {node}" if node is not None else f" ({safe(ep['first_row']['path'])}, no node id in its log)")) + f": {label} at {fmt_time(story.first or ep['first'])}"
              + (f" — {plural(len(clients), 'client')} hit" if clients else ""),
        root_cause=text,
        confidence=0.85 if story.kind not in ("silent",) else 0.7,
        confidence_reasons=reasons,
        first_seen=story.first or ep["first"],
        last_seen=story.last or ep["last"],
        subjects=[{"node": node, "logs": story.logs, "kind": story.kind, "clients_hit": clients}],
        cause=story.cause(),
        evidence=ordered_evidence(story.evidence),
        remediation=rem,
        references=["Kafka operations: graceful shutdown (controlled.shutdown.enable), KIP-112 (log directory failures), KIP-631 (KRaft fencing)"],
        ruled_out=story.ruled_out,
        details={"kind": story.kind, "leaders_moved": [m["topic_partition"] for m in story.moved],
                 "down_s": round((ep["last"] - ep["first"]).total_seconds(), 3), "down": fmt_duration((ep["last"] - ep["first"]).total_seconds())},
    )


DETECTOR = Detector(
    id="kafka.broker-restart",
    title="Kafka broker: restarted, crashed, lost its disk or its session (from its own logs)",
    systems=("kafka",),
    run=run,
    doc="docs/findings/kafka.broker-restart.md",
)
