#!/usr/bin/env python3
"""Deterministic sarama incident logs: black hole, refused/closed, and a mute broker.

    python sample_logs/generators/sarama.py [OUTDIR]      # default: sample_logs/

A small discrete-event simulation of what sarama 1.22.1's SyncProducer does, one topic partition,
one broker that is also the seed (the set-up measured in ../shared/reference/sarama-timing.md), fed
by an application that sends one message per second from a ``time.Ticker`` loop and logs every
result. Seeded, no network, no clock: the same bytes on every run.

What is simulated (sarama 1.22.1 async_producer.go / client.go / broker.go, go-resiliency breaker):

* brokerProducer: a produce request on the partition leader's connection; on an error it logs
  ``producer/broker/N state change to [closing] because <err>``, closes the connection
  (``Closed connection to broker A``) and retries the message (``retries++``) or, with the
  retries spent, returns the error to the application. A closing brokerProducer retries every
  further message (and fin) it is handed at once.
* partitionProducer: ``[retrying-N]`` + ``abandoning broker N`` on a new retry level (then
  ``Producer.Retry.Backoff``), ``updateLeader`` (metadata refresh + leader lookup) inside the
  partition's circuit breaker ``breaker.New(3, 1, 10s)``, ``selected broker N``, and the fin that
  comes back through the closing brokerProducer: ``[flushing-N]`` ... ``[normal]``, which repeats
  the metadata path when the leader is still unknown.
* client.tryRefreshMetadata: seed broker first (``any()``), ``got error from broker -1``, seed moved
  to the dead seeds; the registered broker next (``deregistered broker #1``); ``no available
  broker``, ``resurrecting 1 dead seed brokers``, ``retrying after 250ms... (N attempts
  remaining)``, up to ``Metadata.Retry.Max`` times, then ErrOutOfBrokers.
* the network per outage kind: ``blackhole`` (dials time out after Net.DialTimeout, requests on an
  open connection after Net.ReadTimeout), ``close`` (connections closed by the broker answer EOF,
  new dials are refused at once), ``mute`` (the broker accepts connections and answers metadata,
  never produce requests).

This reproduces every row of the measured table within 10 ms (see ``python ... --check``). The
outage ends right after the application logs its k-th error (a modelling choice so that no
simulated wait straddles the recovery; the simulator refuses scenarios where one would).
Message texts are sarama's format strings (reference log-formats.md §C.1).
"""

from __future__ import annotations

import datetime as dt
import heapq
import json
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path

UTC = dt.timezone.utc
OUT_OF_BROKERS = "kafka: client has run out of available brokers to talk to (Is your cluster reachable?)"
BREAKER_OPEN = "circuit breaker is open"


class ScenarioError(Exception):
    pass


@dataclass
class Config:
    dial: float = 30.0  # Net.DialTimeout
    read: float = 30.0  # Net.ReadTimeout
    retry_max: int = 3  # Producer.Retry.Max
    retry_backoff: float = 0.1  # Producer.Retry.Backoff
    md_retry_max: int = 3  # Metadata.Retry.Max
    md_backoff: float = 0.25  # Metadata.Retry.Backoff


@dataclass
class Scenario:
    path: str  # relative to the output directory
    kind: str  # blackhole | close | mute | none
    cfg: Config
    style: str = "lstd"  # lstd | micro | zap
    prefix: str = "[sarama] "
    addr: str = "127.0.0.1:9092"  # broker address as configured / advertised
    ip: str = "127.0.0.1"  # what the address resolves to
    client_ip: str = "127.0.0.1"
    topic: str = "orders"
    partition: int = 0
    start: dt.datetime = dt.datetime(2026, 11, 30, 2, 54, 0, 300000, tzinfo=UTC)
    healthy_before: int = 40  # successful sends before the outage
    recover_after_errors: int | None = 1  # the outage ends right after the app's k-th error
    recover_delay: float = 0.05
    healthy_after: int = 15  # successful sends after the first success that follows recovery
    seed: int = 1
    app_name: str = "orders-api"
    version: tuple = (1, 22, 1)  # before 1.20, 'got error from broker while fetching metadata:' names no broker id


@dataclass
class Conn:
    id: int  # -1 for the seed broker
    open: bool = False
    opened_at: float = 0.0
    port: int = 0


@dataclass(order=True)
class _Ev:
    t: float
    seq: int
    kind: str = field(compare=False)
    data: object = field(compare=False, default=None)


