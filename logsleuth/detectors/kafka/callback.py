"""kafka.callback-error: the application's own producer Callback threw. Kafka's ProducerBatch logs
"Error executing user-provided callback on message for topic-partition '…'" with the exception's
stack trace and carries on. See docs/findings/kafka.callback-error.md.

One finding per client file; one subject per (exception class, topic-partition) with its count and
the culprit: the first stack frame that is not Kafka, the JDK or a framework (the first
*application* frame), found with Polars (``str.extract_all`` on the record text, exploded and
filtered; no loop over events).
"""

from __future__ import annotations

import re

import polars as pl

from logsleuth.detectors.kafka import model as km
from logsleuth.detectors.kafka import text as kt
from logsleuth.detectors.base import Context, Detector, evidence, fmt_time, ordered_evidence, safe
from logsleuth.detectors.finding import Evidence, Finding

# packages that are not the application: a frame in them is never the culprit
LIBRARY_PREFIXES = (
    "java.", "javax.", "jdk.", "sun.", "com.sun.", "jakarta.", "kotlin.", "kotlinx.", "scala.", "groovy.",
    "org.apache.kafka.", "org.springframework.", "reactor.", "io.netty.", "io.micrometer.", "io.opentelemetry.",
    "brave.", "org.slf4j.", "ch.qos.logback.", "org.apache.logging.", "com.fasterxml.", "io.micronaut.",
    "io.quarkus.", "io.smallrye.", "io.vertx.", "akka.", "org.apache.camel.",
)
FRAME = r"\n\s*at (?:[\w.$-]+/)?[\w$.<>]+\([^)\n]*\)"
CALLBACK_TEXT = r"Error executing user-provided callback"
MAX_EVIDENCE = 8


def _culprits(cb: pl.DataFrame) -> pl.DataFrame:
    """Per event (_i): the first application frame (method and the full frame text) and whether
    the record had a stack trace at all."""
    frames = (
        cb.select("_i", frame=pl.col("msg").str.extract_all(FRAME))
        .with_columns(has_trace=pl.col("frame").list.len() > 0)
        .explode("frame")
        .with_columns(
            frame=pl.col("frame").str.replace(r"^\s*at\s+", "").str.strip_chars()
        )
        .with_columns(
            frame=pl.col("frame").str.replace(r"^[\w.$-]+/", ""),  # Java 9+ module prefix: java.base/
        )
        .with_columns(method=pl.col("frame").str.replace(r"\(.*$", ""))
    )
    lib = pl.lit(False)
    for p in LIBRARY_PREFIXES:
        lib = lib | pl.col("method").str.starts_with(p)
    has = frames.group_by("_i", maintain_order=True).agg(has_trace=pl.col("has_trace").first())
    app = frames.filter(pl.col("frame").is_not_null() & ~lib).group_by("_i", maintain_order=True).agg(
        culprit=pl.col("method").first(), culprit_frame=pl.col("frame").first()
    )
    return has.join(app, on="_i", how="left")


def run(ctx: Context) -> list[Finding]:
    kev = km.kafka_events(ctx)
    cb = kev.filter(pl.col("event") == "callback_error")
    if cb.height == 0:
        return []
    cb = cb.sort(["ts", "file", "line"]).with_row_index("_i")
    cb = cb.join(_culprits(cb), on="_i", how="left").with_columns(
        exception=pl.col("exception").fill_null("(no exception logged)"),
        message=pl.col("msg").str.extract(r"\n\s*[A-Za-z_$][\w$.]*(?:Exception|Error|Throwable)[\w$]*: ([^\n]*)", 1),
    )
    subjects = (
        cb.group_by(["path", "exception", "topic_partition"], maintain_order=True)
        .agg(
            count=pl.len(),
            first_seen=pl.col("ts").min(),
            last_seen=pl.col("ts").max(),
            culprit=pl.col("culprit").drop_nulls().mode().sort().first(),
            culprit_frame=pl.col("culprit_frame").drop_nulls().first(),
            culprits=pl.col("culprit").drop_nulls().unique().sort(),
            with_trace=pl.col("has_trace").sum(),
            message=pl.col("message").drop_nulls().first(),
            client_id=pl.col("client").drop_nulls().first(),
            first_i=pl.col("_i").sort_by("file", "line").first(),  # the first line (of the oldest segment)
        )
        .sort(["path", "count", "first_seen"], descending=[False, True, False])
    )
    # the quoted record of each subject: its first occurrence
    firsts = cb.join(subjects.select("first_i"), left_on="_i", right_on="first_i", how="semi")
    out = []
    for (path,), subj in subjects.partition_by(["path"], as_dict=True, maintain_order=True).items():
        out.append(_finding(path, subj, firsts.filter(pl.col("path") == path), cb.filter(pl.col("path") == path)))
    return out


