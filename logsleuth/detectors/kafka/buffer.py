"""kafka.buffer-exhausted: send() failed because the producer's buffer (buffer.memory) stayed full
for max.block.ms, and the drain problem that filled it. See docs/findings/kafka.buffer-exhausted.md.

The exhaustions, their runs and the link of each run to a trouble episode are part of the shared
model (_kafka_model.py): the run belongs to the latest episode of its file (and client, when known)
that started before its first exhaustion and was still going within max.block.ms of it. One finding
per file and episode (the runs linked to it, so the count is the one kafka.broker-unreachable
states), and one per run linked to none. Without an episode, batches that expired with no logged
cause in the 10 minutes before or during the run show the sender was not draining; else nothing:
then the likely cause is a production rate above what buffer.memory absorbs, with lower confidence.
The verdict and the words are in kafka.buffer-exhausted.toml beside this file.
"""

from __future__ import annotations

from logsleuth.detectors.words import Prose

import datetime as dt
from dataclasses import dataclass, field

import polars as pl

from logsleuth.detectors.kafka import model as km
from logsleuth.detectors.kafka import text as kt
from logsleuth.detectors.base import Context, Detector, ordered_evidence, sat_sum
from logsleuth.detectors.finding import Finding
from logsleuth.detectors.verdict import Verdict

VERDICT = Verdict.load(__file__, "kafka.buffer-exhausted")
BUFFER_TEXT = r"Failed to allocate (?:memory|\d+ bytes) within the configured max blocking time"
DEFAULT_MAX_BLOCK_MS = km.DEFAULT_MAX_BLOCK_MS
EXPIRY_LOOKBACK = dt.timedelta(seconds=VERDICT.thresholds["expiry_lookback_s"])


def _mib(n: int | None) -> str:
    if n is None:
        return "?"
    return f"{n / 1048576:.0f} MiB" if n >= 1048576 and n % 1048576 == 0 else f"{n:,} bytes"


VERDICT.filters.update({
    "mib": _mib,
    "thousands": lambda n: None if n is None else f"{int(n):,}",
    "node_label": lambda ep: kt.node_label(ep) if ep else None,
    "episode_facts": lambda ep: kt.episode_facts(ep) if ep else None,
})


@dataclass
class BufferFacts:
    """One finding's exhaustions: the runs of one file linked to one trouble episode, or one run
    linked to none."""

    path: str
    count: int  # failed send()s (linked to an episode: the number kafka.broker-unreachable states)
    first: dt.datetime | None
    last: dt.datetime | None
    exception_short: str  # BufferExhaustedException / TimeoutException, or 'the exception'
    buffer_memory: int | None  # bytes, from the message (2.x+) or None
    available_min: int | None  # the fewest bytes free a message states
    max_block_ms: int | None
    max_block_values: list[int]  # every max.block.ms value the file states
    legacy: bool  # a client older than 2.1 (no delivery.timeout.ms)
    drain: str  # why the buffer filled: 'episode' (a trouble episode before it), 'expired' (batches expired around it), 'none'
    expired: int  # records expired (of the episode, or in the window around the run)
    expired_batches: int
    expired_scope: str | None  # 'cause' | 'window'
    expired_first: dt.datetime | None = None
    expired_last: dt.datetime | None = None
    whole_expired: int = 0  # records with no logged cause in this file
    whole_expired_batches: int = 0
    metadata_timeouts: int = 0  # 'not present in metadata after N ms' in this file
    # does the file cover the max.block.ms before the first failure, with the client's WARN lines?
    # (only then is 'no drain problem logged' a statement about that time, not about a missing log)
    lookback_covered: bool = True
    lookback_why: "Prose" = ""
    lookback_from: dt.datetime | None = None
    episode: dict | None = None  # the trouble episode it is linked to (kafka model)
    client_id: str | None = None
    exception: str | None = None
    request_bytes: int | None = None
    runs: int = 1
    first_row: dict = field(default_factory=dict, repr=False)
    last_row: dict = field(default_factory=dict, repr=False)

    @property
    def whole_same(self) -> bool:
        return self.whole_expired == self.expired and self.whole_expired_batches == self.expired_batches

    @property
    def legacy_reference(self) -> str:
        return kt.LEGACY_REFERENCE