@dataclass
class Msg:
    n: int
    retries: int = 0
    fin: bool = False
    sent_at: float = 0.0


class Sim:
    def __init__(self, sc: Scenario):
        self.sc = sc
        self.cfg = sc.cfg
        self.rng = random.Random(sc.seed)
        self.lines: list[tuple[float, int, str, str, dict]] = []  # (t, seq, source, text, app fields)
        self.seq = 0
        self.events: list[_Ev] = []
        self.t0 = 0.0
        # network
        self.down_at = float("inf")
        self.up_at = float("inf")
        self.max_net_t = 0.0
        # client
        self.seed = Conn(-1)
        self.b1 = Conn(1)
        self.seeds = [self.seed]
        self.dead: list[Conn] = []
        self.registered = False
        self.next_port = 40000 + self.rng.randrange(0, 20000)
        # breaker (go-resiliency, breaker.New(3, 1, 10*time.Second))
        self.br_state = "closed"
        self.br_errors = 0
        self.br_last_error = 0.0
        self.br_half_open_at = 0.0
        # partition producer
        self.pp_input: list[tuple[float, int, Msg]] = []
        self.pp_busy_until = 0.0
        self.hwm = 0
        self.expect_chaser: dict[int, bool] = {}
        self.retry_buf: dict[int, list[Msg]] = {}
        self.bp: dict | None = None  # {"closing": err or None}
        # application
        self.app_errors = 0
        self.app_ok_after_recovery = 0
        self.sent = 0
        self.offset = 1000 + self.rng.randrange(0, 9000)
        self.last_tick = 0.0
        self.done = False
        self.first_send_start: dict[int, float] = {}
        self.results: list[tuple[int, float, float, str | None]] = []  # (msg, start, end, err)

    # ------------------------------------------------------------------ helpers
    def jit(self, lo: float = 0.00005, hi: float = 0.0003) -> float:
        return self.rng.uniform(lo, hi)

    def log(self, t: float, text: str) -> None:
        self.seq += 1
        self.lines.append((t, self.seq, "sarama", text, {}))

    def app(self, t: float, text: str, fields: dict) -> None:
        self.seq += 1
        self.lines.append((t, self.seq, "app", text, fields))

    def push(self, t: float, kind: str, data=None) -> None:
        self.seq += 1
        heapq.heappush(self.events, _Ev(t, self.seq, kind, data))

    def port(self) -> int:
        self.next_port += 1 + self.rng.randrange(0, 7)
        return self.next_port

    # ------------------------------------------------------------------ network
    def down(self, t: float) -> bool:
        return self.down_at <= t < self.up_at

    def wait(self, t: float, until: float) -> float:
        """A network wait during the outage; no wait may straddle the recovery."""
        if t < self.up_at < until:
            raise ScenarioError(f"{self.sc.path}: a wait from {t:.3f} to {until:.3f} straddles the recovery at {self.up_at:.3f}")
        self.max_net_t = max(self.max_net_t, until)
        return until

    def dial(self, c: Conn, t: float) -> tuple[float, str | None]:
        kind = self.sc.kind
        if kind == "blackhole" and self.down(t):
            t2 = self.wait(t, t + self.cfg.dial)
            err = f"dial tcp {self.sc.ip}:{self._port_of_addr()}: i/o timeout"
            self.log(t2, f"Failed to connect to broker {self.sc.addr}: {err}")
            return t2, err
        if kind == "close" and self.down(t):
            t2 = self.wait(t, t + self.jit(0.0001, 0.0004))
            err = f"dial tcp {self.sc.ip}:{self._port_of_addr()}: connect: connection refused"
            self.log(t2, f"Failed to connect to broker {self.sc.addr}: {err}")
            return t2, err
        t2 = t + self.jit(0.0002, 0.0008)
        c.open, c.opened_at, c.port = True, t2, self.port()
        reg = f"registered as #{c.id}" if c.id >= 0 else "unregistered"
        self.log(t2, f"Connected to broker at {self.sc.addr} ({reg})")
        return t2, None

    def _port_of_addr(self) -> str:
        return self.sc.addr.rsplit(":", 1)[1]

    def request(self, c: Conn, t: float, what: str) -> tuple[float, str | None]:
        """A request on an open connection: produce or metadata."""
        kind = self.sc.kind
        timeout_err = f"read tcp {self.sc.client_ip}:{c.port}->{self.sc.ip}:{self._port_of_addr()}: i/o timeout"
        if kind == "blackhole" and self.down(t):
            return self.wait(t, t + self.cfg.read), timeout_err
        if kind == "close" and (self.down(t) or (c.opened_at < self.down_at <= t)):
            return self.wait(t, t + self.jit(0.0002, 0.0006)), "EOF"
        if kind == "mute" and what == "produce" and self.down(t):
            return self.wait(t, t + self.cfg.read), timeout_err
        return t + (self.jit(0.0008, 0.0025) if what == "produce" else self.jit(0.0004, 0.0012)), None

    def close_conn(self, c: Conn, t: float) -> None:
        if c.open:
            c.open = False
            self.log(t, f"Closed connection to broker {self.sc.addr}")

    # ------------------------------------------------------------------ client
    def any_broker(self) -> Conn | None:
        if self.seeds:
            return self.seeds[0]
        if self.registered:
            return self.b1
        return None

    def refresh_metadata(self, t: float, attempts: int) -> tuple[float, str | None]:
        while True:
            b = self.any_broker()
            if b is None:
                break
            t += self.jit()
            self.log(t, f"client/metadata fetching metadata for [{self.sc.topic}] from broker {self.sc.addr}")
            err = None
            if not b.open:
                t, err = self.dial(b, t)
            if err is None:
                t, err = self.request(b, t, "metadata")
            if err is None:
                if not self.registered:
                    self.registered = True
                    self.log(t + self.jit(), f"client/brokers registered new broker #1 at {self.sc.addr}")
                return t + self.jit(), None
            t += self.jit()
            if self.sc.version < (1, 20):
                self.log(t, f"client/metadata got error from broker while fetching metadata: {err}")  # Logger.Println
            else:
                self.log(t, f"client/metadata got error from broker {b.id} while fetching metadata: {err}")
            self.close_conn(b, t)
            if self.seeds and b is self.seeds[0]:
                self.dead.append(self.seeds.pop(0))
            else:
                self.registered = False
                self.log(t, f"client/brokers deregistered broker #{b.id} at {self.sc.addr}")
        t += self.jit()
        self.log(t, "client/metadata no available broker to send metadata request to")
        self.log(t, f"client/brokers resurrecting {len(self.dead)} dead seed brokers")
        self.seeds += self.dead
        self.dead = []
        if attempts > 0:
            self.log(t, f"client/metadata retrying after {round(self.cfg.md_backoff * 1000)}ms... ({attempts} attempts remaining)")
            return self.refresh_metadata(t + self.cfg.md_backoff, attempts - 1)
        return t, OUT_OF_BROKERS

    # ------------------------------------------------------------------ breaker + updateLeader
    def update_leader(self, t: float) -> tuple[float, str | None]:
        if self.br_state == "open":
            if t < self.br_half_open_at:
                return t + self.jit(0.00001, 0.00005), BREAKER_OPEN
            self.br_state = "half-open"
        t, err = self.refresh_metadata(t, self.cfg.md_retry_max)
        if err is None:
            if not self.b1.open:
                t, err = self.dial(self.b1, t)
        if err is None:
            self.bp = {"closing": None}
            if self.br_state == "half-open":
                self.br_state, self.br_errors = "closed", 0
            return t, None
        # go-resiliency processResult
        if self.br_errors > 0 and t > self.br_last_error + 10.0:
            self.br_errors = 0
        if self.br_state == "closed":
            self.br_errors += 1
            if self.br_errors == 3:
                self.br_state, self.br_errors, self.br_half_open_at = "open", 0, t + 10.0
            else:
                self.br_last_error = t
        elif self.br_state == "half-open":
            self.br_state, self.br_errors, self.br_half_open_at = "open", 0, t + 10.0
        return t, err

    # ------------------------------------------------------------------ producer
    def to_bp(self, m: Msg, t: float) -> None:
        """The brokerProducer gets a message (or fin)."""
        bp = self.bp
        assert bp is not None
        if bp["closing"] is not None:
            self.retry(m, bp["closing"], t + self.jit())
            return
        if m.fin:
            return  # a fin on a healthy brokerProducer: nothing to log
        t2, err = self.request(self.b1, t, "produce")
        if err is None:
            self.push(t2, "result", (m, None))
            return
        self.push(t2, "bp_error", (m, err, bp))

    def retry(self, m: Msg, err: str, t: float) -> None:
        if m.retries >= self.cfg.retry_max:
            self.push(t, "result", (m, err))
        else:
            m.retries += 1
            self.pp_input.append((t + self.jit(), self.next_seq(), m))

    def next_seq(self) -> int:
        self.seq += 1
        return self.seq

    def bp_error(self, t: float, m: Msg, err: str, bp: dict) -> None:
        self.log(t, f"producer/broker/1 state change to [closing] because {err}")
        bp["closing"] = err
        self.close_conn(self.b1, t + self.jit(0.00001, 0.00005))
        self.retry(m, err, t + self.jit())

    def pp_step(self, t: float) -> float | None:
        """The partitionProducer takes the next input at t; returns when it is free again."""
        ready = sorted(x for x in self.pp_input if x[0] <= t)
        if not ready:
            return None
        item = ready[0]
        self.pp_input.remove(item)
        m = item[2]
        t = max(t, item[0])
        tp = f"{self.sc.topic}/{self.sc.partition}"
        if m.fin and m.retries > self.hwm:
            raise ScenarioError(f"{self.sc.path}: a fin above the high watermark is outside this simulation")
        if m.retries > self.hwm:
            self.hwm = m.retries
            self.log(t, f"producer/leader/{tp} state change to [retrying-{self.hwm}]")
            self.expect_chaser[self.hwm] = True
            fin = Msg(-1, retries=self.hwm - 1, fin=True)
            old = self.bp
            self.log(t, f"producer/leader/{tp} abandoning broker 1")
            self.bp = None
            if old is not None:
                self.bp = old
                self.to_bp(fin, t)
                self.bp = None
                self.log(t + self.jit(), "producer/broker/1 shut down")
            t += self.cfg.retry_backoff + self.jit()
        elif self.hwm > 0:
            if m.retries < self.hwm:  # not the current retry level: keep it for the flush
                if m.fin:
                    self.expect_chaser[m.retries] = False
                else:
                    self.retry_buf.setdefault(m.retries, []).append(m)
                return t + self.jit()
            if m.fin:  # the current level is done: flush the level below
                self.expect_chaser[self.hwm] = False
                return self.flush(t + self.jit())
        if self.bp is None:
            t, err = self.update_leader(t)
            if err is not None:
                self.push(t, "result", (m, err))
                return t + self.cfg.retry_backoff + self.jit()
            self.log(t, f"producer/leader/{tp} selected broker 1")
        self.to_bp(m, t + self.jit())
        return t + self.jit()

    def flush(self, t: float) -> float:
        tp = f"{self.sc.topic}/{self.sc.partition}"
        self.log(t, f"producer/leader/{tp} state change to [flushing-{self.hwm}]")
        while True:
            self.hwm -= 1
            buf = self.retry_buf.pop(self.hwm, [])
            err = None
            if self.bp is None:
                t, err = self.update_leader(t)
                if err is None:
                    self.log(t, f"producer/leader/{tp} selected broker 1")
            for m in buf:
                if err is not None:
                    self.push(t, "result", (m, err))
                else:
                    self.to_bp(m, t + self.jit())
            if self.expect_chaser.get(self.hwm):
                self.log(t, f"producer/leader/{tp} state change to [retrying-{self.hwm}]")
                return t + self.jit()
            if self.hwm == 0:
                self.log(t, f"producer/leader/{tp} state change to [normal]")
                return t + self.jit()

    # ------------------------------------------------------------------ application
    def app_send(self, t: float) -> None:
        self.sent += 1
        m = Msg(self.sent, sent_at=t)
        self.pp_input.append((t + self.jit(0.00002, 0.0001), self.next_seq(), m))
        self.push(t, "pp_wake")

    def app_result(self, t: float, m: Msg, err: str | None) -> None:
        t += self.jit(0.00002, 0.0001)
        sc = self.sc
        self.results.append((m.n, m.sent_at, t, err))
        if err is None:
            self.offset += 1
            self.app(t, f"message {m.n} delivered to partition {sc.partition} at offset {self.offset}",
                     {"msg": "message delivered", "topic": sc.topic, "partition": sc.partition, "offset": self.offset})
            if self.app_errors:
                self.app_ok_after_recovery += 1
        else:
            self.app_errors += 1
            self.app(t, f"send failed: {err}", {"msg": "send failed", "topic": sc.topic, "error": err, "_error": True})
            if sc.recover_after_errors is not None and self.app_errors == sc.recover_after_errors:
                up = t + sc.recover_delay
                if self.max_net_t > up:
                    raise ScenarioError(f"{sc.path}: recovery at {up:.3f} comes after a network wait already simulated to {self.max_net_t:.3f}")
                self.up_at = up
        # the ticker loop: one tick is buffered while SendMessage blocks
        nxt = self.last_tick + 1.0
        if self.finished():
            self.done = True
            return
        if t >= nxt:
            self.last_tick = self.t0 + int(t - self.t0)
            self.push(t + self.jit(0.00001, 0.00005), "app_send")
        else:
            self.last_tick = nxt
            self.push(nxt + self.jit(0.00001, 0.0002), "app_send")
        if not self.app_errors and self.sent == self.sc.healthy_before and self.sc.kind != "none":
            self.down_at = t + 0.4  # the outage starts between two sends

    def finished(self) -> bool:
        if self.sc.kind == "none":
            return self.sent >= self.sc.healthy_before
        return self.app_ok_after_recovery >= self.sc.healthy_after

    # ------------------------------------------------------------------ run
    def run(self) -> list[tuple[float, int, str, str, dict]]:
        t = 0.0
        self.log(t, "Initializing new client")
        t += self.jit(0.0005, 0.002)
        self.log(t, f"client/metadata fetching metadata for all topics from broker {self.sc.addr}")
        t, _ = self.dial(self.seed, t)
        t, _ = self.request(self.seed, t, "metadata")
        self.registered = True
        self.log(t + self.jit(), f"client/brokers registered new broker #1 at {self.sc.addr}")
        t += self.jit(0.0003, 0.0008)
        self.log(t, "Successfully initialized new client")
        t += self.jit(0.0003, 0.0008)
        t, _ = self.dial(self.b1, t)  # dispatch() prefetches the leader
        self.bp = {"closing": None}
        self.t0 = self.last_tick = t + 0.2
        self.app(self.t0 - 0.1, f"producing to {self.sc.topic} every 1s", {"msg": "producer started", "topic": self.sc.topic})
        self.push(self.t0, "app_send")
        while self.events and not self.done:
            ev = heapq.heappop(self.events)
            if ev.kind == "app_send":
                self.app_send(ev.t)
            elif ev.kind == "pp_wake":
                if self.pp_busy_until > ev.t:
                    self.push(self.pp_busy_until, "pp_wake")
                    continue
                free = self.pp_step(ev.t)
                if free is not None:
                    self.pp_busy_until = free
                    self.push(free, "pp_wake")
                elif self.pp_input:
                    self.push(min(x[0] for x in self.pp_input), "pp_wake")
            elif ev.kind == "bp_error":
                m, err, bp = ev.data
                self.bp_error(ev.t, m, err, bp)
                self.push(ev.t, "pp_wake")
            elif ev.kind == "result":
                m, err = ev.data
                self.app_result(ev.t, m, err)
        end = max(x[0] for x in self.lines) + 0.3
        self.app(end, "shutting down", {"msg": "shutting down"})
        self.log(end + self.jit(), "Producer shutting down.")
        self.log(end + 0.001 + self.jit(), "Closing Client")
        return sorted(self.lines)


