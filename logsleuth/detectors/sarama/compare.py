"""One sarama incident compared with the measured timing model and with the configuration the user
passed (``--sarama-config``, or sarama's defaults), for sarama.retry-redial-stall (``compare``): the
settings the log shows (``settings_in_log``), the model's prediction for the failing send and
whether it fits, a passed configuration that was a what-if, the change worth making and what it
would give, and the mismatches and notes between the log and the configuration.
"""

from __future__ import annotations

from dataclasses import dataclass

from logsleuth.detectors.sarama.budget import Timing, budget_table
from logsleuth.detectors.sarama.chain import _has
from logsleuth.detectors.sarama.incident import Incident
from logsleuth.detectors.sarama.model import dominant, model_formula, model_parts, model_seconds, suggest
from logsleuth.detectors.sarama.format import fmt_s, fmt_setting
from logsleuth.detectors.sarama.waits import PRODUCE_TIMEOUTS, _deadline_fits, _metadata_deadline, _typical
from logsleuth.detectors.base import line_ref
from logsleuth.detectors.sarama.config import DEFAULTS, DURATIONS


@dataclass
class Comparison:
    """The incident against the model and the configuration. ``cfg``: the configuration passed (or
    the defaults), ``given``: the keys the user passed, ``eff``: the values the model uses."""

    given: list[str]
    cfg: dict
    eff: dict
    inferred: dict[str, dict]
    deadline: dict | None  # what the log shows of Metadata.Timeout
    budget: list[dict]
    send_observed: float | None
    model_now: float
    fits: bool
    what_if: dict | None
    cut: bool  # the model's metadata refresh is cut at Metadata.Timeout
    change: dict
    after: float
    after_formula: str
    with_given: float | None
    dom_key: str
    dom_s: float
    formula: str
    send_span: float  # what the log shows of the send itself
    mismatches: list[str]
    notes: list[str]

    @property
    def by(self) -> dict[str, dict]:
        """The budget rows by component."""
        return {b["component"]: b for b in self.budget}

    @property
    def defaults_stand_in(self) -> bool:
        """sarama's defaults fit the log where the configuration passed does not: the model uses them."""
        return bool(self.what_if and self.what_if["defaults_fit"])


def deadline_tolerance(coarse: bool) -> float:
    """How far a Metadata.Timeout may be from where the log shows the refresh stopped (stamp rounding)."""
    return 1.0 if coarse else 0.05


def settings_in_log(inc: Incident, t: Timing, cfg: dict) -> tuple[dict, dict[str, dict], dict | None]:
    """The settings the log shows, as (the values for the model: ``cfg`` with the inferred ones,
    {key: {"value", "from"}} of the inferred ones, what the log shows of Metadata.Timeout)."""
    kind, coarse, waits, all_rows = inc.kind, inc.coarse, t.waits, inc.body
    read_t, write_t = t.read_t, t.write_t
    rb_gaps = [g for c, g, _ in waits if c == "retry_backoff"]
    md_max = max((r["attempts_left"] for r in all_rows if _has(r, "sarama_metadata_retry") and r.get("attempts_left") is not None), default=None)
    retry_levels = [r["retry"] for r in all_rows if _has(r, "sarama_leader_retrying") and r.get("retry") is not None]
    produce_timeouts = sum(1 for c, _, _ in waits if c in PRODUCE_TIMEOUTS)
    eff = dict(cfg)
    inferred: dict[str, dict] = {}

    def infer(key: str, value, source: str) -> None:
        if value is None or source.startswith("sarama's default"):
            return
        inferred[key] = {"value": value, "from": source}
        eff[key] = value

    infer("Net.DialTimeout", t.dial_t, f"{len(t.dial_gaps)} dial timeout {'gap' if len(t.dial_gaps) == 1 else 'gaps'}")
    infer("Net.ReadTimeout", round(read_t, 3) if read_t is not None else None, t.read_source or "")
    infer("Net.WriteTimeout", round(write_t, 3) if write_t is not None else None, t.write_source or "")
    infer("Metadata.Retry.Backoff", t.md_backoff_t, "'retrying after Nms' lines")
    infer("Metadata.Retry.Max", md_max, "the first '(N attempts remaining)'")
    if rb_gaps and not coarse:
        infer("Producer.Retry.Backoff", _typical(rb_gaps, False), f"{len(rb_gaps)} retry back-off {'gap' if len(rb_gaps) == 1 else 'gaps'}")
    if kind == "silent" and inc.ended_by == "error" and produce_timeouts:
        infer("Producer.Retry.Max", produce_timeouts - 1, "read timeouts before the error, minus one")
    elif retry_levels and int(eff["Producer.Retry.Max"]) < max(retry_levels):
        infer("Producer.Retry.Max", max(retry_levels), "the highest [retrying-N]")
    elif kind in ("blackhole", "refused") and retry_levels and int(eff["Producer.Retry.Max"]) == 0:
        infer("Producer.Retry.Max", max(retry_levels), "the highest [retrying-N]")
    deadline = _metadata_deadline(inc.stall_rows, float(eff["Metadata.Retry.Backoff"]), coarse)
    if deadline is not None:
        c_md = float(cfg["Metadata.Timeout"])
        inferred["Metadata.Timeout"] = {
            "value": deadline["upper"],
            "range": [deadline["lower"], deadline["upper"]],
            "from": f"{line_ref(deadline['row'] | {'path': inc.path})}, '{deadline['text']}' {fmt_s(deadline['elapsed'], coarse)} into the metadata refresh",
        }
        if not _deadline_fits(c_md, deadline, deadline_tolerance(coarse)):
            eff["Metadata.Timeout"] = deadline["model_value"]
    return eff, inferred, deadline


