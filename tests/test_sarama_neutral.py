"""The application's neutral lines do not move a sarama stall (new-user trial: telegraf's
'Buffer fullness' status line every 10 s turned a 181 s black hole into 'stalled 10 s … silent (mute)'
ended by 'retry 1 delivered the message').

Other goroutines of a service keep logging while a send hangs: a status line, an HTTP access line,
a heartbeat, a metrics dump. Such a line is neither an error nor a delivery nor one of sarama's: it
says nothing about the send, so it must not end the stall, cut it, or move its start. Only the
producer's own outcome lines (an error returned, a delivery), sarama's state lines or a long quiet gap
do. The chain below is one broker black-holed with sarama's defaults (Net.ReadTimeout and
Net.DialTimeout 30 s, Metadata.Retry.Max 3): the produce request times out 30 s after its write, the
retry's metadata request 30 s later, then four dials of 30 s with 250 ms back-offs, and
'run out of available brokers' reaches the application 181 s after the write. Every log is written
here, in three layouts (Go's std log with '[sarama] ', a 'TIMESTAMP D! [sarama] ' agent layout, logrus
text), with and without a neutral line every 10 s through the stall; the findings must be the same."""

from __future__ import annotations

import datetime as dt
import json
import re

import pytest

from conftest import run

ID = "sarama.retry-redial-stall"
T0 = dt.datetime(2024, 3, 14, 2, 0, 0)
WRITE = T0 + dt.timedelta(minutes=10, seconds=10)  # the stalled request's write
ERROR_AT = WRITE + dt.timedelta(seconds=181)
IP, ADDR = "10.20.0.11:9092", "kafka-1:9092"
DIAL = f"dial tcp {IP}: i/o timeout"
OOB = "kafka: Failed to produce message to topic metrics: kafka: client has run out of available brokers to talk to (Is your cluster reachable?)"


def _sarama_chain() -> list[tuple[float, str]]:
    """(seconds after the write, sarama's text) for the black-holed broker (sarama 1.2x texts)."""
    out = [
        (30.0, f"producer/broker/1 state change to [closing] because read tcp 10.1.5.20:43122->{IP}: i/o timeout"),
        (30.0, f"Closed connection to broker {ADDR}"),
        (30.0, "producer/leader/metrics/0 state change to [retrying-1]"),
        (30.0, "producer/leader/metrics/0 abandoning broker 1"),
        (30.0, "producer/broker/1 input chan closed"),
        (30.0, "producer/broker/1 shut down"),
        (30.1, f"client/metadata fetching metadata for [metrics] from broker {ADDR}"),
        (60.1, f"client/metadata got error from broker -1 while fetching metadata: read tcp 10.1.5.20:43110->{IP}: i/o timeout"),
        (60.1, f"Closed connection to broker {ADDR}"),
        (60.1, f"client/metadata fetching metadata for [metrics] from broker {ADDR}"),
    ]
    t = 60.1
    for left in (3, 2, 1, 0):
        t += 30.0
        out += [
            (t, f"Failed to connect to broker {ADDR}: {DIAL}"),
            (t, f"client/metadata got error from broker -1 while fetching metadata: {DIAL}"),
            (t, "client/metadata no available broker to send metadata request to"),
            (t, "client/brokers resurrecting 1 dead seed brokers"),
        ]
        if left:
            out += [
                (t, f"client/metadata retrying after 250ms... ({left} attempts remaining)"),
                (t + 0.25, f"client/metadata fetching metadata for [metrics] from broker {ADDR}"),
            ]
            t += 0.25
    return out


