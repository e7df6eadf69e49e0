"""pulsar.dangling-producer-future: producers a Pulsar broker keeps rejecting with "Producer with id
… is already present on the connection" after a namespace-bundle unload left their creation future
dangling (apache/pulsar #6416, #6872; fixed by PR #6881 in 2.5.2). See
docs/findings/pulsar.dangling-producer-future.md.

How it decides, per broker file, connection and producer id:
  stuck      ≥ MIN_ATTEMPTS rejections spanning ≥ MIN_SPAN_S, or ≥ MANY_ATTEMPTS rejections;
             a rejection burst followed by "Created new producer" within seconds is transient.
  dangling   the last "Creating producer" of that key before the first rejection that was never
             followed by "Created new producer" / "Failed to add producer".
  ownership  "Namespace bundle for topic (T) not served by this instance" near that creation.
  unload     the bundle of the topic's namespace being unloaded around it ("Disabling ownership",
             "[Overload shedder] Unloading bundle", "Disconnecting producer", "Unloading … completed").
"""

from __future__ import annotations

import datetime as dt

import polars as pl

from logsleuth.detectors.base import Context, Detector, evidence, fmt_duration, fmt_time, rows, safe
from logsleuth.findings import Evidence, Finding

MIN_ATTEMPTS = 3
MIN_SPAN_S = 30.0
MANY_ATTEMPTS = 20
OWNERSHIP_WINDOW = (dt.timedelta(seconds=-5), dt.timedelta(seconds=15))
UNLOAD_BEFORE = dt.timedelta(minutes=3)
UNLOAD_AFTER = dt.timedelta(seconds=30)
KEY = ["path", "connection", "producer_id"]
RUN = "_run"  # one stretch of rejections of one KEY, between re-creations / connection closes

REFERENCES = [
    "apache/pulsar#6416: producers fail to create after a topic is scheduled onto a previously used broker",
    "apache/pulsar#6872: Producer cannot connect after Unloading bundle",
    "apache/pulsar PR #6881 'Handle all exceptions from topic.addProducer': fixed in 2.5.2 (and 2.6.0+)",
    "apache/pulsar PR #4138 (2.4.0) added the 'Producer with id … is already present on the connection' check",
    "apache/pulsar#9792: the same symptom by another path on 2.6.1",
]


def _namespace(topic: str | None) -> str | None:
    if not topic or "://" not in topic:
        return None
    parts = topic.split("://", 1)[1].split("/")
    return "/".join(parts[:2]) if len(parts) >= 3 else None


