"""kafka.isr-shrink: partitions whose in-sync replica set shrank, told from the leaders' server.log
('Shrinking ISR from A to B', kafka-broker.toml), grouped per replica dropped and episode (shrinks
closer than ``episode_gap_s``), with whether they expanded again. Low unless a client log given
shows the dropped node failing in an overlapping window. The verdict and the words are in
kafka.isr-shrink.toml beside this file; see docs/findings/kafka.isr-shrink.md.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

import polars as pl

from logsleuth.detectors.base import Context, Detector, evidence, ordered_evidence, time_of
from logsleuth.detectors.facts import Subject, Window
from logsleuth.detectors.finding import Finding
from logsleuth.detectors.kafka.broker import broker_events, impact_by_node
from logsleuth.detectors.verdict import Verdict

VERDICT = Verdict.load(__file__, "kafka.isr-shrink")


@dataclass
class IsrShrinkFacts:
    """One episode: the replica dropped from the ISR of some partitions."""

    node: int | None  # the broker dropped (None: the lines do not say); the first when several were
    partitions: list[str]
    shrinks: int  # 'Shrinking ISR' lines
    min_isr: int | None  # the fewest in-sync replicas left
    first: dt.datetime
    last: dt.datetime  # the last shrink
    expanded_at: dt.datetime | None  # the last 'Expanding ISR' of these partitions after the first shrink
    recovered: bool  # every partition expanded again
    clients_hit: list[str] = field(default_factory=list)  # 'client in path' of clients that failed on the node meanwhile
    dropped_nodes: list[int] = field(default_factory=list)  # every broker the shrinks dropped
    leader: int | None = None  # the broker whose log says it (the partitions' leader)
    skipped: int = 0  # 'Cached zkVersion … skip updating ISR' of these partitions: the change never reached ZooKeeper
    skipped_row: dict | None = field(default=None, repr=False)
    first_row: dict = field(default_factory=dict, repr=False)
    last_row: dict = field(default_factory=dict, repr=False)
    expanded_row: dict | None = field(default=None, repr=False)


def _tp(df: pl.DataFrame) -> pl.DataFrame:
    """``topic_partition`` as T-P also where the lines print the topic and partition apart (0.8-0.11's 'Partition [T,P]')."""
    if df.height == 0 or "topic" not in df.columns or "partition" not in df.columns:
        return df
    return df.with_columns(topic_partition=pl.coalesce(pl.col("topic_partition"), pl.col("topic") + "-" + pl.col("partition").cast(pl.String)))


def episodes(ctx: Context) -> list[IsrShrinkFacts]:
    bev = broker_events(ctx)
    sh = bev.filter((pl.col("event") == "isr_shrink") & pl.col("ts").is_not_null()) if bev.height else bev
    if sh.height == 0:
        return []
    th = VERDICT.thresholds
    # the replica dropped: named by 2.6+ ('Out of sync replicas: (brokerId: N'), else the ISR difference
    before = pl.col("isr_before").str.split(",")
    after = pl.col("isr").fill_null("").str.split(",")
    diff = before.list.set_difference(after).list.eval(pl.element().cast(pl.Int64, strict=False)).list.drop_nulls().list.sort()
    sh = _tp(sh).with_columns(gone=diff).with_columns(dropped=pl.coalesce(pl.col("node"), pl.col("gone").list.first()))
    gap = dt.timedelta(seconds=th["episode_gap_s"])
    sh = sh.sort(["dropped", "ts"]).with_columns(grp=((pl.col("ts").diff().over("dropped") > gap).fill_null(True)).cum_sum())
    eps = sh.group_by(["dropped", "grp"], maintain_order=True).agg(
        first=pl.col("ts").min(), last=pl.col("ts").max(), tps=pl.col("topic_partition").drop_nulls().unique().sort(),
        shrinks=pl.len(), min_isr=pl.col("isr").str.split(",").list.len().min(),
        gone=pl.col("gone").explode().drop_nulls().unique().sort(), leader=pl.col("broker_id").drop_nulls().first(),
        first_row=pl.struct(pl.all()).first(), last_row=pl.struct(pl.all()).last(),
    )
    ex = _tp(bev.filter(pl.col("event") == "isr_expand")).select("topic_partition", x_ts="ts", x_row=pl.struct(pl.all()))
    sk = _tp(bev.filter(pl.col("event") == "isr_update_skipped")).select("topic_partition", s_ts="ts", s_row=pl.struct(pl.all()))
    impact = impact_by_node(ctx)
    before_s, after_s = dt.timedelta(seconds=th["client_before_s"]), dt.timedelta(seconds=th["client_after_s"])
    out = []
    for ep in eps.iter_rows(named=True):
        back = ex.filter(pl.col("topic_partition").is_in(ep["tps"]) & (pl.col("x_ts") > ep["first"])).sort("x_ts")
        hit = impact.filter((pl.col("node") == ep["dropped"]) & (pl.col("from") <= ep["last"] + after_s) & (pl.col("to") >= ep["first"] - before_s))
        tps = list(ep["tps"])
        stuck = sk.filter(pl.col("topic_partition").is_in(tps) & (pl.col("s_ts") >= ep["first"]) & (pl.col("s_ts") <= ep["last"] + gap)).sort("s_ts")
        out.append(IsrShrinkFacts(
            node=ep["dropped"], partitions=tps, shrinks=ep["shrinks"], min_isr=ep["min_isr"], first=ep["first"], last=ep["last"],
            expanded_at=time_of(back["x_ts"].max()) if back.height else None,
            recovered=back.height > 0 and back.get_column("topic_partition").n_unique() >= len(tps),
            clients_hit=sorted({f"{c or '?'} in {p}" for p, c in hit.select("path", "client").iter_rows()}),
            first_row=ep["first_row"], last_row=ep["last_row"], expanded_row=back.row(-1, named=True)["x_row"] if back.height else None,
            dropped_nodes=[int(n) for n in (ep["gone"] if ep["gone"] is not None and len(ep["gone"]) else ([ep["dropped"]] if ep["dropped"] is not None else []))],
            leader=ep["leader"], skipped=stuck.height, skipped_row=stuck.row(0, named=True)["s_row"] if stuck.height else None,
        ))
    return out


def finding(f: IsrShrinkFacts) -> Finding:
    v = VERDICT
    evid = [evidence(f.first_row, v.note("first", f))]
    if f.shrinks > 1:
        evid.append(evidence(f.last_row, v.note("last", f)))
    if f.expanded_row is not None:
        evid.append(evidence(f.expanded_row, v.note("expanded", f)))
    if f.skipped_row is not None:
        evid.append(evidence(f.skipped_row, v.note("skipped", f)))
    end = f.expanded_at if f.recovered else f.last
    return Finding(
        **v.parts(f),
        first_seen=f.first,
        last_seen=end,
        subjects=[Subject({"node": f.node, "partitions": list(f.partitions), "shrinks": f.shrinks, "recovered": f.recovered},
                          window=Window.of(f.first, end, "first ISR shrink", "the ISR expanded again" if f.recovered else "last ISR shrink"))],
        cause={"kind": "isr-shrink", "node": f.node},
        evidence=ordered_evidence(evid),
        details={"partitions": list(f.partitions), "shrinks": f.shrinks, "min_isr": f.min_isr, "clients_hit": list(f.clients_hit),
                 "dropped_nodes": list(f.dropped_nodes), "isr_updates_skipped": f.skipped},
    )


def run(ctx: Context) -> list[Finding]:
    return [finding(f) for f in episodes(ctx)]


DETECTOR = Detector(id=VERDICT.id, title=VERDICT.title, systems=("kafka",), run=run, doc=VERDICT.doc, facts=IsrShrinkFacts, verdict=VERDICT)
