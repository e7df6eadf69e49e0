"""sarama.no-broker-reachable through the CLI: a client that could reach no broker (every dial to two
or more brokers failed, none connected), classed by Go's error; not when one broker fails while
another answers (the other sarama findings' case)."""

from __future__ import annotations

import pytest

from conftest import SAMPLES, run

BROKERS = [("kafka-0:9092", "10.1.0.10"), ("kafka-1:9092", "10.1.0.11"), ("kafka-2:9092", "10.1.0.12")]


def _log(tmp_path, error: str, rounds: int = 4, connect_one: bool = False):
    lines = []
    for r in range(rounds):
        for k, (addr, ip) in enumerate(BROKERS):
            t = f"2026/12/02 04:00:{10 + r * 5:02d}.{k * 2000 + 100:06d}"
            if connect_one and k == 2:
                lines.append(f"[sarama] {t} Connected to broker at {addr} (registered as #2)")
                continue
            lines.append(f"[sarama] {t} Failed to connect to broker {addr}: dial tcp {ip}:9092: {error}")
    p = tmp_path / "app.log"
    p.write_text("\n".join(lines) + "\n")
    return p


@pytest.mark.parametrize("error,kind,words", [
    ("i/o timeout", "timeout", "dials timed out"),
    ("connect: no route to host", "no-route", "no route to host"),
    ("lookup kafka-0 on 10.96.0.10:53: no such host", "dns", "name not resolved"),
    ("connect: connection refused", "refused", "connection refused"),
])
def test_every_broker_failing_is_one_finding_named_by_how(tmp_path, error, kind, words):
    p = _log(tmp_path, error)
    doc = run("analyze", "--tz", "UTC", "--format", "json", p).json()
    (f,) = [f for f in doc["findings"] if f["id"] == "sarama.no-broker-reachable"]
    assert f["subjects"][0]["kind"] == kind and sorted(f["subjects"][0]["brokers"]) == [a for a, _ in BROKERS]
    assert f"3 brokers, {words}" in f["title"] and f["severity"] == "high"  # nothing connected again in the log
    assert "No connection succeeded before the log ends" in f["root_cause"]
    assert [e["line"] for e in f["evidence"]][:1] == [1]


def test_one_broker_answering_is_not_no_broker(tmp_path):
    p = _log(tmp_path, "connect: connection refused", connect_one=True)
    doc = run("analyze", "--tz", "UTC", "--format", "json", p).json()
    assert not [f for f in doc["findings"] if f["id"] == "sarama.no-broker-reachable"]


def test_the_cluster_restart_sample_is_one_incident_with_its_brokers():
    inc = SAMPLES / "sarama-no-broker"
    doc = run("analyze", "--tz", "UTC", "--format", "json", inc).json()
    first = doc["incidents"][0]
    # the per-broker sarama.broker-refused findings it had said "sends on unknown retried, none failed"
    # beside this one's 41 failed sends: inside a no-broker stretch with no partition known, they are gone
    assert first["finding_ids"] == ["sarama.no-broker-reachable"], first
    f = doc["findings"][0]
    assert f["subjects"][0]["failed_sends"] == 41 and f["subjects"][0]["recovered_at"].startswith("2026-12-02T02:10:42.12")
    out = run("analyze", "--tz", "UTC", "--format", "text", inc, env={"COLUMNS": "80"}).out
    assert "sarama reached no broker: 3 brokers, connection refused" in " ".join(out.split())