def _runs(m: km.Model) -> pl.DataFrame:
    """The runs linked to one episode, merged; a run linked to none on its own."""
    return (
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


def facts(ctx: Context) -> tuple[km.Model | None, list[BufferFacts]]:
    m = km.build(ctx)
    if m is None or m.runs.height == 0:
        return m, []
    eps_by_id = {r["ep"]: r for r in m.episodes.iter_rows(named=True)} if m.episodes.height else {}
    out = []
    for r in _runs(m).iter_rows(named=True):
        path = r["path"]
        ep = eps_by_id.get(r["ep"]) if r["ep"] is not None else None
        if ep is not None:
            loss, scope = km.loss_of(m, path, ep["ep"]), "cause"
        elif r["first_seen"] is not None:
            loss, scope = km.unlinked_expiries(m, path, r["first_seen"] - EXPIRY_LOOKBACK, r["last_seen"]), "window"
        else:
            loss, scope = {"expired_records": 0, "expired_batches": 0, "expired_first": None, "expired_last": None}, None
        expired = loss["expired_records"]
        covered, why, since = _lookback(ctx, path, r["first_seen"], r["max_block_ms"])
        whole = km.loss_of(m, path, None) if ep is None and expired else {"expired_records": 0, "expired_batches": 0}
        out.append(BufferFacts(
            path=path, count=loss["failed_sends"] if scope == "cause" else r["count"],
            first=r["first_seen"], last=r["last_seen"],
            exception_short=(r["exception"] or "").rsplit(".", 1)[-1] or "the exception",
            buffer_memory=r["buffer_memory"], available_min=r["available_min"], max_block_ms=r["max_block_ms"],
            max_block_values=list(r["max_block_values"] or []), legacy=km.pre_2_1(m, path),
            drain="episode" if ep is not None else ("expired" if expired else "none"),
            expired=expired, expired_batches=loss["expired_batches"], expired_scope=scope if expired else None,
            expired_first=loss.get("expired_first"), expired_last=loss.get("expired_last"),
            whole_expired=whole["expired_records"], whole_expired_batches=whole["expired_batches"],
            metadata_timeouts=m.kev.filter((pl.col("path") == path) & (pl.col("event") == "metadata_wait_timeout")).height,
            episode=ep, client_id=r["client_id"] or ((ep.get("client") or None) if ep else None),
            exception=r["exception"], request_bytes=r["request_bytes"], runs=r["runs"],
            first_row=r["first_row"], last_row=r["last_row"],
            lookback_covered=covered, lookback_why=why, lookback_from=since,
        ))
    return m, out


def _lookback(ctx: Context, path: str, first: dt.datetime | None, max_block_ms: int | None) -> tuple[bool, Prose, dt.datetime | None]:
    """Whether ``path`` covers the max.block.ms before the first failed send with WARN lines (the
    client's failed connections and retries are WARN), why not, and when that time began."""
    if first is None:
        return False, f"{path} has no time stamps", None
    ms = max_block_ms or DEFAULT_MAX_BLOCK_MS
    unseen = km.unseen_before(ctx, path, first, ms, too_long=f"max.block.ms = {max_block_ms} ms reaches past any log")
    if unseen is None:
        return True, "", first - dt.timedelta(milliseconds=ms)
    why, since = unseen
    return False, why, since


def finding(m: km.Model, f: BufferFacts) -> Finding:
    v = VERDICT
    ep = f.episode
    evid = [kt.quote(f.first_row, BUFFER_TEXT, v.note("first", f))]
    if f.count > 1:
        evid.append(kt.quote(f.last_row, BUFFER_TEXT, v.note("last", f)))
    if ep is not None:
        evid += kt.episode_quotes(m, ep, limit_retries=1)[:3]
        cause = kt.cause_of(ep)
    elif f.drain == "expired":
        cause = {"kind": "expired-batches", "node": None, "address": None, "from": f.expired_first, "to": f.last}
    elif f.lookback_covered:
        cause = {"kind": "production-rate", "node": None, "address": None, "from": f.first, "to": f.last}
    else:  # the time that would show why is not in the log
        cause = {"kind": "not-in-log", "node": None, "address": None, "from": f.first, "to": f.last}
    return Finding(
        **v.parts(f),
        first_seen=f.first,
        last_seen=f.last,
        subjects=[{"path": f.path, "client_id": f.client_id, "count": f.count, "max_block_ms": f.max_block_ms,
                   "buffer_memory": f.buffer_memory, "first_seen": f.first, "last_seen": f.last, "expired_records": f.expired}],
        cause=cause,
        evidence=ordered_evidence(evid),
        details={
            "exception": f.exception,
            "available_bytes_min": f.available_min,
            "request_bytes": f.request_bytes,
            "max_block_ms_values": list(f.max_block_values),
            "exhaustion_runs": f.runs,
            "expired_records": f.expired,
            "expired_batches": f.expired_batches,
            "expired_scope": f.expired_scope,
            "expired_window": (
                {"from": f.first - EXPIRY_LOOKBACK, "to": f.last} if f.expired_scope == "window" and f.first is not None else None
            ),
        },
    )


def run(ctx: Context) -> list[Finding]:
    m, found = facts(ctx)
    return [finding(m, f) for f in found] if m is not None else []


DETECTOR = Detector(id=VERDICT.id, title=VERDICT.title, systems=("kafka",), run=run, doc=VERDICT.doc, facts=BufferFacts, verdict=VERDICT)