# ---------------------------------------------------------------------- rendering


def _stamp(sc: Scenario, t: float) -> dt.datetime:
    return sc.start + dt.timedelta(microseconds=round(t * 1_000_000))


def render(sc: Scenario, lines: list[tuple[float, int, str, str, dict]]) -> str:
    out = []
    for t, _, src, text, fields in lines:
        when = _stamp(sc, t)
        if sc.style == "zap":
            ts = when.timestamp()
            if src == "sarama":
                obj = {"level": "info", "ts": float(f"{ts:.6f}"), "logger": "sarama", "msg": text}
            else:
                f = dict(fields)
                is_err = f.pop("_error", False)
                msg = f.pop("msg")
                obj = {"level": "error" if is_err else "info", "ts": float(f"{ts:.6f}"), "logger": sc.app_name, "msg": msg, **f}
                if is_err:
                    obj["stacktrace"] = f"main.(*producer).loop\n\t/src/{sc.app_name}/producer.go:88\nmain.main\n\t/src/{sc.app_name}/main.go:41"
            out.append(json.dumps(obj, separators=(",", ":"), ensure_ascii=False))
            continue
        stamp = when.strftime("%Y/%m/%d %H:%M:%S")
        if sc.style == "micro":
            stamp += f".{when.microsecond:06d}"
        prefix = sc.prefix if src == "sarama" else ""
        out.append(f"{prefix}{stamp} {text}")
    return "\n".join(out) + "\n"


