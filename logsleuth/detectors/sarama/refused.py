"""``sarama.broker-refused``: a broker that is down and clients that are told so at once — not a stall.

When a broker's process is gone but its host answers (a restart, a crash, a rolling upgrade), its
connections answer ``EOF`` (or are reset) and new dials are refused at once (``dial tcp …: connect:
connection refused``). A sarama send then fails fast: the retry's metadata refresh fails within
``Producer.Retry.Backoff + Metadata.Retry.Max × Metadata.Retry.Backoff`` (0.85 s with the defaults,
measured on the real library: docs/findings/sarama.retry-redial-stall.md) and returns ``kafka: client has
run out of available brokers to talk to``; after three failed leader lookups in a row the
partition's circuit breaker opens and sends fail at once with ``circuit breaker is open`` for 10 s,
even after the broker is back.

Per broker failure the client model finds (client.py) whose failure lines say EOF / reset /
refused (and no dial or read timed out), this finding names the broker, the partitions it led,
how fast the sends failed, the breaker-open periods, how many messages failed (the errors returned
to the application), and when sends succeeded again. Its severity comes from what was lost: no
failed send is low, failed sends medium, 100 or more high. The verdict and the words are in
sarama.broker-refused.toml beside this file; see docs/findings/sarama.broker-refused.md.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

import polars as pl

from logsleuth.detectors.base import Context, Detector, evidence, line_ref, ordered_evidence
from logsleuth.detectors.finding import Finding
from logsleuth.detectors.kafka.broker import link_episode
from logsleuth.detectors.sarama.chain import CHAIN_EVENTS, ERROR_TEXT_EVENTS, _aftermath, _first_line, _has, _net_kind, _seconds
from logsleuth.detectors.sarama.client import view
from logsleuth.detectors.sarama.config import DEFAULTS
from logsleuth.detectors.sarama.incident import Incident, read_episode
from logsleuth.detectors.sarama import unreachable
from logsleuth.detectors.sarama.model import model_seconds
from logsleuth.detectors.verdict import Verdict
from logsleuth.detectors.words import TimesOfDay

VERDICT = Verdict.load(__file__, "sarama.broker-refused")
ID = VERDICT.id
NOWHERE_SLACK = dt.timedelta(seconds=unreachable.VERDICT.thresholds["episode_gap_s"])


def _failed(inc: Incident) -> list[dict]:
    """The errors returned to the application for this broker's partitions (one per failed message)."""
    return [r for r in inc.body if r.get("app_error")]


def _fast(inc: Incident, errors: list[dict]) -> float | None:
    """How long the first failing send took: from the line that opened the chain (the broker's EOF,
    reset or refused dial, right after the write) to the first error returned."""
    if not errors:
        return None
    return max(0.0, _seconds(inc.body[0]["ts"], errors[0]["ts"]))


@dataclass
class RefusedFacts:
    """One broker failure whose lines say its port was closed (EOF, reset, refused), on one client."""

    path: str
    broker: str
    node: int | None
    tps: list[str]  # the partitions it led
    down_from: dt.datetime  # the line that opened the chain
    up_at: dt.datetime | None  # sends succeeded again (or its partitions back to [normal])
    by_delivery: bool  # up_at is a delivery of the application's (else the client model's recovery)
    down_s: float
    last_ts: dt.datetime  # the chain's last line
    lost: int  # errors returned to the application for its partitions
    eof: int  # connections that answered EOF / were reset
    refused: int  # dials refused at once
    fast_first_s: float | None  # from the chain's first line to the first error returned
    model_s: float  # the refused case's timing with sarama's defaults
    first_error: str  # the first error's first line
    periods: list[dict]  # breaker-open periods: from, to, failed_sends
    breaker_sends: int  # sends failed with 'circuit breaker is open'
    out_of_brokers: int  # errors 'client has run out of available brokers'
    chain_lines: int  # lines of the client's failure chain
    several: bool  # the client knows several brokers
    recovered_ref: str = ""  # 'line N' of the recovery
    subjects: list[dict] = field(default_factory=list, repr=False)
    details: dict = field(default_factory=dict, repr=False)
    rows: dict = field(default_factory=dict, repr=False)  # the quoted rows by evidence note

    @property
    def still_down(self) -> bool:
        return self.up_at is None

    @property
    def first_period(self) -> dict | None:
        return self.periods[0] if self.periods else None


