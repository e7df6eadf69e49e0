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

from logsleuth.detectors.pulsar.client_only import stuck_on_client
from logsleuth.detectors.base import Context, Detector, evidence, gather, keep, rows_at, take, fmt_duration, fmt_time, line_ref, ordered_evidence, plural, rows, safe, segment_of
from logsleuth.detectors.facts import absence
from logsleuth.detectors.finding import Evidence, Finding

MIN_ATTEMPTS = 3
MIN_SPAN_S = 30.0
MANY_ATTEMPTS = 20
OWNERSHIP_WINDOW = (dt.timedelta(seconds=-5), dt.timedelta(seconds=15))
INFER_WINDOW = dt.timedelta(minutes=10)  # a rejection naming neither connection nor topic takes its producer from an unanswered creation this close before
UNLOAD_BEFORE = dt.timedelta(minutes=3)
UNLOAD_AFTER = dt.timedelta(seconds=30)
OTHER_UNLOADS_NAMED = 3  # other unloads in the window named in "ruled out" (the rest counted)
KEY = ["path", "connection", "producer_id"]
RUN = "_run"  # one stretch of rejections of one KEY, between re-creations / connection closes

REFERENCES = [
    "apache/pulsar#6416: producers fail to create after a topic is scheduled onto a previously used broker",
    "apache/pulsar#6872: Producer cannot connect after Unloading bundle",
    "apache/pulsar PR #6881 'Handle all exceptions from topic.addProducer': fixed in 2.5.2 (and 2.6.0+)",
    "apache/pulsar PR #4138 (2.4.0) added the 'Producer with id … is already present on the connection' check",
    "apache/pulsar#9792: the same symptom by another path on 2.6.1",
]


def _seconds(a: dt.datetime | None, b: dt.datetime | None) -> float | None:
    """Seconds from ``a`` to ``b``; None when a log had no time for either (a "no time" finding)."""
    return None if a is None or b is None else (b - a).total_seconds()


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


def _namespace(topic: str | None) -> str | None:
    if not topic or "://" not in topic:
        return None
    parts = topic.split("://", 1)[1].split("/")
    return "/".join(parts[:2]) if len(parts) >= 3 else None


def run(ctx: Context) -> list[Finding]:
    ev = ctx.system("pulsar")
    ends = {r.name: r.last_ts for r in ctx.log_inputs()}
    findings, covered = _broker_side(ctx, ev, ends)
    # producers the client logs show rejected, where no broker log given shows them stuck
    return findings + stuck_on_client(ev, covered, ends, (MIN_ATTEMPTS, MIN_SPAN_S, MANY_ATTEMPTS), REFERENCES, _broker_logs(ctx, ev))


BROKER_EVENTS = ("producer_already_present", "producer_creating", "producer_created", "producer_closed", "bundle_unloaded",
                 "shedder_unloading", "topic_unloading", "connection_opened")  # (when the table has no component column)


def _broker_logs(ctx: Context, ev: pl.DataFrame) -> "BrokerLogs":
    """The Pulsar broker logs given (a log with any broker-side event), each with its time span, and
    how to find a rejection line in one that no pattern matched (Context.near_misses)."""
    from logsleuth.detectors.pulsar.client_only import BrokerLogs

    comp = ev.filter(pl.col("component") == "broker") if "component" in ev.columns else ev.filter(pl.col("event").is_in(list(BROKER_EVENTS)))
    paths = set(comp["path"].cast(pl.String).unique().to_list()) if comp.height else set()
    spans = {r.name: (r.first_ts, r.last_ts) for r in ctx.log_inputs() if r.name in paths}
    return BrokerLogs(spans, lambda path, window: ctx.near_misses(path, ["producer_already_present"], window, limit=3))


