"""How sure and how severe a sarama.retry-redial-stall finding is: the confidence with its reasons
(``confidence``: how the stall was read, whether the model fits, what is unexplained) and the
severity (``severity``).
"""

from __future__ import annotations

from logsleuth.detectors.sarama.budget import Timing
from logsleuth.detectors.sarama.chain import _first_line, _seconds
from logsleuth.detectors.sarama.compare import Comparison
from logsleuth.detectors.sarama.format import fmt_s
from logsleuth.detectors.sarama.incident import Incident
from logsleuth.detectors.sarama.text import _brokers_text, end_text, figure_text, resolution
from logsleuth.detectors.base import line_ref, safe


def confidence(inc: Incident, t: Timing, cmp: Comparison) -> tuple[float, list[str]]:
    """The confidence in the diagnosis, and the reasons that raised or lowered it."""
    path, kind, coarse, figure, unseen, inside, several = inc.path, inc.kind, inc.coarse, inc.figure, inc.unseen, inc.inside, inc.several
    stall_rows, pre, err_row, body, ended_by, seen_brokers = inc.stall_rows, inc.pre, inc.err_row, inc.body, inc.ended_by, inc.seen_brokers
    stall, skipped, pre_gap, before_log, cadence = t.stall, t.skipped, t.pre_gap, t.before_log, t.cadence
    fits, what_if, send_observed, model_now, defaults_stand_in = cmp.fits, cmp.what_if, cmp.send_observed, cmp.model_now, cmp.defaults_stand_in
    res = resolution(coarse)
    fig_txt = figure_text(figure)
    end_txt = end_text(inc)
    by = cmp.by
    reasons = [f"{len(stall_rows)} lines from {safe(path)}, stamped to {res}"]
    conf = 0.6
    if unseen:
        conf = 0.35
        reasons.append(
            "none of sarama's own lines are in this file (sarama.Logger discards them by default): the stall is read from the "
            "application's lines alone"
            + (f" (its own figure, {fig_txt}, and the {fmt_s(_seconds(pre['ts'], err_row['ts']), coarse)} gap before the error)" if fig_txt else
               f" (a {fmt_s(_seconds(pre['ts'], err_row['ts']), coarse)} gap before the error, against a send every {fmt_s(cadence)})")
            + ", and the kind from the returned error"
        )
    if skipped:
        reasons.append(
            f"no application line before the chain is known to be about these partitions (the last line that can be, {fmt_s(pre_gap)} earlier, is sarama's own): "
            "the start is estimated as the first line minus its wait"
        )
    if inside:
        first_txt = safe(_first_line(body[0]["msg"]))
        if before_log is not None:
            conf -= 0.05
            reasons.append(
                f"the log starts inside the failure chain (its first chain line, {line_ref(body[0] | {'path': path})} '{first_txt}', is already part of it): "
                f"the {fmt_s(before_log)} before it are taken from the application's own figure ({fig_txt}), so the start is estimated"
            )
        else:
            conf -= 0.1
            reasons.append(
                f"the log starts inside the failure chain (its first chain line, {line_ref(body[0] | {'path': path})} '{first_txt}', is already part of it) and "
                "the application logged no duration: the stall is at least what the log shows, and the failing send cannot be compared with the model"
            )
    if several:
        # no model comparison either way: the diagnosis rests on the waits the log shows
        reasons.append(
            f"the chain names {_brokers_text(seen_brokers)}: the measured timing model assumes one broker that is also the seed, "
            "so it is not compared with this stall; the budget and the values come from the gaps between the log's lines alone"
        )
    elif fits:
        conf += 0.2
        seen = f"the application measured {fig_txt}" if figure is not None else f"the log shows {send_observed:.{0 if coarse else 2}f} s"
        reasons.append(
            f"the measured {kind} model predicts {model_now:.2f} s for the failing send"
            + (" with sarama's defaults" if defaults_stand_in else "") + f", {seen}"
        )
    elif send_observed is not None:
        conf -= 0.1
        seen = f"the application measured {fig_txt}" if figure is not None else f"the log shows {fmt_s(send_observed, coarse)}"
        if what_if:
            reasons.append(
                f"neither the configuration you passed ({what_if['model_seconds']:.2f} s) nor sarama's defaults "
                f"({what_if['defaults_model_seconds']:.2f} s) give the failing send in the measured single-broker model, and {seen}: "
                "other values, several brokers, a newer sarama, or a partial outage change the count of waits"
            )
        else:
            reasons.append(
                f"the measured single-broker model predicts {fmt_s(model_now)} but {seen}: "
                "several brokers, a newer sarama, or a partial outage change the count of waits"
            )
    if what_if and what_if["defaults_fit"]:
        # a what-if the log rules out weighs little on the diagnosis: the stall itself is what the log shows
        conf -= 0.05
        seen = f"the application measured {fig_txt}" if figure is not None else f"the log shows {fmt_s(send_observed, coarse)}"
        reasons.append(
            f"with the configuration you passed the model predicts {what_if['model_seconds']:.2f} s, but {seen}: "
            f"that configuration was probably not the one in use (sarama's defaults predict {what_if['defaults_model_seconds']:.2f} s"
            + (", which fits)" if what_if["defaults_fit"] else ")")
        )
    if ended_by == "error":
        conf += 0.1
        reasons.append("the stall ends at an error returned to the application")
    else:
        reasons.append(f"no error was logged by the application; the stall ends at {end_txt}")
    unexplained = by.get("other", {}).get("seconds", 0.0)
    if stall > 0 and unexplained > max(1.0 if coarse else 0.1, 0.1 * stall):
        conf -= 0.15
        reasons.append(f"{fmt_s(unexplained)} of the stall fall between lines that explain no wait")
    if coarse:
        reasons.append("log.LstdFlags stamps have 1-second resolution: each inferred value is ±1 s")

    return round(conf, 2), reasons


def severity(stall: float, breaker_periods: list[dict]) -> str:
    return "high" if stall >= 60 else "medium" if stall >= 5 or breaker_periods else "low"