VERDICT.filters["tod_span"] = lambda p: None if not p else TimesOfDay(p["from"], p["to"], " to ")


def _by_partition(errors: list[dict], tps: list[str]) -> dict[str, int]:
    by_tp: dict[str, int] = {}
    for r in errors:
        part, topic = r.get("app_partition"), r.get("app_topic")
        key = next((t for t in tps if part is not None and t.rpartition("/")[2] == str(part) and (topic is None or t.rpartition("/")[0] == topic)), None)
        by_tp[key or "?"] = by_tp.get(key or "?", 0) + 1
    return by_tp


def _by_text(errors: list[dict]) -> dict[str, int]:
    texts: dict[str, int] = {}
    for r in errors:
        k = _first_line(r.get("error") or r.get("msg"))
        k = "circuit breaker is open" if "circuit breaker is open" in k else "client has run out of available brokers" if "run out of available brokers" in k else k[-120:]
        texts[k] = texts.get(k, 0) + 1
    return texts


def facts(df: pl.DataFrame, inc: Incident) -> RefusedFacts:
    ep, path, errors = inc.episode, inc.path, _failed(inc)
    if ep is None:
        raise ValueError("a refused broker is read from the client model's episode (read_episode), not from the application's lines alone")
    aft = _aftermath(df, inc.seg, inc.body, inc.body[-1]["idx"], inc.delivery_row)
    periods, oob, recovered = aft["periods"], aft["oob"], aft["recovered"]
    breaker = [r for r in errors if "circuit breaker is open" in (r.get("msg") or "")]
    eof = [r for r in ep.fails if _net_kind(r.get("error")) == "closed"]
    refused = [r for r in ep.fails if _has(r, "sarama_dial_failed") and _net_kind(r.get("error")) == "refused"]
    fast = _fast(inc, errors)
    first_fail, last_line = inc.body[0], inc.body[-1]
    # no delivery of the application's after it (its other lines are neutral, appfields.py): the
    # client model's recovery, its partitions [normal] with a leader whose connection is up
    by_delivery = bool(recovered)
    if not recovered and ep.recovery is not None and ep.recovery.get("ts") is not None:
        recovered = [ep.recovery]
    up_at = recovered[0]["ts"] if recovered else None
    down_s = _seconds(first_fail["ts"], up_at or last_line["ts"])
    model = model_seconds("refused", dict(DEFAULTS))
    by_tp, tps, broker = _by_partition(errors, inc.tps), inc.tps, ep.broker.name
    fast_r = round(fast, 3) if fast is not None else None
    quoted = {"failed": first_fail, "refused": refused[0] if refused else None, "first_send": errors[0] if errors else None,
              "breaker": breaker[0] if breaker else None, "last_send": errors[-1] if len(errors) > 1 else None,
              ("delivered" if by_delivery else "normal"): recovered[0] if recovered else None}
    return RefusedFacts(
        path=path, broker=broker, node=ep.broker.node, tps=list(tps), down_from=first_fail["ts"], up_at=up_at,
        by_delivery=by_delivery, down_s=down_s, last_ts=last_line["ts"], lost=len(errors), eof=len(eof), refused=len(refused), fast_first_s=fast,
        model_s=model, first_error=_first_line(errors[0]["msg"]) if errors else "", periods=list(periods),
        breaker_sends=len(breaker), out_of_brokers=oob.height, chain_lines=len(inc.body), several=bool(inc.several),
        recovered_ref=line_ref(recovered[0] | {"path": path}) if recovered else "",
        subjects=[{
            "topic_partition": tp, "path": path, "broker": broker, "node": ep.broker.node, "down_from": first_fail["ts"],
            "down_to": up_at, "still_down": up_at is None, "down_seconds": round(down_s, 3),
            "failed_sends": by_tp.get(tp, 0) + (by_tp.get("?", 0) if len(tps) == 1 else 0), "first_failure_seconds": fast_r,
            "breaker_open_periods": len(periods), "out_of_brokers": oob.height, "eof": len(eof), "refused_dials": len(refused),
        } for tp in tps],
        details={
            "broker_state": ep.state(),
            "failed_sends": len(errors),
            "failed_by_partition": by_tp,
            "errors_by_text": _by_text(errors),
            "first_failure_seconds": fast_r,
            "model": {"formula": "Producer.Retry.Backoff + Metadata.Retry.Max × Metadata.Retry.Backoff", "seconds_with_defaults": round(model, 3),
                      "assumes": "sarama 1.22.1, one broker that is also the seed (the measured timing model: docs/findings/sarama.retry-redial-stall.md)"},
            "breaker_open": periods,
            "out_of_brokers": {"returned": oob.height, "first": oob["ts"][0] if oob.height else None},
            "recovered_at": up_at,
        },
        rows={k: {"path": path, **r} for k, r in quoted.items() if r is not None},
    )


