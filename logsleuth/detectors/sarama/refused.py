"""``sarama.broker-refused``: a broker that is down and clients that are told so at once — not a stall.

When a broker's process is gone but its host answers (a restart, a crash, a rolling upgrade), its
connections answer ``EOF`` (or are reset) and new dials are refused at once (``dial tcp …: connect:
connection refused``). A sarama send then fails fast: the retry's metadata refresh fails within
``Producer.Retry.Backoff + Metadata.Retry.Max × Metadata.Retry.Backoff`` (0.85 s with the defaults,
measured on the real library: ../shared/reference/sarama-timing.md) and returns ``kafka: client has
run out of available brokers to talk to``; after three failed leader lookups in a row the
partition's circuit breaker opens and sends fail at once with ``circuit breaker is open`` for 10 s,
even after the broker is back.

Per broker failure the client model finds (client.py) whose failure lines say EOF / reset /
refused (and no dial or read timed out), this finding names the broker, the partitions it led,
how fast the sends failed, the breaker-open periods, how many messages failed (the errors returned
to the application), and when sends succeeded again. Its severity comes from what was lost: no
failed send is low, failed sends medium, 100 or more high. See docs/findings/sarama.broker-refused.md.
"""

from __future__ import annotations

import polars as pl

from logsleuth.detectors.base import Context, Detector, evidence, fmt_duration, fmt_time, line_ref, ordered_evidence, plural, safe
from logsleuth.detectors.finding import Finding
from logsleuth.detectors.kafka.broker import link_episode
from logsleuth.detectors.sarama.chain import CHAIN_EVENTS, ERROR_TEXT_EVENTS, _aftermath, _first_line, _has, _net_kind, _seconds
from logsleuth.detectors.sarama.client import view
from logsleuth.detectors.sarama.config import DEFAULTS
from logsleuth.detectors.sarama.incident import Incident, read_episode
from logsleuth.detectors.sarama.model import model_seconds

ID = "sarama.broker-refused"
MANY_LOST = 100  # failed sends from this many up are a high finding


def _failed(inc: Incident) -> list[dict]:
    """The errors returned to the application for this broker's partitions (one per failed message)."""
    return [r for r in inc.body if r.get("app_error")]


def _fast(inc: Incident, errors: list[dict]) -> float | None:
    """How long the first failing send took: from the line that opened the chain (the broker's EOF,
    reset or refused dial, right after the write) to the first error returned."""
    if not errors:
        return None
    return max(0.0, _seconds(inc.body[0]["ts"], errors[0]["ts"]))


def _severity(lost: int, still_down: bool) -> str:
    if lost >= MANY_LOST:
        return "high"
    if lost > 0 or still_down:
        return "medium"
    return "low"


