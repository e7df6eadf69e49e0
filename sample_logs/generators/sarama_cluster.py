#!/usr/bin/env python3
"""Deterministic sarama logs of a client that talks to several brokers, one of which goes away.

    python sample_logs/generators/sarama_cluster.py [OUTDIR]      # default: sample_logs/

``sarama.py`` simulates the measured single-broker set-up; this one simulates what sarama 1.22.1
does when the cluster has several brokers (read from async_producer.go, client.go and broker.go of
that tag) and only one of them is gone:

* the topic's partitions are led by the brokers in turn; the seed the client asks for metadata
  (``client.any()``: ``seedBrokers[0]``) is a healthy broker, so every metadata refresh is answered
  at once and still names the gone broker as the leader (the controller has not moved leadership:
  a network black hole between this client and that broker);
* a produce request on the gone broker's connection waits ``Net.ReadTimeout`` (the read deadline
  is set when the response receiver starts waiting for it, right after the write: one request is in
  flight per broker producer in 1.22.1, the bridge goroutine calls ``broker.Produce`` synchronously),
  then ``producer/broker/N state change to [closing] because read tcp …: i/o timeout`` and
  ``Closed connection to broker …``; every message in flight or buffered is retried;
* each partition producer of that broker logs ``[retrying-k]`` and ``abandoning broker N``, sleeps
  ``Producer.Retry.Backoff``, refreshes metadata (``fetching metadata for [T] from broker SEED``),
  looks the leader up (``cachedLeader`` starts an asynchronous dial of the gone broker), gets a new
  broker producer (``producer/broker/N starting up``, ``[open] on T/P``) and logs ``selected broker
  N``; the fin it sent comes back through the closing broker producer: ``[flushing-k]``, then
  ``[normal]`` — while the dial is still pending;
* the new broker producer's request waits for the dial: ``Net.DialTimeout`` later ``Failed to
  connect to broker …: dial tcp …: i/o timeout`` and ``[closing] because dial tcp …``; the messages
  are retried again, and a message whose retries reached ``Producer.Retry.Max`` is returned on
  ``Errors()`` (the application logs it);
* the partitions led by the other brokers keep delivering all along;
* the outage ends by the black hole lifting (a dial in progress connects at the next SYN
  retransmission: 1, 3, 7, 15 … s after it began, so ``Connected to broker`` comes seconds after
  ``selected broker``, and the application then logs the deliveries with their latency), or by the
  controller moving leadership to a live broker (``selected broker M``, ``[open] on T/P`` of broker
  M, deliveries).

The application is an AsyncProducer (a message per partition every ``interval`` seconds, each
success and error logged from the Successes()/Errors() channels) or a SyncProducer (one send per
``interval`` from a ``time.Ticker`` loop to one partition: its key hashes there). It logs in Go's
``log`` (with or without a prefix for sarama's lines), zap JSON (sarama through ``zap.NewStdLog``),
logrus JSON or zerolog JSON, with the delivery latency as each of them prints a duration. Seeded,
no network, no clock: the same bytes on every run.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path

UTC = dt.timezone.utc
SYN_RETRIES = (0.0, 1.0, 3.0, 7.0, 15.0, 31.0, 63.0)  # Linux: SYN sent at these offsets from connect()


@dataclass
class Cluster:
    path: str
    style: str = "micro"  # micro | lstd | zap | logrus | zerolog
    prefix: str = "[sarama] "  # Go log: sarama.Logger's prefix (the application's own logger has none)
    brokers: tuple = ("kafka-0.kafka:9092", "kafka-1.kafka:9092", "kafka-2.kafka:9092")
    ips: tuple = ("10.0.0.10", "10.0.0.11", "10.0.0.12")
    client_ip: str = "10.0.1.5"
    topic: str = "orders"
    partitions: int = 6
    faulty: int = 2  # the broker that goes away (leads partitions p with p % len(brokers) == faulty)
    dial: float = 30.0
    read: float = 30.0
    retry_max: int = 3
    retry_backoff: float = 0.1
    producer: str = "async"  # async | sync
    sync_partition: int = 2  # the partition a SyncProducer's key hashes to
    interval: float = 1.0
    healthy_before: float = 20.0  # seconds of traffic before the outage
    lift_after: float | None = None  # the black hole lifts this long after it began
    lift_round: int | None = None  # … or during the dial of this retry round, ``lift_into`` seconds after it began
    lift_into: float = 2.5
    move_after: float | None = None  # the controller moves leadership away this long after it began
    after: float = 15.0  # seconds of traffic after the last stalled partition delivers again
    print_config: bool = False  # the application logs its sarama settings at start-up
    seed_down: bool = False  # the first seed the client tries is unreachable at start-up only: one dial fails, nothing stalls
    outage: bool = True  # False: no broker goes away after the start-up
    version: tuple = (1, 22, 1)  # before 1.20 'got error from broker while fetching metadata:' names no broker id
    app_name: str = "orders-api"
    start: dt.datetime = dt.datetime(2026, 12, 1, 9, 0, 0, 250000, tzinfo=UTC)
    seed: int = 1


@dataclass
class Msg:
    n: int
    partition: int
    at: float  # enqueued
    retries: int = 0


@dataclass
class Log:
    lines: list = field(default_factory=list)  # (t, seq, source, text, fields)
    seq: int = 0

    def add(self, t: float, source: str, text: str, fields: dict | None = None) -> None:
        self.seq += 1
        self.lines.append((t, self.seq, source, text, fields or {}))


class Sim:
    def __init__(self, c: Cluster):
        self.c = c
        self.rng = random.Random(c.seed)
        self.log = Log()
        self.offsets = {p: 1000 * (p + 1) + self.rng.randrange(0, 500) for p in range(c.partitions)}
        self.n = 0
        self.leader = {p: p % len(c.brokers) for p in range(c.partitions)}
        self.port = 40000 + self.rng.randrange(0, 20000)
        self.results: list[tuple[int, int, float, float, str | None]] = []  # (msg, partition, enqueued, done, error)

    # ------------------------------------------------------------------ helpers
    def j(self, lo: float = 0.00005, hi: float = 0.0003) -> float:
        return self.rng.uniform(lo, hi)

    def sar(self, t: float, text: str) -> None:
        self.log.add(t, "sarama", text)

    def tp(self, p: int) -> str:
        return f"{self.c.topic}/{p}"

    def next_port(self) -> int:
        self.port += 1 + self.rng.randrange(0, 9)
        return self.port

    def faulty_parts(self) -> list[int]:
        return [p for p in range(self.c.partitions) if self.leader[p] == self.c.faulty]

    def deliver(self, t: float, m: Msg) -> None:
        self.offsets[m.partition] += 1
        self.results.append((m.n, m.partition, m.at, t, None))
        self.log.add(t, "app", "delivered", {"n": m.n, "partition": m.partition, "offset": self.offsets[m.partition], "latency": t - m.at})

    def deliver_set(self, t: float, msgs: list[Msg]) -> float:
        """Successes() of one produce response, in the order of the produce set; returns the first's time."""
        first = t
        for m in sorted(msgs, key=lambda m: (m.partition, m.at)):
            t += self.j(0.000002, 0.00001)
            self.deliver(t, m)
        return first

    def fail(self, t: float, m: Msg, err: str) -> None:
        self.results.append((m.n, m.partition, m.at, t, err))
        self.log.add(t, "app", "failed", {"n": m.n, "partition": m.partition, "error": f"kafka: Failed to produce message to topic {self.c.topic}: {err}"})

    # ------------------------------------------------------------------ the client's start
    def startup(self) -> float:
        c = self.c
        t = 0.0
        if c.seed_down:
            self.log.add(t, "app", "starting", {})
            t += self.j(0.001, 0.004)
        self.sar(t, "Initializing new client")
        t += self.j(0.0005, 0.002)
        if c.seed_down:
            # the shuffled seed list starts with the broker that is down: one dial waits Net.DialTimeout
            self.sar(t, f"client/metadata fetching metadata for all topics from broker {c.brokers[c.faulty]}")
            t += c.dial
            err = f"dial tcp {c.ips[c.faulty]}:9092: i/o timeout"
            self.sar(t, f"Failed to connect to broker {c.brokers[c.faulty]}: {err}")
            t += self.j()
            self.sar(t, f"client/metadata got error from broker while fetching metadata: {err}" if c.version < (1, 20)
                     else f"client/metadata got error from broker -1 while fetching metadata: {err}")
            t += self.j()
        self.sar(t, f"client/metadata fetching metadata for all topics from broker {c.brokers[0]}")
        t += self.j(0.0002, 0.0008)
        self.sar(t, f"Connected to broker at {c.brokers[0]} (unregistered)")
        t += self.j(0.0004, 0.0012)
        for b, addr in enumerate(c.brokers):
            self.sar(t, f"client/brokers registered new broker #{b} at {addr}")
        t += self.j()
        self.sar(t, "Successfully initialized new client")
        if c.print_config:
            self.log.add(t + 0.001, "app", "config", {})
        # dispatch(): each partition producer prefetches its leader and starts that broker's producer
        t += 0.01
        started = set()
        for p in range(c.partitions):
            b = self.leader[p]
            if b not in started:
                started.add(b)
                t += self.j(0.0002, 0.0008)
                self.sar(t, f"Connected to broker at {c.brokers[b]} (registered as #{b})")
                t += self.j()
                self.sar(t, f"producer/broker/{b} starting up")
            t += self.j()
            self.sar(t, f"producer/broker/{b} state change to [open] on {self.tp(p)}")
        return t + 0.1

    # ------------------------------------------------------------------ traffic
    def schedule(self, t0: float, t1: float):
        """The messages the application hands sarama from t0 up to t1, one tick after another."""
        c = self.c
        k = 0
        while True:
            t = t0 + k * c.interval
            if t >= t1:
                return
            parts = range(c.partitions) if c.producer == "async" else [c.sync_partition]
            for i, p in enumerate(parts):
                self.n += 1
                yield Msg(self.n, p, t + i * 0.003 + self.j(0.0001, 0.0009))
            k += 1

    def healthy(self, msgs: list[Msg]) -> None:
        for m in msgs:
            self.deliver(m.at + self.j(0.0009, 0.0035), m)

    # ------------------------------------------------------------------ the outage
    def run(self) -> list:
        c = self.c
        t = self.startup()
        down = t + c.healthy_before + 0.37
        lift = down + c.lift_after if c.lift_after is not None else None
        move = down + c.move_after if c.move_after is not None else None
        faulty = set(self.faulty_parts())
        if not c.outage:
            end = t + c.healthy_before
            self.healthy(list(self.schedule(t, end)))
            last = max(x[0] for x in self.log.lines) + 0.3
            self.log.add(last, "app", "shutdown", {})
            self.sar(last + self.j(), "Producer shutting down.")
            self.sar(last + 0.001 + self.j(), "Closing Client")
            return sorted(self.log.lines)
        self.healthy(list(self.schedule(t, down)))
        ticks = -(-(down - t) // c.interval)
        clock = t + ticks * c.interval  # the first tick in the black hole
        # the first message on a faulty partition after the black hole begins is written and hangs
        pending: list[Msg] = []
        healthy_during: list[Msg] = []
        it = self.schedule(clock, float("inf"))
        port = self.next_port()

        def take_until(tt: float) -> list[Msg]:
            """Async: the messages enqueued up to tt (faulty ones join the broker producer's buffer)."""
            nonlocal nxt
            got = []
            while nxt is not None and nxt.at <= tt:
                got.append(nxt)
                nxt = next(it, None)
            return got

        nxt = next(it, None)
        # up to the first message on a faulty partition: all delivered
        while nxt is not None and nxt.partition not in faulty:
            self.healthy([nxt])
            nxt = next(it, None)
        pending = [nxt]
        nxt = next(it, None) if c.producer == "async" else None
        write_at = pending[0].at + self.j(0.00005, 0.0002)
        t_fail = write_at + c.read
        addr, ip = c.brokers[c.faulty], c.ips[c.faulty]
        err_read = f"read tcp {c.client_ip}:{port}->{ip}:9092: i/o timeout"
        err_dial = f"dial tcp {ip}:9092: i/o timeout"
        if c.producer == "async":
            for m in take_until(t_fail):
                (pending if m.partition in faulty else healthy_during).append(m)
            self.healthy(healthy_during)
            healthy_during = []
        self.sar(t_fail, f"producer/broker/{c.faulty} state change to [closing] because {err_read}")
        self.sar(t_fail + self.j(0.00001, 0.00005), f"Closed connection to broker {addr}")
        err = err_read
        hwm = {p: 0 for p in faulty}
        rounds = 0
        while True:
            rounds += 1
            # the broker producer retries what it held: messages out of retries go back to the application
            t = t_fail + self.j()
            retry = []
            t_err = t
            for m in sorted(pending, key=lambda m: (m.partition, m.at)):
                if m.retries >= c.retry_max:  # Errors(): in the order of the produce set
                    t_err += self.j(0.000002, 0.00001)
                    self.fail(t_err, m, err)
                else:
                    m.retries += 1
                    retry.append(m)
            if c.producer == "sync" and not retry:
                # SendMessage returned the error: the loop's next tick (one is kept while it blocked)
                nxt_send = t_err + self.j(0.0001, 0.0004)
                t = nxt_send + self.j()
                self.n += 1
                m = Msg(self.n, c.sync_partition, nxt_send)
                # the partition producer still points at the closing broker producer: retried at once
                m.retries = 1
                retry = [m]
            parts = sorted({m.partition for m in retry})
            t_round = t
            for p in parts:
                lvl = max(m.retries for m in retry if m.partition == p)
                if lvl > hwm[p]:
                    hwm[p] = lvl
                    self.sar(t_round, f"producer/leader/{self.tp(p)} state change to [retrying-{lvl}]")
                    self.sar(t_round + self.j(0.00001, 0.00004), f"producer/leader/{self.tp(p)} abandoning broker {self.leader[p]}")
                t_round += self.j(0.00002, 0.0001)
            self.sar(t_round + self.j(), f"producer/broker/{c.faulty} shut down")
            # each partition producer backs off, refreshes metadata and looks the leader up again
            t_sel = t_round + c.retry_backoff + self.j(0.0002, 0.0006)
            moved = move is not None and t_sel >= move
            dial_start = None
            for i, p in enumerate(parts):
                tt = t_sel + i * self.j(0.0003, 0.0009)
                self.sar(tt, f"client/metadata fetching metadata for [{c.topic}] from broker {c.brokers[0]}")
                tt += self.j(0.0005, 0.0015)
                if moved:
                    new = next(b for b in ((p + 1) % len(c.brokers), (p + 2) % len(c.brokers)) if b != c.faulty)
                    self.leader[p] = new
                    self.sar(tt, f"producer/broker/{new} state change to [open] on {self.tp(p)}")
                    self.sar(tt + self.j(0.00001, 0.00004), f"producer/leader/{self.tp(p)} selected broker {new}")
                else:
                    if dial_start is None:
                        dial_start = tt
                        self.sar(tt + self.j(0.00001, 0.00003), f"producer/broker/{c.faulty} starting up")
                    self.sar(tt + self.j(0.00004, 0.00008), f"producer/broker/{c.faulty} state change to [open] on {self.tp(p)}")
                    self.sar(tt + self.j(0.00009, 0.00012), f"producer/leader/{self.tp(p)} selected broker {c.faulty}")
                tf = tt + self.j(0.0002, 0.0006)
                self.sar(tf, f"producer/leader/{self.tp(p)} state change to [flushing-{hwm[p]}]")
                self.sar(tf + self.j(0.00001, 0.00005), f"producer/leader/{self.tp(p)} state change to [normal]")
                hwm[p] = 0
            if moved:
                t_ok = t_sel + 0.004 + self.j(0.0009, 0.003)
                if c.producer == "async":
                    for m in take_until(t_ok):
                        (retry if m.partition in faulty else healthy_during).append(m)
                    self.healthy(healthy_during)
                    healthy_during = []
                end = self.deliver_set(t_ok, retry)
                break
            # the new broker producer's request waits for the dial
            if c.lift_round is not None and rounds == c.lift_round:
                lift = dial_start + c.lift_into
            if lift is not None and dial_start + c.dial > lift:
                syn = next((dial_start + s for s in SYN_RETRIES if dial_start + s >= lift and s < c.dial), None)
            else:
                syn = None
            t_dial = syn if syn is not None else dial_start + c.dial
            if c.producer == "async":
                for m in take_until(t_dial):
                    (retry if m.partition in faulty else healthy_during).append(m)
                self.healthy(healthy_during)
                healthy_during = []
            if syn is not None:
                self.sar(syn, f"Connected to broker at {addr} (registered as #{c.faulty})")
                t_ok = syn + self.j(0.0012, 0.004)
                end = self.deliver_set(t_ok, retry)
                break
            self.sar(t_dial, f"Failed to connect to broker {addr}: {err_dial}")
            t_fail = t_dial + self.j(0.00002, 0.0001)
            self.sar(t_fail, f"producer/broker/{c.faulty} state change to [closing] because {err_dial}")
            err = err_dial
            pending = retry
        # traffic after the recovery
        if c.producer == "async":
            later = take_until(end + c.after)
            self.healthy([m for m in later if m.at > end] + [m for m in later if m.at <= end])
        else:
            k = 1
            while k * c.interval <= c.after:
                self.n += 1
                m = Msg(self.n, c.sync_partition, end + k * c.interval + self.j(0.0001, 0.0009))
                self.deliver(m.at + self.j(0.0009, 0.0035), m)
                k += 1
        last = max(x[0] for x in self.log.lines) + 0.3
        self.log.add(last, "app", "shutdown", {})
        self.sar(last + self.j(), "Producer shutting down.")
        self.sar(last + 0.001 + self.j(), "Closing Client")
        return sorted(self.log.lines)


# ---------------------------------------------------------------------- rendering


def _stamp(c: Cluster, t: float) -> dt.datetime:
    return c.start + dt.timedelta(microseconds=round(t * 1_000_000))


def _go_duration(s: float) -> str:
    """Go's time.Duration.String() to microseconds."""
    us = round(s * 1_000_000)
    if us < 1000:
        return f"{us}µs"
    if us < 1_000_000:
        return f"{us / 1000:g}ms"
    m, rest = divmod(us, 60_000_000)
    sec = f"{rest / 1_000_000:.6f}".rstrip("0").rstrip(".") + "s"
    return f"{m}m{sec}" if m else sec


def _app_text(c: Cluster, kind: str, f: dict) -> str:
    if kind == "delivered":
        return f"message {f['n']} delivered to partition {f['partition']} at offset {f['offset']} after {_go_duration(f['latency'])}"
    if kind == "failed":
        return f"message {f['n']} to partition {f['partition']} failed: {f['error']}"
    if kind == "starting":
        return f"starting {c.app_name}: producing to {c.topic}"
    if kind == "config":
        return (f"producer config: Net.DialTimeout={_go_duration(c.dial)} Net.ReadTimeout={_go_duration(c.read)} "
                f"Net.WriteTimeout=30s Producer.Retry.Max={c.retry_max} Producer.Retry.Backoff={_go_duration(c.retry_backoff)}")
    return "shutting down"


def _app_json(c: Cluster, kind: str, f: dict) -> dict:
    """The application's record in the JSON logger's own way: zap prints a duration as float seconds
    (production encoder), logrus as the application formats it (here its milliseconds), zerolog's Dur
    as float milliseconds."""
    if kind == "delivered":
        d = {"msg": "message delivered", "topic": c.topic, "partition": f["partition"], "offset": f["offset"]}
        if c.style == "zap":
            d["latency"] = round(f["latency"], 6)
        elif c.style == "logrus":
            d["latency_ms"] = round(f["latency"] * 1000, 3)
        else:
            d["elapsed"] = round(f["latency"] * 1000, 3)
        return d
    if kind == "failed":
        return {"msg": "message failed", "topic": c.topic, "partition": f["partition"], "error": f["error"], "_error": True}
    if kind == "starting":
        return {"msg": "starting", "topic": c.topic}
    if kind == "config":
        return {"msg": "producer config", "net.dial_timeout": _go_duration(c.dial), "net.read_timeout": _go_duration(c.read),
                "net.write_timeout": "30s", "producer.retry.max": c.retry_max}
    return {"msg": "shutting down"}


def render(c: Cluster, lines: list) -> str:
    out = []
    for t, _, src, text, fields in lines:
        when = _stamp(c, t)
        if c.style in ("zap", "logrus", "zerolog"):
            if src == "sarama":
                d = {"msg": text}
                level, logger = "info", "sarama"
            else:
                d = _app_json(c, text, fields)
                level = "error" if d.pop("_error", False) else "info"
                logger = c.app_name
            if c.style == "zap":
                obj = {"level": level, "ts": float(f"{when.timestamp():.6f}"), "logger": logger, **d}
            elif c.style == "logrus":  # logrus: no logger name; sarama's lines through logrus.StandardLogger()
                obj = {"level": level, "msg": d.pop("msg"), "time": when.strftime("%Y-%m-%dT%H:%M:%S.%f") + "Z", **d}
                if src == "sarama":
                    obj["component"] = "sarama"
            else:  # zerolog: 'message' and an RFC 3339 time
                obj = {"level": level, "component": logger, **{("message" if k == "msg" else k): v for k, v in d.items()},
                       "time": when.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"}
            out.append(json.dumps(obj, separators=(",", ":"), ensure_ascii=False))
            continue
        stamp = when.strftime("%Y/%m/%d %H:%M:%S")
        if c.style == "micro":
            stamp += f".{when.microsecond:06d}"
        prefix = c.prefix if src == "sarama" else ""
        out.append(f"{prefix}{stamp} {text if src == 'sarama' else _app_text(c, text, fields)}")
    return "\n".join(out) + "\n"


def simulate(c: Cluster) -> tuple[str, Sim]:
    sim = Sim(c)
    return render(c, sim.run()), sim


def first_failure(sim: Sim) -> tuple[float, float] | None:
    """(enqueued, returned) of the first message returned with an error, in seconds of the simulation."""
    errs = [r for r in sim.results if r[4] is not None]
    if not errs:
        return None
    first = min(errs, key=lambda r: r[3])
    return first[2], first[3]


# ---------------------------------------------------------------------- the sample incidents

SCENARIOS = [
    # AsyncProducer, four messages a second per partition, Retry.Max 5, dial and read 10 s: broker 2
    # black-holed, orders/2 and orders/5 stall 10 + 5 × (0.1 + 10) ≈ 60.5 s before their first messages
    # are returned, while orders/0, 1, 3, 4 keep delivering; the black hole lifts during the 7th retry's
    # dial. The Go log prints the application's producer config; zap's does not.
    Cluster(path="sarama-cluster/orders-async.log", style="micro", prefix="[sarama] ", dial=10.0, read=10.0,
            retry_max=5, interval=0.25, lift_round=7, print_config=True, seed=41),
    Cluster(path="sarama-cluster/orders-async.json", style="zap", dial=10.0, read=10.0, retry_max=5, interval=0.25,
            lift_round=7, seed=42, start=dt.datetime(2026, 12, 1, 13, 30, 0, 120000, tzinfo=UTC)),
    # the same outage lifted during the 3rd retry's dial: no error reaches the application; the dial
    # connects 3 s after 'selected broker 2' and the deliveries (with their latency) end the stall
    Cluster(path="sarama-cluster/payments-async.log", style="lstd", prefix="", dial=10.0, read=10.0, retry_max=5,
            interval=0.25, lift_round=3, topic="payments", app_name="payments-api", seed=43,
            start=dt.datetime(2026, 12, 1, 15, 5, 0, 400000, tzinfo=UTC)),
    Cluster(path="sarama-cluster/payments-async.logrus.json", style="logrus", dial=10.0, read=10.0, retry_max=5,
            interval=0.25, lift_round=3, topic="payments", app_name="payments-api", seed=44,
            start=dt.datetime(2026, 12, 1, 16, 5, 0, 400000, tzinfo=UTC)),
    # the controller moves leadership off broker 2 after 35 s: 'selected broker 0/1', deliveries, no error
    Cluster(path="sarama-cluster/shipping-async.log", style="micro", prefix="[Sarama] ", dial=10.0, read=10.0, retry_max=5,
            interval=0.25, move_after=35.0, topic="shipments", app_name="shipping", seed=45,
            start=dt.datetime(2026, 12, 1, 17, 5, 0, 400000, tzinfo=UTC)),
    Cluster(path="sarama-cluster/shipping-async.zerolog.json", style="zerolog", dial=10.0, read=10.0, retry_max=5,
            interval=0.25, move_after=35.0, topic="shipments", app_name="shipping", seed=46,
            start=dt.datetime(2026, 12, 1, 18, 5, 0, 400000, tzinfo=UTC)),
    # SyncProducer, one send every 30 s to ledger/2, sarama's defaults (ReadTimeout 30 s, Retry.Max 3):
    # the request written 30 s after the last delivery hangs 30 + 3 × 30.1 ≈ 120 s (150 s after that
    # delivery); zerolog's variant prints its config (ReadTimeout 20 s: 110 s)
    Cluster(path="sarama-bounds/ledger-sync.log", style="micro", prefix="[Sarama] ", producer="sync", interval=30.0,
            healthy_before=95.0, topic="ledger", app_name="ledger", lift_after=200.0, after=90.0, seed=51,
            start=dt.datetime(2026, 12, 2, 2, 0, 0, 500000, tzinfo=UTC)),
    # one seed unreachable at start-up (v1.19 texts): a single dial failure, the next seed answers, nothing stalls
    Cluster(path="sarama-old/startup-seed-down.log", style="lstd", prefix="[sarama] ", seed_down=True, outage=False,
            version=(1, 19, 0), interval=1.0, topic="catalog", app_name="catalog", seed=71,
            start=dt.datetime(2026, 11, 29, 5, 0, 0, 0, tzinfo=UTC)),
    Cluster(path="sarama-old/startup-seed-down.json", style="zap", seed_down=True, outage=False, interval=1.0,
            topic="catalog", app_name="catalog", seed=72, start=dt.datetime(2026, 11, 29, 6, 0, 0, 0, tzinfo=UTC)),
    Cluster(path="sarama-bounds/ledger-sync.zerolog.json", style="zerolog", producer="sync", interval=30.0,
            healthy_before=95.0, topic="ledger", app_name="ledger", lift_after=200.0, after=90.0, print_config=True,
            read=20.0, seed=52, start=dt.datetime(2026, 12, 2, 4, 0, 0, 500000, tzinfo=UTC)),
]


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else Path(__file__).resolve().parent.parent
    for c in SCENARIOS:
        text, _ = simulate(c)
        p = out / c.path
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(text.encode("utf-8"))
        print(f"wrote {p} ({text.count(chr(10))} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
