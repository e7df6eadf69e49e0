"""The client's view of pulsar.dangling-producer-future, for when only client logs tell it.

App teams often have only their own log. There the stuck producer shows as the Java client's
'[topic] [producer] Failed to create producer: Producer is already present on the connection'
(and 'Could not get connection to broker: Producer is already present … -- Will try again in N s'),
retried for as long as the broker holds the producer id. Per client log, topic and stretch (between
two 'Created producer on cnx' of that topic) the rejections are counted with Polars; a stretch as
long as the broker-side rule asks for (min_attempts_count over min_span_s, or many_attempts_count in
pulsar.dangling-producer-future.toml) is a stuck producer, reported at lower confidence and pointing
to the broker logs, unless a broker log given shows the same topic stuck (then the broker-side
finding tells it all). The facts are dangling_facts.DanglingFacts with ``client_only`` true; the
verdict and the words are the finding's TOML file.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Callable

import polars as pl

from logsleuth.detectors.base import evidence, fmt_duration, ordered_evidence, rows
from logsleuth.detectors.finding import Evidence, Finding
from logsleuth.detectors.pulsar.cpp import with_server_messages
from logsleuth.detectors.pulsar.dangling_facts import TH, VERDICT, DanglingFacts

TEXT = "present on the connection"  # 'already present on …' and 3.x 'already failed to register present on …'
REJECT_EVENTS = ["client_producer_create_failed", "client_connection_failed", "client_producer_create_retry"]
CLOSED_BEFORE = dt.timedelta(seconds=TH["closed_before_s"])  # a broker's 'closed producer' notification this close before the first rejection
# a send timeout on the producer during its rejections (or this soon after the last) makes a stretch
# shorter than the rule's span a stuck producer: the application already lost sends to it
SEND_TIMEOUT_AFTER = dt.timedelta(seconds=TH["send_timeout_after_s"])
BROKER_WINDOW = dt.timedelta(seconds=TH["broker_lookback_s"])  # the broker logs are searched for unmatched rejection lines from this long before the first


@dataclass
class BrokerLogs:
    """The broker logs given: their time spans, and a finder of rejection lines no pattern matched."""

    spans: dict  # path -> (first, last)
    near: Callable[[str, tuple], list] = lambda path, window: []

    def covering(self, first: dt.datetime | None, last: dt.datetime | None) -> list[str]:
        """The broker logs whose span covers the start of this window (they could show the rejections)."""
        if first is None:
            return []
        return sorted(p for p, (a, b) in self.spans.items() if a is not None and b is not None and a <= first <= b)


def stuck_on_client(ev: pl.DataFrame, covered: pl.DataFrame, ends: dict, brokers: "BrokerLogs | None" = None) -> list[Finding]:
    """Findings for producers the client logs show rejected as already present, one per client log.
    ``covered`` has the (topic, client, first, last) of the broker-side stuck producers."""
    cli = with_server_messages(ev.filter(pl.col("component") == "client"))  # C++ <=4.0: the message is on the line before
    fails = cli.filter(pl.col("event").is_in(REJECT_EVENTS) & pl.col("error").str.contains(TEXT, literal=True) & pl.col("topic").is_not_null())
    if fails.height == 0:
        return []
    made = cli.filter(pl.col("event") == "client_producer_created").select(
        "path", "topic", ts="ts", _made=pl.col("ts"), _cnx=pl.col("local_address"), _broker=pl.col("address"), _made_row=pl.struct(pl.all())
    ).sort("ts")
    groups = _not_on_brokers(_stuck(cli, fails, made), covered)
    if groups.height == 0:
        return []
    ok = made.select("path", "topic", ok_ts="ts")
    recovered = (
        groups.select("_g", "path", "topic", "last").join(ok, on=["path", "topic"], how="inner")
        .filter(pl.col("ok_ts") > pl.col("last"))
        .group_by("_g", maintain_order=True).agg(recovered_at=pl.col("ok_ts").min())
    )
    closed = cli.filter(pl.col("event") == "client_broker_closed_producer").select("path", x_ts="ts", x_row=pl.struct(pl.all()))
    notified = (
        groups.select("_g", "path", "first").join(closed, on="path", how="inner")
        .filter(pl.col("x_ts").is_between(pl.col("first") - CLOSED_BEFORE, pl.col("first")))
        .sort("x_ts").group_by("_g", maintain_order=True).agg(closed_row=pl.col("x_row").last())
    )
    groups = groups.join(recovered, on="_g", how="left").join(notified, on="_g", how="left").sort("first")
    out = []
    for path in groups.get_column("path").unique(maintain_order=True).to_list():
        f = _facts(rows(groups.filter(pl.col("path") == path)), ends.get(path), brokers or BrokerLogs({}))
        out.append(_finding(f))
    return out


def _stuck(cli: pl.DataFrame, fails: pl.DataFrame, made: pl.DataFrame) -> pl.DataFrame:
    """The stretches of rejections (per client log, topic and last 'Created producer on cnx') that
    the rule calls stuck."""
    fails = fails.sort("ts")
    if made.height:
        fails = fails.join_asof(made, on="ts", by=["path", "topic"], strategy="backward")
    else:
        fails = fails.with_columns(_made=pl.lit(None, dtype=fails.schema["ts"]), _cnx=pl.lit(None, dtype=pl.String),
                                   _broker=pl.lit(None, dtype=pl.String), _made_row=pl.lit(None))
    # each attempt logs 'Failed to create producer' and often 'Could not get connection …' too: count
    # the former when the log has it, else the latter
    n_fail = pl.col("event") == "client_producer_create_failed"
    groups = (
        fails.group_by(["path", "topic", "_made"], maintain_order=True)
        .agg(
            producer_name=pl.col("producer_name").drop_nulls().first(),
            connection=pl.col("_cnx").first(),
            broker=pl.col("_broker").first(),
            made_row=pl.col("_made_row").first(),
            first=pl.col("ts").min(),
            last=pl.col("ts").max(),
            attempts=pl.when(n_fail.any()).then(n_fail.sum()).otherwise(pl.len()),
            first_row=pl.struct(pl.all()).sort_by("ts").first(),
            last_row=pl.struct(pl.all()).sort_by("ts").last(),
        )
        .with_columns(span_s=(pl.col("last") - pl.col("first")).dt.total_milliseconds() / 1000.0)
        .with_row_index("_g")
    )
    # sends that timed out on the producer meanwhile: the clash is not transient, whatever its span
    timeouts = cli.filter(pl.col("event") == "client_send_timeout").select("path", "topic", t_ts="ts")
    timed_out = (groups.select("_g", "path", "topic", "first", "last").join(timeouts, on=["path", "topic"], how="inner")
                 .filter(pl.col("t_ts").is_between(pl.col("first"), pl.col("last") + SEND_TIMEOUT_AFTER))
                 .group_by("_g").agg(send_timeouts=pl.len()))
    min_att, min_span, many = int(TH["min_attempts_count"]), float(TH["min_span_s"]), int(TH["many_attempts_count"])
    return (
        groups.join(timed_out, on="_g", how="left").with_columns(pl.col("send_timeouts").fill_null(0))
        .filter(((pl.col("attempts") >= min_att) & ((pl.col("span_s") >= min_span) | (pl.col("send_timeouts") > 0)))
                | (pl.col("attempts") >= many))
    )


def _not_on_brokers(groups: pl.DataFrame, covered: pl.DataFrame) -> pl.DataFrame:
    """The stretches no broker-side finding tells already."""
    if not (groups.height and covered.height):
        return groups
    seen = (
        groups.select("_g", "path", "topic", "first", "last")
        .join(covered.select(pl.col("topic").alias("b_topic"), b_client="client", b_first="first", b_last="last"), how="cross")
        .filter(
            # the broker-side finding names this client log for this topic, or it overlaps in time
            ((pl.col("b_client") == pl.col("path")) & (pl.col("b_topic") == pl.col("topic")))
            | (
                (pl.col("b_topic").is_null() | (pl.col("b_topic") == pl.col("topic")))
                & (pl.col("b_first") <= pl.col("last") + CLOSED_BEFORE)
                & (pl.col("b_last") >= pl.col("first") - CLOSED_BEFORE)
            )
        )
        .get_column("_g")
    )
    return groups.filter(~pl.col("_g").is_in(seen.implode()))


def _subject(path: str, s: dict, end: dt.datetime | None) -> dict:
    resolved = s["recovered_at"]
    upto = resolved or end or s["last"]
    return {
        "path": path,
        "client": path,
        "topic": s["topic"],
        "producer_name": s["producer_name"],
        "connection": s["connection"],
        "broker": s["broker"],
        "producer_id": None,
        "first_seen": s["first"],
        "last_seen": s["last"],
        "attempts": int(s["attempts"]),
        "still_stuck": resolved is None,
        "stuck_for": fmt_duration((upto - s["first"]).total_seconds()),
        "stuck_seconds": round((upto - s["first"]).total_seconds(), 3),
        "resolved_by": None if resolved is None else "Created producer on cnx (client log)",
        "resolved_at": resolved,
    }


def _facts(members: list[dict], end: dt.datetime | None, broker_logs: BrokerLogs) -> DanglingFacts:
    """The facts of the producers one client log shows stuck."""
    path = members[0]["path"]
    for s in members:
        for k in ("first_row", "last_row"):  # group keys are not inside the aggregated struct
            s[k].update(path=path, topic=s["topic"])
    subjects = [_subject(path, s, end) for s in members]
    first = min(s["first"] for s in members)
    last = max(s["last"] for s in members)
    closed = [s for s in members if s["closed_row"]]
    given = broker_logs.covering(first, last)  # broker logs given that cover the window: they should show it
    near = [m for b in given for m in broker_logs.near(b, (first - BROKER_WINDOW, last))]
    return DanglingFacts(
        client_only=True, subjects=subjects, first=first, last=last, longest_s=max(x["stuck_seconds"] for x in subjects),
        path=path, brokers_given=given, near=near, near_file=near[0].file if near else None, near_line=near[0].line if near else None,
        broker_closed=bool(closed), closed_at=closed[0]["closed_row"]["ts"] if closed else None,
        send_timeouts=sum(int(s.get("send_timeouts") or 0) for s in members), attempts=[x["attempts"] for x in subjects],
        broker_addresses=sorted({s["broker"] for s in members if s["broker"]}), members=members,
    )


def _evidence(f: DanglingFacts) -> list[Evidence]:
    v = VERDICT
    evid = []
    for s, x in zip(f.members, f.subjects):
        if s["made_row"]:
            evid.append(evidence(s["made_row"], v.note("client_made", f, item=x)))
        if s["closed_row"]:
            evid.append(evidence(s["closed_row"], v.note("client_closed", f, item=x)))
        evid.append(evidence(s["first_row"], v.note("client_first", f, item=x)))
        evid.append(evidence(s["last_row"], v.note("client_last", f, item=x)))
    evid += [Evidence(m.file, m.line, m.text, m.ts, note=v.note("client_near", f)) for m in f.near[:2]]
    return ordered_evidence(evid)


def _finding(f: DanglingFacts) -> Finding:
    return Finding(
        **VERDICT.parts(f), first_seen=f.first, last_seen=f.last, subjects=f.subjects, cause=None, evidence=_evidence(f),
        details={"clients": [f.path], "client_only": True, "brokers": f.broker_addresses, "broker_logs_covering": f.brokers_given,
                 "near_misses": [{"path": m.file, "line": m.line, "text": m.text} for m in f.near]},
    )