def _broker_side(ctx: Context, ev: pl.DataFrame, ends: dict) -> tuple[list[Finding], pl.DataFrame]:
    """The findings from the brokers' rejections, and the (topic, client log, first, last) of every
    stuck stretch they name."""
    covered = pl.DataFrame(schema={"topic": pl.String, "client": pl.String, "first": ev.schema["ts"], "last": ev.schema["ts"]})
    # the rejections with the columns the grouping needs and their row in ``ev`` (``_ev``): a
    # reconnect storm is mostly rejections, and a filter of whole rows would copy most of the table;
    # the first and last row of each stretch are taken from ``ev`` once the stretches are known
    present = (
        ev.lazy().with_row_index("_ev").filter(pl.col("event") == "producer_already_present")
        .select("_ev", *KEY, "ts", "topic").collect()
    )
    if present.height == 0:
        return [], covered
    # one key can be stuck, recover (re-created, or its connection closed) and clash again later:
    # each stretch between such resets is judged on its own
    present = present.sort("ts").with_columns(_pid=pl.col("producer_id").fill_null(-1))
    made = take(ev, pl.col("event") == "producer_created",
                "path", "connection", _pid=pl.col("producer_id").fill_null(-1), ts="ts", _made=pl.col("ts")).sort("ts")
    shut = take(ev, pl.col("event") == "connection_closed", "path", "connection", ts="ts", _shut=pl.col("ts")).sort("ts")
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
            _first_ev=pl.col("_ev").sort_by("ts").first(),
            _last_ev=pl.col("_ev").sort_by("ts").last(),
        )
        .with_columns(span_s=(pl.col("last") - pl.col("first")).dt.total_milliseconds() / 1000.0)
        .drop("_made", "_shut")
        .with_row_index(RUN)
    )
    del present, made, shut  # (what the stretches were made from: let go before the next steps build theirs)
    # each stretch's first and last rejection as whole rows (all columns but the group keys)
    fields = [c for c in ev.columns if c not in KEY]
    groups = groups.with_columns(
        first_row=gather(ev, groups["_first_ev"], pl.struct(fields)).to_series(),
        last_row=gather(ev, groups["_last_ev"], pl.struct(fields)).to_series(),
    ).drop("_first_ev", "_last_ev")
    # recovery: "Created new producer" for the same key after the rejections began,
    # or the connection closed (the client reconnected or restarted)
    created = take(ev, pl.col("event") == "producer_created", *KEY, c_ts="ts", c_line="line")
    recovered = (
        groups.select(RUN, *KEY, "first").join(created, on=KEY, how="inner", nulls_equal=True)
        .filter(pl.col("c_ts") >= pl.col("first"))
        .group_by(RUN, maintain_order=True).agg(recovered_at=pl.col("c_ts").min())
    )
    closed = take(ev, pl.col("event") == "connection_closed", "path", "connection", x_ts="ts")
    released = (
        groups.select(RUN, "path", "connection", "last").join(closed, on=["path", "connection"], how="inner")
        .filter(pl.col("x_ts") >= pl.col("last"))
        .group_by(RUN, maintain_order=True).agg(released_at=pl.col("x_ts").min())
    )
    groups = groups.join(recovered, on=RUN, how="left").join(released, on=RUN, how="left")
    del created, closed, recovered, released
    is_stuck = ((pl.col("attempts") >= MIN_ATTEMPTS) & (pl.col("span_s") >= MIN_SPAN_S)) | (pl.col("attempts") >= MANY_ATTEMPTS)
    stuck = groups.filter(is_stuck)
    transient = groups.filter(~is_stuck)
    if stuck.height == 0:
        return [], covered

    findings: list[Finding] = []
    by_cause: dict[tuple, list[dict]] = {}
    unload_ev = ev.filter(pl.col("event").is_in(["bundle_disabling", "bundle_unloaded", "shedder_unloading", "producer_disconnecting", "shed_attempt"]))
    for s in _link_dangling(ev, stuck):
        for k in ("first_row", "last_row"):  # group keys are not inside the aggregated struct
            s[k].update(path=s["path"], connection=s["connection"], producer_id=s["producer_id"])
        s["cause"] = _unload_for(unload_ev, s)
        key = (s["cause"]["bundle"], s["cause"]["path"], s["cause"]["at"]) if s["cause"] else ("?", s["path"], None)
        by_cause.setdefault(key, []).append(s)
    for _, members in by_cause.items():
        findings.append(_finding(ctx, ev, members, transient, ends))
    covered = pl.DataFrame(
        [{"topic": x["topic"], "client": x["client"], "first": x["first_seen"], "last": x["last_seen"]} for f in findings for x in f.subjects],
        schema=covered.schema,
    )
    return findings, covered


def _creations(ev: pl.DataFrame) -> pl.DataFrame:
    """Every 'Creating producer' with the answer it got, if any: the next 'Created new producer' or
    'Failed to add producer' of the same producer on the same connection, or that connection's close
    ('Closed connection from …': the creation cannot be answered any more). The 2.x 'Failed to add
    producer' text names the topic but no producer id: it answers the creation of that topic."""
    # ``cr_ev``: the creation's row in ``ev`` (whole rows are taken only for the few creations a
    # finding names: a reconnect storm is mostly creations)
    creating = take(
        ev.with_row_index("cr_ev"), pl.col("event") == "producer_creating", *KEY, "topic", "cr_ev", cr_ts="ts"
    ).with_columns(_pid=pl.col("producer_id").fill_null(-1)).sort("cr_ts")
    answers = take(ev, pl.col("event").is_in(["producer_created", "producer_add_failed"]), "path", "connection", "producer_id", "topic", "ts", "line", "file", "event")
    ts_type = ev.schema["ts"]
    out = creating
    # each kind of answer as (ts, line, file, event) columns with its own prefix, then the earliest
    kinds = []
    by_id = answers.filter(pl.col("producer_id").is_not_null()).select(
        "path", "connection", _pid="producer_id", a_ts="ts", a_line="line", a_file=pl.col("file").cast(pl.String), a_event="event"
    ).sort("a_ts")
    if by_id.height:
        out = out.join_asof(by_id, left_on="cr_ts", right_on="a_ts", by=["path", "connection", "_pid"], strategy="forward")
        kinds.append("a")
    by_topic = answers.filter(pl.col("producer_id").is_null() & pl.col("topic").is_not_null()).select(
        "path", "connection", "topic", t_ts="ts", t_line="line", t_file=pl.col("file").cast(pl.String), t_event=pl.lit("producer_add_failed")
    ).sort("t_ts")
    if by_topic.height:
        out = out.join_asof(by_topic, left_on="cr_ts", right_on="t_ts", by=["path", "connection", "topic"], strategy="forward")
        kinds.append("t")
    closes = take(
        ev, (pl.col("event") == "connection_closed") & pl.col("connection").is_not_null(),
        "path", "connection", x_ts="ts", x_line="line", x_file=pl.col("file").cast(pl.String), x_event="event",
    ).sort("x_ts")
    if closes.height:
        out = out.join_asof(closes, left_on="cr_ts", right_on="x_ts", by=["path", "connection"], strategy="forward")
        kinds.append("x")
    if not kinds:
        return out.with_columns(
            answered_at=pl.lit(None, dtype=ts_type), answer=pl.lit(None, dtype=pl.Int64), answer_event=pl.lit(None, dtype=pl.String),
            answer_file=pl.lit(None, dtype=pl.String),
        ).select(*KEY, "topic", "cr_ts", "cr_ev", "answered_at", "answer", "answer_event", "answer_file")
    # the earliest answer of the kinds present (ties: a Created/Failed before a close)
    first = pl.min_horizontal([pl.col(f"{k}_ts") for k in kinds])
    pick = None
    for k in reversed(kinds):
        cond = pl.col(f"{k}_ts").is_not_null() & (pl.col(f"{k}_ts") == first)
        pick = (pl.when(cond).then(pl.lit(k)) if pick is None else pl.when(cond).then(pl.lit(k)).otherwise(pick))
    out = out.with_columns(answered_at=first, _k=pick)

    def chosen(field: str) -> pl.Expr:
        expr = pl.lit(None)
        for k in kinds:
            expr = pl.when(pl.col("_k") == k).then(pl.col(f"{k}_{field}")).otherwise(expr)
        return expr

    out = out.with_columns(answer=chosen("line").cast(pl.Int64), answer_event=chosen("event").cast(pl.String), answer_file=chosen("file").cast(pl.String))
    return out.select(*KEY, "topic", "cr_ts", "cr_ev", "answered_at", "answer", "answer_event", "answer_file")


