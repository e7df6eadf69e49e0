"""``sarama.retry-redial-stall``: why sarama sends hung for seconds to minutes, and where the time went.

A sarama producer whose broker stops answering does not fail after ``Net.WriteTimeout``: the
message waits for the produce response (``Net.ReadTimeout``), is retried, and the retry's leader
lookup refreshes metadata and dials the broker again and again (``Net.DialTimeout`` each). With
sarama's Logger on, the client model (client.py) follows every broker's and every partition's state
machine over the whole log and gives one incident per broker failure with the partitions that broker
led: another partition delivering, or ``selected broker N`` on each retry, does not end it. The
stall runs from the write of the stalled request (the ``[closing] because read tcp …`` line minus
``Net.ReadTimeout`` as the application printed it, else as the chain's other timeouts show it, else
sarama's default; the last line before the chain when that would come before it) to the first error
returned to the application for those partitions, else their first delivery again, else their
recovery (``[normal]`` with the leader's connection up), and the finding says which bounds it used.
Every gap between the chain's lines is attributed to a wait (dial, read/write timeout, metadata
back-off, producer retry back-off), the timeout values are inferred from those gaps and compared with
``--sarama-config`` (or sarama's defaults) and with the timing model measured on the real library
(docs/findings/sarama.retry-redial-stall.md, "The timing model (measured)"), which is for one
broker that is also the seed: a chain that names several brokers is read from its gaps alone. Two
kinds are stalls: ``blackhole`` (dials time out) and ``silent`` (a mute broker: read timeouts that
grow with Producer.Retry.Max). A refused or closed broker fails sends in under a second: that is
``sarama.broker-refused`` (refused.py), not a stall. A stall shorter than the verdict's min_stall_s (one line, lines
folded into one record) is none.

With sarama's Logger off (its default) only the application's lines are in the log; they are cut into
incidents by its errors (chain.py) and read by app_only.py.

The parts, one stage each: client.py (the client model), chain.py (the log's records and classes),
incident.py (one incident's lines, kind, broker, partitions), budget.py (where its time went and its
bounds, with waits.py, printed.py and app_only.py), compare.py (the model, model.py, and the
configuration), stallfacts.py (the finding's facts). The verdict (severity, confidence and its
reasons, thresholds) and every sentence are in sarama.retry-redial-stall.toml beside this file,
loaded with the filters of its words by stallverdict.py. This module runs those stages for each incident and assembles the
finding, its subjects, its evidence and its details.
"""

from __future__ import annotations

import polars as pl

from logsleuth.detectors.kafka.broker import link_episode
from logsleuth.detectors.sarama.budget import Timing, measure
from logsleuth.detectors.sarama.chain import (
    CHAIN_EVENTS, ERROR_TEXT_EVENTS, _aftermath, _first_line, _has, _incidents, _split_on_success,
)
from logsleuth.detectors.sarama.client import view
from logsleuth.detectors.sarama.printed import printed_settings
from logsleuth.detectors.sarama.compare import Comparison, compare
from logsleuth.detectors.sarama.format import fmt_setting
from logsleuth.detectors.sarama.incident import Incident, read_episode, read_incident
from logsleuth.detectors.sarama.stallfacts import StallFacts, stall_facts
from logsleuth.detectors.sarama.stallverdict import VERDICT
from logsleuth.detectors.sarama.waits import PRODUCE_TIMEOUTS
from logsleuth.detectors.base import Context, Detector, evidence, segment_of
from logsleuth.detectors.finding import Finding

ID = VERDICT.id


# ----------------------------------------------------------------------------- one incident


def _files(path: str, **rows: dict) -> dict:
    """{key: file} for the rows that are in a segment of a rotated log other than its path."""
    return {k: segment_of(r | {"path": path}) for k, r in rows.items() if segment_of(r | {"path": path})}



def _analyse(ctx: Context, df: pl.DataFrame, inc: Incident | None) -> Finding | None:
    """One incident as a finding; None when it is no stall (a fast failure is sarama.broker-refused's,
    and one below the verdict's minimum, such as one line folded out of a log, is none)."""
    if inc is None or (inc.kind == "refused" and not inc.unseen):
        return None
    t = measure(inc, df, printed_settings(df, inc.body[0]["idx"]) if not inc.unseen else {})
    if t is None:
        return None
    cmp = compare(inc, t, ctx.options.get("sarama_config"))
    # breaker periods, out-of-brokers, later failures and recovery, over the whole incident
    last = inc.body[-1]["idx"]
    aft = _aftermath(df, inc.seg, inc.body, last, inc.delivery_row if inc.episode is not None else None)
    f = stall_facts(inc, t, cmp, aft)
    if not VERDICT.meets_minimum(f):
        return None
    return _finding(f, inc, t, cmp, aft)


