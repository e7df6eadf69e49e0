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
The thresholds, the verdict and every sentence are in pulsar.dangling-producer-future.toml beside
this file (read through dangling_facts.py, whose DanglingFacts this module fills).
"""

from __future__ import annotations

from logsleuth.detectors.words import Prose

import datetime as dt

import polars as pl

from logsleuth.detectors.pulsar.client_only import BrokerLogs, stuck_on_client
from logsleuth.detectors.pulsar.dangling_facts import TH, VERDICT, DanglingFacts
from logsleuth.detectors.base import (Context, Detector, evidence, gather, rows_at, take, take_for, fmt_duration, line_ref, ordered_evidence,
                                      rows, safe, segment_of)
from logsleuth.detectors.facts import absence
from logsleuth.detectors.finding import Evidence, Finding

MIN_ATTEMPTS = int(TH["min_attempts_count"])
MIN_SPAN_S = float(TH["min_span_s"])
MANY_ATTEMPTS = int(TH["many_attempts_count"])
OWNERSHIP_WINDOW = (dt.timedelta(seconds=-TH["ownership_before_s"]), dt.timedelta(seconds=TH["ownership_after_s"]))
INFER_WINDOW = dt.timedelta(seconds=TH["infer_window_s"])  # a rejection naming neither connection nor topic takes its producer from an unanswered creation this close before
UNLOAD_BEFORE = dt.timedelta(seconds=TH["unload_before_s"])
UNLOAD_AFTER = dt.timedelta(seconds=TH["unload_after_s"])
SAME_UNLOAD = dt.timedelta(seconds=TH["same_unload_s"])  # producers of the namespace created this long after the unload recovered normally
SHED_ATTEMPT_BEFORE = dt.timedelta(seconds=TH["shed_attempt_before_s"])
KEY = ["path", "connection", "producer_id"]
RUN = "_run"  # one stretch of rejections of one KEY, between re-creations / connection closes


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
    return findings + stuck_on_client(ev, covered, ends, _broker_logs(ctx, ev))


BROKER_EVENTS = ("producer_already_present", "producer_creating", "producer_created", "producer_closed", "bundle_unloaded",
                 "shedder_unloading", "topic_unloading", "connection_opened")  # (when the table has no component column)


def _broker_logs(ctx: Context, ev: pl.DataFrame) -> BrokerLogs:
    """The Pulsar broker logs given (a log with any broker-side event), each with its time span, and
    how to find a rejection line in one that no pattern matched (Context.near_misses)."""
    broker = pl.col("component") == "broker" if "component" in ev.columns else pl.col("event").is_in(list(BROKER_EVENTS))
    paths = set(take(ev, broker, pl.col("path").cast(pl.String).unique())["path"].to_list())  # (the names, not a column of them)
    spans = {r.name: (r.first_ts, r.last_ts) for r in ctx.log_inputs() if r.name in paths}
    return BrokerLogs(spans, lambda path, window: ctx.near_misses(path, ["producer_already_present"], window, limit=3))


# the event kinds read whatever the producers (few in a reconnect storm, which is creations and
# connections), and the columns read of them; ``msg`` only of the lines quoted whole (not the rejections)
FEW = ("producer_already_present", "bundle_not_served", "bundle_disabling", "bundle_unloaded", "shedder_unloading",
       "producer_disconnecting", "shed_attempt", "producer_add_failed")
FEW_COLUMNS = ("event", "path", "file", "line", "ts", "connection", "producer_id", "topic", "error", "bundle", "namespace",
               "detail", "broker", "pattern", "msg")
UNLOADS = ["bundle_disabling", "bundle_unloaded", "shedder_unloading", "producer_disconnecting", "shed_attempt"]
# the events read of the rejected producers' connections only (a storm's creations are most of its events)
POOL = ["producer_created", "connection_closed", "producer_creating", "producer_add_failed"]
POOL_COLUMNS = ("_ev", "event", *KEY, "topic", "ts", "line", "file")


def _few(ev: pl.DataFrame) -> pl.DataFrame:
    """The events of the FEW kinds with FEW_COLUMNS and their row in ``ev`` (``_ev``), in ``ev``'s
    order: read in one query (on a table on disk each question is a scan of every part)."""
    cols = [c for c in FEW_COLUMNS if c in ev.columns]
    whole = pl.col("event") != "producer_already_present"  # (a storm of rejections: no texts held)
    return take(ev.with_row_index("_ev"), pl.col("event").is_in(list(FEW)), "_ev",
                *[pl.when(whole).then(pl.col(c)).alias(c) if c == "msg" else c for c in cols])


def _broker_side(ctx: Context, ev: pl.DataFrame, ends: dict) -> tuple[list[Finding], pl.DataFrame]:
    """The findings from the brokers' rejections, and the (topic, client log, first, last) of every
    stuck stretch they name."""
    covered = pl.DataFrame(schema={"topic": pl.String, "client": pl.String, "first": ev.schema["ts"], "last": ev.schema["ts"]})
    few = _few(ev)
    got = _stretches(ev, few)
    if got is None:
        return [], covered
    groups, pool = got
    is_stuck = ((pl.col("attempts") >= MIN_ATTEMPTS) & (pl.col("span_s") >= MIN_SPAN_S)) | (pl.col("attempts") >= MANY_ATTEMPTS)
    stuck = groups.filter(is_stuck)
    transient = groups.filter(~is_stuck)
    if stuck.height == 0:
        return [], covered

    findings: list[Finding] = []
    by_cause: dict[tuple, list[dict]] = {}
    unload_ev = few.filter(pl.col("event").is_in(UNLOADS)).drop("_ev")
    linked = _link_dangling(ev, stuck, few, pool)
    del pool  # (the creations and answers: what each stuck producer needed of them is in ``linked``)
    for s in linked:
        for k in ("first_row", "last_row"):  # group keys are not inside the aggregated struct
            s[k].update(path=s["path"], connection=s["connection"], producer_id=s["producer_id"])
        s["cause"] = _unload_for(unload_ev, s)
        key = (s["cause"]["bundle"], s["cause"]["path"], s["cause"]["at"]) if s["cause"] else ("?", s["path"], None)
        by_cause.setdefault(key, []).append(s)
    for _, members in by_cause.items():
        findings.append(_finding(_facts(ctx, ev, few, members, transient, ends)))
    covered = pl.DataFrame(
        [{"topic": x["topic"], "client": x["client"], "first": x["first_seen"], "last": x["last_seen"]} for f in findings for x in f.subjects],
        schema=covered.schema,
    )
    return findings, covered


def _stretches(ev: pl.DataFrame, few: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame] | None:
    """Every stretch of rejections of one KEY (between re-creations and connection closes): its
    topic, first and last time and row, attempts, span, and when it recovered or was released;
    and the POOL events on the rejected producers' connections (None: no rejection in the table)."""
    # the rejections with the columns the grouping needs and their row in ``ev`` (``_ev``): a
    # reconnect storm is mostly rejections, and a filter of whole rows would copy most of the table;
    # the first and last row of each stretch are taken from ``ev`` once the stretches are known
    present = few.filter(pl.col("event") == "producer_already_present").select("_ev", *KEY, "ts", "topic")
    if present.height == 0:
        return None
    # one key can be stuck, recover (re-created, or its connection closed) and clash again later:
    # each stretch between such resets is judged on its own
    present = present.sort("ts").with_columns(_pid=pl.col("producer_id").fill_null(-1))
    # the creations, answers and connection closes on the rejected producers' connections only (all
    # the joins here and in _creations can match), read in one query: not every creation of a storm
    pool = take_for(ev.with_row_index("_ev"), pl.col("event").is_in(POOL), present.select("path", "connection"), *POOL_COLUMNS)
    created = _semi(pool.filter(pl.col("event") == "producer_created").select(*KEY, "ts", "line", _pid=pl.col("producer_id").fill_null(-1)),
                    present.select("path", "connection", "_pid"))
    closed = pool.filter(pl.col("event") == "connection_closed").select("path", "connection", "ts")
    made = created.select("path", "connection", "_pid", "ts", _made=pl.col("ts")).sort("ts")
    shut = closed.select("path", "connection", "ts", _shut=pl.col("ts")).sort("ts")
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
    created = created.select(*KEY, c_ts="ts", c_line="line")
    closed = closed.select("path", "connection", x_ts="ts")
    # each stretch's first and last rejection as whole rows (all columns but the group keys)
    fields = [c for c in ev.columns if c not in KEY]
    groups = groups.with_columns(
        first_row=gather(ev, groups["_first_ev"], pl.struct(fields)).to_series(),
        last_row=gather(ev, groups["_last_ev"], pl.struct(fields)).to_series(),
    ).drop("_first_ev", "_last_ev")
    # recovery: "Created new producer" for the same key after the rejections began,
    # or the connection closed (the client reconnected or restarted)
    recovered = (
        groups.select(RUN, *KEY, "first").join(created, on=KEY, how="inner", nulls_equal=True)
        .filter(pl.col("c_ts") >= pl.col("first"))
        .group_by(RUN, maintain_order=True).agg(recovered_at=pl.col("c_ts").min())
    )
    released = (
        groups.select(RUN, "path", "connection", "last").join(closed, on=["path", "connection"], how="inner")
        .filter(pl.col("x_ts") >= pl.col("last"))
        .group_by(RUN, maintain_order=True).agg(released_at=pl.col("x_ts").min())
    )
    return groups.join(recovered, on=RUN, how="left").join(released, on=RUN, how="left"), pool


