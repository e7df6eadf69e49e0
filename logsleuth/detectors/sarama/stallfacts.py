"""The facts of one sarama.retry-redial-stall finding (``StallFacts``), made from the stages' results:
the incident's lines (incident.py), its time budget and bounds (budget.py), its comparison with the
measured model and the configuration (compare.py) and its aftermath (chain._aftermath). Counts,
flags, names, seconds (``_s``) and datetimes: no sentence is written here and no time is formatted;
sarama.retry-redial-stall.toml grades them and words them.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from logsleuth.detectors.base import line_ref
from logsleuth.detectors.sarama.budget import Timing
from logsleuth.detectors.sarama.chain import _first_line, _has, _seconds
from logsleuth.detectors.sarama.compare import Comparison
from logsleuth.detectors.sarama.incident import Incident


@dataclass
class StallFacts:
    """One stalled send of a sarama client (one broker failure and the partitions it led, or a stretch
    of the application's own lines with sarama's Logger off)."""

    # what stalled, and how it was read
    path: str
    kind: str  # blackhole | refused | silent
    broker: str | None
    tps: list[str]  # topic/partition of the stalled sends
    tps_from: str | None  # "deliveries": inferred from the application's deliveries (no chain line names one)
    unseen: bool  # sarama's Logger was off: the application's lines alone
    inside: bool  # the log begins inside the failure chain
    several: bool  # the chain names several brokers: the one-broker model does not apply
    seen_brokers: dict  # nodes, addresses the chain names
    coarse: bool  # 1-second stamps (log.LstdFlags)
    client_model: bool  # an incident of the client model (sarama's Logger on)
    first_tok: str | None  # the Go net error that ended the first wait ('read tcp', 'dial tcp' …)
    stall_lines: int  # the line before the chain and the chain's lines up to the stall's end
    first_chain_ref: str  # 'line N' of the chain's first line
    first_chain_text: str  # its message's first line
    # the stall's bounds
    stall_s: float
    stall_from: dt.datetime
    stall_to: dt.datetime
    stall_coarse: bool  # the stall is shown in whole seconds (stamped to 1 s and no figure of the application's)
    start_bound: str  # write | application figure | last line before the chain | first line of the chain | estimated
    start_how: dict  # how that bound was found: {"way": …} and its values (budget.py)
    end_bound: str  # error returned | delivery | recovery | end of the log
    ended_by: str  # error | recovery | end of the log
    skipped_s: float  # cut from the start: the line before the chain is an old sarama line
    pre_gap_s: float  # the first gap before it was cut
    before_log_s: float | None  # the part of the failing send before the log's first line
    lead_s: float  # the produce request's wait before the chain's first line, estimated (no line before the chain bounds it)
    pre_error_gap_s: float | None  # Logger off: from the application's last line to the error
    cadence_s: float | None  # the application's send interval before the chain
    delivery_ref: str | None  # 'line N' of the delivery that ends the stall
    delivery_latency_s: float | None  # that delivery's own latency figure
    returned_error: str | None  # the first line of the error returned to the application
    figure_s: float | None  # the application's own measure of the failing send
    # the waits, the model and the configuration
    budget: list[dict]  # compare.Comparison.budget: one row per component
    unexplained_s: float  # stall time between lines that explain no wait
    send_observed_s: float | None
    send_span_s: float  # what the log shows of the send itself
    model_s: float  # the measured model's prediction for the failing send
    formula: str
    fits: bool
    defaults_stand_in: bool  # sarama's defaults fit where the configuration passed does not
    inferred: dict
    given: list[str]
    what_if: dict | None
    deadline: dict | None  # what the log shows of Metadata.Timeout (text, elapsed, upper …)
    cut: bool  # the model's refresh is cut at Metadata.Timeout
    dom_key: str
    dom_s: float
    top_share: dict | None  # several brokers: the budget row of the dominant setting
    change: dict  # the suggested settings
    change_already: dict  # those the user passed that are already short enough, as passed
    after_s: float
    after_formula: str
    with_given_s: float | None
    mismatches: list[str]  # compare.py's lines between the log and the configuration (no time in them)
    dial_s: float | None  # the typical dial wait
    # what followed
    delivered: dict | None  # the retry that got the message through: retry, node, ref, success_ref
    retry_levels: list[int]  # the [retrying-N] levels the chain shows
    periods: list[dict]  # circuit-breaker-open periods: from, to, failed_sends
    out_of_brokers: int
    errors_returned: int
    back_at: dt.datetime | None  # the first successful line after the incident
    longest_next_s: float | None  # the longest wait between two errors that follow

    @property
    def stall_span(self) -> tuple[dt.datetime, dt.datetime]:
        return self.stall_from, self.stall_to

    @property
    def timeout_before(self) -> bool:
        """No line before the chain bounds it: the start is the chain's first line (the produce request
        timing out) minus that timeout, an estimate (budget.py)."""
        return self.start_how.get("way") in ("timeout before", "timeout before gaps")

    @property
    def first_period(self) -> dict | None:
        return self.periods[0] if self.periods else None

    @property
    def retry_first(self) -> int | None:
        return self.retry_levels[0] if self.retry_levels else None

    @property
    def retry_last(self) -> int | None:
        return self.retry_levels[-1] if self.retry_levels else None

    @property
    def time_went(self) -> dict:
        """The budget with what its wording needs (the ``where`` filter)."""
        return {"budget": self.budget, "coarse": self.coarse, "figure": self.figure_s is not None}


def _delivered(inc: Incident) -> dict | None:
    d = inc.delivered
    if not d:
        return None
    return {"retry": d["retry"], "node": d["node"], "ref": line_ref(d["row"] | {"path": inc.path}),
            "success_ref": line_ref(d["success_row"] | {"path": inc.path})}


def _top_share(cmp: Comparison) -> dict | None:
    return next((b for b in cmp.budget if b["setting"] == cmp.dom_key and b["estimated_seconds"] == cmp.dom_s), None)


def _change_already(cmp: Comparison) -> dict:
    return {k: cmp.cfg[k] for k in cmp.change
            if k in cmp.given and float(cmp.cfg[k]) <= float(cmp.change[k]) and abs(float(cmp.cfg[k]) - float(cmp.eff[k])) > 1e-9}


def _bounds(inc: Incident, t: Timing) -> dict:
    """The stall's bounds and how they were found."""
    pre, err = inc.pre, inc.err_row
    return {
        "stall_s": t.stall, "stall_from": t.t_from, "stall_to": t.t_to,
        "stall_coarse": inc.coarse and not (t.before_log is not None or (inc.unseen and t.start_estimated)),
        "start_bound": t.start_bound, "start_how": t.start_how, "end_bound": inc.end_bound, "ended_by": inc.ended_by,
        "skipped_s": t.skipped, "pre_gap_s": t.pre_gap, "before_log_s": t.before_log, "lead_s": t.lead,
        "pre_error_gap_s": _seconds(pre["ts"], err["ts"]) if pre is not None and err is not None else None,
        "cadence_s": t.cadence,
        "delivery_ref": line_ref(inc.delivery_row | {"path": inc.path}) if inc.delivery_row is not None else None,
        "delivery_latency_s": inc.delivery_latency,
        "returned_error": _first_line(err["msg"]) if err else None,
        "figure_s": inc.figure,
    }