def _subjects(inc: Incident, t: Timing, cmp: Comparison, aft: dict, start_from: str) -> list[dict]:
    """One subject per partition, each with the incident's figures (``start_from``: how its start was found, in words)."""
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
        "start_bound": t.start_bound,
        "start_bound_from": start_from,
        "end_bound": inc.end_bound,
        "broker_node": inc.episode.broker.node if inc.episode is not None else inc.node,
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
        "time_resolution": "1 s (log.LstdFlags)" if inc.coarse else "sub-second",
    }
    # the errors returned to the application over the whole incident, per partition when the lines name it
    errs = [r for r in inc.body if r.get("app_error")]
    per_tp = {tp: sum(1 for r in errs if r.get("app_partition") is not None and tp.rpartition("/")[2].rpartition(" ")[2] == str(r["app_partition"])
                      and (r.get("app_topic") is None or r["app_topic"] == tp.rpartition("/")[0])) for tp in inc.tps}
    unnamed = len(errs) - sum(per_tp.values())
    return [{"topic_partition": tp, **subj_common, "errors_returned": per_tp[tp] + (unnamed if len(inc.tps) == 1 else 0)} for tp in inc.tps]


def _evidence(inc: Incident, t: Timing, cmp: Comparison, aft: dict, f: StallFacts) -> list:
    """The lines that show the stall: its start, the first wait of each kind, its end, the breaker, the recovery."""
    path, pre, body, stall_rows, unseen, inside = inc.path, inc.pre, inc.body, inc.stall_rows, inc.unseen, inc.inside
    waits, skipped, deadline, periods, recovered = t.waits, t.skipped, cmp.deadline, aft["periods"], aft["recovered"]
    ev: list = []

    def add(r: dict | None, note: str) -> None:
        if r is None or any((e.path, e.line) == (r.get("file") or path, r["line"]) for e in ev):
            return
        ev.append(evidence({"path": path, "file": r.get("file"), "line": r["line"], "raw": r.get("raw"), "ts": r.get("ts")}, VERDICT.note(note, f)))

    add(stall_rows[0] if pre is not None and not skipped and not inside else None, "before" if not unseen else "before_app")
    add(body[0] if not unseen else None, "inside" if inside else "begins")
    add(next((w[2] for w in waits if w[0] in PRODUCE_TIMEOUTS), None), "produce_timeout")
    add(next((w[2] for w in waits if w[0] in ("metadata_read_timeout", "metadata_write_timeout")), None), "metadata_timeout")
    dial_rows = [w[2] for w in waits if w[0] in ("dial_timeout", "dial_refused")]
    add(dial_rows[0] if dial_rows else None, "first_dial")
    add(next((r for r in stall_rows if _has(r, "sarama_metadata_retry")), None), "md_backoff")
    add(deadline["row"] if deadline else None, "deadline")
    add(dial_rows[-1] if len(dial_rows) > 1 else None, "last_dial")
    add(stall_rows[-1], {"error": "end_error", "recovery": "end_recovery", "end of the log": "end_log"}[inc.ended_by])
    if periods:
        add(next((r for r in body if r["line"] == periods[0]["line"] and r.get("file") == periods[0].get("file", r.get("file"))), None), "breaker")
    if recovered:
        add(recovered[0], "recovered")
    return ev


