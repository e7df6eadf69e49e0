#!/usr/bin/env python3
"""Whole incident nights with their truth, written apart from logsleuth (nothing here imports it).

    python benchmarks/nights/gen.py --seed 1 --nights 10 --scale 1 --out /tmp/nights

Each night is a directory of logs (broker and client files of one system, several hosts, zones and
clock skew, rotated and gzip'd segments, several releases of the software, application chatter) and
a ``truth.json`` that says what a correct diagnosis holds: which findings, on which subjects, with
which counts and causes, and that nothing else of severity medium or more is claimed. The truth is
written from the scenario the generator played, never from logsleuth's output; score a directory
with ``benchmarks/nights/score.py``.

Night kinds, cycled so that a small seed covers each (the seed picks releases, layouts, zones, skew,
rotation and sizes):

* ``pulsar-dangling``: two Pulsar brokers (2.4.2-2.5.1, the releases with the dangling producer
  future, time-only stamps), many shedder unloads on both; during one unload a producer re-created
  on the unloading broker's connection never gets an answer and keeps being refused ("Producer with
  id <topic> is already present on the connection"); Java client logs.
* ``kafka-outage``: node N of a three-node cluster down for 4-9 minutes (crashed and restarted, its
  server.log given, or cut off by the network, no broker log); 1-2 producer applications (Kafka
  1.1-3.7 wording; log4j, Spring Boot 2/3 with an offset, Quarkus) retry, then expire batches after
  delivery.timeout.ms; the busiest one's log rotates inside the outage (logback size-and-time or
  log4j2 archive names, gzip'd).
* ``sarama-stall``: a Go producer (sarama's std logger, the application through std log or zap
  JSON) whose leader is black-holed: one broker (the seed: "run out of available brokers" after
  ReadTimeout x2 + 4 dials) or one of three (the leader re-dialled per retry); sarama-timing.md's
  measured model.
* ``kafka-callback``: a producer whose send callback throws (Quarkus, Dropwizard, Spring Boot 3 or
  log4j layouts), beside ordinary application exceptions that are not callback errors.
* ``healthy``: near misses only: Pulsar unloads that complete, a Kafka client's few-second blip with
  one retry and nothing expired, a sarama reconnect. Nothing of severity medium or more is right.

Message texts are the software's own format strings (../shared/reference/log-formats.md; Kafka's
broker lifecycle lines as server.log prints them).
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
import os
import random
import zlib
import zoneinfo
from dataclasses import dataclass, field
from pathlib import Path

UTC = dt.timezone.utc
KINDS = ["pulsar-dangling", "kafka-outage", "sarama-stall", "kafka-callback", "healthy", "kafka-rolling", "sarama-refused"]


# ----------------------------------------------------------------------------- records and layouts

@dataclass
class Rec:
    t: dt.datetime  # true UTC time of the event
    level: str
    logger: str
    thread: str
    msg: str
    cont: list[str] = field(default_factory=list)  # stack-trace lines
    raw: str | None = None  # a line written as is (JSON from another logger)


@dataclass
class Host:
    tz: dt.tzinfo  # the zone its stamps are written in (only layouts that print an offset get one)
    skew: float  # seconds its clock is ahead of the truth


def _local(r: Rec, h: Host) -> dt.datetime:
    return (r.t + dt.timedelta(seconds=h.skew)).astimezone(h.tz)


def _ms(t: dt.datetime, sep: str) -> str:
    return f"{sep}{t.microsecond // 1000:03d}"


def _abbrev(logger: str, width: int = 39) -> str:
    """logback's %logger{39}: leading package segments cut to their first letter until it fits."""
    segs = logger.split(".")
    i = 0
    while len(".".join(segs)) > width and i < len(segs) - 1:
        segs[i] = segs[i][0]
        i += 1
    return ".".join(segs)


def _quarkus_cat(logger: str) -> str:
    """JBoss %c{3.}: every segment but the last cut to three letters."""
    segs = logger.split(".")
    return ".".join([s[:3] for s in segs[:-1]] + [segs[-1]])


def render(r: Rec, layout: str, h: Host, pid: int = 4242, app: str = "app") -> list[str]:
    if r.raw is not None:
        return [r.raw]
    t = _local(r, h)
    lv = r.level
    if layout == "pulsar-time":  # Pulsar 2.x conf/log4j2.yaml: %d{HH:mm:ss.SSS} [%t] %-5level %logger{36} - %msg%n
        head = f"{t:%H:%M:%S}{_ms(t, '.')} [{r.thread}] {lv:<5} {r.logger} - {r.msg}"
        return [head] + r.cont
    if layout == "kafka":  # [%d] %p %m (%c)%n
        return [f"[{t:%Y-%m-%d %H:%M:%S}{_ms(t, ',')}] {lv} {r.msg} ({r.logger})"] + r.cont
    if layout == "spring2":
        return [f"{t:%Y-%m-%d %H:%M:%S}{_ms(t, '.')} {lv:>5} {pid} --- [{r.thread[-15:]:>15}] {_abbrev(r.logger):<40} : {r.msg}"] + r.cont
    if layout == "spring3":
        off = t.strftime("%z")
        off = off[:3] + ":" + off[3:] if off != "+0000" else "Z"
        return [f"{t:%Y-%m-%dT%H:%M:%S}{_ms(t, '.')}{off} {lv:>5} {pid} --- [{app}] [{r.thread[-15:]:>15}] {_abbrev(r.logger):<40} : {r.msg}"] + r.cont
    if layout == "quarkus":  # %d{yyyy-MM-dd HH:mm:ss,SSS} %-5p [%c{3.}] (%t) %s%e%n
        msg = r.msg
        if r.cont:  # %e: the exception after the message, its frames on the next lines
            msg = f"{msg}: {r.cont[0]}"
            return [f"{t:%Y-%m-%d %H:%M:%S}{_ms(t, ',')} {lv:<5} [{_quarkus_cat(r.logger)}] ({r.thread}) {msg}"] + r.cont[1:]
        return [f"{t:%Y-%m-%d %H:%M:%S}{_ms(t, ',')} {lv:<5} [{_quarkus_cat(r.logger)}] ({r.thread}) {msg}"]
    if layout == "dropwizard":  # %-5p [%d{ISO8601,UTC}] %c: %m%n%rEx  ("! " before every trace line)
        u = t.astimezone(UTC)
        return [f"{lv:<5} [{u:%Y-%m-%d %H:%M:%S}{_ms(u, ',')}] {r.logger}: {r.msg}"] + [f"! {c.strip()}" for c in r.cont]
    if layout == "golog":  # Go's log.LstdFlags, with sarama's prefix before the date for sarama's own lines
        prefix = "[sarama] " if r.logger == "sarama" else ""
        return [f"{prefix}{t:%Y/%m/%d %H:%M:%S} {r.msg}"]
    raise ValueError(layout)


