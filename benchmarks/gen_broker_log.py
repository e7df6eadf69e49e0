#!/usr/bin/env python3
"""Deterministic generator of a large Pulsar-style broker log with a buried incident.

    python benchmarks/gen_broker_log.py --lines 1500000 --out benchmarks/data/broker-1.5M.log
    python benchmarks/gen_broker_log.py --size 3G --gzip --out benchmarks/data/broker-3G.log.gz

The mix imitates a busy broker: mostly managed-ledger, bookkeeper, cursor and stats chatter, 2 %
(``--event-rate``) of connection/producer lines, the odd WARN with a stack trace, load shedding
every ~35 minutes and, in the middle, the dangling-producer incident (an unload strands one
producer that is then rejected every minute until the end). Same seed, same bytes.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import random
import sys
from pathlib import Path

SC = "org.apache.pulsar.broker.service.ServerCnx"


def _size(text: str) -> int:
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    t = text.strip().lower().rstrip("b")
    return int(float(t[:-1]) * units[t[-1]]) if t[-1] in units else int(t)


def generate(out, lines: int | None, size: int | None, layout: str, seed: int, event_rate: float = 0.02) -> tuple[int, int]:
    """``event_rate``: share of lines that are connection/producer lines the packs recognise."""
    rnd = random.Random(seed)
    start = dt.datetime(2024, 5, 2, 0, 0, 0, tzinfo=dt.timezone.utc)
    # a fixed pool of message bodies keeps generation fast and the text realistic
    topics = [f"persistent://public/default/orders-partition-{i}" for i in range(64)] + [
        f"persistent://tenant-{t}/ns-{n}/events-{i}" for t in range(4) for n in range(3) for i in range(8)
    ]
    loggers = {
        "ml": "org.apache.bookkeeper.mledger.impl.ManagedLedgerImpl",
        "mc": "org.apache.bookkeeper.mledger.impl.ManagedCursorImpl",
        "lh": "org.apache.bookkeeper.client.LedgerHandle",
        "st": "org.apache.pulsar.broker.service.PulsarStats",
        "sc": SC,
        "pt": "org.apache.pulsar.broker.service.persistent.PersistentTopic",
        "ps": "org.apache.pulsar.broker.service.persistent.PersistentSubscription",
    }
    bodies: list[tuple[str, str, str, str]] = []  # (thread, level, logger, msg) templates with {n}
    # shares of the 4000 bodies: 80 % managed-ledger/cursor/bookkeeper/stats chatter, the rest of
    # 97 % subscription chatter, ``event_rate`` events, 3 % WARN with a stack trace; above 17 %
    # events the chatter shrinks in proportion (up to 17 %, the bytes are what they always were)
    chatter = min(1.0, (0.97 - event_rate) / 0.80)
    for _ in range(4000):
        t = rnd.choice(topics)
        name = t.split("://", 1)[1]
        r = rnd.random()
        if r < 0.30 * chatter:
            bodies.append((f"bookkeeper-ml-workers-OrderedExecutor-{rnd.randint(0, 7)}-0", "INFO", loggers["ml"], f"[{name}] Ledger {{n}} rolled over; entries written since the last roll-over: {rnd.randint(1000, 90000)}"))
        elif r < 0.50 * chatter:
            bodies.append((f"bookkeeper-ml-workers-OrderedExecutor-{rnd.randint(0, 7)}-0", "INFO", loggers["mc"], f"[{name}] Updated cursor sub-{rnd.randint(1, 9)} with ledger id {{n}} md-position={rnd.randint(10000, 99999)}:{rnd.randint(0, 9999)}"))
        elif r < 0.65 * chatter:
            bodies.append((f"pulsar-ordered-OrderedExecutor-{rnd.randint(0, 7)}-0", "INFO", loggers["lh"], f"Ensemble change: ledger {{n}}, entry {rnd.randint(0, 99999)}, bookies 10.0.1.{rnd.randint(2, 250)}:3181 ok"))
        elif r < 0.80 * chatter:
            bodies.append(("pulsar-stats-updater-1-1", "INFO", loggers["st"], f"Updated topic stats for {name}: msgRateIn {rnd.uniform(10, 9000):.1f} msg/s, msgRateOut {rnd.uniform(10, 9000):.1f} msg/s, storageSize {{n}}"))
        elif r < 0.97 - event_rate:
            bodies.append((f"pulsar-io-22-{rnd.randint(1, 16)}", "INFO", loggers["ps"], f"[{name}][sub-{rnd.randint(1, 9)}] Successfully disconnected consumers from subscription, proceeding with cursor reset to {{n}}"))
        elif r < 0.97 - event_rate / 2:
            bodies.append((f"pulsar-io-22-{rnd.randint(1, 16)}", "INFO", SC, f"New connection from /10.1.{rnd.randint(100, 130)}.{rnd.randint(2, 250)}:{{n}}"))
        elif r < 0.97 - event_rate / 4:
            port = rnd.randint(10000, 60000)
            bodies.append((f"ForkJoinPool.commonPool-worker-{rnd.randint(1, 30)}", "INFO", SC, f"[/10.1.{rnd.randint(100, 130)}.{rnd.randint(2, 250)}:{port}][{t}] Creating producer. producerId={{n}}"))
        elif r < 0.97:
            port = rnd.randint(10000, 60000)
            addr = f"/10.1.{rnd.randint(100, 130)}.{rnd.randint(2, 250)}:{port}"
            bodies.append((f"ForkJoinPool.commonPool-worker-{rnd.randint(1, 30)}", "INFO", SC, f"[{addr}] Created new producer: Producer{{{{topic=PersistentTopic{{{{topic={t}}}}}, client={addr}, producerName=pulsar-cluster-{rnd.randint(1, 99)}-{{n}}, producerId={{n}}}}}}"))
        else:
            bodies.append((f"pulsar-io-22-{rnd.randint(1, 16)}", "WARN", loggers["pt"], f"[{name}] Failed to read entries, retrying {{n}}\njava.util.concurrent.TimeoutException: read timeout\n\tat org.apache.bookkeeper.client.PendingReadOp.timeout(PendingReadOp.java:340)\n\tat org.apache.bookkeeper.client.LedgerHandle.readEntries(LedgerHandle.java:712)\n\t... 9 more"))

    def stamp(t: dt.datetime) -> str:
        ms = t.microsecond // 1000
        if layout == "time":
            return t.strftime("%H:%M:%S.") + f"{ms:03d}"
        return t.strftime("%Y-%m-%dT%H:%M:%S,") + f"{ms:03d}+0000"

    written = 0
    nlines = 0
    step_us = 1500  # ~670 lines/s, like a busy broker
    stuck_from = None
    t = start
    buf: list[str] = []
    i = 0
    limit_lines = lines if lines else 1 << 62
    limit_bytes = size if size else 1 << 62
    incident_at = (lines or (size // 190 if size else 0)) // 2
    while nlines < limit_lines and written < limit_bytes:
        i += 1
        t += dt.timedelta(microseconds=rnd.randint(0, 2 * step_us))
        if i % 1_400_000 == 0:  # load shedding every ~35 min of log time
            buf.append(f"{stamp(t)} [pulsar-load-manager-3-1] INFO  org.apache.pulsar.broker.loadbalance.impl.ModularLoadManagerImpl - [Overload shedder] Unloading bundle: public/default/0x{rnd.randint(0, 3) << 30:08x}_0x{(rnd.randint(0, 3) + 1) << 30:08x} from broker 10.0.0.11:8080\n")
        if i == incident_at:
            conn = "/10.1.116.123:15070"
            tp = topics[3]
            bundle = "public/default/0x40000000_0x80000000"
            buf.append(f"{stamp(t)} [pulsar-web-41-5] INFO  org.apache.pulsar.broker.namespace.OwnedBundle - Disabling ownership: {bundle}\n")
            buf.append(f"{stamp(t)} [ForkJoinPool.commonPool-worker-24] INFO  {SC} - [{conn}][{tp}] Creating producer. producerId=0\n")
            buf.append(f"{stamp(t)} [pulsar-io-22-7] WARN  org.apache.pulsar.broker.service.BrokerService - Namespace bundle for topic ({tp}) not served by this instance. Please redo the lookup. Request is denied: namespace=public/default\n")
            buf.append(f"{stamp(t)} [pulsar-web-41-5] INFO  org.apache.pulsar.broker.namespace.OwnedBundle - Unloading {bundle} namespace-bundle with 12 topics completed in 512.0 ms\n")
            stuck_from = t
        if stuck_from is not None and (t - stuck_from).total_seconds() >= 60:
            stuck_from = t
            buf.append(f"{stamp(t)} [pulsar-io-22-3] WARN  {SC} - [/10.1.116.123:15070][0] Producer with id {topics[3]} is already present on the connection\n")
        thread, level, logger, msg = bodies[rnd.randrange(len(bodies))]
        buf.append(f"{stamp(t)} [{thread}] {level:<5} {logger} - {msg.format(n=i)}\n")
        if len(buf) >= 20000:
            chunk = "".join(buf)
            out.write(chunk.encode())
            written += len(chunk)
            nlines += chunk.count("\n")
            buf.clear()
    if buf:
        chunk = "".join(buf)
        out.write(chunk.encode())
        written += len(chunk)
        nlines += chunk.count("\n")
    return nlines, written


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--lines", type=int, help="stop after about this many lines")
    ap.add_argument("--size", type=_size, help="stop after about this many bytes (e.g. 3G)")
    ap.add_argument("--layout", choices=["iso", "time"], default="iso", help="iso: 3.x layout; time: 2.x time-only stamps")
    ap.add_argument("--gzip", action="store_true")
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--event-rate", type=float, default=0.02, help="share of lines the packs recognise (default 0.02)")
    a = ap.parse_args()
    if not a.lines and not a.size:
        a.lines = 1_500_000
    a.out.parent.mkdir(parents=True, exist_ok=True)
    with (gzip.GzipFile(a.out, "wb", compresslevel=1, mtime=0) if a.gzip else open(a.out, "wb")) as fh:
        n, b = generate(fh, a.lines, a.size, a.layout, a.seed, a.event_rate)
    print(f"{a.out}: {n:,} lines, {b / 1e6:.1f} MB of text", file=sys.stderr)


if __name__ == "__main__":
    main()
