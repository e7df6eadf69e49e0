#!/usr/bin/env python3
"""Deterministic Pulsar 2.3 broker logs (before 2.4: the 'already present' rejection names no
producer id) in which the stuck producer's creation is an hour before its first rejection.

    python sample_logs/generators/pulsar_pre24.py [OUTDIR]      # default: sample_logs/

Pulsar before PR #4138 (2.4.0) logs ``[conn][topic] Producer is already present on the connection``
(no producer id). Each broker here: a client connection creates two producers, one is answered
(``Created new producer``), the other never is (its topic's ledger never opens); the application gives
up on it and only asks again an hour later, on the same connection, and from then on every retry is
rejected until the client restarts (its connection closed, a new one creates the producer). A decoy:
another connection's creation that is not answered either, but whose connection closes, so it is
answered. Two brokers, two layouts: the 2.x broker layout (time-only stamps, dated by the file name)
and a custom log4j2 layout with full dates.
"""

from __future__ import annotations

import datetime as dt
import random
import sys
from pathlib import Path

UTC = dt.timezone.utc
SC = "org.apache.pulsar.broker.service.ServerCnx"
ML = "org.apache.bookkeeper.mledger.impl.ManagedLedgerFactoryImpl"
PT = "org.apache.pulsar.broker.service.persistent.PersistentTopic"
STATS = "org.apache.pulsar.broker.service.PulsarStats"
DAY = dt.date(2019, 4, 2)

BROKERS = [
    # file, layout, the client's address, the decoy's, the stuck topic, the answered one, the decoy's
    ("pulsar-pre24/pulsar-broker-a.2019-04-02.log", "2x", "/10.1.20.7:41234", "/10.1.20.9:50011", "orders", "audit", "invoices", 11),
    ("pulsar-pre24/pulsar-broker-b.log", "dated", "/10.1.30.4:38817", "/10.1.30.6:42290", "payments", "ledger", "refunds", 12),
]


def _line(layout: str, t: dt.datetime, thread: str, level: str, logger: str, msg: str) -> str:
    stamp = t.strftime("%H:%M:%S.") + f"{t.microsecond // 1000:03d}"
    if layout == "dated":
        stamp = t.strftime("%Y-%m-%d ") + stamp
        return f"{stamp} [{thread}] {level:<5} {logger} - {msg}"
    short = {SC: "o.a.p.broker.service.ServerCnx", ML: "o.a.b.m.impl.ManagedLedgerFactoryImpl", PT: "o.a.p.b.s.persistent.PersistentTopic",
             STATS: "o.a.p.broker.service.PulsarStats"}[logger]
    return f"{stamp} [{thread}] {level:<5} {short} - {msg}"


def broker_log(layout: str, conn: str, decoy: str, stuck: str, ok: str, other: str, seed: int) -> str:
    rnd = random.Random(seed)
    rows: list[tuple[dt.datetime, int, str]] = []
    seq = [0]

    def add(t: dt.datetime, thread: str, level: str, logger: str, msg: str) -> None:
        seq[0] += 1
        rows.append((t, seq[0], _line(layout, t, thread, level, logger, msg)))

    def ms(lo: int, hi: int) -> dt.timedelta:
        return dt.timedelta(milliseconds=rnd.randint(lo, hi))

    t0 = dt.datetime.combine(DAY, dt.time(8, 0), tzinfo=UTC)
    end = t0 + dt.timedelta(hours=2, minutes=30)
    topic = lambda name: f"persistent://public/default/{name}"  # noqa: E731
    # the broker's steady noise: stats every minute
    t = t0
    while t < end:
        add(t + ms(0, 900), "pulsar-stats-updater-8-1", "INFO", STATS, "Updated load statistics; topics=14, producers=6, consumers=9")
        t += dt.timedelta(minutes=1)
    # 08:05 the client's connection creates two producers: one answered, one never
    c = t0 + dt.timedelta(minutes=5, seconds=2) + ms(0, 500)
    add(c, "pulsar-io-21-2", "INFO", SC, f"New connection from {conn}")
    add(c + ms(20, 40), "pulsar-io-21-2", "INFO", SC, f"[{conn}][{topic(ok)}] Creating producer. producerId=1")
    add(c + ms(41, 60), "pulsar-io-21-2", "INFO", SC, f"[{conn}][{topic(stuck)}] Creating producer. producerId=0")
    add(c + ms(80, 120), "ForkJoinPool.commonPool-worker-3", "INFO", PT, f"[{topic(ok)}] Opening managed ledger public/default/persistent/{ok}")
    add(c + ms(150, 220), "bookkeeper-ml-workers-OrderedExecutor-2-0", "INFO", SC,
        f"[{conn}] Created new producer: Producer{{topic=PersistentTopic{{topic={topic(ok)}}}, client={conn}, producerName=standalone-0-{seed}, producerId=1}}")
    add(c + ms(90, 140), "ForkJoinPool.commonPool-worker-5", "INFO", PT, f"[{topic(stuck)}] Opening managed ledger public/default/persistent/{stuck}")
    # 08:20 the decoy: another connection's creation, not answered, but its connection closes
    d = t0 + dt.timedelta(minutes=20, seconds=7) + ms(0, 500)
    add(d, "pulsar-io-21-4", "INFO", SC, f"New connection from {decoy}")
    add(d + ms(20, 40), "pulsar-io-21-4", "INFO", SC, f"[{decoy}][{topic(other)}] Creating producer. producerId=0")
    add(d + dt.timedelta(minutes=4) + ms(0, 900), "pulsar-io-21-4", "INFO", SC, f"Closed connection from {decoy}")
    # 09:10, 65 minutes after its creation: the application asks again on the same connection, every 30 s
    r = t0 + dt.timedelta(hours=1, minutes=10, seconds=11)
    for i in range(40):
        add(r + dt.timedelta(seconds=30 * i) + ms(0, 300), "pulsar-io-21-2", "WARN", SC,
            f"[{conn}][{topic(stuck)}] Producer is already present on the connection")
    # 09:30 the client restarts: its connection closes, a new one creates the producer
    x = r + dt.timedelta(seconds=30 * 40 + 5)
    add(x, "pulsar-io-21-2", "INFO", SC, f"Closed connection from {conn}")
    new = conn.rsplit(":", 1)[0] + ":" + str(int(conn.rsplit(":", 1)[1]) + 77)
    add(x + dt.timedelta(seconds=8), "pulsar-io-21-3", "INFO", SC, f"New connection from {new}")
    add(x + dt.timedelta(seconds=8) + ms(20, 40), "pulsar-io-21-3", "INFO", SC, f"[{new}][{topic(stuck)}] Creating producer. producerId=0")
    add(x + dt.timedelta(seconds=8) + ms(150, 250), "bookkeeper-ml-workers-OrderedExecutor-2-0", "INFO", SC,
        f"[{new}] Created new producer: Producer{{topic=PersistentTopic{{topic={topic(stuck)}}}, client={new}, producerName=standalone-0-{seed + 40}, producerId=0}}")
    rows.sort()
    return "".join(r[2] + "\n" for r in rows)


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else Path(__file__).resolve().parent.parent
    for path, layout, conn, decoy, stuck, ok, other, seed in BROKERS:
        p = out / path
        p.parent.mkdir(parents=True, exist_ok=True)
        text = broker_log(layout, conn, decoy, stuck, ok, other, seed)
        p.write_bytes(text.encode("utf-8"))
        print(f"wrote {p} ({text.count(chr(10))} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