def finding(f: RefusedFacts, first_error_of_chain: str | None) -> Finding:
    v = VERDICT
    return Finding(
        **v.parts(f),
        first_seen=f.down_from,
        last_seen=f.up_at or f.last_ts,
        subjects=f.subjects,
        cause={"kind": "refused", "broker": f.broker, "node": f.node, "error": first_error_of_chain,
               "explanation": "the broker's port was closed: connections answered EOF and dials were refused at once"},
        evidence=ordered_evidence([evidence(row, v.note(note, f)) for note, row in f.rows.items()]),
        details=f.details,
    )


def _within(stretches: list[tuple], path: str, start, end) -> bool:
    """Whether [start, end] of this path overlaps a stretch in which the client reached no broker."""
    return any(p == path and a is not None and b is not None and start is not None and end is not None
               and start <= b + NOWHERE_SLACK and end >= a - NOWHERE_SLACK for p, a, b in stretches)


def run(ctx: Context) -> list[Finding]:
    ev = ctx.events
    if ev.height == 0 or "system" not in ev.columns:
        return []
    sar = ev.filter(pl.col("system") == "sarama")
    paths = sar.filter(pl.col("event").is_in(list(CHAIN_EVENTS | ERROR_TEXT_EVENTS)))["path"].unique(maintain_order=True).to_list()
    out: list[Finding] = []
    # a client that reached no broker at all is sarama.no-broker-reachable's; a broker's own finding
    # inside it adds something only when its partitions are known
    nowhere = [(u.path, u.first, u.recovered_at or u.last) for u in unreachable.stretches(ctx)]
    for path in paths:
        df, eps = view(ctx, path, sar.filter(pl.col("path") == path))
        for ep in eps:
            inc = read_episode(path, df, ep)
            if inc is None or inc.kind != "refused" or not any(_has(r, *CHAIN_EVENTS) for r in inc.body):
                continue
            fx = facts(df, inc)
            if not VERDICT.meets_minimum(fx):
                continue
            if _within(nowhere, path, fx.down_from, fx.up_at or fx.last_ts) and not any(t != "unknown" and not t.endswith("/?") for t in fx.tps):
                continue  # every broker failed and no partition of this one is known: no-broker-reachable says all there is
            f = finding(fx, inc.body[0].get("error"))
            # the broker's own logs, when given: why that broker was down (kafka/broker.py)
            link_episode(ctx, {"node": fx.node, "from": f.first_seen, "to": f.last_seen, "address": fx.broker}, f)  # the finding's cause names them
            out.append(f)
    return out


DETECTOR = Detector(id=VERDICT.id, title=VERDICT.title, systems=("sarama",), run=run, doc=VERDICT.doc, facts=RefusedFacts, verdict=VERDICT)