def zap(r: Rec, fields: dict, skew: float) -> Rec:
    """The application's own line through zap's production JSON encoder (epoch seconds, lower-case level),
    on the same host clock as the rest of the process's lines."""
    doc = {"level": r.level.lower(), "ts": round(r.t.timestamp() + skew, 3), "caller": "producer/main.go:88", "msg": r.msg}
    doc.update(fields)
    r.raw = json.dumps(doc, separators=(",", ":"))
    return r


@dataclass
class LogFile:
    name: str  # the live name
    layout: str
    host: Host
    recs: list[Rec] = field(default_factory=list)
    rotate_at: dt.datetime | None = None  # the older segment ends here
    archive: str | None = None  # the older segment's name (gzip'd)
    app: str = "app"
    wrapper: str | None = None  # what collected it: "kubectl" (logs --prefix) or "docker-json" (json-file driver)

    def write(self, root: Path) -> list[str]:
        self.recs.sort(key=lambda r: r.t)
        old = [r for r in self.recs if self.rotate_at and r.t < self.rotate_at]
        new = [r for r in self.recs if not (self.rotate_at and r.t < self.rotate_at)]
        names = []

        pod = f"pod/{self.app}-{zlib.crc32(self.name.encode()) % 10**5:05d}-x7k2p/{self.app}"

        def wrapped(r: Rec, line: str) -> str:
            if self.wrapper == "kubectl":
                return f"[{pod}] {line}"
            if self.wrapper == "docker-json":  # the collector's own clock: the true time, in ns
                t = r.t.astimezone(UTC)
                return json.dumps({"log": line + "\n", "stream": "stdout", "time": f"{t:%Y-%m-%dT%H:%M:%S}.{t.microsecond:06d}417Z"},
                                  separators=(",", ":"))
            return line

        def text(recs):
            return "".join(wrapped(r, line) + "\n" for r in recs for line in render(r, self.layout, self.host, app=self.app))

        if old:
            p = root / self.archive
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(gzip.compress(text(old).encode("utf-8"), mtime=0))  # the same bytes on every run
            end = old[-1].t.timestamp()
            os.utime(p, (end, end))
            names.append(self.archive)
        p = root / self.name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text(new), encoding="utf-8")
        if new:
            end = new[-1].t.timestamp() + 1
            os.utime(p, (end, end))
        names.append(self.name)
        return names


# ----------------------------------------------------------------------------- chatter

def chatter(rnd: random.Random, f: LogFile, start: dt.datetime, end: dt.datetime, n: int, kind: str) -> None:
    span = (end - start).total_seconds()
    for _ in range(n):
        t = start + dt.timedelta(seconds=rnd.random() * span)
        k = rnd.random()
        if kind == "pulsar-broker":
            if k < 0.5:
                f.recs.append(Rec(t, "INFO", "org.apache.bookkeeper.mledger.impl.ManagedLedgerImpl", f"bookkeeper-ml-workers-OrderedExecutor-{rnd.randint(0, 7)}-0",
                                  f"[public/default/persistent/events-partition-{rnd.randint(0, 15)}] Ledger {rnd.randint(1000, 99999)} rollover: creating new ledger"))
            elif k < 0.8:
                f.recs.append(Rec(t, "INFO", "org.apache.pulsar.broker.service.ServerCnx", f"pulsar-io-22-{rnd.randint(1, 8)}",
                                  f"New connection from /10.1.{rnd.randint(1, 200)}.{rnd.randint(1, 250)}:{rnd.randint(10000, 60000)}"))
            else:
                f.recs.append(Rec(t, "INFO", "org.apache.pulsar.broker.service.persistent.PersistentTopic", f"pulsar-io-22-{rnd.randint(1, 8)}",
                                  f"[persistent://public/default/events-partition-{rnd.randint(0, 15)}][reader-{rnd.randint(1, 99)}] Created new subscription for {rnd.randint(1, 9)}"))
        elif kind == "kafka-broker":
            f.recs.append(Rec(t, "INFO", "kafka.log.LogCleaner" if k < 0.3 else "kafka.log.Log", "kafka-scheduler-3",
                              f"[Log partition=events-{rnd.randint(0, 11)}, dir=/var/lib/kafka/data] Rolled new log segment at offset {rnd.randint(10**5, 10**8)} in {rnd.randint(1, 9)} ms."))
        elif kind == "go":
            f.recs.append(Rec(t, "INFO", "app", "main", f"http: GET /healthz 200 in {rnd.randint(1, 900)}us"))
        else:  # a Java application
            if k < 0.6:
                f.recs.append(Rec(t, "INFO", "com.example.orders.OrderController", f"http-nio-8080-exec-{rnd.randint(1, 10)}",
                                  f"POST /orders {rnd.randint(1, 10**6)} accepted in {rnd.randint(2, 90)} ms"))
            elif k < 0.95:
                f.recs.append(Rec(t, "DEBUG" if k < 0.8 else "INFO", "com.example.orders.OutboxPoller", "scheduling-1",
                                  f"polled {rnd.randint(0, 50)} rows from outbox in {rnd.randint(1, 30)} ms"))
            else:  # an ordinary exception that is not the producer's
                f.recs.append(Rec(t, "WARN", "com.example.orders.PriceClient", f"http-nio-8080-exec-{rnd.randint(1, 10)}",
                                  "price lookup failed, using the cached price",
                                  ["java.net.SocketTimeoutException: Read timed out",
                                   "\tat java.base/java.net.SocketInputStream.socketRead0(Native Method)",
                                   "\tat com.example.orders.PriceClient.lookup(PriceClient.java:57)"]))


def iso(t: dt.datetime) -> str:
    return t.astimezone(UTC).isoformat().replace("+00:00", "Z")


# ----------------------------------------------------------------------------- Pulsar: the dangling producer future

