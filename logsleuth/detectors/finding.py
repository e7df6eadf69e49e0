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

from logsleuth.ingest.timeparse import iso_utc

SEVERITIES = ("critical", "high", "medium", "low", "info")
SEVERITY_RANK = {s: i for i, s in enumerate(SEVERITIES)}  # 0 is the worst


@dataclass
class Evidence:
    path: str
    line: int
    text: str | None  # None until the run fills it in (detectors.base.resolve_texts): a line quoted from an events-table row
    ts: dt.datetime | None = None
    note: str = ""  # why this line is quoted ("the unload", "first rejected retry", ...)
    message: str = ""  # the message the layout isolated in it ("" when unknown): a narrow terminal keeps it whole (not in JSON: text is the line)

    def to_json(self) -> dict:
        d: dict[str, Any] = {"path": self.path, "line": self.line, "text": self.text, "ts": iso_utc(self.ts)}
        if self.note:
            d["note"] = self.note
        return d


@dataclass
class Finding:
    id: str
    severity: str
    title: str
    root_cause: str
    confidence: float
    confidence_reasons: list[str] = field(default_factory=list)
    first_seen: dt.datetime | None = None
    last_seen: dt.datetime | None = None
    subjects: list[dict] = field(default_factory=list)
    cause: dict | None = None
    evidence: list[Evidence] = field(default_factory=list)
    remediation: list[str] = field(default_factory=list)
    references: list[str] = field(default_factory=list)
    ruled_out: list[str] = field(default_factory=list)
    details: dict = field(default_factory=dict)  # detector-specific extras (budget tables, counts)

    def __post_init__(self) -> None:
        if self.severity not in SEVERITY_RANK:
            raise ValueError(f"unknown severity {self.severity!r}")
        self.confidence = max(0.0, min(1.0, round(float(self.confidence), 2)))

    @property
    def rank_key(self) -> tuple:
        return (SEVERITY_RANK[self.severity], -self.confidence, self.first_seen or dt.datetime.max.replace(tzinfo=dt.timezone.utc))

    def to_json(self) -> dict:
        return {
            "id": self.id,
            "severity": self.severity,
            "title": self.title,
            "root_cause": self.root_cause,
            "confidence": self.confidence,
            "confidence_reasons": list(self.confidence_reasons),
            "first_seen": iso_utc(self.first_seen),
            "last_seen": iso_utc(self.last_seen),
            "subjects": [_jsonable(s) for s in self.subjects],
            "cause": _jsonable(self.cause) if self.cause is not None else None,
            "evidence": [e.to_json() for e in self.evidence],
            "remediation": list(self.remediation),
            "references": list(self.references),
            "ruled_out": list(self.ruled_out),
            "details": _jsonable(self.details),
        }


def _jsonable(v: Any) -> Any:
    if isinstance(v, dt.datetime):
        return iso_utc(v)
    if isinstance(v, dict):
        return {k: _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, float):
        return round(v, 3)
    return v
