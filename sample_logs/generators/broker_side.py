#!/usr/bin/env python3
"""Deterministic generator of the incidents whose cause is in the broker's own logs.

    python sample_logs/generators/broker_side.py            # writes sample_logs/kafka-rolling-restart/ ...
    python sample_logs/generators/broker_side.py --out DIR  # somewhere else

Seeded random, no network; running it again gives the same bytes. Kafka client lines are built
with kafka.py's texts (log-formats.md §B); Kafka broker lines use the texts of
patterns/packs/kafka-broker.toml (read from apache/kafka per release tag); the Pulsar Go client's
lines those of patterns/packs/pulsar-client-go.toml (logrus TextFormatter), the broker's those of
pulsar.py. Broker noise lines (log segments rolled, offsets deleted) are plausible, not copied.

Incidents (numbers are by construction; tests/test_broker_side.py asserts them):

kafka-rolling-restart/   kafka 3.6, ZooKeeper mode, tools log4j layout
  orders-producer.log    node 2 (kafka-2/10.0.0.7:9092) unreachable 13:41:58 -> 13:47:08; NOT_LEADER_OR_FOLLOWER
                         retries on orders-1 and orders-4 (their leadership moved to broker 3);
                         payments-2 (replicated on node 2 only) expires 3 batches of 20 records
  kafka-2/server.log.2024-05-02-13, kafka-2/server.log
                         SIGTERM 13:41:55, controlled shutdown, shut down completed 13:41:58;
                         starting 13:46:58, started 13:47:09 (current segment from 14:00)
  kafka-1/controller.log, kafka-1/state-change.log
                         'Shutting down broker 2'; orders-1, orders-4 -> leader 3
  kafka-3/server.log     ISR shrinks dropping 2, expands after the restart
kafka-disk-full/         kafka 3.6, Spring Boot 2 client
  billing-service.log    node 1 (kafka-1/10.0.0.6:9092) unreachable from 10:05:13 to the end; 2 batches expire
  kafka-1/server.log     'Error while appending records to invoices-0 in dir /var/lib/kafka/data' +
                         IOException: No space left on device; replicas and logs offline; 'Shutdown broker
                         because all log dirs in /var/lib/kafka/data have failed'; the log ends
  kafka-3/controller.log 'Broker failure callback for 1'
kafka-broker-hang/       kafka 3.7, KRaft
  inventory-producer.log node 3 (kafka-3/10.0.0.8:9092): request timeouts and failed connection set-ups
                         16:02:40 -> 16:06:35; inventory-2 expires 2 batches
  kafka-3/server.log     lines every ~2 s until 16:02:11.5, nothing until 16:06:40 (no shutdown, no banner)
  controller-1/controller.log  'Fencing broker 3 because its session has timed out.' 16:02:20;
                         unfenced 16:06:44
pulsar-go-clients/       Pulsar 2.5.1 broker, pulsar-client-go v0.12 (logrus text) clients
  pulsar-broker-1.2020-06-01.log
                         bundle unload 00:40:00 strands producer 1 of orders-go; later rejections
  orders-go.log          Go client: the broker closes the producer, reconnect, 'Failed to create producer
                         at send PRODUCER request' error="server error: ServiceNotReady: Producer is
                         already present on the connection" until the log ends (01:30)
  audit-go.log           Go client on the same broker: reconnects fine after the unload
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import kafka as k  # noqa: E402  (the sibling generator: layouts and client texts)

SEED = 20240503
NET = k.NETWORK
SENDER = k.SENDER
KS = "kafka.server.KafkaServer"


def t(day: dt.datetime, hms: str, msec: int = 0) -> dt.datetime:
    h, m, s = map(int, hms.split(":"))
    return day.replace(hour=h, minute=m, second=s, microsecond=msec * 1000)


def broker_noise(log: k.Log, rng: random.Random, start: dt.datetime, end: dt.datetime, every_s: float, node: int, tps: list[str]) -> None:
    """What a healthy broker writes all day: segments rolled, offsets deleted, group metadata."""
    texts = [
        ("kafka.log.UnifiedLog$", "[UnifiedLog partition={tp}, dir=/var/lib/kafka/data] Rolled new log segment at offset {n} in {ms} ms."),
        ("kafka.log.LocalLog$", "[LocalLog partition={tp}, dir=/var/lib/kafka/data] Deleting segment files LogSegment(baseOffset={n}, size=1048576, lastModifiedTime=1714650000000, largestRecordTimestamp=Some(1714650000000))"),
        ("kafka.coordinator.group.GroupMetadataManager", "[GroupMetadataManager brokerId=" + str(node) + "] Removed 0 expired offsets in {ms} milliseconds."),
    ]
    x = start
    while x < end:
        logger, text = rng.choice(texts)
        log.add(x, "INFO", logger, text.format(tp=rng.choice(tps), n=rng.randint(1000, 90000), ms=rng.randint(1, 9)))
        x += dt.timedelta(seconds=every_s * rng.uniform(0.6, 1.4))


def start_banner(log: k.Log, at: dt.datetime, node: int, host: str, prefix: str = "KafkaServer") -> dt.datetime:
    log.add(at, "INFO", KS, "starting")
    log.add(at + k.ms(90), "INFO", "kafka.server.KafkaConfig", "KafkaConfig values: ",
            trace=[f"\tadvertised.listeners = PLAINTEXT://{host}:9092", "\tauto.create.topics.enable = false", f"\tbroker.id = {node}", "\tbroker.rack = null"])
    return at


# --------------------------------------------------------------------------------------------- Kafka incidents


def rolling_restart(rng: random.Random) -> dict[str, str]:
    day = dt.datetime(2024, 5, 2)
    v, client, node, addr = "3.6", "producer-1", 2, "kafka-2/10.0.0.7:9092"
    p, nt = k.prefix(client), k.net_thread(client)
    app = "com.example.orders.OrderPublisher"
    cli = k.Log("kafka-log4j")
    k.noise(cli, rng, start=t(day, "13:30:00"), end=t(day, "13:55:00"), every_s=20, logger=app, thread="main",
            texts=["Published {n} orders in the last 20 s (p99 {ms} ms)"])
    # the controlled shutdown moves orders-1 / orders-4 to broker 3: the in-flight batches get NOT_LEADER_OR_FOLLOWER
    for i, tp in enumerate(("orders-1", "orders-4")):
        at = t(day, "13:41:56", 120 + 7 * i)
        cli.add(at, "WARN", SENDER, p + k.retry(v, 8801 + i, tp, "NOT_LEADER_OR_FOLLOWER", f"Disconnected from node {node}"), nt)
        cli.add(at + k.ms(1), "WARN", SENDER, p + k.invalid_metadata(v, tp, "org.apache.kafka.common.errors.NotLeaderOrFollowerException: " + k.NOT_LEADER_TEXT), nt)
    k.outage(cli, rng, version=v, client=client, node=node, address=addr, start=t(day, "13:41:58", 40), end=t(day, "13:47:08"),
             first_retries=["payments-2"], corr=8810, thread=nt, metadata_every_s=45, metadata_topics=("payments",))
    for j in range(3):  # payments-2 has its only replica on node 2: it cannot move, its batches expire
        k.expire(cli, rng, created=t(day, "13:42:05") + dt.timedelta(seconds=40 * j), records=20, tp="payments-2", elapsed=120_000 + 11 * j,
                 style="callback", logger=app, threads=[nt], key0=51000 + 20 * j, what="payment")
    files = {"kafka-rolling-restart/orders-producer.log": cli.text()}

    seg, cur = k.Log("kafka-log4j"), k.Log("kafka-log4j")
    tps = ["orders-1", "orders-4", "payments-2"]
    broker_noise(seg, rng, t(day, "13:20:00"), t(day, "13:41:55"), 4, node, tps)
    x = t(day, "13:41:55", 290)
    seg.add(x, "INFO", "org.apache.kafka.common.utils.LoggingSignalHandler", "Terminating process due to signal SIGTERM")
    seg.add(x + k.ms(11), "INFO", KS, f"[KafkaServer id={node}] shutting down")
    seg.add(x + k.ms(15), "INFO", KS, f"[KafkaServer id={node}] Starting controlled shutdown")
    seg.add(x + k.ms(2165), "INFO", KS, f"[KafkaServer id={node}] Controlled shutdown request returned successfully after 2150ms")
    seg.add(x + k.ms(2600), "INFO", "kafka.network.SocketServer", "[SocketServer listenerType=ZK_BROKER, nodeId=2] Stopped socket server request processors")
    seg.add(t(day, "13:41:58", 12), "INFO", KS, f"[KafkaServer id={node}] shut down completed")
    up = start_banner(seg, t(day, "13:46:58", 118), node, "kafka-2")
    seg.add(up + k.ms(9400), "INFO", "kafka.zk.KafkaZkClient", f"Registered broker {node} at path /brokers/ids/{node} with addresses: PLAINTEXT://kafka-2:9092, czxid (broker epoch): 4294967402")
    seg.add(t(day, "13:47:09", 870), "INFO", KS, f"[KafkaServer id={node}] started")
    broker_noise(seg, rng, t(day, "13:47:12"), t(day, "14:00:00"), 4, node, tps)
    broker_noise(cur, rng, t(day, "14:00:01"), t(day, "14:20:00"), 4, node, tps)
    files["kafka-rolling-restart/kafka-2/server.log.2024-05-02-13"] = seg.text()
    files["kafka-rolling-restart/kafka-2/server.log"] = cur.text()

    ctl, sc, b3 = k.Log("kafka-log4j"), k.Log("kafka-log4j"), k.Log("kafka-log4j")
    ctl.add(t(day, "13:41:55", 320), "INFO", "kafka.controller.KafkaController", f"[Controller id=1] Shutting down broker {node}")
    for i, tp in enumerate(("orders-1", "orders-4")):
        sc.add(t(day, "13:41:55", 900 + i), "INFO", "state.change.logger",
               f"[Controller id=1 epoch=12] Changed partition {tp} from OnlinePartition to OnlinePartition with state "
               f"LeaderAndIsr(leader=3, leaderEpoch={8 + i}, isr=List(3, 1), zkVersion={14 + i})")
    ctl.add(t(day, "13:41:58", 200), "INFO", "kafka.controller.KafkaController", f"[Controller id=1] Broker failure callback for {node}")
    ctl.add(t(day, "13:47:09", 900), "INFO", "kafka.controller.KafkaController", "[Controller id=1] Newly added brokers: 2, deleted brokers: , bounced brokers: , all live brokers: 1,2,3")
    broker_noise(b3, rng, t(day, "13:30:00"), t(day, "13:55:00"), 5, 3, tps)
    for i, tp in enumerate(("orders-1", "orders-4")):
        b3.add(t(day, "13:42:08", 118 + i), "INFO", "kafka.cluster.Partition",
               f"[Partition {tp} broker=3] Shrinking ISR from 3,1,2 to 3,1. Leader: (highWatermark: {88117 + i}, endOffset: {88120 + i}). "
               f"Out of sync replicas: (brokerId: 2, endOffset: {88101 + i}, lastCaughtUpTimeMs: 1714657315118).")
        b3.add(t(day, "13:47:40", 300 + i), "INFO", "kafka.cluster.Partition", f"[Partition {tp} broker=3] ISR updated to 3,1,2 and version updated to {17 + i}")
    files["kafka-rolling-restart/kafka-1/controller.log"] = ctl.text()
    files["kafka-rolling-restart/kafka-1/state-change.log"] = sc.text()
    files["kafka-rolling-restart/kafka-3/server.log"] = b3.text()
    return files


def disk_full(rng: random.Random) -> dict[str, str]:
    day = dt.datetime(2024, 5, 2)
    v, client, node, addr = "3.6", "billing-producer-1", 1, "kafka-1/10.0.0.6:9092"
    p, nt = k.prefix(client), k.net_thread(client)
    app = "com.example.billing.InvoicePublisher"
    cli = k.Log("spring-boot-2", pid=5150)
    k.noise(cli, rng, start=t(day, "09:50:00"), end=t(day, "10:12:00"), every_s=30, logger=app, thread="scheduling-1",
            texts=["Published {n} invoices (p99 {ms} ms)"])
    k.outage(cli, rng, version=v, client=client, node=node, address=addr, start=t(day, "10:05:13", 20), end=t(day, "10:11:50"),
             first_retries=["invoices-0"], corr=4410, thread=nt)
    for j in range(2):
        k.expire(cli, rng, created=t(day, "10:05:20") + dt.timedelta(seconds=60 * j), records=15, tp="invoices-0", elapsed=120_004 + j,
                 style="inline", logger=app, threads=[nt], key0=7100 + 15 * j, what="invoice")
    files = {"kafka-disk-full/billing-service.log": cli.text()}

    b1, ctl = k.Log("kafka-log4j"), k.Log("kafka-log4j")
    broker_noise(b1, rng, t(day, "09:40:00"), t(day, "10:05:12"), 4, node, ["invoices-0", "invoices-1"])
    x = t(day, "10:05:12", 6)
    b1.add(x, "ERROR", "kafka.server.LogDirFailureChannel", "Error while appending records to invoices-0 in dir /var/lib/kafka/data", trace=[
        "java.io.IOException: No space left on device",
        "\tat java.base/sun.nio.ch.FileDispatcherImpl.write0(Native Method)",
        "\tat java.base/sun.nio.ch.FileChannelImpl.write(FileChannelImpl.java:285)",
        "\tat org.apache.kafka.common.record.MemoryRecords.writeFullyTo(MemoryRecords.java:92)",
        "\tat kafka.log.LogSegment.append(LogSegment.scala:162)",
    ])
    b1.add(x + k.ms(14), "WARN", "kafka.server.ReplicaManager", f"[ReplicaManager broker={node}] Stopping serving replicas in dir /var/lib/kafka/data")
    b1.add(x + k.ms(25), "WARN", "kafka.log.LogManager", "Stopping serving logs in dir /var/lib/kafka/data")
    b1.add(x + k.ms(34), "ERROR", "kafka.log.LogManager", "Shutdown broker because all log dirs in /var/lib/kafka/data have failed")
    files["kafka-disk-full/kafka-1/server.log"] = b1.text()
    ctl.add(t(day, "10:05:19", 400), "INFO", "kafka.controller.KafkaController", f"[Controller id=3] Broker failure callback for {node}")
    files["kafka-disk-full/kafka-3/controller.log"] = ctl.text()
    return files


def broker_hang(rng: random.Random) -> dict[str, str]:
    day = dt.datetime(2024, 5, 2)
    v, client, node, addr = "3.7", "inventory-producer-1", 3, "kafka-3/10.0.0.8:9092"
    p, nt = k.prefix(client), k.net_thread(client)
    app = "com.example.inventory.StockPublisher"
    cli = k.Log("kafka-log4j")
    k.noise(cli, rng, start=t(day, "15:50:00"), end=t(day, "16:15:00"), every_s=20, logger=app, thread="main", texts=["Sent {n} stock updates ({ms} ms)"])
    # the broker hangs: TCP still accepted by the kernel, no answers: requests time out, then new connections time out
    x, corr = t(day, "16:02:40", 5), 9900
    while x < t(day, "16:06:35"):
        cli.add(x, "INFO", NET, p + f"Disconnecting from node {node} due to request timeout.", nt)
        cli.add(x + k.ms(1), "INFO", NET, p + k.cancelled(v, corr, node, 30_001), nt)
        cli.add(x + k.ms(2), "WARN", SENDER, p + k.retry(v, corr, "inventory-2", "NETWORK_EXCEPTION", f"Disconnected from node {node} due to timeout"), nt)
        cli.add(x + k.ms(10_300), "INFO", NET, p + f"Disconnecting from node {node} due to socket connection setup timeout. The timeout value is 10240 ms.", nt)
        corr += 1
        x += dt.timedelta(seconds=40) + k.ms(rng.randint(0, 900))
    for j in range(2):
        k.expire(cli, rng, created=t(day, "16:02:12") + dt.timedelta(seconds=50 * j), records=25, tp="inventory-2", elapsed=120_002 + j,
                 style="callback", logger=app, threads=[nt], key0=3300 + 25 * j, what="stock update")
    files = {"kafka-broker-hang/inventory-producer.log": cli.text()}
    b3, ctl = k.Log("kafka-log4j"), k.Log("kafka-log4j")
    broker_noise(b3, rng, t(day, "15:45:00"), t(day, "16:02:11"), 2, node, ["inventory-2", "inventory-5"])
    b3.add(t(day, "15:58:02", 310), "INFO", "kafka.server.ReplicaFetcherThread", f"[ReplicaFetcher replicaId={node}, leaderId=1, fetcherId=0] "
           "Truncating partition inventory-5 with TruncationState(offset=771200, completed=true) due to leader epoch and offset "
           "EpochEndOffset(errorCode=0, partition=5, leaderEpoch=9, endOffset=771200)")
    b3.add(t(day, "16:02:11", 500), "INFO", "kafka.log.UnifiedLog$", "[UnifiedLog partition=inventory-2, dir=/var/lib/kafka/data] Rolled new log segment at offset 771200 in 3 ms.")
    b3.add(t(day, "16:06:40", 12), "INFO", "kafka.server.BrokerLifecycleManager", f"[BrokerLifecycleManager id={node}] The broker has been unfenced. Transitioning from RECOVERY to RUNNING.")
    broker_noise(b3, rng, t(day, "16:06:41"), t(day, "16:20:00"), 2, node, ["inventory-2", "inventory-5"])
    files["kafka-broker-hang/kafka-3/server.log"] = b3.text()
    ctl.add(t(day, "16:02:20", 2), "INFO", "org.apache.kafka.controller.ReplicationControlManager",
            f"[QuorumController id=3000] Fencing broker {node} because its session has timed out.")
    ctl.add(t(day, "16:06:44", 114), "INFO", "org.apache.kafka.controller.BrokerHeartbeatManager",
            f"[QuorumController id=3000] The request from broker {node} to unfence has been granted because it has caught up with the offset of its register broker record 18822.")
    files["kafka-broker-hang/controller-1/controller.log"] = ctl.text()
    return files


# --------------------------------------------------------------------------------------------- Pulsar with Go clients


def logrus(at: dt.datetime, level: str, msg: str, **fields) -> str:
    def q(v) -> str:
        s = str(v)
        return s if s and all(c.isalnum() or c in "-._/@^+" for c in s) else '"' + s.replace('"', '\\"') + '"'
    tail = " ".join(f"{key}={q(val)}" for key, val in sorted(fields.items()))
    return f'time="{at:%Y-%m-%dT%H:%M:%S}Z" level={level} msg={q(msg)}' + (f" {tail}" if tail else "")


def pulsar_go(rng: random.Random) -> dict[str, str]:
    day = dt.datetime(2020, 6, 1)
    SC, BS, OB, PROD = ("org.apache.pulsar.broker.service.ServerCnx", "org.apache.pulsar.broker.service.BrokerService",
                        "org.apache.pulsar.broker.namespace.OwnedBundle", "org.apache.pulsar.broker.service.Producer")
    ns, bundle = "public/default", "0x40000000_0x80000000"
    broker: list[tuple[dt.datetime, str]] = []
    go: dict[str, list[tuple[dt.datetime, str]]] = {"orders-go.log": [], "audit-go.log": []}

    def b(at: dt.datetime, level: str, logger: str, msg: str, thread: str = "pulsar-io-22-3") -> None:
        broker.append((at, f"{at:%H:%M:%S}.{at.microsecond // 1000:03d} [{thread}] {level:<5} {logger} - {msg}"))

    prods = {
        "orders-go.log": ("persistent://public/default/orders-go-partition-0", "pulsar-7-1", 1, "10.2.0.15", 41234),
        "audit-go.log": ("persistent://public/default/audit-go", "pulsar-9-4", 1, "10.2.0.16", 52100),
    }
    broker_ip = "10.2.0.9"
    for f, (topic, name, pid, ip, port) in prods.items():
        at = t(day, "00:10:00") + dt.timedelta(seconds=len(go[f]) + (5 if f == "audit-go.log" else 0))
        conn = f"/{ip}:{port}"
        b(at, "INFO", SC, f"[{conn}][{topic}] Creating producer. producerId={pid}", "ForkJoinPool.commonPool-worker-3")
        b(at + k.ms(9), "INFO", SC, f"[{conn}] Created new producer: Producer{{topic=PersistentTopic{{topic={topic}}}, client={conn}, producerName={name}, producerId={pid}}}", "ForkJoinPool.commonPool-worker-3")
        go[f].append((at + k.ms(12), logrus(at + k.ms(12), "info", "Created producer", cnx=f"{ip}:{port} -> {broker_ip}:6650", producerID=pid, producer_name=name, topic=topic)))
    # some healthy traffic noise on the broker
    x = t(day, "00:05:00")
    while x < t(day, "01:30:00"):
        b(x, "INFO", "org.apache.pulsar.broker.service.persistent.PersistentTopic", f"[persistent://public/default/audit-go] Trimmed {rng.randint(1, 9)} ledgers", "bookkeeper-ml-workers-OrderedExecutor-2-0")
        x += dt.timedelta(seconds=rng.randint(40, 90))
    # the unload at 00:40: both producers closed; orders-go's reconnect dangles, audit-go's is fine
    u = t(day, "00:40:00", 100)
    b(u, "INFO", OB, f"Disabling ownership: {ns}/{bundle}", "pulsar-web-41-5")
    for f, (topic, name, pid, ip, port) in prods.items():
        conn = f"/{ip}:{port}"
        u += k.ms(5)
        b(u, "INFO", BS, f"[{topic}] Unloading topic", "pulsar-web-41-5")
        b(u + k.ms(2), "INFO", PROD, f"Disconnecting producer: Producer{{topic=PersistentTopic{{topic={topic}}}, client={conn}, producerName={name}, producerId={pid}}}", "pulsar-web-41-5")
        go[f].append((u + k.ms(4), logrus(u + k.ms(4), "info", f"Broker notification of Closed producer: {pid}", local_addr=f"{ip}:{port}", remote_addr=f"pulsar://{broker_ip}:6650")))
        go[f].append((u + k.ms(5), logrus(u + k.ms(5), "warning", "Connection was closed", cnx=f"{ip}:{port} -> {broker_ip}:6650", producerID=pid, producer_name=name, topic=topic)))
        go[f].append((u + k.ms(6), logrus(u + k.ms(6), "info", "Reconnecting to broker", assignedBrokerURL="", delayReconnectTime="110.3ms", producerID=pid, producer_name=name, topic=topic)))
    u += k.ms(40)
    b(u, "INFO", OB, f"Unloading {ns}/{bundle} namespace-bundle with 2 topics completed in 412.5 ms", "pulsar-web-41-5")
    # orders-go: its reconnect raced the unload on the same connection; the creation future dangles
    topic, name, pid, ip, port = prods["orders-go.log"]
    conn = f"/{ip}:{port}"
    r = t(day, "00:40:00", 160)
    b(r, "INFO", SC, f"[{conn}][{topic}] Creating producer. producerId={pid}", "ForkJoinPool.commonPool-worker-9")
    b(r + k.ms(2), "WARN", BS, f"Namespace bundle for topic ({topic}) not served by this instance. Please redo the lookup. Request is denied: namespace={ns}")
    delay, x = 0.1, r
    while x < t(day, "01:29:00"):
        x += dt.timedelta(seconds=delay) + k.ms(rng.randint(0, 40))
        b(x, "WARN", SC, f"[{conn}][{pid}] Producer with id {topic} is already present on the connection")
        err = "server error: ServiceNotReady: Producer is already present on the connection"
        go["orders-go.log"].append((x + k.ms(3), logrus(x + k.ms(3), "error", "Failed to create producer at send PRODUCER request", error=err, producerID=pid, producer_name=name, topic=topic)))
        go["orders-go.log"].append((x + k.ms(4), logrus(x + k.ms(4), "warning", "Failed to reconnect to broker, will retry later.", error=err, producerID=pid, producer_name=name, topic=topic)))
        go["orders-go.log"].append((x + k.ms(5), logrus(x + k.ms(5), "info", "Reconnecting to broker", assignedBrokerURL="", delayReconnectTime=f"{delay * 2:.1f}s", producerID=pid, producer_name=name, topic=topic)))
        delay = min(delay * 2, 60.0)
    # audit-go reconnects on the new owner (broker-2, not given)
    topic, name, pid, ip, port = prods["audit-go.log"]
    at = t(day, "00:40:01", 300)
    go["audit-go.log"].append((at, logrus(at, "info", "Reconnected producer to broker", cnx=f"{ip}:{port + 1} -> 10.2.0.10:6650", producerID=pid, producer_name=name, topic=topic)))
    for f in go:  # the application's own progress lines
        x = t(day, "00:00:30")
        while x < t(day, "01:30:00"):
            go[f].append((x, logrus(x, "info", f"sent {rng.randint(100, 900)} messages", app=f.split("-")[0])))
            x += dt.timedelta(seconds=60)
    files = {"pulsar-go-clients/pulsar-broker-1.2020-06-01.log": "\n".join(s for _, s in sorted(broker, key=lambda e: e[0])) + "\n"}
    for f, lines in go.items():
        files[f"pulsar-go-clients/{f}"] = "\n".join(s for _, s in sorted(lines, key=lambda e: e[0])) + "\n"
    return files


def generate() -> dict[str, str]:
    rng = random.Random(SEED)
    files: dict[str, str] = {}
    for build in (rolling_restart, disk_full, broker_hang, pulsar_go):
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
