"""The client's view of pulsar.dangling-producer-future, for when only client logs tell it.

App teams often have only their own log. There the stuck producer shows as the Java client's
'[topic] [producer] Failed to create producer: Producer is already present on the connection'
(and 'Could not get connection to broker: Producer is already present … -- Will try again in N s'),
retried for as long as the broker holds the producer id. Per client log, topic and stretch (between
two 'Created producer on cnx' of that topic) the rejections are counted with Polars; a stretch as
long as the broker-side rule asks for (pulsar_dangling.MIN_ATTEMPTS over MIN_SPAN_S, or
MANY_ATTEMPTS) is a stuck producer, reported at lower confidence and pointing to the broker logs,
unless a broker log given shows the same topic stuck (then the broker-side finding tells it all).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Callable

import polars as pl

from logsleuth.detectors.base import evidence, fmt_duration, fmt_time, ordered_evidence, plural, rows, safe
from logsleuth.detectors.finding import Finding
from logsleuth.detectors.pulsar.cpp import with_server_messages

TEXT = "present on the connection"  # 'already present on …' and 3.x 'already failed to register present on …'
REJECT_EVENTS = ["client_producer_create_failed", "client_connection_failed", "client_producer_create_retry"]
CLOSED_BEFORE = dt.timedelta(minutes=3)  # a broker's 'closed producer' notification this close before the first rejection
# a send timeout on the producer during its rejections (or this soon after the last) makes a stretch
# shorter than the rule's span a stuck producer: the application already lost sends to it
SEND_TIMEOUT_AFTER = dt.timedelta(seconds=30)


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


def stuck_on_client(ev: pl.DataFrame, covered: pl.DataFrame, ends: dict, rule: tuple[int, float, int],
                    references: list[str], brokers: "BrokerLogs | None" = None) -> list[Finding]:
    """Findings for producers the client logs show rejected as already present, one per client log.
    ``covered`` has the (topic, client, first, last) of the broker-side stuck producers; ``rule`` is
    (min attempts, min span in s, many attempts)."""
    cli = with_server_messages(ev.filter(pl.col("component") == "client"))  # C++ <=4.0: the message is on the line before
    fails = cli.filter(pl.col("event").is_in(REJECT_EVENTS) & pl.col("error").str.contains(TEXT, literal=True) & pl.col("topic").is_not_null())
    if fails.height == 0:
        return []
    made = cli.filter(pl.col("event") == "client_producer_created").select(
        "path", "topic", ts="ts", _made=pl.col("ts"), _cnx=pl.col("local_address"), _broker=pl.col("address"), _made_row=pl.struct(pl.all())
    ).sort("ts")
    fails = fails.sort("ts")
    if made.height:
        fails = fails.join_asof(made, on="ts", by=["path", "topic"], strategy="backward")
    else:
        fails = fails.with_columns(_made=pl.lit(None, dtype=fails.schema["ts"]), _cnx=pl.lit(None, dtype=pl.String),
                                   _broker=pl.lit(None, dtype=pl.String), _made_row=pl.lit(None))
    # each attempt logs 'Failed to create producer' and often 'Could not get connection …' too: count
    # the former when the log has it, else the latter
    n_fail = pl.col("event") == "client_producer_create_failed"
    min_att, min_span, many = rule
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
    groups = (
        groups.join(timed_out, on="_g", how="left").with_columns(pl.col("send_timeouts").fill_null(0))
        .filter(((pl.col("attempts") >= min_att) & ((pl.col("span_s") >= min_span) | (pl.col("send_timeouts") > 0)))
                | (pl.col("attempts") >= many))
    )
    if groups.height and covered.height:
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
        groups = groups.filter(~pl.col("_g").is_in(seen.implode()))
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
        out.append(_finding(rows(groups.filter(pl.col("path") == path)), ends.get(path), references, brokers or BrokerLogs({})))
    return out


def _name(s: dict) -> str:
    who = f"producer {safe(s['producer_name'])}" if s["producer_name"] else "a producer"
    return f"{who} of {safe(s['topic'])}"


def _finding(members: list[dict], end: dt.datetime | None, references: list[str], broker_logs: BrokerLogs) -> Finding:
    path = members[0]["path"]
    subjects, evid = [], []
    for s in members:
        for k in ("first_row", "last_row"):  # group keys are not inside the aggregated struct
            s[k].update(path=path, topic=s["topic"])
        resolved = s["recovered_at"]
        upto = resolved or end or s["last"]
        subjects.append({
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
        })
        if s["made_row"]:
            evid.append(evidence(s["made_row"], f"{_name(s)} last connected here (connection {safe(s['connection'])} to {safe(s['broker'])})"))
        if s["closed_row"]:
            evid.append(evidence(s["closed_row"], "the broker closed producers on this connection (what a bundle unload or topic move does)"))
        evid.append(evidence(s["first_row"], f"first rejection of {_name(s)}"))
        evid.append(evidence(s["last_row"], f"last rejection ({s['attempts']} in all)" + (", still failing when the log ends" if resolved is None else "")))
    n = len(members)
    still = [x for x in subjects if x["still_stuck"]]
    first = min(s["first"] for s in members)
    last = max(s["last"] for s in members)
    longest = max(x["stuck_seconds"] for x in subjects)
    who = ", ".join(_name(s) for s in members[:6]) + (f" and {n - 6} more" if n > 6 else "")
    closed = [s for s in members if s["closed_row"]]
    brokers = sorted({s["broker"] for s in members if s["broker"]})

    confidence = 0.55
    window = (first - dt.timedelta(minutes=5), last)
    given = broker_logs.covering(first, last)  # broker logs given that cover the window: they should show it
    near = [m for b in given for m in broker_logs.near(b, window)]
    from logsleuth.detectors.finding import Evidence

    evid += [Evidence(m.file, m.line, m.text, m.ts, note="a broker line with the rejection's words that no pattern matched (a wording the packs do not know)")
             for m in near[:2]]
    evid = ordered_evidence(evid)
    if given:
        shown = ", ".join(safe(b) for b in given)
        absent = (
            f"- the broker log{'s' if len(given) > 1 else ''} given ({shown}) cover{'' if len(given) > 1 else 's'} this window, but no line in "
            f"{'them' if len(given) > 1 else 'it'} was recognised as these rejections"
            + (f": {safe(near[0].file)}:{near[0].line} carries their words in a wording no pattern knows" if near else
               ": the broker may log them at a level or in a wording this log does not show")
        )
    else:
        absent = ("- only the client log shows it: the broker's 'Producer with id … is already present on the connection', the "
                  "creation that never completed and the unload behind it are not in the logs given")
    reasons = [
        absent,
        f"+ the broker refused the same producer {', '.join(str(x['attempts']) for x in subjects)} {'time' if len(subjects) == 1 and subjects[0]['attempts'] == 1 else 'times'} over up to "
        f"{fmt_duration(longest)} (a transient clash clears within seconds)",
    ]
    timed = sum(int(s.get("send_timeouts") or 0) for s in members)
    if timed:
        reasons.append(f"+ {plural(timed, 'send')} on {'it' if n == 1 else 'them'} timed out meanwhile ('can not send message to the topic … within given timeout'): not a clash that clears")
    if closed:
        confidence += 0.05
        reasons.append(f"+ the broker closed producers on this client's connection at {fmt_time(closed[0]['closed_row']['ts'])}, just before (what a bundle unload does)")
    if not still:
        confidence -= 0.05
        reasons.append(f"- {'the producer' if n == 1 else 'the producers'} connected again later in this log")

    root = (
        f"The client log {safe(path)} shows {who} rejected by the broker with 'Producer is already present on the connection' "
        f"from {fmt_time(first)}" + (f" (after the broker closed its producers at {fmt_time(closed[0]['closed_row']['ts'])})" if closed else "")
        + ": the broker still holds that producer id on the connection, so every retry is refused. That is the client's view "
        "of a creation future the broker never completed — the dangling producer future of Pulsar 2.4–2.5.1 after a "
        "namespace-bundle unload (#6416/#6872), or the same symptom by another path on later versions (#9792). "
        + (f"{len(still)} of {n} were still being rejected when the log ends." if still else "Each recovered when the producer connected again.")
        + (
            f" The broker log{'s' if len(given) > 1 else ''} given ({', '.join(safe(b) for b in given)}) cover{'' if len(given) > 1 else 's'} this window,"
            " but none of their recognised lines is one of these rejections"
            + (f"; {safe(near[0].file)}:{near[0].line} has their words in a wording the packs do not know (quoted below)"
               if near else "")
            + ": which of the two it is shows in that log's lines around the first rejection."
            if given else " No broker log given covers this window; the broker's log of that window tells which of the two it is."
        )
    )
    if still:
        title = f"{plural(n, 'producer')} rejected as 'already present on the connection' since {fmt_time(first)} (client log only)"
    else:
        title = f"{plural(n, 'producer')} rejected as 'already present on the connection' for up to {fmt_duration(longest)} from {fmt_time(first)} (client log only; since recovered)"
    remediation = [
        (
            "Now: restart the application or force its Pulsar client to reconnect (close and re-create the client), so the "
            + ("producer gets" if len(still) == 1 else "producers get") + " a new connection: " + "; ".join(f"{safe(x['topic'])} (producer {safe(x['producer_name'] or '?')})" for x in still) + "."
        )
        if still
        else f"Nothing to restart now: {'the producer' if n == 1 else 'the producers'} connected again. Next time, restarting or reconnecting the client ends it at once.",
        (
            f"Read {', '.join(safe(b) for b in given)} from a few minutes before {fmt_time(first)} (logsleuth events "
            f"{safe(given[0])} --since … -g 'producer|present|unload'): its 'Creating producer' without 'Created new producer' or "
            "'Failed to add producer', and the bundle unload around it, confirm the cause and the version at fault"
            + (f"; the line at {safe(near[0].file)}:{near[0].line} is a rejection wording to add to the packs (a pack edit and a sample)" if near else "")
            + "."
        ) if given else (
            "Get the broker log" + (f" of {', '.join(safe(b) for b in brokers)}" if brokers else "")
            + f" from a few minutes before {fmt_time(first)} and run logsleuth on it with this file: its 'Creating producer' without "
            "'Created new producer' or 'Failed to add producer', and the bundle unload around it, confirm the cause and the version at fault."
        ),
        "If the brokers run 2.5.1 or older: upgrade to Pulsar 2.5.2 or later (PR #6881); on later versions, upgrade to the newest "
        "patch release of your line (PR #12900, PR #21155).",
    ]
    ruled = [
        "A producer-name conflict: the error is 'already present on the connection', not 'Producer with name … is already connected to topic'.",
        "A broker or network outage: the broker answers every attempt (a refusal, not a timeout or a failed connection).",
    ]
    return Finding(
        id="pulsar.dangling-producer-future",
        severity="critical" if still else "high",
        title=title,
        root_cause=root,
        confidence=confidence,
        confidence_reasons=reasons,
        first_seen=first,
        last_seen=last,
        subjects=subjects,
        cause=None,
        evidence=evid,
        remediation=remediation,
        references=references,
        ruled_out=ruled,
        details={"clients": [path], "client_only": True, "brokers": brokers, "broker_logs_covering": given,
                 "near_misses": [{"path": m.file, "line": m.line, "text": m.text} for m in near]},
    )

