"""kafka.isr-shrink: partitions whose in-sync replica set shrank, told from the leaders' server.log
('Shrinking ISR from A to B', kafka-broker.toml), grouped per replica dropped and episode (shrinks
closer than GAP), with whether they expanded again. Low unless a client log given shows the dropped
node failing in an overlapping window. See docs/findings/kafka.isr-shrink.md.
"""

from __future__ import annotations

import datetime as dt

import polars as pl

from logsleuth.detectors.base import Context, Detector, evidence, fmt_time, ordered_evidence, plural, safe
from logsleuth.detectors.finding import Finding
from logsleuth.detectors.kafka.broker import broker_events, impact_by_node

GAP = dt.timedelta(minutes=10)


def run(ctx: Context) -> list[Finding]:
    bev = broker_events(ctx)
    sh = bev.filter((pl.col("event") == "isr_shrink") & pl.col("ts").is_not_null()) if bev.height else bev
    if sh.height == 0:
        return []
    # the replica dropped: named by 2.6+ ('Out of sync replicas: (brokerId: N'), else the ISR difference
    before = pl.col("isr_before").str.split(",")
    after = pl.col("isr").fill_null("").str.split(",")
    sh = sh.with_columns(dropped=pl.coalesce(pl.col("node"), before.list.set_difference(after).list.first().cast(pl.Int64, strict=False)))
    sh = sh.sort(["dropped", "ts"]).with_columns(grp=((pl.col("ts").diff().over("dropped") > GAP).fill_null(True)).cum_sum())
    eps = sh.group_by(["dropped", "grp"], maintain_order=True).agg(
        first=pl.col("ts").min(), last=pl.col("ts").max(), tps=pl.col("topic_partition").drop_nulls().unique().sort(),
        shrinks=pl.len(), min_isr=pl.col("isr").str.split(",").list.len().min(),
        first_row=pl.struct(pl.all()).first(), last_row=pl.struct(pl.all()).last(),
    )
    ex = bev.filter(pl.col("event") == "isr_expand").select("topic_partition", x_ts="ts", x_row=pl.struct(pl.all()))
    impact = impact_by_node(ctx)
    out = []
    for ep in eps.iter_rows(named=True):
        back = ex.filter(pl.col("topic_partition").is_in(ep["tps"]) & (pl.col("x_ts") > ep["first"])).sort("x_ts")
        hit = impact.filter((pl.col("node") == ep["dropped"]) & (pl.col("from") <= ep["last"] + dt.timedelta(minutes=3)) & (pl.col("to") >= ep["first"] - dt.timedelta(minutes=5)))
        out.append(_finding(ep, back, hit))
    return out


def _finding(ep: dict, back: pl.DataFrame, hit: pl.DataFrame) -> Finding:
    node, tps = ep["dropped"], ep["tps"]
    shown = ", ".join(safe(t) for t in tps[:6]) + (f" and {len(tps) - 6} more" if len(tps) > 6 else "")
    who = f"broker {node}" if node is not None else "a replica"
    recovered = back.height > 0 and back.get_column("topic_partition").n_unique() >= len(tps)
    text = (f"The ISR of {plural(len(tps), 'partition')} ({shown}) shrank, dropping {who}, from {fmt_time(ep['first'])}"
            + (f"; down to {ep['min_isr']} in-sync replica(s)" if ep["min_isr"] is not None else "")
            + (f"; expanded again by {fmt_time(back['x_ts'].max())}." if recovered else "; not all of them expanded again in the logs given."))
    if ep["min_isr"] == 1:
        text += " With one in-sync replica left, producers with acks=all and min.insync.replicas=2 are refused (NOT_ENOUGH_REPLICAS) and a second failure loses data."
    clients = sorted({f"{c or '?'} in {p}" for p, c in hit.select("path", "client").iter_rows()})
    if clients:
        text += f" Clients failed to use node {node} in the same window: {', '.join(safe(c) for c in clients[:4])}."
    evid = [evidence(ep["first_row"], f"first ISR shrink dropping {who}")]
    if ep["shrinks"] > 1:
        evid.append(evidence(ep["last_row"], "last ISR shrink of this episode"))
    if back.height:
        evid.append(evidence(back.row(-1, named=True)["x_row"], "the ISR expanded again"))
    return Finding(
        id="kafka.isr-shrink",
        severity="medium" if clients or ep["min_isr"] == 1 else "low",
        title=f"ISR shrank on {plural(len(tps), 'partition')}, dropping {who} ({fmt_time(ep['first'])})",
        root_cause=text,
        confidence=0.8,
        confidence_reasons=["+ the partition leaders' own 'Shrinking ISR' lines"] + (["+ client logs show the node failing meanwhile"] if clients else []),
        first_seen=ep["first"],
        last_seen=back["x_ts"].max() if recovered else ep["last"],
        subjects=[{"node": node, "partitions": list(tps), "shrinks": ep["shrinks"], "recovered": recovered}],
        cause={"kind": "isr-shrink", "node": node},
        evidence=ordered_evidence(evid),
        remediation=[f"Find out why {who} stopped fetching (its own server.log: restart, GC pause, disk; replica.lag.time.max.ms, 30000 ms since 2.5) "
                     "and watch UnderReplicatedPartitions / UnderMinIsrPartitionCount."],
        references=["Kafka replication: replica.lag.time.max.ms, min.insync.replicas, unclean.leader.election.enable"],
        ruled_out=[],
        details={"partitions": list(tps), "shrinks": ep["shrinks"], "min_isr": ep["min_isr"], "clients_hit": clients},
    )


DETECTOR = Detector(
    id="kafka.isr-shrink",
    title="Kafka broker: in-sync replica sets shrank (from the leaders' logs)",
    systems=("kafka",),
    run=run,
    doc="docs/findings/kafka.isr-shrink.md",
)
