"""kafka.delivery-timeout: records the Kafka producer expired without delivering them, per
topic-partition, linked to the drain problem that kept them in the accumulator. See
docs/findings/kafka.delivery-timeout.md; the shared model (clients, episodes, batch counting,
linking) is in _kafka_model.py.

One finding per client file and cause: the batches of a file linked to the same episode (or to
none). Records are counted from Kafka's own text (``Expiring N record(s)``), never from the number
of lines: an application logs the same exception once per record of the batch. The finding's totals
are ``_kafka_model.loss_of`` for its (file, episode): the same numbers kafka.broker-unreachable and
kafka.buffer-exhausted state for that outage. The verdict and the words are in
kafka.delivery-timeout.toml beside this file.
"""

from __future__ import annotations

from logsleuth.detectors.words import Prose

import datetime as dt

import polars as pl

from logsleuth.detectors.kafka import model as km
from logsleuth.detectors.kafka.broker import link_episode
from logsleuth.detectors.kafka import text as kt
from dataclasses import dataclass, field

from logsleuth.detectors.base import Context, Detector, number_of, ordered_evidence, sat_sum, time_of
from logsleuth.detectors.finding import Evidence, Finding
from logsleuth.detectors.verdict import Verdict

VERDICT = Verdict.load(__file__, "kafka.delivery-timeout")
VERDICT.filters.update(kt.EPISODE_FILTERS)

EXPIRY_TEXT = r"Expiring \d+ record\(s\) for"
MAX_TP_EVIDENCE = 6


def run(ctx: Context) -> list[Finding]:
    m = km.build(ctx)
    if m is None or m.batches.height == 0:
        return []
    b = m.batches.with_columns(g_ep=pl.col("ep").fill_null(-1))
    per_tp = (
        b.sort("first_seen")
        .group_by(["path", "g_ep", "topic_partition"], maintain_order=True)
        .agg(
            pl.col("topic").first(),
            pl.col("partition").first(),
            records=sat_sum(pl.col("total_records")),
            batches=sat_sum(pl.col("batches")),
            lines=pl.col("lines").sum(),
            first_seen=pl.col("first_seen").min(),
            last_seen=pl.col("last_seen").max(),
            elapsed_ms_min=pl.col("elapsed_ms").min(),
            elapsed_ms_max=pl.col("elapsed_ms").max(),
            client_id=pl.col("client").drop_nulls().first(),
            named_match=pl.col("named_match").all(),
            legacy=(pl.col("detail") != "batch creation").any(),
            texts=pl.col("detail").unique(),
            first_row=pl.col("first_row").first(),
            last_row=pl.col("last_row").sort_by(pl.col("last_seen")).last(),
            loggers=pl.col("loggers").max(),
            batch_list=pl.struct("records", "elapsed_ms", "lines", "loggers", "batches", "first_seen"),
        )
        .sort(["path", "g_ep", "first_seen", "topic_partition"])
    )
    eps = {r["ep"]: r for r in m.episodes.iter_rows(named=True)} if m.episodes.height else {}
    out = []
    for (path, g_ep), tps in per_tp.partition_by(["path", "g_ep"], as_dict=True, maintain_order=True).items():
        ep = eps.get(g_ep)
        f = _finding(ctx, m, path, ep, tps, km.loss_of(m, path, ep["ep"] if ep else None))
        if ep is not None:
            link_episode(ctx, ep, f)  # the broker's own logs, when given (broker.py)
        out.append(f)
    return out


def _vs_default(e_min: float | None, default_ms: int) -> str:
    """What the shortest wait says of the timeout in force: 'default', 'lowered', 'raised', or
    'unknown' (the 0.10.0 text names no elapsed time)."""
    if e_min is None:
        return "unknown"
    if default_ms <= e_min < default_ms + VERDICT.thresholds["default_slack_ms"]:
        return "default"
    return "lowered" if e_min < default_ms else "raised"