def _answer_text(event: str | None) -> str:
    return {"producer_add_failed": "Failed to add producer", "connection_closed": "the connection's close"}.get(event or "", "Created new producer")


def _link_dangling(ev: pl.DataFrame, stuck: pl.DataFrame) -> list[dict]:
    """Each stuck stretch with the creation behind it: ``creating`` (the last 'Creating producer' of
    that producer before the first rejection that was never answered: the dangling future),
    ``answered`` (that last creation, when it *was* answered, and by what), ``ownership`` (the
    'not served by this instance' warning next to the dangling creation) and ``inferred`` (texts
    without the producer id or connection — pre-2.4, structured logging — take them from the only
    unanswered creation before the rejections, if there is exactly one)."""
    cr = _creations(ev)
    warn = ev.filter(pl.col("event") == "bundle_not_served").with_row_index("_wi")
    out = rows(stuck)
    # the last creation of each (path, connection, producer) at or before its first rejection, for
    # every stuck stretch at once (a backward as-of join; one filter per producer cost ~4 ms each)
    last_cr = _last_creations(cr, stuck)
    cr_by_path: dict | None = None  # (made when a rejection names no producer: a copy of the creations)
    empty_cr = cr.clear()
    wanted: list[tuple[dict, str, int]] = []  # (where, key, row of ev): the whole rows, fetched at once below
    for s in out:
        s.update(creating=None, answered=None, ownership=None, inferred=None)
        if s["producer_id"] is None or s["connection"] is None:
            unanswered = pl.col("answered_at").is_null() | (pl.col("answered_at") > s["first"])
            if cr_by_path is None:
                cr_by_path = {k[0]: g for k, g in cr.group_by("path")} if cr.height else {}
            before = cr_by_path.get(s["path"], empty_cr).filter(pl.col("cr_ts") <= s["first"])
            # the rejection names no producer (pre-2.4, structured logging): the unanswered creation behind
            # it. With the connection and topic named (pre-2.4) it is the one on that (connection, topic),
            # however long before; with neither (structured logging) only one shortly before can be told.
            near = before.filter(unanswered)
            if s["connection"] is None or s["topic"] is None:
                near = near.filter(pl.col("cr_ts") >= s["first"] - INFER_WINDOW)
            for col in ("connection", "topic"):
                if s[col] is not None:
                    near = near.filter(pl.col(col) == s[col])
            ids = near.select("connection", "producer_id", "topic").unique()
            if ids.height == 1:
                r = rows(near.sort("cr_ts").tail(1))[0]
                wanted += [(s, "inferred", r["cr_ev"]), (s, "creating", r["cr_ev"])]
                for col in ("connection", "producer_id", "topic"):
                    if s[col] is None:
                        s[col] = r[col]
        else:
            last = last_cr.get(s[RUN])
            if last is not None:
                if last["answered_at"] is None or last["answered_at"] > s["first"]:
                    wanted.append((s, "creating", last["cr_ev"]))
                else:  # the future of the last creation did complete: nothing dangles from it
                    s["answered"] = {"creation": None, "line": last["answer"], "file": last["answer_file"], "path": s["path"],
                                     "event": last["answer_event"], "at": last["answered_at"]}
                    wanted.append((s["answered"], "creation", last["cr_ev"]))
    fetched = rows_at(ev, [i for _, _, i in wanted])
    for where, key, i in wanted:
        where[key] = fetched[i]
    if warn.height:
        _ownership(warn, out)
    return out


