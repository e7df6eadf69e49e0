#!/usr/bin/env python3
"""Deterministic generator of many Kafka producer client logs (Spring Boot 2 layout), for the
"50 client files" benchmark: mostly application chatter, a few per cent of Kafka client lines,
and in a quarter of them a short broker outage with retries and a few expired batches.

    python benchmarks/gen_client_logs.py --files 50 --lines 60000 --out benchmarks/data/clients
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
from pathlib import Path

SENDER = "o.a.k.clients.producer.internals.Sender"
NET = "o.a.kafka.clients.NetworkClient"


def one(path: Path, lines: int, seed: int) -> int:
    rnd = random.Random(seed)
    t = dt.datetime(2024, 5, 2, 10, 0, 0)
    client = f"producer-{seed % 7 + 1}"
    outage = seed % 4 == 0
    out_from = lines // 2
    buf = []
    for i in range(lines):
        t += dt.timedelta(milliseconds=rnd.randint(1, 60))
        stamp = t.strftime("%Y-%m-%d %H:%M:%S.") + f"{t.microsecond // 1000:03d}"
        r = rnd.random()
        if outage and out_from <= i < out_from + 400 and r < 0.3:
            if r < 0.1:
                msg = f"[Producer clientId={client}] Connection to node 2 (kafka-2/10.0.0.7:9092) could not be established. Broker may not be available."
                buf.append(f"{stamp}  WARN 4242 --- [ad | {client}] {NET:<40} : {msg}")
            elif r < 0.2:
                msg = f"[Producer clientId={client}] Got error produce response with correlation id {i} on topic-partition orders-{i % 6}, retrying (2147483646 attempts left). Error: NETWORK_EXCEPTION. Error Message: Disconnected from node 2"
                buf.append(f"{stamp}  WARN 4242 --- [ad | {client}] {SENDER:<40} : {msg}")
            else:
                buf.append(f"{stamp} ERROR 4242 --- [ad | {client}] c.e.orders.OrderPublisher                : send failed: org.apache.kafka.common.errors.TimeoutException: Expiring {i % 40 + 1} record(s) for orders-{i % 6}:120{i % 1000:03d} ms has passed since batch creation")
        elif r < 0.6:
            buf.append(f"{stamp}  INFO 4242 --- [nio-8080-exec-{rnd.randint(1, 9)}] c.e.orders.OrderController               : POST /orders {i} accepted in {rnd.randint(2, 90)} ms")
        elif r < 0.85:
            buf.append(f"{stamp} DEBUG 4242 --- [   scheduling-1] c.e.orders.OutboxPoller                  : polled {rnd.randint(0, 50)} rows from outbox in {rnd.randint(1, 30)} ms")
        elif r < 0.99:
            buf.append(f"{stamp}  INFO 4242 --- [nio-8080-exec-{rnd.randint(1, 9)}] c.e.orders.OrderService                  : order {i} stored, total={rnd.randint(1, 999)}.{rnd.randint(0, 99):02d}")
        else:
            buf.append(f"{stamp}  INFO 4242 --- [ad | {client}] {NET:<40} : [Producer clientId={client}] Node {rnd.randint(1, 3)} disconnected.")
    path.write_text("\n".join(buf) + "\n")
    return len(buf)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=50)
    ap.add_argument("--lines", type=int, default=60000)
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    total = sum(one(a.out / f"order-service-{k:02d}.log", a.lines, k) for k in range(a.files))
    print(f"{a.out}: {a.files} files, {total:,} lines")


if __name__ == "__main__":
    main()