def _records(success: str, neutral: str | None, back_after: float | None = None) -> list[tuple[dt.datetime, str, bool]]:
    """(time, text, sarama's?) of the whole log: start-up, a delivery every 10 s, the chain with a
    neutral line every 10 s from before it to after the error, the error, the recovery. With
    ``back_after``: the broker is back that many seconds after the write (its dial connects), before
    the metadata retries run out, so no error reaches the application."""
    recs: list[tuple[dt.datetime, str, bool]] = [
        (T0, "Initializing new client", True),
        (T0, f"client/metadata fetching metadata for all topics from broker {ADDR}", True),
        (T0, f"Connected to broker at {ADDR} (unregistered)", True),
        (T0, f"client/brokers registered new broker #1 at {ADDR}", True),
        (T0, "Successfully initialized new client", True),
        (T0 + dt.timedelta(seconds=10), "producer/broker/1 starting up", True),
        (T0 + dt.timedelta(seconds=10), "producer/broker/1 state change to [open] on metrics/0", True),
        (T0 + dt.timedelta(seconds=10), f"Connected to broker at {ADDR} (registered as #1)", True),
    ]
    n = 0
    t = T0 + dt.timedelta(seconds=10)
    while t <= WRITE - dt.timedelta(seconds=20):  # the last delivery 20 s before the stalled write
        n += 1
        recs.append((t, success.format(n=n, off=4000 + n, ms=5 + n % 7), False))
        t += dt.timedelta(seconds=10)
    recs += [(WRITE + dt.timedelta(seconds=s), text, True) for s, text in _sarama_chain() if back_after is None or s < back_after]
    if back_after is None:
        recs.append((ERROR_AT, f"send failed: {OOB}", False))
    back = ERROR_AT + dt.timedelta(seconds=88) if back_after is None else WRITE + dt.timedelta(seconds=back_after)
    recs += [
        (back, f"client/metadata fetching metadata for [metrics] from broker {ADDR}", True),
        (back, f"Connected to broker at {ADDR} (unregistered)", True),
        (back, "producer/broker/1 starting up", True),
        (back, "producer/leader/metrics/0 selected broker 1", True),
        (back, "producer/broker/1 state change to [open] on metrics/0", True),
        (back, "producer/leader/metrics/0 state change to [flushing-1]", True),
        (back, "producer/leader/metrics/0 state change to [normal]", True),
    ]
    for k in range(7):
        n += 1
        recs.append((back + dt.timedelta(seconds=1 + 10 * k), success.format(n=n, off=4000 + n, ms=5 + n % 7), False))
    if neutral is not None:
        t, i = WRITE - dt.timedelta(seconds=10), 0
        while t <= ERROR_AT + dt.timedelta(seconds=60):
            i += 1
            recs.append((t, neutral.format(i=i, buf=400 * i), False))
            t += dt.timedelta(seconds=10)
    return sorted(recs, key=lambda r: r[0])  # stable: a neutral line comes after the lines of its second


LAYOUTS = {
    # Go's log.LstdFlags: sarama.Logger = log.New(os.Stderr, "[sarama] ", log.LstdFlags), the application's log unprefixed
    "go-std": lambda t, text, sar: ("[sarama] " if sar else "") + f"{t:%Y/%m/%d %H:%M:%S} {text}",
    # an agent that logs RFC 3339 in UTC, a level letter and the plugin in brackets, sarama's lines as '[sarama]'
    "agent": lambda t, text, sar: f"{t:%Y-%m-%dT%H:%M:%S}Z {'D!' if sar else 'E!' if 'failed' in text else 'I!'} "
    + ("[sarama] " if sar else "[outputs.kafka] ") + text,
    # logrus' text formatter, sarama's logger a logrus entry with a component field
    "logrus": lambda t, text, sar: f'time="{t:%Y-%m-%dT%H:%M:%S}Z" level={"error" if "failed" in text else "info"} msg={json.dumps(text)}'
    + (" component=sarama" if sar else " component=shipper"),
}
SUCCESS = {
    "go-std": "message {n} delivered to partition 0 at offset {off}",
    "agent": "Wrote batch of {off} points in {ms}.104ms",
    "logrus": "produced message topic=metrics partition=0 offset={off}",
}
NEUTRAL = {
    "status": "queue depth: {buf} / 10000 points",
    "access": "http: GET /healthz 200 0.4ms",
    "heartbeat": "heartbeat ok",
    "metrics": "runtime: goroutines=41 heap_mb={i}",
}


def _write(tmp_path, layout: str, neutral: str | None):
    p = tmp_path / f"{layout}-{neutral or 'none'}.log"
    fmt = LAYOUTS[layout]
    p.write_text("\n".join(fmt(t, text, sar) for t, text, sar in _records(SUCCESS[layout], NEUTRAL[neutral] if neutral else None)) + "\n")
    return p


def _stall(p) -> tuple[dict, str]:
    r = run("analyze", "--tz", "UTC", p, "--format", "json")
    assert r.code == 0, r
    fs = [f for f in r.json()["findings"] if f["id"] == ID]
    assert len(fs) == 1, [f["title"] for f in fs]
    text = run("analyze", "--tz", "UTC", "--no-pager", p).out
    return fs[0], re.sub(r"\s+", " ", text)