def _untimed_drain(m: km.Model, path: str) -> tuple | None:
    """In a log without time stamps: (node, line numbers, failed connections, other drain lines,
    the first expiry's line) of the failed connections, disconnects and produce retries written
    before its first expiry; None when there are none."""
    kev = m.kev.filter(pl.col("path") == path)
    if kev.height == 0 or kev["ts"].drop_nulls().len():
        return None
    exp = kev.filter(pl.col("event") == "batch_expired")
    if exp.height == 0:
        return None
    first_exp = int(number_of(exp["line"].min()))
    before = kev.filter((pl.col("line") < first_exp) & pl.col("event").is_in([*km.UNREACHABLE, *km.SOFT, *km.RETRY_EVENTS])).sort("line")
    if before.height == 0:
        return None
    fails = before.filter(pl.col("event").is_in(list(km.UNREACHABLE)))
    others = before.filter(~pl.col("event").is_in(list(km.UNREACHABLE)))
    nodes = [n for n in (fails if fails.height else before).get_column("node").drop_nulls().to_list()] if "node" in before.columns else []
    node = max(set(nodes), key=nodes.count) if nodes else None
    lines = fails["line"].to_list() + others["line"].to_list()
    return node, [int(x) for x in lines], fails.height, others.height, first_exp


@dataclass
class DeliveryFacts:
    """One client file's expired batches linked to one cause (an episode of the shared model, or none)."""

    path: str
    clients: list[str]  # the client ids of the expiries (or of the episode)
    partitions: list[str]
    records: int
    batches: int
    log_records: int  # log records that carry these expiries (an application logs one per record)
    loggers: int  # the most loggers that logged one batch
    first: dt.datetime | None
    last: dt.datetime | None
    elapsed_min_ms: float | None  # None: the 0.10.0 text names no elapsed time
    elapsed_max_ms: float | None
    legacy: bool  # <=2.0 texts: request.timeout.ms ran out, there is no delivery.timeout.ms
    legacy_texts: list[str]  # the <=2.0 texts seen (how each measures the wait)
    vs_default: str  # default | lowered | raised | unknown
    default_ms: int  # the default of the timeout that ran out
    drain: str  # episode | untimed (drain lines before the first expiry, by line order) | not-in-log | none
    all_named: bool = False  # the retries name the episode's node for every expired partition
    some_named: bool = False
    episode: dict | None = None
    ep_kind: str | None = None
    node: int | None = None
    ep_from: dt.datetime | None = None
    ep_to: dt.datetime | None = None
    ep_duration_s: float | None = None
    failed_connections: int = 0
    timeout_retries: int = 0
    bootstrap_drops: int = 0
    leader_change_free: bool = False  # no NOT_LEADER retries, metadata errors or invalid metadata in the episode
    other_clients: int = 0  # other client logs that saw the node fail in the same window
    address: str = "address not logged"
    untimed_node: int | None = None
    untimed_lines: list[int] = field(default_factory=list)  # the drain lines before the first expiry (quoted: the first four)
    untimed_lines_shown: list[int] = field(default_factory=list)
    untimed_more: bool = False
    untimed_fail: int = 0
    untimed_other: int = 0
    untimed_total: int = 0
    untimed_first_line: int | None = None
    blind_why: "Prose" = ""
    blind_since: dt.datetime | None = None
    buffer_runs: int = 0  # buffer exhaustions in the file
    overload_after: dt.datetime | None = None  # the episode's buffer ran out only from then, after the trouble began
    failed_sends: int = 0
    metadata_trouble: int = 0  # metadata waits, authorization failures, invalid topics in the file
    callback_errors: int = 0
    request_default_ms: int = km.DEFAULT_REQUEST_TIMEOUT_MS
    delivery_default_ms: int = km.DEFAULT_DELIVERY_TIMEOUT_MS

    @property
    def legacy_reference(self) -> str:
        return kt.LEGACY_REFERENCE


