#!/usr/bin/env python3
"""Deterministic generator of the Pulsar sample incidents in sample_logs/.

    python sample_logs/generators/pulsar.py            # writes sample_logs/pulsar-incident and pulsar-healthy
    python sample_logs/generators/pulsar.py --out DIR  # somewhere else

The same seed gives the same bytes. Message texts are the Pulsar 2.5.x broker and Java client
statements from the reference notes (log-formats.md §A); layouts are Pulsar's 2.x broker layout
(time-only stamps, UTC) and Spring Boot 2/3 for the client applications.

pulsar-incident (2020-06-01 22:00 → 2020-06-02 01:30 UTC, crosses midnight):
  * two 2.5.1 brokers, load shedding every ~35 min (OverloadShedder, CPU over threshold);
  * 22:35 a healthy unload from broker-1: every producer reconnects (decoy);
  * 23:10 unload of public/default/0x40000000_0x80000000 from broker-1: two producers of the
    orders client hit the ownership check while reconnecting; their futures dangle and, once the
    bundle is back on broker-1, every retry gets "Producer with id ... is already present" until
    the end of the log; the other producers of the same unload recover;
  * 23:40 a transient "already present" on broker-2 that clears within a second (decoy);
  * 00:20 unload of public/default/0xc0000000_0xffffffff from broker-2 strands one producer of
    the payments client, which reconnects (restarted) at 01:05;
The payments host's clock runs 3.2 s ahead, the billing host's 1.7 s behind (in +08:00 stamps).
pulsar-healthy: the same traffic and unloads, everyone recovers.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import random
from dataclasses import dataclass, field
from pathlib import Path

UTC = dt.timezone.utc
START = dt.datetime(2020, 6, 1, 22, 0, 0, tzinfo=UTC)
END = dt.datetime(2020, 6, 2, 1, 30, 0, tzinfo=UTC)
NS = "public/default"
BUNDLES = ["0x00000000_0x40000000", "0x40000000_0x80000000", "0x80000000_0xc0000000", "0xc0000000_0xffffffff"]
BROKERS = {"broker-1": ("10.0.0.11", "pulsar-broker-1"), "broker-2": ("10.0.0.12", "pulsar-broker-2")}

SC = "org.apache.pulsar.broker.service.ServerCnx"
PROD = "org.apache.pulsar.broker.service.Producer"
BS = "org.apache.pulsar.broker.service.BrokerService"
OB = "org.apache.pulsar.broker.namespace.OwnedBundle"
PT = "org.apache.pulsar.broker.service.persistent.PersistentTopic"
LM = "org.apache.pulsar.broker.loadbalance.impl.ModularLoadManagerImpl"
OS = "org.apache.pulsar.broker.loadbalance.impl.OverloadShedder"
ML = "org.apache.bookkeeper.mledger.impl.ManagedLedgerImpl"
MC = "org.apache.bookkeeper.mledger.impl.ManagedCursorImpl"
BK = "org.apache.bookkeeper.client.LedgerHandle"
NSS = "org.apache.pulsar.broker.namespace.NamespaceService"


@dataclass
class Producer:
    client: str  # client file key
    topic: str
    pid: int
    name: str
    bundle: str
    broker: str = ""
    conn: str = ""  # /ip:port as the broker prints it
    channel: str = ""


@dataclass
class Client:
    key: str
    host: str
    ip: str
    app: str
    layout: str  # "sb2" | "sb3"
    offset: dt.timedelta = dt.timedelta(0)  # the zone offset its stamps are written in
    skew: dt.timedelta = dt.timedelta(0)  # how far the host's clock is off
    ports: dict = field(default_factory=dict)  # broker -> local port of its connection


class World:
    def __init__(self, seed: int):
        self.rnd = random.Random(seed)
        self.lines: dict[str, list[tuple[dt.datetime, int, str]]] = {}
        self.seq = 0

    def emit(self, where: str, t: dt.datetime, text: str) -> None:
        self.seq += 1
        self.lines.setdefault(where, []).append((t, self.seq, text))

    # ------------------------------------------------------------------ layouts
    def broker(self, b: str, t: dt.datetime, thread: str, level: str, logger: str, msg: str) -> None:
        stamp = t.strftime("%H:%M:%S.") + f"{t.microsecond // 1000:03d}"
        self.emit(b, t, f"{stamp} [{thread}] {level:<5} {logger} - {msg}")

    def client(self, c: Client, t: dt.datetime, thread: str, level: str, logger: str, msg: str) -> None:
        local = t + c.skew + c.offset
        short = _abbrev(logger, 39)
        if c.layout == "sb2":
            stamp = local.strftime("%Y-%m-%d %H:%M:%S.") + f"{local.microsecond // 1000:03d}"
            self.emit(c.key, t, f"{stamp} {level:>5} 4242 --- [{thread[-15:]:>15}] {short:<40} : {msg}")
        else:
            off = c.offset.total_seconds()
            sign = "+" if off >= 0 else "-"
            hh, mm = divmod(abs(int(off)) // 60, 60)
            stamp = local.strftime("%Y-%m-%dT%H:%M:%S.") + f"{local.microsecond // 1000:03d}{sign}{hh:02d}:{mm:02d}"
            self.emit(c.key, t, f"{stamp} {level:>5} 1 --- [{c.app}] [{thread[-15:]:>15}] {short:<40} : {msg}")

    def ms(self, lo: int, hi: int) -> dt.timedelta:
        return dt.timedelta(milliseconds=self.rnd.randint(lo, hi))


def _abbrev(logger: str, width: int) -> str:
    """logback's %logger{39}: shorten leading segments to their first letter until it fits."""
    parts = logger.split(".")
    i = 0
    while len(".".join(parts)) > width and i < len(parts) - 1:
        parts[i] = parts[i][0]
        i += 1
    return ".".join(parts)