def pulsar_night(rnd: random.Random, root: Path, scale: int, healthy: bool = False) -> dict:
    release = rnd.choice(["2.4.2", "2.5.0", "2.5.1"])
    day = dt.date(2020, rnd.randint(3, 10), rnd.randint(1, 27))
    start = dt.datetime(day.year, day.month, day.day, 21, 30, tzinfo=UTC)
    end = start + dt.timedelta(hours=5)  # across midnight: time-only stamps must roll over
    brokers = [("pulsar-broker-1", "10.0.0.11"), ("pulsar-broker-2", "10.0.0.12")]
    rot = rnd.choice(["dated", "archive"])
    files = {}
    for host, _ip in brokers:
        h = Host(UTC, rnd.uniform(-2, 2))
        if rot == "dated":  # one file per broker, its date in the name
            files[host] = LogFile(f"{host}.{day:%Y-%m-%d}.log", "pulsar-time", h)
        else:  # Pulsar's conf/log4j2.yaml rollover: <file>-%d{MM-dd-yyyy}-%i.log.gz, rolled at midnight
            mid = dt.datetime(day.year, day.month, day.day, tzinfo=UTC) + dt.timedelta(days=1)
            files[host] = LogFile(f"{host}.log", "pulsar-time", h, rotate_at=mid - dt.timedelta(seconds=h.skew),
                                  archive=f"{host}.log-{day:%m-%d-%Y}-1.log.gz")
        chatter(rnd, files[host], start, end, 1500 * scale, "pulsar-broker")
    bundles = [f"public/default/0x{i * 0x40000000:08x}_0x{min((i + 1) * 0x40000000, 0xffffffff):08x}" for i in range(4)]
    topics = {b: [f"persistent://public/default/{name}-partition-{k}" for name in ("orders", "payments") for k in range(i * 2, i * 2 + 2)]
              for i, b in enumerate(bundles)}
    owner = {b: brokers[i % 2][0] for i, b in enumerate(bundles)}
    producers = {}  # topic -> (client ip:port, producer id, name)
    clients = {}
    for n, app in enumerate(["orders", "payments", "billing"][: rnd.randint(2, 3)]):
        ip = f"10.1.{116 + n}.{rnd.randint(2, 250)}"
        clients[app] = (ip, LogFile(f"client-{app}.log", rnd.choice(["spring2", "kafka"]), Host(UTC, rnd.uniform(-3, 3))))
        chatter(rnd, clients[app][1], start, end, 600 * scale, "java")
    apps = list(clients)
    pid = 0
    for b in bundles:
        for tp in topics[b]:
            app = apps[pid % len(apps)]
            producers[tp] = (app, f"/{clients[app][0]}:{rnd.randint(10000, 60000)}", pid, f"pulsar-{app}-{pid}")
            pid += 1
    n_unloads = rnd.randint(10, 14) if not healthy else rnd.randint(3, 6)
    times = sorted(start + dt.timedelta(seconds=rnd.uniform(600, 16000)) for _ in range(n_unloads))
    # one or two unloads leave producers stuck (never the first or last: later unloads are decoys)
    bad = set() if healthy else set(rnd.sample(range(2, n_unloads - 2), rnd.choice([1, 1, 2])))
    stuck = []
    unloads = []
    gone: set[str] = set()
    for k, t in enumerate(times):
        b = rnd.choice(bundles)
        src = owner[b]
        dst = brokers[1][0] if src == brokers[0][0] else brokers[0][0]
        src_ip = dict(brokers)[src]
        leader = brokers[0][0]
        lf, sf, df = files[leader], files[src], files[dst]
        lf.recs.append(Rec(t, "INFO", "org.apache.pulsar.broker.loadbalance.impl.ModularLoadManagerImpl", "pulsar-load-manager-3-1",
                           f"[Overload shedder] Unloading bundle: {b} from broker {src_ip}:8080"))
        t1 = t + dt.timedelta(milliseconds=rnd.randint(40, 120))
        sf.recs.append(Rec(t1, "INFO", "org.apache.pulsar.broker.namespace.OwnedBundle", "pulsar-web-41-5", f"Disabling ownership: {b}"))
        victims = []
        live = [t_ for t_ in topics[b] if t_ not in gone]  # a stuck producer is registered nowhere
        if k in bad:
            victims = rnd.sample(live, min(len(live), rnd.randint(1, 2)))
        for j, tp in enumerate(live):
            app, cnx, pid_, pname = producers[tp]
            td = t1 + dt.timedelta(milliseconds=20 + 7 * j)
            sf.recs.append(Rec(td, "INFO", "org.apache.pulsar.broker.service.Producer", "pulsar-web-41-5",
                               f"Disconnecting producer: Producer{{topic=PersistentTopic{{topic={tp}}}, client={cnx}, producerName={pname}, producerId={pid_}}}"))
            cf = clients[app][1]
            cf.recs.append(Rec(td + dt.timedelta(milliseconds=5), "INFO", "org.apache.pulsar.client.impl.ClientCnx", "pulsar-client-io-1-1",
                               f"[/{dict(brokers)[src]}:6650] Broker notification of Closed producer: {pid_}"))
            if tp in victims:
                # re-created on the same connection while the bundle is still unloading: the future never completes
                tc = td + dt.timedelta(milliseconds=rnd.randint(60, 200))
                sf.recs.append(Rec(tc, "INFO", "org.apache.pulsar.broker.service.ServerCnx", "pulsar-io-22-3",
                                   f"[{cnx}][{tp}] Creating producer. producerId={pid_}"))
                sf.recs.append(Rec(tc + dt.timedelta(milliseconds=2), "WARN", "org.apache.pulsar.broker.service.BrokerService", "pulsar-io-22-3",
                                   f"Namespace bundle for topic ({tp}) not served by this instance. Please redo the lookup. Request is denied: namespace=public/default"))
                ta = tc + dt.timedelta(seconds=30)
                attempts = 0
                last = end - dt.timedelta(seconds=rnd.uniform(5, 60))
                while ta < last:
                    sf.recs.append(Rec(ta, "WARN", "org.apache.pulsar.broker.service.ServerCnx", "pulsar-io-22-3",
                                       f"[{cnx}][{pid_}] Producer with id {tp} is already present on the connection"))
                    cf.recs.append(Rec(ta + dt.timedelta(milliseconds=3), "ERROR", "org.apache.pulsar.client.impl.ProducerImpl", "pulsar-client-io-1-1",
                                       f"[{tp}] [{pname}] Failed to create producer: Producer is already present on the connection"))
                    attempts += 1
                    ta += dt.timedelta(seconds=rnd.choice([30, 30, 31, 32]))
                stuck.append({"topic": tp, "producer_id": pid_, "connection": cnx, "broker_log": sf.name, "attempts": attempts,
                              "bundle": b, "unload_at": iso(t1), "client": cf.name})
            else:
                tc = td + dt.timedelta(milliseconds=rnd.randint(300, 900))
                df.recs.append(Rec(tc, "INFO", "org.apache.pulsar.broker.service.ServerCnx", "pulsar-io-22-5",
                                   f"[{cnx}][{tp}] Creating producer. producerId={pid_}"))
                df.recs.append(Rec(tc + dt.timedelta(milliseconds=6), "INFO", "org.apache.pulsar.broker.service.ServerCnx", "pulsar-io-22-5",
                                   f"[{cnx}] Created new producer: Producer{{topic=PersistentTopic{{topic={tp}}}, client={cnx}, producerName={pname}, producerId={pid_}}}"))
        ms = rnd.randint(200, 900)
        sf.recs.append(Rec(t1 + dt.timedelta(milliseconds=ms), "INFO", "org.apache.pulsar.broker.namespace.OwnedBundle", "pulsar-web-41-5",
                           f"Unloading {b} namespace-bundle with {len(topics[b])} topics completed in {ms}.0 ms"))
        gone.update(victims)
        unloads.append({"bundle": b, "from": src, "at": iso(t1)})
        owner[b] = dst
    names = [n for f in files.values() for n in f.write(root)] + [n for _ip, f in clients.values() for n in f.write(root)]
    expect = []
    for s in stuck:
        expect.append({"id": "pulsar.dangling-producer-future",
                       "subject": {"topic": s["topic"], "producer_id": s["producer_id"], "connection": s["connection"]},
                       "cause": {"kind": "bundle-unload", "bundle": s["bundle"], "at": [s["unload_at"], 3]}})
    return {"kind": "healthy" if healthy else "pulsar-dangling", "release": f"pulsar {release}", "files": names, "args": [],
            "rotation": rot, "unloads": len(unloads), "expect": expect, "allow": ["pulsar.load-shedding"],
            "incidents": len({s["bundle"] + s["unload_at"] for s in stuck})}


