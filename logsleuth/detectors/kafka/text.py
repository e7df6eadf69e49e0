"""What the Kafka findings say alike: how an episode's broker and client are named and its
trouble summed up, the ``cause`` object of a finding linked to an episode, the lines quoted as its
evidence (``quote`` finds the continuation line that holds a Kafka text), the one wording of an
expiry total, and the references. Used by kafka_outage, kafka_delivery, kafka_buffer, kafka_callback.
"""

from __future__ import annotations

import datetime as dt
import re

import polars as pl

from logsleuth.detectors.kafka.model import Model
from logsleuth.detectors.base import evidence, plural, safe
from logsleuth.detectors.finding import Evidence
from logsleuth.detectors.words import Prose

REFERENCES = [
    "KIP-91 (Kafka 2.1): delivery.timeout.ms bounds the time a record may wait for delivery; default 120000 ms",
    "Kafka producer configs: retries, retry.backoff.ms, reconnect.backoff.ms, reconnect.backoff.max.ms, request.timeout.ms",
]
LEGACY_REFERENCE = (
    "Kafka <=2.0 producer (ProducerBatch): a batch expires in the accumulator once it has waited longer than "
    "request.timeout.ms (default 30000 ms); default retries 0"
)


def lost_text(records: int, batches: int) -> str:
    """'209 records in 8 batches': the one wording of an expiry total, used by every finding."""
    return f"{plural(records, 'record')} in {plural(batches, 'batch', 'batches')}"


def quote(row: dict, needle: str, note: Prose = "") -> Evidence:
    """The line of a record that holds ``needle`` (a regex): the record's first line, or the
    continuation line (a ``Caused by:``, the exception line) where the Kafka text actually is."""
    msg = row.get("msg") or ""
    lines = msg.split("\n")
    spans_lines = row.get("line_end") is not None and int(row["line_end"]) > int(row["line"])
    for i, text in enumerate(lines):
        if re.search(needle, text):
            # the i-th message line is the i-th file line only when the record spans file lines
            # (a JSON envelope's stack trace is one file line holding several message lines)
            if i == 0 or not spans_lines or int(row["line"]) + i > int(row["line_end"]):
                return evidence(row, note)
            return Evidence(path=row.get("file") or row["path"], line=int(row["line"]) + i, text=text.rstrip(), ts=row.get("ts"), note=note)
    return evidence(row, note)


def node_label(ep: dict) -> str:
    node = ep.get("node")
    if node is None:
        return "no broker named"
    label = f"broker node {node}"
    if node < 0:
        label = f"bootstrap broker (node {node})"
    if ep.get("address"):
        label += f" ({safe(ep['address'])})"
    return label


def client_label(ep: dict) -> str:
    return f"producer {safe(ep['client'])} in {safe(ep['path'])}" if ep.get("client") else f"the producer in {safe(ep['path'])}"


def client_in(client: str | None, path: str) -> str:
    """'producer-1 in LOG', or 'the producer in LOG' for a log whose lines name no client (not escaped)."""
    return f"{client} in {path}" if client else f"the producer in {path}"


def no_metadata(ep: dict) -> str:
    """The ruled-out line of an outage seen only as old bootstrap disconnects (no connection failed)."""
    return f"A slow broker that stayed reachable: no metadata came back from node {ep['node']} at all ({connection_failures(ep)})"


def retry_summary(ep: dict) -> str:
    items = ep.get("retries_by_error") or []
    if not items:
        return "no produce retries"
    return plural(ep["retries"], "produce retry", "produce retries") + " (" + ", ".join(f"{safe(x['error'])} ×{x['n']}" for x in items) + ")"


def connection_failures(ep: dict) -> str:
    """The failed connections of an episode, in the words episode_facts uses for them."""
    parts = []
    if ep["failed_connections"] or not (ep.get("auth_failures") or ep.get("bootstrap_drops")):
        parts.append(plural(ep["failed_connections"], "failed connection attempt"))
    if ep.get("auth_failures"):
        parts.append(plural(ep["auth_failures"], "connection") + " terminated during authentication")
    if ep.get("bootstrap_drops"):
        parts.append(bootstrap_drops_text(ep["bootstrap_drops"]))
    return " and ".join(parts)


def bootstrap_drops_text(n: int) -> str:
    return plural(n, "connection") + " to the bootstrap broker dropped before any metadata came back"