def run(ctx: Context) -> list[Finding]:
    ev = ctx.events.filter(pl.col("system") == "pulsar")
    present = ev.filter(pl.col("event") == "producer_already_present")
    if present.height == 0:
        return []
    # one key can be stuck, recover (re-created, or its connection closed) and clash again later:
    # each stretch between such resets is judged on its own
    present = present.sort("ts").with_columns(_pid=pl.col("producer_id").fill_null(-1))
    made = ev.filter(pl.col("event") == "producer_created").select(
        "path", "connection", _pid=pl.col("producer_id").fill_null(-1), ts="ts", _made=pl.col("ts")
    ).sort("ts")
    shut = ev.filter(pl.col("event") == "connection_closed").select("path", "connection", ts="ts", _shut=pl.col("ts")).sort("ts")
    if made.height:
        present = present.join_asof(made, on="ts", by=["path", "connection", "_pid"], strategy="backward")
    else:
        present = present.with_columns(_made=pl.lit(None, dtype=pl.Datetime("us", "UTC")))
    if shut.height:
        present = present.join_asof(shut, on="ts", by=["path", "connection"], strategy="backward")
    else:
        present = present.with_columns(_shut=pl.lit(None, dtype=pl.Datetime("us", "UTC")))
    present = present.drop("_pid")
    groups = (
        present.group_by(["path", "connection", "producer_id", "_made", "_shut"], maintain_order=True)
        .agg(
            topic=pl.col("topic").drop_nulls().first(),
            first=pl.col("ts").min(),
            last=pl.col("ts").max(),
            attempts=pl.len(),
            first_row=pl.struct(pl.all()).sort_by("ts").first(),
            last_row=pl.struct(pl.all()).sort_by("ts").last(),
        )
        .with_columns(span_s=(pl.col("last") - pl.col("first")).dt.total_milliseconds() / 1000.0)
        .drop("_made", "_shut")
        .with_row_index(RUN)
    )
    # recovery: "Created new producer" for the same key after the rejections began,
    # or the connection closed (the client reconnected or restarted)
    created = ev.filter(pl.col("event") == "producer_created").select(*KEY, c_ts="ts", c_line="line")
    recovered = (
        groups.select(RUN, *KEY, "first").join(created, on=KEY, how="inner", nulls_equal=True)
        .filter(pl.col("c_ts") >= pl.col("first"))
        .group_by(RUN).agg(recovered_at=pl.col("c_ts").min())
    )
    closed = ev.filter(pl.col("event") == "connection_closed").select("path", "connection", x_ts="ts")
    released = (
        groups.select(RUN, "path", "connection", "last").join(closed, on=["path", "connection"], how="inner")
        .filter(pl.col("x_ts") >= pl.col("last"))
        .group_by(RUN).agg(released_at=pl.col("x_ts").min())
    )
    groups = groups.join(recovered, on=RUN, how="left").join(released, on=RUN, how="left")
    is_stuck = ((pl.col("attempts") >= MIN_ATTEMPTS) & (pl.col("span_s") >= MIN_SPAN_S)) | (pl.col("attempts") >= MANY_ATTEMPTS)
    stuck = groups.filter(is_stuck)
    transient = groups.filter(~is_stuck)
    if stuck.height == 0:
        return []

    stuck = _link_dangling(ev, stuck)
    ends = {r.name: r.last_ts for r in ctx.inputs}
    findings: list[Finding] = []
    by_cause: dict[tuple, list[dict]] = {}
    for s in rows(stuck):
        for k in ("first_row", "last_row"):  # group keys are not inside the aggregated struct
            s[k].update(path=s["path"], connection=s["connection"], producer_id=s["producer_id"])
        s["cause"] = _unload_for(ev, s)
        key = (s["cause"]["bundle"], s["cause"]["path"], s["cause"]["at"]) if s["cause"] else ("?", s["path"], None)
        by_cause.setdefault(key, []).append(s)
    for _, members in by_cause.items():
        findings.append(_finding(ctx, ev, members, transient, ends))
    return findings


def _link_dangling(ev: pl.DataFrame, stuck: pl.DataFrame) -> pl.DataFrame:
    """Add the dangling 'Creating producer' (and the ownership warning next to it) to each stuck key."""
    creating = ev.filter(pl.col("event") == "producer_creating").select(
        *KEY, cr_ts="ts", cr_line="line", cr_row=pl.struct(pl.all())
    )
    done = ev.filter(pl.col("event").is_in(["producer_created", "producer_add_failed"])).select(*KEY, d_ts="ts")
    cands = stuck.select(RUN, *KEY, "first").join(creating, on=KEY, how="inner", nulls_equal=True).filter(pl.col("cr_ts") <= pl.col("first"))
    finished = (
        cands.join(done, on=KEY, how="inner", nulls_equal=True)
        .filter((pl.col("d_ts") >= pl.col("cr_ts")) & (pl.col("d_ts") <= pl.col("first")))
        .select(RUN, "cr_ts").unique()
    )
    dangling = (
        cands.join(finished, on=[RUN, "cr_ts"], how="anti")
        .sort("cr_ts")
        .group_by(RUN).agg(creating=pl.col("cr_row").last(), creating_ts=pl.col("cr_ts").last())
    )
    out = stuck.join(dangling, on=RUN, how="left")
    warn = ev.filter(pl.col("event") == "bundle_not_served").select("path", "topic", w_ts="ts", w_row=pl.struct(pl.all()))
    near = (
        out.select(RUN, "path", "topic", "creating_ts").filter(pl.col("creating_ts").is_not_null())
        .join(warn, on=["path", "topic"], how="inner")
        .filter(
            (pl.col("w_ts") >= pl.col("creating_ts") + OWNERSHIP_WINDOW[0])
            & (pl.col("w_ts") <= pl.col("creating_ts") + OWNERSHIP_WINDOW[1])
        )
        .with_columns(d=(pl.col("w_ts") - pl.col("creating_ts")).abs())
        .sort("d")
        .group_by(RUN).agg(ownership=pl.col("w_row").first())
    )
    return out.join(near, on=RUN, how="left")