# ----------------------------------------------------------------------------- Kafka: a node down, retries, expired batches

KAFKA_RELEASES = ["1.1.1", "2.3.1", "2.7.2", "3.3.2", "3.7.1"]


def _ver(v: str) -> tuple[int, int]:
    a, b, *_ = v.split(".")
    return int(a), int(b)


def kafka_night(rnd: random.Random, root: Path, scale: int, blip: bool = False) -> dict:
    day = dt.date(2024, rnd.randint(1, 12), rnd.randint(1, 27))
    start = dt.datetime(day.year, day.month, day.day, 1, 0, tzinfo=UTC)
    end = start + dt.timedelta(hours=3)
    ids = rnd.choice([(0, 1, 2), (1, 2, 3), (1001, 1002, 1003)])  # broker.id as set, or auto-generated from 1001
    node = rnd.choice(ids)
    idx = ids.index(node)
    hostname = rnd.choice([f"kafka-{idx}", f"kafka-{idx}.kafka-headless.prod.svc.cluster.local"])
    addr = f"{hostname}/10.0.0.{6 + idx}:9092"
    t0 = start + dt.timedelta(seconds=rnd.uniform(2400, 6000))
    dur = rnd.uniform(240, 540) if not blip else rnd.uniform(2, 5)
    t1 = t0 + dt.timedelta(seconds=dur)
    mode = "blip" if blip else rnd.choice(["crash", "network"])
    files: list[LogFile] = []
    expect = []
    # the broker's own log
    if mode == "crash":
        bf = LogFile(f"kafka-{idx}/server.log", "kafka", Host(UTC, rnd.uniform(-1, 1)))
        chatter(rnd, bf, start, t0 - dt.timedelta(seconds=1), 800 * scale, "kafka-broker")
        chatter(rnd, bf, t1 + dt.timedelta(seconds=5), end, 300 * scale, "kafka-broker")
        tb = t1 - dt.timedelta(seconds=rnd.uniform(15, 40))
        bf.recs.append(Rec(tb, "INFO", "kafka.server.KafkaConfig", "main", "KafkaConfig values: "))
        bf.recs.append(Rec(tb + dt.timedelta(seconds=2), "INFO", "kafka.server.KafkaServer", "main", f"[KafkaServer id={node}] starting"))
        bf.recs.append(Rec(t1 - dt.timedelta(seconds=1), "INFO", "kafka.server.KafkaServer", "main", f"[KafkaServer id={node}] started"))
        files.append(bf)
        expect.append({"id": "kafka.broker-restart", "subject": {"node": node}})
    # other brokers keep logging
    for other in (k for k in range(3) if k != idx and rnd.random() < 0.5):
        of = LogFile(f"kafka-{other}/server.log", "kafka", Host(UTC, rnd.uniform(-1, 1)))
        chatter(rnd, of, start, end, 500 * scale, "kafka-broker")
        files.append(of)
    release = rnd.choice(KAFKA_RELEASES)
    v = _ver(release)
    napps = rnd.randint(1, 2)
    args: list[str] = []
    for a in range(napps):
        app = ["order-service", "billing-service"][a]
        client = [rnd.choice(["producer-1", "order-service-producer"]), "billing-1"][a]
        layout = rnd.choice(["kafka", "spring2", "spring3", "quarkus"])
        tz = UTC if layout != "spring3" else dt.timezone(dt.timedelta(hours=rnd.choice([2, -5, 9])))
        if layout != "spring3" and rnd.random() < 0.3:  # local time without an offset: the user says the zone
            zname = rnd.choice(["Europe/Berlin", "America/New_York", "Asia/Kolkata"])
            tz = zoneinfo.ZoneInfo(zname)
            args += ["--tz", f"{app}*={zname}"]
        f = LogFile(f"{app}.log", layout, Host(tz, rnd.uniform(-3, 3)), app=app,
                    wrapper=rnd.choice([None, None, "kubectl", "docker-json"]))
        chatter(rnd, f, start, end, 1500 * scale, "java")
        topic = ["orders", "invoices"][a]
        led = [f"{topic}-{p}" for p in range(6) if p % 3 == idx]
        pre = f"[Producer clientId={client}] "
        net = "org.apache.kafka.clients.NetworkClient"
        sender = "org.apache.kafka.clients.producer.internals.Sender"
        thread = f"kafka-producer-network-thread | {client}"
        t = t0
        fails = 0
        while t < t1:
            if v >= (3, 1):
                f.recs.append(Rec(t, "INFO", net, thread, f"{pre}Node {node} disconnected."))
            if v < (2, 1):
                txt = f"{pre}Connection to node {node} could not be established. Broker may not be available."
            elif v < (3, 7):
                txt = f"{pre}Connection to node {node} ({addr}) could not be established. Broker may not be available."
            else:
                txt = f"{pre}Connection to node {node} ({addr}) could not be established. Node may not be available."
            f.recs.append(Rec(t + dt.timedelta(milliseconds=rnd.randint(1, 30)), "WARN", net, thread, txt))
            fails += 1
            t += dt.timedelta(seconds=rnd.uniform(0.8, 1.2))
        for k, tp in enumerate(led[:2]):
            err = "NETWORK_EXCEPTION" if v < (2, 8) else f"NETWORK_EXCEPTION. Error Message: Disconnected from node {node}"
            f.recs.append(Rec(t0 + dt.timedelta(milliseconds=50 + k), "WARN", sender, thread,
                              f"{pre}Got error produce response with correlation id {rnd.randint(1000, 9999)} on topic-partition {tp}, retrying (2147483646 attempts left). Error: {err}"))
        records = {}
        if not blip:
            timeout = 120000 if v >= (2, 1) else 30000
            for tp in led:
                tb = t0 + dt.timedelta(seconds=rnd.uniform(0, 20))
                while tb + dt.timedelta(milliseconds=timeout) < t1:
                    n = rnd.randint(1, 30)
                    waited = timeout + rnd.randint(1, 40)
                    te = tb + dt.timedelta(milliseconds=waited)
                    if v >= (2, 1):
                        ex = f"org.apache.kafka.common.errors.TimeoutException: Expiring {n} record(s) for {tp}:{waited} ms has passed since batch creation"
                    else:
                        ex = f"org.apache.kafka.common.errors.TimeoutException: Expiring {n} record(s) for {tp}: {waited} ms has passed since batch creation plus linger time"
                    for i in range(n):  # the application's callback logs each record's failure
                        f.recs.append(Rec(te + dt.timedelta(microseconds=300 * i), "ERROR", "com.example.orders.OrderPublisher", thread,
                                          f"send failed for order {rnd.randint(1, 10**6)}: {ex}"))
                    records.setdefault(tp, [0, 0])
                    records[tp][0] += n
                    records[tp][1] += 1
                    tb += dt.timedelta(seconds=rnd.uniform(15, 40))
        if not blip and rnd.random() < 0.5:
            # the accumulator fills up: send() blocks max.block.ms and throws (the application logs it)
            if v < (2, 6):
                bex = "org.apache.kafka.common.errors.TimeoutException: Failed to allocate memory within the configured max blocking time 60000 ms."
            elif v < (3, 1):
                bex = "org.apache.kafka.clients.producer.BufferExhaustedException: Failed to allocate memory within the configured max blocking time 60000 ms."
            else:
                bex = ("org.apache.kafka.clients.producer.BufferExhaustedException: Failed to allocate 16384 bytes within the configured max blocking time "
                       "60000 ms. Total memory: 33554432 bytes. Available memory: 0 bytes. Poolable size: 16384 bytes")
            tb = t0 + dt.timedelta(seconds=rnd.uniform(70, 110))
            nb = 0
            while tb < t1:
                f.recs.append(Rec(tb, "ERROR", "com.example.orders.OrderController", f"http-nio-8080-exec-{rnd.randint(1, 10)}",
                                  f"order {rnd.randint(1, 10**6)} not published: {bex}"))
                nb += 1
                tb += dt.timedelta(seconds=rnd.uniform(2, 12))
            if nb:
                expect.append({"id": "kafka.buffer-exhausted", "subject": {"path": f"{app}.log", "client_id": client, "count": nb}})
        if a == 0 and not blip and records:
            # the log rotates inside the outage
            first_exp = min(r.t for r in f.recs if "Expiring" in r.msg)
            f.rotate_at = first_exp + dt.timedelta(seconds=rnd.uniform(5, 40))
            style = rnd.choice(["logback", "log4j2"])
            f.archive = f"{app}.{day:%Y-%m-%d}.0.log.gz" if style == "logback" else f"{app}-{day:%Y-%m-%d}-1.log.gz"
        files.append(f)
        live = f.name
        for tp, (n, b) in records.items():
            expect.append({"id": "kafka.delivery-timeout", "subject": {"topic_partition": tp, "records": n, "batches": b, "path": live,
                                                                         "client_id": client}, "cause": {"node": node}})
        if not blip and records:
            expect.append({"id": "kafka.broker-unreachable", "subject": {"path": live, "client_id": client, "node": node}})
    names = [n for f in files for n in f.write(root)]
    kind = "healthy" if blip else "kafka-outage"
    return {"kind": kind, "release": f"kafka-clients {release}", "mode": mode, "files": names, "args": args, "expect": expect,
            "allow": [], "incidents": 0 if blip else 1}