def _facts(ctx: Context, m: km.Model, path: str, ep: dict | None, tps: pl.DataFrame, loss: dict) -> DeliveryFacts:
    lo, hi = tps["elapsed_ms_min"].min(), tps["elapsed_ms_max"].max()
    e_min = float(number_of(lo)) if lo is not None else None  # None: the text names no time (0.10.0)
    e_max = float(number_of(hi)) if hi is not None else None
    legacy = bool(tps["legacy"].any())
    seen = {t for ts_ in tps["texts"].to_list() for t in (ts_ or []) if t}
    default_ms = km.DEFAULT_REQUEST_TIMEOUT_MS if legacy else km.DEFAULT_DELIVERY_TIMEOUT_MS
    first = loss["expired_first"]
    f = DeliveryFacts(
        path=path, clients=sorted({c for c in tps["client_id"].to_list() if c}) or ([ep["client"]] if ep and ep.get("client") else []),
        partitions=tps["topic_partition"].to_list(), records=loss["expired_records"], batches=loss["expired_batches"],
        log_records=loss["expired_log_records"], loggers=int(number_of(tps["loggers"].max() or 1)), first=first, last=loss["expired_last"],
        elapsed_min_ms=e_min, elapsed_max_ms=e_max, legacy=legacy, legacy_texts=[t for t in km.LEGACY_EXPIRY if t in seen],
        vs_default=_vs_default(e_min, km.DEFAULT_REQUEST_TIMEOUT_MS if legacy or e_min is None else default_ms),
        default_ms=default_ms, drain="none", failed_sends=loss["failed_sends"],
    )
    if ep is not None:
        f.drain, f.episode, f.ep_kind, f.node = "episode", ep, ep["kind"], ep.get("node")
        f.ep_from, f.ep_to, f.ep_duration_s = ep["from"], ep["to"], ep["duration_s"]
        f.failed_connections, f.timeout_retries, f.bootstrap_drops = ep["failed_connections"], ep["timeout_retries"], ep.get("bootstrap_drops") or 0
        f.all_named, f.some_named = bool(tps["named_match"].all()), bool(tps["named_match"].any())
        f.leader_change_free = not ep["not_leader_retries"] and not ep["metadata_errors"] and not ep["invalid_metadata"]
        f.other_clients = len({(o["path"], o["client"]) for o in km.same_node_elsewhere(m, ep)})
        f.address = str(ep.get("address") or ep.get("host") or "address not logged")
    elif first is None and (untimed := _untimed_drain(m, path)) is not None:
        # no time stamps: "during these batches' lifetime" cannot be checked by time, but the log's
        # own order can: the failed connections and retries written before the first expiry
        node, lines_of, n_fail, n_other, first_exp_line = untimed
        f.drain, f.untimed_node, f.untimed_fail, f.untimed_other, f.untimed_total = "untimed", node, n_fail, n_other, n_fail + n_other
        f.untimed_lines, f.untimed_lines_shown, f.untimed_more, f.untimed_first_line = lines_of, lines_of[:6], len(lines_of) > 6, first_exp_line
    elif e_min is not None and (blind := km.unseen_before(ctx, path, first, e_min, too_long=f"the stated age, {e_min:.0f} ms, reaches past any log")) is not None:
        # the batches waited before the file begins (an excerpt) or the file holds no WARN lines:
        # that no trouble is logged says nothing about that time
        f.drain, (f.blind_why, f.blind_since) = "not-in-log", blind
    kev = m.kev.filter(pl.col("path") == path)
    runs = m.runs.filter(pl.col("path") == path)
    mine = runs.filter(pl.col("ep") == ep["ep"]) if ep is not None else runs.clear()
    f.buffer_runs = runs.height
    overload = time_of(mine["first_seen"].min()) if mine.height else None  # mine has rows only with an episode
    if ep is not None and overload is not None and overload > ep["from"]:
        f.overload_after = overload
    f.metadata_trouble = kev.filter(pl.col("event").is_in(["metadata_wait_timeout", "topic_authorization_failed", "metadata_invalid_topics"])).height
    f.callback_errors = kev.filter(pl.col("event") == "callback_error").height
    return f