def _last_creations(cr: pl.DataFrame, stuck: pl.DataFrame) -> dict[int, dict]:
    """RUN -> the last 'Creating producer' of its (path, connection, producer id) at or before the
    stretch's first rejection (with its answer), for the stretches that name both."""
    named = stuck.filter(pl.col("producer_id").is_not_null() & pl.col("connection").is_not_null() & pl.col("first").is_not_null())
    if named.height == 0 or cr.height == 0:
        return {}
    right = cr.filter(pl.col("cr_ts").is_not_null()).with_row_index("_ci").sort("cr_ts", maintain_order=True)
    left = named.select(RUN, "path", "connection", "producer_id", "first").sort("first")
    hit = left.join_asof(right.select("path", "connection", "producer_id", "cr_ts", "_ci"), left_on="first", right_on="cr_ts",
                         by=["path", "connection", "producer_id"], strategy="backward")
    hit = hit.filter(pl.col("_ci").is_not_null())
    if hit.height == 0:
        return {}
    picked = right.join(hit.select(RUN, "_ci"), on="_ci", how="inner")
    return {r[RUN]: r for r in rows(picked.select(RUN, "cr_ev", "answered_at", "answer", "answer_file", "answer_event"))}


def _ownership(warn: pl.DataFrame, out: list[dict]) -> None:
    """The 'not served by this instance' warning nearest each dangling creation (same broker file and
    topic, within OWNERSHIP_WINDOW), for every stuck stretch at once."""
    want = [(s[RUN], s["path"], s["topic"], s["creating"]["ts"]) for s in out
            if s["creating"] is not None and s["topic"] is not None and s["creating"].get("ts") is not None]
    if not want:
        return
    left = pl.DataFrame(want, schema={RUN: pl.UInt32, "path": pl.String, "topic": pl.String, "_c": warn.schema["ts"]}, orient="row")
    cand = (
        left.join(warn.select("_wi", "path", "topic", "ts"), on=["path", "topic"], how="inner", maintain_order="left_right")
        .filter(pl.col("ts").is_between(pl.col("_c") + OWNERSHIP_WINDOW[0], pl.col("_c") + OWNERSHIP_WINDOW[1]))
        .with_columns(_d=(pl.col("ts") - pl.col("_c")).abs())
        .sort([RUN, "_d"], maintain_order=True)
        .group_by(RUN, maintain_order=True).first()
    )
    if cand.height == 0:
        return
    pick = dict(cand.select(RUN, "_wi").iter_rows())
    by_run = {s[RUN]: s for s in out}
    for run_id, wi in pick.items():
        by_run[run_id]["ownership"] = rows(warn.slice(int(wi), 1).drop("_wi"))[0]


def _unload_for(ev: pl.DataFrame, s: dict) -> dict | None:
    """The bundle unload this stuck producer's dangling creation happened in (``ev``: the unload
    events, bundle_disabling, bundle_unloaded, shedder_unloading, producer_disconnecting and
    shed_attempt, filtered once for all producers)."""
    anchor = (s["creating"] or {}).get("ts") or (s["answered"] or {}).get("creation", {}).get("ts") or s["first"]
    ns = _namespace(s["topic"])
    if anchor is None or ns is None or ev.height == 0:
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
    if bundles.height:
        pick, others = _pick_unload(bundles, s["path"], anchor)
        bundle = pick["bundle"]
    else:
        pick, others = disc.sort("ts").row(0, named=True), []
        bundle = None
    related = bundles.filter(pl.col("bundle") == bundle) if bundle else bundles.clear()
    trigger = related.filter(pl.col("event") == "shedder_unloading")
    completed = related.filter(pl.col("event") == "bundle_unloaded")
    cause = {
        "kind": "bundle-unload",
        "bundle": bundle,
        "namespace": ns,
        "at": pick["ts"],
        "path": pick.get("file") or pick["path"],  # the file the line is in (a segment of a rotated log)
        "line": int(pick["line"]),
        "trigger": None,
        "trigger_path": None,
        "trigger_line": None,
        "completed_at": None,
        "_rows": [pick],
        "_others": others,
    }
    if trigger.height:
        t = trigger.sort("ts").row(0, named=True)
        cause.update(trigger=f"load shedding ({safe(t['detail'])}) unloading it from broker {safe(t['broker'])}",
                     trigger_path=t.get("file") or t["path"], trigger_line=int(t["line"]))
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


# the cause among several unloads in the window, as a stated rule (docs/findings/pulsar.dangling-producer-future.md):
# 1. on the broker whose log rejects the producer (the unload that left the future there),
# 2. that began before the creation was attempted (the creation ran during it; a later unload cannot
#    have left it dangling), the latest such;
# an unload only after the creation is taken only when there is no other (clocks a little apart);
# the unload named by its start line ('Disabling ownership') when its log has one
UNLOAD_KIND_ORDER = {"bundle_disabling": 0, "shedder_unloading": 1, "bundle_unloaded": 2}