def _model(t: Timing, cmp: Comparison) -> dict:
    """The waits against the measured model and the configuration."""
    return {
        "budget": cmp.budget, "unexplained_s": cmp.by.get("other", {}).get("seconds", 0.0),
        "send_observed_s": cmp.send_observed, "send_span_s": cmp.send_span, "model_s": cmp.model_now, "formula": cmp.formula,
        "fits": cmp.fits, "defaults_stand_in": cmp.defaults_stand_in, "inferred": cmp.inferred, "given": cmp.given,
        "what_if": cmp.what_if, "deadline": cmp.deadline, "cut": cmp.cut, "dom_key": cmp.dom_key, "dom_s": cmp.dom_s,
        "top_share": _top_share(cmp), "change": cmp.change, "change_already": _change_already(cmp), "after_s": cmp.after,
        "after_formula": cmp.after_formula, "with_given_s": cmp.with_given, "mismatches": cmp.mismatches, "dial_s": t.dial_t,
    }


def stall_facts(inc: Incident, t: Timing, cmp: Comparison, aft: dict) -> StallFacts:
    """The facts of one incident from the stages' results (``aft``: chain._aftermath)."""
    body = inc.body
    recovered = aft.get("recovered") or []
    return StallFacts(
        path=inc.path, kind=inc.kind, broker=inc.broker, tps=list(inc.tps), tps_from=inc.tps_from, unseen=inc.unseen,
        inside=inc.inside, several=inc.several, seen_brokers=inc.seen_brokers, coarse=inc.coarse,
        client_model=inc.episode is not None, first_tok=inc.first_tok, stall_lines=len(inc.stall_rows),
        first_chain_ref=line_ref(body[0] | {"path": inc.path}), first_chain_text=_first_line(body[0]["msg"]),
        **_bounds(inc, t), **_model(t, cmp),
        delivered=_delivered(inc),
        retry_levels=sorted({int(r["retry"]) for r in body if _has(r, "sarama_leader_retrying") and r.get("retry") is not None}),
        periods=list(aft["periods"]), out_of_brokers=aft["oob"].height,
        errors_returned=sum(1 for r in body if r.get("app_error")),
        back_at=recovered[0]["ts"] if recovered else None, longest_next_s=aft["longest_next"],
    )
