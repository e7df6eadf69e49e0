"""Detectors: every module of this package that defines ``DETECTOR`` is one (found automatically,
so adding a detector touches no shared file). Order: by module name."""

from __future__ import annotations

import importlib
import pkgutil

from logsleuth.detectors.base import Context, Detector
from logsleuth.errors import LogsleuthError
from logsleuth.findings import Finding, rank


def all_detectors() -> list[Detector]:
    found: list[Detector] = []
    for mod in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if mod.name.startswith("_") or mod.name == "base":
            continue
        module = importlib.import_module(f"{__name__}.{mod.name}")
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
    findings: list[Finding] = []
    for det in all_detectors():
        if only and not _chosen(det, only):
            continue
        findings.extend(det.run(ctx))
    return rank(findings)