# ----------------------------------------------------------------------------- sarama: the retry/re-dial stall

def sarama_night(rnd: random.Random, root: Path, scale: int, blip: bool = False) -> dict:
    day = dt.date(2026, rnd.randint(1, 11), rnd.randint(1, 27))
    start = dt.datetime(day.year, day.month, day.day, 2, 0, tzinfo=UTC)
    end = start + dt.timedelta(hours=2)
    topic, part = rnd.choice(["orders", "ledger", "events"]), rnd.randint(0, 5)
    single = rnd.random() < 0.5
    ids = rnd.choice([(0, 1, 2), (1, 2, 3), (1001, 1002, 1003)])
    node = ids[0] if single else rnd.choice(ids)
    idx = ids.index(node)
    host = f"kafka-{idx}.kafka:9092"
    ip = f"10.0.0.{11 + idx}"
    app_json = rnd.random() < 0.5
    f = LogFile("producer.log", "golog", Host(UTC, rnd.uniform(-2, 2)), app="producer", wrapper=rnd.choice([None, None, "kubectl", "docker-json"]))
    chatter(rnd, f, start, end, 1200 * scale, "go")
    quiet = {"off": False}  # sarama.Logger left at its default (discarded): only the application's lines

    def sar(t, m):
        if not quiet["off"]:
            f.recs.append(Rec(t, "INFO", "sarama", "main", m))

    def app(t, level, msg, fields):
        r = Rec(t, level, "app", "main", msg if not app_json else msg.split(":")[0])
        if app_json:
            zap(r, fields, f.host.skew)
        else:
            r.msg = msg
        f.recs.append(r)

    t0 = start + dt.timedelta(seconds=rnd.uniform(1200, 3600))
    # a third of the three-broker stalls with sarama's Logger off (drawn from t0, not from rnd: the
    # seeds' other choices stay as they were)
    quiet["off"] = not single and not blip and zlib.crc32(t0.isoformat().encode()) % 3 == 0
    sar(start + dt.timedelta(seconds=1), "Initializing new client")
    sar(start + dt.timedelta(seconds=1), f"client/metadata fetching metadata for all topics from broker {host}")
    sar(start + dt.timedelta(seconds=1), f"Connected to broker at {host} (unregistered)")
    sar(start + dt.timedelta(seconds=1), f"client/brokers registered new broker #{node} at {host}")
    sar(start + dt.timedelta(seconds=1), "Successfully initialized new client")
    # healthy sends once a second before and after
    t = start + dt.timedelta(seconds=2)
    off = rnd.randint(10**4, 10**6)
    cport = rnd.randint(40000, 60000)
    outage_end = t0 + dt.timedelta(seconds=(5 if blip else 400))
    last_ok = start
    while t < end:
        if not (t0 <= t < outage_end + dt.timedelta(seconds=2)):
            if rnd.random() < 0.3:
                app(t, "INFO", f"delivered to {topic}/{part} at offset {off}", {"topic": topic, "partition": part, "offset": off})
                if t < t0:
                    last_ok = t
            off += 1
        t += dt.timedelta(seconds=1)
    expect = []
    rt, dial, bo, mbo = 30.0, 30.0, 0.1, 0.25
    s = lambda x: t0 + dt.timedelta(seconds=x)  # noqa: E731
    if blip:
        sar(s(1), f"producer/broker/{node} state change to [closing] because EOF")
        sar(s(1), f"Closed connection to broker {host}")
        sar(s(1), f"producer/leader/{topic}/{part} state change to [retrying-1]")
        sar(s(1), f"producer/leader/{topic}/{part} abandoning broker {node}")
        sar(s(1.1), f"client/metadata fetching metadata for [{topic}] from broker {host}")
        sar(s(3), f"Connected to broker at {host} (registered as #{node})")
        sar(s(3), f"producer/leader/{topic}/{part} selected broker {node}")
        sar(s(3), f"producer/broker/{node} starting up")
        sar(s(3), f"producer/broker/{node} state change to [open] on {topic}/{part}")
        sar(s(3), f"producer/leader/{topic}/{part} state change to [normal]")
        kind = "healthy"
    else:
        cl = s(rt)
        sar(cl, f"producer/broker/{node} state change to [closing] because read tcp 10.0.1.5:{cport}->{ip}:9092: i/o timeout")
        sar(cl, f"Closed connection to broker {host}")
        sar(cl, f"producer/leader/{topic}/{part} state change to [retrying-1]")
        sar(cl, f"producer/leader/{topic}/{part} abandoning broker {node}")
        sar(cl, f"producer/broker/{node} shut down")
        if single:
            x = rt + bo
            sar(s(x), f"client/metadata fetching metadata for [{topic}] from broker {host}")
            x += rt
            sar(s(x), f"client/metadata got error from broker -1 while fetching metadata: read tcp 10.0.1.5:{cport + 1}->{ip}:9092: i/o timeout")
            sar(s(x), f"Closed connection to broker {host}")
            for k in range(4):
                if k:
                    sar(s(x), f"client/metadata retrying after 250ms... ({4 - k} attempts remaining)")
                    x += mbo
                    sar(s(x), f"client/metadata fetching metadata for [{topic}] from broker {host}")
                x += dial
                sar(s(x), f"Failed to connect to broker {host}: dial tcp {ip}:9092: i/o timeout")
                sar(s(x), f"client/metadata got error from broker -1 while fetching metadata: dial tcp {ip}:9092: i/o timeout")
                sar(s(x), "client/metadata no available broker to send metadata request to")
                sar(s(x), "client/brokers resurrecting 1 dead seed brokers")
            err = "kafka: client has run out of available brokers to talk to (Is your cluster reachable?)"
        else:
            x = rt
            seed = f"kafka-{(idx + 1) % 3}.kafka:9092"
            for k in range(1, 4):
                x += bo
                sar(s(x), f"client/metadata fetching metadata for [{topic}] from broker {seed}")
                sar(s(x), f"producer/leader/{topic}/{part} selected broker {node}")
                x += dial
                sar(s(x), f"Failed to connect to broker {host}: dial tcp {ip}:9092: i/o timeout")
                sar(s(x), f"producer/broker/{node} state change to [closing] because dial tcp {ip}:9092: i/o timeout")
                if k < 3:
                    sar(s(x), f"producer/leader/{topic}/{part} state change to [retrying-{k + 1}]")
                    sar(s(x), f"producer/leader/{topic}/{part} abandoning broker {node}")
            err = f"kafka: Failed to produce message to topic {topic}: dial tcp {ip}:9092: i/o timeout"
        app(s(x), "ERROR", f"send to {topic} failed: {err}", {"topic": topic, "partition": part, "error": err})
        if quiet["off"]:
            # only the application's lines: the broker is the address in the error, the stall is at
            # least the send's own and at most the time since the last delivery it logged
            most = (s(x) - last_ok).total_seconds()
            expect.append({"id": "sarama.retry-redial-stall",
                           "subject": {"topic_partition": f"{topic}/{part}", "path": f.name, "kind": "blackhole", "broker": f"{ip}:9092",
                                       "stall_seconds": [round((x + most) / 2, 3), round((most - x) / 2 + 2.5, 3)]}})
        else:
            expect.append({"id": "sarama.retry-redial-stall",
                           "subject": {"topic_partition": f"{topic}/{part}", "path": f.name, "kind": "blackhole", "broker": host,
                                       "stall_seconds": [round(x, 3), 2.5]}})
        # the broker is back; the next sends succeed
        sar(outage_end, f"client/metadata fetching metadata for [{topic}] from broker {host}")
        sar(outage_end, f"Connected to broker at {host} (registered as #{node})")
        sar(outage_end, f"producer/leader/{topic}/{part} selected broker {node}")
        sar(outage_end, f"producer/broker/{node} starting up")
        sar(outage_end, f"producer/leader/{topic}/{part} state change to [normal]")
        kind = "sarama-stall"
    names = f.write(root)
    return {"kind": kind, "release": "sarama 1.2x-1.4x", "cluster": "single" if single else "three brokers",
            "app_logger": ("zap" if app_json else "std log") + (", sarama's Logger off" if quiet["off"] else ""),
            "files": names, "args": [], "expect": expect, "allow": [], "incidents": len(expect)}