def producer_str(p: Producer) -> str:
    return (
        f"Producer{{topic=PersistentTopic{{topic={p.topic}}}, client={p.conn}, "
        f"producerName={p.name}, producerId={p.pid}}}"
    )


# ---------------------------------------------------------------------- scenario pieces


def noise(w: World, b: str, t0: dt.datetime, t1: dt.datetime, topics: list[str], rate_s: float) -> None:
    """Background broker chatter: ledgers rolling, cursors, stats, bookie writes."""
    t = t0
    while t < t1:
        t += dt.timedelta(seconds=w.rnd.expovariate(1 / rate_s))
        topic = w.rnd.choice(topics)
        name = topic.split("://", 1)[1]
        kind = w.rnd.random()
        if kind < 0.35:
            w.broker(b, t, f"bookkeeper-ml-workers-OrderedExecutor-{w.rnd.randint(0, 7)}-0", "INFO", ML,
                     f"[{name}] Ledger {w.rnd.randint(100000, 999999)} rolled over; entries written since the last roll-over: {w.rnd.randint(1000, 50000)}")
        elif kind < 0.55:
            w.broker(b, t, f"bookkeeper-ml-workers-OrderedExecutor-{w.rnd.randint(0, 7)}-0", "INFO", MC,
                     f"[{name}] Updated cursor sub-{w.rnd.randint(1, 4)} with ledger id {w.rnd.randint(100000, 999999)} md-position={w.rnd.randint(100000, 999999)}:{w.rnd.randint(0, 9999)}")
        elif kind < 0.75:
            w.broker(b, t, f"pulsar-ordered-OrderedExecutor-{w.rnd.randint(0, 7)}-0", "INFO", BK,
                     f"Ensemble change: ledger {w.rnd.randint(100000, 999999)}, entry {w.rnd.randint(0, 9999)} ok")
        elif kind < 0.9:
            w.broker(b, t, "pulsar-stats-updater-1-1", "INFO", "org.apache.pulsar.broker.service.PulsarStats",
                     f"Updated topic stats: {len(topics)} topics, msgRateIn {w.rnd.uniform(1000, 9000):.1f} msg/s")
        else:
            w.broker(b, t, f"pulsar-io-22-{w.rnd.randint(1, 8)}", "INFO", SC,
                     f"New connection from /10.1.{w.rnd.randint(100, 130)}.{w.rnd.randint(2, 250)}:{w.rnd.randint(20000, 60000)}")


def client_noise(w: World, c: Client, t0: dt.datetime, t1: dt.datetime, rate_s: float) -> None:
    t = t0
    n = w.rnd.randint(10000, 20000)
    while t < t1:
        t += dt.timedelta(seconds=w.rnd.expovariate(1 / rate_s))
        n += 1
        kind = w.rnd.random()
        if kind < 0.6:
            w.client(c, t, f"http-nio-8080-exec-{w.rnd.randint(1, 9)}", "INFO", f"com.example.{c.app.split('-')[0]}.Api",
                     f"POST /{c.app.split('-')[0]} {n} accepted in {w.rnd.randint(2, 40)} ms")
        elif kind < 0.85:
            w.client(c, t, "pulsar-timer-4-1", "INFO", "org.apache.pulsar.client.impl.ProducerStatsRecorderImpl",
                     f"[{w.rnd.choice(['orders', 'payments', 'billing'])}] Pending messages: 0 --- Publish throughput: {w.rnd.uniform(10, 400):.2f} msg/s --- {w.rnd.uniform(0.01, 0.4):.2f} Mbit/s")
        else:
            w.client(c, t, "scheduling-1", "DEBUG", "com.example.Health", "health check ok")


