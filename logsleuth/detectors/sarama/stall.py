"""``sarama.retry-redial-stall``: why a sarama SendMessage hung for minutes, and where the time went.

A sarama producer whose broker stops answering does not fail after ``Net.WriteTimeout``: the
message waits for the produce response (``Net.ReadTimeout``), is retried, and the retry's leader
lookup refreshes metadata, which dials the broker again and again (``Net.DialTimeout`` each,
``1 + Metadata.Retry.Max`` dials with ``Metadata.Retry.Backoff`` between them). This detector finds
each such chain in a sarama log, measures it from the last line the process logged before the
chain (normally the application's last successful send) to the first error handed back to the
application (or to ``state change to [normal]`` when the application logs no error), attributes
every gap between consecutive lines to a dial timeout, a read/write timeout, a metadata back-off,
a producer retry back-off or the idle time before the failing send, infers the timeout values from
those gaps, and compares them with ``--sarama-config`` (or sarama's defaults) and with the timing
model measured on the real library (../shared/reference/sarama-timing.md, docs/findings/
sarama.retry-redial-stall.md), which is for one broker that is also the seed: a chain that names
several brokers is read from its gaps alone, and a passed configuration whose model cannot give the
observed send is reported as a what-if that was not in use. Three kinds, each with its own
explanation: ``blackhole`` (dials time out), ``refused`` (the broker closed: EOF / connection
refused, fast failure, then the circuit breaker), ``silent`` (a mute broker: read timeouts that
grow with Producer.Retry.Max).


Polars finds the chains (per file); small Python loops then walk the few lines of each chain.
The parts, one stage each: _sarama_chain.py reads the log into chains and incidents,
_sarama_incident.py reads one incident (its stall's lines, kind, broker, partitions),
_sarama_budget.py measures where its time went (with _sarama_waits.py, which attributes gaps to
waits, and _sarama_app_only.py, which reads a stall from the application's lines alone when
sarama's Logger is off), _sarama_compare.py compares it with the timing model (_sarama_model.py) and
the configuration, _sarama_verdict.py weighs confidence and severity, and _sarama_text.py (with
_sarama_format.py) words the finding. This module runs those stages for each incident and
assembles the finding, its subjects and its evidence.
"""

from __future__ import annotations

import polars as pl

from logsleuth.detectors.kafka.broker import link_episode
from logsleuth.detectors.sarama.budget import Timing, measure
from logsleuth.detectors.sarama.chain import (
    CHAIN_EVENTS, ERROR_TEXT_EVENTS, _aftermath, _first_line, _has, _incidents, _lines, _split_on_success,
)
from logsleuth.detectors.sarama.compare import Comparison, compare
from logsleuth.detectors.sarama.format import fmt_setting
from logsleuth.detectors.sarama.incident import Incident, read_incident
from logsleuth.detectors.sarama.text import KIND_TEXT, remediation, resolution, root_cause, ruled_out, title
from logsleuth.detectors.sarama.verdict import confidence, severity
from logsleuth.detectors.sarama.waits import PRODUCE_TIMEOUTS
from logsleuth.detectors.base import Context, Detector, evidence, segment_of
from logsleuth.detectors.finding import Finding

ID = "sarama.retry-redial-stall"


# ----------------------------------------------------------------------------- one incident


def _files(path: str, **rows: dict) -> dict:
    """{key: file} for the rows that are in a segment of a rotated log other than its path."""
    return {k: segment_of(r | {"path": path}) for k, r in rows.items() if segment_of(r | {"path": path})}



def _analyse(ctx: Context, path: str, df: pl.DataFrame, first: int, last: int, unseen: bool = False) -> Finding | None:
    """One incident, rows ``first``..``last`` of ``df``, as a finding. ``unseen``: the file holds none of
    sarama's lines (its Logger was off), so only the application's own lines tell of the failing send."""
    inc = read_incident(path, df, first, last, unseen)
    if inc is None:
        return None
    t = measure(inc, df)
    if t is None:
        return None
    cmp = compare(inc, t, ctx.options.get("sarama_config"))
    # breaker periods, out-of-brokers, later failures and recovery, over the whole incident
    aft = _aftermath(df, inc.seg, inc.body, last)
    conf, reasons = confidence(inc, t, cmp)
    return _finding(inc, t, cmp, aft, conf, reasons)