# ----------------------------------------------------------------------------- Kafka: callback errors

def callback_night(rnd: random.Random, root: Path, scale: int) -> dict:
    day = dt.date(2024, rnd.randint(1, 12), rnd.randint(1, 27))
    start = dt.datetime(day.year, day.month, day.day, 8, 0, tzinfo=UTC)
    end = start + dt.timedelta(hours=1)
    layout = rnd.choice(["quarkus", "dropwizard", "spring3", "kafka"])
    tz = UTC if layout != "spring3" else dt.timezone(dt.timedelta(hours=rnd.choice([1, -4])))
    f = LogFile("shipping-app.log", layout, Host(tz, 0.0), app="shipping")
    chatter(rnd, f, start, end, 1500 * scale, "java")
    exc = rnd.choice([("java.lang.NullPointerException", "Cannot invoke \"String.length()\" because \"id\" is null"),
                      ("java.lang.IllegalStateException", "shipment already closed"),
                      ("com.example.shipping.LabelException", "no label for carrier DHL")])
    tp = f"shipments-{rnd.randint(0, 5)}"
    n = rnd.randint(4, 25)
    client = "producer-1"
    t = start + dt.timedelta(seconds=rnd.uniform(600, 2400))
    for _ in range(n):
        f.recs.append(Rec(t, "ERROR", "org.apache.kafka.clients.producer.internals.ProducerBatch", f"kafka-producer-network-thread | {client}",
                          f"[Producer clientId={client}] Error executing user-provided callback on message for topic-partition '{tp}'",
                          [f"{exc[0]}: {exc[1]}",
                           "\tat com.example.shipping.ShipmentCallback.onCompletion(ShipmentCallback.java:41)",
                           "\tat org.apache.kafka.clients.producer.KafkaProducer$InterceptorCallback.onCompletion(KafkaProducer.java:1418)",
                           "\tat org.apache.kafka.clients.producer.internals.ProducerBatch.completeFutureAndFireCallbacks(ProducerBatch.java:273)"]))
        t += dt.timedelta(seconds=rnd.uniform(1, 20))
    names = f.write(root)
    return {"kind": "kafka-callback", "layout": layout, "files": names, "args": [],
            "expect": [{"id": "kafka.callback-error", "subject": {"topic_partition": tp, "exception": exc[0], "count": n, "path": f.name}}],
            "allow": [], "incidents": 1}


