"""A finding: what a detector concludes, with the evidence that proves it.

A finding names a root cause in plain words, the entities it affected (*subjects*), the event it
links them to (*cause*), how sure it is and why (*confidence* and its reasons), the lines a human
would quote in a postmortem (*evidence*: path, line, text), what to do (*remediation*), where to
read more (*references*), and the hypotheses the detector checked and rejected (*ruled_out*).
The JSON form is the machine contract documented in docs/json.md.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from logsleuth.detectors.words import UTC, Clock, Prose, Text, render
from logsleuth.ingest.timeparse import iso_utc

SEVERITIES = ("critical", "high", "medium", "low", "info")
SEVERITY_RANK = {s: i for i, s in enumerate(SEVERITIES)}  # 0 is the worst


@dataclass
class Evidence:
    path: str
    line: int
    text: str | None  # None until the run fills it in (detectors.base.resolve_texts): a line quoted from an events-table row
    ts: dt.datetime | None = None
    note: Prose = ""  # why this line is quoted ("the unload", "first rejected retry", ...)
    message: str = ""  # the message the layout isolated in it ("" when unknown): a narrow terminal keeps it whole (not in JSON: text is the line)

    def to_json(self) -> dict:
        d: dict[str, Any] = {"path": self.path, "line": self.line, "text": self.text, "ts": iso_utc(self.ts)}
        if self.note:
            d["note"] = render(self.note)
        return d


@dataclass
class Finding:
    id: str
    severity: str
    title: Prose
    root_cause: Prose
    confidence: float
    confidence_reasons: list[Prose] = field(default_factory=list)
    first_seen: dt.datetime | None = None
    last_seen: dt.datetime | None = None
    subjects: list[dict] = field(default_factory=list)
    cause: dict | None = None
    evidence: list[Evidence] = field(default_factory=list)
    remediation: list[Prose] = field(default_factory=list)
    references: list[Prose] = field(default_factory=list)
    ruled_out: list[Prose] = field(default_factory=list)
    details: dict = field(default_factory=dict)  # detector-specific extras (budget tables, counts)
    start_estimated: bool = False  # first_seen is an estimate, not a line's stamp (the reports say so)

    def __post_init__(self) -> None:
        if self.severity not in SEVERITY_RANK:
            raise ValueError(f"unknown severity {self.severity!r}")
        self.confidence = max(0.0, min(1.0, round(float(self.confidence), 2)))

    @property
    def rank_key(self) -> tuple:
        return (SEVERITY_RANK[self.severity], -self.confidence, self.first_seen or dt.datetime.max.replace(tzinfo=dt.timezone.utc))

    def worded(self, clock: Clock = UTC) -> "Finding":
        """A copy whose prose is plain strings, its times shown by ``clock`` (the display zone of a
        renderer; JSON renders in UTC). Times as data (first_seen, subjects, …) stay datetimes."""
        from dataclasses import replace

        return replace(
            self,
            title=render(self.title, clock),
            root_cause=render(self.root_cause, clock),
            confidence_reasons=[render(r, clock) for r in self.confidence_reasons],
            remediation=[render(r, clock) for r in self.remediation],
            references=[render(r, clock) for r in self.references],
            ruled_out=[render(r, clock) for r in self.ruled_out],
            evidence=[replace(e, note=render(e.note, clock)) if isinstance(e.note, Text) else e for e in self.evidence],
            details=_worded(self.details, clock),
        )

    def to_json(self) -> dict:
        d = {
            "id": self.id,
            "severity": self.severity,
            "title": render(self.title),
            "root_cause": render(self.root_cause),
            "confidence": self.confidence,
            "confidence_reasons": [render(r) for r in self.confidence_reasons],
            "first_seen": iso_utc(self.first_seen),
            "last_seen": iso_utc(self.last_seen),
            "subjects": [_jsonable(s) for s in self.subjects],
            "cause": _jsonable(self.cause) if self.cause is not None else None,
            "evidence": [e.to_json() for e in self.evidence],
            "remediation": [render(r) for r in self.remediation],
            "references": [render(r) for r in self.references],
            "ruled_out": [render(r) for r in self.ruled_out],
            "details": _jsonable(self.details),
        }
        if self.start_estimated:  # only then: the key is new, and most findings' starts are a line's stamp
            d["first_seen_estimated"] = True
        return d


def _worded(v: Any, clock: Clock) -> Any:
    if isinstance(v, Text):
        return v.render(clock)
    if isinstance(v, dict):
        return {k: _worded(x, clock) for k, x in v.items()}
    if isinstance(v, list):
        return [_worded(x, clock) for x in v]
    return v


def _jsonable(v: Any) -> Any:
    if isinstance(v, Text):
        return v.render(UTC)
    if isinstance(v, dt.datetime):
        return iso_utc(v)
    if isinstance(v, dict):
        return {k: _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, float):
        return round(v, 3)
    return v
