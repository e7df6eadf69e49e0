"""kafka.buffer-exhausted: send() failed because the producer's buffer (buffer.memory) stayed full
for max.block.ms, and the drain problem that filled it. See docs/findings/kafka.buffer-exhausted.md.

One finding per client file. The cause is the latest trouble episode of that file (kafka_outage.py)
that started before the first exhaustion and was still going within max.block.ms of it (an as-of
join), else expired batches around it (the sender was not draining), else nothing: then the likely
cause is a production rate above what buffer.memory absorbs, with lower confidence.
"""

from __future__ import annotations

import polars as pl

from logsleuth.detectors import kafka_outage as ko
from logsleuth.detectors.base import Context, Detector, fmt_duration, fmt_time, safe
from logsleuth.findings import Finding

BUFFER_TEXT = r"Failed to allocate (?:memory|\d+ bytes) within the configured max blocking time"
DEFAULT_MAX_BLOCK_MS = 60_000
EXPIRY_LOOKBACK_MS = 10 * 60_000


def _mib(n: int | None) -> str:
    if n is None:
        return "?"
    return f"{n / 1048576:.0f} MiB" if n >= 1048576 and n % 1048576 == 0 else f"{n:,} bytes"


def run(ctx: Context) -> list[Finding]:
    m = ko.build(ctx)
    if m is None:
        return []
    bx = m.kev.filter(pl.col("event") == "buffer_exhausted")
    if bx.height == 0:
        return []
    per = (
        bx.sort(["ts", "line"])
        .with_columns(_p=pl.col("path"))
        .group_by("_p", maintain_order=True)
        .agg(
            pl.col("path").first(),
            count=pl.len(),
            first_seen=pl.col("ts").min(),
            last_seen=pl.col("ts").max(),
            max_block_ms=pl.col("max_block_ms").drop_nulls().mode().first(),
            max_block_values=pl.col("max_block_ms").drop_nulls().unique().sort(),
            exception=pl.col("exception").drop_nulls().mode().first(),
            buffer_memory=pl.col("total_bytes").max(),
            available_min=pl.col("available_bytes").min(),
            request_bytes=pl.col("bytes").max(),
            client_id=pl.col("client").drop_nulls().first(),
            first_row=pl.struct(*ko.QUOTE_COLS).first(),
            last_row=pl.struct(*ko.QUOTE_COLS).last(),
        )
        .drop("_p")
        .with_columns(_block=pl.duration(milliseconds=pl.col("max_block_ms").fill_null(DEFAULT_MAX_BLOCK_MS).clip(0, ko.MAX_MS)))
        .sort("first_seen")
    )
    # the drain problem: as-of join on the file, the latest episode started at or before the first exhaustion
    if m.episodes.height:
        eps = m.episodes.select("path", ep="ep", ep_from="from", ep_to="to").sort("ep_from")
        per = per.sort("first_seen").join_asof(eps, left_on="first_seen", right_on="ep_from", by="path", strategy="backward", check_sortedness=False)
        per = per.with_columns(
            ep=pl.when(pl.col("ep_to") >= pl.col("first_seen") - pl.col("_block") - ko.SLACK).then(pl.col("ep")).otherwise(None)
        )
    else:
        per = per.with_columns(ep=pl.lit(None, dtype=pl.Int64))
    # expired batches on the same file shortly before / during the exhaustion
    if m.batches.height:
        exp = (
            per.select("path", "first_seen", "last_seen").join(m.batches.select("path", b_ts="first_seen", b_rec="total_records", b_n="batches"), on="path")
            .filter((pl.col("b_ts") >= pl.col("first_seen") - pl.duration(milliseconds=EXPIRY_LOOKBACK_MS)) & (pl.col("b_ts") <= pl.col("last_seen")))
            .group_by("path").agg(expired_batches=pl.col("b_n").sum(), expired_records=pl.col("b_rec").sum(), expired_first=pl.col("b_ts").min())
        )
        per = per.join(exp, on="path", how="left")
    else:
        per = per.with_columns(expired_batches=pl.lit(None, dtype=pl.Int64), expired_records=pl.lit(None, dtype=pl.Int64), expired_first=pl.lit(None, dtype=pl.Datetime("us", "UTC")))
    per = per.with_columns(pl.col("expired_batches", "expired_records").fill_null(0))
    eps_by_id = {r["ep"]: r for r in m.episodes.iter_rows(named=True)} if m.episodes.height else {}
    return [_finding(m, r, eps_by_id.get(r["ep"])) for r in per.iter_rows(named=True)]