def _semi(frame: pl.DataFrame, keys: pl.DataFrame) -> pl.DataFrame:
    """The rows of ``frame`` whose values of ``keys``' columns are those of a row of ``keys`` (nulls
    equal), in order: ``take_for`` on a frame in memory."""
    return frame.join(keys.unique(), on=keys.columns, how="semi", nulls_equal=True, maintain_order="left")


def _creations(ev: pl.DataFrame, keys: pl.DataFrame | None = None, pool: pl.DataFrame | None = None) -> pl.DataFrame:
    """Every 'Creating producer' with the answer it got, if any: the next 'Created new producer' or
    'Failed to add producer' of the same producer on the same connection, or that connection's close
    ('Closed connection from …': the creation cannot be answered any more). The 2.x 'Failed to add
    producer' text names the topic but no producer id: it answers the creation of that topic.
    ``keys`` (KEY columns): only the creations of these producers (and the answers and closes on
    their connections, all that can answer them), not every creation of a storm, from ``pool``
    (_stretches: the POOL events on the rejected producers' connections, which hold them all)."""
    # ``cr_ev``: the creation's row in ``ev`` (whole rows are taken only for the few creations a
    # finding names: a reconnect storm is mostly creations)
    is_creating = pl.col("event") == "producer_creating"
    cols = (*KEY, "topic", "cr_ev")
    if keys is None or pool is None:
        creating = take(ev.with_row_index("cr_ev"), is_creating, *cols, cr_ts="ts")
    else:
        creating = _semi(pool.filter(is_creating).select(*cols[:-1], cr_ev="_ev", cr_ts="ts"), keys)
    creating = creating.with_columns(_pid=pl.col("producer_id").fill_null(-1)).sort("cr_ts")
    conns = None if keys is None else creating.select("path", "connection")

    def answering(rows: pl.Expr, *columns, **named) -> pl.DataFrame:
        if conns is None:
            return take(ev, rows, *columns, **named)
        if pool is None:
            return take_for(ev, rows, conns, *columns, **named)
        return _semi(pool.filter(rows.fill_null(False)).select(*columns, **named), conns)

    answers = answering(pl.col("event").is_in(["producer_created", "producer_add_failed"]), "path", "connection", "producer_id", "topic", "ts", "line", "file", "event")
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
    closes = answering(
        (pl.col("event") == "connection_closed") & pl.col("connection").is_not_null(),
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
    pick: pl.Expr | None = None
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


def _link_dangling(ev: pl.DataFrame, stuck: pl.DataFrame, few: pl.DataFrame, pool: pl.DataFrame) -> list[dict]:
    """Each stuck stretch with the creation behind it: ``creating`` (the last 'Creating producer' of
    that producer before the first rejection that was never answered: the dangling future),
    ``answered`` (that last creation, when it *was* answered, and by what), ``ownership`` (the
    'not served by this instance' warning next to the dangling creation) and ``inferred`` (texts
    without the producer id or connection — pre-2.4, structured logging — take them from the only
    unanswered creation before the rejections, if there is exactly one)."""
    # the creations of the stuck producers only, when every stretch names its producer and connection
    # (else the unanswered creations before a rejection that names none are searched: all of them)
    named = stuck.filter(pl.col("producer_id").is_not_null() & pl.col("connection").is_not_null())
    cr = _creations(ev, named.select(*KEY), pool) if named.height == stuck.height else _creations(ev)
    warn = few.filter(pl.col("event") == "bundle_not_served").drop("_ev").with_row_index("_wi")
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
        # (``trigger``, in words, is the verdict's: set when the finding is made)
        cause.update(trigger_path=t.get("file") or t["path"], trigger_line=int(t["line"]), _shed={"detail": t["detail"], "broker": t["broker"]})
        cause["_rows"].insert(0, t)
        attempt = ev.filter(
            (pl.col("event") == "shed_attempt") & (pl.col("path") == t["path"])
            & pl.col("ts").is_between(t["ts"] - SHED_ATTEMPT_BEFORE, t["ts"])
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
        # why it was not taken (the verdict's unload_why says it in words)
        why = ("other-broker" if r["_other_broker"] and not pick["_other_broker"]
               else "after" if r["_after"] and not pick["_after"]
               else "earlier" if not r["_after"] and r["ts"] < pick["ts"]
               else "further")
        others.append({"bundle": r["bundle"], "path": r.get("file") or r["path"], "line": int(r["line"]), "at": r["ts"], "why": why})
    return pick, others


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
    found: pl.DataFrame | None = rejected.get(s["topic"]) if rejected and s["topic"] is not None else None
    fails = found if found is not None else cli.clear()
    if link is not None:
        fails = fails.filter(pl.col("path") == link.client_path)
    elif fails.height > 1 and fails.select(pl.col("path").n_unique()).item() > 1:  # several clients saw it: no guess
        fails = fails.clear()
    if fails.height:
        out += rows(fails.sort("ts").head(1))
    client = link.client_path if link else (out[-1]["path"] if out else None)
    how = link.how if link else ("the only client rejected on this topic" if out else None)
    return out, client, how


def _member(ctx: Context, ev: pl.DataFrame, s: dict, ends: dict) -> tuple[dict, tuple[str, dict] | None]:
    """A stuck stretch as its subject, and why its client log does not cover it (None: it does):
    coverage's sentence (what tells two reasons apart) and the same as facts.
    The lines quoted for it go into ``s`` (``_links``: the client's; ``_answer_row``: the answer to
    its last creation)."""
    resolved = s["recovered_at"] or s["released_at"]
    still_stuck = resolved is None
    links, client, how = _client_links(ctx, ev, s)
    upto = resolved or ends.get(s["path"]) or s["last"]
    subject = {
        "connection": s["connection"],
        "producer_id": s["producer_id"],
        "topic": s["topic"],
        "path": s["path"],
        "first_seen": s["first"],
        "last_seen": s["last"],
        "attempts": int(s["attempts"]),
        "still_stuck": still_stuck,
        "stuck_for": fmt_duration(_seconds(s["first"], upto)),
        "stuck_seconds": _round(_seconds(s["first"], upto)),
        "resolved_by": None if still_stuck else ("Created new producer" if s["recovered_at"] else "connection closed (client reconnected)"),
        "resolved_at": resolved,
        "client": client,
        "client_link": how,
        "dangling_creation_line": int(s["creating"]["line"]) if s["creating"] else None,
        "answered_creation_line": int(s["answered"]["creation"]["line"]) if s["answered"] else None,
        "identity_from_line": int(s["inferred"]["line"]) if s["inferred"] else None,
    }
    # a rotated log: which segment those lines are in (only when that is not the subject's path)
    for key, row in (("dangling_creation_file", s["creating"]), ("answered_creation_file", (s["answered"] or {}).get("creation")),
                     ("identity_from_file", s["inferred"])):
        if row and segment_of(row) is not None:
            subject[key] = segment_of(row)
    s["_links"], s["_answer_row"] = links, _answer_row(ev, s)
    cov = ctx.coverage(client) if client else None
    why = cov.covers(s["first"], s["last"])[1] if cov is not None else ""
    gap = _uncovered(cov, s["first"], s["last"]) if why else None  # the same test as covers(): not None when why is said
    return subject, (why, gap) if gap is not None else None


_GAP_KIND = {"no-times": "untimed", "outside": "outside", "starts-after": "starts", "ends-before": "ends", "gap": "gap"}


def _uncovered(cov, t0: dt.datetime, t1: dt.datetime) -> dict | None:
    """What of [t0, t1] a log does not cover (``Coverage.uncovered``), as the verdict's facts:
    ``kind`` untimed, outside (its span is ``a`` to ``b``), starts (at ``a``, after ``b``), ends (at
    ``a``, before ``b``) or gap (no lines from ``a`` to ``b``)."""
    why = cov.uncovered(t0, t1)
    if why is None:
        return None
    kind, a, b = why
    return {"log": cov.path, "kind": _GAP_KIND[kind], "a": a, "b": b}


def _answer_row(ev: pl.DataFrame, s: dict) -> dict | None:
    """The line that answered the last creation before the rejections (when one did)."""
    if not s["answered"]:
        return None
    ans = ev.filter((pl.col("path") == s["path"]) & (pl.col("line") == s["answered"]["line"]))
    if s["answered"]["file"] is not None:
        ans = ans.filter(pl.col("file").cast(pl.String) == s["answered"]["file"])
    return rows(ans.head(1))[0] if ans.height else None


def _facts(ctx: Context, ev: pl.DataFrame, few: pl.DataFrame, members: list[dict], transient: pl.DataFrame, ends: dict) -> DanglingFacts:
    """The facts of the producers one unload stranded (or, with no unload found, of one broker log)."""
    cause = members[0]["cause"]
    subjects, gaps = [], {}
    for s in members:
        subject, gap = _member(ctx, ev, s, ends)
        subjects.append(subject)
        if gap:
            gaps[safe(gap[0])] = gap[1]  # (each reason once, in the order of its sentence)
    answered = [s["answered"] for s in members if s["answered"]]
    era_facts, era_hint = _era(ctx, ev, few, members)
    first = min((s["first"] for s in members if s["first"] is not None), default=None)
    last = max((s["last"] for s in members if s["last"] is not None), default=None)
    where = sorted({s["path"] for s in members})
    unseen_why, starts_late = _unload_unseen(ctx, where, first) if not cause else (None, False)
    return DanglingFacts(
        client_only=False, subjects=subjects, first=first, last=last, where=where,
        longest_s=max((x["stuck_seconds"] for x in subjects if x["stuck_seconds"] is not None), default=None),
        have_creating=sum(1 for s in members if s["creating"]), have_owner=sum(1 for s in members if s["ownership"]),
        answered_count=len(answered), answered_creation_ref=line_ref(answered[0]["creation"]) if answered else None,
        answer_ref=line_ref(answered[0]) if answered else None, answer_event=answered[0]["event"] if answered else None,
        inferred=any(s["inferred"] for s in members),
        unload_bundle=(cause["bundle"] or cause["namespace"]) if cause else None, unload_at=cause["at"] if cause else None,
        shed=bool(cause and cause.get("_shed")), shed_detail=((cause or {}).get("_shed") or {}).get("detail"),
        shed_broker=((cause or {}).get("_shed") or {}).get("broker"), other_unloads=(cause or {}).get("_others", []),
        unseen_why=unseen_why, log_starts_at_rejection=starts_late,
        recovered_others=_recovered_in_same_unload(ev, cause, members) if cause else 0,
        era_facts=era_facts, era_hint=era_hint,
        no_info_paths=[p for p in where if (c := ctx.coverage(p)) is not None and not c.has_info],
        client_gaps=[gaps[k] for k in sorted(gaps)],
        transient=[{k: t[k] for k in ("path", "producer_id", "topic", "connection", "span_s", "recovered_at")} | {"attempts": int(t["attempts"])}
                   for t in rows(transient.head(int(TH["transient_named_count"])))],
        created_during=ev.filter(
            (pl.col("event") == "producer_created") & pl.col("path").is_in(where) & pl.col("ts").is_between(first, last)
        ).height,
        name_conflict_logged=few.filter(pl.col("event") == "producer_add_failed").filter(pl.col("error").str.contains("already connected", literal=True)).height > 0,
        clients=sorted({x["client"] for x in subjects if x["client"]}), transient_count=int(transient.height),
        cause=cause, members=members,
    )


def _evidence(f: DanglingFacts) -> list[Evidence]:
    """The lines quoted: the unload's, then each producer's creation, its answer, the ownership
    check, its first and last rejection and its client's lines (each line once)."""
    v = VERDICT
    evid = [evidence(r, v.note(r["event"], f)) for r in (f.cause or {}).get("_rows", [])]
    for s, x in zip(f.members, f.subjects):
        item = x | {"answer_event": (s["answered"] or {}).get("event")}
        if s["creating"]:
            evid.append(evidence(s["creating"], v.note("creating", f, item=item)))
        if s["answered"]:
            evid.append(evidence(s["answered"]["creation"], v.note("answered_creation", f, item=item)))
            if s["_answer_row"] is not None:
                evid.append(evidence(s["_answer_row"], v.note("answer", f, item=item)))
        if s["ownership"]:
            evid.append(evidence(s["ownership"], v.note("ownership", f)))
        evid.append(evidence(s["first_row"], v.note("first", f, item=item)))
        evid.append(evidence(s["last_row"], v.note("last", f, item=item)))
        for r in s["_links"]:
            evid.append(evidence(r, v.note("client_link", f, item=item | {"rejection": r["event"] == "client_producer_create_failed"})))
    return ordered_evidence(evid)  # two producers can share the cause lines


def _finding(f: DanglingFacts) -> Finding:
    cause = None
    if f.cause:  # the JSON's cause: the unload, its trigger and the other unloads with why each was not taken, in words
        cause = {k: v for k, v in f.cause.items() if not k.startswith("_")}
        if f.shed:
            cause["trigger"] = str(VERDICT.phrase("unload_trigger", f))
        if f.other_unloads:
            cause["other_unloads"] = [o | {"why": str(VERDICT.phrase("unload_why", f, {"item": o}))} for o in f.other_unloads]
    return Finding(
        **VERDICT.parts(f), first_seen=f.first, last_seen=f.last, subjects=f.subjects, cause=cause, evidence=_evidence(f),
        details={"clients": f.clients, "transient": f.transient_count},
    )


def _recovered_in_same_unload(ev: pl.DataFrame, cause: dict, members: list[dict]) -> int:
    stuck = {(s["path"], s["connection"], s["producer_id"]) for s in members}
    ns = cause["namespace"]
    win = ev.filter(
        (pl.col("event") == "producer_created")
        & pl.col("ts").is_between(cause["at"], cause["at"] + SAME_UNLOAD)
        & pl.col("topic").str.contains("://" + ns + "/", literal=True)
    )
    keys = win.select("path", "connection", "producer_id")
    stuck_keys = pl.DataFrame(list(stuck), schema=keys.schema, orient="row")
    return keys.join(stuck_keys, on=keys.columns, how="anti", nulls_equal=True).height


def _unload_unseen(ctx, where: list[str], first) -> tuple[Prose | None, bool]:
    """Why no unload could show in these logs: (why no broker log covers it, or None; whether every
    one starts at the first rejection). An absence is said only where the input covers it: a log
    without INFO lines, or one that starts at the first rejection, cannot show the unload before it."""
    covs = [c for c in (ctx.coverage(p) for p in where) if c is not None]
    seen = absence(ctx, "the rejected producers' broker", "a bundle unload", None, [c.path for c in covs], level="INFO")
    if covs and not seen.covered_by:
        return seen.missing_reasons[0], False
    return None, bool(covs) and first is not None and all(c.first is not None and c.first >= first for c in covs)


def _era(ctx: Context, ev: pl.DataFrame, few: pl.DataFrame, members: list[dict]) -> tuple[list[str], str | None]:
    """What the logs tell about the broker version: the facts that put it after 2.5.1 (iso-layout,
    slog, add-failed-id, creating-name), and without one, a hint of an affected one ('pre-2.4', '2.x')."""
    paths = sorted({s["path"] for s in members})
    lays = {rep.layout for p in paths if (rep := ctx.input(p))}
    mine = few.filter(pl.col("path").is_in(paths))
    facts: list[str] = []
    if "pulsar-broker-iso" in lays:
        facts.append("iso-layout")
    patterns = {s["first_row"].get("pattern") for s in members}
    if any(p and p.endswith(".slog") for p in patterns):
        facts.append("slog")
    if mine.filter((pl.col("event") == "producer_add_failed") & pl.col("producer_id").is_not_null()).height:
        facts.append("add-failed-id")
    named = (pl.col("event") == "producer_creating") & pl.col("path").is_in(paths) & pl.col("msg").str.contains(", producerName=", literal=True)
    if take(ev, named, n=pl.len())["n"][0]:  # (a count: not the rows, which on 2.5.2+ are every creation)
        facts.append("creating-name")
    hint = None
    if not facts and not any(s["answered"] for s in members):
        if any(p and p.endswith(".pre-2.4") for p in patterns):
            hint = "pre-2.4"
        elif "pulsar-broker-2x" in lays:
            hint = "2.x"
    return facts, hint


DETECTOR = Detector(
    id=VERDICT.id, title=VERDICT.title, systems=("pulsar",), run=run, doc=VERDICT.doc, facts=DanglingFacts, verdict=VERDICT,
)