def _finding(ctx: Context, m: km.Model, path: str, ep: dict | None, tps: pl.DataFrame, loss: dict) -> Finding:
    f = _facts(ctx, m, path, ep, tps, loss)
    v = VERDICT
    subjects_rows = list(tps.iter_rows(named=True))
    evid: list[Evidence] = []
    if f.drain == "episode":
        assert ep is not None  # _facts drains "episode" only with an episode
        evid += kt.episode_quotes(m, ep, limit_retries=2)
    elif f.drain == "untimed":
        evid += [Evidence(path, ln, None, None, note=v.note("untimed_fail" if k < f.untimed_fail else "untimed_other", f))
                 for k, ln in enumerate(f.untimed_lines[:4])]
    # evidence: first and last expiry of each partition (the Kafka text itself, not just the ERROR line)
    for r in subjects_rows[:MAX_TP_EVIDENCE]:
        evid.append(kt.quote(r["first_row"], EXPIRY_TEXT, v.note("first", f, item=r["topic_partition"])))
        if r["last_row"] and (r["last_row"].get("file"), int(r["last_row"]["line"])) != (r["first_row"].get("file"), int(r["first_row"]["line"])):
            evid.append(kt.quote(r["last_row"], EXPIRY_TEXT, v.note("last", f, item=r["topic_partition"])))
    if ep is not None:
        cause = kt.cause_of(ep)
    elif f.drain == "untimed":
        cause = {"kind": "broker-unreachable" if f.untimed_fail else "produce-errors", "node": f.untimed_node, "address": None, "from": None, "to": None}
    elif f.drain == "not-in-log":
        cause = {"kind": "not-in-log", "node": None, "address": None, "from": f.blind_since, "to": f.first}
    else:
        cause = {"kind": "none-found", "node": None, "address": None, "from": None, "to": None}
    client = ep.get("client") if ep else None
    subjects = [
        {"topic_partition": r["topic_partition"], "records": r["records"], "batches": r["batches"], "first_seen": r["first_seen"],
         "last_seen": r["last_seen"], "path": path, "client_id": r["client_id"] or client or None, "node": ep.get("node") if ep else None}
        for r in subjects_rows
    ]
    by_partition = {
        r["topic_partition"]: {
            "topic": r["topic"], "partition": r["partition"], "log_records": r["lines"], "loggers": r["loggers"],
            "elapsed_ms_min": r["elapsed_ms_min"], "elapsed_ms_max": r["elapsed_ms_max"],
            "node_named_by_retries": r["named_match"], "batch_list": list(r["batch_list"]),
        }
        for r in subjects_rows
    }
    return Finding(
        **v.parts(f),
        first_seen=f.first,
        last_seen=f.last,
        subjects=subjects,
        cause=cause,
        evidence=ordered_evidence(evid),
        details={
            "records": f.records, "batches": f.batches, "partitions": len(f.partitions), "log_records": f.log_records,
            "elapsed_ms_min": f.elapsed_min_ms, "elapsed_ms_max": f.elapsed_max_ms,
            "delivery_timeout_ms_at_most": None if f.legacy else f.elapsed_min_ms,
            "request_timeout_ms_at_most": f.elapsed_min_ms if f.legacy else None,
            "default_delivery_timeout_ms": km.DEFAULT_DELIVERY_TIMEOUT_MS, "pre_2_1_texts": f.legacy,
            "failed_sends": f.failed_sends, "by_partition": by_partition,
        },
    )


DETECTOR = Detector(id=VERDICT.id, title=VERDICT.title, systems=("kafka",), run=run, doc=VERDICT.doc, facts=DeliveryFacts, verdict=VERDICT)