_base: dict = {}


def _baseline(tmp_path, layout: str) -> dict:
    if layout not in _base:
        f, _ = _stall(_write(tmp_path, layout, None))
        (s,) = f["subjects"]
        assert f["severity"] == "high" and s["kind"] == "blackhole", f["title"]
        assert abs(s["stall_seconds"] - 181) <= 1, s["stall_seconds"]
        assert s["end_bound"] == "error returned" and s["start_bound"] == "write"
        _base[layout] = f
    return _base[layout]


@pytest.mark.parametrize("neutral", sorted(NEUTRAL))
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_neutral_lines_through_the_stall_change_nothing(tmp_path, layout, neutral):
    base = _baseline(tmp_path, layout)
    f, text = _stall(_write(tmp_path, layout, neutral))
    (s,), (b,) = f["subjects"], base["subjects"]
    assert f["severity"] == base["severity"] == "high", f["title"]
    assert s["kind"] == "blackhole" and f["cause"]["kind"] == "blackhole"
    assert abs(s["stall_seconds"] - b["stall_seconds"]) <= 1, (s["stall_seconds"], b["stall_seconds"])
    assert s["from"] == b["from"] and s["to"] == b["to"]
    assert s["start_bound"] == "write" and s["end_bound"] == "error returned" and s["ended_by"] == "error"
    assert s["dial_timeouts"] == b["dial_timeouts"] == 4
    assert f["confidence"] == base["confidence"]
    assert s["returned_error"] and "run out of available brokers" in s["returned_error"]
    assert f["details"]["delivered_by_retry"] is None
    # the application's send interval is its deliveries' (10 s), not the neutral lines' mixed in
    assert f["details"]["application_send_interval_seconds"] == 10.0
    for word in ("silent", "mute", "No error reached the application", "delivered the message"):
        assert word not in text, word
    assert "181 s" in text and "black-holed" in text


@pytest.mark.parametrize("layout", ["go-std", "agent"])
def test_neutral_lines_do_not_end_a_stall_that_ends_in_recovery(tmp_path, layout):
    """The broker is back after 100 s, before the metadata retries run out: no error reaches the
    application, the retry delivers. The stall ends at the application's next delivery (1 s after
    sarama's [normal]), not at a status line logged inside the chain, with or without them."""
    fmt = LAYOUTS[layout]
    got = {}
    for neutral in (None, "status"):
        p = tmp_path / f"{layout}-back-{neutral}.log"
        p.write_text("\n".join(fmt(*r) for r in _records(SUCCESS[layout], NEUTRAL[neutral] if neutral else None, back_after=100.4)) + "\n")
        got[neutral] = _stall(p)
    (f, text), (base, _) = got["status"], got[None]
    (s,), (b,) = f["subjects"], base["subjects"]
    assert abs(s["stall_seconds"] - 101.4) <= 1 and abs(b["stall_seconds"] - 101.4) <= 1, (s["stall_seconds"], b["stall_seconds"])
    assert (s["from"], s["to"], s["end_bound"]) == (b["from"], b["to"], b["end_bound"]) and s["end_bound"] == "delivery"
    assert f["severity"] == base["severity"] and s["kind"] == b["kind"] == "blackhole"
    assert f["details"]["delivered_by_retry"]["retry"] == 1
    assert f["details"]["recovered_at"] == base["details"]["recovered_at"]
    assert "silent" not in text and "mute" not in text


def test_sarama_logger_off_neutral_lines_do_not_hide_the_stall(tmp_path):
    """sarama's Logger off: only the application's lines. Its last delivery before the error bounds
    the stall; the heartbeats logged meanwhile do not make the gap before the error short."""
    recs = [r for r in _records(SUCCESS["go-std"], NEUTRAL["heartbeat"]) if not r[2]]
    p = tmp_path / "app-only.log"
    p.write_text("\n".join(LAYOUTS["go-std"](*r) for r in recs) + "\n")
    f, text = _stall(p)
    (s,) = f["subjects"]
    assert s["sarama_logger"] == "off" and s["kind"] == "blackhole"
    last_delivery = WRITE - dt.timedelta(seconds=20)
    assert abs(s["stall_seconds"] - (ERROR_AT - last_delivery).total_seconds()) <= 1, s["stall_seconds"]
    assert "heartbeat" not in text.split("Evidence", 1)[-1].split("Subjects", 1)[0]
