"""The wording of sarama.retry-redial-stall: what each kind of outage is and which first wait an error
text rules out, and the finding's text: the title (``title``), the root cause (``root_cause``), the
remediation (``remediation``) and what the log rules out (``ruled_out``).
"""

from __future__ import annotations

from logsleuth.detectors.sarama.budget import Timing
from logsleuth.detectors.sarama.chain import _first_line, _has
from logsleuth.detectors.sarama.compare import Comparison
from logsleuth.detectors.sarama.format import fmt_s, fmt_setting
from logsleuth.detectors.sarama.incident import Incident
from logsleuth.detectors.base import line_ref, plural, safe

# what the error of the first wait says, and so which wait it was (reference §C.3: "The error text
# ('read tcp' vs 'write tcp' vs 'dial tcp') tells which")
FIRST_WAIT_RULED_OUT = {
    "read tcp": "Net.WriteTimeout as the first wait: the error says 'read tcp', so the produce request was written and the client waited Net.ReadTimeout for the answer (a small produce request does not block on write).",
    "write tcp": "Net.ReadTimeout as the first wait: the error says 'write tcp', so the produce request itself could not be written within Net.WriteTimeout; no answer was awaited yet.",
    "dial tcp": "Net.ReadTimeout and Net.WriteTimeout as the first wait: the error says 'dial tcp', so no connection was open and the first wait was Net.DialTimeout.",
    "connection refused": "a timeout as the first wait: the error says 'connection refused', so the dial failed at once.",
    "EOF": "Net.ReadTimeout and Net.WriteTimeout as the first wait: the error says 'EOF', so the broker closed the connection and no timeout fired.",
    "connection reset": "Net.ReadTimeout and Net.WriteTimeout as the first wait: the error says 'connection reset', so the broker reset the connection and no timeout fired.",
    "broken pipe": "Net.ReadTimeout and Net.WriteTimeout as the first wait: the error says 'broken pipe', so the broker had closed the connection and no timeout fired.",
}
SARAMA_LOGGER_HINT = 'sarama.Logger = log.New(os.Stderr, "[sarama] ", log.LstdFlags)'

KIND_TEXT = {
    "blackhole": (
        "black-holed (packets dropped: the broker neither answers nor refuses), so every dial waited the full "
        "Net.DialTimeout"
    ),
    "refused": (
        "closed (its connections answered EOF and new dials were refused at once), so the send failed fast with "
        "'client has run out of available brokers' after the metadata retries"
    ),
    "silent": (
        "alive but silent (it accepted connections and answered metadata but never answered the produce request), "
        "so every attempt waited the full Net.ReadTimeout and each retry re-sent into the same silence"
    ),
}


def _brokers_text(seen: dict) -> str:
    parts = []
    if seen["addresses"]:
        parts.append(", ".join(safe(a) for a in seen["addresses"]))
    if seen["nodes"]:
        parts.append(("broker id " if len(seen["nodes"]) == 1 else "broker ids ") + ", ".join(str(n) for n in seen["nodes"]))
    return "several brokers (" + "; ".join(parts) + ")"


END_TEXT = {"error": "the first error returned to the application", "recovery": "recovery (the leader back: [normal] or selected broker)", "end of the log": "the end of the log (no error, no recovery)"}
END_BOUND_TEXT = {
    "error returned": "the first error returned to the application",
    "delivery": "the application's first delivery on {tps} again",
    "recovery": "recovery ({tps} [normal] with the leader's connection up)",
    "end of the log": "the end of the log (no error, no delivery, no recovery)",
}


def end_text(inc: Incident) -> str:
    """What ends the stall, in words (with the delivery's line when a delivery ends it)."""
    txt = END_BOUND_TEXT.get(inc.end_bound, END_TEXT[inc.ended_by]).format(tps=_tps_text(inc.tps))
    if inc.end_bound == "delivery" and inc.delivery_row is not None:
        txt += f" ({line_ref(inc.delivery_row | {'path': inc.path})}"
        txt += f", which measured its own wait: {fmt_s(inc.delivery_latency)})" if inc.delivery_latency is not None else ")"
    return txt


def start_text(t: Timing) -> str:
    """Where the stall starts, in words: the write of the stalled request, or the bound that stands in for it."""
    if t.start_bound == "write":
        return f"from the write of the stalled request ({t.start_from})"
    if t.start_bound == "last line before the chain":
        return f"from the last line logged before the failure chain ({t.start_from.removeprefix('the last line before the chain: ')})"
    return "from " + t.start_from