def connect(w: World, p: Producer, c: Client, b: str, t: dt.datetime, ok: bool = True) -> dt.datetime:
    """A producer registering on broker b over the client's connection to b."""
    ip, host = BROKERS[b]
    if b not in c.ports:
        c.ports[b] = w.rnd.randint(10000, 60000)
        w.broker(b, t, f"pulsar-io-22-{w.rnd.randint(1, 8)}", "INFO", SC, f"New connection from /{c.ip}:{c.ports[b]}")
        t += w.ms(1, 5)
    p.broker, p.conn = b, f"/{c.ip}:{c.ports[b]}"
    p.channel = f"0x{w.rnd.getrandbits(32):08x}"
    w.broker(b, t, f"ForkJoinPool.commonPool-worker-{w.rnd.randint(1, 30)}", "INFO", SC,
             f"[{p.conn}][{p.topic}] Creating producer. producerId={p.pid}")
    if ok:
        t += w.ms(3, 15)
        w.broker(b, t, f"ForkJoinPool.commonPool-worker-{w.rnd.randint(1, 30)}", "INFO", SC,
                 f"[{p.conn}] Created new producer: {producer_str(p)}")
        t += w.ms(1, 5)
        w.client(c, t, "pulsar-client-io-1-1", "INFO", "org.apache.pulsar.client.impl.ProducerImpl",
                 f"[{p.topic}] [{p.name}] Created producer on cnx [id: {p.channel}, L:{p.conn} - R:{host}/{ip}:6650]")
    return t


def shed(w: World, leader: str, target: str, bundle: str, t: dt.datetime) -> dt.datetime:
    ip, _ = BROKERS[target]
    usage = w.rnd.uniform(0.86, 0.97)
    w.broker(leader, t, "pulsar-load-manager-3-1", "INFO", OS,
             f"Attempting to shed load on {ip}:8080, which has max resource usage above threshold {usage:.2f}% > 0.85% -- Offloading at least {w.rnd.uniform(5, 30):.1f} MByte/s of traffic")
    t += w.ms(20, 60)
    w.broker(leader, t, "pulsar-load-manager-3-1", "INFO", LM,
             f"[Overload shedder] Unloading bundle: {NS}/{bundle} from broker {ip}:8080")
    return t + w.ms(30, 80)


def unload(w: World, b: str, bundle: str, t: dt.datetime, producers: list[Producer], clients: dict[str, Client]) -> dt.datetime:
    """The owning broker closes the bundle: disable ownership, disconnect producers, close topics."""
    w.broker(b, t, "pulsar-web-41-5", "INFO", OB, f"Disabling ownership: {NS}/{bundle}")
    topics = sorted({p.topic for p in producers})
    for topic in topics:
        t += w.ms(2, 10)
        w.broker(b, t, "pulsar-web-41-5", "INFO", BS, f"[{topic}] Unloading topic")
        for p in [q for q in producers if q.topic == topic]:
            t += w.ms(1, 4)
            w.broker(b, t, "pulsar-web-41-5", "INFO", PROD, f"Disconnecting producer: {producer_str(p)}")
            c = clients[p.client]
            w.client(c, t + w.ms(1, 5), "pulsar-client-io-1-1", "INFO", "org.apache.pulsar.client.impl.ClientCnx",
                     f"[{BROKERS[b][1]}/{BROKERS[b][0]}:6650] Broker notification of Closed producer: {p.pid}")
            w.client(c, t + w.ms(6, 9), "pulsar-client-io-1-1", "INFO", "org.apache.pulsar.client.impl.ConnectionHandler",
                     f"[{p.topic}] [{p.name}] Closed connection [id: {p.channel}, L:{p.conn} ! R:{BROKERS[b][1]}/{BROKERS[b][0]}:6650] -- Will try again in 0.1 s")
        t += w.ms(20, 80)
        w.broker(b, t, f"bookkeeper-ml-workers-OrderedExecutor-{w.rnd.randint(0, 7)}-0", "INFO", PT, f"[{topic}] Topic closed")
    t += w.ms(100, 400)
    ms = w.rnd.uniform(300, 900)
    w.broker(b, t, "pulsar-web-41-5", "INFO", OB,
             f"Unloading {NS}/{bundle} namespace-bundle with {len(topics)} topics completed in {ms:.1f} ms")
    return t


