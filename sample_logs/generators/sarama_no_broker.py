#!/usr/bin/env python3
"""Deterministic sarama logs of a client that can reach no broker at all.

    python sample_logs/generators/sarama_no_broker.py [OUTDIR]      # default: sample_logs/

Two applications with sarama's Logger set (``sarama.Logger = log.New(os.Stderr, "[sarama] ",
log.LstdFlags|log.Lmicroseconds)``), three brokers kafka-0..2:9092, the message texts of sarama's
client.go / broker.go / async_producer.go as the other sarama samples print them:

* ``orders-api.log``: the whole cluster restarted at once (a bad rolling restart): every dial is
  refused for 41 s, sarama runs out of brokers, the application logs each failed send, then the
  brokers are back and deliveries resume.
* ``payments-api.log``: an excerpt pasted from a host that lost its route to the brokers' subnet:
  every dial fails with ``no route to host`` and the excerpt ends before anything comes back.
"""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path

BROKERS = [("kafka-0:9092", "10.20.1.10", 0), ("kafka-1:9092", "10.20.1.11", 1), ("kafka-2:9092", "10.20.1.12", 2)]


def stamp(t: dt.datetime) -> str:
    return t.strftime("%Y/%m/%d %H:%M:%S.%f")


class Log:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def sarama(self, t: dt.datetime, text: str) -> None:
        self.lines.append(f"[sarama] {stamp(t)} {text}")

    def app(self, t: dt.datetime, text: str) -> None:
        self.lines.append(f"{stamp(t)} {text}")


def start(log: Log, t: dt.datetime, topic: str) -> dt.datetime:
    log.sarama(t, "Initializing new client")
    log.sarama(t + dt.timedelta(microseconds=1535), "client/metadata fetching metadata for all topics from broker kafka-0:9092")
    log.sarama(t + dt.timedelta(microseconds=2116), "Connected to broker at kafka-0:9092 (unregistered)")
    for k, (addr, _ip, node) in enumerate(BROKERS):
        log.sarama(t + dt.timedelta(microseconds=3488 + k * 91), f"client/brokers registered new broker #{node} at {addr}")
    log.sarama(t + dt.timedelta(microseconds=3728), "Successfully initialized new client")
    log.app(t + dt.timedelta(milliseconds=100), f"producing to {topic} every 1s")
    return t + dt.timedelta(seconds=1)


def deliver(log: Log, t: dt.datetime, n: int, partition: int, offset: int) -> None:
    log.app(t + dt.timedelta(microseconds=(n * 7919) % 900), f"message {n} delivered to partition {partition} at offset {offset}")


def orders(out: Path) -> None:
    log = Log()
    t = start(log, dt.datetime(2026, 12, 2, 2, 0, 0, 120000), "orders")
    for k, (addr, _ip, node) in enumerate(BROKERS):
        log.sarama(t + dt.timedelta(microseconds=200 + k * 310), f"Connected to broker at {addr} (registered as #{node})")
    n, off = 1, 51200
    down_at = t + dt.timedelta(seconds=600)
    while t < down_at:
        deliver(log, t, n, n % 6, off)
        n, off, t = n + 1, off + 1, t + dt.timedelta(seconds=1)
    # every broker goes away at once: open connections answer EOF, new dials are refused
    for k, (addr, _ip, node) in enumerate(BROKERS):
        log.sarama(t + dt.timedelta(microseconds=110 + k * 40), f"producer/broker/{node} state change to [closing] because EOF")
        log.sarama(t + dt.timedelta(microseconds=130 + k * 40), f"Closed connection to broker {addr}")
    back_at = t + dt.timedelta(seconds=41)
    while t < back_at:
        u = t + dt.timedelta(milliseconds=5)
        for k, (addr, ip, node) in enumerate(BROKERS):
            v = u + dt.timedelta(microseconds=400 * k)
            log.sarama(v, f"client/metadata fetching metadata for [orders] from broker {addr}")
            log.sarama(v + dt.timedelta(microseconds=177), f"Failed to connect to broker {addr}: dial tcp {ip}:9092: connect: connection refused")
            log.sarama(v + dt.timedelta(microseconds=261), f"client/metadata got error from broker {node} while fetching metadata: dial tcp {ip}:9092: connect: connection refused")
        log.sarama(u + dt.timedelta(microseconds=1500), "client/metadata no available broker to send metadata request to")
        log.sarama(u + dt.timedelta(microseconds=1520), "client/brokers resurrecting 1 dead seed brokers")
        log.app(u + dt.timedelta(microseconds=1800), f"send failed: kafka: Failed to produce message to topic orders: kafka: client has run out of available brokers to talk to")
        n, t = n + 1, t + dt.timedelta(seconds=1)
    log.sarama(t, "client/metadata fetching metadata for [orders] from broker kafka-0:9092")
    for k, (addr, _ip, node) in enumerate(BROKERS):
        log.sarama(t + dt.timedelta(microseconds=600 + k * 300), f"Connected to broker at {addr} (registered as #{node})")
    for _ in range(120):
        deliver(log, t, n, n % 6, off)
        n, off, t = n + 1, off + 1, t + dt.timedelta(seconds=1)
    (out / "orders-api.log").write_text("\n".join(log.lines) + "\n", encoding="utf-8")


def payments(out: Path) -> None:
    log = Log()
    t = dt.datetime(2026, 12, 2, 3, 17, 42, 8000)
    for r in range(18):
        u = t + dt.timedelta(milliseconds=r * 2750)
        for k, (addr, ip, node) in enumerate(BROKERS):
            v = u + dt.timedelta(microseconds=3200 * k)
            log.sarama(v, f"client/metadata fetching metadata for [payments] from broker {addr}")
            log.sarama(v + dt.timedelta(microseconds=3044), f"Failed to connect to broker {addr}: dial tcp {ip}:9092: connect: no route to host")
            log.sarama(v + dt.timedelta(microseconds=3110), f"client/metadata got error from broker {node} while fetching metadata: dial tcp {ip}:9092: connect: no route to host")
        log.sarama(u + dt.timedelta(microseconds=9500), "client/metadata no available broker to send metadata request to")
        log.sarama(u + dt.timedelta(microseconds=9520), "client/metadata retrying after 250ms... (2 attempts remaining)")
        if r % 3 == 2:
            log.app(u + dt.timedelta(microseconds=9900), "send failed: kafka: Failed to produce message to topic payments: kafka: client has run out of available brokers to talk to")
    (out / "payments-api.log").write_text("\n".join(log.lines) + "\n", encoding="utf-8")


def main(argv: list[str]) -> int:
    base = Path(argv[0]) if argv else Path(__file__).resolve().parent.parent
    out = base / "sarama-no-broker"
    out.mkdir(parents=True, exist_ok=True)
    orders(out)
    payments(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