def _subjects(inc: Incident, t: Timing, cmp: Comparison, aft: dict) -> list[dict]:
    """One subject per partition, each with the incident's figures."""
    path, body, stall_rows, err_row, several = inc.path, inc.body, inc.stall_rows, inc.err_row, inc.several
    skipped, inside, by = t.skipped, inc.inside, cmp.by

    def cnt(k: str) -> int:
        return by[k]["count"] if k in by else 0

    subj_common = {
        "path": path,
        "kind": inc.kind,
        "broker": inc.broker,
        "stall_seconds": round(t.stall, 3),
        "from": t.t_from,
        "to": t.t_to,
        "from_line": body[0]["line"] if (skipped or inside) else stall_rows[0]["line"],
        "start_estimated": t.start_estimated,
        "to_line": stall_rows[-1]["line"],
        **_files(path, from_file=body[0] if (skipped or inside) else stall_rows[0], to_file=stall_rows[-1]),
        "ended_by": inc.ended_by,
        "returned_error": _first_line(err_row["msg"]) if err_row else None,
        "application_figure_seconds": inc.figure,
        "sarama_logger": "off" if inc.unseen else "on",
        "idle_seconds": round(t.idle, 3),
        "send_seconds": round(cmp.send_observed, 3) if cmp.send_observed is not None else None,
        "dial_timeouts": cnt("dial_timeout"),
        "dial_timeout_seconds": t.dial_t,
        "dials_refused": cnt("dial_refused"),
        "read_timeouts": cnt("produce_read_timeout") + cnt("metadata_read_timeout"),
        "read_timeout_seconds": round(t.read_t, 3) if t.read_t is not None else None,
        "write_timeouts": cnt("produce_write_timeout") + cnt("metadata_write_timeout"),
        "metadata_backoffs": cnt("metadata_backoff"),
        "retry_backoffs": cnt("retry_backoff"),
        "model_seconds": None if several else round(cmp.model_now, 3),  # several brokers: the one-broker model does not apply
        "suggested_change": ",".join(fmt_setting(k, v) for k, v in cmp.change.items()) or None,
        "after_change_seconds": round(cmp.after, 3),
        "out_of_brokers": aft["oob"].height,
        "breaker_open_periods": len(aft["periods"]),
        "time_resolution": resolution(inc.coarse),
    }
    return [{"topic_partition": tp, **subj_common} for tp in inc.tps]


def _evidence(inc: Incident, t: Timing, cmp: Comparison, aft: dict) -> list:
    """The lines that show the stall: its start, the first wait of each kind, its end, the breaker, the recovery."""
    path, pre, body, stall_rows, all_rows, unseen, inside = inc.path, inc.pre, inc.body, inc.stall_rows, inc.body, inc.unseen, inc.inside
    ended_by, waits, skipped, deadline, periods, recovered = inc.ended_by, t.waits, t.skipped, cmp.deadline, aft["periods"], aft["recovered"]
    ev: list = []

    def add(r: dict | None, note: str) -> None:
        if r is None or any((e.path, e.line) == (r.get("file") or path, r["line"]) for e in ev):
            return
        ev.append(evidence({"path": path, "file": r.get("file"), "line": r["line"], "raw": r.get("raw"), "ts": r.get("ts")}, note))

    add(stall_rows[0] if pre is not None and not skipped and not inside else None, "last line before the failure chain" if not unseen else "the application's last line before the error")
    add(body[0] if not unseen else None, "the log begins inside the failure chain" if inside else "the chain begins")
    add(next((w[2] for w in waits if w[0] in PRODUCE_TIMEOUTS), None), "produce request timed out")
    add(next((w[2] for w in waits if w[0] in ("metadata_read_timeout", "metadata_write_timeout")), None), "metadata request timed out")
    dial_rows = [w[2] for w in waits if w[0] in ("dial_timeout", "dial_refused")]
    add(dial_rows[0] if dial_rows else None, "first failed dial")
    add(next((r for r in stall_rows if _has(r, "sarama_metadata_retry")), None), "metadata back-off")
    add(deadline["row"] if deadline else None, "metadata refresh stopped at Metadata.Timeout")
    add(dial_rows[-1] if len(dial_rows) > 1 else None, "last failed dial")
    add(stall_rows[-1], {"error": "error returned to the application", "recovery": "recovery", "end of the log": "end of the log"}[ended_by])
    if periods:
        add(next((r for r in all_rows if r["line"] == periods[0]["line"] and r.get("file") == periods[0].get("file", r.get("file"))), None), "circuit breaker open")
    if recovered:
        add(recovered[0], "first successful line after the incident")
    return ev


