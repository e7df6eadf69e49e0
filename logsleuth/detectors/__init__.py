"""Detectors: from the events table on one timeline to findings.

One package per system (``pulsar/``, ``kafka/``, ``sarama/``) holds that system's diagnoses and
their parts; ``base.py`` is what every detector gets (``Context``) and the helpers they share,
``finding.py`` what they give (``Finding``, ``Evidence``). Every module of a system package that
defines ``DETECTOR`` is a detector (found automatically, so adding one touches no shared file).
Order: by system, then module name."""

from __future__ import annotations

import importlib
import pkgutil

import polars as pl

from logsleuth.detectors.base import Context, Detector
from logsleuth.errors import LogsleuthError
from logsleuth.detectors.finding import Finding


def all_detectors(systems: set[str] | None = None) -> list[Detector]:
    """Every detector, or those of the system packages named in ``systems`` (a run imports only the
    detectors of the systems its events come from: a detector of a system with no events has
    nothing to read, and importing all of them is a third of a small run's start-up)."""
    found: list[Detector] = []
    packages = sorted((m.name for m in pkgutil.iter_modules(__path__) if m.ispkg), key=str)
    for system in packages:
        if systems is not None and system not in systems:
            continue
        package = importlib.import_module(f"{__name__}.{system}")
        for mod in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
            module = importlib.import_module(f"{package.__name__}.{mod.name}")
            det = getattr(module, "DETECTOR", None)
            if isinstance(det, Detector):
                found.append(det)
    return found


def _chosen(det: Detector, only: list[str]) -> bool:
    return det.id in only or any(det.id.startswith(o.rstrip("*")) for o in only if o.endswith("*"))


def check_names(only: list[str] | None) -> None:
    """A --detector name that selects nothing is a mistake, not an all-clear."""
    if not only:
        return
    dets = all_detectors()
    for o in only:
        if not any(_chosen(d, [o]) for d in dets):
            known = ", ".join(d.id for d in dets)
            raise LogsleuthError(f"no detector '{o}' (known: {known}; a prefix needs a trailing *)")


def run_all(ctx: Context, only: list[str] | None = None) -> list[Finding]:
    """Every chosen detector's findings. A detector that raises on these inputs (a bug, an odd
    shape of log) fails alone: its failure is kept in ``ctx.failures`` (the reports say it in one
    line) and the others' findings stand. A user's error (LogsleuthError) still ends the run, and
    ``LOGSLEUTH_DEBUG=1`` lets the detector's exception through with its traceback."""
    import os

    from logsleuth.detectors.facts import DetectorFailure

    findings: list[Finding] = []
    present = set(ctx.events.select(pl.col("system").unique())["system"].drop_nulls().to_list())
    for det in all_detectors(present):
        if only and not _chosen(det, only):
            continue
        try:
            findings.extend(det.run(ctx))
        except (LogsleuthError, MemoryError):
            raise
        except Exception as e:  # noqa: BLE001 - one detector's failure must not hide the others' findings
            if os.environ.get("LOGSLEUTH_DEBUG"):
                raise
            text = str(e).splitlines()[0] if str(e) else ""
            ctx.failures.append(DetectorFailure(det.id, f"{type(e).__name__}: {text}"[:300]))
    return findings