def _finding(ctx: Context, df: pl.DataFrame, inc: Incident) -> Finding:
    ep = inc.episode
    path = inc.path
    errors = _failed(inc)
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
    still_down = up_at is None
    down_s = _seconds(first_fail["ts"], up_at or last_line["ts"])
    lost = len(errors)
    broker = ep.broker.name
    tps = inc.tps
    tp_text = ", ".join(safe(t) for t in tps)
    model = model_seconds("refused", dict(DEFAULTS))
    by_tp: dict[str, int] = {}
    for r in errors:
        part, topic = r.get("app_partition"), r.get("app_topic")
        key = next((t for t in tps if part is not None and t.rpartition("/")[2] == str(part) and (topic is None or t.rpartition("/")[0] == topic)), None)
        by_tp[key or "?"] = by_tp.get(key or "?", 0) + 1
    texts: dict[str, int] = {}
    for r in errors:
        k = _first_line(r.get("error") or r.get("msg"))
        k = "circuit breaker is open" if "circuit breaker is open" in k else "client has run out of available brokers" if "run out of available brokers" in k else k[-120:]
        texts[k] = texts.get(k, 0) + 1

    title = (
        f"sarama: broker {safe(broker)} refused connections"
        + (f" for {fmt_duration(down_s)}" if not still_down else " (still down at the end of the log)")
        + (f": {plural(lost, 'send')} failed fast on {tp_text}" if lost else f": sends on {tp_text} retried, none failed")
    )
    how = []
    if eof:
        how.append(f"its connections answered EOF ({plural(len(eof), 'time')})" if len(eof) > 1 else "its connection answered EOF")
    if refused:
        how.append(f"{plural(len(refused), 'dial')} {'was' if len(refused) == 1 else 'were'} refused at once")
    root = (
        f"Broker {safe(broker)}" + (f" (id {ep.broker.node})" if ep.broker.node is not None else "")
        + f" was down from {first_fail['ts'].strftime('%H:%M:%S')} UTC: " + (" and ".join(how) or "its connection failed at once")
        + ". This is a fast failure, not a stall: no send waited a timeout."
    )
    if fast is not None:
        root += (
            f" The first failing send on {tp_text} returned after {fast:.2f} s"
            + (f" ('{safe(_first_line(errors[0]['msg']))}')" if errors else "")
            + f" — the metadata retries' back-offs (Producer.Retry.Backoff + Metadata.Retry.Max × Metadata.Retry.Backoff = {model:.2f} s with sarama's defaults)."
        )
    if periods:
        p0 = periods[0]
        root += (
            f" Then the partition's circuit breaker opened (three failed leader lookups in a row): sends failed at once with "
            f"'circuit breaker is open' from {p0['from'].strftime('%H:%M:%S')} to {p0['to'].strftime('%H:%M:%S')} UTC ({plural(p0['failed_sends'], 'send')})"
            + (f", in {len(periods)} periods ({plural(len(breaker), 'send')} in all)" if len(periods) > 1 else "")
            + "."
        )
    if lost:
        root += f" {plural(lost, 'message')} failed in all" + (f", {oob.height} with 'client has run out of available brokers'" if oob.height else "") + "."
    else:
        root += " No error reached the application's log: the retries got the messages through."
    root += (
        (f" Sends succeeded again at {fmt_time(up_at)} ({line_ref(recovered[0] | {'path': path})})." if by_delivery
         else f" Its partitions were back to [normal] at {fmt_time(up_at)} ({line_ref(recovered[0] | {'path': path})}).") if up_at
        else " The log ends before a send succeeds again."
    )
    reasons = [f"{plural(len(inc.body), 'line')} of the client's failure chain from {safe(path)}"]
    conf = 0.7
    if eof and refused:
        conf += 0.1
        reasons.append("+ both an EOF on the open connection and refused dials: the broker's port was closed")
    elif refused:
        conf += 0.05
        reasons.append("+ dials refused at once: nothing listens on the broker's port")
    if fast is not None and fast <= 2.0:
        conf += 0.1
        reasons.append(f"+ the first failing send returned after {fast:.2f} s (the measured refused case: {model:.2f} s with sarama's defaults)")
    if periods:
        reasons.append(f"+ the circuit breaker opened ({plural(len(periods), 'period')}), as it does after fast failed leader lookups")
    if not errors:
        conf -= 0.1
        reasons.append("- no error reached the application's log: the failed sends cannot be counted from it")

    ev = [evidence({"path": path, **first_fail}, "the broker's connection failed")]
    if refused:
        ev.append(evidence({"path": path, **refused[0]}, "first refused dial"))
    if errors:
        ev.append(evidence({"path": path, **errors[0]}, "first send that failed"))
    if breaker:
        ev.append(evidence({"path": path, **breaker[0]}, "circuit breaker open"))
    if len(errors) > 1:
        ev.append(evidence({"path": path, **errors[-1]}, "last send that failed"))
    if recovered:
        ev.append(evidence({"path": path, **recovered[0]}, "first successful send after it" if by_delivery else "its partitions back to [normal]"))

    rem = [
        "Nothing to tune for speed: the sends fail fast because the broker refuses them. Find why the broker "
        f"{safe(broker)} closed its port at {fmt_time(first_fail['ts'])} (restart, crash, rolling upgrade): its log of that time tells.",
        "Make the application back off on 'circuit breaker is open' (it lasts 10 s, even after the broker is back) instead of counting each as a new outage"
        + (", and retry or park the failed messages: " + plural(lost, "message") + " were handed back as failed" if lost else "") + ".",
    ]
    if inc.several and not still_down:
        rem.append("With several brokers and replication, a restarted broker's partitions move to a live leader: check the topic's replication factor and min.insync.replicas if sends kept failing.")
    subjects = [
        {
            "topic_partition": tp,
            "path": path,
            "broker": broker,
            "node": ep.broker.node,
            "down_from": first_fail["ts"],
            "down_to": up_at,
            "still_down": still_down,
            "down_seconds": round(down_s, 3),
            "failed_sends": by_tp.get(tp, 0) + (by_tp.get("?", 0) if len(tps) == 1 else 0),
            "first_failure_seconds": round(fast, 3) if fast is not None else None,
            "breaker_open_periods": len(periods),
            "out_of_brokers": oob.height,
            "eof": len(eof),
            "refused_dials": len(refused),
        }
        for tp in tps
    ]
    return Finding(
        id=ID,
        severity=_severity(lost, still_down),
        title=title,
        root_cause=root,
        confidence=conf,
        confidence_reasons=reasons,
        first_seen=first_fail["ts"],
        last_seen=up_at or last_line["ts"],
        subjects=subjects,
        cause={"kind": "refused", "broker": broker, "node": ep.broker.node, "error": first_fail.get("error"),
               "explanation": "the broker's port was closed: connections answered EOF and dials were refused at once"},
        evidence=ordered_evidence(ev),
        remediation=rem,
        references=["docs/findings/sarama.broker-refused.md", "sarama async_producer.go (retryMessage, updateLeader), go-resiliency breaker.New(3, 1, 10*time.Second)"],
        ruled_out=[
            "a stall: no dial or read waited a timeout"
            + (f"; the first failing send returned after {fast:.2f} s" if fast is not None else "") + " (a black-holed or mute broker makes sends hang for seconds to minutes: sarama.retry-redial-stall).",
        ],
        details={
            "broker_state": ep.state(),
            "failed_sends": lost,
            "failed_by_partition": by_tp,
            "errors_by_text": texts,
            "first_failure_seconds": round(fast, 3) if fast is not None else None,
            "model": {"formula": "Producer.Retry.Backoff + Metadata.Retry.Max × Metadata.Retry.Backoff", "seconds_with_defaults": round(model, 3),
                      "assumes": "sarama 1.22.1, one broker that is also the seed (the measured timing model: docs/findings/sarama.retry-redial-stall.md)"},
            "breaker_open": periods,
            "out_of_brokers": {"returned": oob.height, "first": oob["ts"][0] if oob.height else None},
            "recovered_at": up_at,
        },
    )


def run(ctx: Context) -> list[Finding]:
    ev = ctx.events
    if ev.height == 0 or "system" not in ev.columns:
        return []
    sar = ev.filter(pl.col("system") == "sarama")
    paths = sar.filter(pl.col("event").is_in(list(CHAIN_EVENTS | ERROR_TEXT_EVENTS)))["path"].unique(maintain_order=True).to_list()
    out: list[Finding] = []
    for path in paths:
        df, eps = view(ctx, path, sar.filter(pl.col("path") == path))
        for ep in eps:
            inc = read_episode(path, df, ep)
            if inc is None or inc.kind != "refused" or not any(_has(r, *CHAIN_EVENTS) for r in inc.body):
                continue
            f = _finding(ctx, df, inc)
            # the broker's own logs, when given: why that broker was down (kafka/broker.py)
            link_episode(ctx, {"node": f.cause.get("node"), "from": f.first_seen, "to": f.last_seen, "address": f.cause.get("broker")}, f)
            out.append(f)
    return out


DETECTOR = Detector(
    id=ID,
    title="sarama broker refused: a broker down and sends failing fast",
    systems=("sarama",),
    run=run,
    doc="docs/findings/sarama.broker-refused.md",
)