def figure_text(figure: float | None) -> str | None:
    """The application's own figure for the failing send, as shown."""
    return f"{figure:.2f} s" if figure is not None else None


def resolution(coarse: bool) -> str:
    return "1 s (log.LstdFlags)" if coarse else "sub-second"


def _where_time_went(budget: list[dict], coarse: bool, figure: float | None) -> list[str]:
    """The budget table in words, one part per component."""
    parts = []
    for bgt in budget:
        k, n, secs, each = bgt["component"], bgt["count"], bgt["seconds"], bgt["each_seconds"]
        if k == "idle":
            parts.append(f"{fmt_s(secs, coarse)} {bgt['label']}")
        elif k in ("before_log", "unseen"):
            parts.append(f"{fmt_s(secs, coarse and figure is None)} {bgt['label']}")
        elif k == "other":
            if secs >= (1.0 if coarse else 0.05):
                parts.append(f"{fmt_s(secs, coarse)} between other lines")
        elif k == "dial_refused":
            parts.append(f"{plural(n, 'refused dial')} (≈0 s each)")
        elif k == "dial_connected":
            parts.append(f"{plural(n, 'dial')} that connected late ({fmt_s(secs, coarse)}: the broker reachable again)")
        else:
            each_txt = f" of ≈{fmt_s(each, coarse and each >= 1)}" if each is not None else ""
            total = n * each if (coarse and each is not None) else secs
            total_txt = f" ({fmt_s(total, coarse and total >= 1)})" if n > 1 else ""
            parts.append(f"{plural(n, bgt['label'])}{each_txt}{total_txt}")
    return parts


def _stall_text(inc: Incident, t: Timing) -> str:
    return fmt_s(t.stall, inc.coarse and not (t.before_log is not None or (inc.unseen and t.start_estimated)))


def _tps_text(tps: list[str]) -> str:
    return ", ".join(safe(t) for t in tps)


def _broker_text(broker: str | None) -> str:
    return safe(broker) if broker else "the partition leader"


