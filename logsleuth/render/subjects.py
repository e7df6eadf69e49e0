"""A finding's subjects for people: the few key columns that fit (the rest in JSON, ``-v`` or a
details block), values in short forms, and one label per subject for the verdict and the chart."""

from __future__ import annotations

import datetime as dt

from logsleuth.detectors.base import fmt_duration
from logsleuth.detectors.finding import Finding
from logsleuth.safe import visible

# the columns worth a glance, in the order a person reads them; other keys are details
KEY_COLUMNS = [
    "topic", "producer_id", "topic_partition", "bundle", "exception", "node", "address", "broker", "client_id",
    "records", "batches", "count", "attempts", "stall_seconds", "stuck_for", "duration_s", "still_stuck", "recovered",
    "resolved_by", "kind", "at", "first_seen", "last_seen", "from", "to", "client", "connection", "path",
]
HEADERS = {
    "producer_id": "producer", "topic_partition": "partition", "client_id": "client id", "stall_seconds": "stalled",
    "duration_s": "for", "still_stuck": "still stuck", "first_seen": "first", "last_seen": "last", "stuck_for": "stuck for",
    "resolved_by": "ended by", "client": "client log", "path": "log",
}
_SECONDS = {"stall_seconds", "duration_s"}


def cell(key: str, v, short=lambda s: s) -> str:
    """A subject's value as shown in a table: times as HH:MM:SS (the date is in the finding's
    span), seconds as durations, paths shortened (``short``)."""
    if v is None:
        return ""
    if isinstance(v, dt.datetime):
        from logsleuth.render import clock

        return clock.clock(v)
    if isinstance(v, bool):
        return "yes" if v else "no"
    if key in _SECONDS and isinstance(v, (int, float)):
        return fmt_duration(v)
    if key in ("path", "client", "file"):
        return short(str(v))
    return visible(str(v))


def all_columns(f: Finding) -> list[str]:
    """Every scalar key of the subjects, in first-seen order."""
    keys: list[str] = []
    for s in f.subjects:
        for k, v in s.items():
            if k not in keys and not isinstance(v, (list, dict)):
                keys.append(k)
    return keys


def key_columns(f: Finding) -> list[str]:
    present = set(all_columns(f))
    return [k for k in KEY_COLUMNS if k in present and any(s.get(k) is not None for s in f.subjects)]


def common_prefix(values: list[str], minimum: int = 8) -> str:
    """A prefix ending in '/' that every value shares (``persistent://public/default/``), '' if
    none worth taking out."""
    vals = [v for v in values if v]
    if len(vals) < 1 or len(vals) != len(values):
        return ""
    a, b = min(vals), max(vals)
    i = 0
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    cut = a[:i].rfind("/")
    p = a[: cut + 1] if cut >= 0 else ""
    return p if len(p) >= minimum and all(len(v) > len(p) for v in vals) else ""


class Table:
    """The compact subjects table: ``shared`` holds (header, value) of key columns every subject
    has alike (said once above the table), ``columns`` the headers, ``rows`` the cells, ``rest``
    the keys left out."""

    def __init__(self, f: Finding, width: int | None = None, short=lambda s: s, limit: int | None = None):
        subjects = f.subjects[:limit] if limit else f.subjects
        keys = key_columns(f)
        self.shared: list[tuple[str, str]] = []
        shared_keys: set[str] = set()
        cols: list[str] = []
        for k in keys:
            vals = {cell(k, s.get(k), short) for s in f.subjects}
            if len(f.subjects) > 1 and len(vals) == 1:
                self.shared.append((HEADERS.get(k, k.replace("_", " ")), vals.pop()))
                shared_keys.add(k)
            else:
                cols.append(k)
        cells = {k: [cell(k, s.get(k), short) for s in subjects] for k in cols}
        heads = {k: HEADERS.get(k, k.replace("_", " ")) for k in cols}
        for k in cols:  # take the shared start of long values out into the header
            p = common_prefix(cells[k])
            if p:
                cells[k] = [v[len(p):] for v in cells[k]]
                heads[k] = f"{heads[k]} ({p}…)"
        chosen: list[str] = []
        used = 0
        for k in cols:
            w = max(len(heads[k]), *(len(v) for v in cells[k])) if cells[k] else len(heads[k])
            if width is not None and chosen and used + w + 2 > width:
                continue
            chosen.append(k)
            used += w + 2
        self.keys = chosen
        self.columns = [heads[k] for k in chosen]
        self.rows = [[cells[k][i] for k in chosen] for i in range(len(subjects))]
        self.rest = [k for k in all_columns(f) if k not in chosen and k not in shared_keys]
        self.more = len(f.subjects) - len(subjects)


def label(s: dict, short=lambda x: x) -> str:
    """One subject in a few words: its topic and producer, partition, bundle, node or client."""
    topic, pid = s.get("topic"), s.get("producer_id")
    if topic:
        return visible(str(topic)) + (f" (producer {pid})" if pid is not None else "")
    if s.get("topic_partition"):
        return visible(str(s["topic_partition"]))
    if s.get("bundle"):
        return visible(str(s["bundle"]))
    if s.get("node") is not None or s.get("address"):
        node = f"node {s['node']}" if s.get("node") is not None else ""
        addr = visible(str(s.get("address") or ""))
        who = f"{node} ({addr})" if node and addr else node or addr
        if s.get("client_id"):
            who = f"{visible(str(s['client_id']))} → {who}"
        return who
    if s.get("client_id"):
        return visible(str(s["client_id"])) + (f" ({short(str(s['path']))})" if s.get("path") else "")
    if s.get("path"):
        return short(str(s["path"]))
    if s.get("logs"):  # a broker known by its log only (its lines name no node id)
        return short(str(s["logs"][0]))
    return ", ".join(f"{k}={visible(str(v))}" for k, v in list(s.items())[:2])


def labels(f: Finding, short=lambda x: x) -> tuple[list[str], str]:
    """Every subject's label with the prefix they share taken out, and that prefix."""
    out = list(dict.fromkeys(label(s, short) for s in f.subjects))  # one label per thing named
    p = common_prefix(out) if len(out) > 1 else ""
    return ([x[len(p):] for x in out] if p else out), p