def _pick_unload(bundles: pl.DataFrame, path: str, anchor: dt.datetime) -> tuple[dict, list[dict]]:
    """(the unload line the rule picks, the other unloads in the window with why each was not taken)."""
    ranked = bundles.with_columns(
        _other_broker=pl.col("path") != path,
        _after=pl.col("ts") > anchor,
        _kind=pl.col("event").replace_strict(UNLOAD_KIND_ORDER, default=3, return_dtype=pl.Int64),
        _d=(pl.col("ts") - pl.lit(anchor)).abs(),
    ).sort(["_other_broker", "_after", "_d", "_kind"], maintain_order=True)
    pick = ranked.row(0, named=True)
    # the unload's own start line when the nearest was its shedder or completion line
    start = ranked.filter(
        (pl.col("event") == "bundle_disabling") & (pl.col("path") == pick["path"]) & (pl.col("bundle") == pick["bundle"])
        & (pl.col("ts") <= pick["ts"])
    )
    if start.height and pick["event"] != "bundle_disabling":
        pick = start.sort("ts").row(-1, named=True)
    others: list[dict] = []
    seen = {pick["bundle"]}  # (the same bundle's lines on other brokers are this unload's: its shedder, its new owner)
    for r in ranked.sort("_d", maintain_order=True).iter_rows(named=True):  # named nearest first: the ones a reader would suspect
        if r["bundle"] in seen:
            continue
        seen.add(r["bundle"])
        why = ("on another broker than the one that rejects the producer" if r["_other_broker"] and not pick["_other_broker"]
               else "began after the creation was attempted" if r["_after"] and not pick["_after"]
               else "an earlier unload: the creation was attempted during a later one" if not r["_after"] and r["ts"] < pick["ts"]
               else "further from the creation")
        others.append({"bundle": r["bundle"], "path": r.get("file") or r["path"], "line": int(r["line"]), "at": r["ts"], "why": why})
    return pick, others


_NO_ROWS = object()


def _client_events(ev: pl.DataFrame) -> tuple[pl.DataFrame, dict]:
    """The client-side events, and the clients' 'already present' rejections by topic (once per run)."""
    cli = ev.filter(pl.col("component") == "client")
    fails = cli.filter(
        (pl.col("event") == "client_producer_create_failed")
        & pl.col("error").str.contains("already present on the connection", literal=True)
    )
    return cli, {k[0]: g for k, g in fails.group_by("topic", maintain_order=True)} if fails.height else {}