def simulate(sc: Scenario) -> tuple[str, Sim]:
    sim = Sim(sc)
    return render(sc, sim.run()), sim


# ---------------------------------------------------------------------- the sample incidents

SCENARIOS = [
    # black hole, Retry.Max=1, DialTimeout=30s, ReadTimeout=3s: the failing send takes 126.86 s
    Scenario(
        path="sarama-blackhole/orders-producer.log", kind="blackhole", style="lstd", prefix="[sarama] ",
        cfg=Config(dial=30.0, read=3.0, retry_max=1), addr="kafka-0.kafka.prod.svc:9092", ip="10.42.3.17",
        client_ip="10.42.1.5", recover_after_errors=2, seed=11, app_name="orders-api",
    ),
    # black hole, Retry.Max=3, DialTimeout=2s, ReadTimeout=3s: 14.86 s (Retry.Max 3 behaves like 1); the
    # breaker opens on the third failed leader lookup and stays open after the broker is back
    Scenario(
        path="sarama-blackhole/payments-producer.log", kind="blackhole", style="micro", prefix="[Sarama] ",
        cfg=Config(dial=2.0, read=3.0, retry_max=3), addr="10.0.0.7:9092", ip="10.0.0.7", client_ip="10.0.0.5",
        topic="payments", partition=2, recover_after_errors=5, seed=12, app_name="payments-api",
        start=dt.datetime(2026, 11, 30, 9, 12, 0, 650000, tzinfo=UTC),
    ),
    # broker closed, Retry.Max=3: EOF, then refused dials: 0.85 s, run out of brokers; breaker open ~10 s
    Scenario(
        path="sarama-refused/inventory-producer.log", kind="close", style="micro", prefix="[sarama] ",
        cfg=Config(dial=30.0, read=30.0, retry_max=3), addr="kafka-1:9092", ip="172.18.0.3", client_ip="172.18.0.9",
        topic="inventory", partition=1, recover_after_errors=5, seed=21, app_name="inventory-svc",
        start=dt.datetime(2026, 11, 30, 14, 3, 10, 120000, tzinfo=UTC),
    ),
    # broker closed, Retry.Max=1, LstdFlags, [Sarama] prefix
    Scenario(
        path="sarama-refused/shipping-producer.log", kind="close", style="lstd", prefix="[Sarama] ",
        cfg=Config(dial=30.0, read=30.0, retry_max=1), addr="127.0.0.1:9092", ip="127.0.0.1", client_ip="127.0.0.1",
        topic="shipments", partition=0, recover_after_errors=2, seed=22, app_name="shipping",
        start=dt.datetime(2026, 11, 30, 16, 40, 5, 500000, tzinfo=UTC),
    ),
    # broker closed, Retry.Max=3, zap JSON: the same fast failure as the application's structured log shows it
    Scenario(
        path="sarama-refused/billing-api.json", kind="close", style="zap",
        cfg=Config(dial=30.0, read=30.0, retry_max=3), addr="kafka-2.kafka:9092", ip="10.8.0.12", client_ip="10.8.1.3",
        topic="billing", partition=5, recover_after_errors=5, seed=23, app_name="billing-api",
        start=dt.datetime(2026, 11, 30, 18, 20, 4, 250000, tzinfo=UTC),
    ),
    # mute broker (answers metadata, never produce), Retry.Max=3, ReadTimeout=3s: 12.31 s; zap JSON
    Scenario(
        path="sarama-silent/orders-api.json", kind="mute", style="zap",
        cfg=Config(dial=30.0, read=3.0, retry_max=3), addr="b-1.msk.internal:9092", ip="10.1.2.3", client_ip="10.1.0.44",
        topic="orders", partition=4, recover_after_errors=1, seed=31, app_name="orders-api",
        start=dt.datetime(2026, 11, 30, 11, 20, 0, 250000, tzinfo=UTC),
    ),
    # mute broker, Retry.Max=1, ReadTimeout=30s (default): 60.1 s; LstdFlags, [Sarama] prefix
    Scenario(
        path="sarama-silent/ledger-producer.log", kind="mute", style="lstd", prefix="[Sarama] ",
        cfg=Config(dial=30.0, read=30.0, retry_max=1), addr="192.168.10.21:9092", ip="192.168.10.21",
        client_ip="192.168.10.40", topic="ledger", partition=7, recover_after_errors=1, seed=32, app_name="ledger",
        start=dt.datetime(2026, 11, 30, 20, 5, 30, 800000, tzinfo=UTC),
    ),
]