def root_cause(inc: Incident, t: Timing, cmp: Comparison, aft: dict) -> str:
    """The root cause: the stall, where its time went, the model's view and what followed (``aft``:
    the incident's aftermath)."""
    path, kind, coarse, figure, unseen, inside, several = inc.path, inc.kind, inc.coarse, inc.figure, inc.unseen, inc.inside, inc.several
    err_row, first_error, seen_brokers, delivered = inc.err_row, inc.first_error, inc.seen_brokers, inc.delivered
    t_from, t_to, before_log = t.t_from, t.t_to, t.before_log
    what_if, inferred, given, send_observed, deadline = cmp.what_if, cmp.inferred, cmp.given, cmp.send_observed, cmp.deadline
    budget, formula, model_now, cut = cmp.budget, cmp.formula, cmp.model_now, cmp.cut
    change, after, after_formula, dom_key, dom_s, send_span = cmp.change, cmp.after, cmp.after_formula, cmp.dom_key, cmp.dom_s, cmp.send_span
    periods, oob, longest_next = aft["periods"], aft["oob"], aft["longest_next"]
    tp_text = _tps_text(inc.tps)
    b_text = _broker_text(inc.broker)
    fig_txt = figure_text(figure)
    parts = _where_time_went(budget, coarse, figure)
    end_txt = end_text(inc)
    stall_txt = _stall_text(inc, t)
    span = f"{t_from.strftime('%H:%M:%S')} → {t_to.strftime('%H:%M:%S')} UTC"
    if unseen:
        root = (
            f"sarama's SendMessage on {tp_text} stalled {stall_txt} ({span}, {start_text(t) if t.start_bound != 'application figure' else 'from the start of the failing send as the application measured it'} to {end_txt}"
            + (f"; the application measured the send itself: {fig_txt}" if fig_txt else "")
            + f"). sarama's Logger was off (it discards its lines by default), so this log holds only the application's lines and the waits inside the send cannot be broken down. "
            + (f"The failing sends name no partition: {tp_text} {'is the one' if len(inc.tps) == 1 else 'are those'} the application delivered to "
               f"before the stall and not during it. " if inc.tps_from == "deliveries" else "")
            + (
                f"A send that hangs this long and then returns 'client has run out of available brokers' is what a black-holed broker gives "
                f"(packets dropped, so every dial waited the full Net.DialTimeout); a refused or closed broker fails a send in under a second."
                if kind == "blackhole" else
                f"A send that hangs this long and then returns an i/o timeout is what a silent (mute) broker gives: {KIND_TEXT['silent']} "
                f"(a black-holed broker with Producer.Retry.Max=0 returns the same error)."
            )
            + f" Where the time went: {'; '.join(parts) or 'no gaps'}."
        )
    else:
        if inside:
            scope = (
                "from the start of the failing send as the application measured it (the log begins inside the failure chain) to " + end_txt
                if before_log is not None else "from the log's first line, already inside the failure chain, to " + end_txt
            )
        else:
            scope = start_text(t) + " to " + end_txt
        root = (
            f"sarama's {'SendMessage' if len(inc.tps) == 1 else 'sends'} on {tp_text} stalled {'at least ' if inside and before_log is None else ''}{stall_txt} ({span}, {scope}) "
            f"because broker {b_text} was {KIND_TEXT[kind]}. "
            f"Where the time went: {'; '.join(parts) or 'no gaps'}."
        )
    if err_row and not unseen:
        root += f" Returned error: '{safe(_first_line(err_row['msg']))}'."
    elif err_row:
        root += f" Returned error: '{safe(first_error)}'."
    defaults_stand_in = cmp.defaults_stand_in
    values_txt = (
        "with the values in this log" if inferred
        else "with the configuration you passed" if given and not defaults_stand_in
        else "with sarama's defaults"
    )
    if send_observed is None:
        seen_txt = "."
    elif figure is not None:
        seen_txt = f"; the application measured {fig_txt} for the failing send."
    else:
        seen_txt = f"; the log shows {send_observed:.{0 if coarse else 2}f} s{' (±1 s)' if coarse else ''} for the failing send."
    if several:
        root += (
            f" The measured timing model (sarama 1.22.1 with one broker that is also the seed) does not apply here: this chain "
            f"names {_brokers_text(seen_brokers)}, and with several brokers a metadata refresh can be answered by a live broker, "
            f"so the count of waits differs. The figures above are the log's own, not the model's."
        )
    else:
        root += f" The measured model for this kind ({formula}) gives {model_now:.2f} s {values_txt}{seen_txt}"
    if what_if:
        seen_wi = f"the application measured {fig_txt}" if figure is not None else f"the log shows {fmt_s(send_observed, coarse)}"
        root += (
            f" With the configuration you passed ({', '.join(fmt_setting(k, v) for k, v in what_if['passed'].items())}) the model predicts "
            f"{what_if['model_seconds']:.2f} s; {seen_wi}: the configuration in use is probably different "
            + (f"(sarama's defaults predict {what_if['defaults_model_seconds']:.2f} s, which fits, so the model here uses them)."
               if defaults_stand_in else f"(sarama's defaults predict {what_if['defaults_model_seconds']:.2f} s).")
        )
    if deadline is not None:
        root += (
            f" The log shows the metadata refresh stopped at its deadline ('{deadline['text']}', {fmt_s(deadline['elapsed'], coarse)} into it): "
            f"Metadata.Timeout is at most {deadline['upper']:g} s"
            + (", and the model stops the refresh there too." if cut and not several else ".")
        )
    if several:
        top = next((b for b in budget if b["setting"] == dom_key and b["estimated_seconds"] == dom_s), None)
        if top is not None and kind != "refused":
            each_txt = f" of ≈{fmt_s(top['each_seconds'], coarse)}" if top["each_seconds"] is not None else ""
            root += (
                f" The largest share is {dom_key}: {plural(top['count'], top['label'])}{each_txt} "
                f"({fmt_s(top['estimated_seconds'], coarse)} of the {fmt_s(send_span, coarse)} the log shows of the send)."
            )
        elif kind == "refused":
            root += " The failure itself was fast."
    elif kind == "blackhole":
        root += f" The dominant setting is {dom_key} ({fmt_s(dom_s)} of it)."
    elif kind == "silent":
        root += f" The dominant setting is {dom_key} × (Producer.Retry.Max + 1) = {fmt_s(dom_s)}: retries grow the stall."
    else:
        root += " The failure itself was fast."
    if change and several:
        root += (
            f" With {', '.join(fmt_setting(k, v) for k, v in change.items())} the waits this log shows would take ≈{fmt_s(after)} "
            f"instead of ≈{fmt_s(send_span)} ({after_formula})."
        )
    elif change:
        root += f" With {', '.join(fmt_setting(k, v) for k, v in change.items())} a failing send would take ≈{fmt_s(after)} (model)."
    if delivered:
        root += (
            f" No error reached the application: the message went through on retry {delivered['retry']} "
            f"([retrying-{delivered['retry']}], {line_ref(delivered['row'] | {'path': path})})"
            + (f", when the leader lookup selected broker {delivered['node']}" if delivered["node"] is not None else "")
            + f", and the application's next line is a success ({line_ref(delivered['success_row'] | {'path': path})})."
            + f" Producer.Retry.Max (at least {delivered['retry']} here) is what got it through."
        )
    if periods:
        p0 = periods[0]
        root += (
            f" The partition's circuit breaker then opened: sends failed at once with 'circuit breaker is open' from "
            f"{p0['from'].strftime('%H:%M:%S')} to {p0['to'].strftime('%H:%M:%S')} UTC ({p0['failed_sends']} sends)"
            + (f", in {len(periods)} periods" if len(periods) > 1 else "")
            + "."
        )
    if oob.height:
        root += f" 'client has run out of available brokers' was returned {'once' if oob.height == 1 else f'{oob.height} times'}."
    errs = sum(1 for r in inc.body if r.get("app_error"))
    if inc.episode is not None and (errs > 1 or len(inc.tps) > 1) and aft.get("recovered"):
        back = aft["recovered"][0]
        root += (
            (f" In all, {plural(errs, 'error')} {'was' if errs == 1 else 'were'} returned for {tp_text} before " if errs else f" {tp_text} ")
            + f"{'they' if errs else ''}{' ' if errs else ''}delivered again at {back['ts'].strftime('%H:%M:%S')} UTC."
        ).replace("  ", " ")
    if kind == "blackhole" and longest_next and send_observed and longest_next > send_observed * 1.3:
        root += (
            f" The next error came {fmt_s(longest_next, coarse)} after the previous one: the retry-buffer flush and the next "
            f"message each repeat the metadata/dial path."
        )
    return root