def _client_links(ctx: Context, ev: pl.DataFrame, s: dict) -> tuple[list[dict], str | None, str | None]:
    """The client log of a stuck producer and its lines: the connection (links.py: the client's
    'Created producer on cnx [... L:<connection> ...]', exact, or another connection of the same
    host) and the rejection the application saw ('Failed to create producer: Producer is already
    present on the connection', same topic, in that client's log)."""
    out: list[dict] = []
    link = ctx.client_of(s["connection"])
    cli, rejected = ctx.memo(("pulsar.dangling.client-events", id(ev)), lambda: _client_events(ev))
    if link is not None and cli.height:
        proof = cli.filter((pl.col("path") == link.client_path) & (pl.col("line") == link.line))
        if link.file is not None:
            proof = proof.filter(pl.col("file").cast(pl.String) == link.file)
        out += rows(proof.head(1))
    fails = rejected.get(s["topic"], _NO_ROWS) if rejected and s["topic"] is not None else _NO_ROWS
    if fails is _NO_ROWS:
        fails = cli.clear()
    if link is not None:
        fails = fails.filter(pl.col("path") == link.client_path)
    elif fails.height > 1 and fails.select(pl.col("path").n_unique()).item() > 1:  # several clients saw it: no guess
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
            "stuck_for": fmt_duration(_seconds(s["first"], resolved or end or s["last"])),
            "stuck_seconds": _round(_seconds(s["first"], resolved or end or s["last"])),
            "resolved_by": None if still_stuck else ("Created new producer" if s["recovered_at"] else "connection closed (client reconnected)"),
            "resolved_at": resolved,
            "client": client,
            "client_link": how,
            "dangling_creation_line": int(s["creating"]["line"]) if s["creating"] else None,
            "answered_creation_line": int(s["answered"]["creation"]["line"]) if s["answered"] else None,
            "identity_from_line": int(s["inferred"]["line"]) if s["inferred"] else None,
        })
        # a rotated log: which segment those lines are in (only when that is not the subject's path)
        for key, row in (("dangling_creation_file", s["creating"]), ("answered_creation_file", (s["answered"] or {}).get("creation")),
                         ("identity_from_file", s["inferred"])):
            if row and segment_of(row) is not None:
                subjects[-1][key] = segment_of(row)
        if s["creating"]:
            evid.append(evidence(s["creating"], f"{_who(s)}: creation that never completed"
                                 + (" (the rejections name no producer: it is the only unanswered creation before them)" if s["inferred"] else "")))
        if s["answered"]:
            evid.append(evidence(s["answered"]["creation"], f"{_who(s)}: the last creation before the rejections"))
            ans = ev.filter((pl.col("path") == s["path"]) & (pl.col("line") == s["answered"]["line"]))
            if s["answered"]["file"] is not None:
                ans = ans.filter(pl.col("file").cast(pl.String) == s["answered"]["file"])
            if ans.height:
                evid.append(evidence(rows(ans.head(1))[0], f"…answered with {'Failed to add producer' if s['answered']['event'] == 'producer_add_failed' else 'Created new producer'}: its future completed"))
        if s["ownership"]:
            evid.append(evidence(s["ownership"], "the ownership check that threw"))
        evid.append(evidence(s["first_row"], f"first rejected retry of {_who(s, short=True)}"))
        evid.append(evidence(s["last_row"], f"last rejected retry ({s['attempts']} in all)" + (", still failing when the log ends" if still_stuck else "")))
        for r in links:
            evid.append(evidence(r, "client side" + (": the rejection the application sees" if r["event"] == "client_producer_create_failed" else f": the client made connection {safe(s['connection'])} ({how})")))
        if client:
            cov = ctx.coverage(client)
            if cov is not None:
                ok, why = cov.covers(s["first"], s["last"])
                if not ok:
                    gaps.append(f"- the client log does not cover the whole stuck period: {safe(why)}")
    evid = ordered_evidence(evid)  # two producers can share the cause lines

    n = len(members)
    have_creating = sum(1 for s in members if s["creating"])
    have_owner = sum(1 for s in members if s["ownership"])
    answered = [s for s in members if s["answered"]]
    era_facts, era_notes = _era(ctx, ev, members)
    fixed = bool(era_facts)
    confidence = 0.45
    if have_creating:
        confidence += 0.2
        reasons.append(f"+ {have_creating} of {plural(n, 'stuck producer')} {'has' if n == 1 else 'have'} a 'Creating producer' that never got 'Created new producer' or 'Failed to add producer' (the dangling future)")
    elif answered:
        confidence -= 0.1
        a0 = answered[0]["answered"]
        reasons.append(
            f"- the last 'Creating producer' before the rejections ({line_ref(a0['creation'])}) was answered "
            f"({line_ref(a0)}, {_answer_text(a0['event'])}): that future completed"
        )
    else:
        reasons.append("- no dangling 'Creating producer' line was found (INFO lines missing, or the log starts after it)")
    if any(s["inferred"] for s in members):
        confidence -= 0.05
        reasons.append("- the rejection text names no producer: the producer is the only unanswered 'Creating producer' shortly before it")
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
        reasons.append(f"+ {plural(other, 'other producer')} of the same unload reconnected normally: this is per producer and connection, not a broker or client outage")
    longest = max((x["stuck_seconds"] for x in subjects if x["stuck_seconds"] is not None), default=None)
    if longest is not None and longest >= 300:
        confidence += 0.03
        reasons.append(f"+ {'the producer' if n == 1 else 'the producers'} stayed stuck for up to {fmt_duration(longest)} (a transient clash clears within seconds)")
    reasons.extend(era_notes)
    if fixed:
        confidence -= 0.25
    for path in sorted({s["path"] for s in members}):
        cov = ctx.coverage(path)
        if cov is not None and not cov.has_info:
            reasons.append(f"- {safe(path)} holds no INFO lines: the creation and unload steps cannot be shown")
            confidence -= 0.1
    if gaps:
        reasons.extend(sorted(set(gaps)))
        confidence -= 0.05

    first = min((s["first"] for s in members if s["first"] is not None), default=None)
    last = max((s["last"] for s in members if s["last"] is not None), default=None)
    where = sorted({s["path"] for s in members})
    who = ", ".join(_who(s) for s in members[:6])
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
    if fixed:
        mechanism = (
            ("Its 'Creating producer' ran into the namespace ownership check ('Namespace bundle for topic (…) not served by this instance') and was never answered. "
             if have_owner else "Its 'Creating producer' was never answered with 'Created new producer' or 'Failed to add producer'. " if have_creating
             else "Its last 'Creating producer' before the rejections was answered, so that future completed, yet the producer id stayed registered. " if answered
             else "The broker log does not show the creation behind it (no unanswered 'Creating producer' before the first rejection: "
             "INFO lines missing, the creation logged at DEBUG as in later 3.x/4.x, or the log starts later). ")
            + "These brokers are newer than 2.5.1 (" + "; ".join(era_facts) + "), where PR #6881 catches the exception that left "
            "the 2.4–2.5.1 creation future dangling; the same symptom has come back on later versions by other paths (#9792 on 2.6.1), "
            "so this is one of those, not #6416/#6872 itself. "
        )
    elif have_creating:
        mechanism = (
            ("Its 'Creating producer' ran into the namespace ownership check ('Namespace bundle for topic (…) not served by this instance'), "
             if have_owner else "Its 'Creating producer' was never answered with 'Created new producer' or 'Failed to add producer': ")
            + "on Pulsar up to 2.5.1 an exception there (the ownership check throws one during an unload) escapes "
            "ServerCnx.handleProducer, so the producer's creation future never completed. "
        )
    elif answered:
        a0 = answered[0]["answered"]
        mechanism = (
            f"Its last 'Creating producer' before the rejections ({line_ref(a0['creation'])}) was answered with "
            f"{_answer_text(a0['event'])} ({line_ref(a0)}), so that "
            "creation's future did complete (2.5.2+ catches the exception that left it dangling on 2.4–2.5.1), yet the producer id stayed "
            "registered on the connection: the same symptom by another path (#9792 on 2.6.1), not the 2.4–2.5.1 dangling future. "
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
        + "From then on every retry of that producer on the same connection was rejected as "
        "'… already present on the connection'"
        + (f"; {still} of {n} were still being rejected when the log ends." if still else "; it stopped only when the connection was closed or the producer re-created.")
        + (f" Other producers of the same unload recovered normally ({other})." if other else "")
    )
    what = (
        "dangling producer future after a namespace-bundle unload" if cause and not (fixed or answered)
        else "producer id left registered after a namespace-bundle unload" if cause
        else "rejected as 'already present on the connection' (" + _unload_unseen(ctx, where, first) + ")"
    )
    if still:
        title = f"{plural(n, 'producer')} stuck since {fmt_time(first)}: {what}"
    else:
        title = f"{plural(n, 'producer')} stuck for {fmt_duration(longest)} from {fmt_time(first)} (since recovered): {what}"
    stuck_now = [x for x in subjects if x["still_stuck"]]
    upgrade = (
        "These brokers already carry the 2.5.2 fix (PR #6881): upgrade to the newest patch release of your line (PR #12900, and "
        "PR #21155 in 2.10.6/2.11.3/3.0.2, changed how a pending or failed producer future is handled) and, if it persists there, "
        "report it upstream with the lines below."
    ) if fixed or answered else (
        "If the brokers run 2.5.1 or older: upgrade to Pulsar 2.5.2 or later (PR #6881 catches every exception from "
        "topic.addProducer, so the future can no longer dangle)."
    )
    targets = _restart_targets(stuck_now)
    recovered = [f"{_who(x, short=True)} recovered at {fmt_time(x['resolved_at'])} ({x['resolved_by']})" for x in subjects[:NAMED_MAX]]
    recovered += [""] * max(0, len(subjects) - NAMED_MAX)  # counted by _some, not written out
    now = (
        (
            f"Now: restart or force a reconnect of {_some(targets, 'client')}, so "
            f"{'it opens' if len(targets) <= 1 else 'they open'} a new connection."
        )
        if stuck_now
        else "Nothing to restart now: "
        + _some(recovered, "producer")
        + ". Next time, restarting or reconnecting the client ends it at once."
    )
    remediation = [now, upgrade]
    if cause and cause.get("trigger"):  # the unload was the load shedder's: advice on shedding fits
        remediation += [
            "Until upgraded, consider pausing automatic load shedding (loadBalancerSheddingEnabled=false) or lengthening its interval, since every shed bundle can strand reconnecting producers.",
            "Fix the overload behind the shedding: the shedder's line quoted below names the broker and the resource over the threshold.",
        ]
    ruled = [
        "A transient clash (a retry overtaking a slow close) clears within seconds and is followed by 'Created new producer'; "
        + (_lasted(subjects[0]) if len(subjects) == 1
           else f"these producers were stuck {_durations(subjects)} ({n} producers).")
    ]
    if transient.height:
        for t in rows(transient.head(3)):
            ruled.append(
                f"{safe(t['path'])}: {int(t['attempts'])} 'already present' for {_who(t, short=True)} "
                f"cleared in {fmt_duration(t['span_s'])}" + (" with 'Created new producer'" if t["recovered_at"] else "") + ": transient, not this bug."
            )
    created_during = ev.filter(
        (pl.col("event") == "producer_created") & pl.col("path").is_in(where) & pl.col("ts").is_between(first, last)
    ).height
    if created_during:
        ruled.append(f"Broker outage: {safe(', '.join(where))} created {plural(created_during, 'other producer')} while {'this one was' if n == 1 else 'these were'} rejected.")
    for o in (cause or {}).get("_others", [])[:OTHER_UNLOADS_NAMED]:
        ruled.append(f"The unload of {safe(o['bundle'])} at {fmt_time(o['at'])} ({safe(o['path'])}:{o['line']}): {o['why']}.")
    if len((cause or {}).get("_others", [])) > OTHER_UNLOADS_NAMED:
        ruled.append(f"{plural(len(cause['_others']) - OTHER_UNLOADS_NAMED, 'more unload')} of the namespace in that window, further from the creation (every one in the JSON's cause.other_unloads).")
    if not ev.filter(pl.col("event") == "producer_add_failed").filter(pl.col("error").str.contains("already connected", literal=True)).height:
        ruled.append("Producer-name conflict ('Producer with name … is already connected to topic'): not in the logs.")
    sev = "critical" if still else "high"
    out_cause = None
    if cause:
        out_cause = {k: v for k, v in cause.items() if not k.startswith("_")}
        if cause.get("_others"):
            out_cause["other_unloads"] = cause["_others"]
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