# sarama before 1.22 (v1.19 texts): the same black hole, in Go's log with sarama's prefix and with none
OLD = [
    Scenario(
        path="sarama-old/catalog-producer.log", kind="blackhole", style="lstd", prefix="[sarama] ", version=(1, 19, 0),
        cfg=Config(dial=10.0, read=5.0, retry_max=2), addr="kafka-0:9092", ip="10.4.0.21", client_ip="10.4.0.9",
        topic="catalog", partition=3, recover_after_errors=1, seed=61, app_name="catalog",
        start=dt.datetime(2026, 11, 29, 3, 10, 0, 0, tzinfo=UTC),
    ),
    Scenario(
        path="sarama-old/catalog-producer-noprefix.log", kind="blackhole", style="micro", prefix="", version=(1, 19, 0),
        cfg=Config(dial=10.0, read=5.0, retry_max=2), addr="kafka-0:9092", ip="10.4.0.21", client_ip="10.4.0.9",
        topic="catalog", partition=3, recover_after_errors=1, seed=62, app_name="catalog",
        start=dt.datetime(2026, 11, 29, 4, 10, 0, 0, tzinfo=UTC),
    ),
]


def healthy(style: str = "micro", prefix: str = "[sarama] ", sends: int = 30) -> str:
    """A healthy producer: start-up, one successful send per second, shutdown."""
    sc = Scenario(path="healthy.log", kind="none", style=style, prefix=prefix, cfg=Config(), healthy_before=sends, seed=7)
    return simulate(sc)[0]