def title(inc: Incident, t: Timing) -> str:
    what = "black-holed" if inc.kind == "blackhole" else "refused/closed" if inc.kind == "refused" else "silent (mute)"
    return f"sarama send stalled {_stall_text(inc, t)} on {_tps_text(inc.tps)}: " + (
        f"broker {safe(inc.broker) + ' ' if inc.broker else ''}{what} (from the application's lines; sarama's Logger was off)"
        if inc.unseen else f"broker {_broker_text(inc.broker)} {what}"
    )


def remediation(inc: Incident, t: Timing, cmp: Comparison, longest_next: float | None) -> list[str]:
    """What to do: turn the Logger on, the change worth making, what Producer.Retry.Max does here, where
    to look, and the configuration to check."""
    path, kind, unseen, several, delivered, all_rows = inc.path, inc.kind, inc.unseen, inc.several, inc.delivered, inc.body
    given, cfg, eff, inferred, change, after, after_formula = cmp.given, cmp.cfg, cmp.eff, cmp.inferred, cmp.change, cmp.after, cmp.after_formula
    model_now, send_span, with_given, mismatches = cmp.model_now, cmp.send_span, cmp.with_given, cmp.mismatches
    coarse, defaults_stand_in = inc.coarse, cmp.defaults_stand_in
    rem: list[str] = []
    if unseen:
        rem.append(
            f"Turn sarama's Logger on to see where the time goes (it discards its lines by default): {SARAMA_LOGGER_HINT} "
            "before sarama.NewClient / NewSyncProducer. logsleuth then splits the stall into dial, read and back-off waits "
            "and infers the timeouts from them; until then the model below uses "
            + (
                "sarama's defaults, which fit the observed stall (the configuration you passed does not; see below)."
                if defaults_stand_in else "the configuration you passed." if given
                else "sarama's defaults (pass --sarama-config with your values)."
            )
        )
    if change and several:
        rem.append(
            f"Set {', '.join(fmt_setting(k, v) for k, v in change.items())}: the waits this log shows would then take ≈{fmt_s(after)} "
            f"instead of ≈{fmt_s(send_span)} ({after_formula}; the measured model is not used)."
        )
    elif change:
        already = [k for k in change if k in given and float(cfg[k]) <= float(change[k]) and abs(float(cfg[k]) - float(eff[k])) > 1e-9]
        verb = "Make " + ", ".join(fmt_setting(k, cfg[k]) for k in already) + " take effect" if already and len(already) == len(change) else "Set " + ", ".join(fmt_setting(k, v) for k, v in change.items())
        rem.append(
            f"{verb}: with the other values {'in this log' if inferred else 'the model uses'} a failing send would then take "
            f"≈{fmt_s(after)} instead of ≈{fmt_s(model_now)} ({after_formula})."
        )
    if mismatches and with_given is not None:
        rem.append(f"With the configuration you passed, were it in effect, the model gives ≈{fmt_s(with_given)} for a failing send.")
    retry_levels_seen = sorted({int(r["retry"]) for r in all_rows if _has(r, "sarama_leader_retrying") and r.get("retry") is not None})
    if delivered:
        # the log shows the retry that got the message through: Producer.Retry.Max saved this send
        rem.append(
            f"Keep Producer.Retry.Max at {delivered['retry']} or more: retry {delivered['retry']} delivered the message here "
            f"([retrying-{delivered['retry']}], {line_ref(delivered['row'] | {'path': path})}"
            + (f", then 'selected broker {delivered['node']}'" if delivered["node"] is not None else "")
            + f"); with fewer retries this send would have returned an error instead."
        )
    elif kind == "blackhole" and several:
        if retry_levels_seen:
            rem.append(
                f"This log shows {plural(len(retry_levels_seen), 'producer retry', 'producer retries')} ([retrying-{retry_levels_seen[0]}]"
                + (f" … [retrying-{retry_levels_seen[-1]}]" if len(retry_levels_seen) > 1 else "")
                + ") before the error. With several brokers a retry's leader lookup can be answered by a live broker, so the "
                "single-broker measurement (a failed metadata refresh fails the message at once) need not hold: each retry may "
                "re-dial the dropped broker, and Producer.Retry.Max then bounds how often."
            )
    elif kind == "blackhole":
        rem.append("Producer.Retry.Max does not shorten this: when a retry's metadata refresh fails the message fails at once (Retry.Max 3 behaved like 1 in the measurements).")
    if kind == "blackhole" and not several and not delivered:
        rem.append(
            "Expect the next send after a failure to wait about twice the metadata/dial path: the retry-buffer flush and that message each repeat it"
            + (f" (here the next error came {fmt_s(longest_next, coarse)} later)." if longest_next else ".")
        )
    if kind == "blackhole":
        rem.append("Find what drops the packets to the broker (security group, firewall rule, dead host behind a stable IP); a refused port would fail in under a second.")
    elif kind == "refused":
        rem.append("Nothing to tune for speed: the failure is fast. Make the application back off on 'circuit breaker is open' (it lasts 10 s, even after the broker is back) instead of counting each as a new outage.")
        rem.append("Find why the broker closed its port (restart, crash, rolling upgrade): the broker log of that time tells.")
    else:
        rem.append("Net.ReadTimeout must stay above Producer.Timeout (the broker may hold a produce request that long waiting for acks); beyond that each retry re-sends into the same silence.")
        rem.append("Look at the broker: it accepted connections and answered metadata but not produce requests (request handler threads stuck, disk full, ISR waits).")
    for m in mismatches:
        rem.append("Check the configuration: " + m + " (set before sarama.NewClient / NewSyncProducer? the same *sarama.Config?).")
    return rem


def ruled_out(inc: Incident, t: Timing, cmp: Comparison) -> list[str]:
    """What the log rules out: the other first wait, and the other kinds of outage."""
    kind, unseen, first_tok, coarse, send_observed, dial_t = inc.kind, inc.unseen, inc.first_tok, inc.coarse, cmp.send_observed, t.dial_t
    fig_txt = figure_text(inc.figure)
    ruled = [FIRST_WAIT_RULED_OUT[first_tok]] if first_tok in FIRST_WAIT_RULED_OUT else []
    if kind == "blackhole" and unseen:
        ruled.append(f"a refused port: a refused or closed broker fails a send in under a second; this one took {fig_txt or fmt_s(send_observed, coarse)}.")
    elif kind == "blackhole":
        ruled.append("a refused port: refused dials fail at once; these dials each waited ≈" + fmt_s(dial_t, coarse) + ".")
    elif kind == "silent" and not unseen:
        ruled.append("an unreachable broker: metadata requests were answered and re-dials connected at once.")
    elif kind == "refused":
        ruled.append("a black hole: no dial waited; every dial failed at once.")
    return ruled
