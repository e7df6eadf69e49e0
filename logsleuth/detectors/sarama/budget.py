"""The time budget of one sarama incident, for sarama.retry-redial-stall: every gap between the
stall's lines attributed to a wait (``measure``: the stall, the idle time before the send, the part
before the log's first line, the typical read / write / dial / back-off waits) and the budget
table of the waits per component (``budget_table``).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

import polars as pl

from logsleuth.detectors.base import line_ref
from logsleuth.detectors.sarama.app_only import _unseen_waits
from logsleuth.detectors.sarama.config import DEFAULTS
from logsleuth.detectors.sarama.format import fmt_setting
from logsleuth.detectors.sarama.chain import _has, _seconds
from logsleuth.detectors.sarama.incident import Incident
from logsleuth.detectors.sarama.waits import (
    COMPONENTS, PRODUCE_TIMEOUTS, READ_TIMEOUTS, WRITE_TIMEOUTS, _cadence, _classify_gap, _opening_timeout, _typical,
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
    lead: float  # the produce request's wait before the chain's first line, estimated (no line before the chain bounds it)
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
    start_bound: str = "last line before the chain"  # write | application figure | last line before the chain | first line of the chain | estimated
    start_how: dict = field(default_factory=dict)  # how that bound was found: {"way": …} and its values (worded by the verdict)
    end_bound: str = "error returned"


def measure(inc: Incident, df: pl.DataFrame, printed: dict | None = None) -> Timing | None:
    """The waits of the incident's stall and its bounds; None when a stall read from the application's
    lines alone (sarama's Logger off) is no stall.

    The stall starts at the write of the stalled request: when the chain opens with the produce
    request timing out (``[closing] because read tcp …: i/o timeout``), one ``Net.ReadTimeout`` before
    that line (``Net.WriteTimeout`` for ``write tcp``) — the value the application printed
    (``printed``, see printed.py), else the value the chain's other timeouts show, else sarama's
    default — unless that would put it before the last line before the chain, which then bounds it.
    When no line before the chain bounds it (none is known to be about these partitions), the same
    arithmetic from that line is the start's estimate, bounded by the log's first line (``estimated``).
    With sarama's Logger off, the application's own figure for the failing send bounds it, else its
    last line before the error. The time from that last line to the write is ``idle`` (listed in the
    budget, not part of the stall)."""
    printed = printed or {}
    pre, stall_rows = inc.pre, inc.stall_rows
    cadence = _cadence(df, stall_rows[0]["idx"]) if pre is not None else None
    log_first = df.filter(pl.col("ts").is_not_null()).head(1)["ts"].to_list()
    m = _unseen(inc, cadence) if inc.unseen else _logged(inc, printed, log_first[0] if log_first else None)
    if m is None:
        return None
    waits, stall = m["waits"], m["stall"]
    t_to = stall_rows[-1]["ts"]
    t_from = t_to - dt.timedelta(seconds=stall)
    dial_gaps = [g for c, g, _ in waits if c == "dial_timeout"]
    md_backoffs = [r["backoff_ms"] / 1000.0 for r in stall_rows if _has(r, "sarama_metadata_retry") and r.get("backoff_ms") is not None]
    return Timing(
        waits=waits, stall=stall, idle=m["idle"], skipped=m.get("skipped", 0.0), pre_gap=m.get("pre_gap", 0.0), before_log=m.get("before_log"),
        lead=m.get("lead", 0.0),
        start_estimated=m["start_estimated"], t_from=t_from, t_to=t_to, cadence=cadence, read_t=m.get("read_t"),
        read_source=m.get("read_source"), write_t=m.get("write_t"), write_source=m.get("write_source"), dial_gaps=dial_gaps,
        dial_t=_typical(dial_gaps, inc.coarse), md_backoff_t=_typical(md_backoffs, False),
        start_bound=m["start_bound"], start_how=m["start_how"], end_bound=inc.end_bound,
    )


def _unseen(inc: Incident, cadence: float | None) -> dict | None:
    """sarama's Logger off: only the application's lines, its last line before the error and the error."""
    assert inc.err_row is not None, "an unseen incident has a kind only from its returned error (incident._read)"
    unseen_budget = _unseen_waits(inc.pre, inc.err_row, inc.figure, cadence, inc.coarse)
    if unseen_budget is None:
        return None
    waits, idle, stall, start_estimated = unseen_budget
    if inc.figure is not None:
        start_bound, start_how = "application figure", {"way": "figure", "figure_s": inc.figure}
    else:
        start_bound, start_how = "last line before the chain", {"way": "app last line"}
    return {"waits": waits, "idle": idle, "stall": stall, "start_estimated": start_estimated, "start_bound": start_bound, "start_how": start_how}


def _first_timeout(inc: Incident, waits: list, printed: dict, lead: bool = False) -> dict:
    """The produce request's own timeout, which the first wait holds: the setting the error text names,
    its value (printed by the application, else the chain's other timeouts, else sarama's default)
    and where that value came from. ``lead``: the first wait is the chain's opening line's own, with
    no line before it (its length is not in the log)."""
    pre, coarse = inc.pre, inc.coarse
    first_c = waits[0][0] if waits else None
    first_is_write = first_c == "produce_write_timeout"
    clean = [g for i, (c, g, _) in enumerate(waits) if c in (WRITE_TIMEOUTS if first_is_write else READ_TIMEOUTS) and not (i == 0 and (pre is not None or lead))]
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
    return {"is_write": first_is_write, "setting": setting, "t": first_t, "source": first_source, "from_default": from_default}


def _logged(inc: Incident, printed: dict, log_first: dt.datetime | None = None) -> dict:
    """sarama's Logger on: every gap between the stall's lines attributed to a wait, and the stall's
    start at the write of the stalled request when the first wait shows it (see ``measure``;
    ``log_first``: the stamp of the log's first line)."""
    pre, stall_rows, coarse, inside = inc.pre, inc.stall_rows, inc.coarse, inc.inside
    waits: list[tuple[str, float, dict]] = []
    idle = skipped = pre_gap = lead_s = 0.0  # skipped: time cut from the start when the line before the chain is an old sarama line
    start_bound, start_how = "last line before the chain", {"way": "no mark"}
    for k in range(1, len(stall_rows)):
        prev, cur = stall_rows[k - 1], stall_rows[k]
        waits.append((_classify_gap(prev, cur, first_wait=(k == 1 and pre is not None and not inside)), _seconds(prev["ts"], cur["ts"]), cur))
    stall = _seconds(stall_rows[0]["ts"], stall_rows[-1]["ts"]) if len(stall_rows) > 1 else 0.0
    # no line before the chain bounds it, and its first line ends the produce request's own wait: that
    # wait (one timeout, from the write) is not in the log, and is estimated below
    lead = _opening_timeout(stall_rows) if pre is None and not inside else None
    if lead is not None:
        waits.insert(0, (lead, 0.0, stall_rows[0]))
    # the first wait holds the produce request's own timeout and the time before the send began
    first_c, first_g = (waits[0][0], waits[0][1]) if waits else (None, 0.0)
    ft = _first_timeout(inc, waits, printed, lead is not None)
    setting, first_t, first_source, from_default = ft["setting"], ft["t"], ft["source"], ft["from_default"]
    pre_is_app = pre is not None and bool(pre.get("ok"))
    if pre is not None and not pre_is_app and waits and not inside:
        expected = first_t if first_c in PRODUCE_TIMEOUTS else 0.0 if first_c == "idle" else None
        if expected is not None and first_g > expected + 2.0:
            skipped, pre_gap = first_g - expected, first_g
            if first_c == "idle":
                waits.pop(0)
            else:
                waits[0] = (waits[0][0], expected, waits[0][2])  # the first wait (first_c), cut to its timeout
            first_c, first_g = None, 0.0
    estimated = bool(skipped)
    if lead is not None and first_t is not None:
        # the write of the stalled request: at least one timeout before the line that ended its wait
        # (the read deadline is set once the request is written), but not before the log's first line
        est, log_start = first_t, False
        if log_first is not None and _seconds(log_first, stall_rows[0]["ts"]) < first_t:
            est, log_start = max(0.0, _seconds(log_first, stall_rows[0]["ts"])), True
        waits[0] = (lead, est, stall_rows[0])
        stall, lead_s = stall + est, est
        estimated, start_bound = True, "estimated"
        start_how = ({"way": "timeout before", "source": first_source} if not first_source.startswith("gaps")
                     else {"way": "timeout before gaps", "setting": setting, "value_s": first_t}) | {"log_start": log_start}
    elif first_c in PRODUCE_TIMEOUTS:
        if pre is not None and not inside and first_t is not None and first_g >= first_t - (1.0 if coarse else 0.05):
            # the write of the stalled request: one timeout before the line that ended its wait
            idle = max(0.0, first_g - first_t)
            start_bound = "write"
            start_how = ({"way": "write", "source": first_source} if not first_source.startswith("gaps")
                         else {"way": "write gaps", "setting": setting, "value_s": first_t})
        else:
            if pre is not None and not inside and first_t is not None:
                start_how = ({"way": "before write", "source": first_source} if not from_default
                             else {"way": "before write default", "setting": setting, "value_s": first_t})
            if from_default or first_t is None:
                first_t = first_g
                first_source = "the first wait (an upper bound)"
        waits[0] = (first_c, first_g - idle, waits[0][2])
        if idle > 0:
            waits.insert(0, ("idle", idle, waits[0][2]))
    elif first_c == "idle":
        # nothing sarama logged before the error: the last line before the chain bounds the start
        start_how = {"way": "idle"}
    if pre is None and not inside and start_bound == "last line before the chain":
        # no line before the chain at all: the stall is measured from the chain's own first line
        start_bound, start_how = "first line of the chain", {"way": "chain start"}
    m = {"waits": waits, "idle": idle, "skipped": skipped, "pre_gap": pre_gap, "before_log": None, "lead": lead_s,
         "stall": stall - (skipped + idle), "start_estimated": estimated, "start_bound": start_bound, "start_how": start_how}
    m |= _typical_timeouts(waits, ft["is_write"], first_t, first_source, coarse)
    if skipped:
        m["start_bound"], m["start_how"] = "estimated", {"way": "skipped"}
    if inside:
        _inside(inc, m)
    return m


def _typical_timeouts(waits: list, first_is_write: bool, first_t: float | None, first_source: str | None, coarse: bool) -> dict:
    """Net.ReadTimeout and Net.WriteTimeout as the waits show them, and where each came from."""
    if first_is_write:
        read_t = _typical([g for c, g, _ in waits if c in READ_TIMEOUTS], coarse)
        return {"write_t": first_t, "write_source": first_source, "read_t": read_t,
                "read_source": "gaps between sarama's lines" if read_t is not None else None}
    write_t = _typical([g for c, g, _ in waits if c in WRITE_TIMEOUTS], coarse)
    return {"read_t": first_t, "read_source": first_source, "write_t": write_t,
            "write_source": "gaps between sarama's lines" if write_t is not None else None}


def _inside(inc: Incident, m: dict) -> None:
    """The log begins inside the chain: what came before its first line is known only from the
    application's own figure ('send … failed after 180.85s')."""
    m["start_estimated"] = True
    m["start_bound"], m["start_how"] = "estimated", {"way": "inside"}
    if inc.figure is not None and inc.figure > m["stall"] + (1.0 if inc.coarse else 0.05):
        m["before_log"] = inc.figure - m["stall"]
        m["waits"].insert(0, ("before_log", m["before_log"], inc.body[0]))
        m["stall"] = inc.figure
        m["start_bound"], m["start_how"] = "application figure", {"way": "figure", "figure_s": inc.figure}


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
