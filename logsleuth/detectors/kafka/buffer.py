"""kafka.buffer-exhausted: send() failed because the producer's buffer (buffer.memory) stayed full
for max.block.ms, and the drain problem that filled it. See docs/findings/kafka.buffer-exhausted.md.

The exhaustions, their runs and the link of each run to a trouble episode are part of the shared
model (_kafka_model.py): the run belongs to the latest episode of its file (and client, when known)
that started before its first exhaustion and was still going within max.block.ms of it. One finding
per file and episode (the runs linked to it, so the count is the one kafka.broker-unreachable
states), and one per run linked to none. Without an episode, batches that expired with no logged
cause in the 10 minutes before or during the run show the sender was not draining; else nothing:
then the likely cause is a production rate above what buffer.memory absorbs, with lower confidence.
"""

from __future__ import annotations

import datetime as dt

import polars as pl

from logsleuth.detectors.kafka import model as km
from logsleuth.detectors.kafka import text as kt
from logsleuth.detectors.base import Context, Detector, fmt_duration, fmt_time, ordered_evidence, safe, sat_sum
from logsleuth.detectors.finding import Finding

BUFFER_TEXT = r"Failed to allocate (?:memory|\d+ bytes) within the configured max blocking time"
DEFAULT_MAX_BLOCK_MS = km.DEFAULT_MAX_BLOCK_MS
EXPIRY_LOOKBACK = dt.timedelta(minutes=10)


def _mib(n: int | None) -> str:
    if n is None:
        return "?"
    return f"{n / 1048576:.0f} MiB" if n >= 1048576 and n % 1048576 == 0 else f"{n:,} bytes"


def run(ctx: Context) -> list[Finding]:
    m = km.build(ctx)
    if m is None or m.runs.height == 0:
        return []
    # the runs linked to one episode make one finding; a run linked to none makes its own
    per = (
        m.runs.sort(["first_seen", "run"], nulls_last=True)
        .with_columns(solo=pl.when(pl.col("ep").is_null()).then(pl.col("run")))
        .group_by(["path", "ep", "solo"], maintain_order=True)
        .agg(
            count=sat_sum(pl.col("count")),
            runs=pl.len(),
            first_seen=pl.col("first_seen").min(),
            last_seen=pl.col("last_seen").max(),
            max_block_ms=pl.col("max_block_ms").sort_by("count", descending=True).first(),
            max_block_values=pl.col("max_block_values").explode().drop_nulls().unique().sort(),
            exception=pl.col("exception").sort_by("count", descending=True).first(),
            buffer_memory=pl.col("buffer_memory").max(),
            available_min=pl.col("available_min").min(),
            request_bytes=pl.col("request_bytes").max(),
            client_id=pl.col("client").drop_nulls().first(),
            first_row=pl.col("first_row").first(),
            last_row=pl.col("last_row").last(),
        )
    )
    eps_by_id = {r["ep"]: r for r in m.episodes.iter_rows(named=True)} if m.episodes.height else {}
    out = []
    for r in per.iter_rows(named=True):
        ep = eps_by_id.get(r["ep"]) if r["ep"] is not None else None
        if ep is not None:
            loss = km.loss_of(m, r["path"], ep["ep"])
            scope = "cause"
        elif r["first_seen"] is not None:
            loss = km.unlinked_expiries(m, r["path"], r["first_seen"] - EXPIRY_LOOKBACK, r["last_seen"])
            scope = "window"
        else:
            loss = {"expired_records": 0, "expired_batches": 0, "expired_first": None, "expired_last": None}
            scope = None
        out.append(_finding(m, r, ep, loss, scope))
    return out