def _observed(inc: Incident, t: Timing) -> float | None:
    """The failing send as observed: the application's own figure, else the stall (which runs from the
    write of the stalled request); None when no error ended it, or the log begins inside it unmeasured."""
    if inc.ended_by != "error" or (inc.inside and inc.figure is None):
        return None
    if inc.figure is not None:
        return inc.figure  # the application measured the failing send itself
    return max(0.0, t.stall)


def _tolerance(inc: Incident, m: float) -> float:
    return 1.5 if inc.coarse and inc.figure is None else max(0.1, 0.02 * m)


def _what_if(inc: Incident, given: list[str], cfg: dict, eff: dict, model_now: float, send_observed: float) -> tuple[dict, dict] | None:
    """Values the user passed (often a what-if: "what if Net.DialTimeout were 5s?") that the log could
    not contradict line by line (sarama's Logger off, or no such wait in the chain) but whose model
    cannot give the observed send: they were not in use. As (what_if, the values with sarama's
    defaults for them), or None when no passed value is such."""
    kind, shape = inc.kind, inc.shape
    as_passed = [k for k in given if abs(float(eff[k]) - float(cfg[k])) <= 1e-9 and abs(float(cfg[k]) - float(DEFAULTS[k])) > 1e-9]
    if not as_passed:
        return None
    alt = dict(eff, **{k: DEFAULTS[k] for k in as_passed})
    alt_s = model_seconds(kind, alt, shape)
    what_if = {
        "passed": {k: cfg[k] for k in as_passed},
        "model_seconds": round(model_now, 3),
        "observed_seconds": round(send_observed, 3),
        "defaults_model_seconds": round(alt_s, 3),
        "defaults_fit": abs(send_observed - alt_s) <= _tolerance(inc, alt_s),
    }
    return what_if, alt


def _from_the_waits(budget: list[dict], change: dict, send_span: float, dom: tuple[str, float]) -> tuple[dict, float, str, str, float]:
    """Several brokers, no model: the share of each setting and the effect of a change come from the
    waits the log shows (the same waits, each shorter); a count (Metadata.Retry.Max,
    Producer.Retry.Max) is not estimated. As (change, after, after_formula, dom_key, dom_s)."""
    change = {k: v for k, v in change.items() if k in DURATIONS and any(b["setting"] == k for b in budget)}
    saved = sum(
        b["count"] * max(0.0, float(b["each_seconds"]) - float(change[b["setting"]]))
        for b in budget if b["setting"] in change and b["each_seconds"] is not None
    )
    after = max(0.0, send_span - saved)
    after_formula = "the same waits, each shorter; with several brokers the count of waits may differ"
    dom_key, dom_s = dom
    shares = [b for b in budget if b["setting"]]
    if shares:
        top = max(shares, key=lambda b: b["estimated_seconds"])
        dom_key, dom_s = top["setting"], top["estimated_seconds"]
    return change, after, after_formula, dom_key, dom_s