def _unload_for(ev: pl.DataFrame, s: dict) -> dict | None:
    """The bundle unload this stuck producer's dangling creation happened in."""
    anchor = s["creating_ts"] or s["first"]
    ns = _namespace(s["topic"])
    if anchor is None or ns is None:
        return None
    lo, hi = anchor - UNLOAD_BEFORE, anchor + UNLOAD_AFTER
    win = ev.filter(pl.col("ts").is_between(lo, hi))
    bundles = win.filter(
        pl.col("event").is_in(["bundle_disabling", "bundle_unloaded", "shedder_unloading"])
        & pl.col("bundle").str.starts_with(ns + "/")
    )
    disc = win.filter(
        (pl.col("event") == "producer_disconnecting")
        & (pl.col("path") == s["path"])
        & (pl.col("topic") == s["topic"])
    )
    if bundles.height == 0 and disc.height == 0:
        return None
    start_rows = bundles.filter(pl.col("event") == "bundle_disabling")
    if start_rows.height:
        # the unload on the broker that rejects the producer, closest before the creation
        same = start_rows.filter(pl.col("path") == s["path"])
        pick = (same if same.height else start_rows).with_columns(d=(pl.col("ts") - anchor).abs()).sort("d").row(0, named=True)
        bundle = pick["bundle"]
    elif bundles.height:
        pick = bundles.sort("ts").row(0, named=True)
        bundle = pick["bundle"]
    else:
        pick = disc.sort("ts").row(0, named=True)
        bundle = None
    related = bundles.filter(pl.col("bundle") == bundle) if bundle else bundles.clear()
    trigger = related.filter(pl.col("event") == "shedder_unloading")
    completed = related.filter(pl.col("event") == "bundle_unloaded")
    cause = {
        "kind": "bundle-unload",
        "bundle": bundle,
        "namespace": ns,
        "at": pick["ts"],
        "path": pick["path"],
        "line": int(pick["line"]),
        "trigger": None,
        "trigger_path": None,
        "trigger_line": None,
        "completed_at": None,
        "_rows": [pick],
    }
    if trigger.height:
        t = trigger.sort("ts").row(0, named=True)
        cause.update(trigger=f"load shedding ({safe(t['detail'])}) unloading it from broker {safe(t['broker'])}",
                     trigger_path=t["path"], trigger_line=int(t["line"]))
        cause["_rows"].insert(0, t)
        attempt = ev.filter(
            (pl.col("event") == "shed_attempt") & (pl.col("path") == t["path"])
            & pl.col("ts").is_between(t["ts"] - dt.timedelta(seconds=30), t["ts"])
        )
        if attempt.height:
            cause["_rows"].insert(0, attempt.sort("ts").row(-1, named=True))
    if completed.height:
        c = completed.sort("ts").row(0, named=True)
        cause["completed_at"] = c["ts"]
        cause["_rows"].append(c)
    return cause


def _client_links(ctx: Context, ev: pl.DataFrame, s: dict) -> tuple[list[dict], str | None, str | None]:
    """The client log of a stuck producer and its lines: the connection (links.py: the client's
    'Created producer on cnx [... L:<connection> ...]', exact, or another connection of the same
    host) and the rejection the application saw ('Failed to create producer: Producer is already
    present on the connection', same topic, in that client's log)."""
    out: list[dict] = []
    link = ctx.client_of(s["connection"])
    cli = ev.filter(pl.col("component") == "client")
    if link is not None:
        proof = cli.filter((pl.col("path") == link.client_path) & (pl.col("line") == link.line))
        out += rows(proof.head(1))
    fails = cli.filter(
        (pl.col("event") == "client_producer_create_failed")
        & (pl.col("topic") == s["topic"])
        & pl.col("error").str.contains("already present on the connection", literal=True)
    )
    if link is not None:
        fails = fails.filter(pl.col("path") == link.client_path)
    elif fails.select(pl.col("path").n_unique()).item() > 1:  # several clients saw it: no guess
        fails = fails.clear()
    if fails.height:
        out += rows(fails.sort("ts").head(1))
    client = link.client_path if link else (out[-1]["path"] if out else None)
    how = link.how if link else ("the only client rejected on this topic" if out else None)
    return out, client, how