# ---------------------------------------------------------------------- checks against the measured table

MEASURED = [  # (kind, Retry.Max, DialTimeout, ReadTimeout, seconds the failing SendMessage took, error)
    ("close", 1, 30.0, 30.0, 0.85, OUT_OF_BROKERS),
    ("close", 3, 30.0, 30.0, 0.85, OUT_OF_BROKERS),
    ("blackhole", 1, 2.0, 3.0, 14.86, OUT_OF_BROKERS),
    ("blackhole", 3, 2.0, 3.0, 14.86, OUT_OF_BROKERS),
    ("blackhole", 1, 2.0, 30.0, 68.86, OUT_OF_BROKERS),
    ("blackhole", 1, 30.0, 3.0, 126.86, OUT_OF_BROKERS),
    ("blackhole", 1, 30.0, 30.0, 180.86, OUT_OF_BROKERS),
    ("mute", 1, 2.0, 3.0, 6.10, "i/o timeout"),
    ("mute", 3, 2.0, 3.0, 12.31, "i/o timeout"),
]


def check() -> list[str]:
    """The first failing send of each measured configuration, simulated; the rows that do not fit."""
    bad = []
    for kind, rmax, dial, read, took, err in MEASURED:
        sc = Scenario(path="check", kind=kind, cfg=Config(dial=dial, read=read, retry_max=rmax), healthy_before=5,
                      recover_after_errors=1, healthy_after=1, seed=99)
        _, sim = simulate(sc)
        first = next(r for r in sim.results if r[3] is not None)
        d = first[2] - first[1]
        if abs(d - took) > 0.011 or err not in (first[3] or ""):
            bad.append(f"{kind} Retry.Max={rmax} dial={dial} read={read}: simulated {d:.3f} s {first[3]!r}, measured {took} s")
    return bad


def main(argv: list[str]) -> int:
    if argv and argv[0] == "--check":
        bad = check()
        print("\n".join(bad) if bad else f"ok: {len(MEASURED)} measured runs reproduced within 11 ms")
        return 1 if bad else 0
    out = Path(argv[0]) if argv else Path(__file__).resolve().parent.parent
    for sc in SCENARIOS + OLD:
        text, _ = simulate(sc)
        p = out / sc.path
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(text.encode("utf-8"))
        print(f"wrote {p} ({text.count(chr(10))} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
