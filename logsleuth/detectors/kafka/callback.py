"""kafka.callback-error: the application's own producer Callback threw. Kafka's ProducerBatch logs
"Error executing user-provided callback on message for topic-partition '…'" with the exception's
stack trace and carries on. The verdict and the words are in kafka.callback-error.toml beside this
file; see docs/findings/kafka.callback-error.md.

One finding per client file; one subject per (exception class, topic-partition) with its count and
the culprit: the first stack frame that is not Kafka, the JDK or a framework (the first
*application* frame), found with Polars (``str.extract_all`` on the record text, exploded and
filtered; no loop over events).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field

import polars as pl

from logsleuth.detectors.kafka import model as km
from logsleuth.detectors.kafka import text as kt
from logsleuth.detectors.base import Context, Detector, evidence, ordered_evidence, time_of
from logsleuth.detectors.finding import Evidence, Finding
from logsleuth.detectors.verdict import Verdict

VERDICT = Verdict.load(__file__, "kafka.callback-error")

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
        out.append(_finding(_facts(path, subj, firsts.filter(pl.col("path") == path), cb.filter(pl.col("path") == path))))
    return out


@dataclass
class CallbackFacts:
    """The callback errors of one client file."""

    path: str
    total: int  # 'Error executing user-provided callback' records
    first: dt.datetime | None
    last: dt.datetime | None
    exceptions: list[dict]  # {name, short, count}, the most frequent first
    partitions: list[str]  # sorted
    culprits: list[str]  # the first application frames, in subject order, each once
    groups: int  # (exception, topic-partition) groups
    groups_without_app: int  # groups with no application frame
    with_trace: int  # records with a stack trace
    failed_sends_inside: int  # records whose trace holds an expiry or buffer exception
    client: str | None = None  # the client id when one produced them all
    subjects: list[dict] = field(default_factory=list, repr=False)
    details_groups: list[dict] = field(default_factory=list, repr=False)
    first_rows: list[dict] = field(default_factory=list, repr=False)

    @property
    def culprit(self) -> str | None:
        return self.culprits[0] if self.culprits else None

    @property
    def has_npe(self) -> bool:
        return any(e["name"].endswith("NullPointerException") for e in self.exceptions)

    @property
    def shown_partitions(self) -> list[str]:
        return self.partitions[: VERDICT.thresholds["shown_partitions_count"]]

    @property
    def shown_culprits(self) -> list[str]:
        return self.culprits[: VERDICT.thresholds["shown_culprits_count"]]

    @property
    def by_exception(self) -> dict[str, int]:
        return {e["name"]: e["count"] for e in self.exceptions}


def _facts(path: str, subj: pl.DataFrame, firsts: pl.DataFrame, all_cb: pl.DataFrame) -> CallbackFacts:
    rows = list(subj.iter_rows(named=True))
    by_exc: dict[str, int] = {}
    for r in rows:
        by_exc[r["exception"]] = by_exc.get(r["exception"], 0) + r["count"]
    culprits: list[str] = []
    for r in rows:
        if r["culprit"] and r["culprit"] not in culprits:
            culprits.append(r["culprit"])
    clients = sorted({r["client_id"] for r in rows if r["client_id"]})
    return CallbackFacts(
        path=path, total=int(subj["count"].sum()), first=time_of(subj["first_seen"].min()), last=time_of(subj["last_seen"].max()),
        exceptions=[{"name": e, "short": e.rsplit(".", 1)[-1], "count": n} for e, n in sorted(by_exc.items(), key=lambda x: -x[1])],
        partitions=sorted({r["topic_partition"] for r in rows}), culprits=culprits, groups=len(rows),
        groups_without_app=sum(1 for r in rows if not r["culprit"]), with_trace=int(subj["with_trace"].sum()),
        failed_sends_inside=all_cb.filter(pl.col("msg").str.contains(r"TimeoutException: Expiring|BufferExhaustedException")).height,
        client=clients[0] if len(clients) == 1 else None,
        subjects=[{"exception": r["exception"], "topic_partition": r["topic_partition"], "count": r["count"], "culprit": r["culprit"],
                   "first_seen": r["first_seen"], "last_seen": r["last_seen"], "path": path, "client_id": r["client_id"] or None}
                  for r in rows],
        # per subject (same order): the full culprit frame, the exception message and any other culprits
        details_groups=[{"exception": r["exception"], "topic_partition": r["topic_partition"], "culprit_frame": r["culprit_frame"],
                         "message": r["message"], "other_culprits": [c for c in (r["culprits"] or []) if c != r["culprit"]]}
                        for r in rows],
        first_rows=list(firsts.head(MAX_EVIDENCE).iter_rows(named=True)),
    )


def _finding(f: CallbackFacts) -> Finding:
    v = VERDICT
    evid: list[Evidence] = []
    for r in f.first_rows:
        evid.append(evidence(r, v.note("first", f, item={"short": r["exception"].rsplit(".", 1)[-1], "topic_partition": r["topic_partition"]})))
        if r.get("culprit_frame"):
            evid.append(kt.quote(r, r"^\s*at (?:[\w.$-]+/)?" + re.escape(r["culprit_frame"]), v.note("culprit", f, item={"frame": r["culprit"]})))
    return Finding(
        **v.parts(f),
        first_seen=f.first,
        last_seen=f.last,
        subjects=f.subjects,
        cause={"kind": "application-callback", "culprit": f.culprit, "exceptions": f.by_exception},
        evidence=ordered_evidence(evid, once=False),
        details={"by_exception": f.by_exception, "partitions": f.partitions, "records_with_stack_trace": f.with_trace, "groups": f.details_groups},
    )


DETECTOR = Detector(id=VERDICT.id, title=VERDICT.title, systems=("kafka",), run=run, doc=VERDICT.doc, facts=CallbackFacts, verdict=VERDICT)