def _finding(m: km.Model, r: dict, ep: dict | None, loss: dict, scope: str | None) -> Finding:
    path = r["path"]
    legacy = km.pre_2_1(m, path)  # a client older than 2.1: no delivery.timeout.ms
    n = loss["failed_sends"] if scope == "cause" else r["count"]  # the same number kafka.broker-unreachable states
    expired, expired_batches = loss["expired_records"], loss["expired_batches"]
    mb = r["max_block_ms"]
    exc = (r["exception"] or "").rsplit(".", 1)[-1] or "the exception"
    mem = f"buffer.memory = {_mib(r['buffer_memory'])}" if r["buffer_memory"] is not None else "buffer.memory"
    avail = f", {r['available_min']:,} bytes free" if r["available_min"] is not None else ""
    block = f"max.block.ms = {mb} ms" if mb is not None else "max.block.ms"
    story = (
        f"send() failed {kt.plural(n, 'time')} in {safe(path)} between {fmt_time(r['first_seen'])} and "
        f"{fmt_time(r['last_seen'])} with {safe(exc)}: the producer's buffer ({mem}{avail}) stayed full for the whole "
        f"{block}, so send() gave up. These records were never accepted by the producer: not delivered unless the "
        "application retried them."
    )
    reasons = [f"+ {n} × Kafka's own text 'Failed to allocate … within the configured max blocking time …'"]
    ruled_out: list[str] = []
    evid = [
        kt.quote(r["first_row"], BUFFER_TEXT, "first buffer exhaustion"),
    ]
    if n > 1:
        evid.append(kt.quote(r["last_row"], BUFFER_TEXT, "last buffer exhaustion"))
    if ep is not None:
        what = kt.node_label(ep)
        facts = kt.episode_facts(ep)
        window = f"from {fmt_time(ep['from'])} to {fmt_time(ep['to'])} ({fmt_duration(ep['duration_s'])})"
        if ep["kind"] == "broker-unreachable":
            why = f"{what} was unreachable {window}: {facts}"
        elif ep["kind"] == "broker-disconnects":
            why = f"{what} dropped connections / timed requests out {window}: {facts}"
        else:
            why = f"the client logged produce errors {window}: {facts}"
        story += f" The buffer filled because the sender could not drain it: {why}."
        if expired:
            story += (
                f" During that outage {kt.lost_text(expired, expired_batches)} also expired undelivered on this client "
                "(all the expiries linked to it: see kafka.delivery-timeout)."
            )
        cause = kt.cause_of(ep)
        conf = 0.85
        reasons.append(f"+ the drain problem on the same client file began at {fmt_time(ep['from'])}, before the first exhaustion")
        ruled_out.append(
            "A production rate above what buffer.memory absorbs, as the origin: the buffer ran out only after the "
            f"sender stopped draining ({fmt_time(ep['from'])})"
        )
        evid += kt.episode_quotes(m, ep, limit_retries=1)[:3]
    elif expired:
        whole = km.loss_of(m, path, None)
        story += (
            f" The sender was not draining: {kt.lost_text(expired, expired_batches)} with no logged cause expired in this "
            f"file between {fmt_time(loss['expired_first'])} and {fmt_time(loss['expired_last'])} — the expiries first logged "
            f"from {fmt_duration(EXPIRY_LOOKBACK.total_seconds())} before the first failed send to the last one"
            + (
                ""
                if whole["expired_records"] == expired and whole["expired_batches"] == expired_batches
                else f" (of the {kt.lost_text(whole['expired_records'], whole['expired_batches'])} with no logged cause in this file)"
            )
            + " (see kafka.delivery-timeout) — though no connection trouble is logged."
        )
        cause = {"kind": "expired-batches", "node": None, "address": None, "from": loss["expired_first"], "to": r["last_seen"]}
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
    if ep is not None or expired:
        drain = (
            f"{kt.node_label(ep)} {'unreachable' if ep['kind'] == 'broker-unreachable' else 'dropping connections / timing requests out' if ep['kind'] == 'broker-disconnects' else 'answering with produce errors'} from {fmt_time(ep['from'])} to {fmt_time(ep['to'])}"
            if ep is not None else "the batches that expired on this client"
        )
        remediation.append(f"Fix the drain problem first ({drain}): a bigger buffer only delays the same failure during an outage.")
    remediation += [
        f"buffer.memory ({_mib(r['buffer_memory']) if r['buffer_memory'] else 'default 32 MiB'}): how much the producer "
        "can hold while brokers are slow or away; size it to production rate × the outage you want to ride out. Costs heap, "
        "and more records wait (and may expire) instead of failing fast.",
        f"max.block.ms ({mb if mb is not None else 'default 60000'} ms): how long send() blocks the calling thread waiting "
        "for buffer space (and metadata). Longer hides short stalls but blocks request threads; shorter fails fast "
        "and leaves the retry to the application.",
        "batch.size and linger.ms: larger batches (and a few ms of linger) use the buffer more efficiently and cut "
        "requests, at the cost of latency; a batch.size far above the record rate per partition wastes buffer memory.",
        (
            "request.timeout.ms: this client is older than 2.1 (its texts say so), so there is no delivery.timeout.ms; a "
            "batch expires once it has waited longer than request.timeout.ms (default 30000 ms) in the buffer. Lowering "
            "it frees memory sooner during an outage but expires more records (and times produce requests out sooner)."
            if legacy else
            "delivery.timeout.ms: how long a record may stay in the buffer before it expires; lowering it frees memory "
            "sooner during an outage but expires more records (must stay ≥ linger.ms + request.timeout.ms)."
        ),
        "Treat BufferExhaustedException / TimeoutException from send() as back-pressure in the application: slow down, "
        "retry later or persist to an outbox — the records in these lines were not sent.",
    ]
    ruled_out_ctx = m.kev.filter((pl.col("path") == path) & (pl.col("event") == "metadata_wait_timeout"))
    if ruled_out_ctx.height == 0:
        ruled_out.append("Blocking on metadata instead of memory: no 'not present in metadata after N ms' timeouts in this file")

    subject = {
        "path": path,
        "client_id": r["client_id"] or ((ep.get("client") or None) if ep else None),
        "count": n,
        "max_block_ms": mb,
        "buffer_memory": r["buffer_memory"],
        "first_seen": r["first_seen"],
        "last_seen": r["last_seen"],
        "expired_records": expired,
    }
    evid = ordered_evidence(evid)
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
        references=[
            "Kafka producer configs: buffer.memory, max.block.ms, batch.size, linger.ms, "
            + ("request.timeout.ms" if legacy else "delivery.timeout.ms")
        ] + ([kt.LEGACY_REFERENCE] if legacy else []),
        ruled_out=ruled_out,
        details={
            "exception": r["exception"],
            "available_bytes_min": r["available_min"],
            "request_bytes": r["request_bytes"],
            "max_block_ms_values": list(r["max_block_values"] or []),
            "exhaustion_runs": r["runs"],
            "expired_records": expired,
            "expired_batches": expired_batches,
            "expired_scope": scope if expired else None,
            "expired_window": (
                {"from": r["first_seen"] - EXPIRY_LOOKBACK, "to": r["last_seen"]} if scope == "window" and expired else None
            ),
        },
    )


DETECTOR = Detector(
    id="kafka.buffer-exhausted",
    title="Kafka producer: send() failed, buffer.memory exhausted for max.block.ms",
    systems=("kafka",),
    run=run,
    doc="docs/findings/kafka.buffer-exhausted.md",
)