# a finding names at most this many clients or producers in a sentence (20,000 stuck producers
# made a 2 MB remediation line); the subjects table and --format json list every one
NAMED_MAX = 12


def _some(items: list[str], noun: str) -> str:
    """'a; b; c' for a few items, 'a; b; …; and N more <noun>s (every one in the subjects)' for many."""
    if len(items) <= NAMED_MAX:
        return "; ".join(items)
    return "; ".join(items[:NAMED_MAX]) + f"; and {len(items) - NAMED_MAX:,} more {noun}s (every one is in the subjects)"


def _lasted(x: dict) -> str:
    """How long one producer's rejections went on, in the words its table row uses: 'stuck for' runs
    to its recovery, or to the end of the log when it is still stuck (the rejections' own span, the
    finding's 'seen', ends at the last rejection)."""
    if x["still_stuck"]:
        return f"this producer was still rejected at the end of the log, {x['stuck_for']} after the first rejection."
    return f"these rejections lasted {x['stuck_for']} until {x['resolved_by']}."


def _durations(subjects: list[dict]) -> str:
    values = sorted({x["stuck_for"] for x in subjects})
    if len(values) <= NAMED_MAX:
        return ", ".join(values)
    secs = [x["stuck_seconds"] for x in subjects if x["stuck_seconds"] is not None]
    return f"{fmt_duration(min(secs))} to {fmt_duration(max(secs))}" if secs else ", ".join(values[:NAMED_MAX]) + ", …"