# ----------------------------------------------------------------------------- Kafka: a KRaft rolling restart

def rolling_night(rnd: random.Random, root: Path, scale: int) -> dict:
    """Three KRaft brokers (3.6-4.0) restarted one after the other; a producer sees each go and come
    back (connection failures, NOT_LEADER_OR_FOLLOWER retries) and loses nothing."""
    day = dt.date(2025, rnd.randint(1, 12), rnd.randint(1, 27))
    start = dt.datetime(day.year, day.month, day.day, 3, 0, tzinfo=UTC)
    end = start + dt.timedelta(hours=2)
    release = rnd.choice(["3.6.2", "3.7.1", "3.9.0", "4.0.0"])
    files = []
    t = start + dt.timedelta(seconds=rnd.uniform(1800, 3600))
    windows = {}
    for node in (1, 2, 3):
        bf = LogFile(f"kafka-{node}/server.log", "kafka", Host(UTC, rnd.uniform(-1, 1)))
        chatter(rnd, bf, start, end, 600 * scale, "kafka-broker")
        bs = f"[BrokerServer id={node}]"
        bf.recs.append(Rec(t, "INFO", "org.apache.kafka.common.utils.LoggingSignalHandler", "SIGTERM handler", "Terminating process due to signal SIGTERM"))
        bf.recs.append(Rec(t + dt.timedelta(milliseconds=3), "INFO", "kafka.server.BrokerServer", "kafka-shutdown-hook", f"{bs} Transition from STARTED to SHUTTING_DOWN"))
        bf.recs.append(Rec(t + dt.timedelta(milliseconds=4), "INFO", "kafka.server.BrokerServer", "kafka-shutdown-hook", f"{bs} shutting down"))
        bf.recs.append(Rec(t + dt.timedelta(milliseconds=6), "INFO", "kafka.server.BrokerLifecycleManager", "broker-1-lifecycle-manager-event-handler",
                           f"[BrokerLifecycleManager id={node}] Beginning controlled shutdown."))
        down = t + dt.timedelta(seconds=rnd.uniform(2, 5))
        bf.recs.append(Rec(down, "INFO", "kafka.server.BrokerServer", "kafka-shutdown-hook", f"{bs} shut down completed"))
        up = down + dt.timedelta(seconds=rnd.uniform(15, 40))
        bf.recs.append(Rec(up, "INFO", "kafka.server.KafkaConfig", "main", "KafkaConfig values: "))
        bf.recs.append(Rec(up + dt.timedelta(seconds=4), "INFO", "kafka.server.BrokerServer", "main", f"{bs} Transition from STARTING to STARTED"))
        bf.recs.append(Rec(up + dt.timedelta(seconds=4, milliseconds=2), "INFO", "kafka.server.KafkaRaftServer", "main",
                           f"[KafkaRaftServer nodeId={node}] Kafka Server started"))
        windows[node] = (t, up + dt.timedelta(seconds=4))
        files.append(bf)
        t = up + dt.timedelta(seconds=rnd.uniform(60, 180))  # the operator waits for the ISR to catch up
    layout = rnd.choice(["kafka", "spring3"])
    tz = UTC if layout == "kafka" else dt.timezone(dt.timedelta(hours=rnd.choice([1, 5, -7])))
    client = "producer-1"
    f = LogFile("orders-app.log", layout, Host(tz, rnd.uniform(-3, 3)), app="orders")
    chatter(rnd, f, start, end, 1500 * scale, "java")
    pre = f"[Producer clientId={client}] "
    thread = f"kafka-producer-network-thread | {client}"
    for node, (a, b) in windows.items():
        f.recs.append(Rec(a + dt.timedelta(milliseconds=20), "INFO", "org.apache.kafka.clients.NetworkClient", thread, f"{pre}Node {node} disconnected."))
        tp = f"orders-{node - 1}"
        f.recs.append(Rec(a + dt.timedelta(milliseconds=30), "WARN", "org.apache.kafka.clients.producer.internals.Sender", thread,
                          f"{pre}Got error produce response with correlation id {rnd.randint(1000, 99999)} on topic-partition {tp}, retrying (2147483646 attempts left). Error: NOT_LEADER_OR_FOLLOWER"))
        f.recs.append(Rec(a + dt.timedelta(milliseconds=31), "WARN", "org.apache.kafka.clients.producer.internals.Sender", thread,
                          f"{pre}Received invalid metadata error in produce request on partition {tp} due to org.apache.kafka.common.errors.NotLeaderOrFollowerException: "
                          "For requests intended only for the leader, this error indicates that the broker is not the current leader. For requests intended for any replica, "
                          "this error indicates that the broker is not a replica of the topic partition.. Going to request metadata update now"))
        x = a + dt.timedelta(seconds=rnd.uniform(1, 3))
        while x < b - dt.timedelta(seconds=3):  # the client keeps trying the node it knows
            f.recs.append(Rec(x, "WARN", "org.apache.kafka.clients.NetworkClient", thread,
                              f"{pre}Connection to node {node} (kafka-{node}/10.0.0.{6 + node}:9092) could not be established. "
                              + ("Node may not be available." if _ver(release) >= (3, 7) else "Broker may not be available.")))
            x += dt.timedelta(seconds=rnd.uniform(0.8, 1.2))
    files.append(f)
    names = [n for g in files for n in g.write(root)]
    return {"kind": "kafka-rolling", "release": f"kafka {release} (KRaft)", "files": names, "args": [],
            "expect": [{"id": "kafka.broker-restart", "subject": {"node": n}} for n in (1, 2, 3)],
            "allow": ["kafka.broker-unreachable", "kafka.isr-shrink"]}


