#!/usr/bin/env python3
"""Deterministic generator of the Kafka Java producer sample incidents.

    python sample_logs/generators/kafka.py            # writes sample_logs/kafka-*/
    python sample_logs/generators/kafka.py --out DIR  # somewhere else

Seeded random, no network; running it again gives the same bytes. Every Kafka client line uses a
text from ../shared/reference/log-formats.md §B for the client version the file stands for; the
application's own lines (com.example.*) are invented. Stack frames of Kafka and Spring classes are
plausible, not copied from a real trace.

Incidents (numbers are by construction; tests/test_kafka.py asserts them):

kafka-outage/            Kafka tools log4j layout "[%d] %p %m (%c)%n", kafka-clients 3.6
  orders-producer.log    node 2 (kafka-2/10.0.0.7:9092) unreachable 10:15:30.412 -> 10:19:39.351;
                         NETWORK_EXCEPTION retries, invalid-metadata and metadata errors; 8 batches
                         (209 records) expire on orders-1, orders-4, payments-2, each logged once
                         per record (payments via send().get(): ExecutionException + Caused by);
                         23 BufferExhaustedException (3.1+ text, max.block.ms 60000, 1 MiB buffer)
  billing-producer.log   the same outage seen by another client for 32 s: retries, recovered,
                         nothing expired
kafka-outage-spring/     the same kind of incident in Spring Boot layouts, node 1
  order-service.log      Spring Boot 3 (+02:00 stamps), kafka-clients 3.9; 6 batches / 127 records
                         on inventory-0, inventory-5, shipments-2; 11 buffer exhaustions (3.1+ text,
                         max.block.ms 10000) wrapped in Spring's KafkaProducerException
  payment-service.log    Spring Boot 2 (UTC), kafka-clients 2.6; 4 batches / 100 records on
                         payments-0, payments-3; 7 buffer exhaustions (2.6-3.0 text, 30000 ms)
kafka-callback/          the application's Callback.onCompletion throws
  orders-app.log         log4j, 3.6: NullPointerException x17 on orders-3 and x5 on orders-1 from
                         com.example.orders.OrderCallback.onCompletion; IllegalStateException x4 on
                         orders-3 from com.example.orders.AckStore.record
  shipping-app.log       Spring Boot 2: ClassCastException x6 on shipments-0 and x3 on shipments-1
                         from com.example.shipping.ShipmentPublisher.lambda$publish$2
kafka-untimed/           no time stamps: a console pattern without %d, as is and as a shipper forwards it
  shipping-console.log   message-only: 4 expired batches / 6 records on shipments-0, shipments-2, each
  shipping-shipped.json  record quoted by Spring's LoggingProducerListener and the application (3 lines)
kafka-recovered/         retries that recover, nothing expires
  inventory-producer.log log4j, 3.7: node 3 leader move, NOT_LEADER_OR_FOLLOWER retries, 5 failed
                         connections within 7 s
  catalog-service.log    Spring Boot 3, 3.9: node 3 request timeouts, NETWORK_EXCEPTION retries
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
from pathlib import Path

SEED = 20240502

SENDER = "org.apache.kafka.clients.producer.internals.Sender"
NETWORK = "org.apache.kafka.clients.NetworkClient"
METADATA = "org.apache.kafka.clients.Metadata"
BATCH = "org.apache.kafka.clients.producer.internals.ProducerBatch"
PRODUCER = "org.apache.kafka.clients.producer.KafkaProducer"

NOT_LEADER_TEXT = (
    "For requests intended only for the leader, this error indicates that the broker is not the current leader. "
    "For requests intended for any replica, this error indicates that the broker is not a replica of the topic partition."
)


# --------------------------------------------------------------------------------------------- layouts


def abbreviate(logger: str, target: int = 39) -> str:
    """logback's TargetLengthBasedClassNameAbbreviator: shorten package segments from the left to
    their first letter until the name fits."""
    if len(logger) <= target:
        return logger
    parts = logger.split(".")
    for i in range(len(parts) - 1):
        parts[i] = parts[i][0]
        if len(".".join(parts)) <= target:
            break
    return ".".join(parts)


# the Spring Boot 3 sample lines in the reference (§B.0) show a shorter abbreviation for these two
SB3_LOGGERS = {SENDER: "o.a.k.c.p.internals.Sender", NETWORK: "o.a.kafka.clients.NetworkClient"}


class Log:
    """Entries of one file; written sorted by time (stable), in one of three layouts."""

    def __init__(self, layout: str, pid: int = 0, app: str = "", offset: str = ""):
        self.layout = layout  # kafka-log4j | spring-boot-2 | spring-boot-3
        self.pid = pid
        self.app = app
        self.offset = offset  # spring-boot-3: "+02:00" or "Z"
        self.entries: list[tuple[dt.datetime, int, list[str]]] = []
        self.seq = 0

    def add(self, t: dt.datetime, level: str, logger: str, msg: str, thread: str = "main", trace: list[str] | None = None) -> None:
        ms = f"{t.microsecond // 1000:03d}"
        if self.layout == "kafka-log4j":
            first = f"[{t:%Y-%m-%d %H:%M:%S},{ms}] {level} {msg} ({logger})"
            lines = [first] + list(trace or [])
        else:
            if self.layout == "spring-boot-2":
                stamp = f"{t:%Y-%m-%d %H:%M:%S}.{ms}"
                name = abbreviate(logger)
                head = f"{stamp} {level:>5} {self.pid} --- [{thread}] "
            else:
                stamp = f"{t:%Y-%m-%dT%H:%M:%S}.{ms}{self.offset}"
                name = SB3_LOGGERS.get(logger) or abbreviate(logger)
                head = f"{stamp} {level:>5} {self.pid} --- [{self.app}] [{thread}] "
            first = f"{head}{name[-40:]:<40} : {msg}"
            lines = [first]
            if trace:
                lines += [""] + list(trace)  # %m%n%wEx: a blank line, then the throwable
        self.entries.append((t, self.seq, lines))
        self.seq += 1

    def text(self) -> str:
        out: list[str] = []
        for _, _, lines in sorted(self.entries, key=lambda e: (e[0], e[1])):
            out.extend(lines)
        return "\n".join(out) + "\n"


def prefix(client: str) -> str:
    return f"[Producer clientId={client}] "


def net_thread(client: str) -> str:
    return f"kafka-producer-network-thread | {client}"


def ms(x: float) -> dt.timedelta:
    return dt.timedelta(milliseconds=x)


# --------------------------------------------------------------------------------------------- Kafka texts (§B)


def conn_failed(version: str, node: int, address: str) -> str:
    # <=2.0 without the address; 2.1-3.6 "Broker may not be available."; 3.7+ (KIP-919) "Node ..."
    tail = "Node may not be available." if version >= "3.7" else "Broker may not be available."
    return f"Connection to node {node} ({address}) could not be established. {tail}"


def retry(version: str, corr: int, tp: str, error: str, message: str | None, left: int = 2147483646) -> str:
    text = f"Got error produce response with correlation id {corr} on topic-partition {tp}, retrying ({left} attempts left). Error: {error}"
    if version >= "2.8" and message:  # KAFKA-9023: formatErrMsg
        text += f". Error Message: {message}"
    return text


def invalid_metadata(version: str, tp: str, exception: str) -> str:
    sep = " " if version >= "3.8" else ". "  # KAFKA-16202 removed the dot
    return f"Received invalid metadata error in produce request on partition {tp} due to {exception}{sep}Going to request metadata update now"


def metadata_error(version: str, corr: int, topics: str) -> str:
    if version >= "3.9":  # KAFKA-4374
        return f"The metadata response from the cluster reported a recoverable issue with correlation id {corr} : {topics}"
    return f"Error while fetching metadata with correlation id {corr} : {topics}"


def cancelled(version: str, corr: int, node: int, elapsed: int) -> str:
    throttle = "throttle time: 0ms, " if version >= "3.9" else ""
    return (
        f"Cancelled in-flight PRODUCE request with correlation id {corr} due to node {node} being disconnected "
        f"(elapsed time since creation: {elapsed}ms, elapsed time since send: {elapsed}ms, {throttle}request timeout: 30000ms)"
    )


def expiring(records: int, tp: str, elapsed: int) -> str:
    # 2.1+ (Sender, KIP-91): no space after the colon
    return f"org.apache.kafka.common.errors.TimeoutException: Expiring {records} record(s) for {tp}:{elapsed} ms has passed since batch creation"


def buffer_exhausted(version: str, max_block: int, total: int = 0) -> str:
    if version >= "3.1":  # #11378
        return (
            "org.apache.kafka.clients.producer.BufferExhaustedException: Failed to allocate 16384 bytes within the configured "
            f"max blocking time {max_block} ms. Total memory: {total} bytes. Available memory: 0 bytes. Poolable size: 16384 bytes"
        )
    if version >= "2.6":
        return f"org.apache.kafka.clients.producer.BufferExhaustedException: Failed to allocate memory within the configured max blocking time {max_block} ms."
    return f"org.apache.kafka.common.errors.TimeoutException: Failed to allocate memory within the configured max blocking time {max_block} ms."


def future_get_trace(cause: str, app_frames: list[str]) -> list[str]:
    """What send().get() prints: ExecutionException wrapping the ApiException (which itself has no
    stack trace: ApiException.fillInStackTrace is a no-op)."""
    return [
        f"java.util.concurrent.ExecutionException: {cause}",
        "\tat org.apache.kafka.clients.producer.internals.FutureRecordMetadata.valueOrError(FutureRecordMetadata.java:98)",
        "\tat org.apache.kafka.clients.producer.internals.FutureRecordMetadata.get(FutureRecordMetadata.java:67)",
        "\tat org.apache.kafka.clients.producer.internals.FutureRecordMetadata.get(FutureRecordMetadata.java:30)",
        *[f"\tat {f}" for f in app_frames],
        f"Caused by: {cause}",
    ]


CALLBACK_TAIL = [
    "\tat org.apache.kafka.clients.producer.KafkaProducer$AppendCallbacks.onCompletion(KafkaProducer.java:1575)",
    "\tat org.apache.kafka.clients.producer.internals.ProducerBatch.completeFutureAndFireCallbacks(ProducerBatch.java:312)",
    "\tat org.apache.kafka.clients.producer.internals.ProducerBatch.done(ProducerBatch.java:273)",
    "\tat org.apache.kafka.clients.producer.internals.Sender.completeBatch(Sender.java:793)",
    "\tat org.apache.kafka.clients.producer.internals.Sender.handleProduceResponse(Sender.java:696)",
    "\tat org.apache.kafka.clients.producer.internals.Sender.lambda$sendProduceRequest$5(Sender.java:911)",
    "\tat org.apache.kafka.clients.ClientResponse.onComplete(ClientResponse.java:154)",
    "\tat org.apache.kafka.clients.NetworkClient.completeResponses(NetworkClient.java:608)",
    "\tat org.apache.kafka.clients.NetworkClient.poll(NetworkClient.java:600)",
    "\tat org.apache.kafka.clients.producer.internals.Sender.runOnce(Sender.java:348)",
    "\tat org.apache.kafka.clients.producer.internals.Sender.run(Sender.java:250)",
    "\tat java.base/java.lang.Thread.run(Thread.java:840)",
]


# --------------------------------------------------------------------------------------------- building blocks


def outage(log: Log, rng: random.Random, *, version: str, client: str, node: int, address: str, start: dt.datetime,
           end: dt.datetime, first_retries: list[str], corr: int, thread: str, setup_timeouts: int = 0,
           metadata_every_s: float = 0.0, metadata_topics: tuple[str, ...] = ()) -> int:
    """A node that stops answering: the disconnect, cancelled in-flight requests, retries of what was
    in flight, invalid-metadata warnings, then failed reconnects (exponential back-off 50 ms -> 1 s
    with 20 % jitter, reconnect.backoff[.max].ms defaults) until ``end``. Returns the next correlation id."""
    p = prefix(client)
    logs_disconnect = version >= "3.1"  # "Node {} disconnected." is INFO from 3.1 (#11449), DEBUG before
    if logs_disconnect:
        log.add(start, "INFO", NETWORK, p + f"Node {node} disconnected.", thread)
        for i, _ in enumerate(first_retries):
            log.add(start + ms(1 + i), "INFO", NETWORK, p + cancelled(version, corr + i, node, rng.randint(2, 40)), thread)
    t = start + ms(3)
    for i, tp in enumerate(first_retries):
        t += ms(rng.randint(1, 3))
        log.add(t, "WARN", SENDER, p + retry(version, corr + i, tp, "NETWORK_EXCEPTION", f"Disconnected from node {node}"), thread)
        if version >= "2.8":  # the NetworkException carries "Disconnected from node N" from 2.8
            exc = f"org.apache.kafka.common.errors.NetworkException: Disconnected from node {node}"
            log.add(t + ms(1), "WARN", SENDER, p + invalid_metadata(version, tp, exc), thread)
    corr += len(first_retries)
    backoff = 50.0
    t = start + ms(60)
    n = 0
    while t < end:
        if logs_disconnect:
            log.add(t, "INFO", NETWORK, p + f"Node {node} disconnected.", thread)
        log.add(t + ms(1), "WARN", NETWORK, p + conn_failed(version, node, address), thread)
        n += 1
        if setup_timeouts and n % 40 == 20:
            setup_timeouts -= 1
            t += ms(10240)
            log.add(t, "INFO", NETWORK, p + f"Disconnecting from node {node} due to socket connection setup timeout. The timeout value is 10240 ms.", thread)
        backoff = min(1000.0, backoff * 2)
        t += ms(backoff * rng.uniform(0.8, 1.2))
    if metadata_every_s:
        t = start + dt.timedelta(seconds=metadata_every_s / 2)
        k = 0
        while t < end:
            topic = metadata_topics[k % len(metadata_topics)]
            log.add(t + ms(rng.randint(0, 900)), "WARN", NETWORK, p + metadata_error(version, corr, "{" + topic + "=LEADER_NOT_AVAILABLE}"), thread)
            corr += 1
            k += 1
            t += dt.timedelta(seconds=metadata_every_s)
    return corr


def expire(log: Log, rng: random.Random, *, created: dt.datetime, records: int, tp: str, elapsed: int, style: str,
           logger: str, threads: list[str], key0: int, what: str, caller: str = "") -> None:
    """One expired batch, logged once per record the way applications do: Kafka completes every
    record's future and calls every record's callback with the same TimeoutException.

    style "callback": the callback logs it (one line + the exception line, no frames);
    style "get":      worker threads blocked in send().get() log the ExecutionException;
    style "inline":   the callback logs e.toString() in the message, no throwable."""
    at = created + ms(elapsed)
    cause = expiring(records, tp, elapsed)
    for i in range(records):
        key = key0 + i
        if style == "callback":
            log.add(at + ms(i * 0.25), "ERROR", logger, f"Failed to send {what} {key} to {tp.rsplit('-', 1)[0]}", threads[0], [cause])
        elif style == "inline":
            log.add(at + ms(i * 0.25), "ERROR", logger, f"send failed for {what} {key}: {cause}", threads[0])
        else:
            cls = logger.rsplit(".", 1)[1]
            frames = [f"{logger}.publishSync({cls}.java:88)"]
            if caller:
                frames.append(f"{caller}({caller.split('.')[-2]}.java:{41 + (i % 3)})")
            log.add(at + ms(rng.randint(1, 400)), "ERROR", logger, f"Could not publish {what} {key}", rng.choice(threads), future_get_trace(cause, frames))


def noise(log: Log, rng: random.Random, *, start: dt.datetime, end: dt.datetime, every_s: float, logger: str, thread: str,
          texts: list[str]) -> None:
    t = start
    while t < end:
        log.add(t, "INFO", logger, rng.choice(texts).format(n=rng.randint(120, 480), ms=rng.randint(3, 40)), thread)
        t += dt.timedelta(seconds=every_s * rng.uniform(0.7, 1.3))


# --------------------------------------------------------------------------------------------- incidents


def kafka_outage(rng: random.Random) -> dict[str, str]:
    day = dt.datetime(2024, 5, 2)
    files: dict[str, str] = {}

    # orders-producer.log: kafka-clients 3.6, tools layout, clientId producer-1
    v = "3.6"
    log = Log("kafka-log4j")
    c = "producer-1"
    p = prefix(c)
    app = "com.example.orders.OrderPublisher"
    log.add(day.replace(hour=10), "INFO", "com.example.orders.Main", "OrderPublisher 2.3.1 starting (bootstrap.servers=kafka-1:9092,kafka-2:9092,kafka-3:9092)")
    log.add(day.replace(hour=10) + ms(812), "INFO", METADATA, p + "Cluster ID: q7oWmLkWR3ewjkfCdvhkag")
    noise(log, rng, start=day.replace(hour=10, second=20), end=day.replace(hour=10, minute=15, second=25), every_s=20, logger=app, thread="main",
          texts=["Published {n} orders in the last 20 s", "Published {n} orders in the last 20 s (p99 send latency {ms} ms)"])
    noise(log, rng, start=day.replace(hour=10, minute=20, second=5), end=day.replace(hour=10, minute=30), every_s=20, logger=app, thread="main",
          texts=["Published {n} orders in the last 20 s", "Published {n} orders in the last 20 s (p99 send latency {ms} ms)"])
    noise(log, rng, start=day.replace(hour=10, minute=2), end=day.replace(hour=10, minute=30), every_s=240, logger="com.example.orders.OrderRepository", thread="main",
          texts=["Slow query on orders_outbox: {ms}0 ms"])
    # a lone idle disconnect: a broker closing an idle connection, not an outage
    log.add(day.replace(hour=10, minute=7, second=12, microsecond=5000), "INFO", NETWORK, p + "Node 1 disconnected.")
    start = day.replace(hour=10, minute=15, second=30, microsecond=412000)
    end = day.replace(hour=10, minute=19, second=40)
    outage(log, rng, version=v, client=c, node=2, address="kafka-2/10.0.0.7:9092", start=start, end=end,
           first_retries=["orders-1", "orders-4", "payments-2"], corr=48211, thread="main", setup_timeouts=2,
           metadata_every_s=30, metadata_topics=("orders", "payments"))
    batches = [  # (tp, created, records, elapsed ms, style)
        ("orders-1", start - ms(512), 52, 120012, "callback"),
        ("orders-1", start + ms(31_900), 52, 120027, "callback"),
        ("orders-1", start + ms(100_400), 31, 120005, "inline"),
        ("orders-4", start - ms(230), 44, 120009, "callback"),
        ("orders-4", start + ms(70_100), 17, 120031, "callback"),
        ("payments-2", start + ms(588), 9, 120018, "get"),
        ("payments-2", start + ms(45_300), 3, 120004, "get"),
        ("payments-2", start + ms(124_600), 1, 120022, "get"),
    ]
    key = 81200
    for tp, created, n, e, style in batches:
        lg = "com.example.orders.PaymentPublisher" if tp.startswith("payments") else app
        what = "payment" if tp.startswith("payments") else "order"
        expire(log, rng, created=created, records=n, tp=tp, elapsed=e, style=style, logger=lg, threads=["pool-3-thread-1"], key0=key, what=what,
               caller="com.example.orders.CheckoutService.completeCheckout")
        key += n
    t = day.replace(hour=10, minute=18, second=50, microsecond=113000)
    for i in range(23):
        log.add(t, "ERROR", app, f"Failed to publish order {key + i}", "main", [buffer_exhausted(v, 60000, 1048576)])
        t += ms(rng.randint(1200, 2300))
    log.add(day.replace(hour=10, minute=19, second=58), "INFO", app, "Producer caught up: 0 orders waiting in the outbox")
    files["kafka-outage/orders-producer.log"] = log.text()

    # billing-producer.log: another client of the same cluster; its partition moves away from node 2
    log = Log("kafka-log4j")
    c = "billing-1"
    p = prefix(c)
    app = "com.example.billing.InvoicePublisher"
    log.add(day.replace(hour=10, second=3), "INFO", "com.example.billing.Main", "billing-publisher 1.8.0 starting")
    log.add(day.replace(hour=10, second=4, microsecond=20000), "INFO", METADATA, p + "Cluster ID: q7oWmLkWR3ewjkfCdvhkag")
    noise(log, rng, start=day.replace(hour=10, second=30), end=day.replace(hour=10, minute=30), every_s=30, logger=app, thread="main",
          texts=["Published {n} invoices in the last 30 s"])
    bstart = day.replace(hour=10, minute=15, second=30, microsecond=911000)
    bend = day.replace(hour=10, minute=16, second=2)
    corr = outage(log, rng, version=v, client=c, node=2, address="kafka-2/10.0.0.7:9092", start=bstart, end=bend,
                  first_retries=["invoices-0"], corr=7731, thread="main")
    log.add(bend + ms(420), "WARN", SENDER, p + retry(v, corr, "invoices-0", "NOT_LEADER_OR_FOLLOWER", NOT_LEADER_TEXT), "main")
    log.add(bend + ms(421), "WARN", SENDER, p + invalid_metadata(v, "invoices-0", f"org.apache.kafka.common.errors.NotLeaderOrFollowerException: {NOT_LEADER_TEXT}"), "main")
    log.add(bend + ms(700), "INFO", METADATA, p + "Resetting the last seen epoch of partition invoices-0 to 12 since the associated topicId changed from null to Zp8qL1s2T5yW3x4v5u6t7A")
    log.add(day.replace(hour=10, minute=29, second=59), "INFO", PRODUCER, p + "Closing the Kafka producer with timeoutMillis = 30000 ms.")
    files["kafka-outage/billing-producer.log"] = log.text()
    return files


def kafka_outage_spring(rng: random.Random) -> dict[str, str]:
    files: dict[str, str] = {}

    # order-service.log: Spring Boot 3, stamps in +02:00, kafka-clients 3.9
    v = "3.9"
    log = Log("spring-boot-3", pid=31337, app="order-svc", offset="+02:00")
    c = "order-svc-producer-1"
    p = prefix(c)
    nt = net_thread(c)
    local = dt.datetime(2024, 9, 17, 16, 0, 0)  # 14:00 UTC
    log.add(local, "INFO", "com.example.orders.OrderServiceApplication", "Started OrderServiceApplication in 4.871 seconds (process running for 5.402)")
    log.add(local + ms(1330), "INFO", METADATA, p + "Cluster ID: 9rHkG2cXQfW1b0d3JmYt8w", nt)
    noise(log, rng, start=local + dt.timedelta(seconds=15), end=local + dt.timedelta(minutes=12), every_s=15, logger="com.example.orders.OrderController",
          thread="http-nio-8080-exec-1", texts=["Accepted order batch of {n} lines", "GET /orders/health 200 in {ms} ms"])
    start = local.replace(minute=2, second=10, microsecond=118000)
    end = local.replace(minute=6, second=20)
    outage(log, rng, version=v, client=c, node=1, address="kafka-1.prod.internal/10.20.0.11:9092", start=start, end=end,
           first_retries=["inventory-0", "inventory-5", "shipments-2"], corr=9120, thread=nt, setup_timeouts=3,
           metadata_every_s=40, metadata_topics=("inventory", "shipments"))
    pub = "com.example.orders.InventoryEventPublisher"
    batches = [
        ("inventory-0", start - ms(130), 40, 120007, "callback"),
        ("inventory-0", start + ms(20_200), 40, 120019, "callback"),
        ("inventory-0", start + ms(95_000), 12, 120003, "callback"),
        ("inventory-5", start + ms(8_100), 27, 120011, "inline"),
        ("shipments-2", start + ms(1_000), 6, 120024, "callback"),
        ("shipments-2", start + ms(61_700), 2, 120002, "callback"),
    ]
    key = 5000
    for tp, created, n, e, style in batches:
        expire(log, rng, created=created, records=n, tp=tp, elapsed=e, style=style, logger=pub, threads=[nt], key0=key, what="event")
        key += n
    t = local.replace(minute=5, second=31, microsecond=640000)
    for i in range(11):
        trace = [
            "org.springframework.kafka.core.KafkaProducerException: Failed to send",
            "\tat org.springframework.kafka.core.KafkaTemplate.lambda$buildCallback$6(KafkaTemplate.java:848)",
            "\tat org.apache.kafka.clients.producer.KafkaProducer.doSend(KafkaProducer.java:1103)",
            "\tat org.apache.kafka.clients.producer.KafkaProducer.send(KafkaProducer.java:962)",
            "\tat org.springframework.kafka.core.KafkaTemplate.doSend(KafkaTemplate.java:799)",
            "\tat com.example.orders.InventoryEventPublisher.publish(InventoryEventPublisher.java:57)",
            "\tat com.example.orders.OrderController.accept(OrderController.java:33)",
            "Caused by: " + buffer_exhausted(v, 10000, 4194304),
        ]
        log.add(t, "ERROR", "com.example.orders.OrderController", f"Order {key + i} rejected: could not publish inventory event", f"http-nio-8080-exec-{1 + i % 4}", trace)
        t += ms(rng.randint(2500, 4000))
    files["kafka-outage-spring/order-service.log"] = log.text()

    # payment-service.log: Spring Boot 2, UTC stamps, kafka-clients 2.6 (no "Node N disconnected." at INFO,
    # no "Error Message:" suffix, NOT_LEADER_OR_FOLLOWER, BufferExhaustedException without sizes)
    v = "2.6"
    log = Log("spring-boot-2", pid=4242)
    c = "producer-1"
    p = prefix(c)
    nt = net_thread(c)
    base = dt.datetime(2024, 9, 17, 14, 0, 0)
    log.add(base + ms(210), "INFO", "com.example.payments.PaymentServiceApplication", "Started PaymentServiceApplication in 6.112 seconds (JVM running for 6.9)")
    log.add(base + ms(2100), "INFO", METADATA, p + "Cluster ID: 9rHkG2cXQfW1b0d3JmYt8w", nt)
    noise(log, rng, start=base + dt.timedelta(seconds=20), end=base + dt.timedelta(minutes=12), every_s=20, logger="com.example.payments.PaymentController",
          thread="http-nio-8443-exec-2", texts=["Captured {n} payments", "POST /payments/capture 200 in {ms} ms"])
    start = base.replace(minute=2, second=10, microsecond=604000)
    end = base.replace(minute=6, second=21)
    corr = outage(log, rng, version=v, client=c, node=1, address="kafka-1.prod.internal/10.20.0.11:9092", start=start, end=end,
                  first_retries=["payments-0", "payments-3"], corr=311, thread=nt, metadata_every_s=45, metadata_topics=("payments",))
    t = start + dt.timedelta(seconds=35)
    for tp in ("payments-0", "payments-3", "payments-0"):
        log.add(t, "WARN", SENDER, p + retry(v, corr, tp, "NOT_LEADER_OR_FOLLOWER", None), nt)
        exc = f"org.apache.kafka.common.errors.NotLeaderOrFollowerException: {NOT_LEADER_TEXT}"
        log.add(t + ms(1), "WARN", SENDER, p + invalid_metadata(v, tp, exc), nt)
        corr += 1
        t += dt.timedelta(seconds=rng.uniform(20, 50))
    pub = "com.example.payments.PaymentPublisher"
    workers = [f"http-nio-8443-exec-{i}" for i in range(1, 9)]
    batches = [
        ("payments-0", start - ms(300), 37, 120004, "get"),
        ("payments-0", start + ms(40_800), 37, 120015, "get"),
        ("payments-0", start + ms(101_000), 5, 120001, "callback"),
        ("payments-3", start + ms(2_000), 21, 120009, "get"),
    ]
    key = 77000
    for tp, created, n, e, style in batches:
        expire(log, rng, created=created, records=n, tp=tp, elapsed=e, style=style, logger=pub,
               threads=[nt] if style == "callback" else workers, key0=key, what="payment",
               caller="com.example.payments.PaymentController.capture")
        key += n
    t = base.replace(minute=5, second=2, microsecond=77000)
    for i in range(7):
        log.add(t, "ERROR", pub, f"Could not publish payment {key + i}", workers[i % len(workers)], [buffer_exhausted(v, 30000)])
        t += ms(rng.randint(4000, 9000))
    files["kafka-outage-spring/payment-service.log"] = log.text()
    return files


def kafka_callback(rng: random.Random) -> dict[str, str]:
    files: dict[str, str] = {}
    v = "3.6"
    log = Log("kafka-log4j")
    c = "producer-1"
    p = prefix(c)
    day = dt.datetime(2024, 6, 11, 8, 0, 0)
    log.add(day, "INFO", "com.example.orders.Main", "orders-app 3.0.4 starting")
    log.add(day + ms(640), "INFO", METADATA, p + "Cluster ID: q7oWmLkWR3ewjkfCdvhkag")
    noise(log, rng, start=day + dt.timedelta(seconds=30), end=day + dt.timedelta(minutes=20), every_s=30, logger="com.example.orders.OrderPublisher",
          thread="main", texts=["Published {n} orders in the last 30 s"])
    npe = [
        'java.lang.NullPointerException: Cannot invoke "String.length()" because "key" is null',
        "\tat com.example.orders.OrderCallback.onCompletion(OrderCallback.java:42)",
        *CALLBACK_TAIL,
    ]
    ise = [
        "java.lang.IllegalStateException: ack store closed",
        "\tat com.example.orders.AckStore.record(AckStore.java:88)",
        "\tat com.example.orders.OrderCallback.onCompletion(OrderCallback.java:47)",
        *CALLBACK_TAIL,
    ]
    plan = ["orders-3"] * 17 + ["orders-1"] * 5
    rng.shuffle(plan)
    t = day + dt.timedelta(minutes=6, seconds=2)
    for tp in plan:
        log.add(t, "ERROR", BATCH, p + f"Error executing user-provided callback on message for topic-partition '{tp}'", "main", npe)
        t += ms(rng.randint(300, 9000))
    t = day + dt.timedelta(minutes=11, seconds=40)
    for _ in range(4):
        log.add(t, "ERROR", BATCH, p + "Error executing user-provided callback on message for topic-partition 'orders-3'", "main", ise)
        t += ms(rng.randint(1000, 4000))
    files["kafka-callback/orders-app.log"] = log.text()

    log = Log("spring-boot-2", pid=5120)
    c = "shipping-producer-1"
    p = prefix(c)
    nt = net_thread(c)
    log.add(day + ms(120), "INFO", "com.example.shipping.ShippingApplication", "Started ShippingApplication in 5.03 seconds (JVM running for 5.8)")
    noise(log, rng, start=day + dt.timedelta(seconds=10), end=day + dt.timedelta(minutes=20), every_s=40, logger="com.example.shipping.ShipmentController",
          thread="http-nio-8080-exec-1", texts=["Created {n} shipment labels", "POST /shipments 201 in {ms} ms"])
    cce = [
        "java.lang.ClassCastException: class java.lang.String cannot be cast to class com.example.shipping.Shipment "
        "(java.lang.String is in module java.base of loader 'bootstrap'; com.example.shipping.Shipment is in unnamed module of loader 'app')",
        "\tat com.example.shipping.ShipmentPublisher.lambda$publish$2(ShipmentPublisher.java:64)",
        "\tat org.springframework.kafka.core.KafkaTemplate.lambda$buildCallback$6(KafkaTemplate.java:836)",
        *CALLBACK_TAIL,
    ]
    plan = ["shipments-0"] * 6 + ["shipments-1"] * 3
    rng.shuffle(plan)
    t = day + dt.timedelta(minutes=3, seconds=17)
    for tp in plan:
        log.add(t, "ERROR", BATCH, p + f"Error executing user-provided callback on message for topic-partition '{tp}'", nt, cce)
        t += ms(rng.randint(2000, 30000))
    files["kafka-callback/shipping-app.log"] = log.text()
    return files


def kafka_recovered(rng: random.Random) -> dict[str, str]:
    files: dict[str, str] = {}
    v = "3.7"
    log = Log("kafka-log4j")
    c = "producer-1"
    p = prefix(c)
    day = dt.datetime(2024, 7, 3, 9, 20, 0)
    log.add(day, "INFO", "com.example.inventory.Main", "inventory-producer 1.4.2 starting")
    log.add(day + ms(500), "INFO", METADATA, p + "Cluster ID: q7oWmLkWR3ewjkfCdvhkag")
    noise(log, rng, start=day + dt.timedelta(seconds=20), end=day + dt.timedelta(minutes=25), every_s=20, logger="com.example.inventory.StockPublisher",
          thread="main", texts=["Published {n} stock updates in the last 20 s"])
    start = day.replace(minute=30, second=0, microsecond=251000)
    log.add(start, "INFO", NETWORK, p + "Node 3 disconnected.")
    log.add(start + ms(1), "INFO", NETWORK, p + cancelled(v, 20417, 3, 12))
    corr = 20417
    for i, tp in enumerate(("inventory-2", "inventory-5")):
        log.add(start + ms(3 + i), "WARN", SENDER, p + retry(v, corr + i, tp, "NOT_LEADER_OR_FOLLOWER", NOT_LEADER_TEXT))
        log.add(start + ms(4 + i), "WARN", SENDER, p + invalid_metadata(v, tp, f"org.apache.kafka.common.errors.NotLeaderOrFollowerException: {NOT_LEADER_TEXT}"))
    t = start + ms(80)
    for k in range(5):
        log.add(t, "INFO", NETWORK, p + "Node 3 disconnected.")
        log.add(t + ms(1), "WARN", NETWORK, p + conn_failed(v, 3, "kafka-3/10.0.0.8:9092"))
        t += ms(min(1000, 50 * 2 ** (k + 1)) * rng.uniform(0.8, 1.2) + 1200)
    log.add(t + ms(300), "INFO", METADATA, p + "Resetting the last seen epoch of partition inventory-2 to 31 since the associated topicId changed from null to Zp8qL1s2T5yW3x4v5u6t7A")
    files["kafka-recovered/inventory-producer.log"] = log.text()

    v = "3.9"
    log = Log("spring-boot-3", pid=8080, app="catalog", offset="+01:00")
    c = "catalog-producer-1"
    p = prefix(c)
    nt = net_thread(c)
    local = dt.datetime(2024, 7, 3, 10, 20, 0)  # 09:20 UTC
    log.add(local, "INFO", "com.example.catalog.CatalogApplication", "Started CatalogApplication in 3.9 seconds (process running for 4.4)")
    noise(log, rng, start=local + dt.timedelta(seconds=10), end=local + dt.timedelta(minutes=25), every_s=25, logger="com.example.catalog.PriceFeed",
          thread="scheduling-1", texts=["Pushed {n} price updates"])
    start = local.replace(minute=31, second=14, microsecond=8000)
    log.add(start, "INFO", NETWORK, p + "Disconnecting from node 3 due to request timeout.", nt)
    log.add(start + ms(1), "INFO", NETWORK, p + cancelled(v, 6610, 3, 30001), nt)
    log.add(start + ms(2), "INFO", NETWORK, p + cancelled(v, 6611, 3, 29870), nt)
    log.add(start + ms(4), "WARN", SENDER, p + retry(v, 6610, "prices-1", "NETWORK_EXCEPTION", "Disconnected from node 3"), nt)
    log.add(start + ms(5), "WARN", SENDER, p + retry(v, 6611, "prices-4", "NETWORK_EXCEPTION", "Disconnected from node 3"), nt)
    log.add(start + ms(6), "WARN", SENDER, p + invalid_metadata(v, "prices-1", "org.apache.kafka.common.errors.NetworkException: Disconnected from node 3"), nt)
    log.add(start + ms(31_020), "INFO", NETWORK, p + "Disconnecting from node 3 due to request timeout.", nt)
    log.add(start + ms(31_022), "WARN", SENDER, p + retry(v, 6630, "prices-1", "NETWORK_EXCEPTION", "Disconnected from node 3"), nt)
    files["kafka-recovered/catalog-service.log"] = log.text()
    return files


def kafka_untimed(rng: random.Random) -> dict[str, str]:
    """A Spring Kafka service whose console pattern has no time stamp (``%-5level %logger{36} - %msg%n``,
    read as plain messages), written as is and as a log shipper forwards it without a time
    (``{"log": …, "stream": "stdout"}``). Every expired record is quoted by Spring's
    LoggingProducerListener and again by the application's callback (KafkaProducerException + Caused
    by): three lines per record, one line each, no time and no logger the layout can read to tell
    them apart. Batches: shipments-2 1 record (120004 ms), shipments-0 3 records (120011 ms),
    shipments-2 1 record (120019 ms), and, after a stretch of other lines, shipments-2 1 record
    (120004 ms) again: 4 batches, 6 records."""
    listener, app = "o.s.k.support.LoggingProducerListener", "c.e.shipping.ShipmentPublisher"
    out: list[str] = ["INFO  c.e.shipping.Application - Started Application in 4.218 seconds (JVM running for 5.1)"]

    def batch(records: int, tp: str, elapsed: int, key0: int) -> None:
        cause = expiring(records, tp, elapsed)
        topic, part = tp.rsplit("-", 1)
        for k in range(key0, key0 + records):
            out.append(f"ERROR {listener} - Exception thrown when sending a message with key='{k}' and payload='ShipmentEvent(id={k})' "
                       f"to topic {topic} and partition {part}:")
            out.append(cause)
            out.append(f"ERROR {app} - could not publish shipment {k}")
            out.append("org.springframework.kafka.core.KafkaProducerException: Failed to send; nested exception is " + cause)
            out.append("\tat org.springframework.kafka.core.KafkaTemplate.lambda$buildCallback$4(KafkaTemplate.java:602)")
            out.append("Caused by: " + cause)

    def traffic(n: int) -> None:
        for _ in range(n):
            out.append(f"INFO  {app} - published shipment {rng.randint(8000, 9999)} to shipments")

    traffic(12)
    out.append("WARN  o.a.kafka.clients.NetworkClient - [Producer clientId=producer-1] Connection to node 1 (kafka-1/10.3.0.11:9092) could not be established. Broker may not be available.")
    batch(1, "shipments-2", 120004, 7000)
    batch(3, "shipments-0", 120011, 7001)
    batch(1, "shipments-2", 120019, 7004)
    traffic(150)
    batch(1, "shipments-2", 120004, 7105)
    traffic(5)
    plain = "\n".join(out) + "\n"
    shipped = "\n".join(json.dumps({"log": x, "stream": "stdout"}, ensure_ascii=False) for x in out) + "\n"
    return {"kafka-untimed/shipping-console.log": plain, "kafka-untimed/shipping-shipped.json": shipped}


def generate() -> dict[str, str]:
    rng = random.Random(SEED)
    files: dict[str, str] = {}
    for build in (kafka_outage, kafka_outage_spring, kafka_callback, kafka_recovered, kafka_untimed):
        files.update(build(rng))
    return files


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent, help="directory to write into (default: sample_logs/)")
    args = ap.parse_args()
    for rel, text in generate().items():
        path = args.out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        print(f"{path}: {text.count(chr(10))} lines")


if __name__ == "__main__":
    main()