def _finding(ctx: Context, ev: pl.DataFrame, members: list[dict], transient: pl.DataFrame, ends: dict) -> Finding:
    cause = members[0]["cause"]
    subjects: list[dict] = []
    evid: list[Evidence] = []
    reasons: list[str] = []
    still = 0
    for c_row in (cause or {}).get("_rows", []):
        note = {
            "shed_attempt": "the shedder finds the broker overloaded",
            "shedder_unloading": "load shedding unloads the bundle",
            "bundle_disabling": "the unload starts on the owning broker",
            "bundle_unloaded": "the unload completes",
        }.get(c_row["event"], c_row["event"])
        evid.append(evidence(c_row, note))
    clients: set[str] = set()
    gaps: list[str] = []
    for s in members:
        end = ends.get(s["path"])
        resolved = s["recovered_at"] or s["released_at"]
        still_stuck = resolved is None
        still += int(still_stuck)
        links, client, how = _client_links(ctx, ev, s)
        client_paths = [client] if client else []
        clients.update(client_paths)
        subjects.append({
            "connection": s["connection"],
            "producer_id": s["producer_id"],
            "topic": s["topic"],
            "path": s["path"],
            "first_seen": s["first"],
            "last_seen": s["last"],
            "attempts": int(s["attempts"]),
            "still_stuck": still_stuck,
            "stuck_for": fmt_duration(((resolved or end or s["last"]) - s["first"]).total_seconds()),
            "stuck_seconds": round(((resolved or end or s["last"]) - s["first"]).total_seconds(), 3),
            "resolved_by": None if still_stuck else ("Created new producer" if s["recovered_at"] else "connection closed (client reconnected)"),
            "resolved_at": resolved,
            "client": client,
            "client_link": how,
            "dangling_creation_line": int(s["creating"]["line"]) if s["creating"] else None,
        })
        if s["creating"]:
            evid.append(evidence(s["creating"], f"producer {s['producer_id']} on {safe(s['connection'])}: creation that never completed"))
        if s["ownership"]:
            evid.append(evidence(s["ownership"], "the ownership check that threw"))
        evid.append(evidence(s["first_row"], f"first rejected retry of producer {s['producer_id']}"))
        evid.append(evidence(s["last_row"], f"last rejected retry ({s['attempts']} in all)" + (", still failing when the log ends" if still_stuck else "")))
        for r in links:
            evid.append(evidence(r, "client side" + (": the rejection the application sees" if r["event"] == "client_producer_create_failed" else f": the client made connection {safe(s['connection'])} ({how})")))
        if client:
            cov = ctx.coverage(client)
            if cov is not None:
                ok, why = cov.covers(s["first"], s["last"])
                if not ok:
                    gaps.append(f"- the client log does not cover the whole stuck period: {safe(why)}")
    evid.sort(key=lambda e: (e.ts or dt.datetime.max.replace(tzinfo=dt.timezone.utc), e.path, e.line))
    # dedupe (two producers can share the cause lines)
    seen: set = set()
    evid = [e for e in evid if not ((e.path, e.line) in seen or seen.add((e.path, e.line)))]

    n = len(members)
    have_creating = sum(1 for s in members if s["creating"])
    have_owner = sum(1 for s in members if s["ownership"])
    confidence = 0.45
    if have_creating:
        confidence += 0.2
        reasons.append(f"+ {have_creating} of {n} stuck producer(s) have a 'Creating producer' that never got 'Created new producer' or 'Failed to add producer' (the dangling future)")
    else:
        reasons.append("- no dangling 'Creating producer' line was found (INFO lines missing, or the log starts after it)")
    if have_owner:
        confidence += 0.1
        reasons.append("+ the ownership check ('not served by this instance') fired next to that creation")
    if cause:
        confidence += 0.15
        reasons.append(f"+ it happened during the unload of {safe(cause['bundle'] or cause['namespace'])}")
    else:
        reasons.append("- no bundle unload was found around the creation")
    other = _recovered_in_same_unload(ev, cause, members) if cause else 0
    if other:
        confidence += 0.05
        reasons.append(f"+ {other} other producer(s) of the same unload reconnected normally: this is per producer and connection, not a broker or client outage")
    longest = max(x["stuck_seconds"] for x in subjects)
    if longest >= 300:
        confidence += 0.03
        reasons.append(f"+ the producer(s) stayed stuck for up to {fmt_duration(longest)} (a transient clash clears within seconds)")
    era = _era_hint(ctx, members)
    if era:
        reasons.append(era)
    for path in sorted({s["path"] for s in members}):
        cov = ctx.coverage(path)
        if cov is not None and not cov.has_info:
            reasons.append(f"- {safe(path)} holds no INFO lines: the creation and unload steps cannot be shown")
            confidence -= 0.1
    if gaps:
        reasons.extend(sorted(set(gaps)))
        confidence -= 0.05

    first = min(s["first"] for s in members)
    last = max(s["last"] for s in members)
    where = sorted({s["path"] for s in members})
    who = ", ".join(f"producer {s['producer_id']} ({safe(s['topic'])}) on {safe(s['connection'])}" for s in members[:6])
    if n > 6:
        who += f" and {n - 6} more"
    if cause:
        trig = f" ({cause['trigger']})" if cause.get("trigger") else ""
        story = (
            f"During the unload of namespace bundle {safe(cause['bundle'] or cause['namespace'])} at {fmt_time(cause['at'])}{trig}, "
            f"the reconnect of {who} reached {safe(where[0])} while it was giving the bundle up. "
        )
    else:
        story = f"On {safe(', '.join(where))}, {who} kept being rejected. "
    if have_creating:
        mechanism = (
            ("Its 'Creating producer' ran into the namespace ownership check ('Namespace bundle for topic (…) not served by this instance'), "
             if have_owner else "Its 'Creating producer' was never answered with 'Created new producer' or 'Failed to add producer': ")
            + "on Pulsar 2.4–2.5.1 an exception there (the ownership check throws one during an unload) escapes "
            "ServerCnx.handleProducer, so the producer's creation future never completed. "
        )
    else:
        mechanism = (
            "The broker log does not show the creation that dangled (no unanswered 'Creating producer' before the first "
            "rejection: INFO lines missing, or the log starts later), but a producer id refused on one connection while other "
            "producers register is the mark of a creation future that never completed. "
        )
    root = (
        story
        + mechanism
        + "From then on every retry of that producer on the same connection was rejected with "
        "'Producer with id … is already present on the connection'"
        + (f"; {still} of {n} were still being rejected when the log ends." if still else "; it stopped only when the connection was closed or the producer re-created.")
        + (f" Other producers of the same unload recovered normally ({other})." if other else "")
    )
    if still:
        title = f"{n} producer(s) stuck since {fmt_time(first)}: dangling producer future after a namespace-bundle unload"
    else:
        title = (
            f"{n} producer(s) stuck for {fmt_duration(longest)} from {fmt_time(first)} (since recovered): "
            "dangling producer future after a namespace-bundle unload"
        )
    stuck_now = [x for x in subjects if x["still_stuck"]]
    remediation = [
        "Upgrade the brokers to Pulsar 2.5.2 or later (PR #6881 catches every exception from topic.addProducer, so the future can no longer dangle).",
        (
            "Now: restart or force a reconnect of the affected client(s) so they open a new connection: "
            + "; ".join(f"{safe(x['client'] or 'the client at ' + str(x['connection']))} (producer {x['producer_id']}, {safe(x['topic'])})" for x in stuck_now)
        )
        if stuck_now
        else "Nothing to restart now: "
        + "; ".join(f"producer {x['producer_id']} ({safe(x['topic'])}) recovered at {fmt_time(x['resolved_at'])} ({x['resolved_by']})" for x in subjects)
        + ". Next time, restarting or reconnecting the client ends it at once.",
        "Until upgraded, consider pausing automatic load shedding (loadBalancerSheddingEnabled=false) or lengthening its interval, since every shed bundle can strand reconnecting producers.",
        "Fix the overload that triggers the shedding (see the pulsar.load-shedding finding for the resource over threshold).",
    ]
    ruled = [
        "A transient clash (a retry overtaking a slow close) clears within seconds and is followed by 'Created new producer'; "
        + (f"these rejections lasted {subjects[0]['stuck_for']}." if len({x['stuck_for'] for x in subjects}) == 1 and len(subjects) == 1
           else f"these rejections lasted {', '.join(sorted({x['stuck_for'] for x in subjects}))} ({n} producers).")
    ]
    if transient.height:
        for t in rows(transient.head(3)):
            ruled.append(
                f"{safe(t['path'])}: {int(t['attempts'])} 'already present' for producer {t['producer_id']} on {safe(t['connection'])} "
                f"cleared in {fmt_duration(t['span_s'])}" + (" with 'Created new producer'" if t["recovered_at"] else "") + ": transient, not this bug."
            )
    created_during = ev.filter(
        (pl.col("event") == "producer_created") & pl.col("path").is_in(where) & pl.col("ts").is_between(first, last)
    ).height
    if created_during:
        ruled.append(f"Broker outage: {safe(', '.join(where))} created {created_during} other producer(s) while these were rejected.")
    if not ev.filter(pl.col("event") == "producer_add_failed").filter(pl.col("error").str.contains("already connected", literal=True)).height:
        ruled.append("Producer-name conflict ('Producer with name … is already connected to topic'): not in the logs.")
    sev = "critical" if still else "high"
    out_cause = None
    if cause:
        out_cause = {k: v for k, v in cause.items() if not k.startswith("_")}
    return Finding(
        id="pulsar.dangling-producer-future",
        severity=sev,
        title=title,
        root_cause=root,
        confidence=min(confidence, 0.98),
        confidence_reasons=reasons,
        first_seen=first,
        last_seen=last,
        subjects=subjects,
        cause=out_cause,
        evidence=evid,
        remediation=remediation,
        references=REFERENCES,
        ruled_out=ruled,
        details={"clients": sorted(clients), "transient": int(transient.height)},
    )


