"""The time budget of one sarama incident, for sarama.retry-redial-stall: every gap between the
stall's lines attributed to a wait (``measure``: the stall, the idle time before the send, the part
before the log's first line, the typical read / write / dial / back-off waits) and the budget
table of the waits per component (``budget_table``).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import polars as pl

from logsleuth.detectors.base import line_ref
from logsleuth.detectors.sarama.app_only import _unseen_waits
from logsleuth.detectors.sarama.config import DEFAULTS
from logsleuth.detectors.sarama.format import fmt_setting
from logsleuth.detectors.sarama.chain import _has, _seconds
from logsleuth.detectors.sarama.incident import Incident
from logsleuth.detectors.sarama.waits import (
    COMPONENTS, PRODUCE_TIMEOUTS, READ_TIMEOUTS, WRITE_TIMEOUTS, _cadence, _classify_gap, _typical,
)


@dataclass
class Timing:
    """Where the stall's time went: ``waits`` as (component, seconds, row), and the values measured."""

    waits: list[tuple[str, float, dict]]
    stall: float
    idle: float
    skipped: float  # time cut from the start when the line before the chain is an old sarama line
    pre_gap: float  # the first gap before it was cut
    before_log: float | None  # the part of the failing send before the log's first line (from the application's figure)
    start_estimated: bool
    t_from: dt.datetime
    t_to: dt.datetime
    cadence: float | None  # the application's send interval before the chain
    read_t: float | None
    read_source: str | None
    write_t: float | None
    write_source: str | None
    dial_gaps: list[float]
    dial_t: float | None
    md_backoff_t: float | None
    start_bound: str = "last line before the chain"  # write | application figure | last line before the chain | estimated
    start_from: str = ""  # how that bound was found, in words
    end_bound: str = "error returned"


