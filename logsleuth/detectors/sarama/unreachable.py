"""sarama.no-broker-reachable: a sarama client that could connect to no broker at all — its dials to
every broker it tried (two or more) failed (refused, no route, timed out, not resolved, TLS) with no
connection succeeding meanwhile; sarama saying it had no broker left ('no available broker to send
metadata request to', 'client has run out of available brokers to talk to') is quoted when it did. Not a stall on one
broker (sarama.retry-redial-stall) nor one broker down among working ones (sarama.broker-refused):
nothing can be produced. Episodes are the dial failures of one log no more than ``episode_gap_s``
apart. The verdict and the words are in sarama.no-broker-reachable.toml beside this file; see
docs/findings/sarama.no-broker-reachable.md.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

import polars as pl

from logsleuth.detectors.base import Context, Detector, evidence, ordered_evidence, take
from logsleuth.detectors.facts import Subject, Window
from logsleuth.detectors.finding import Finding
from logsleuth.detectors.verdict import Verdict

VERDICT = Verdict.load(__file__, "sarama.no-broker-reachable")

FAILED = ("sarama_dial_failed", "sarama_apiversions_error", "sarama_sasl_error")
HANDSHAKE = ("sarama_apiversions_error", "sarama_sasl_error")  # the first request on a new connection failed (TLS, SASL, EOF)
NO_BROKER = ("sarama_no_broker", "sarama_out_of_brokers")
CONNECTED = ("sarama_connected",)
NAMES = ("sarama_dial_failed", "sarama_connected", "sarama_broker_registered", "sarama_metadata_fetch")
# how a dial failed, from the error Go printed (net.OpError / x509 / io.EOF): first match wins
KINDS = [
    ("refused", r"(?i)connection refused"),
    ("no-route", r"(?i)no route to host|network is unreachable|host is down"),
    ("dns", r"(?i)no such host|server misbehaving|lookup .*: "),
    ("timeout", r"(?i)i/o timeout|timed out|deadline exceeded"),
    ("tls", r"(?i)x509|tls:|certificate"),
    ("reset", r"(?i)connection reset|broken pipe|EOF"),
]


@dataclass
class UnreachableFacts:
    """One stretch of one log in which no broker could be reached."""

    path: str
    first: dt.datetime | None
    last: dt.datetime | None
    brokers: list[str]  # the addresses whose dials failed
    known: list[str]  # every broker address this log names (failed, connected, registered, asked)
    attempts: int  # failed dials, and connections whose first request failed (TLS, SASL)
    handshakes: int  # of those, connections that opened and failed on their first request
    kind: str  # refused | no-route | dns | timeout | tls | reset | other | mixed
    first_error: str
    no_broker_lines: int  # sarama's own 'no available broker' / 'run out of available brokers'
    failed_sends: int  # 'kafka: Failed to produce message' in the stretch
    recovered_at: dt.datetime | None  # the first connection after the stretch
    every_known_failed: bool = False
    ports: list[str] = field(default_factory=list)
    first_row: dict = field(default_factory=dict, repr=False)
    last_row: dict = field(default_factory=dict, repr=False)
    no_broker_row: dict | None = field(default=None, repr=False)
    recovered_row: dict | None = field(default=None, repr=False)


def _kind_expr() -> pl.Expr:
    e = pl.col("error").fill_null("")
    out = pl.lit("other")
    for kind, rx in reversed(KINDS):
        out = pl.when(e.str.contains(rx)).then(pl.lit(kind)).otherwise(out)
    return out


def _without_hollow_connects(ev: pl.DataFrame) -> pl.DataFrame:
    """'Connected to broker at A' whose next line about A is its first request failing (a TLS
    handshake or SASL error on ApiVersions: sarama logs the TCP connection before the handshake) is
    not a broker that answered."""
    if ev.height == 0:
        return ev
    about = pl.col("event").is_in([*CONNECTED, *HANDSHAKE]) & pl.col("address").is_not_null()
    nxt = (ev.with_row_index("_r").filter(about).sort(["path", "line"])
           .with_columns(_next=pl.col("event").shift(-1).over(["path", "address"])))
    hollow = nxt.filter(pl.col("event").is_in(list(CONNECTED)) & pl.col("_next").is_in(list(HANDSHAKE)))["_r"]
    return ev.with_row_index("_r").filter(~pl.col("_r").is_in(hollow)).drop("_r")


def stretches(ctx: Context) -> list[UnreachableFacts]:
    if ctx.events.height == 0 or "address" not in ctx.events.columns:
        return []
    # the few events it reads, as an in-memory frame (the table may be on disk: recognise/spill.py)
    ev = take(ctx.events, (pl.col("system") == "sarama") & pl.col("event").is_in([*FAILED, *NO_BROKER, *CONNECTED, *NAMES, "sarama_produce_failed"]), pl.all())
    ev = _without_hollow_connects(ev)
    fails = ev.filter(pl.col("event").is_in(list(FAILED)) & pl.col("address").is_not_null())
    if fails.height == 0:
        return []
    th = VERDICT.thresholds
    gap = dt.timedelta(seconds=th["episode_gap_s"])
    fails = fails.sort(["path", "line"]).with_columns(
        kind=_kind_expr(),
        grp=((pl.col("path") != pl.col("path").shift(1)) | (pl.col("ts").diff().fill_null(dt.timedelta(0)) > gap)).fill_null(True).cum_sum(),
    )
    eps = fails.group_by(["path", "grp"], maintain_order=True).agg(
        first=pl.col("ts").min(), last=pl.col("ts").max(), brokers=pl.col("address").drop_nulls().unique(maintain_order=True),
        attempts=pl.len(), handshakes=pl.col("event").is_in(list(HANDSHAKE)).sum(), kinds=pl.col("kind").unique(), first_error=pl.col("error").first(),
        first_line=pl.col("line").min(), last_line=pl.col("line").max(),
        first_row=pl.struct(pl.all()).first(), last_row=pl.struct(pl.all()).last(),
    )
    out = []
    for e in eps.iter_rows(named=True):
        mine = ev.filter(pl.col("path") == e["path"])
        inside = mine.filter(pl.col("line").is_between(e["first_line"], e["last_line"]))
        brokers = [str(b) for b in e["brokers"]]
        conn = mine.filter(pl.col("event").is_in(list(CONNECTED)))
        near = conn.filter(pl.col("ts").is_between(e["first"] - gap, e["last"] + gap)) if e["first"] is not None else conn.clear()
        if inside.filter(pl.col("event").is_in(list(CONNECTED))).height or near.filter(
                (pl.col("ts") < e["first"]) | ~pl.col("address").is_in(brokers)).height:
            continue  # some broker answered meanwhile (or one it never failed to reach, around it): not this finding
        after = mine.filter(pl.col("line") > e["last_line"])
        tail = after.filter(pl.col("ts") <= e["last"] + gap) if e["last"] is not None else after.head(th["untimed_tail_lines"])
        no_b = pl.concat([inside, tail]).filter(pl.col("event").is_in(list(NO_BROKER)))
        back = after.filter(pl.col("event").is_in(list(CONNECTED))).head(1)
        sends = pl.concat([inside, tail]).filter(pl.col("event") == "sarama_produce_failed").height
        if len(brokers) < th["min_brokers_count"]:
            continue  # one broker failing: sarama.broker-refused / retry-redial-stall tell it (sarama's 'out of brokers' then says only that this one is gone)
        known = sorted({str(a) for a in mine.filter(pl.col("event").is_in(list(NAMES)))["address"].drop_nulls().to_list()} | set(brokers))
        kinds = sorted(str(k) for k in e["kinds"])
        out.append(UnreachableFacts(
            path=e["path"], first=e["first"], last=e["last"], brokers=brokers, known=known, attempts=int(e["attempts"]), handshakes=int(e["handshakes"]),
            kind=kinds[0] if len(kinds) == 1 else "mixed", first_error=str(e["first_error"] or ""),
            no_broker_lines=no_b.height, failed_sends=sends,
            recovered_at=back["ts"][0] if back.height else None,
            every_known_failed=set(known) <= set(brokers),
            ports=sorted({b.rsplit(":", 1)[-1] for b in brokers if ":" in b}),
            first_row=e["first_row"], last_row=e["last_row"],
            no_broker_row=no_b.row(0, named=True) if no_b.height else None,
            recovered_row=back.row(0, named=True) if back.height else None,
        ))
    return out


def finding(f: UnreachableFacts) -> Finding:
    v = VERDICT
    evid = [evidence(f.first_row, v.note("first", f))]
    if f.attempts > 1:
        evid.append(evidence(f.last_row, v.note("last", f)))
    if f.no_broker_row is not None:
        evid.append(evidence(f.no_broker_row, v.note("no_broker", f)))
    if f.recovered_row is not None:
        evid.append(evidence(f.recovered_row, v.note("recovered", f)))
    end = f.recovered_at or f.last
    return Finding(
        **v.parts(f),
        first_seen=f.first,
        last_seen=end,
        subjects=[Subject({"path": f.path, "brokers": list(f.brokers), "attempts": f.attempts, "kind": f.kind,
                           "recovered_at": f.recovered_at, "failed_sends": f.failed_sends},
                          window=Window.of(f.first, end, "first failed dial", "connected again" if f.recovered_at else "last failed dial"))],
        cause={"kind": f"no-broker-{f.kind}", "brokers": list(f.brokers), "error": f.first_error},
        evidence=ordered_evidence(evid),
        details={"known_brokers": list(f.known), "no_broker_lines": f.no_broker_lines},
    )


def run(ctx: Context) -> list[Finding]:
    return [finding(f) for f in stretches(ctx)]


DETECTOR = Detector(id=VERDICT.id, title=VERDICT.title, systems=("sarama",), run=run, doc=VERDICT.doc, facts=UnreachableFacts, verdict=VERDICT)