def _finding(inc: Incident, t: Timing, cmp: Comparison, aft: dict, conf: float, reasons: list[str]) -> Finding:
    """The finding, with its text, evidence and details, from the stages' results."""
    path, kind, several, delivered, deadline, figure = inc.path, inc.kind, inc.several, inc.delivered, cmp.deadline, inc.figure
    unseen, inside, shape, seen_brokers, cadence = inc.unseen, inc.inside, inc.shape, inc.seen_brokers, t.cadence
    send_observed, dom_key, dom_s, model_now, formula, cut, fits = cmp.send_observed, cmp.dom_key, cmp.dom_s, cmp.model_now, cmp.formula, cmp.cut, cmp.fits
    given, eff, inferred, mismatches, notes, what_if = cmp.given, cmp.eff, cmp.inferred, cmp.mismatches, cmp.notes, cmp.what_if
    change, after, send_span, with_given = cmp.change, cmp.after, cmp.send_span, cmp.with_given
    periods, oob, later, longest_next, recovered_at = aft["periods"], aft["oob"], aft["later"], aft["longest_next"], aft["recovered_at"]
    return Finding(
        id=ID,
        severity=severity(t.stall, periods),
        title=title(inc, t),
        root_cause=root_cause(inc, t, cmp, aft),
        confidence=conf,
        confidence_reasons=reasons,
        first_seen=t.t_from,
        last_seen=recovered_at or inc.body[-1]["ts"],
        subjects=_subjects(inc, t, cmp, aft),
        cause={
            "kind": kind,
            "broker": inc.broker,
            "node": inc.node,
            "error": inc.first_error,
            "explanation": KIND_TEXT[kind],
            "dominant_setting": dom_key,
        },
        evidence=_evidence(inc, t, cmp, aft),
        remediation=remediation(inc, t, cmp, aft["longest_next"]),
        references=["docs/findings/sarama.retry-redial-stall.md", "sarama async_producer.go (retryMessage, updateLeader), client.go (tryRefreshMetadata)"],
        ruled_out=ruled_out(inc, t, cmp),
        details={
            "budget": cmp.budget,
            "inferred": inferred,
            "config": {"given": given, "used_for_model": eff, "mismatches": mismatches, "notes": notes, "what_if": what_if},
            "model": {
                "kind": kind,
                "formula": formula,
                "shape": shape,
                "seconds": None if several else round(model_now, 3),
                "applies": not several,
                "assumes": "sarama 1.22.1, one broker that is also the seed (../shared/reference/sarama-timing.md)",
                "brokers_seen": {k: v for k, v in seen_brokers.items() if k != "several"},
                "metadata_refresh_cut": cut,
                "observed_send_seconds": round(send_observed, 3) if send_observed is not None else None,
                "observed_from": None if send_observed is None else "application figure" if figure is not None else "log stamps",
                "fits": fits,
                "dominant_setting": dom_key,
                "dominant_seconds": round(dom_s, 3),
                "dominant_from": "the log's waits" if several else "the model",
            },
            "suggestion": {
                "change": change,
                "worst_case_seconds": round(after, 3),
                "worst_case_from": "the waits this log shows, each shorter" if several else "the model",
                "now_seconds": round(send_span if several else model_now, 3),
                "with_given_config_seconds": round(with_given, 3) if with_given is not None else None,
            },
            "sarama_logger": "off" if unseen else "on",
            "log_starts_inside_chain": inside,
            "delivered_by_retry": {"retry": delivered["retry"], "line": delivered["row"]["line"], "selected_broker": delivered["node"]} if delivered else None,
            "application_figure_seconds": figure,
            "metadata_deadline": {k: v for k, v in deadline.items() if k != "row"} | {"line": deadline["row"]["line"]}
            | ({"file": segment_of(deadline["row"] | {"path": path})} if segment_of(deadline["row"] | {"path": path}) else {}) if deadline else None,
            "breaker_open": periods,
            "out_of_brokers": {"returned": oob.height, "first": oob["ts"][0] if oob.height else None},
            "later_failures": later[:50],
            "longest_wait_between_errors_seconds": longest_next,
            "recovered_at": recovered_at,
            "application_send_interval_seconds": cadence,
        },
    )


def run(ctx: Context) -> list[Finding]:
    ev = ctx.events
    if ev.height == 0 or "system" not in ev.columns:
        return []
    sar = ev.filter(pl.col("system") == "sarama")
    if sar.height == 0:
        return []
    # files with a failure chain of sarama's, or (sarama's Logger off) with an error sarama handed back
    paths = sar.filter(pl.col("event").is_in(list(CHAIN_EVENTS | ERROR_TEXT_EVENTS)))["path"].unique(maintain_order=True).to_list()
    findings: list[Finding] = []
    for path in paths:
        df = _lines(ctx, path, sar.filter(pl.col("path") == path))
        unseen = not df["sarama_line"].any()  # none of sarama's own lines: its Logger was off
        for seg_first, seg_last in _incidents(df, unseen):
            for first, last in _split_on_success(df, seg_first, seg_last):
                if df.slice(first, last - first + 1).filter(pl.col("chain") & (pl.col("internal") | unseen)).height == 0:
                    continue
                f = _analyse(ctx, path, df, first, last, unseen)
                if f is not None:
                    # the broker's own logs, when given: why that broker went away (kafka/broker.py)
                    link_episode(ctx, {"node": f.cause.get("node"), "from": f.first_seen, "to": f.last_seen, "address": f.cause.get("broker")}, f)
                    findings.append(f)
    return findings


DETECTOR = Detector(
    id=ID,
    title="sarama retry/re-dial stall: where a failing send's time went",
    systems=("sarama",),
    run=run,
    doc="docs/findings/sarama.retry-redial-stall.md",
)
