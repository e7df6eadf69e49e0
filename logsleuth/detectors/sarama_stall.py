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
The parts: _sarama_chain.py reads the log into chains and incidents, _sarama_waits.py attributes
their gaps to waits, _sarama_app_only.py reads a stall from the application's lines alone
(sarama's Logger off), _sarama_model.py is the measured timing model. This module analyses one
incident with them and writes the finding.
"""

from __future__ import annotations

import datetime as dt

import polars as pl

from logsleuth.detectors._sarama_app_only import _unseen_kind, _unseen_waits
from logsleuth.detectors._sarama_chain import (
    CHAIN_EVENTS, ERROR_TEXT_EVENTS, OPENING_EVENTS, _aftermath, _brokers_seen, _delivering_retry, _first_line, _has,
    _incidents, _lines, _log_starts_inside, _net_kind, _net_token, _seconds, _split_on_success,
)
from logsleuth.detectors._sarama_model import dominant, model_formula, model_parts, model_seconds, suggest
from logsleuth.detectors._sarama_waits import (
    COMPONENTS, PRODUCE_TIMEOUTS, READ_TIMEOUTS, WRITE_TIMEOUTS, _cadence, _classify_gap, _deadline_fits,
    _figure, _metadata_deadline, _typical,
)
from logsleuth.detectors.base import Context, Detector, evidence, safe, segment_of, line_ref
from logsleuth.detectors.sarama_config import DEFAULTS, DURATIONS
from logsleuth.findings import Finding

ID = "sarama.retry-redial-stall"

LEADER_EVENTS = {"sarama_leader_retrying", "sarama_leader_abandon", "sarama_leader_flushing", "sarama_leader_normal", "sarama_leader_selected"}
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


def fmt_setting(key: str, value) -> str:
    if key in ("Metadata.Retry.Max", "Producer.Retry.Max", "Net.MaxOpenRequests"):
        return f"{key}={int(value)}"
    v = float(value)
    if v < 1 and v > 0:
        return f"{key}={round(v * 1000)}ms"
    return f"{key}={v:g}s"


def fmt_s(v: float | None, coarse: bool = False) -> str:
    if v is None:
        return "unknown"
    v = float(v) + 1e-9  # 126.85 is 126.8499999...: show it as people round
    if coarse:
        return f"{v:.0f} s"
    if v < 1:
        return f"{v * 1000:.0f} ms"
    return f"{v:.1f} s" if v < 1000 else f"{v:.0f} s"


def _brokers_text(seen: dict) -> str:
    parts = []
    if seen["addresses"]:
        parts.append(", ".join(safe(a) for a in seen["addresses"]))
    if seen["nodes"]:
        parts.append(("broker id " if len(seen["nodes"]) == 1 else "broker ids ") + ", ".join(str(n) for n in seen["nodes"]))
    return "several brokers (" + "; ".join(parts) + ")"


def plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


# ----------------------------------------------------------------------------- one incident


def _files(path: str, **rows: dict) -> dict:
    """{key: file} for the rows that are in a segment of a rotated log other than its path."""
    return {k: segment_of(r | {"path": path}) for k, r in rows.items() if segment_of(r | {"path": path})}


def _analyse(ctx: Context, path: str, df: pl.DataFrame, first: int, last: int, unseen: bool = False) -> Finding | None:
    """One incident. ``unseen``: the file holds none of sarama's lines (its Logger was off), so only the
    application's own lines tell of the failing send."""
    seg = df.slice(first, last - first + 1)
    rows = seg.filter(pl.col("ts").is_not_null()).to_dicts()
    if not rows:
        return None
    start_i = next(i for i, r in enumerate(rows) if r["chain"])
    # the last line the process logged before the chain: in this segment, or the line before it
    if start_i > 0:
        pre = rows[start_i - 1]
    else:
        before = df.filter((pl.col("idx") < first) & pl.col("ts").is_not_null()).tail(1).to_dicts()
        pre = before[0] if before else None
    # the chain's own lines (sarama's, and the errors handed to the application): lines that other
    # parts of the service logged meanwhile would cut the waits in two
    body = [r for r in rows[start_i:] if not r["ok"]]
    end_j = next((j for j, r in enumerate(body) if r["app_error"]), None)
    ended_by = "error"
    if end_j is None:
        # no error reached the application's log: the stall ends when the leader is back for good
        # (the first [normal] / selected broker after the last failure line; a mute broker shows
        # [normal] between its retries too)
        last_fail = max(j for j, r in enumerate(body) if r["chain"])
        back = [j for j, r in enumerate(body) if j > last_fail and _has(r, "sarama_leader_normal", "sarama_leader_selected")]
        if back:
            end_j, ended_by = back[0], "recovery"
        else:
            end_j, ended_by = len(body) - 1, "end of the log"
    stall_rows = ([pre] if pre else []) + body[: end_j + 1]
    all_rows = body
    err_row = stall_rows[-1] if ended_by == "error" else None
    figure = _figure(err_row["msg"]) if err_row else None  # the application's own measure of the failing send

    coarse = all(r["ts"].microsecond == 0 for r in stall_rows)
    inside = not unseen and _log_starts_inside(df, body[0])

    # ---- kind and broker (the whole incident: with Retry.Max=0 the dials come after the first error)
    kinds = [_net_kind(r.get("error")) for r in all_rows if r.get("internal") and r.get("error")]
    app_kinds = [_net_kind(r.get("msg")) for r in all_rows if r.get("app_error")]
    if unseen:
        kind = _unseen_kind(err_row)
        if kind is None:
            return None
    elif "dial" in kinds:
        kind = "blackhole"
    elif "refused" in kinds or "closed" in kinds:
        kind = "refused"
    elif "read" in kinds or "write" in kinds:
        kind = "silent"
    elif "dial" in app_kinds:
        kind = "blackhole"
    elif "refused" in app_kinds or "closed" in app_kinds:
        kind = "refused"
    else:
        return None  # a retry chain without a broker outage (e.g. a leader move): not this finding's business
    addr_rows = [r for r in all_rows if _has(r, "sarama_dial_failed") and r.get("address")]
    addr_rows = addr_rows or [r for r in all_rows if _has(r, "sarama_connection_closed") and r.get("address")]
    addr_rows = addr_rows or [r for r in all_rows if _has(r, "sarama_metadata_fetch") and r.get("address")]
    broker = None
    if addr_rows:
        counts: dict[str, int] = {}
        for r in addr_rows:
            counts[r["address"]] = counts.get(r["address"], 0) + 1
        broker = max(counts, key=lambda a: (counts[a], -list(counts).index(a)))
    node = next((r["node"] for r in all_rows if _has(r, "sarama_broker_closing") and r.get("node") is not None), None)
    # the measured model is for one broker that is also the seed: a chain that names several brokers
    # (ids or addresses) is read from its gaps alone, and the model is not used for it
    seen_brokers = {"nodes": [], "addresses": [], "several": False} if unseen else _brokers_seen(all_rows)
    several = seen_brokers["several"]
    # a chain that ends in recovery: the retry that got the message through
    # (only when the application's next line after the recovery is a success, not another failure: a mute
    # broker also logs [normal] between its retries)
    delivered = _delivering_retry(body, end_j) if ended_by == "recovery" else None
    if delivered:
        nxt = df.filter((pl.col("idx") > body[end_j]["idx"]) & (pl.col("ok") | pl.col("chain"))).head(1).to_dicts()
        delivered = delivered | {"success_row": nxt[0]} if nxt and nxt[0]["ok"] else None
    first_error = next((r.get("error") for r in all_rows if r.get("internal") and _net_kind(r.get("error"))), None)
    if unseen:
        first_error = _first_line(err_row["msg"])

    # ---- partitions
    tps: list[str] = []
    for r in all_rows:
        tp = None
        if _has(r, *LEADER_EVENTS, "sarama_broker_retrying", "sarama_batch_retry", "sarama_batch_retry_failed") and r.get("topic") and r.get("partition") is not None:
            tp = f"{r['topic']}/{r['partition']}"
        if tp and tp not in tps:
            tps.append(tp)
    if not tps:
        topic = next((r.get("topic") for r in all_rows if r.get("topic")), None)
        tps = [f"{topic}/?" if topic else "unknown"]

    # ---- which wait the produce request's failure ended: the error text tells (reference §C.3)
    opening = body[0] if _has(body[0], *OPENING_EVENTS) else None
    first_tok = _net_token(opening.get("error")) if opening else None
    if unseen and kind == "silent":
        first_tok = _net_token(err_row["msg"])
    shape = {
        "first": "Net.WriteTimeout" if first_tok == "write tcp" else "Net.ReadTimeout",
        # the retry's metadata refresh first waits on the seed's idle connection (1.22.1); a chain seen
        # from its opening line without such a wait shows a sarama that closed it on the socket error
        "seed_read": not (opening is not None and not any(_has(r, "sarama_metadata_error") and _net_kind(r.get("error")) in ("read", "write") for r in all_rows)),
    }

    # ---- the time budget: every gap between consecutive lines of the stall
    cadence = _cadence(df, stall_rows[0]["idx"]) if pre is not None else None
    waits: list[tuple[str, float, dict]] = []
    read_t = write_t = None
    read_source = write_source = None
    idle = skipped = pre_gap = 0.0  # skipped: time cut from the start when the line before the chain is an old sarama line
    before_log = None  # the part of the failing send before the log's first line (from the application's figure)
    start_estimated = False
    if unseen:
        # only the application's lines: its last line before the error, and the error
        unseen_budget = _unseen_waits(pre, err_row, figure, cadence, coarse)
        if unseen_budget is None:
            return None
        waits, idle, stall, start_estimated = unseen_budget
    else:
        for k in range(1, len(stall_rows)):
            prev, cur = stall_rows[k - 1], stall_rows[k]
            g = _seconds(prev["ts"], cur["ts"])
            waits.append((_classify_gap(prev, cur, first_wait=(k == 1 and pre is not None and not inside)), g, cur))
        stall = _seconds(stall_rows[0]["ts"], stall_rows[-1]["ts"]) if len(stall_rows) > 1 else 0.0

        # the first wait holds the produce request's own timeout and the time before the send began
        first_c, first_g = (waits[0][0], waits[0][1]) if waits else (None, 0.0)
        first_is_write = first_c == "produce_write_timeout"
        clean = [g for i, (c, g, _) in enumerate(waits) if c in (WRITE_TIMEOUTS if first_is_write else READ_TIMEOUTS) and not (i == 0 and pre is not None)]
        first_t = _typical(clean, coarse)
        first_source = "gaps between sarama's lines" if first_t is not None else None
        pre_is_app = pre is not None and bool(pre.get("ok"))
        if pre is not None and not pre_is_app and waits and not inside:
            expected = first_t if first_c in PRODUCE_TIMEOUTS else 0.0 if first_c == "idle" else None
            if expected is not None and first_g > expected + 2.0:
                skipped, pre_gap = first_g - expected, first_g
                if first_c == "idle":
                    waits.pop(0)
                else:
                    waits[0] = (first_c, expected, waits[0][2])
                first_c, first_g = None, 0.0
        if first_c in PRODUCE_TIMEOUTS:
            if first_t is not None and first_g >= first_t - (1.0 if coarse else 0.05):
                idle = max(0.0, first_g - first_t)
            elif cadence is not None and first_g > cadence:
                idle = cadence if not coarse else round(cadence)
                first_t = first_g - idle
                first_source = "the first wait minus the application's send interval"
            else:
                first_t = first_t if first_t is not None else first_g
                first_source = first_source or "the first wait (an upper bound)"
            waits[0] = (first_c, first_g - idle, waits[0][2])
            if idle > 0:
                waits.insert(0, ("idle", idle, waits[0][2]))
        elif first_c == "idle":
            idle = first_g
        if first_is_write:
            write_t, write_source = first_t, first_source
            read_t = _typical([g for c, g, _ in waits if c in READ_TIMEOUTS], coarse)
            read_source = "gaps between sarama's lines" if read_t is not None else None
        else:
            read_t, read_source = first_t, first_source
            write_t = _typical([g for c, g, _ in waits if c in WRITE_TIMEOUTS], coarse)
            write_source = "gaps between sarama's lines" if write_t is not None else None
        stall -= skipped
        start_estimated = bool(skipped)
        if inside:
            # the log begins inside the chain: what came before its first line is known only from the
            # application's own figure ('send … failed after 180.85s')
            start_estimated = True
            if figure is not None and figure > stall + (1.0 if coarse else 0.05):
                before_log = figure - stall
                waits.insert(0, ("before_log", before_log, body[0]))
                stall = figure
    t_to = stall_rows[-1]["ts"]
    t_from = t_to - dt.timedelta(seconds=stall) if start_estimated else stall_rows[0]["ts"]

    # ---- inferred values
    dial_gaps = [g for c, g, _ in waits if c == "dial_timeout"]
    dial_t = _typical(dial_gaps, coarse)
    md_backoffs = [r["backoff_ms"] / 1000.0 for r in stall_rows if _has(r, "sarama_metadata_retry") and r.get("backoff_ms") is not None]
    md_backoff_t = _typical(md_backoffs, False)
    rb_gaps = [g for c, g, _ in waits if c == "retry_backoff"]
    md_max = max((r["attempts_left"] for r in all_rows if _has(r, "sarama_metadata_retry") and r.get("attempts_left") is not None), default=None)
    retry_levels = [r["retry"] for r in all_rows if _has(r, "sarama_leader_retrying") and r.get("retry") is not None]
    produce_timeouts = sum(1 for c, _, _ in waits if c in PRODUCE_TIMEOUTS)

    given_cfg = ctx.options.get("sarama_config") or dict(DEFAULTS, _given=[])
    given = list(given_cfg.get("_given", []))
    cfg = {k: given_cfg[k] for k in DEFAULTS}
    eff = dict(cfg)
    inferred: dict[str, dict] = {}

    def infer(key: str, value, source: str) -> None:
        if value is None:
            return
        inferred[key] = {"value": value, "from": source}
        eff[key] = value

    infer("Net.DialTimeout", dial_t, f"{len(dial_gaps)} dial timeout gap(s)")
    infer("Net.ReadTimeout", round(read_t, 3) if read_t is not None else None, read_source or "")
    infer("Net.WriteTimeout", round(write_t, 3) if write_t is not None else None, write_source or "")
    infer("Metadata.Retry.Backoff", md_backoff_t, "'retrying after Nms' lines")
    infer("Metadata.Retry.Max", md_max, "the first '(N attempts remaining)'")
    if rb_gaps and not coarse:
        infer("Producer.Retry.Backoff", _typical(rb_gaps, False), f"{len(rb_gaps)} retry back-off gap(s)")
    if kind == "silent" and ended_by == "error" and produce_timeouts:
        infer("Producer.Retry.Max", produce_timeouts - 1, "read timeouts before the error, minus one")
    elif retry_levels and int(eff["Producer.Retry.Max"]) < max(retry_levels):
        infer("Producer.Retry.Max", max(retry_levels), "the highest [retrying-N]")
    elif kind in ("blackhole", "refused") and retry_levels and int(eff["Producer.Retry.Max"]) == 0:
        infer("Producer.Retry.Max", max(retry_levels), "the highest [retrying-N]")
    deadline = _metadata_deadline(stall_rows, float(eff["Metadata.Retry.Backoff"]), coarse)
    deadline_tol = 1.0 if coarse else 0.05
    if deadline is not None:
        c_md = float(cfg["Metadata.Timeout"])
        inferred["Metadata.Timeout"] = {
            "value": deadline["upper"],
            "range": [deadline["lower"], deadline["upper"]],
            "from": f"{line_ref(deadline['row'] | {'path': path})}, '{deadline['text']}' {fmt_s(deadline['elapsed'], coarse)} into the metadata refresh",
        }
        if not _deadline_fits(c_md, deadline, deadline_tol):
            eff["Metadata.Timeout"] = deadline["model_value"]

    # ---- the budget table
    budget: list[dict] = []
    for key, (label, setting) in COMPONENTS.items():
        gs = [g for c, g, _ in waits if c == key]
        if not gs:
            continue
        each = None
        if key == "dial_timeout":
            each = dial_t
        elif key in READ_TIMEOUTS:
            each = read_t
        elif key in WRITE_TIMEOUTS:
            each = write_t
        elif key == "metadata_backoff":
            each = md_backoff_t
        elif key == "retry_backoff":
            each = eff["Producer.Retry.Backoff"]
        budget.append({
            "component": key,
            "label": label,
            "setting": setting,
            "count": len(gs),
            "seconds": round(sum(gs), 3),  # the gaps as stamped (before_log, unseen: the application's figure)
            "each_seconds": each,  # the inferred value of one wait
            "estimated_seconds": round(len(gs) * each, 3) if each is not None else round(sum(gs), 3),
        })
    by = {b["component"]: b for b in budget}

    def cnt(k: str) -> int:
        return by[k]["count"] if k in by else 0

    # ---- model, comparison, suggestion
    if ended_by != "error" or (inside and figure is None):
        send_observed = None
    elif figure is not None:
        send_observed = figure  # the application measured the failing send itself
    else:
        send_observed = max(0.0, stall - idle)
    parts_now = model_parts(kind, eff, shape)
    model_now = parts_now["seconds"]

    def tol_for(m: float) -> float:
        return 1.5 if coarse and figure is None else max(0.1, 0.02 * m)

    tol = tol_for(model_now)
    fits = not several and send_observed is not None and abs(send_observed - model_now) <= tol
    # values the user passed (often a what-if: "what if Net.DialTimeout were 5s?") that the log could
    # not contradict line by line (sarama's Logger off, or no such wait in the chain) but whose model
    # cannot give the observed send: they were not in use. Say so, and let sarama's defaults stand in
    # for them when those fit the log.
    what_if = None
    if given and not several and send_observed is not None and not fits:
        as_passed = [k for k in given if abs(float(eff[k]) - float(cfg[k])) <= 1e-9 and abs(float(cfg[k]) - float(DEFAULTS[k])) > 1e-9]
        if as_passed:
            alt = dict(eff, **{k: DEFAULTS[k] for k in as_passed})
            alt_s = model_seconds(kind, alt, shape)
            alt_fits = abs(send_observed - alt_s) <= tol_for(alt_s)
            what_if = {
                "passed": {k: cfg[k] for k in as_passed},
                "model_seconds": round(model_now, 3),
                "observed_seconds": round(send_observed, 3),
                "defaults_model_seconds": round(alt_s, 3),
                "defaults_fit": alt_fits,
            }
            if alt_fits:
                eff = alt
                parts_now = model_parts(kind, eff, shape)
                model_now = parts_now["seconds"]
                tol, fits = tol_for(model_now), True
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
    send_span = max(0.0, stall - idle - (before_log or 0.0))  # what the log shows of the send itself
    if several:
        # no model: the share of each setting and the effect of a change come from the waits the log shows
        # (the same waits, each shorter); a count (Metadata.Retry.Max, Producer.Retry.Max) is not estimated
        change = {k: v for k, v in change.items() if k in DURATIONS and any(b["setting"] == k for b in budget)}
        saved = sum(
            b["count"] * max(0.0, float(b["each_seconds"]) - float(change[b["setting"]]))
            for b in budget if b["setting"] in change and b["each_seconds"] is not None
        )
        after = max(0.0, send_span - saved)
        after_formula = "the same waits, each shorter; with several brokers the count of waits may differ"
        shares = [b for b in budget if b["setting"]]
        if shares:
            top = max(shares, key=lambda b: b["estimated_seconds"])
            dom_key, dom_s = top["setting"], top["estimated_seconds"]
    mismatches: list[str] = []
    notes: list[str] = []
    for key, inf in inferred.items():
        v, c = float(inf["value"]), float(cfg[key])
        if key == "Metadata.Timeout":
            hi = inf["range"][1]
            if _deadline_fits(c, deadline, deadline_tol):
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

    if what_if:
        seen_wi = f"the application measured {figure:.2f} s" if figure is not None else f"the log shows {fmt_s(send_observed, coarse)}"
        mismatches.append(
            f"you passed {', '.join(fmt_setting(k, v) for k, v in what_if['passed'].items())}; with it the model predicts "
            f"{what_if['model_seconds']:.2f} s for the failing send, but {seen_wi}: the client that wrote this log probably used "
            f"a different configuration (sarama's defaults predict {what_if['defaults_model_seconds']:.2f} s"
            + (", which fits)" if what_if["defaults_fit"] else ")")
        )

    # ---- breaker periods, out-of-brokers, later failures and recovery, over the whole incident
    aft = _aftermath(df, seg, all_rows, last)
    periods, oob, later, longest_next = aft["periods"], aft["oob"], aft["later"], aft["longest_next"]
    recovered, recovered_at = aft["recovered"], aft["recovered_at"]

    # ---- subjects
    res = "1 s (log.LstdFlags)" if coarse else "sub-second"
    subj_common = {
        "path": path,
        "kind": kind,
        "broker": broker,
        "stall_seconds": round(stall, 3),
        "from": t_from,
        "to": t_to,
        "from_line": body[0]["line"] if (skipped or inside) else stall_rows[0]["line"],
        "start_estimated": start_estimated,
        "to_line": stall_rows[-1]["line"],
        **_files(path, from_file=body[0] if (skipped or inside) else stall_rows[0], to_file=stall_rows[-1]),
        "ended_by": ended_by,
        "returned_error": _first_line(err_row["msg"]) if err_row else None,
        "application_figure_seconds": figure,
        "sarama_logger": "off" if unseen else "on",
        "idle_seconds": round(idle, 3),
        "send_seconds": round(send_observed, 3) if send_observed is not None else None,
        "dial_timeouts": cnt("dial_timeout"),
        "dial_timeout_seconds": dial_t,
        "dials_refused": cnt("dial_refused"),
        "read_timeouts": cnt("produce_read_timeout") + cnt("metadata_read_timeout"),
        "read_timeout_seconds": round(read_t, 3) if read_t is not None else None,
        "write_timeouts": cnt("produce_write_timeout") + cnt("metadata_write_timeout"),
        "metadata_backoffs": cnt("metadata_backoff"),
        "retry_backoffs": cnt("retry_backoff"),
        "model_seconds": None if several else round(model_now, 3),  # several brokers: the one-broker model does not apply
        "suggested_change": ",".join(fmt_setting(k, v) for k, v in change.items()) or None,
        "after_change_seconds": round(after, 3),
        "out_of_brokers": oob.height,
        "breaker_open_periods": len(periods),
        "time_resolution": res,
    }
    subjects = [{"topic_partition": tp, **subj_common} for tp in tps]

    # ---- prose
    tp_text = ", ".join(safe(t) for t in tps)
    b_text = safe(broker) if broker else "the partition leader"
    fig_txt = f"{figure:.2f} s" if figure is not None else None
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
        else:
            each_txt = f" of ≈{fmt_s(each, coarse and each >= 1)}" if each is not None else ""
            total = n * each if (coarse and each is not None) else secs
            total_txt = f" ({fmt_s(total, coarse and total >= 1)})" if n > 1 else ""
            parts.append(f"{plural(n, bgt['label'])}{each_txt}{total_txt}")
    end_txt = {"error": "the first error returned to the application", "recovery": "recovery (the leader back: [normal] or selected broker)", "end of the log": "the end of the log (no error, no recovery)"}[ended_by]
    stall_txt = fmt_s(stall, coarse and not (before_log is not None or (unseen and start_estimated)))
    span = f"{t_from.strftime('%H:%M:%S')} → {t_to.strftime('%H:%M:%S')} UTC"
    if unseen:
        root = (
            f"sarama's SendMessage on {tp_text} stalled {stall_txt} ({span}, from the application's last line before the error to {end_txt}"
            + (f"; the application measured the send itself: {fig_txt}" if fig_txt else "")
            + f"). sarama's Logger was off (it discards its lines by default), so this log holds only the application's lines and the waits inside the send cannot be broken down. "
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
            scope = "from the last line logged before the failure chain to " + end_txt
        root = (
            f"sarama's SendMessage on {tp_text} stalled {'at least ' if inside and before_log is None else ''}{stall_txt} ({span}, {scope}) "
            f"because broker {b_text} was {KIND_TEXT[kind]}. "
            f"Where the time went: {'; '.join(parts) or 'no gaps'}."
        )
    if err_row and not unseen:
        root += f" Returned error: '{safe(_first_line(err_row['msg']))}'."
    elif err_row:
        root += f" Returned error: '{safe(first_error)}'."
    defaults_stand_in = bool(what_if and what_if["defaults_fit"])
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
            f"{p0['from'].strftime('%H:%M:%S')} to {p0['to'].strftime('%H:%M:%S')} ({p0['failed_sends']} sends)"
            + (f", in {len(periods)} periods" if len(periods) > 1 else "")
            + "."
        )
    if oob.height:
        root += f" 'client has run out of available brokers' was returned {oob.height} time(s)."
    if kind == "blackhole" and longest_next and send_observed and longest_next > send_observed * 1.3:
        root += (
            f" The next error came {fmt_s(longest_next, coarse)} after the previous one: the retry-buffer flush and the next "
            f"message each repeat the metadata/dial path."
        )

    # ---- confidence
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
            f"no application line precedes the chain (the last line, {fmt_s(pre_gap)} earlier, is sarama's own): "
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

    # ---- remediation and ruled out
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
                f"This log shows {len(retry_levels_seen)} producer {'retry' if len(retry_levels_seen) == 1 else 'retries'} ([retrying-{retry_levels_seen[0]}]"
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
    ruled = [FIRST_WAIT_RULED_OUT[first_tok]] if first_tok in FIRST_WAIT_RULED_OUT else []
    if kind == "blackhole" and unseen:
        ruled.append(f"a refused port: a refused or closed broker fails a send in under a second; this one took {fig_txt or fmt_s(send_observed, coarse)}.")
    elif kind == "blackhole":
        ruled.append("a refused port: refused dials fail at once; these dials each waited ≈" + fmt_s(dial_t, coarse) + ".")
    elif kind == "silent" and not unseen:
        ruled.append("an unreachable broker: metadata requests were answered and re-dials connected at once.")
    elif kind == "refused":
        ruled.append("a black hole: no dial waited; every dial failed at once.")

    # ---- evidence
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

    severity = "high" if stall >= 60 else "medium" if stall >= 5 or periods else "low"
    what = "black-holed" if kind == "blackhole" else "refused/closed" if kind == "refused" else "silent (mute)"
    title = f"sarama send stalled {stall_txt} on {tp_text}: " + (
        f"broker {what} (from the application's lines; sarama's Logger was off)" if unseen else f"broker {b_text} {what}"
    )
    return Finding(
        id=ID,
        severity=severity,
        title=title,
        root_cause=root,
        confidence=round(conf, 2),
        confidence_reasons=reasons,
        first_seen=t_from,
        last_seen=recovered_at or all_rows[-1]["ts"],
        subjects=subjects,
        cause={
            "kind": kind,
            "broker": broker,
            "node": node,
            "error": first_error,
            "explanation": KIND_TEXT[kind],
            "dominant_setting": dom_key,
        },
        evidence=ev,
        remediation=rem,
        references=["docs/findings/sarama.retry-redial-stall.md", "sarama async_producer.go (retryMessage, updateLeader), client.go (tryRefreshMetadata)"],
        ruled_out=ruled,
        details={
            "budget": budget,
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
                    findings.append(f)
    return findings


DETECTOR = Detector(
    id=ID,
    title="sarama retry/re-dial stall: where a failing send's time went",
    systems=("sarama",),
    run=run,
    doc="docs/findings/sarama.retry-redial-stall.md",
)