def dangling(w: World, p: Producer, c: Client, b: str, t: dt.datetime) -> dt.datetime:
    """The bug: the reconnect hits the ownership check while the bundle is unloading; the future dangles."""
    ip, host = BROKERS[b]
    w.broker(b, t, f"ForkJoinPool.commonPool-worker-{w.rnd.randint(1, 30)}", "INFO", SC,
             f"[{p.conn}][{p.topic}] Creating producer. producerId={p.pid}")
    t += w.ms(1, 4)
    w.broker(b, t, f"pulsar-io-22-{w.rnd.randint(1, 8)}", "WARN", BS,
             f"Namespace bundle for topic ({p.topic}) not served by this instance. Please redo the lookup. Request is denied: namespace={NS}")
    return t


def stuck_retries(w: World, p: Producer, c: Client, b: str, t: dt.datetime, until: dt.datetime) -> dt.datetime:
    """Every retry on the same connection is rejected; the client backs off up to 60 s."""
    delay = 0.1
    while t < until:
        t += dt.timedelta(seconds=delay) + w.ms(0, 40)
        if t >= until:
            break
        w.broker(b, t, f"pulsar-io-22-{w.rnd.randint(1, 8)}", "WARN", SC,
                 f"[{p.conn}][{p.pid}] Producer with id {p.topic} is already present on the connection")
        w.client(c, t + w.ms(2, 6), "pulsar-client-io-1-1", "ERROR", "org.apache.pulsar.client.impl.ProducerImpl",
                 f"[{p.topic}] [{p.name}] Failed to create producer: Producer is already present on the connection")
        delay = min(delay * 2, 60.0)
    return t


# ---------------------------------------------------------------------- scenarios


