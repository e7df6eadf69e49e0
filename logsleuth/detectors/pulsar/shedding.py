"""pulsar.load-shedding: bundle unloads the load manager ordered, per broker it shed load from,
with their cadence and the resource that was over its threshold — context for the findings that
unloads cause (see pulsar.dangling-producer-future). The verdict and the words are in
pulsar.load-shedding.toml beside this file; see docs/findings/pulsar.load-shedding.md."""

from __future__ import annotations

import datetime as dt
import re
import statistics
from dataclasses import dataclass, field

import polars as pl

from logsleuth.detectors.base import Context, Detector, evidence, rows, segment_of
from logsleuth.detectors.finding import Finding
from logsleuth.detectors.verdict import Verdict

VERDICT = Verdict.load(__file__, "pulsar.load-shedding")
_USAGE = re.compile(r"(\w+): ([\d.]+)%")


@dataclass
class SheddingFacts:
    """The unloads the shedder ordered from one broker."""

    broker: str
    unloads: int  # '[…] Unloading bundle' decisions
    bundles: list[str]  # distinct bundles, sorted
    first: dt.datetime | None
    last: dt.datetime | None
    cadence_s: float | None  # median seconds between unloads
    frequent: bool  # frequent_count or more, a median of less than frequent_cadence_s apart
    strategy: str  # the decision line's detail (the shedder's words)
    usage_pct: float | None = None  # the highest usage the shedder logged for this broker, in percent
    threshold_pct: float | None = None
    average_pct: float | None = None  # ThresholdShedder: the cluster average
    resource: str | None = None  # 3.x: the resource with the highest usage
    unload_rows: list[dict] = field(default_factory=list, repr=False)
    attempt_row: dict | None = field(default=None, repr=False)


def _resource(detail: str | None) -> str | None:
    """3.x printResourceUsage(): the resource with the highest usage."""
    found = [(name, float(v)) for name, v in _USAGE.findall(detail or "")]
    return max(found, key=lambda x: x[1])[0] if found else None


def _usage(at: pl.DataFrame) -> dict:
    """The highest usage the shedder logged for a broker, in percent (2.x prints fractions then '%')."""
    if at.height == 0:
        return {}
    last = at.sort("usage_pct", descending=True, nulls_last=True).row(0, named=True)
    u, th, avg = last["usage_pct"], last["threshold_pct"], last.get("average_pct")
    if u is not None and u <= 1.0 and (th is None or th <= 1.0):
        u, th, avg = u * 100, (th * 100 if th is not None else None), (avg * 100 if avg is not None else None)
    return {"usage_pct": u, "threshold_pct": th if u is not None else None, "average_pct": avg if u is not None else None,
            "resource": _resource(last["detail"])}


def facts(ctx: Context) -> list[SheddingFacts]:
    ev = ctx.system("pulsar")
    shed = ev.filter(pl.col("event") == "shedder_unloading")
    if shed.height == 0:
        return []
    attempts = ev.filter(pl.col("event") == "shed_attempt")
    th = VERDICT.thresholds
    out = []
    for (target,), grp in shed.sort("ts").group_by("broker", maintain_order=True):
        grp_rows = rows(grp)
        times = [r["ts"] for r in grp_rows if r["ts"] is not None]
        gaps = [(b - a).total_seconds() for a, b in zip(times, times[1:])]
        cadence = statistics.median(gaps) if gaps else None
        at = attempts.filter(pl.col("broker") == target)
        out.append(SheddingFacts(
            broker=target, unloads=len(grp_rows), bundles=sorted({r["bundle"] for r in grp_rows}),
            first=times[0] if times else None, last=times[-1] if times else None, cadence_s=cadence,
            frequent=len(times) >= th["frequent_count"] and cadence is not None and cadence < th["frequent_cadence_s"],
            strategy=grp_rows[0]["detail"] or "", unload_rows=grp_rows,
            attempt_row=at.sort("ts").row(0, named=True) if at.height else None, **_usage(at),
        ))
    return out


def finding(f: SheddingFacts) -> Finding:
    v = VERDICT
    evid = [evidence(r, v.note("unload", f)) for r in f.unload_rows[:8]]
    if f.attempt_row is not None:
        evid.insert(0, evidence(f.attempt_row, v.note("overloaded", f)))
    usage = v.phrase("usage", f) if f.usage_pct is not None else None
    return Finding(
        **v.parts(f),
        first_seen=f.first,
        last_seen=f.last,
        subjects=[
            {"bundle": r["bundle"], "at": r["ts"], "broker": r["broker"], "path": r["path"], "line": int(r["line"])}
            | ({"file": segment_of(r)} if segment_of(r) else {})
            for r in f.unload_rows
        ],
        cause={"kind": "overload", "broker": f.broker, "usage": usage, "resource": f.resource, "cadence_s": f.cadence_s, "bundles": list(f.bundles)},
        evidence=evid,
        details={"unloads": f.unloads, "cadence_s": f.cadence_s},
    )


def run(ctx: Context) -> list[Finding]:
    return [finding(f) for f in facts(ctx)]


DETECTOR = Detector(id=VERDICT.id, title=VERDICT.title, systems=("pulsar",), run=run, doc=VERDICT.doc, facts=SheddingFacts, verdict=VERDICT)