def _finding(path: str, subj: pl.DataFrame, firsts: pl.DataFrame, all_cb: pl.DataFrame) -> Finding:
    rows = list(subj.iter_rows(named=True))
    total = int(subj["count"].sum())
    first = subj["first_seen"].min()
    last = subj["last_seen"].max()
    with_app = [r for r in rows if r["culprit"]]
    with_trace = int(subj["with_trace"].sum())
    by_exc: dict[str, int] = {}
    for r in rows:
        by_exc[r["exception"]] = by_exc.get(r["exception"], 0) + r["count"]
    exc_txt = ", ".join(f"{safe(e.rsplit('.', 1)[-1])} ×{n}" for e, n in sorted(by_exc.items(), key=lambda x: -x[1]))
    tps = sorted({r["topic_partition"] for r in rows})
    culprits = []
    for r in rows:
        if r["culprit"] and r["culprit"] not in culprits:
            culprits.append(r["culprit"])
    clients = sorted({r["client_id"] for r in rows if r["client_id"]})
    who = f"producer {safe(clients[0])} in {safe(path)}" if len(clients) == 1 else safe(path)

    story = (
        f"The application's own send callback threw {kt.plural(total, 'time')} in {who} between "
        f"{fmt_time(first)} and {fmt_time(last)} ({exc_txt}) on {kt.plural(len(tps), 'partition')} "
        f"({', '.join(safe(t) for t in tps[:6])}{' …' if len(tps) > 6 else ''})."
    )
    if culprits:
        story += (
            (f" The first application frame of the stack traces is {safe(culprits[0])}" if len(culprits) == 1
             else " The first application frames of the stack traces are " + ", ".join(safe(c) for c in culprits[:4]))
            + ". This is a bug in application code, not in Kafka: the producer caught the exception in "
            "ProducerBatch, logged it and carried on. The send itself is not affected, but whatever the callback should "
            "have done after it (acknowledge, record the offset, update state, release a permit) did not happen for "
            "these records — the application silently stops acknowledging them."
        )
    else:
        story += (
            " No application frame is in the logged stack traces (" + (
                "every frame is Kafka, the JDK or a framework" if with_trace else "no stack trace was logged"
            ) + "), so the throwing method is not known; the callback is still application code that Kafka only calls."
        )
    conf = 0.9 if len(with_app) == len(rows) else (0.75 if with_app else 0.6)
    reasons = [f"+ {total} × Kafka's own ProducerBatch line 'Error executing user-provided callback …'"]
    if culprits:
        reasons.append(f"+ the stack traces name application code first ({safe(culprits[0])})")
    if len(with_app) < len(rows):
        reasons.append(
            f"- {len(rows) - len(with_app)} of {len(rows)} exception/partition groups have no application frame "
            + ("(no stack trace logged)" if with_trace < total else "(only library frames)")
        )
    remediation = [
        "Fix the callback: wrap the body of onCompletion in try/catch and log there; a callback runs on the producer's "
        "I/O thread (kafka-producer-network-thread), so it must be fast and must not throw or block.",
        "Reconcile what the failed callbacks should have recorded for these records: the send's own outcome is what the "
        "callback's exception argument said (null: delivered); only the application's bookkeeping after it is missing.",
    ]
    if any(e.endswith("NullPointerException") for e in by_exc):
        remediation.insert(
            1,
            "For a NullPointerException: when a send fails, onCompletion(metadata, exception) gets an exception and "
            "metadata without an offset (null in old clients) — check exception != null before using metadata, and "
            "null-check keys/values the callback reads.",
        )
    ruled_out = [
        "A Kafka client bug: "
        + ("the first non-library frame of every trace is application code" if len(with_app) == len(rows) and culprits else "Kafka only invokes the callback; the exception is the callback's own")
    ]
    failed_sends = all_cb.filter(pl.col("msg").str.contains(r"TimeoutException: Expiring|BufferExhaustedException"))
    if failed_sends.height == 0:
        ruled_out.append(
            "The callback choking on a failed send: no expiry or buffer exception appears inside these traces"
        )

    evid: list[Evidence] = []
    for r in firsts.head(MAX_EVIDENCE).iter_rows(named=True):
        evid.append(evidence(r, f"first {r['exception'].rsplit('.', 1)[-1]} on {r['topic_partition']}"))
        if r.get("culprit_frame"):
            evid.append(kt.quote(r, r"^\s*at (?:[\w.$-]+/)?" + re.escape(r["culprit_frame"]), f"culprit frame: {r['culprit']}"))
    evid = ordered_evidence(evid, once=False)

    subjects = [
        {
            "exception": r["exception"],
            "topic_partition": r["topic_partition"],
            "count": r["count"],
            "culprit": r["culprit"],
            "first_seen": r["first_seen"],
            "last_seen": r["last_seen"],
            "path": path,
            "client_id": r["client_id"] or None,
        }
        for r in rows
    ]
    # per subject (same order): the full culprit frame, the exception message and any other culprits
    groups = [
        {
            "exception": r["exception"],
            "topic_partition": r["topic_partition"],
            "culprit_frame": r["culprit_frame"],
            "message": r["message"],
            "other_culprits": [c for c in (r["culprits"] or []) if c != r["culprit"]],
        }
        for r in rows
    ]
    return Finding(
        id="kafka.callback-error",
        severity="high",
        title=f"Application producer callback threw {total}× ({exc_txt}) — application code, not Kafka ({safe(path)})",
        root_cause=story,
        confidence=conf,
        confidence_reasons=reasons,
        first_seen=first,
        last_seen=last,
        subjects=subjects,
        cause={"kind": "application-callback", "culprit": culprits[0] if culprits else None, "exceptions": by_exc},
        evidence=evid,
        remediation=remediation,
        references=["org.apache.kafka.clients.producer.Callback#onCompletion (javadoc): runs on the producer's I/O thread"],
        ruled_out=ruled_out,
        details={"by_exception": by_exc, "partitions": tps, "records_with_stack_trace": with_trace, "groups": groups},
    )


DETECTOR = Detector(
    id="kafka.callback-error",
    title="Kafka producer: the application's send callback threw",
    systems=("kafka",),
    run=run,
    doc="docs/findings/kafka.callback-error.md",
)