def _recovered_in_same_unload(ev: pl.DataFrame, cause: dict, members: list[dict]) -> int:
    stuck = {(s["path"], s["connection"], s["producer_id"]) for s in members}
    ns = cause["namespace"]
    win = ev.filter(
        (pl.col("event") == "producer_created")
        & pl.col("ts").is_between(cause["at"], cause["at"] + dt.timedelta(minutes=5))
        & pl.col("topic").str.contains("://" + ns + "/", literal=True)
    )
    return sum(1 for r in win.select("path", "connection", "producer_id").iter_rows() if r not in stuck)


def _era_hint(ctx: Context, members: list[dict]) -> str | None:
    lays = {ctx.input(s["path"]).layout for s in members if ctx.input(s["path"])}
    if "pulsar-broker-2x" in lays:
        return "+ the broker logs use the 2.x time-only layout and the 2.4–2.10 'Producer with id <topic>' text: consistent with an affected 2.4–2.5.1 broker"
    if lays & {"pulsar-broker-iso"}:
        return "- the broker logs use the post-2.7 layout: 2.5.2+ catches this exception, so another path (e.g. #9792) may be at work"
    return None


DETECTOR = Detector(
    id="pulsar.dangling-producer-future",
    title="Pulsar producers stuck with 'already present on the connection' after a bundle unload",
    systems=("pulsar",),
    run=run,
    doc="docs/findings/pulsar.dangling-producer-future.md",
)