def episode_facts(ep: dict) -> str:
    parts = []
    if ep["failed_connections"]:
        parts.append(plural(ep["failed_connections"], "failed connection attempt"))
    if ep.get("auth_failures"):
        parts.append(plural(ep["auth_failures"], "connection") + " terminated during authentication")
    if ep.get("bootstrap_drops"):
        parts.append(bootstrap_drops_text(ep["bootstrap_drops"]))
    if ep["request_timeouts"]:
        parts.append(plural(ep["request_timeouts"], "request-timeout disconnect"))
    if ep["cancelled_requests"]:
        parts.append(plural(ep["cancelled_requests"], "in-flight request") + " cancelled")
    if ep["disconnects"]:
        parts.append(plural(ep["disconnects"], "disconnect"))
    if ep["retries"]:
        parts.append(retry_summary(ep))
    bits = []
    if ep["invalid_metadata"]:
        bits.append(plural(ep["invalid_metadata"], "invalid-metadata warning"))
    if ep["metadata_errors"]:
        bits.append(plural(ep["metadata_errors"], "metadata error"))
    if ep["rebootstraps"]:
        bits.append(plural(ep["rebootstraps"], "rebootstrap"))
    if bits:
        parts.append(" and ".join(bits))
    return ", ".join(parts) if parts else "no details"


def cause_of(ep: dict) -> dict:
    """The ``cause`` object of a finding that links to an episode."""
    return {
        "kind": ep["kind"],
        "node": ep.get("node"),
        "address": ep.get("address"),
        "host": ep.get("host"),
        "from": ep["from"],
        "to": ep["to"],
        "duration_s": ep["duration_s"],
        "path": ep["path"],
        "client_id": ep.get("client") or None,
        "failed_connections": ep["failed_connections"],
        "disconnects": ep["disconnects"],
        "request_timeouts": ep["request_timeouts"],
        "retries": ep["retries"],
        "retries_by_error": {x["error"]: x["n"] for x in (ep.get("retries_by_error") or [])},
        "metadata_errors": ep["metadata_errors"],
        "invalid_metadata": ep["invalid_metadata"],
        **({"bootstrap_drops": ep["bootstrap_drops"]} if ep.get("bootstrap_drops") else {}),
    }


def episode_quotes(m: Model, ep: dict, limit_retries: int = 3) -> list[Evidence]:
    """The lines a human would quote for an episode: where it starts, the first failed connection,
    the first retry of each error code, the first metadata error, where it ends."""
    rows = m.trouble.filter(pl.col("ep") == ep["ep"]).sort(["ts", "file", "line"])
    if rows.height == 0:
        return []
    out: dict[tuple, Evidence] = {}

    def add(r: dict | None, note: str) -> None:
        if r is None:
            return
        key = (r.get("file"), int(r["line"]))
        if key not in out:
            out[key] = evidence(r, note)

    add(rows.row(0, named=True), "the trouble starts")
    node = ep.get("node")
    if node is not None:
        fc = rows.filter(pl.col("unreachable") & (pl.col("tnode") == node))
        add(fc.row(0, named=True) if fc.height else None, f"first failed connection to node {node}")
    retries = rows.filter(pl.col("retry")).unique("error", keep="first", maintain_order=True).head(limit_retries)
    for r in retries.iter_rows(named=True):
        add(r, f"first {r['error']} retry")
    for event, note in (("metadata_error", "first metadata error"), ("produce_invalid_metadata", "first metadata refresh request")):
        x = rows.filter(pl.col("event") == event)
        add(x.row(0, named=True) if x.height else None, note)
    add(rows.row(-1, named=True), "last trouble line (end of the window)")
    return sorted(out.values(), key=lambda e: (e.ts or dt.datetime.min.replace(tzinfo=dt.timezone.utc), e.line))


# an episode of the shared model in words, as filters of the Kafka findings' verdict files
# ('{episode|node_label}', detectors/verdict.py)
EPISODE_FILTERS = {
    "node_label": lambda ep: node_label(ep) if ep else None,
    "client_label": lambda ep: client_label(ep) if ep else None,
    "episode_facts": lambda ep: episode_facts(ep) if ep else None,
    "connection_failures": lambda ep: connection_failures(ep) if ep else None,
    "no_metadata": lambda ep: no_metadata(ep) if ep else None,
}
