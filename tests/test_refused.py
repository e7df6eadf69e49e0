"""sarama.broker-refused (issue 19): a broker whose port is closed (EOF, refused dials) makes sends
fail in under a second, then the circuit breaker fails them at once for 10 s. That is a broker down
and clients told so, not a stall: its own finding, with the sends that failed, the breaker periods and
the recovery, its severity from what was lost. The refused samples are the generator's (sample_logs/
generators/sarama.py, the measured 'close' runs of ../shared/reference/sarama-timing.md) in three
layouts: Go's log with microseconds, with 1-second stamps and another prefix, and zap JSON."""

from __future__ import annotations

import re

import pytest

from conftest import SAMPLES, run

ID = "sarama.broker-refused"
REFUSED = [
    ("sarama-refused/inventory-producer.log", "inventory/1", "kafka-1:9092", False),
    ("sarama-refused/shipping-producer.log", "shipments/0", "127.0.0.1:9092", True),
    ("sarama-refused/billing-api.json", "billing/5", "kafka-2.kafka:9092", False),
]


def analyze(*args) -> dict:
    r = run("analyze", "--tz", "UTC", *args, "--format", "json")
    assert r.code == 0, r
    return r.json()


def of(doc, fid):
    return [f for f in doc["findings"] if f["id"] == fid]


@pytest.mark.parametrize("path,tp,broker,coarse", REFUSED)
def test_a_refused_broker_is_a_fast_failure_not_a_stall(path, tp, broker, coarse):
    doc = analyze(SAMPLES / path)
    assert of(doc, "sarama.retry-redial-stall") == []  # no 'stalled 1.9 s'
    (f,) = of(doc, ID)
    (s,) = f["subjects"]
    assert s["topic_partition"] == tp and s["broker"] == broker and s["node"] == 1
    # the failing send (run out of brokers after 0.85 s), then the next one, then 11 instant breaker failures
    assert s["failed_sends"] == 13 and f["details"]["failed_sends"] == 13
    assert f["details"]["errors_by_text"] == {"client has run out of available brokers": 2, "circuit breaker is open": 11}
    assert abs(s["first_failure_seconds"] - 0.85) <= (1.0 if coarse else 0.05)
    (p,) = f["details"]["breaker_open"]
    assert p["failed_sends"] == 11 and 9.0 <= p["seconds"] <= 10.5
    assert s["breaker_open_periods"] == 1 and s["out_of_brokers"] == 2
    assert s["refused_dials"] == 12 and s["eof"] == 2  # 4 dials per leader lookup, three lookups before the breaker opened
    assert s["still_down"] is False and f["details"]["recovered_at"] == s["down_to"]
    assert 12.0 <= s["down_seconds"] <= 14.0
    assert f["severity"] == "medium"  # 13 messages lost
    assert f["title"].startswith(f"sarama: broker {broker} refused connections for 13")
    assert "13 sends failed fast" in f["title"]
    assert f["details"]["broker_state"]["node"] == 1
    notes = [e["note"] for e in f["evidence"]]
    assert notes[:2] == ["the broker's connection failed", "first refused dial"] and "circuit breaker open" in notes
    assert "first successful send after it" in notes


def test_text_report():
    r = run("analyze", "--tz", "UTC", SAMPLES / "sarama-refused" / "inventory-producer.log", "--format", "text")
    out = re.sub(r"\s+", " ", re.sub(r"-\n\s+", "-", r.out))
    assert "[MEDIUM] sarama: broker kafka-1:9092 refused connections for 13.0 s: 13 sends failed fast on inventory/1" in out
    assert "This is a fast failure, not a stall" in out
    assert "'circuit breaker is open' from 14:03:52 to 14:04:02 UTC (11 sends)" in out
    assert "returned after 0.85 s" in out and "stalled" not in out


def _golog(*items, start="2024/05/02 11:00:00", prefix="[sarama] ") -> str:
    import datetime as dt

    t = dt.datetime.strptime(start, "%Y/%m/%d %H:%M:%S")
    out = []
    for delay, text, sar in items:
        t += dt.timedelta(seconds=delay)
        out.append((prefix if sar else "") + t.strftime("%Y/%m/%d %H:%M:%S") + " " + text)
    return "\n".join(out) + "\n"


OOB = "kafka: client has run out of available brokers to talk to (Is your cluster reachable?)"


def test_the_eof_it_saw_is_quoted_and_a_stall_ruled_out(tmp_path):
    p = tmp_path / "inventory-refused.log"
    p.write_text(_golog(
        (0, "Connected to broker at kafka-1:9092 (registered as #1)", True),
        (0, "message 1 delivered to partition 0 at offset 100", False),
        (1, "producer/broker/1 state change to [closing] because EOF", True),
        (0, "Closed connection to broker kafka-1:9092", True),
        (0, "producer/leader/orders/0 state change to [retrying-1]", True),
        (0, "producer/leader/orders/0 abandoning broker 1", True),
        (0, "client/metadata fetching metadata for [orders] from broker kafka-1:9092", True),
        (0, "client/metadata got error from broker -1 while fetching metadata: EOF", True),
        (0, "Failed to connect to broker kafka-1:9092: dial tcp 10.0.0.7:9092: connect: connection refused", True),
        (0, "client/metadata no available broker to send metadata request to", True),
        (0, f"send failed: {OOB}", False),
        (1, "send failed: circuit breaker is open", False),
    ))
    doc = analyze(p)
    assert of(doc, "sarama.retry-redial-stall") == []
    (f,) = of(doc, ID)
    assert f["cause"]["error"] == "EOF" and f["cause"]["kind"] == "refused"
    assert "a stall: no dial or read waited a timeout" in f["ruled_out"][0]
    (s,) = f["subjects"]
    assert s["failed_sends"] == 2 and s["still_down"] is True and f["severity"] == "medium"
    assert "still down at the end of the log" in f["title"]


def test_a_restart_with_nothing_lost_is_low(tmp_path):
    """The broker closes, the retry finds it back at once: no error reaches the application."""
    p = tmp_path / "restart.log"
    p.write_text(_golog(
        (0, "message 1 delivered to partition 0 at offset 100", False),
        (1, "producer/broker/1 state change to [closing] because EOF", True),
        (0, "producer/leader/orders/0 state change to [retrying-1]", True),
        (0, "producer/leader/orders/0 abandoning broker 1", True),
        (0, "client/metadata fetching metadata for [orders] from broker kafka-1:9092", True),
        (0, "Failed to connect to broker kafka-1:9092: dial tcp 10.0.0.7:9092: connect: connection refused", True),
        (0, "client/metadata retrying after 250ms... (3 attempts remaining)", True),
        (1, "client/metadata fetching metadata for [orders] from broker kafka-1:9092", True),
        (0, "Connected to broker at kafka-1:9092 (registered as #1)", True),
        (0, "producer/leader/orders/0 selected broker 1", True),
        (0, "producer/leader/orders/0 state change to [flushing-1]", True),
        (0, "producer/leader/orders/0 state change to [normal]", True),
        (0, "message 2 delivered to partition 0 at offset 101", False),
    ))
    (f,) = of(analyze(p), ID)
    assert f["severity"] == "low" and f["subjects"][0]["failed_sends"] == 0
    assert f["title"].endswith("sends on orders/0 retried, none failed")