def _recovered_in_same_unload(ev: pl.DataFrame, cause: dict, members: list[dict]) -> int:
    stuck = {(s["path"], s["connection"], s["producer_id"]) for s in members}
    ns = cause["namespace"]
    win = ev.filter(
        (pl.col("event") == "producer_created")
        & pl.col("ts").is_between(cause["at"], cause["at"] + dt.timedelta(minutes=5))
        & pl.col("topic").str.contains("://" + ns + "/", literal=True)
    )
    keys = win.select("path", "connection", "producer_id")
    stuck_keys = pl.DataFrame(list(stuck), schema=keys.schema, orient="row")
    return keys.join(stuck_keys, on=keys.columns, how="anti", nulls_equal=True).height


def _who(s: dict, short: bool = False) -> str:
    """A producer as the log names it (some rejection texts carry no id, topic or connection)."""
    pid, topic, conn = s.get("producer_id"), s.get("topic"), s.get("connection")
    if pid is None and not topic and not conn:
        return "a producer the log does not name"
    who = f"producer {pid}" if pid is not None else "a producer"
    if topic and not short:
        who += f" ({safe(topic)})"
    if conn:
        who += f" on {safe(conn)}"
    return who


def _unload_unseen(ctx, where: list[str], first) -> str:
    """Why no unload is named: not in these logs, or these logs could not show one (an absence is
    said only where the input covers it: a log without INFO lines, or one that starts at the first
    rejection, cannot show the unload before it)."""
    covs = [c for c in (ctx.coverage(p) for p in where) if c is not None]
    seen = absence(ctx, "the rejected producers' broker", "a bundle unload", None, [c.path for c in covs], level="INFO")
    if covs and not seen.covered_by:
        return f"an unload would not show: {safe(seen.missing_why.split('; ')[0])}"
    if covs and first is not None and all(c.first is not None and c.first >= first for c in covs):
        return "an unload would not show: the log starts at the first rejection"
    return "no unload in these logs"


def _restart_targets(stuck: list[dict]) -> list[str]:
    """One target per client log and connection (two producers of one client are one restart):
    'the client writing client-orders.log (producers 3 and 7 on /10.1.116.123:10837: <topic>, <topic>)'."""
    groups: dict = {}
    for x in stuck:
        groups.setdefault((x["client"], x["connection"]) if x["client"] or x["connection"] else id(x), []).append(x)
    out = []
    for members in groups.values():
        x = members[0]
        ids = [str(m["producer_id"]) for m in members if m["producer_id"] is not None]
        who = ("producer " + ids[0] if len(ids) == 1 else "producers " + ", ".join(ids[:-1]) + " and " + ids[-1]) if ids else (
            "a producer" if len(members) == 1 else f"{len(members)} producers")
        topics = ", ".join(safe(m["topic"]) for m in members if m["topic"])
        what = who + (f" on {safe(x['connection'])}" if x["connection"] else "") + (f": {topics}" if topics else "")
        if x["client"]:
            out.append(f"the client writing {safe(x['client'])} ({what})")
        elif x["connection"]:
            out.append(f"the client at {safe(x['connection'])} ({what})")
        else:
            out.append("the client whose producer is rejected (the broker's text names no connection: look for 'Producer is already present' in the client logs)")
    return out


def _era(ctx: Context, ev: pl.DataFrame, members: list[dict]) -> tuple[list[str], list[str]]:
    """What the logs tell about the broker version: (facts that put it after 2.5.1, confidence reasons)."""
    paths = sorted({s["path"] for s in members})
    lays = {ctx.input(p).layout for p in paths if ctx.input(p)}
    mine = keep(ev, pl.col("path").is_in(paths))
    facts: list[str] = []
    if "pulsar-broker-iso" in lays:
        facts.append("the broker log uses the ISO8601_OFFSET layout Pulsar adopted after #8298, Oct 2020")
    patterns = {s["first_row"].get("pattern") for s in members}
    if any(p and p.endswith(".slog") for p in patterns):
        facts.append("the rejection text is the structured-logging one of the newest Pulsar")
    if mine.filter((pl.col("event") == "producer_add_failed") & pl.col("producer_id").is_not_null()).height:
        facts.append("'Failed to add producer … producerId=' is the 2.8+ text")
    if mine.filter((pl.col("event") == "producer_creating") & pl.col("msg").str.contains(", producerName=", literal=True)).height:
        facts.append("'Creating producer. producerId=…, producerName=' is the 3.x text")
    notes = [f"- {f}: a broker newer than 2.5.1" for f in facts]
    if not facts and not any(s["answered"] for s in members):
        if any(p and p.endswith(".pre-2.4") for p in patterns):
            notes.append("+ the rejection text is the pre-2.4 one: an affected version")
        elif "pulsar-broker-2x" in lays:
            notes.append("+ the broker logs use the 2.x time-only layout and the 2.4–2.10 'Producer with id <topic>' text: consistent with an affected 2.4–2.5.1 broker")
    return facts, notes


DETECTOR = Detector(
    id="pulsar.dangling-producer-future",
    title="Pulsar producers stuck with 'already present on the connection' after a bundle unload",
    systems=("pulsar",),
    run=run,
    doc="docs/findings/pulsar.dangling-producer-future.md",
)