def _details(inc: Incident, t: Timing, cmp: Comparison, aft: dict, start_from: str) -> dict:
    """The finding's details (JSON): the budget, what was inferred, the configuration, the model and
    the suggestion, and the incident's bounds and aftermath."""
    path, kind, several, delivered, deadline, figure = inc.path, inc.kind, inc.several, inc.delivered, cmp.deadline, inc.figure
    send_observed, model_now = cmp.send_observed, cmp.model_now
    periods, oob = aft["periods"], aft["oob"]
    return {
        "budget": cmp.budget,
        "inferred": cmp.inferred,
        "config": {"given": cmp.given, "used_for_model": cmp.eff, "mismatches": cmp.mismatches, "notes": cmp.notes, "what_if": cmp.what_if},
        "model": {
            "kind": kind,
            "formula": cmp.formula,
            "shape": inc.shape,
            "seconds": None if several else round(model_now, 3),
            "applies": not several,
            "assumes": "sarama 1.22.1, one broker that is also the seed (the measured timing model: docs/findings/sarama.retry-redial-stall.md)",
            "brokers_seen": {k: v for k, v in inc.seen_brokers.items() if k != "several"},
            "metadata_refresh_cut": cmp.cut,
            "observed_send_seconds": round(send_observed, 3) if send_observed is not None else None,
            "observed_from": None if send_observed is None else "application figure" if figure is not None else "log stamps",
            "fits": cmp.fits,
            "dominant_setting": cmp.dom_key,
            "dominant_seconds": round(cmp.dom_s, 3),
            "dominant_from": "the log's waits" if several else "the model",
        },
        "suggestion": {
            "change": cmp.change,
            "worst_case_seconds": round(cmp.after, 3),
            "worst_case_from": "the waits this log shows, each shorter" if several else "the model",
            "now_seconds": round(cmp.send_span if several else model_now, 3),
            "with_given_config_seconds": round(cmp.with_given, 3) if cmp.with_given is not None else None,
        },
        "sarama_logger": "off" if inc.unseen else "on",
        "log_starts_inside_chain": inc.inside,
        "delivered_by_retry": {"retry": delivered["retry"], "line": delivered["row"]["line"], "selected_broker": delivered["node"]} if delivered else None,
        "application_figure_seconds": figure,
        "metadata_deadline": {k: v for k, v in deadline.items() if k != "row"} | {"line": deadline["row"]["line"]}
        | ({"file": segment_of(deadline["row"] | {"path": path})} if segment_of(deadline["row"] | {"path": path}) else {}) if deadline else None,
        "breaker_open": periods,
        "errors_returned": sum(1 for r in inc.body if r.get("app_error")),
        "out_of_brokers": {"returned": oob.height, "first": oob["ts"][0] if oob.height else None},
        "later_failures": aft["later"][:50],
        "longest_wait_between_errors_seconds": aft["longest_next"],
        "recovered_at": aft["recovered_at"],
        "application_send_interval_seconds": t.cadence,
        "bounds": {
            "start": t.t_from, "start_bound": t.start_bound, "start_from": start_from,
            "end": t.t_to, "end_bound": inc.end_bound,
            "delivery_latency_seconds": round(inc.delivery_latency, 3) if inc.delivery_latency is not None else None,
        },
        "broker_state": inc.episode.state() if inc.episode is not None else None,
    }


def _finding(f: StallFacts, inc: Incident, t: Timing, cmp: Comparison, aft: dict) -> Finding:
    """The finding: the verdict's parts from the facts, and its subjects, evidence and details."""
    start_from = VERDICT.phrase("start_from", f).render()  # no time in it: JSON keeps it as a string
    return Finding(
        **VERDICT.parts(f),
        first_seen=t.t_from,
        start_estimated=t.start_estimated,
        last_seen=aft["recovered_at"] or inc.body[-1]["ts"],
        subjects=_subjects(inc, t, cmp, aft, start_from),
        cause={
            "kind": inc.kind,
            "broker": inc.broker,
            "node": inc.node,
            "error": inc.first_error,
            "explanation": VERDICT.phrase("kind_text", f).render(),
            "dominant_setting": cmp.dom_key,
        },
        evidence=_evidence(inc, t, cmp, aft, f),
        details=_details(inc, t, cmp, aft, start_from),
    )


def _note_folded(ctx: Context, path: str, eps: list) -> None:
    """Say so when sarama's failure lines were folded into other records: no stall is timed from them."""
    folded = [e for e in eps if e.folded]
    rep = ctx.input(path)
    if folded and rep is not None:
        rep.stats.note(
            "sarama's failure lines are folded into other records (their prefix is one the layout does not know, so their own "
            "time stamps are lost): no sarama stall is timed from them; give the layout with --layout-pattern"
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
        df, eps = view(ctx, path, sar.filter(pl.col("path") == path))
        if df["sarama_line"].any():
            # the client model: one incident per broker failure and the partitions it led
            _note_folded(ctx, path, eps)
            for ep in eps:
                f = _analyse(ctx, df, read_episode(path, df, ep))
                if f is not None:
                    _broker_side(ctx, f)
                    findings.append(f)
            continue
        # sarama's Logger off: the application's lines alone, cut into incidents by its errors
        for seg_first, seg_last in _incidents(df, True):
            for first, last in _split_on_success(df, seg_first, seg_last):
                if df.slice(first, last - first + 1).filter(pl.col("chain")).height == 0:
                    continue
                f = _analyse(ctx, df, read_incident(path, df, first, last, True))
                if f is not None:
                    _broker_side(ctx, f)
                    findings.append(f)
    return findings


def _broker_side(ctx: Context, f: Finding) -> None:
    """The broker's own logs, when given: why that broker went away (kafka/broker.py)."""
    if f.cause is None:
        return  # no cause: no broker named (_finding always names one)
    link_episode(ctx, {"node": f.cause.get("node"), "from": f.first_seen, "to": f.last_seen, "address": f.cause.get("broker")}, f)


DETECTOR = Detector(id=VERDICT.id, title=VERDICT.title, systems=("sarama",), run=run, doc=VERDICT.doc, facts=StallFacts, verdict=VERDICT)
