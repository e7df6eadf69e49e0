"""``analyze --format json``: the machine contract (docs/json.md). Keys are stable."""

from __future__ import annotations

from logsleuth.safe import json_dumps

from logsleuth import __version__
from logsleuth.findings import Analysis
from logsleuth.ingest.inputs import input_json
from logsleuth.ingest.timeparse import iso_utc


def document(a: Analysis) -> dict:
    first, last = a.span
    doc = {
        "tool": "logsleuth",
        "version": __version__,
        "summary": {
            "files": len(a.inputs),
            "lines": a.lines,
            "records": a.records,
            "events": a.events.height,
            "first_ts": iso_utc(first),
            "last_ts": iso_utc(last),
            "since": iso_utc(a.since),
            "until": iso_utc(a.until),
            "findings": len(a.findings),
            "incidents": len(a.incidents),
            "ignored": len(a.ignored),
        },
        "inputs": [input_json(r) for r in a.inputs],
        "incidents": [i.to_json(a.findings) for i in a.incidents],
        "findings": [f.to_json() for f in a.findings],
    }
    if a.ignored:  # kept off the report by --ignore: said, not silently dropped
        doc["ignored"] = [{"id": f.id, "title": str(f.title), "rule": rule} for f, rule in a.ignored]
    if a.failures:  # detectors that raised on these inputs: their findings are missing
        doc["detector_failures"] = [{"detector": x.detector, "error": x.error} for x in a.failures]
    return doc


def dumps(a: Analysis) -> str:
    return json_dumps(document(a), indent=2) + "\n"