def build(healthy: bool, seed: int) -> World:
    w = World(seed)
    clients = {
        "client-orders-7d9f.log": Client("client-orders-7d9f.log", "orders-7d9f", "10.1.116.123", "orders-svc", "sb2"),
        "client-payments-5c2a.log.gz": Client("client-payments-5c2a.log.gz", "payments-5c2a", "10.1.105.84", "payments-svc", "sb2", skew=dt.timedelta(seconds=3.2)),
        "client-billing-1b7e.log": Client("client-billing-1b7e.log", "billing-1b7e", "10.1.117.9", "billing-svc", "sb3", dt.timedelta(hours=8), skew=dt.timedelta(seconds=-1.7)),
    }
    producers: list[Producer] = []
    pid = {k: 0 for k in clients}

    def add(client: str, topic: str, bundle: str) -> Producer:
        p = Producer(client, f"persistent://{NS}/{topic}", pid[client], f"{clients[client].host}-{pid[client]}", bundle)
        pid[client] += 1
        producers.append(p)
        return p

    for i in range(8):
        add("client-orders-7d9f.log", f"orders-partition-{i}", BUNDLES[1] if i in (3, 7, 1) else BUNDLES[i % 4 if i % 4 != 1 else 0])
    for i in range(4):
        add("client-payments-5c2a.log.gz", f"payments-partition-{i}", BUNDLES[3] if i in (1, 2) else BUNDLES[2])
    for i in range(4):
        add("client-billing-1b7e.log", f"billing-partition-{i}", BUNDLES[1] if i == 0 else BUNDLES[3] if i == 3 else BUNDLES[0])

    owner = {BUNDLES[0]: "broker-2", BUNDLES[1]: "broker-1", BUNDLES[2]: "broker-1", BUNDLES[3]: "broker-2"}
    t = START + dt.timedelta(seconds=2)
    for p in producers:
        t = connect(w, p, clients[p.client], owner[p.bundle], t + w.ms(5, 60))

    topics = {b: sorted({p.topic for p in producers if owner[p.bundle] == b}) + [f"persistent://{NS}/audit-{i}" for i in range(6)] for b in BROKERS}
    for b in BROKERS:
        noise(w, b, START, END, topics[b], rate_s=3.0)
    for c in clients.values():
        client_noise(w, c, START, END, rate_s=5.0)

    def move(bundle: str, frm: str, to: str, at: dt.datetime, strand: list[Producer] | None = None, until: dt.datetime | None = None) -> None:
        """Shed a bundle from `frm`; it is assigned to `to` (possibly `frm` again) and its producers
        reconnect there. Producers in `strand` retried *during* the unload and hit the ownership
        check on `frm`: their futures dangle and every later retry on that connection is rejected."""
        at = shed(w, "broker-1", frm, bundle, at)
        victims = [p for p in producers if p.bundle == bundle and p.broker == frm]
        end = unload(w, frm, bundle, at, victims, clients)
        owner[bundle] = to
        for p in victims:
            c = clients[p.client]
            if strand and p in strand:
                dangling(w, p, c, frm, at + w.ms(150, 300))
                w.client(c, at + w.ms(310, 330), "pulsar-client-io-1-1", "ERROR", "org.apache.pulsar.client.impl.ProducerImpl",
                         f"[{p.topic}] [{p.name}] Failed to create producer: Namespace bundle for topic ({p.topic}) not served by this instance. Please redo the lookup. Request is denied: namespace={NS}")
                continue
            connect(w, p, c, to, end + w.ms(300, 1500))
        for p in strand or []:
            assert to == frm, "a stranded producer keeps retrying on the broker the bundle came back to"
            stuck_retries(w, p, clients[p.client], frm, end + dt.timedelta(seconds=1), until or END)

    t = START + dt.timedelta(minutes=35, seconds=12)
    move(BUNDLES[2], "broker-1", "broker-2", t)  # healthy unload (decoy)

    stranded_1 = [p for p in producers if p.client == "client-orders-7d9f.log" and p.topic.endswith(("orders-partition-3", "orders-partition-7"))]
    t = START + dt.timedelta(minutes=70, seconds=40)
    move(BUNDLES[1], "broker-1", "broker-1", t, strand=None if healthy else stranded_1)

    # 23:40 transient "already present" that clears within a second (a slow close on broker-2)
    tp = next(p for p in producers if p.client == "client-billing-1b7e.log" and p.broker == "broker-2")
    t = START + dt.timedelta(minutes=100, seconds=5)
    c = clients[tp.client]
    for k in range(2):
        w.broker("broker-2", t, f"pulsar-io-22-{w.rnd.randint(1, 8)}", "WARN", SC,
                 f"[{tp.conn}][{tp.pid}] Producer with id {tp.topic} is already present on the connection")
        t += w.ms(150, 300)
    w.broker("broker-2", t, f"ForkJoinPool.commonPool-worker-{w.rnd.randint(1, 30)}", "INFO", SC,
             f"[{tp.conn}] Created new producer: {producer_str(tp)}")

    stranded_2 = [p for p in producers if p.client == "client-payments-5c2a.log.gz" and p.topic.endswith("payments-partition-2")]
    t = START + dt.timedelta(minutes=140, seconds=20)
    restart = START + dt.timedelta(minutes=185, seconds=3)
    if healthy:
        move(BUNDLES[3], "broker-2", "broker-2", t)
    else:
        move(BUNDLES[3], "broker-2", "broker-2", t, strand=stranded_2, until=restart)
        # the payments service is restarted: a new connection, the producer is created again
        p = stranded_2[0]
        c = clients[p.client]
        w.broker("broker-2", restart, f"pulsar-io-22-{w.rnd.randint(1, 8)}", "INFO", SC, f"Closed connection from {p.conn}")
        w.client(c, restart - dt.timedelta(seconds=20), "SpringApplicationShutdownHook", "INFO", "com.example.payments.Application", "Shutting down (restart requested by on-call)")
        c.ports.pop("broker-2", None)
        connect(w, p, c, "broker-2", restart + dt.timedelta(seconds=9))

    t = START + dt.timedelta(minutes=175)
    move(BUNDLES[0], "broker-2", "broker-1", t)  # another healthy unload
    return w


def write(w: World, out: Path, compress_gz: bool = True) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for old in out.iterdir():
        if old.is_file():
            old.unlink()
    names = {"broker-1": "pulsar-broker-1.2020-06-01.log", "broker-2": "pulsar-broker-2.2020-06-01.log"}
    for key, rows in w.lines.items():
        rows.sort(key=lambda r: (r[0], r[1]))
        text = "".join(r[2] + "\n" for r in rows if START <= r[0] <= END)
        name = names.get(key, key)
        path = out / name
        data = text.encode("utf-8")
        if name.endswith(".gz"):
            data = gzip.compress(data, mtime=0) if compress_gz else data
        path.write_bytes(data)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent)
    ap.add_argument("--seed", type=int, default=6872)
    args = ap.parse_args()
    write(build(healthy=False, seed=args.seed), args.out / "pulsar-incident")
    write(build(healthy=True, seed=args.seed), args.out / "pulsar-healthy")


if __name__ == "__main__":
    main()
