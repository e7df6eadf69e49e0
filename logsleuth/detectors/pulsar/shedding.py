"""pulsar.load-shedding: bundle unloads the load manager ordered, per broker it shed load from,
with their cadence and the resource that was over its threshold — context for the findings that
unloads cause (see pulsar.dangling-producer-future). docs/findings/pulsar.load-shedding.md."""

from __future__ import annotations

import datetime as dt
import re
import statistics

import polars as pl

from logsleuth.detectors.base import Context, Detector, evidence, fmt_duration, fmt_time, plural, rows, safe, segment_of
from logsleuth.detectors.finding import Finding

FREQUENT = dt.timedelta(minutes=60)  # unloads more often than this, repeatedly, deserve attention
_USAGE = re.compile(r"(\w+): ([\d.]+)%")


def _resource(detail: str | None) -> tuple[str | None, float | None]:
    """3.x printResourceUsage(): the resource with the highest usage."""
    if not detail:
        return None, None
    found = [(name, float(v)) for name, v in _USAGE.findall(detail)]
    if not found:
        return None, None
    return max(found, key=lambda x: x[1])


def run(ctx: Context) -> list[Finding]:
    ev = ctx.system("pulsar")
    shed = ev.filter(pl.col("event") == "shedder_unloading")
    if shed.height == 0:
        return []
    attempts = ev.filter(pl.col("event") == "shed_attempt")
    out: list[Finding] = []
    for (target,), grp in shed.sort("ts").group_by("broker", maintain_order=True):
        grp_rows = rows(grp)
        times = [r["ts"] for r in grp_rows if r["ts"] is not None]
        gaps = [(b - a).total_seconds() for a, b in zip(times, times[1:])]
        cadence = statistics.median(gaps) if gaps else None
        at = attempts.filter(pl.col("broker") == target)
        usage_txt = None
        resource = None
        if at.height:
            last = at.sort("usage_pct", descending=True, nulls_last=True).row(0, named=True)  # the highest usage it logged
            u, th, avg = last["usage_pct"], last["threshold_pct"], last.get("average_pct")
            if u is not None and u <= 1.0 and (th is None or th <= 1.0):
                u = u * 100  # 2.x prints fractions followed by '%'
                th = th * 100 if th is not None else None
                avg = avg * 100 if avg is not None else None
            resource, _ = _resource(last["detail"])
            if avg is not None and th is not None:  # ThresholdShedder: over the cluster average by more than the threshold
                usage_txt = f"{u:.0f}% > average {avg:.0f}% + threshold {th:.0f}%"
            else:
                usage_txt = f"{u:.0f}%" + (f" > threshold {th:.0f}%" if th is not None else "")
        bundles = sorted({r["bundle"] for r in grp_rows})
        frequent = len(times) >= 3 and cadence is not None and cadence < FREQUENT.total_seconds()
        sev = "low" if frequent else "info"
        n = len(grp_rows)
        # 'unloaded 3 bundles' when three were; one bundle unloaded twice is '1 bundle, 2 times'
        what = plural(n, "bundle") if len(bundles) == n else f"{plural(len(bundles), 'bundle')} {n} times"
        title = f"Load shedding unloaded {what} from broker {safe(target)}" + (
            f" every ~{fmt_duration(cadence)}" if cadence else ""
        )
        why = f"resource usage up to {usage_txt}" if usage_txt else "the shedder's reason is not in the logs"
        if resource:
            why += f" (highest: {resource})"
        root = (
            f"The load manager's shedder ({safe(grp_rows[0]['detail'])}) found broker {safe(target)} overloaded ({why}) and unloaded "
            f"{what} between {fmt_time(times[0] if times else None)} and {fmt_time(times[-1] if times else None)}"
            + (f", a median of {fmt_duration(cadence)} apart" if cadence else "")
            + ". Every unload disconnects the bundle's producers and consumers, which must look the topic up and reconnect; "
            "on Pulsar 2.4–2.5.1 a reconnect that lands mid-unload can leave a producer stuck (see pulsar.dangling-producer-future)."
        )
        subjects = [
            {"bundle": r["bundle"], "at": r["ts"], "broker": r["broker"], "path": r["path"], "line": int(r["line"])}
            | ({"file": segment_of(r)} if segment_of(r) else {})
            for r in grp_rows
        ]
        evid = [evidence(r, "unload decision") for r in grp_rows[:8]]
        if at.height:
            evid.insert(0, evidence(at.sort("ts").row(0, named=True), "the shedder finds the broker overloaded"))
        reasons = [f"+ {len(grp_rows)} '[…] Unloading bundle' {'decision' if len(grp_rows) == 1 else 'decisions'} by the load manager"]
        if usage_txt:
            reasons.append(f"+ the shedder logged the usage that triggered it ({usage_txt})")
        out.append(
            Finding(
                id="pulsar.load-shedding",
                severity=sev,
                title=title,
                root_cause=root,
                confidence=0.9 if usage_txt else 0.75,
                confidence_reasons=reasons,
                first_seen=times[0] if times else None,
                last_seen=times[-1] if times else None,
                subjects=subjects,
                cause={"kind": "overload", "broker": target, "usage": usage_txt, "resource": resource, "cadence_s": cadence, "bundles": bundles},
                evidence=evid,
                remediation=[
                    f"Find out why broker {safe(target)} runs over the threshold ({resource or 'CPU, memory, direct memory or bandwidth'}): add capacity or spread the bundles (split hot bundles).",
                    "If unloads keep disrupting clients, raise loadBalancerBrokerOverloadedThresholdPercentage or lengthen loadBalancerSheddingIntervalMinutes / loadBalancerSheddingGracePeriodMinutes; loadBalancerSheddingEnabled=false stops it altogether.",
                    "On Pulsar 2.4–2.5.1 upgrade to 2.5.2+ first: there every shedding cycle can strand reconnecting producers.",
                ],
                references=["Pulsar load manager: ModularLoadManagerImpl / OverloadShedder / ThresholdShedder"],
                ruled_out=[],
                details={"unloads": len(grp_rows), "cadence_s": cadence},
            )
        )
    return out


DETECTOR = Detector(
    id="pulsar.load-shedding",
    title="Pulsar load shedding: bundle unloads, their cadence and the resource over threshold",
    systems=("pulsar",),
    run=run,
    doc="docs/findings/pulsar.load-shedding.md",
)