def _differences(inc: Incident, inferred: dict, cfg: dict, given: list[str], deadline: dict | None) -> tuple[list[str], list[str]]:
    """What the log shows against the configuration: (mismatches with values the user passed, notes
    on sarama's defaults)."""
    kind, coarse = inc.kind, inc.coarse
    mismatches: list[str] = []
    notes: list[str] = []
    for key, inf in inferred.items():
        v, c = float(inf["value"]), float(cfg[key])
        if key == "Metadata.Timeout":
            hi = inf["range"][1]
            assert deadline is not None, "Metadata.Timeout is inferred only from the deadline the log shows (settings_in_log)"
            if _deadline_fits(c, deadline, deadline_tolerance(coarse)):
                continue
            if key in given:
                mismatches.append(f"you passed {fmt_setting(key, c)}, but this log shows Metadata.Timeout ≤ {hi:g} s ({inf['from']}): the client that wrote it did not use that value")
            else:
                notes.append(f"Metadata.Timeout ≤ {hi:g} s in this log ({inf['from']}; sarama's default is 0: no limit)")
            continue
        close_enough = abs(v - c) <= (1.0 + 0.05 * c if coarse else max(0.05, 0.05 * c))
        if key == "Producer.Retry.Max" and kind != "silent":
            close_enough = close_enough or (v >= 1 and c >= 1)
        if close_enough:
            continue
        shown = fmt_setting(key, v).split("=", 1)[1]
        if key in given:
            mismatches.append(
                f"you passed {fmt_setting(key, c)}, but this log shows ≈{shown} ({inf['from']}): the client that wrote it did not use that value"
            )
        else:
            notes.append(f"{key} ≈{shown} in this log (sarama's default is {fmt_setting(key, c).split('=', 1)[1]})")
    return mismatches, notes


def _what_if_line(inc: Incident, what_if: dict, send_observed: float | None) -> str:
    figure = inc.figure
    seen_wi = f"the application measured {figure:.2f} s" if figure is not None else f"the log shows {fmt_s(send_observed, inc.coarse)}"
    return (
        f"you passed {', '.join(fmt_setting(k, v) for k, v in what_if['passed'].items())}; with it the model predicts "
        f"{what_if['model_seconds']:.2f} s for the failing send, but {seen_wi}: the client that wrote this log probably used "
        f"a different configuration (sarama's defaults predict {what_if['defaults_model_seconds']:.2f} s"
        + (", which fits)" if what_if["defaults_fit"] else ")")
    )


def compare(inc: Incident, t: Timing, given_cfg: dict | None) -> Comparison:
    """The incident's waits against the model and ``given_cfg`` (the parsed --sarama-config; None:
    sarama's defaults)."""
    kind, several, shape = inc.kind, inc.several, inc.shape
    given_cfg = given_cfg or dict(DEFAULTS, _given=[])
    given = list(given_cfg.get("_given", []))
    cfg = {k: given_cfg[k] for k in DEFAULTS}
    eff, inferred, deadline = settings_in_log(inc, t, cfg)
    budget = budget_table(t, eff["Producer.Retry.Backoff"])

    # ---- model, comparison, suggestion
    send_observed = _observed(inc, t)
    parts_now = model_parts(kind, eff, shape)
    model_now = parts_now["seconds"]
    fits = not several and send_observed is not None and abs(send_observed - model_now) <= _tolerance(inc, model_now)
    # a passed configuration the observed send rules out was not in use: say so, and let sarama's
    # defaults stand in for it when those fit the log
    what_if = None
    if given and not several and send_observed is not None and not fits:
        found = _what_if(inc, given, cfg, eff, model_now, send_observed)
        if found is not None:
            what_if, alt = found
            if what_if["defaults_fit"]:
                eff = alt
                parts_now = model_parts(kind, eff, shape)
                model_now = parts_now["seconds"]
                fits = True
    cut = bool(parts_now["refresh"] and parts_now["refresh"]["cut"])
    change = suggest(kind, eff, shape)
    after_cfg = dict(eff, **change)
    after_parts = model_parts(kind, after_cfg, shape)
    after = after_parts["seconds"]
    after_formula = model_formula(kind, int(after_cfg["Producer.Retry.Max"]), shape, bool(after_parts["refresh"] and after_parts["refresh"]["cut"]))
    # what the configuration the user passed would give, were it in effect (inferred values for the rest)
    as_given = dict(eff, **{k: cfg[k] for k in given})
    with_given = model_seconds(kind, as_given, shape) if given and not several else None
    dom_key, dom_s = dominant(kind, eff, shape)
    formula = model_formula(kind, int(eff["Producer.Retry.Max"]), shape, cut)
    send_span = max(0.0, t.stall - (t.before_log or 0.0))  # what the log shows of the send itself
    if several:
        change, after, after_formula, dom_key, dom_s = _from_the_waits(budget, change, send_span, (dom_key, dom_s))
    mismatches, notes = _differences(inc, inferred, cfg, given, deadline)
    if what_if:
        mismatches.append(_what_if_line(inc, what_if, send_observed))
    return Comparison(
        given=given, cfg=cfg, eff=eff, inferred=inferred, deadline=deadline, budget=budget,
        send_observed=send_observed, model_now=model_now, fits=fits, what_if=what_if, cut=cut, change=change,
        after=after, after_formula=after_formula, with_given=with_given, dom_key=dom_key, dom_s=dom_s,
        formula=formula, send_span=send_span, mismatches=mismatches, notes=notes,
    )