# ----------------------------------------------------------------------------- sarama: a broker crash, sends refused

def refused_night(rnd: random.Random, root: Path, scale: int) -> dict:
    """One broker (ZooKeeper mode, its server.log given) is killed and comes back; a sarama producer's
    sends meet EOF, then refused dials, and fail fast until it is back."""
    day = dt.date(2026, rnd.randint(1, 11), rnd.randint(1, 27))
    start = dt.datetime(day.year, day.month, day.day, 14, 0, tzinfo=UTC)
    end = start + dt.timedelta(hours=1)
    node = 1
    host, ip = "kafka-1:9092", "172.18.0.3"
    topic, part = rnd.choice(["inventory", "billing"]), rnd.randint(0, 5)
    crash = start + dt.timedelta(seconds=rnd.uniform(900, 1800))
    back = crash + dt.timedelta(seconds=rnd.uniform(20, 90))
    bf = LogFile("kafka-1/server.log", "kafka", Host(UTC, rnd.uniform(-1, 1)))
    chatter(rnd, bf, start, crash - dt.timedelta(seconds=2), 500 * scale, "kafka-broker")
    chatter(rnd, bf, back + dt.timedelta(seconds=2), end, 200 * scale, "kafka-broker")
    bf.recs.append(Rec(back - dt.timedelta(seconds=12), "INFO", "kafka.server.KafkaConfig", "main", "KafkaConfig values: "))
    bf.recs.append(Rec(back - dt.timedelta(seconds=10), "INFO", "kafka.server.KafkaServer", "main", f"[KafkaServer id={node}] starting"))
    bf.recs.append(Rec(back, "INFO", "kafka.server.KafkaServer", "main", f"[KafkaServer id={node}] started"))
    f = LogFile(f"{topic}-producer.log", "golog", Host(UTC, rnd.uniform(-2, 2)))
    chatter(rnd, f, start, end, 1000 * scale, "go")
    sar = lambda t, m: f.recs.append(Rec(t, "INFO", "sarama", "main", m))  # noqa: E731
    sar(start, "Initializing new client")
    sar(start, f"client/brokers registered new broker #{node} at {host}")
    sar(start, "Successfully initialized new client")
    t = start + dt.timedelta(seconds=1)
    off = rnd.randint(10**4, 10**6)
    failed = 0
    first = True
    eof_at = None
    while t < end:
        if crash <= t < back:
            ms = lambda k: t + dt.timedelta(milliseconds=k)  # noqa: E731
            if first:
                eof_at = t
                sar(t, f"producer/broker/{node} state change to [closing] because EOF")
                sar(t, f"Closed connection to broker {host}")
                sar(t, f"producer/leader/{topic}/{part} state change to [retrying-1]")
                sar(t, f"producer/leader/{topic}/{part} abandoning broker {node}")
                sar(t, f"producer/broker/{node} shut down")
                first = False
            for k in range(4):
                sar(ms(100 + 250 * k), f"client/metadata fetching metadata for [{topic}] from broker {host}")
                sar(ms(101 + 250 * k), f"Failed to connect to broker {host}: dial tcp {ip}:9092: connect: connection refused")
                sar(ms(101 + 250 * k), f"client/metadata got error from broker -1 while fetching metadata: dial tcp {ip}:9092: connect: connection refused")
                if k < 3:
                    sar(ms(101 + 250 * k), f"client/metadata retrying after 250ms... ({3 - k} attempts remaining)")
            f.recs.append(Rec(ms(852), "ERROR", "app", "main",
                              f"send to {topic} failed: kafka: client has run out of available brokers to talk to (Is your cluster reachable?)"))
            failed += 1
        else:
            if not first and eof_at is not None and t >= back:
                sar(t, f"Connected to broker at {host} (registered as #{node})")
                sar(t, f"producer/leader/{topic}/{part} selected broker {node}")
                sar(t, f"producer/leader/{topic}/{part} state change to [normal]")
                eof_at = None
            if rnd.random() < 0.3:
                f.recs.append(Rec(t, "INFO", "app", "main", f"delivered to {topic}/{part} at offset {off}"))
            off += 1
        t += dt.timedelta(seconds=1)
    names = bf.write(root) + f.write(root)
    return {"kind": "sarama-refused", "files": names, "args": [],
            "expect": [{"id": "sarama.broker-refused", "subject": {"topic_partition": f"{topic}/{part}", "path": f.name, "broker": host,
                                                                 "failed_sends": failed}},
                       {"id": "kafka.broker-restart", "subject": {"node": node}}],
            "allow": [], "incidents": 1}


# ----------------------------------------------------------------------------- a night

def night(seed: int, i: int, root: Path, scale: int) -> dict:
    rnd = random.Random(seed * 1000 + i)
    kind = KINDS[i % len(KINDS)]
    root.mkdir(parents=True, exist_ok=True)
    plays = {"pulsar-dangling": pulsar_night, "kafka-outage": kafka_night, "sarama-stall": sarama_night,
             "kafka-callback": callback_night, "kafka-rolling": rolling_night, "sarama-refused": refused_night}
    if kind in plays:
        t = plays[kind](rnd, root, scale)
    else:
        which = rnd.choice(["pulsar", "kafka", "sarama"])
        t = {"pulsar": lambda: pulsar_night(rnd, root, scale, healthy=True),
             "kafka": lambda: kafka_night(rnd, root, scale, blip=True),
             "sarama": lambda: sarama_night(rnd, root, scale, blip=True)}[which]()
        t["kind"] = f"healthy ({which})"
    t["night"] = root.name
    t["seed"] = seed
    (root / "truth.json").write_text(json.dumps(t, indent=1) + "\n")
    return t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--nights", type=int, default=10)
    ap.add_argument("--scale", type=int, default=1, help="application chatter per file, in units of about 1,500 lines")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()
    for i in range(a.nights):
        t = night(a.seed, i, a.out / f"n{i:02d}", a.scale)
        print(f"{t['night']}: {t['kind']:<18} {len(t['files'])} files, {len(t['expect'])} expected")


if __name__ == "__main__":
    main()