def _finding(m: ko.Model, r: dict, ep: dict | None) -> Finding:
    path = r["path"]
    n = r["count"]
    mb = r["max_block_ms"]
    exc = (r["exception"] or "").rsplit(".", 1)[-1] or "the exception"
    mem = f"buffer.memory = {_mib(r['buffer_memory'])}" if r["buffer_memory"] is not None else "buffer.memory"
    avail = f", {r['available_min']:,} bytes free" if r["available_min"] is not None else ""
    block = f"max.block.ms = {mb} ms" if mb is not None else "max.block.ms"
    story = (
        f"send() failed {n} time{'s' if n != 1 else ''} in {safe(path)} between {fmt_time(r['first_seen'])} and "
        f"{fmt_time(r['last_seen'])} with {safe(exc)}: the producer's buffer ({mem}{avail}) stayed full for the whole "
        f"{block}, so send() gave up. These records were never accepted by the producer: not delivered unless the "
        "application retried them."
    )
    reasons = [f"+ {n} × Kafka's own text 'Failed to allocate … within the configured max blocking time …'"]
    ruled_out: list[str] = []
    evid = [
        ko.quote(r["first_row"], BUFFER_TEXT, "first buffer exhaustion"),
    ]
    if n > 1:
        evid.append(ko.quote(r["last_row"], BUFFER_TEXT, "last buffer exhaustion"))
    if ep is not None:
        what = ko.node_label(ep)
        facts = ko.episode_facts(ep)
        if ep["kind"] == "broker-unreachable":
            why = f"{what} was unreachable from {fmt_time(ep['from'])} to {fmt_time(ep['to'])} ({fmt_duration(ep['duration_s'])}): {facts}"
        elif ep["kind"] == "broker-disconnects":
            why = f"{what} dropped connections / timed requests out from {fmt_time(ep['from'])} to {fmt_time(ep['to'])}: {facts}"
        else:
            why = f"the client logged produce errors from {fmt_time(ep['from'])} to {fmt_time(ep['to'])}: {facts}"
        story += f" The buffer filled because the sender could not drain it: {why}."
        if r["expired_batches"]:
            story += f" Around it, {r['expired_records']} records in {r['expired_batches']} batches expired on this client (see kafka.delivery-timeout)."
        cause = ko.cause_of(ep)
        conf = 0.85
        reasons.append(f"+ the drain problem on the same client file began at {fmt_time(ep['from'])}, before the first exhaustion")
        ruled_out.append(
            "A production rate above what buffer.memory absorbs, as the origin: the buffer ran out only after the "
            f"sender stopped draining ({fmt_time(ep['from'])})"
        )
        evid += ko.episode_quotes(m, ep, limit_retries=1)[:3]
    elif r["expired_batches"]:
        story += (
            f" The sender was not draining: {r['expired_records']} records in {r['expired_batches']} batches expired on this "
            "client around the exhaustion (see kafka.delivery-timeout), though no connection trouble is logged."
        )
        cause = {"kind": "expired-batches", "node": None, "address": None, "from": r["expired_first"], "to": r["last_seen"]}
        conf = 0.7
        reasons.append("+ batches expired on the same client around the exhaustion: the sender was not draining")
        reasons.append("- no failed connections, disconnects or retries logged: why it could not drain is not in these logs")
    else:
        story += (
            " No drain problem is logged on this client (no failed connections, disconnects, produce retries or expired "
            "batches): the likely cause is a production rate above what buffer.memory absorbs — records arrive faster "
            "than the brokers take them (or than small batches can carry them)."
        )
        cause = {"kind": "production-rate", "node": None, "address": None, "from": r["first_seen"], "to": r["last_seen"]}
        conf = 0.5
        reasons.append("- no drain problem in the logs: the production-rate explanation is inferred, not shown")
        ruled_out.append("A broker outage or expired batches on this client: none logged")
    if r["max_block_values"] is not None and len(r["max_block_values"]) > 1:
        reasons.append(f"- several max.block.ms values in one file ({', '.join(str(x) for x in r['max_block_values'])}): more than one producer")

    remediation = []
    if ep is not None or r["expired_batches"]:
        remediation.append("Fix the drain problem first (see the linked finding): a bigger buffer only delays the same failure during an outage.")
    remediation += [
        f"buffer.memory ({_mib(r['buffer_memory']) if r['buffer_memory'] else 'default 32 MiB'}): how much the producer "
        "can hold while brokers are slow or away; size it to production rate × the outage you want to ride out. Costs heap, "
        "and more records wait (and may expire) instead of failing fast.",
        f"max.block.ms ({mb if mb is not None else 'default 60000'} ms): how long send() blocks the calling thread waiting "
        "for buffer space (and metadata). Longer hides short stalls but blocks request threads; shorter fails fast "
        "and leaves the retry to the application.",
        "batch.size and linger.ms: larger batches (and a few ms of linger) use the buffer more efficiently and cut "
        "requests, at the cost of latency; a batch.size far above the record rate per partition wastes buffer memory.",
        "delivery.timeout.ms: how long a record may stay in the buffer before it expires; lowering it frees memory "
        "sooner during an outage but expires more records (must stay ≥ linger.ms + request.timeout.ms).",
        "Treat BufferExhaustedException / TimeoutException from send() as back-pressure in the application: slow down, "
        "retry later or persist to an outbox — the records in these lines were not sent.",
    ]
    ruled_out_ctx = m.kev.filter((pl.col("path") == path) & (pl.col("event") == "metadata_wait_timeout"))
    if ruled_out_ctx.height == 0:
        ruled_out.append("Blocking on metadata instead of memory: no 'not present in metadata after N ms' timeouts in this file")

    subject = {
        "path": path,
        "count": n,
        "max_block_ms": mb,
        "first_seen": r["first_seen"],
        "last_seen": r["last_seen"],
        "exception": r["exception"],
        "buffer_memory": r["buffer_memory"],
        "available_bytes_min": r["available_min"],
        "request_bytes": r["request_bytes"],
        "client_id": r["client_id"] or (ep.get("client") if ep else None),
        "expired_records_nearby": r["expired_records"],
    }
    evid.sort(key=lambda e: (e.ts is None, e.ts, e.line))
    return Finding(
        id="kafka.buffer-exhausted",
        severity="high",
        title=f"send() failed {n}× — producer buffer exhausted for max.block.ms ({safe(path)})",
        root_cause=story,
        confidence=conf,
        confidence_reasons=reasons,
        first_seen=r["first_seen"],
        last_seen=r["last_seen"],
        subjects=[subject],
        cause=cause,
        evidence=evid,
        remediation=remediation,
        references=["Kafka producer configs: buffer.memory, max.block.ms, batch.size, linger.ms, delivery.timeout.ms"],
        ruled_out=ruled_out,
        details={"max_block_ms_values": list(r["max_block_values"] or []), "expired_batches_nearby": r["expired_batches"]},
    )


DETECTOR = Detector(
    id="kafka.buffer-exhausted",
    title="Kafka producer: send() failed, buffer.memory exhausted for max.block.ms",
    systems=("kafka",),
    run=run,
    doc="docs/findings/kafka.buffer-exhausted.md",
)