def measure(inc: Incident, df: pl.DataFrame, printed: dict | None = None) -> Timing | None:
    """The waits of the incident's stall and its bounds; None when a stall read from the application's
    lines alone (sarama's Logger off) is no stall.

    The stall starts at the write of the stalled request: when the chain opens with the produce
    request timing out (``[closing] because read tcp …: i/o timeout``), one ``Net.ReadTimeout`` before
    that line (``Net.WriteTimeout`` for ``write tcp``) — the value the application printed
    (``printed``, see printed.py), else the value the chain's other timeouts show, else sarama's
    default — unless that would put it before the last line before the chain, which then bounds it.
    With sarama's Logger off, the application's own figure for the failing send bounds it, else its
    last line before the error. The time from that last line to the write is ``idle`` (listed in the
    budget, not part of the stall)."""
    printed = printed or {}
    pre, body, stall_rows, coarse, inside = inc.pre, inc.body, inc.stall_rows, inc.coarse, inc.inside
    cadence = _cadence(df, stall_rows[0]["idx"]) if pre is not None else None
    waits: list[tuple[str, float, dict]] = []
    read_t = write_t = None
    read_source = write_source = None
    idle = skipped = pre_gap = 0.0  # skipped: time cut from the start when the line before the chain is an old sarama line
    before_log = None  # the part of the failing send before the log's first line (from the application's figure)
    start_estimated = False
    if inc.unseen:
        # only the application's lines: its last line before the error, and the error
        unseen_budget = _unseen_waits(pre, inc.err_row, inc.figure, cadence, coarse)
        if unseen_budget is None:
            return None
        waits, idle, stall, start_estimated = unseen_budget
        if inc.figure is not None:
            start_bound, start_from = "application figure", f"the error's own figure for the send ({inc.figure:g} s)"
        else:
            start_bound, start_from = "last line before the chain", "nothing marks the write (sarama's Logger was off): the application's last line before the error"
    else:
        start_bound, start_from = "last line before the chain", "no line marks the write"
        for k in range(1, len(stall_rows)):
            prev, cur = stall_rows[k - 1], stall_rows[k]
            g = _seconds(prev["ts"], cur["ts"])
            waits.append((_classify_gap(prev, cur, first_wait=(k == 1 and pre is not None and not inside)), g, cur))
        stall = _seconds(stall_rows[0]["ts"], stall_rows[-1]["ts"]) if len(stall_rows) > 1 else 0.0

        # the first wait holds the produce request's own timeout and the time before the send began
        first_c, first_g = (waits[0][0], waits[0][1]) if waits else (None, 0.0)
        first_is_write = first_c == "produce_write_timeout"
        clean = [g for i, (c, g, _) in enumerate(waits) if c in (WRITE_TIMEOUTS if first_is_write else READ_TIMEOUTS) and not (i == 0 and pre is not None)]
        setting = "Net.WriteTimeout" if first_is_write else "Net.ReadTimeout"
        said = printed.get(setting)
        from_default = False
        if said is not None:
            first_t = said["value"]
            first_source = f"{fmt_setting(setting, said['value'])}, as the application printed it ({line_ref(said | {'path': inc.path})})"
        elif clean:
            first_t = _typical(clean, coarse)
            first_source = "gaps between sarama's lines"
        elif first_c in PRODUCE_TIMEOUTS:
            first_t, from_default = float(DEFAULTS[setting]), True
            first_source = f"sarama's default {fmt_setting(setting, DEFAULTS[setting])} (the log prints no value)"
        else:
            first_t, first_source = None, None
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
            if pre is not None and not inside and first_t is not None and first_g >= first_t - (1.0 if coarse else 0.05):
                # the write of the stalled request: one timeout before the line that ended its wait
                idle = max(0.0, first_g - first_t)
                value = first_source if not first_source.startswith("gaps") else f"{fmt_setting(setting, first_t)}, the value the chain's other timeouts show"
                start_bound, start_from = "write", f"the '[closing]' line minus {value}"
            else:
                if pre is not None and not inside and first_t is not None:
                    start_from = (f"the last line before the chain: {first_source} would put the write before it" if not from_default
                                  else f"the last line before the chain: sarama's default {fmt_setting(setting, first_t)} would put the write before it, so the value in use is shorter")
                if from_default or first_t is None:
                    first_t = first_g
                    first_source = "the first wait (an upper bound)"
            waits[0] = (first_c, first_g - idle, waits[0][2])
            if idle > 0:
                waits.insert(0, ("idle", idle, waits[0][2]))
        elif first_c == "idle":
            # nothing sarama logged before the error: the last line before the chain bounds the start
            start_from = "nothing marks the write: the last line before the chain"
        if first_is_write:
            write_t, write_source = first_t, first_source
            read_t = _typical([g for c, g, _ in waits if c in READ_TIMEOUTS], coarse)
            read_source = "gaps between sarama's lines" if read_t is not None else None
        else:
            read_t, read_source = first_t, first_source
            write_t = _typical([g for c, g, _ in waits if c in WRITE_TIMEOUTS], coarse)
            write_source = "gaps between sarama's lines" if write_t is not None else None
        stall -= skipped + idle
        start_estimated = bool(skipped)
        if skipped:
            start_bound, start_from = "estimated", "the first chain line minus its wait (no application line before the chain is known to be about these partitions)"
        if inside:
            # the log begins inside the chain: what came before its first line is known only from the
            # application's own figure ('send … failed after 180.85s')
            start_estimated = True
            start_bound, start_from = "estimated", "the log's first line (it begins inside the failure chain)"
            if inc.figure is not None and inc.figure > stall + (1.0 if coarse else 0.05):
                before_log = inc.figure - stall
                waits.insert(0, ("before_log", before_log, body[0]))
                stall = inc.figure
                start_bound, start_from = "application figure", f"the error's own figure for the send ({inc.figure:g} s)"
    t_to = stall_rows[-1]["ts"]
    t_from = t_to - dt.timedelta(seconds=stall)
    dial_gaps = [g for c, g, _ in waits if c == "dial_timeout"]
    md_backoffs = [r["backoff_ms"] / 1000.0 for r in stall_rows if _has(r, "sarama_metadata_retry") and r.get("backoff_ms") is not None]
    return Timing(
        waits=waits, stall=stall, idle=idle, skipped=skipped, pre_gap=pre_gap, before_log=before_log,
        start_estimated=start_estimated, t_from=t_from, t_to=t_to, cadence=cadence, read_t=read_t,
        read_source=read_source, write_t=write_t, write_source=write_source, dial_gaps=dial_gaps,
        dial_t=_typical(dial_gaps, coarse), md_backoff_t=_typical(md_backoffs, False),
        start_bound=start_bound, start_from=start_from, end_bound=inc.end_bound,
    )


def budget_table(t: Timing, retry_backoff: float) -> list[dict]:
    """One row per component of the budget: its count, the seconds as stamped, the inferred value of
    one wait (``retry_backoff``: Producer.Retry.Backoff as inferred or configured) and the estimate."""
    budget: list[dict] = []
    for key, (label, setting) in COMPONENTS.items():
        gs = [g for c, g, _ in t.waits if c == key]
        if not gs:
            continue
        each = None
        if key == "dial_timeout":
            each = t.dial_t
        elif key in READ_TIMEOUTS:
            each = t.read_t
        elif key in WRITE_TIMEOUTS:
            each = t.write_t
        elif key == "metadata_backoff":
            each = t.md_backoff_t
        elif key == "retry_backoff":
            each = retry_backoff
        budget.append({
            "component": key,
            "label": label,
            "setting": setting,
            "count": len(gs),
            "seconds": round(sum(gs), 3),  # the gaps as stamped (before_log, unseen: the application's figure)
            "each_seconds": each,  # the inferred value of one wait
            "estimated_seconds": round(len(gs) * each, 3) if each is not None else round(sum(gs), 3),
        })
    return budget
