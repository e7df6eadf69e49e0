#!/usr/bin/env python3
"""Deterministic generator of the real-shapes corpus (tests/shapes/real/*.log + manifest.toml).

    python tests/shapes/real/make_corpus.py              # (re)writes the corpus next to this file
    python tests/shapes/real/make_corpus.py --twins DIR  # also writes each file's "clean twin"

Every file copies the *shape* of one real excerpt found in a public issue, pull request, page or
project file (its address is the file's `source` in the manifest): the same wrapper (compose
prefix, kubectl prefix, journald, syslog, CI timestamps, grep output, Markdown quoting, ...), the
same layout (the application's own log4j/logback pattern, a Go logger, ...), the same spacing and
punctuation. The lines are our own: hosts, ids, topics, times and order are invented, and the
message texts are the ones the software prints, taken from the pack samples and
../shared/reference/log-formats.md (the sarama lines come from the timing simulator in
sample_logs/generators/sarama.py, the Kafka client texts from sample_logs/generators/kafka.py).
No third-party log is copied.

Each record is marked by hand (`known=True` where it is built, `_sarama_known` for the sarama
simulator's texts) when its first line carries a message the packs have a pattern for; those lines
are the file's `known_lines`. Each file also names the findings a correct tool should make from it
alone (`findings`): most files are small incidents, some are healthy decoys (`findings = []`).

The clean twin of a file holds the same records in a layout logsleuth has built in (no wrapper):
`--twins DIR` writes them, and `score.py --twins DIR` checks that the twin gets the expected
findings and that every known line of the twin is recognised, which tests the corpus itself (a
wrongly marked line, an incident too small for its detector) rather than logsleuth's reading of
the shape.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import json
import random
import re
import sys
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
UTC = dt.timezone.utc


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"_gen_{name}", ROOT / "sample_logs" / "generators" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


SAR = _load("sarama")
KG = _load("kafka")


# ============================================================================================ records


@dataclass
class Rec:
    t: dt.datetime  # UTC
    level: str  # INFO WARN ERROR DEBUG
    logger: str  # Java class, or "sarama" / the Go application's name
    thread: str
    msg: str
    trace: list[str] = field(default_factory=list)  # continuation lines (stack traces)
    known: bool = False  # the first line carries a message the packs have a pattern for
    src: str = "lib"  # lib | app
    fields: dict = field(default_factory=dict)  # structured fields of Go application lines
    line: int = 0  # source line for layouts that print one (%L)
    method: str = ""  # for layouts that print %M


def ms(x: float) -> dt.timedelta:
    return dt.timedelta(milliseconds=x)


def sec(x: float) -> dt.timedelta:
    return dt.timedelta(seconds=x)


def ordered(recs: list[Rec]) -> list[Rec]:
    return sorted(recs, key=lambda r: r.t)


# ============================================================================================ Java layouts


def _ms3(t: dt.datetime) -> str:
    return f"{t.microsecond // 1000:03d}"


def abbrev(logger: str, target: int = 36) -> str:
    """logback's %logger{n}."""
    return KG.abbreviate(logger, target)


def seg(logger: str, n: int = 1) -> str:
    """log4j's %c{1}."""
    return ".".join(logger.split(".")[-n:])


def dots(logger: str, keep: int) -> str:
    """log4j2 / JBoss %c{2.} style: every segment but the last shortened to `keep` letters."""
    parts = logger.split(".")
    return ".".join([p[:keep] for p in parts[:-1]] + [parts[-1]])


def local(t: dt.datetime, hours: float) -> dt.datetime:
    return t + dt.timedelta(hours=hours)


JAVA: dict[str, Callable[[Rec], str]] = {
    # Pulsar broker <= 2.7 (conf/log4j2.yaml), logback's default
    "pulsar-2x": lambda r: f"{r.t:%H:%M:%S}.{_ms3(r.t)} [{r.thread}] {r.level:<5} {r.logger} - {r.msg}",
    "logback-default": lambda r: f"{r.t:%H:%M:%S}.{_ms3(r.t)} [{r.thread}] {r.level:<5} {abbrev(r.logger)} - {r.msg}",
    # Pulsar broker after #8298: %d{ISO8601_OFFSET_DATE_TIME_HHMM}
    "pulsar-iso": lambda r: f"{r.t:%Y-%m-%dT%H:%M:%S},{_ms3(r.t)}+0000 [{r.thread}] {r.level:<5} {r.logger} - {r.msg}",
    "pulsar-iso+0800": lambda r: f"{local(r.t, 8):%Y-%m-%dT%H:%M:%S},{_ms3(r.t)}+0800 [{r.thread}] {r.level:<5} {r.logger} - {r.msg}",
    # Pulsar 2.2-era image: [%d{ISO8601}{UTC}Z] %p %t %c{1}:%L %m (apache/pulsar#3671)
    "pulsar-22": lambda r: f"[{r.t:%Y-%m-%dT%H:%M:%S}.{_ms3(r.t)}Z] {r.level} {r.thread} {seg(r.logger)}:{r.line} {r.msg}",
    # Pulsar test log4j2: %d{HH:mm:ss.SSS} [%t:%C@%L] %-5level %logger{36} - %msg%n (apache/pulsar#4018)
    "pulsar-test": lambda r: f"{r.t:%H:%M:%S}.{_ms3(r.t)} [{r.thread}:{r.logger}@{r.line}] {r.level:<5} {r.logger} - {r.msg}",
    # ZooKeeper-style, Pulsar 1.x docs: %d{ISO8601} - %-5p - [%t:%C{1}@%L] - %m%n (apache/pulsar#10985)
    "zk-style": lambda r: f"{r.t:%Y-%m-%d %H:%M:%S},{_ms3(r.t)} - {r.level:<5} - [{r.thread}:{seg(r.logger)}@{r.line}] - {r.msg}",
    # Kafka tools/broker: [%d] %p %m (%c)%n
    "kafka-log4j": lambda r: f"[{r.t:%Y-%m-%d %H:%M:%S},{_ms3(r.t)}] {r.level} {r.msg} ({r.logger})",
    # Confluent images: [%d] %p %m (%c:%L)%n (vdesabou/kafka-docker-playground#8292)
    "kafka-log4j-line": lambda r: f"[{r.t:%Y-%m-%d %H:%M:%S},{_ms3(r.t)}] {r.level} {r.msg} ({r.logger}:{r.line})",
    # CFK: [%p] %d [%t] %c %M - app=..., clusterId=..., server=0 - %m%n (vdesabou/kafka-docker-playground#8514)
    "cfk": lambda r: (f"[{r.level}] {r.t:%Y-%m-%d %H:%M:%S},{_ms3(r.t)} [{r.thread}] {r.logger} {r.method} - "
                      f"app=connect, clusterId=confluent, server=0 - {r.msg}"),
    # Spring Boot 2 file layout
    "sb2": lambda r: f"{r.t:%Y-%m-%d %H:%M:%S}.{_ms3(r.t)} {r.level:>5} 7311 --- [{r.thread[-15:]:>15}] {abbrev(r.logger, 39)[-40:]:<40} : {r.msg}",
    # the same as a Markdown renderer shows it: runs of spaces collapsed (spring-cloud-stream-binder-kafka#671)
    "sb2-collapsed": lambda r: re.sub(r" +", " ", f"{r.t:%Y-%m-%d %H:%M:%S}.{_ms3(r.t)} {r.level:>5} 18811 --- [{r.thread[-15:]:>15}] {r.logger} : {r.msg}"),
    # Spring Boot 3 with the application name (3.2+)
    "sb3": lambda r: f"{r.t:%Y-%m-%dT%H:%M:%S}.{_ms3(r.t)}Z {r.level:>5} 1 --- [ledger-svc] [{r.thread[-15:]:>15}] {abbrev(r.logger, 39)[-40:]:<40} : {r.msg}",
    # Spring Boot 3.2+ with an empty correlation id block (generator-jhipster#29641)
    "sb3-corr": lambda r: (f"{local(r.t, 1):%Y-%m-%dT%H:%M:%S}.{_ms3(r.t)}+01:00 {r.level:>5} 5521 --- [deeds] [{r.thread[-15:]:>15}] "
                           f"[{' ' * 49}] {abbrev(r.logger, 39)[-40:]:<40} : {r.msg}"),
    # logback %d{ISO8601} [%thread] %-5level %logger{36} - %msg%n (thingsboard#1565)
    "iso-thread-logger36": lambda r: f"{r.t:%Y-%m-%d %H:%M:%S},{_ms3(r.t)} [{r.thread}] {r.level:<5} {abbrev(r.logger)} - {r.msg}",
    # %d{yyyy-MM-dd HH:mm:ss.SSS} [%t] [%p] %c %m%n (apache/pulsar#21144)
    "bracket-level-full": lambda r: f"{r.t:%Y-%m-%d %H:%M:%S}.{_ms3(r.t)} [{r.thread}] [{r.level}] {r.logger} {r.msg}",
    # %d [%5p ] %c{1} - %m%n (apache/pulsar#13363)
    "bracket-level-c1": lambda r: f"{r.t:%Y-%m-%d %H:%M:%S},{_ms3(r.t)} [{r.level:>5} ] {seg(r.logger)} - {r.msg}",
    # %d{ABSOLUTE} %5p |%X{test-name}| - [%c{1}] %t - %m%n (hazelcast#19773)
    "abs-pipe": lambda r: f"{r.t:%H:%M:%S},{_ms3(r.t)} {r.level:>5} || - [{seg(r.logger)}] {r.thread} - {r.msg}",
    # %d %-5level [%t] %c{1.}#%M(L:%L) -> %m%n (logging-log4j2#1666)
    "method-line-arrow": lambda r: (f"{r.t:%Y-%m-%d %H:%M:%S}.{_ms3(r.t)} {r.level:<5} [{r.thread}] "
                                    f"{dots(r.logger, 1)}#{r.method}(L:{r.line}) -> {r.msg}"),
    # WildFly / JBoss: %d{HH:mm:ss,SSS} %-5p [%c] (%t) %s%e%n (payara Cloud-Connectors#21)
    "wildfly": lambda r: f"{r.t:%H:%M:%S},{_ms3(r.t)} {r.level:<5} [{r.logger}] ({r.thread}) {r.msg}",
    # Quarkus console %d{HH:mm:ss} %p [%c{2.}] (%t) %s%e%n (yurake/k8s-3tier-webapp#726)
    "quarkus": lambda r: f"{r.t:%H:%M:%S} {r.level} [{dots(r.logger, 2)}] ({r.thread}) {r.msg}",
    # slf4j-simple default: [%t] LEVEL logger - msg (no time) (redpanda#21567, apache/pulsar#15559)
    "slf4j-simple": lambda r: f"[{r.thread}] {r.level} {r.logger} - {r.msg}",
    # TIBCO BW: %d{yyyy-MM-dd'T'HH:mm:ss.SSS} %-5p [%t] %c{1.} - %m%n (bitnami/charts#8525)
    "iso-t-c1dot": lambda r: f"{r.t:%Y-%m-%dT%H:%M:%S}.{_ms3(r.t)} {r.level:<5} [{r.thread}] {dots(r.logger, 1)} - {r.msg}",
    # %d{HH:mm:ss.SSS} [%thread] %-5level %logger{36} - %msg%n with an akka logger (scala-kafka-client#108)
    "akka": lambda r: f"{r.t:%H:%M:%S}.{_ms3(r.t)} [{r.thread}] {r.level:<5} {abbrev(r.logger, 36)} - {r.msg}",
    # maxwell: %d{HH:mm:ss,SSS} %-5p %c{1} - %m%n (zendesk/maxwell#495)
    "abs-c1": lambda r: f"{r.t:%H:%M:%S},{_ms3(r.t)} {r.level:<5} {seg(r.logger)} - {r.msg}",
}

TRACE = {
    "tab": lambda line: line,
    "spaces8": lambda line: line.replace("\t", "        "),
    "none": lambda line: line.replace("\t", ""),
}


# ============================================================================================ Go layouts


def _esc(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)[1:-1]


def _logfmt(v) -> str:
    s = str(v)
    return s if re.fullmatch(r"[\w./:@-]+", s) else '"' + _esc(s) + '"'


def go_golog(prefix: str = "[sarama] ", micro: bool = False, app_prefix: str = ""):
    def f(r: Rec) -> str:
        stamp = f"{r.t:%Y/%m/%d %H:%M:%S}" + (f".{r.t.microsecond:06d}" if micro else "")
        return f"{prefix if r.src == 'lib' else app_prefix}{stamp} {r.msg}"
    return f


def go_logrus(r: Rec) -> str:
    lvl = {"INFO": "info", "WARN": "warning", "ERROR": "error", "DEBUG": "debug"}[r.level]
    stamp = f"{r.t:%Y-%m-%d %H:%M:%S}.{_ms3(r.t)}"
    if r.src == "lib":
        return f'time="{stamp}" level={lvl} msg="{_esc(r.msg)}\\n" client=Sarama'
    extra = "".join(f" {k}={_logfmt(v)}" for k, v in r.fields.items() if k not in ("msg", "_error"))
    return f'time="{stamp}" level={lvl} msg={_logfmt(r.fields.get("msg", r.msg))}{extra}'


def go_zap_console(r: Rec) -> str:
    stamp = f"{r.t:%Y-%m-%dT%H:%M:%S}.{_ms3(r.t)}Z"
    if r.src == "lib":
        return f"{stamp}\tINFO\tsarama\tkafka/logger.go:27\t{r.msg}"
    extra = {k: v for k, v in r.fields.items() if k not in ("msg", "_error")}
    tail = "\t" + json.dumps(extra, separators=(", ", ": ")) if extra else ""
    return f"{stamp}\t{r.level}\tpublisher\tpublisher/loop.go:64\t{r.fields.get('msg', r.msg)}{tail}"


def go_zap_json_epoch(app: str):
    def f(r: Rec) -> str:
        obj = {"level": r.level.lower().replace("warn", "warn"), "ts": float(f"{r.t.timestamp():.7f}"),
               "caller": f"{app}/writer.go:59" if r.level == "ERROR" else f"{app}/writer.go:44",
               "msg": r.fields.get("msg", r.msg)}
        obj.update({k: v for k, v in r.fields.items() if k not in ("msg", "_error")})
        if r.level == "ERROR":
            obj["stacktrace"] = f"github.com/example/{app}/plugin/storage/kafka.NewSpanWriter.func2\n\t/go/src/github.com/example/{app}/plugin/storage/kafka/writer.go:59"
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
    return f


def go_zerolog_json(r: Rec) -> str:
    stamp = f"{r.t:%Y-%m-%dT%H:%M:%S}-06:00"
    if r.src == "lib":
        obj = {"level": "debug", "time": stamp, "caller": "/build/vendor/github.com/IBM/sarama/sarama.go:129", "message": r.msg + "\n"}
    else:
        obj = {"level": r.level.lower(), "time": stamp, "caller": "/build/internal/infrastructure/kafka/producer.go:71"}
        obj.update({k: v for k, v in r.fields.items() if k not in ("msg", "_error")})
        obj["message"] = r.fields.get("msg", r.msg)
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def go_zerolog_console(r: Rec) -> str:
    lvl = {"INFO": "INF", "WARN": "WRN", "ERROR": "ERR", "DEBUG": "DBG"}[r.level]
    stamp = f"{r.t:%Y-%m-%dT%H:%M:%S}Z"
    if r.src == "lib":
        return f"{stamp} DBG {r.msg} component=sarama"
    extra = "".join(f" {k}={_logfmt(v)}" for k, v in r.fields.items() if k not in ("msg", "_error"))
    return f"{stamp} {lvl} {r.fields.get('msg', r.msg)}{extra}"


def go_cockroach(r: Rec) -> str:
    # cockroach's log format as in cockroachdb/cockroach#35661: I190312 19:08:42.416833 1948 file:line  [tags] msg
    lvl = r.level[0]
    where = "vendor/github.com/Shopify/sarama/async_producer.go:680" if r.src == "lib" else "ccl/changefeedccl/sink.go:412"
    tags = "[kafka-producer] " if r.src == "lib" else "[n1,job=4] "
    return f"{lvl}{r.t:%y%m%d %H:%M:%S}.{r.t.microsecond:06d} {r.line or 1948} {where}  {tags}{r.msg}"


def go_klog(r: Rec) -> str:
    lvl = r.level[0]
    where = "sarama.go:41" if r.src == "lib" else "publisher.go:88"
    return f"{lvl}{r.t:%m%d %H:%M:%S}.{r.t.microsecond:06d}       1 {where}] {r.msg}"


def go_logging(r: Rec) -> str:
    # op/go-logging's default format as in grafana/carbon-relay-ng#187: 11:37:06.770479 ▶ ERRO  msg
    lvl = {"INFO": "INFO", "WARN": "WARN", "ERROR": "ERRO", "DEBUG": "DEBU", "NOTICE": "NOTI"}[r.level]
    return f"{r.t:%H:%M:%S}.{r.t.microsecond:06d} ▶ {lvl}  {r.msg}"


# ============================================================================================ wrappers


class Wrap:
    """Turns the physical lines of a file into what the shape shows. `line(text, rec, first)` for
    each line; `head` / `tail` lines around the whole excerpt."""

    head: list[str] = []
    tail: list[str] = []

    def line(self, text: str, rec: Rec, first: bool) -> str:
        return text


class Prefix(Wrap):
    def __init__(self, fn: Callable[[Rec, bool], str], head: list[str] | None = None, tail: list[str] | None = None):
        self.fn, self.head, self.tail = fn, head or [], tail or []

    def line(self, text: str, rec: Rec, first: bool) -> str:
        return self.fn(rec, first) + text


class Fence(Wrap):
    def __init__(self, lang: str = "", details: bool = False):
        self.head = (["<details><summary>logs: CLICK ME</summary>", "<p>", ""] if details else []) + ["```" + lang]
        self.tail = ["```"] + (["", "</p>", "</details>"] if details else [])


class Quote(Wrap):
    def line(self, text: str, rec: Rec, first: bool) -> str:
        return "> " + text


class Indent(Wrap):
    def __init__(self, n: int = 4):
        self.n = n

    def line(self, text: str, rec: Rec, first: bool) -> str:
        return " " * self.n + text


class JsonLine(Wrap):
    def __init__(self, fn: Callable[[str, Rec], dict]):
        self.fn = fn

    def line(self, text: str, rec: Rec, first: bool) -> str:
        return json.dumps(self.fn(text, rec), separators=(",", ":"), ensure_ascii=False)


def _later(r: Rec) -> tuple[dt.datetime, int]:
    """When a runtime (docker, the kubelet, a CI runner) stamped the line: a little after the
    application did, by a stable pseudo-random 50-950 microseconds; and a nanosecond remainder."""
    h = zlib.crc32(f"{r.t.isoformat()}{r.msg}".encode())
    return r.t + dt.timedelta(microseconds=50 + h % 900), (h >> 10) % 1000


def rfc3339nano(r: Rec) -> str:
    t, ns = _later(r)
    return f"{t:%Y-%m-%dT%H:%M:%S}.{t.microsecond:06d}{ns:03d}Z"


def gha(r: Rec) -> str:
    t, ns = _later(r)
    return f"{t:%Y-%m-%dT%H:%M:%S}.{t.microsecond:06d}{ns % 10}Z"


MONTHS = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split()


def syslog_stamp(t: dt.datetime) -> str:
    return f"{MONTHS[t.month - 1]} {t.day:>2} {t:%H:%M:%S}"


# ============================================================================================ files


@dataclass
class Corpus:
    name: str
    source: str
    shape: str
    system: str
    findings: list[str]
    recs: list[Rec]
    layout: Callable[[Rec], str]
    twin_layout: Callable[[Rec], str]
    wraps: list[Wrap] = field(default_factory=list)
    trace: str = "tab"
    note: str = ""
    post: Callable[[list[tuple[str, bool]]], list[tuple[str, bool]]] | None = None  # line filter (grep)
    extra_head: list[str] = field(default_factory=list)  # lines before the wrappers' heads
    twin_name: str = ""

    def render(self, twin: bool = False) -> tuple[str, list[int]]:
        """The text and the (1-based) numbers of the known lines."""
        layout = self.twin_layout if twin else self.layout
        body: list[tuple[str, bool]] = []  # (line, known first line)
        for r in ordered(self.recs):
            first = layout(r)
            body.append((first, r.known, r, True))
            for tl in r.trace:
                body.append((TRACE["tab" if twin else self.trace](tl), False, r, False))
        if not twin:
            for w in self.wraps:
                body = [(w.line(text, r, f), k, r, f) for text, k, r, f in body]
            lines = [(t, k) for t, k, _, _ in body]
            if self.post:
                lines = self.post(lines)
            heads: list[str] = list(self.extra_head)
            tails: list[str] = []
            for w in reversed(self.wraps):
                heads += w.head
                tails = w.tail + tails
            lines = [(h, False) for h in heads] + lines + [(t, False) for t in tails]
        else:
            lines = [(t, k) for t, k, _, _ in body]
        known = [i + 1 for i, (_, k) in enumerate(lines) if k]
        return "\n".join(t for t, _ in lines) + "\n", known


# ============================================================================================ texts

SC = "org.apache.pulsar.broker.service.ServerCnx"
PROD = "org.apache.pulsar.broker.service.Producer"
BS = "org.apache.pulsar.broker.service.BrokerService"
OB = "org.apache.pulsar.broker.namespace.OwnedBundle"
PT = "org.apache.pulsar.broker.service.persistent.PersistentTopic"
LM = "org.apache.pulsar.broker.loadbalance.impl.ModularLoadManagerImpl"
OS = "org.apache.pulsar.broker.loadbalance.impl.OverloadShedder"
TS = "org.apache.pulsar.broker.loadbalance.impl.ThresholdShedder"
US = "org.apache.pulsar.broker.loadbalance.impl.UniformLoadShedder"
ML = "org.apache.bookkeeper.mledger.impl.ManagedLedgerImpl"
MC = "org.apache.bookkeeper.mledger.impl.ManagedCursorImpl"
PI = "org.apache.pulsar.client.impl.ProducerImpl"
CC = "org.apache.pulsar.client.impl.ClientCnx"
CH = "org.apache.pulsar.client.impl.ConnectionHandler"
CP = "org.apache.pulsar.client.impl.ConnectionPool"
PSR = "org.apache.pulsar.client.impl.ProducerStatsRecorderImpl"

SENDER = KG.SENDER
NETWORK = KG.NETWORK
METADATA = KG.METADATA
BATCH = KG.BATCH
KPROD = KG.PRODUCER
ELC = "org.apache.kafka.clients.producer.internals.ErrorLoggingCallback"
APPINFO = "org.apache.kafka.common.utils.AppInfoParser"

LINES = {SC: 1402, PROD: 512, BS: 1841, OB: 132, PT: 1088, LM: 689, OS: 112, ML: 1611, MC: 2871,
         PI: 1563, CC: 731, CH: 128, NETWORK: 1024, SENDER: 641, METADATA: 402, BATCH: 214, KPROD: 1004}
METHODS = {NETWORK: "processDisconnection", SENDER: "completeBatch", METADATA: "update", KPROD: "doSend", BATCH: "completeFutureAndFireCallbacks"}


def R(t, level, logger, thread, msg, known=False, trace=None, **kw) -> Rec:
    return Rec(t, level, logger, thread, msg, list(trace or []), known,
               line=kw.pop("line", LINES.get(logger, 77)), method=kw.pop("method", METHODS.get(logger, "run")), **kw)


def producer_str(topic: str, client: str, name: str, pid: int) -> str:
    return f"Producer{{topic=PersistentTopic{{topic={topic}}}, client={client}, producerName={name}, producerId={pid}}}"


def producer_str_3x(topic: str, chan: str, broker_ep: str, client_ep: str, name: str, pid: int) -> str:
    # 3.x/4.x: the client part is ServerCnx.toString() (apache/pulsar#23920)
    return (f"Producer{{topic=PersistentTopic{{topic={topic}}}, client=[id: {chan}, L:{broker_ep} - R:{client_ep}] "
            f"[SR:{client_ep.lstrip('/').rsplit(':', 1)[0]}, state:Connected], producerName={name}, producerId={pid}}}")


# ============================================================================================ Pulsar incidents


def _backoff(t: dt.datetime, until: dt.datetime, rng: random.Random, start: float = 0.1, cap: float = 60.0):
    """The Java client's reconnect back-off (doubling from 100 ms to 60 s, +-10 %)."""
    d = start
    while t < until:
        yield t
        t += sec(d * rng.uniform(0.95, 1.1))
        d = min(cap, d * 2)


def broker_noise(rng: random.Random, t0: dt.datetime, t1: dt.datetime, ns: str, topics: list[str], every: float) -> list[Rec]:
    out, t = [], t0
    while t < t1:
        t += sec(rng.expovariate(1 / every))
        name = f"{ns}/persistent/{rng.choice(topics).rsplit('/', 1)[1]}"
        if rng.random() < 0.6:
            out.append(R(t, "INFO", ML, f"bookkeeper-ml-workers-OrderedExecutor-{rng.randint(0, 7)}-0",
                         f"[{name}] Ledger {rng.randint(100000, 999999)} rolled over; entries written since the last roll-over: {rng.randint(1000, 50000)}"))
        else:
            out.append(R(t, "INFO", MC, f"bookkeeper-ml-workers-OrderedExecutor-{rng.randint(0, 7)}-0",
                         f"[{name}] Updated cursor sub-{rng.randint(1, 4)} with ledger id {rng.randint(100000, 999999)} md-position={rng.randint(100000, 999999)}:{rng.randint(0, 9999)}"))
    return out


@dataclass
class PP:
    """One producer as the broker sees it."""
    topic: str
    conn: str  # /ip:port
    pid: int
    name: str


def pulsar_broker_stuck(rng: random.Random, t0: dt.datetime, *, ns: str, bundle: str, broker: str, stuck: list[PP],
                        ok: list[PP], minutes: float, leader: bool = True, pre24: bool = False, noise: float = 25.0,
                        before: float = 6.0) -> list[Rec]:
    """Pulsar 2.4-2.5.1: an unload of `bundle` from `broker` (host:8080); the creations of `stuck`
    producers hit the ownership check and dangle; once the bundle is back every retry is rejected
    as already present for `minutes`. `ok` producers recover."""
    recs: list[Rec] = []
    topics = sorted({p.topic for p in stuck + ok})
    start = t0 - dt.timedelta(minutes=before)
    t = start + sec(2)
    for p in stuck + ok:  # the producers as they were created before
        t += ms(rng.randint(5, 40))
        recs.append(R(t, "INFO", SC, f"ForkJoinPool.commonPool-worker-{rng.randint(1, 30)}",
                      f"[{p.conn}][{p.topic}] Creating producer. producerId={p.pid}", True))
        t += ms(rng.randint(3, 12))
        recs.append(R(t, "INFO", SC, f"ForkJoinPool.commonPool-worker-{rng.randint(1, 30)}",
                      f"[{p.conn}] Created new producer: {producer_str(p.topic, p.conn, p.name, p.pid)}", True))
    lm = "pulsar-load-manager-3-1"
    if leader:
        usage = rng.uniform(0.88, 0.97)
        recs.append(R(t0 - ms(60), "INFO", OS, lm,
                      f"Attempting to shed load on {broker}, which has max resource usage above threshold {usage:.2f}% > 0.85% -- Offloading at least {rng.uniform(8, 30):.1f} MByte/s of traffic", True))
        recs.append(R(t0 - ms(20), "INFO", LM, lm, f"[Overload shedder] Unloading bundle: {ns}/{bundle} from broker {broker}", True))
    web = f"pulsar-web-{rng.randint(30, 45)}-{rng.randint(1, 8)}"
    recs.append(R(t0, "INFO", OB, web, f"Disabling ownership: {ns}/{bundle}", True))
    t = t0 + ms(3)
    for topic in topics:
        recs.append(R(t, "INFO", BS, web, f"[{topic}] Unloading topic", True))
        for p in stuck + ok:
            if p.topic == topic:
                t += ms(1)
                recs.append(R(t, "INFO", PROD, web, f"Disconnecting producer: {producer_str(p.topic, p.conn, p.name, p.pid)}", True))
        t += ms(rng.randint(20, 60))
        recs.append(R(t, "INFO", PT, f"bookkeeper-ml-workers-OrderedExecutor-{rng.randint(0, 7)}-0", f"[{topic}] Topic closed", True))
    tc = t0 + ms(rng.randint(60, 120))
    for p in stuck:  # the reconnect races the unload: the ownership check throws, the future dangles
        tc += ms(rng.randint(2, 9))
        recs.append(R(tc, "INFO", SC, f"ForkJoinPool.commonPool-worker-{rng.randint(1, 30)}",
                      f"[{p.conn}][{p.topic}] Creating producer. producerId={p.pid}", True))
        recs.append(R(tc + ms(rng.randint(2, 6)), "WARN", BS, f"pulsar-io-22-{rng.randint(1, 8)}",
                      f"Namespace bundle for topic ({p.topic}) not served by this instance. Please redo the lookup. Request is denied: namespace={ns}", True))
    recs.append(R(t + ms(rng.randint(200, 400)), "INFO", OB, web,
                  f"Unloading {ns}/{bundle} namespace-bundle with {len(topics)} topics completed in {rng.randint(300, 700)}.0 ms", True))
    back = t0 + sec(rng.uniform(50, 90))  # the bundle comes back to this broker
    for p in ok:
        b = back + ms(rng.randint(10, 900))
        recs.append(R(b, "INFO", SC, f"ForkJoinPool.commonPool-worker-{rng.randint(1, 30)}",
                      f"[{p.conn}][{p.topic}] Creating producer. producerId={p.pid}", True))
        recs.append(R(b + ms(rng.randint(3, 12)), "INFO", SC, f"ForkJoinPool.commonPool-worker-{rng.randint(1, 30)}",
                      f"[{p.conn}] Created new producer: {producer_str(p.topic, p.conn, p.name, p.pid)}", True))
    end = back + dt.timedelta(minutes=minutes)
    for p in stuck:
        for tr in _backoff(back + ms(rng.randint(10, 900)), end, rng, start=0.2):
            if pre24:
                msg = f"[{p.conn}][{p.topic}] Producer is already present on the connection"
            else:
                msg = f"[{p.conn}][{p.pid}] Producer with id {p.topic} is already present on the connection"
            recs.append(R(tr, "WARN", SC, f"pulsar-io-22-{rng.randint(1, 8)}", msg, True))
    recs += broker_noise(rng, start, end, ns, topics, noise)
    return recs


def pulsar_client_stuck(rng: random.Random, t0: dt.datetime, *, stuck: list[tuple[str, str]], ok: list[tuple[str, str]],
                        local_ep: str, broker: str, ns: str, minutes: float, with_ch: bool = True) -> list[Rec]:
    """The Java client's view: `stuck` (topic, name) are rejected as already present for `minutes`."""
    recs: list[Rec] = []
    io = "pulsar-client-io-1-1"
    start = t0 - dt.timedelta(minutes=4)
    chans = {}
    for i, (topic, name) in enumerate(stuck + ok):
        chans[topic] = f"0x{rng.getrandbits(32):08x}"
        recs.append(R(start + ms(100 + i * 37), "INFO", PI, io,
                      f"[{topic}] [{name}] Created producer on cnx [id: {chans[topic]}, L:{local_ep} - R:{broker}]", True))
    t = t0
    for i, (topic, name) in enumerate(stuck + ok):
        t += ms(rng.randint(1, 30))
        recs.append(R(t, "INFO", CC, io, f"[{broker}] Broker notification of Closed producer: {i}", True))
        recs.append(R(t + ms(2), "INFO", CH, io,
                      f"[{topic}] [{name}] Closed connection [id: {chans[topic]}, L:{local_ep} ! R:{broker}] -- Will try again in 0.1 s", True))
    for topic, name in stuck:
        tf = t0 + ms(rng.randint(150, 260))
        nsmsg = f"Namespace bundle for topic ({topic}) not served by this instance. Please redo the lookup. Request is denied: namespace={ns}"
        recs.append(R(tf, "ERROR", PI, io, f"[{topic}] [{name}] Failed to create producer: {nsmsg}", True))
        if with_ch:
            recs.append(R(tf + ms(1), "WARN", CH, io, f"[{topic}] [{name}] Could not get connection to broker: {nsmsg} -- Will try again in 0.2 s", True))
        d = 0.2
        for tr in _backoff(tf + sec(1.2), tf + dt.timedelta(minutes=minutes), rng, start=0.4):
            recs.append(R(tr, "ERROR", PI, io, f"[{topic}] [{name}] Failed to create producer: Producer is already present on the connection", True))
            d = min(60.0, d * 2)
            if with_ch:
                recs.append(R(tr + ms(1), "WARN", CH, io,
                              f"[{topic}] [{name}] Could not get connection to broker: Producer is already present on the connection -- Will try again in {d:.1f} s", True))
    for topic, name in ok:
        tr = t0 + ms(rng.randint(900, 1600))
        recs.append(R(tr, "INFO", CH, "pulsar-timer-4-1", f"[{topic}] [{name}] Reconnecting after timeout", True))
        chans[topic] = f"0x{rng.getrandbits(32):08x}"
        recs.append(R(tr + ms(rng.randint(5, 30)), "INFO", PI, io,
                      f"[{topic}] [{name}] Created producer on cnx [id: {chans[topic]}, L:{local_ep} - R:{broker}]", True))
    # the application's own traffic
    t = start
    n = rng.randint(4000, 9000)
    while t < t0 + dt.timedelta(minutes=minutes):
        t += sec(rng.uniform(4, 12))
        n += 1
        recs.append(R(t, "INFO", "com.example.ledger.EntryPublisher", "http-nio-8080-exec-3", f"published entry {n} in {rng.randint(2, 30)} ms"))
    return recs


def pulsar_client_healthy(rng: random.Random, t0: dt.datetime, *, producers: list[tuple[str, str]], local_ep: str,
                          brokers: list[str], cycles: int = 3) -> list[Rec]:
    """A client whose brokers restart: connections close, producers reconnect and are created again."""
    recs: list[Rec] = []
    io, timer = "pulsar-client-io-1-1", "pulsar-timer-5-1"
    t = t0
    for c in range(cycles):
        broker = brokers[c % len(brokers)]
        chan = f"0x{rng.getrandbits(32):08x}"
        recs.append(R(t, "INFO", CP, io, f"[[id: {chan}, L:{local_ep} - R:{broker}]] Connected to server"))
        for topic, name in producers:
            t += ms(rng.randint(3, 20))
            recs.append(R(t, "INFO", PI, io, f"[{topic}] [{name}] Creating producer on cnx [id: {chan}, L:{local_ep} - R:{broker}]"))
            recs.append(R(t + ms(rng.randint(3, 9)), "INFO", PI, io, f"[{topic}] [{name}] Created producer on cnx [id: {chan}, L:{local_ep} - R:{broker}]", True))
        t += sec(rng.uniform(60, 200))
        recs.append(R(t, "INFO", CC, io, f"[id: {chan}, L:{local_ep} ! R:{broker}] Disconnected", True))
        for topic, name in producers:
            t += ms(rng.randint(1, 4))
            recs.append(R(t, "INFO", CH, io, f"[{topic}] [{name}] Closed connection [id: {chan}, L:{local_ep} ! R:{broker}] -- Will try again in 0.1 s", True))
        t += ms(rng.randint(100, 140))
        for topic, name in producers:
            recs.append(R(t, "INFO", CH, timer, f"[{topic}] [{name}] Reconnecting after connection was closed", True))
            t += ms(rng.randint(1, 3))
        local_ep = local_ep.rsplit(":", 1)[0] + f":{rng.randint(50000, 60000)}"
    return recs


def pulsar_shedding_3x(rng: random.Random, t0: dt.datetime, *, strategy: str, ns: str, bundles: list[str], target: str,
                       every_min: float, rounds: int, other: str) -> list[Rec]:
    """A 3.x leader broker shedding load from `target` with ThresholdShedder or UniformLoadShedder."""
    recs: list[Rec] = []
    lm = "pulsar-load-manager-1-1"
    t = t0
    for i in range(rounds):
        b = bundles[i % len(bundles)]
        if strategy == "ThresholdShedder":
            use, avg = rng.uniform(78, 93), rng.uniform(45, 60)
            off = rng.uniform(8, 40)
            recs.append(R(t, "INFO", TS, lm,
                          f"Attempting to shed load on {target}, which has max resource usage above avgUsage  and threshold {use:.1f}% > {avg:.1f}% + 10.0% -- Offloading at least {off:.1f} MByte/s of traffic, left throughput {rng.uniform(90, 200):.1f} MByte/s", True))
        else:
            rate = rng.uniform(900, 4000)
            recs.append(R(t, "INFO", US, lm, f"Found bundle to unload from {target} with msgRate {rate}", True))
        recs.append(R(t + ms(rng.randint(5, 30)), "INFO", LM, lm, f"[{strategy}] Unloading bundle: {ns}/{b} from broker {target}", True))
        t += dt.timedelta(minutes=every_min) + sec(rng.uniform(-20, 20))
    # ordinary chatter of the same broker in between
    t = t0 - dt.timedelta(minutes=2)
    while t < t0 + dt.timedelta(minutes=every_min * rounds):
        t += sec(rng.uniform(20, 70))
        recs.append(R(t, "INFO", "org.apache.pulsar.broker.loadbalance.impl.LoadManagerShared", lm,
                      f"[{other}] Broker {other} load report: cpu {rng.uniform(20, 50):.1f}%"))
    return recs


def pulsar_standalone_4x(rng: random.Random, t0: dt.datetime, *, clients: list[tuple[str, str, str, int]], broker_ep: str) -> list[Rec]:
    """A healthy 3.x/4.x standalone: connections open, producers are created and closed (3.x texts)."""
    recs: list[Rec] = []
    t = t0
    for client_ep, topic, name, pid in clients:
        io = f"pulsar-io-3-{rng.randint(1, 12)}"
        chan = f"0x{rng.getrandbits(32):08x}"
        recs.append(R(t, "INFO", SC, io, f"New connection from {client_ep}", True))
        t += ms(rng.randint(20, 90))
        recs.append(R(t, "INFO", SC, f"broker-topic-workers-OrderedExecutor-{rng.randint(0, 7)}-0",
                      f"[{client_ep}] Created new producer: {producer_str_3x(topic, chan, broker_ep, client_ep, name, pid)}, role: null", True))
        t += sec(rng.uniform(10, 40))
        recs.append(R(t, "INFO", SC, io, f"[PersistentTopic{{topic={topic}}}][{name}] Closing producer on cnx {client_ep}. producerId={pid}", True))
        recs.append(R(t + ms(2), "INFO", SC, io, f"[PersistentTopic{{topic={topic}}}][{name}] Closed producer on cnx {client_ep}. producerId={pid}", True))
        recs.append(R(t + ms(9), "INFO", SC, io, f"Closed connection from {client_ep}", True))
        t += sec(rng.uniform(2, 9))
    return recs


# ============================================================================================ Kafka incidents


class KLog:
    """Collects what sample_logs/generators/kafka.py's building blocks add, as records."""

    def __init__(self, known: bool = True, prefix_strip: bool = False):
        self.recs: list[Rec] = []
        self.known = known

    def add(self, t, level, logger, msg, thread="main", trace=None):
        self.recs.append(R(t, level, logger, thread, msg, self.known, trace))


def kafka_outage(rng: random.Random, *, version: str, client: str, node: int, address: str, start: dt.datetime,
                 minutes: float, tps: list[str], expire: list[tuple[str, int]], app_logger: str, what: str,
                 style: str = "callback", buffer: int = 0, max_block: int = 60000, threads: list[str] | None = None,
                 legacy_conn: bool = False) -> list[Rec]:
    """A node that stays away for `minutes`: retries, failed reconnects, metadata errors; the batches
    of `expire` (tp, records) expire after delivery.timeout.ms (120 s); `buffer` send()s fail for
    buffer memory after the accumulator fills."""
    log = KLog()
    thread = KG.net_thread(client)
    end = start + dt.timedelta(minutes=minutes)
    topics = tuple(sorted({tp.rsplit("-", 1)[0] for tp in tps}))
    KG.outage(log, rng, version=version, client=client, node=node, address=address, start=start, end=end,
              first_retries=tps, corr=rng.randint(4000, 90000), thread=thread, metadata_every_s=15.0 if topics else 0.0,
              metadata_topics=topics)
    if legacy_conn:  # <= 2.0: no address in the text
        for r in log.recs:
            r.msg = re.sub(r"Connection to node (-?\d+) \([^)]*\) could not be established", r"Connection to node \1 could not be established", r.msg)
    recs = log.recs
    app = KLog()
    threads = threads or [thread]
    key = rng.randint(10000, 90000)
    for i, (tp, n) in enumerate(expire):
        KG.expire(app, rng, created=start + sec(2 + 7 * i), records=n, tp=tp, elapsed=120000 + rng.randint(3, 30),
                  style=style, logger=app_logger, threads=threads, key0=key, what=what)
        key += n
    for i in range(buffer):
        tb = start + sec(70 + i * rng.uniform(3, 8))
        app.add(tb, "ERROR", app_logger, f"Failed to publish {what} {key + i}", "http-nio-8080-exec-%d" % rng.randint(1, 9),
                [KG.buffer_exhausted(version, max_block, 33554432),
                 "\tat org.apache.kafka.clients.producer.internals.BufferPool.allocate(BufferPool.java:168)",
                 "\tat org.apache.kafka.clients.producer.internals.RecordAccumulator.append(RecordAccumulator.java:246)",
                 "\tat org.apache.kafka.clients.producer.KafkaProducer.doSend(KafkaProducer.java:1052)"])
    return recs + app.recs


def as_kafka_0_10(recs: list[Rec], bootstrap: str) -> list[Rec]:
    """kafka-clients 0.10.x: no '[Producer clientId=...] ' prefix (1.0+), and no 'Connection to node N
    could not be established' (0.11+): a producer that never got metadata warns 'Bootstrap broker
    host:port disconnected' instead (NetworkClient at 0.10.0.0-0.10.2.0), nothing for known nodes."""
    out = []
    for r in recs:
        r.msg = re.sub(r"^\[Producer clientId=[^\]]*\] ", "", r.msg)
        m = re.match(r"Connection to node (-?\d+) .*could not be established", r.msg)
        if m:
            if int(m.group(1)) >= 0:
                continue
            r.msg = f"Bootstrap broker {bootstrap} disconnected"
        out.append(r)
    return out


def kafka_app_noise(rng: random.Random, t0: dt.datetime, t1: dt.datetime, logger: str, thread: str, text: str, every: float) -> list[Rec]:
    out, t = [], t0
    while t < t1:
        out.append(R(t, "INFO", logger, thread, text.format(n=rng.randint(100, 900), ms=rng.randint(2, 40))))
        t += sec(every * rng.uniform(0.7, 1.3))
    return out


def kafka_startup(rng: random.Random, t0: dt.datetime, client: str, version: str = "3.6.1") -> list[Rec]:
    p = KG.prefix(client)
    return [
        R(t0, "INFO", APPINFO, "main", f"Kafka version: {version}"),
        R(t0 + ms(1), "INFO", APPINFO, "main", f"Kafka commitId: {rng.getrandbits(64):016x}"),
        R(t0 + ms(1), "INFO", APPINFO, "main", f"Kafka startTimeMs: {int(t0.timestamp() * 1000)}"),
        R(t0 + ms(180), "INFO", METADATA, KG.net_thread(client), p + f"Cluster ID: {''.join(rng.choice('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789') for _ in range(22))}", True),
    ]


def kafka_callback(rng: random.Random, *, t0: dt.datetime, client: str, count: int, tp: str, frame: str, exc: str) -> list[Rec]:
    recs = []
    t = t0
    for i in range(count):
        t += sec(rng.uniform(2, 25))
        recs.append(R(t, "ERROR", BATCH, KG.net_thread(client),
                      KG.prefix(client) + f"Error executing user-provided callback on message for topic-partition '{tp}'", True,
                      [exc, f"\tat {frame}", *KG.CALLBACK_TAIL]))
    return recs


def kafka_restart(rng: random.Random, *, version: str, client: str, node: int, address: str, start: dt.datetime, seconds: float) -> list[Rec]:
    log = KLog()
    KG.outage(log, rng, version=version, client=client, node=node, address=address, start=start,
              end=start + sec(seconds), first_retries=[], corr=rng.randint(100, 9000), thread=KG.net_thread(client))
    return log.recs


# ============================================================================================ sarama incidents

_SARAMA_KNOWN = re.compile(
    r"^(?:Initializing new client|Successfully initialized new client|Closing Client|Producer shutting down\."
    r"|client/metadata |client/brokers |producer/broker/-?\d+ (?:starting up|state change|shut down|input chan closed|maximum request)"
    r"|producer/leader/|Connected to broker at |Closed connection to broker |Failed to connect to broker "
    r"|Failed refreshing metadata|Retrying batch for|Failed retrying batch)"
    r"|run out of available brokers|circuit breaker is open|kafka: Failed to produce message to topic"
)


def _sarama_known(text: str) -> bool:
    return bool(_SARAMA_KNOWN.search(text))


def sarama(sc, *, edit: Callable[[str], str] | None = None, known: Callable[[str], bool] | None = None) -> list[Rec]:
    sim = SAR.Sim(sc)
    recs = []
    for t, _, src, text, fields in sim.run():
        when = SAR._stamp(sc, t)
        if edit and src == "sarama":
            text = edit(text)
        err = fields.get("_error", False)
        recs.append(Rec(when, "ERROR" if err else "INFO", "sarama" if src == "sarama" else sc.app_name, "", text, [],
                        (known or _sarama_known)(text), "lib" if src == "sarama" else "app", dict(fields)))
    return recs


def scen(kind: str, *, seed: int, start: dt.datetime, topic: str, partition: int, addr: str, ip: str, client_ip: str,
         dial: float = 30.0, read: float = 30.0, retry_max: int = 3, errors: int = 1, app: str = "producer", before: int = 25,
         after: int = 10):
    return SAR.Scenario(path="x", kind=kind, cfg=SAR.Config(dial=dial, read=read, retry_max=retry_max), addr=addr, ip=ip,
                        client_ip=client_ip, topic=topic, partition=partition, start=start, healthy_before=before,
                        recover_after_errors=errors, healthy_after=after, seed=seed, app_name=app)


# ============================================================================================ the corpus

D = dt.datetime


def t_(y, mo, d, h, mi, s=0, msec=0) -> dt.datetime:
    return D(y, mo, d, h, mi, s, msec * 1000, tzinfo=UTC)


def grep_context(pattern: str, before: int = 1, after: int = 0) -> Callable:
    """`grep -n -B1 PATTERN file`: matches as N:line, context as N-line, groups split by --."""
    rx = re.compile(pattern)

    def post(lines):
        keep = set()
        for i, (text, _) in enumerate(lines):
            if rx.search(text):
                keep.update(range(max(0, i - before), min(len(lines), i + after + 1)))
        out, last = [], None
        for i in sorted(keep):
            if last is not None and i != last + 1:
                out.append(("--", False))
            text, k = lines[i]
            sep = ":" if rx.search(text) else "-"
            out.append((f"{i + 1}{sep}{text}", k))
            last = i
        return out
    return post


def rg_lines(pattern: str, path: str) -> Callable:
    rx = re.compile(pattern)

    def post(lines):
        return [(f"{path}:{i + 1}:{text}", k) for i, (text, k) in enumerate(lines) if rx.search(text)]
    return post


def npp_hits(pattern: str, path: str) -> Callable:
    """Notepad++ 'Find in Files' result pane."""
    rx = re.compile(pattern)

    def post(lines):
        hits = [(f"\tLine {i + 1}: {text}", k) for i, (text, k) in enumerate(lines) if rx.search(text)]
        return [(f'Search "{pattern}" ({len(hits)} hits in 1 file of 1 searched)', False),
                (f"  {path} ({len(hits)} hits)", False)] + hits
    return post


def cat_n(lines):
    return [(f"{i + 1:>6}\t{text}", k) for i, (text, k) in enumerate(lines)]


def wrap_at_remote(lines):
    """A paste that broke long lines before ' - R:' / ' ! R:' (apache/pulsar#13363)."""
    out = []
    for text, k in lines:
        m = re.search(r" ([-!] R:)", text)
        if m and len(text) > 150:
            out += [(text[:m.start()], k), (text[m.start() + 1:], False)]
        else:
            out.append((text, k))
    return out


def compose(service: str, width: int) -> Prefix:
    return Prefix(lambda r, f: f"{service:<{width}}| ")


def build() -> list[Corpus]:
    C: list[Corpus] = []
    add = C.append
    G_TWIN = go_golog("[sarama] ", micro=True)

    # ------------------------------------------------------------------ Pulsar broker, stuck producers
    rng = random.Random(101)
    ns = "retail/checkout"
    stuck = [PP(f"persistent://{ns}/carts-partition-2", "/10.44.7.21:53118", 2, "carts-6b1f-2")]
    ok = [PP(f"persistent://{ns}/carts-partition-0", "/10.44.7.21:53118", 0, "carts-6b1f-0"),
          PP(f"persistent://{ns}/carts-partition-5", "/10.44.9.3:41022", 5, "carts-91c0-5")]
    add(Corpus("01-pulsar-2x-fenced", "https://github.com/apache/pulsar/issues/6872",
               "Markdown code fence around the 2.x broker layout %d{HH:mm:ss.SSS} [%t] %-5level %logger{36} - %msg%n (time-only)",
               "pulsar-broker 2.5.1", ["pulsar.dangling-producer-future", "pulsar.load-shedding"],
               pulsar_broker_stuck(rng, t_(2024, 3, 4, 10, 11), ns=ns, bundle="0x40000000_0x80000000", broker="10.44.2.11:8080",
                                   stuck=stuck, ok=ok, minutes=11),
               JAVA["pulsar-2x"], JAVA["pulsar-iso"], [Fence()]))

    rng = random.Random(102)
    ns = "canvas/prod-east"
    stuck = [PP(f"persistent://{ns}/enrollments-partition-7", "/10.9.31.8:40412", 61, "pulsar-prod-east-88-12"),
             PP(f"persistent://{ns}/enrollments-partition-3", "/10.9.31.8:40412", 57, "pulsar-prod-east-88-9")]
    ok = [PP(f"persistent://{ns}/enrollments-partition-11", "/10.9.40.2:51734", 12, "pulsar-prod-east-91-4")]

    def fluentd(text, r):
        return {"msg": text + "\n", "kube": {"namespace": "pulsar", "pod_name": "pulsar-east-broker-7f5c9d44b-q2x8n",
                                             "container_name": "broker"},
                "docker": {"container_id": "9d1e0c7b44a25f3e6c0b7a1f2d3e4c5b6a7980a1b2c3d4e5f60718293a4b5c6d"}}
    add(Corpus("02-pulsar-fluentd-msg-json", "https://github.com/apache/pulsar/issues/6416",
               "fluentd/fluent-bit JSON per line, the broker line in 'msg' (with its newline), kube and docker metadata; inside, the 2.x time-only layout",
               "pulsar-broker 2.5.0", ["pulsar.dangling-producer-future", "pulsar.load-shedding"],
               pulsar_broker_stuck(rng, t_(2024, 2, 25, 17, 11, 16), ns=ns, bundle="0xc0000000_0xe0000000", broker="10.9.20.14:8080",
                                   stuck=stuck, ok=ok, minutes=9),
               JAVA["pulsar-2x"], JAVA["pulsar-iso"], [JsonLine(fluentd)]))

    rng = random.Random(103)
    ns = "pulsar/ops"
    stuck = [PP(f"persistent://{ns}/healthcheck-events", "/10.1.6.40:38814", 3, "ops-writer-1")]
    ok = [PP(f"persistent://{ns}/audit-events", "/10.1.6.40:38814", 4, "ops-writer-2")]
    add(Corpus("03-pulsar-gke-cloud-logging", "https://github.com/apache/pulsar/issues/7140",
               "Google Cloud Logging export: severity letter and RFC 3339 nanosecond stamp before the 2.x broker layout",
               "pulsar-broker 2.5.1", ["pulsar.dangling-producer-future", "pulsar.load-shedding"],
               pulsar_broker_stuck(rng, t_(2024, 6, 1, 20, 31, 19), ns=ns, bundle="0x00000000_0x10000000", broker="10.1.2.182:8080",
                                   stuck=stuck, ok=ok, minutes=8),
               JAVA["pulsar-2x"], JAVA["pulsar-iso"],
               [Prefix(lambda r, f: f"{r.level[0]} {rfc3339nano(r)} ")]))

    rng = random.Random(104)
    ns = "public/default"
    stuck = [PP(f"persistent://{ns}/invoices-partition-1", "/10.128.3.17:44930", 1, "billing-77d9-1")]
    ok = [PP(f"persistent://{ns}/invoices-partition-4", "/10.128.3.17:44930", 4, "billing-77d9-4")]
    add(Corpus("04-pulsar-kubectl-prefix", "https://github.com/geerlingguy/ansible-for-kubernetes/issues/75 (kubectl logs --prefix) + https://github.com/apache/pulsar/issues/6872",
               "kubectl logs --prefix '[pod/NAME/CONTAINER] ' before the 2.x broker layout",
               "pulsar-broker 2.5.1", ["pulsar.dangling-producer-future", "pulsar.load-shedding"],
               pulsar_broker_stuck(rng, t_(2024, 4, 9, 3, 2, 10), ns=ns, bundle="0x80000000_0xa0000000", broker="pulsar-broker-2.pulsar-broker.pulsar.svc.cluster.local:8080",
                                   stuck=stuck, ok=ok, minutes=12),
               JAVA["pulsar-2x"], JAVA["pulsar-iso"], [Prefix(lambda r, f: "[pod/pulsar-broker-2/pulsar-broker] ")]))

    rng = random.Random(105)
    ns = "public/default"
    stuck = [PP(f"persistent://{ns}/telemetry", "/192.168.3.71:60122", 0, "edge-7")]
    ok = []
    add(Corpus("05-pulsar-syslog-rfc3164", "RFC 3164 (https://www.rfc-editor.org/rfc/rfc3164) as rsyslog forwards a unit's stdout; layout as in https://github.com/apache/pulsar/issues/6872",
               "RFC 3164 syslog '<PRI>Mmm dd HH:MM:SS host tag[pid]: ' before the 2.x broker layout",
               "pulsar-broker 2.5.1", ["pulsar.dangling-producer-future", "pulsar.load-shedding"],
               pulsar_broker_stuck(rng, t_(2024, 6, 2, 4, 7, 11), ns=ns, bundle="0x00000000_0x40000000", broker="192.168.3.10:8080",
                                   stuck=stuck, ok=ok, minutes=10),
               JAVA["pulsar-2x"], JAVA["pulsar-iso"],
               [Prefix(lambda r, f: f"<{ {'WARN': 132, 'ERROR': 131}.get(r.level, 134) }>{syslog_stamp(r.t)} pulsar-b1 pulsar-broker[2211]: ")]))

    rng = random.Random(106)
    ns = "payments/ledger"
    stuck = [PP(f"persistent://{ns}/settlements", "/10.60.1.9:39954", 7, "settle-3")]
    ok = [PP(f"persistent://{ns}/refunds", "/10.60.1.9:39954", 8, "settle-4")]
    add(Corpus("06-pulsar-journald-short", "journalctl -o short (systemd journalctl(1)); unit identifier as in https://github.com/sous-chefs/kafka/pull/144; layout as in https://github.com/apache/pulsar/issues/6872",
               "journalctl short 'Mmm dd HH:MM:SS host ident[pid]: ' before the 2.x broker layout, with the '-- Logs begin at' header",
               "pulsar-broker 2.5.1", ["pulsar.dangling-producer-future", "pulsar.load-shedding"],
               pulsar_broker_stuck(rng, t_(2024, 11, 3, 23, 40, 2), ns=ns, bundle="0x20000000_0x30000000", broker="10.60.0.21:8080",
                                   stuck=stuck, ok=ok, minutes=9),
               JAVA["pulsar-2x"], JAVA["pulsar-iso"],
               [Prefix(lambda r, f: f"{syslog_stamp(r.t)} pulsar-b3 pulsar[1893]: ",
                       head=["-- Logs begin at Sun 2024-11-03 08:00:01 UTC, end at Mon 2024-11-04 00:05:12 UTC. --"])]))

    rng = random.Random(107)
    ns = "iot/fleet"
    stuck = [PP(f"persistent://{ns}/positions-partition-0", "/10.20.4.66:52008", 0, "fleet-gw-0")]
    ok = [PP(f"persistent://{ns}/positions-partition-1", "/10.20.4.66:52008", 1, "fleet-gw-1")]
    add(Corpus("07-pulsar-test-log-thread-class-line", "https://github.com/apache/pulsar/pull/4018",
               "Pulsar's test log4j2 pattern %d{HH:mm:ss.SSS} [%t:%C@%L] %-5level %logger{36} - %msg%n (thread, class and line in the brackets)",
               "pulsar-broker 2.4", ["pulsar.dangling-producer-future", "pulsar.load-shedding"],
               pulsar_broker_stuck(rng, t_(2024, 5, 6, 23, 14, 41), ns=ns, bundle="0x00000000_0x80000000", broker="10.20.0.5:8080",
                                   stuck=stuck, ok=ok, minutes=6),
               JAVA["pulsar-test"], JAVA["pulsar-iso"]))

    rng = random.Random(108)
    ns = "sample/standalone/ns1"
    stuck = [PP(f"persistent://{ns}/clicks", "/127.0.0.1:49231", 0, "standalone-0-4")]
    add(Corpus("08-pulsar-1x-zk-style", "https://github.com/apache/pulsar/issues/10985",
               "ZooKeeper-style pattern of the 1.x docs %d{ISO8601} - %-5p - [%t:%C{1}@%L] - %m%n (short class name, line)",
               "pulsar-broker 1.x (pre-2.4 texts)", ["pulsar.dangling-producer-future", "pulsar.load-shedding"],
               pulsar_broker_stuck(rng, t_(2024, 6, 1, 14, 46, 29), ns=ns, bundle="0x00000000_0xffffffff", broker="127.0.0.1:8080",
                                   stuck=stuck, ok=[], minutes=7, pre24=True),
               JAVA["zk-style"], JAVA["pulsar-iso"]))

    rng = random.Random(109)
    ns = "public/default"
    stuck = [PP(f"persistent://{ns}/sensor-a", "/172.31.9.4:51570", 3, "standalone-0-12")]
    ok = [PP(f"persistent://{ns}/sensor-b", "/172.31.9.4:51570", 4, "standalone-0-13")]
    add(Corpus("09-pulsar-22-bracket-stamp", "https://github.com/apache/pulsar/issues/3671",
               "Pulsar 2.2-era image layout [%d{ISO8601}Z] %p %t %c{1}:%L %m (bracketed UTC stamp, short logger with line, no separators)",
               "pulsar-broker 2.2 (pre-2.4 texts)", ["pulsar.dangling-producer-future", "pulsar.load-shedding"],
               pulsar_broker_stuck(rng, t_(2024, 2, 22, 13, 59, 6), ns=ns, bundle="0x80000000_0x90000000", broker="10.10.58.7:8080",
                                   stuck=stuck, ok=ok, minutes=6, pre24=True),
               JAVA["pulsar-22"], JAVA["pulsar-iso"]))

    rng = random.Random(110)
    ns = "public/default"
    stuck = [PP(f"persistent://{ns}/orders-partition-9", "/10.37.5.18:47216", 9, "orders-eu-9")]
    ok = [PP(f"persistent://{ns}/orders-partition-2", "/10.37.5.18:47216", 2, "orders-eu-2")]
    add(Corpus("10-pulsar-docker-timestamps", "https://github.com/rustfs/rustfs/issues/5007",
               "docker logs --timestamps (RFC 3339 nanoseconds) before the 2.x broker layout",
               "pulsar-broker 2.5.1", ["pulsar.dangling-producer-future", "pulsar.load-shedding"],
               pulsar_broker_stuck(rng, t_(2024, 7, 18, 10, 20, 28), ns=ns, bundle="0x40000000_0x50000000", broker="172.17.0.2:8080",
                                   stuck=stuck, ok=ok, minutes=7),
               JAVA["pulsar-2x"], JAVA["pulsar-iso"], [Prefix(lambda r, f: rfc3339nano(r) + " ")]))

    # ------------------------------------------------------------------ Pulsar client, stuck producers (client log alone)
    rng = random.Random(121)
    add(Corpus("11-pulsar-client-quoted", "https://github.com/apache/pulsar/issues/10123",
               "Markdown '> ' quote around a Java client's logback default layout %d{HH:mm:ss.SSS} [%thread] %-5level %logger{36} - %msg%n",
               "pulsar-client 2.7", ["pulsar.dangling-producer-future"],
               pulsar_client_stuck(rng, t_(2024, 4, 1, 17, 25, 53), stuck=[("persistent://public/default/quotes", "quotes-feed-0")],
                                   ok=[("persistent://public/default/trades", "quotes-feed-1")], local_ep="/10.2.0.17:48812",
                                   broker="broker-2.pulsar.internal/10.2.1.12:6650", ns="public/default", minutes=6),
               JAVA["logback-default"], JAVA["sb2"], [Quote()]))

    rng = random.Random(122)
    add(Corpus("12-pulsar-client-bracket-level", "https://github.com/apache/pulsar/issues/13363",
               "%d [%5p ] %c{1} - %m%n: padded level in brackets, class name only; a long line wrapped by the paste",
               "pulsar-client 2.8", ["pulsar.dangling-producer-future"],
               pulsar_client_stuck(rng, t_(2024, 12, 14, 15, 54, 45), stuck=[("persistent://public/default/level2-quotes-partition-48", "level2-54-188")],
                                   ok=[], local_ep="/10.70.3.4:34398", broker="server.docker.ys/10.70.0.8:6650", ns="public/default", minutes=7),
               JAVA["bracket-level-c1"], JAVA["sb2"], post=wrap_at_remote))

    rng = random.Random(123)
    add(Corpus("13-pulsar-client-bracket-level-full", "https://github.com/apache/pulsar/pull/21144",
               "%d{yyyy-MM-dd HH:mm:ss.SSS} [%t] [%p] %c %m%n: level in brackets, full logger, no separator before the message",
               "pulsar-client 2.10", ["pulsar.dangling-producer-future"],
               pulsar_client_stuck(rng, t_(2024, 9, 7, 17, 2, 24), stuck=[("persistent://public/default/tp1-partition-2", "testProducer-b1fc76")],
                                   ok=[("persistent://public/default/tp1-partition-0", "testProducer-b1fc76")], local_ep="/127.0.0.1:42574",
                                   broker="broker-1/127.0.0.1:6651", ns="public/default", minutes=5),
               JAVA["bracket-level-full"], JAVA["sb2"]))

    rng = random.Random(124)
    add(Corpus("14-pulsar-client-compose-sb3", "https://github.com/getsentry/self-hosted/issues/2457 (compose prefix) + Spring Boot 3 client",
               "docker compose logs 'service-1  | ' before a Spring Boot 3 layout with the application name",
               "pulsar-client 3.x", ["pulsar.dangling-producer-future"],
               pulsar_client_stuck(rng, t_(2024, 10, 7, 21, 14, 4), stuck=[("persistent://shop/orders/placed-partition-1", "ledger-svc-1")],
                                   ok=[("persistent://shop/orders/placed-partition-0", "ledger-svc-0")], local_ep="/172.20.0.7:40210",
                                   broker="pulsar/172.20.0.3:6650", ns="shop/orders", minutes=6),
               JAVA["sb3"], JAVA["sb2"], [compose("ledger-svc-1", 34)]))

    # ------------------------------------------------------------------ Pulsar healthy / shedding decoys
    rng = random.Random(131)
    add(Corpus("15-pulsar-client-slf4j-simple", "https://github.com/apache/pulsar/issues/15559",
               "slf4j-simple default '[thread] LEVEL logger - msg': no timestamp at all; a client whose brokers restart and whose producers come back",
               "pulsar-client 2.9", [],
               pulsar_client_healthy(rng, t_(2024, 5, 12, 9, 0), producers=[("persistent://public/default/test-string3-partition-0", "pulsar-cluster-14-1"),
                                                                           ("persistent://public/default/test-string3-partition-2", "pulsar-cluster-14-0")],
                                     local_ep="/127.0.0.1:50232", brokers=["/127.0.0.1:6650", "/127.0.0.1:6651"]),
               JAVA["slf4j-simple"], JAVA["sb2"]))

    rng = random.Random(132)
    add(Corpus("16-pulsar-docker-desktop-standalone-4x", "https://github.com/testcontainers/testcontainers-dotnet/issues/1504 + https://github.com/apache/pulsar/issues/23920",
               "Docker Desktop / testcontainers 'yyyy-MM-dd HH:mm:ss.SSS | ' before the ISO8601_OFFSET_DATE_TIME_HHMM broker layout; 3.x/4.x texts (client=[id: ..] [SR:.., state:..], role: ..)",
               "pulsar-broker 4.x", [],
               pulsar_standalone_4x(rng, t_(2025, 9, 29, 12, 18, 5), broker_ep="/172.17.0.3:6650",
                                    clients=[("/172.17.0.1:35310", "persistent://public/default/orders", "standalone-0-1", 0),
                                             ("/172.17.0.1:35322", "persistent://public/default/payments", "standalone-0-2", 1),
                                             ("/172.17.0.1:35340", "persistent://public/default/orders", "standalone-0-3", 0)]),
               JAVA["pulsar-iso"], JAVA["pulsar-iso"],
               [Prefix(lambda r, f: f"{local(r.t, 3):%Y-%m-%d %H:%M:%S}.{_ms3(r.t)} | ")]))

    rng = random.Random(133)
    add(Corpus("17-pulsar-compose-threshold-shedder", "https://github.com/confluentinc/confluent-kafka-dotnet/issues/1460 (compose v1 prefix) + https://github.com/apache/pulsar/pull/19983",
               "docker-compose v1 'broker_1      | ' before the ISO8601_OFFSET broker layout; ThresholdShedder decisions",
               "pulsar-broker 3.x", ["pulsar.load-shedding"],
               pulsar_shedding_3x(rng, t_(2024, 8, 2, 6, 0, 4), strategy="ThresholdShedder", ns="public/default",
                                  bundles=["0x00000000_0x40000000", "0x40000000_0x80000000", "0xc0000000_0xffffffff"],
                                  target="broker-2:8080", every_min=4, rounds=4, other="broker-1:8080"),
               JAVA["pulsar-iso"], JAVA["pulsar-iso"], [compose("broker_1", 14)]))

    rng = random.Random(134)
    add(Corpus("18-pulsar-uniform-shedder-plus0800", "https://github.com/apache/pulsar/issues/21299 + https://github.com/apache/pulsar/issues/19150 (+0800 stamps)",
               "ISO8601_OFFSET broker layout in +0800; UniformLoadShedder decisions ('Found bundle to unload from ... with msgRate ...')",
               "pulsar-broker 3.0", ["pulsar.load-shedding"],
               pulsar_shedding_3x(rng, t_(2024, 10, 5, 2, 11, 40), strategy="UniformLoadShedder", ns="acme/streams",
                                  bundles=["0x00000000_0x04000000", "0x04000000_0x08000000"], target="10.244.1.17:8080",
                                  every_min=1.5, rounds=5, other="10.244.2.9:8080"),
               JAVA["pulsar-iso+0800"], JAVA["pulsar-iso"]))

    # ------------------------------------------------------------------ Kafka Java producer
    rng = random.Random(201)
    recs = kafka_startup(rng, t_(2024, 3, 11, 10, 40), "console-producer", "3.6.1")
    recs += kafka_outage(rng, version="3.6", client="console-producer", node=1, address="kafka/172.18.0.4:9092",
                         start=t_(2024, 3, 11, 10, 41, 12), minutes=3.5, tps=["orders-0"], expire=[("orders-0", 3)],
                         app_logger=ELC, what="order", style="callback")
    for r in recs:
        if r.logger == ELC:
            r.msg = "Error when sending message to topic orders with key: null, value: 11 bytes with error:"
    add(Corpus("20-kafka-compose-console-producer", "https://github.com/element-hq/dendrite/issues/1506 (compose prefix) + https://github.com/wurstmeister/kafka-docker/issues/100",
               "docker compose 'producer-1  | ' before the Kafka tools layout [%d] %p %m (%c)%n; console producer's ErrorLoggingCallback lines",
               "kafka-clients 3.6", ["kafka.broker-unreachable", "kafka.delivery-timeout"],
               recs, JAVA["kafka-log4j"], JAVA["kafka-log4j"], [compose("producer-1", 12)]))

    rng = random.Random(202)
    recs = kafka_outage(rng, version="2.8", client="producer-39", node=2, address="127.0.0.1/127.0.0.1:53211",
                        start=t_(2024, 4, 2, 14, 24, 45), minutes=3, tps=["events-4", "events-11"],
                        expire=[("events-4", 12), ("events-11", 5)], app_logger="com.hazelcast.jet.kafka.impl.WriteKafkaP",
                        what="item", style="inline")
    recs += kafka_app_noise(rng, t_(2024, 4, 2, 14, 23), t_(2024, 4, 2, 14, 29), "com.hazelcast.jet.impl.JobExecutionService",
                            "hz.jet.cooperative.thread-3", "Execution of job '{n}' progressing, {ms} items/s", 20)
    add(Corpus("21-kafka-abs-pipe-layout", "https://github.com/hazelcast/hazelcast/pull/19773",
               "%d{ABSOLUTE} %5p |%X{test-name}| - [%c{1}] %t - %m%n: time-only stamp, empty MDC between pipes, short logger in brackets, thread after it",
               "kafka-clients 2.8", ["kafka.broker-unreachable", "kafka.delivery-timeout"],
               recs, JAVA["abs-pipe"], JAVA["kafka-log4j"]))

    rng = random.Random(203)
    cid = "producer-tb-rule-engine-node-7e21c4d9-kiln"
    recs = kafka_outage(rng, version="2.0", client=cid, node=-1, address="localhost/127.0.0.1:9092",
                        start=t_(2024, 3, 21, 14, 37, 40), minutes=4, tps=[], expire=[], app_logger="org.thingsboard.server.queue.kafka.TbKafkaProducerTemplate",
                        what="msg", legacy_conn=True)
    for i in range(4):
        recs.append(R(t_(2024, 3, 21, 14, 38, 41) + sec(i * 61), "ERROR", "org.thingsboard.server.queue.kafka.TbKafkaProducerTemplate",
                      "http-nio-8080-exec-%d" % (i + 1), "Failed to send message to tb_core topic",
                      False, ["org.apache.kafka.common.errors.TimeoutException: Failed to update metadata after 60000 ms."]))
    add(Corpus("22-kafka-logback-iso-logger36", "https://github.com/thingsboard/thingsboard/issues/1565",
               "logback %d{ISO8601} [%thread] %-5level %logger{36} - %msg%n with the network thread's long name; <= 2.0 texts (no address, 'Failed to update metadata')",
               "kafka-clients 2.0", ["kafka.broker-unreachable"],
               recs, JAVA["iso-thread-logger36"], JAVA["kafka-log4j"]))

    rng = random.Random(204)
    recs = kafka_outage(rng, version="3.4", client="producer-2", node=-1, address="/192.168.56.23:9092",
                        start=t_(2024, 8, 5, 2, 14, 50), minutes=2.5, tps=[], expire=[], app_logger="com.example.audit.AuditSink", what="event")
    for r in list(recs):
        if "could not be established" in r.msg and rng.random() < 0.5:
            recs.append(R(r.t + ms(1), "WARN", NETWORK, r.thread, KG.prefix("producer-2") + "Bootstrap broker 192.168.56.23:9092 (id: -1 rack: null) disconnected", True,
                          method="handleServerDisconnect", line=1105))
    recs.append(R(t_(2024, 8, 5, 2, 15, 52), "ERROR", "com.example.audit.AuditSink", "main", "audit event dropped", False,
                  ["org.apache.kafka.common.errors.TimeoutException: Topic audit not present in metadata after 60000 ms."]))
    add(Corpus("23-kafka-log4j2-method-arrow", "https://github.com/apache/logging-log4j2/issues/1666",
               "log4j2 %d %-5level [%t] %c{1.}#%M(L:%L) -> %m%n: abbreviated logger with method and line, '->' before the message",
               "kafka-clients 3.4", ["kafka.broker-unreachable"],
               recs, JAVA["method-line-arrow"], JAVA["kafka-log4j"]))

    rng = random.Random(205)
    recs = kafka_outage(rng, version="2.6", client="KafkaJCAClient", node=0, address="/127.0.0.1:9092",
                        start=t_(2024, 1, 8, 15, 40, 10), minutes=3, tps=["jca-events-0"], expire=[("jca-events-0", 4)],
                        app_logger="fish.payara.cloud.connectors.kafka.outbound.KafkaManagedConnection", what="record", style="callback",
                        threads=["default task-7"])
    add(Corpus("24-kafka-wildfly", "https://github.com/payara/Cloud-Connectors/pull/21",
               "WildFly/JBoss %d{HH:mm:ss,SSS} %-5p [%c] (%t) %s%e%n: time-only, logger in brackets, thread in parentheses",
               "kafka-clients 2.6", ["kafka.broker-unreachable", "kafka.delivery-timeout"],
               recs, JAVA["wildfly"], JAVA["kafka-log4j"]))

    rng = random.Random(206)
    recs = kafka_outage(rng, version="2.0", client="producer-3", node=3, address="kafka-3.internal/10.8.0.13:9092",
                        start=t_(2024, 6, 25, 16, 5, 0), minutes=2.5, tps=["cgs-jobs-1"], expire=[], app_logger="com.example.cgs.JobPublisher",
                        what="job", legacy_conn=True)
    for i in range(3):
        recs.append(R(t_(2024, 6, 25, 16, 5, 1) + sec(i * 40), "WARN", NETWORK, KG.net_thread("producer-3"),
                      KG.prefix("producer-3") + "Error connecting to node kafka-3.internal:9092 (id: 3 rack: null)", True,
                      ["java.io.IOException: Can't resolve address: kafka-3.internal:9092",
                       "\tat org.apache.kafka.common.network.Selector.doConnect(Selector.java:235) ~[kafka-clients-2.0.0.jar:na]",
                       "\tat org.apache.kafka.common.network.Selector.connect(Selector.java:214) ~[kafka-clients-2.0.0.jar:na]",
                       "\tat org.apache.kafka.clients.NetworkClient.initiateConnect(NetworkClient.java:864) [kafka-clients-2.0.0.jar:na]"]))
    add(Corpus("25-kafka-spring-boot-collapsed", "https://github.com/spring-attic/spring-cloud-stream-binder-kafka/issues/671",
               "Spring Boot 2 layout as a Markdown page shows it: runs of spaces collapsed, stack frames without their tab",
               "kafka-clients 2.0", ["kafka.broker-unreachable"],
               recs, JAVA["sb2-collapsed"], JAVA["kafka-log4j"], trace="none"))

    rng = random.Random(207)
    recs = kafka_outage(rng, version="2.5", client="producer-1", node=1, address="kafka-0.kafka-svc/10.1.9.30:9092",
                        start=t_(2024, 10, 5, 13, 58, 30), minutes=3, tps=["message-0"], expire=[("message-0", 5)],
                        app_logger="io.smallrye.reactive.messaging.kafka", what="message", style="inline",
                        threads=["vert.x-eventloop-thread-6"])
    for r in recs:
        if r.logger == "io.smallrye.reactive.messaging.kafka":
            r.msg = "SRMSG18206: Unable to write to Kafka from channel message (topic: message): " + r.msg.split(": ", 1)[1]
    add(Corpus("26-kafka-quarkus", "https://github.com/yurake/k8s-3tier-webapp/issues/726",
               "Quarkus console %d{HH:mm:ss} %p [%c{2.}] (%t) %s%e%n: second-resolution time only, abbreviated logger, thread in parentheses",
               "kafka-clients 2.5", ["kafka.broker-unreachable", "kafka.delivery-timeout"],
               recs, JAVA["quarkus"], JAVA["kafka-log4j"]))

    rng = random.Random(208)
    recs = kafka_outage(rng, version="3.7", client="producer-7", node=1, address="/10.128.0.51:50333",
                        start=t_(2024, 8, 19, 15, 39, 29), minutes=3, tps=[], expire=[], app_logger="org.apache.beam.sdk.io.kafka.KafkaWriter", what="row")
    add(Corpus("27-kafka-gha-slf4j-simple", "https://github.com/GoogleCloudPlatform/DataflowTemplates/issues/1800",
               "GitHub Actions raw log stamps (7 fraction digits, Z) before slf4j-simple '[thread] LEVEL logger - msg' (no time of its own)",
               "kafka-clients 3.7", ["kafka.broker-unreachable"],
               recs, JAVA["slf4j-simple"], JAVA["kafka-log4j"], [Prefix(lambda r, f: gha(r) + " ")]))

    rng = random.Random(209)
    recs = []
    app = "cakesolutions.kafka.akka.KafkaProducerActor"
    t = t_(2024, 4, 7, 6, 42, 10)
    for i in range(40):
        recs.append(R(t + sec(i * 2), "INFO", "com.example.loadgen.Publisher", "ingest-akka.actor.default-dispatcher-3", f"sent {1000 * (i + 1)} messages"))
    for i in range(14):
        kind = ["since batch creation plus linger time", "since last append"][i % 2]
        n_rec = 40 + (i * 7) % 23
        recs.append(R(t_(2024, 4, 7, 6, 43, 34) + ms(i * 700), "ERROR", app, f"ingest-akka.actor.default-dispatcher-{2 + i % 5}",
                      "Failed to send message to Kafka!", True,
                      [f"org.apache.kafka.common.errors.TimeoutException: Expiring {n_rec} record(s) for sensor-readings-{i % 3} due to {30004 + i * 11} ms has passed {kind}"]))
    # the node had answered before (messages were sent), so 0.10.1 warns nothing about it: only the expiries show
    recs += as_kafka_0_10(kafka_outage(rng, version="0.10", client="producer-1", node=0, address="kafka/10.0.0.9:9092",
                                       start=t_(2024, 4, 7, 6, 42, 50), minutes=1.5, tps=[], expire=[], app_logger=app,
                                       what="x", legacy_conn=True), "kafka:9092")
    add(Corpus("28-kafka-grep-n-context", "https://github.com/cakesolutions/scala-kafka-client/issues/108",
               "grep -n -B1 output (N:match, N-context, -- between groups) of a logback %d{HH:mm:ss.SSS} [%thread] %-5level %logger{36} - %msg%n file; 0.10.1 'Expiring N record(s) for T-P due to ...' texts",
               "kafka-clients 0.10.1", ["kafka.delivery-timeout"],
               recs, JAVA["akka"], JAVA["kafka-log4j"], post=grep_context(r"Expiring")))

    rng = random.Random(210)
    recs = []
    t = t_(2024, 2, 19, 15, 37, 21)
    for i in range(5):
        tt = t + sec(i * 1.6 + 2)
        recs.append(R(tt, "ERROR", ELC, "kafka-producer-network-thread | console-producer",
                      f"Error when sending message to topic greetings with key: null, value: {5 + i % 3} bytes with error:", True,
                      [f"org.apache.kafka.common.errors.TimeoutException: Expiring 1 record(s) for greetings-0 due to {1517 + i * 4} ms has passed since batch creation plus linger time"]))
    recs += as_kafka_0_10(kafka_outage(rng, version="0.10", client="console-producer", node=-1, address="localhost/127.0.0.1:19092",
                                       start=t, minutes=0.4, tps=[], expire=[], app_logger=ELC, what="x", legacy_conn=True),
                          "localhost:19092")

    def console_prompt(rec, first):
        return ">" if first and rec.logger == ELC else ""
    add(Corpus("29-kafka-console-producer-prompt", "https://github.com/confluentinc/cp-docker-images/issues/752 + https://github.com/wurstmeister/kafka-docker/issues/100",
               "a shell session: the command, then the console producer's '>' prompts glued to the tools layout [%d] %p %m (%c)%n; 0.10.1 'due to' expiry texts",
               "kafka-clients 0.10.1", ["kafka.delivery-timeout"],
               recs, JAVA["kafka-log4j"], JAVA["kafka-log4j"], [Prefix(console_prompt)],
               extra_head=["$ seq 17 | kafka-console-producer --broker-list localhost:19092 --topic greetings && echo 'sent 17 lines'"]))

    rng = random.Random(211)
    recs = as_kafka_0_10(kafka_outage(rng, version="2.0", client="producer-1", node=-1, address="x", start=t_(2024, 5, 23, 21, 14, 5),
                                      minutes=2.2, tps=[], expire=[], app_logger="x", what="x", legacy_conn=True), "kafka:9092")
    for i in range(3):
        recs.append(R(t_(2024, 5, 23, 21, 15, 5) + sec(i * 5), "ERROR", ELC, "kafka-producer-network-thread | producer-1",
                      f"Error when sending message to topic telemetry with key: null, value: {12 + i} bytes with error:", True,
                      ["org.apache.kafka.common.errors.TimeoutException: Batch containing 1 record(s) expired due to timeout while requesting metadata from brokers for telemetry-1"]))
    add(Corpus("30-kafka-0.10.0-batch-containing", "https://github.com/wurstmeister/kafka-docker/issues/100 (comment, 2016-09)",
               "Kafka tools layout [%d] %p %m (%c)%n with 0.10.0 texts ('Batch containing N record(s) expired due to timeout while requesting metadata from brokers for T-P')",
               "kafka-clients 0.10.0", ["kafka.broker-unreachable", "kafka.delivery-timeout"],
               recs, JAVA["kafka-log4j"], JAVA["kafka-log4j"],
               note="0.10.0: the expiry text names no elapsed time (the delivery-timeout model needs one), no line names a client id (no [Producer clientId=..] before 1.0), and the outage shows only as repeated 'Bootstrap broker kafka:9092 disconnected' warnings."))

    rng = random.Random(212)
    recs = kafka_restart(rng, version="3.9", client="connect-cluster-configs", node=0, address="broker/172.21.0.6:9092",
                         start=t_(2026, 7, 23, 19, 36, 22), seconds=20)
    recs += kafka_app_noise(rng, t_(2026, 7, 23, 19, 35), t_(2026, 7, 23, 19, 39), "org.apache.kafka.connect.runtime.WorkerSourceTask",
                            "task-thread-jdbc-source-0", "WorkerSourceTask{{id=jdbc-source-0}} Committing offsets for {n} acknowledged messages", 15)
    add(Corpus("31-kafka-cfk-layout", "https://github.com/vdesabou/kafka-docker-playground/issues/8514",
               "Confluent for Kubernetes layout [%p] %d [%t] %c %M - app=..., clusterId=..., server=N - %m%n: level first in brackets, logger and method",
               "kafka-clients 3.9", ["kafka.broker-unreachable"],
               recs, JAVA["cfk"], JAVA["kafka-log4j"], note="A broker restart of 20 s: low severity."))

    rng = random.Random(213)
    recs = kafka_outage(rng, version="3.9", client="connect-connect-adminclient-producer-configs", node=-2, address="broker/172.21.0.6:29092",
                        start=t_(2026, 7, 16, 10, 48, 11), minutes=2.5, tps=[], expire=[], app_logger="x", what="x")
    for r in list(recs):
        if "could not be established" in r.msg and rng.random() < 0.4:
            recs.append(R(r.t + ms(1), "WARN", NETWORK, r.thread, KG.prefix("connect-connect-adminclient-producer-configs")
                          + "Bootstrap broker broker:29092 (id: -2 rack: null isFenced: false) disconnected", True, line=1386))
    add(Corpus("32-kafka-log4j-class-line", "https://github.com/vdesabou/kafka-docker-playground/issues/8292",
               "Confluent images' [%d] %p %m (%c:%L)%n: the logger in parentheses carries ':line'; 4.x 'isFenced' in the bootstrap node",
               "kafka-clients 3.9/4.0", ["kafka.broker-unreachable"],
               recs, JAVA["kafka-log4j-line"], JAVA["kafka-log4j"]))

    rng = random.Random(214)
    recs = kafka_outage(rng, version="3.9", client="deeds-producer-1", node=1, address="localhost/127.0.0.1:41877",
                        start=t_(2025, 5, 29, 17, 1, 20), minutes=3, tps=["deed-events-0"], expire=[("deed-events-0", 6)],
                        app_logger="com.example.deeds.service.EventPublisher", what="event", style="callback")
    for i in range(12):
        tt = t_(2025, 5, 29, 17, 1, 9) + sec(i * 0.4)
        recs.append(R(tt, "INFO", "com.example.deeds.config.KafkaTestContainer", "ream--819305127",
                      f"STDOUT: [{tt:%Y-%m-%d %H:%M:%S},{_ms3(tt)}] INFO [Partition deed-events-{i % 3} broker=1] Log loaded for partition deed-events-{i % 3} with initial high watermark 0 (kafka.cluster.Partition)"))
    add(Corpus("33-kafka-sb3-correlation-nested", "https://github.com/jhipster/generator-jhipster/issues/29641",
               "Spring Boot 3.2+ layout with application name and an empty correlation block; a test container's broker log nested in 'STDOUT: ' messages",
               "kafka-clients 3.9", ["kafka.broker-unreachable", "kafka.delivery-timeout"],
               recs, JAVA["sb3-corr"], JAVA["kafka-log4j"]))

    rng = random.Random(215)
    recs = kafka_outage(rng, version="3.6", client="order-svc-producer-1", node=2, address="kafka-2.kafka-headless.data.svc.cluster.local/10.42.5.19:9092",
                        start=t_(2024, 5, 2, 8, 17, 20), minutes=4, tps=["orders-1", "orders-4"], expire=[("orders-1", 9), ("orders-4", 4)],
                        app_logger="com.example.orders.OrderPublisher", what="order", style="callback", buffer=6)
    add(Corpus("34-kafka-stern-sb2", "https://github.com/bitnami/charts/issues/1522",
               "stern 'pod container ' before the Spring Boot 2 layout",
               "kafka-clients 3.6", ["kafka.broker-unreachable", "kafka.delivery-timeout", "kafka.buffer-exhausted"],
               recs, JAVA["sb2"], JAVA["kafka-log4j"], [Prefix(lambda r, f: "order-svc-7c9d8bf5b-x2x4k order-svc ")]))

    rng = random.Random(216)
    recs = kafka_startup(rng, t_(2024, 3, 14, 9, 20), "shipping-producer", "3.5.1")
    recs += kafka_callback(rng, t0=t_(2024, 3, 14, 9, 21), client="shipping-producer", count=7, tp="shipments-2",
                           frame="com.example.shipping.LabelCallback.onCompletion(LabelCallback.java:57)",
                           exc='java.lang.NullPointerException: Cannot invoke "com.example.shipping.Label.id()" because "label" is null')
    recs += kafka_app_noise(rng, t_(2024, 3, 14, 9, 20, 5), t_(2024, 3, 14, 9, 24), "com.example.shipping.LabelService",
                            "http-nio-8080-exec-2", "label {n} printed in {ms} ms", 9)
    add(Corpus("35-kafka-journald-short-iso", "journalctl -o short-iso (systemd journalctl(1)); layout https://github.com/spring-projects/spring-boot/issues/15432",
               "journalctl short-iso 'yyyy-mm-ddTHH:MM:SS+0000 host ident[pid]: ' before the Spring Boot 2 layout",
               "kafka-clients 3.5", ["kafka.callback-error"],
               recs, JAVA["sb2"], JAVA["kafka-log4j"],
               [Prefix(lambda r, f: f"{r.t:%Y-%m-%dT%H:%M:%S}+0000 ship-3 shipping[1822]: ")]))

    rng = random.Random(217)
    recs = kafka_outage(rng, version="3.7", client="billing-producer-1", node=3, address="kafka-3/10.4.0.23:9092",
                        start=t_(2024, 5, 2, 10, 15, 31), minutes=3.5, tps=["invoices-2"], expire=[("invoices-2", 8)],
                        app_logger="com.example.billing.InvoiceEvents", what="invoice", style="callback")
    add(Corpus("36-kafka-syslog-rfc5424", "https://github.com/Graylog2/graylog2-server/pull/1165 (rsyslog RFC 5424 template)",
               "RFC 5424 syslog '<PRI>1 RFC3339 host app procid - - ' before the Kafka tools layout",
               "kafka-clients 3.7", ["kafka.broker-unreachable", "kafka.delivery-timeout"],
               recs, JAVA["kafka-log4j"], JAVA["kafka-log4j"],
               [Prefix(lambda r, f: f"<{ {'WARN': 132, 'ERROR': 131}.get(r.level, 134) }>1 {r.t:%Y-%m-%dT%H:%M:%S}.{r.t.microsecond:06d}Z app-7 billing 2211 - - ")]))

    rng = random.Random(218)
    recs = kafka_startup(rng, t_(2024, 11, 2, 6, 30), "producer-1", "4.0.0")
    recs.append(R(t_(2024, 11, 2, 6, 30, 0, 300), "WARN", NETWORK, KG.net_thread("producer-1"),
                  KG.prefix("producer-1") + "The metadata response from the cluster reported a recoverable issue with correlation id 4 : {pageviews=UNKNOWN_TOPIC_OR_PARTITION}", True))
    recs.append(R(t_(2024, 11, 2, 6, 30, 0, 410), "WARN", NETWORK, KG.net_thread("producer-1"),
                  KG.prefix("producer-1") + "The metadata response from the cluster reported a recoverable issue with correlation id 5 : {pageviews=LEADER_NOT_AVAILABLE}", True))
    recs += kafka_app_noise(rng, t_(2024, 11, 2, 6, 30, 1), t_(2024, 11, 2, 6, 33), "com.github.example.SimpleProducer", "main",
                            "Sending Key = {n}, Value = count: {ms}", 3)
    recs.append(R(t_(2024, 11, 2, 6, 33, 1), "INFO", KPROD, "main", KG.prefix("producer-1") + "Closing the Kafka producer with timeoutMillis = 9223372036854775807 ms."))
    recs.append(R(t_(2024, 11, 2, 6, 33, 1, 40), "INFO", NETWORK, KG.net_thread("producer-1"), KG.prefix("producer-1") + "Node -1 disconnected.", True))

    def jenkins(r, f):
        return f"[{r.t:%Y-%m-%dT%H:%M:%S}.{_ms3(r.t)}Z] "
    add(Corpus("37-kafka-jenkins-healthy", "Jenkins timestamper in a Pipeline console ('[ISO-8601 instant] '); client output as in https://github.com/vdesabou/kafka-docker-playground/issues/7184",
               "Jenkins Pipeline timestamps '[yyyy-mm-ddTHH:MM:SS.mmmZ] ' before the Kafka tools layout; a healthy 4.0 producer (startup, topic auto-creation, close)",
               "kafka-clients 4.0", [],
               recs, JAVA["kafka-log4j"], JAVA["kafka-log4j"], [Prefix(jenkins)]))

    rng = random.Random(219)
    log = KLog()
    cons = "consumer-audit-1"
    t = t_(2024, 5, 2, 12, 1, 40)
    d = 0.05
    while t < t_(2024, 5, 2, 12, 4, 30):
        log.add(t, "INFO", NETWORK, f"[Consumer clientId={cons}, groupId=audit] Node 1 disconnected.", "org.springframework.kafka.KafkaListenerEndpointContainer#0-0-C-1")
        log.add(t + ms(1), "WARN", NETWORK, f"[Consumer clientId={cons}, groupId=audit] Connection to node 1 (kafka-1/10.0.0.6:9092) could not be established. Broker may not be available.",
                "org.springframework.kafka.KafkaListenerEndpointContainer#0-0-C-1")
        d = min(1.0, d * 2)
        t += sec(d * rng.uniform(0.8, 1.2))
    add(Corpus("38-kafka-consumer-only-decoy", "https://github.com/spring-attic/spring-cloud-stream-binder-kafka/issues/671",
               "Spring Boot 2 layout; a consumer (not a producer) that cannot reach node 1",
               "kafka-clients 3.x consumer", [],
               log.recs, JAVA["sb2"], JAVA["kafka-log4j"]))

    rng = random.Random(220)
    recs = kafka_callback(rng, t0=t_(2024, 6, 11, 8, 6), client="producer-1", count=5, tp="orders-1",
                          frame="com.example.orders.OrderCallback.onCompletion(OrderCallback.java:42)",
                          exc='java.lang.IllegalStateException: ack store closed')
    recs += kafka_startup(rng, t_(2024, 6, 11, 8, 5, 10), "producer-1", "3.6.1")
    add(Corpus("39-kafka-markdown-indented", "https://github.com/apache/kafka/pull/12028",
               "a Markdown indented code block (four spaces) of the Kafka tools layout, stack frames indented with two spaces",
               "kafka-clients 3.6", ["kafka.callback-error"],
               recs, JAVA["kafka-log4j"], JAVA["kafka-log4j"], [Indent(4)], trace="none"))
    for r in C[-1].recs:
        r.trace = [("  " + x.lstrip("\t")) if x.startswith("\tat") else x for x in r.trace]

    rng = random.Random(221)
    recs = kafka_outage(rng, version="3.1", client="producer-1", node=7, address="usiadansetl05/10.30.4.7:9092",
                        start=t_(2024, 11, 19, 21, 7, 41), minutes=3, tps=["etl-batches-3"], expire=[("etl-batches-3", 11)],
                        app_logger="com.example.etl.BatchWriter", what="batch", style="get", threads=["pool-2-thread-1", "pool-2-thread-2"])
    add(Corpus("40-kafka-notepadpp-find", "https://github.com/confluentinc/librdkafka/issues/918",
               "Notepad++ 'Find in Files' results ('\\tLine N: ' before each hit) over a Kafka tools layout file",
               "kafka-clients 3.1", ["kafka.broker-unreachable", "kafka.delivery-timeout"],
               recs, JAVA["kafka-log4j"], JAVA["kafka-log4j"],
               post=npp_hits(r"WARN|ERROR|Exception", r"C:\logs\etl-writer.log")))

    rng = random.Random(222)
    recs = kafka_outage(rng, version="3.3", client="producer-1", node=1, address="kafka-1/10.9.0.4:9092",
                        start=t_(2024, 2, 9, 4, 40, 2), minutes=3, tps=["clicks-0"], expire=[("clicks-0", 7)],
                        app_logger="com.example.clicks.Collector", what="click", style="callback", buffer=4)
    add(Corpus("41-kafka-rg-n-path", "ripgrep 'rg -n PATTERN dir/' output (path:line:text); layout as in https://github.com/zendesk/maxwell/issues/1368",
               "rg -n 'path:N:' prefixes (matching lines only) of a logback %d{HH:mm:ss,SSS} %-5p %c{1} - %m%n file",
               "kafka-clients 3.3", ["kafka.broker-unreachable", "kafka.delivery-timeout", "kafka.buffer-exhausted"],
               recs, JAVA["abs-c1"], JAVA["kafka-log4j"], post=rg_lines(r"WARN|ERROR|Exception", "logs/collector.log")))

    rng = random.Random(223)
    recs = kafka_outage(rng, version="2.8", client="producer-4", node=5, address="b-5.msk.internal/10.0.7.5:9094",
                        start=t_(2024, 11, 12, 11, 9, 25), minutes=3, tps=["COPA.TERMINAL-0"], expire=[("COPA.TERMINAL-0", 7)],
                        app_logger="com.tibco.bw.palette.kafka.runtime.SendActivity", what="message", style="inline",
                        threads=["pool-22-thread-6"])
    add(Corpus("42-kafka-cat-n-gutter", "coreutils 'cat -n' gutter; layout as in https://github.com/bitnami/charts/issues/8525",
               "cat -n line-number gutter (right-aligned number, tab) before %d{yyyy-MM-dd'T'HH:mm:ss.SSS} %-5p [%t] %c{1.} - %m%n",
               "kafka-clients 2.8", ["kafka.broker-unreachable", "kafka.delivery-timeout"],
               recs, JAVA["iso-t-c1dot"], JAVA["kafka-log4j"], post=cat_n))

    rng = random.Random(224)
    recs = kafka_outage(rng, version="3.8", client="producer-2", node=4, address="kafka-4/10.3.0.14:9092",
                        start=t_(2024, 9, 17, 14, 2, 10), minutes=3, tps=["payments-3"], expire=[("payments-3", 3)],
                        app_logger="com.example.pay.PaymentEvents", what="payment", style="get", threads=["exec-1", "exec-2"])
    add(Corpus("43-kafka-prompt-docker-logs", "https://github.com/litmuschaos/test-tools/pull/157",
               "a fish prompt and the command ('user@host ~> docker logs -f NAME') in a fenced block before the Kafka tools layout",
               "kafka-clients 3.8", ["kafka.broker-unreachable", "kafka.delivery-timeout"],
               recs, JAVA["kafka-log4j"], JAVA["kafka-log4j"], [Fence("bash")],
               extra_head=[]))
    C[-1].wraps[0].head = ["```bash", "ops@bastion ~> docker logs -f payments-api"]

    # ------------------------------------------------------------------ sarama
    sc = scen("blackhole", seed=301, start=t_(2024, 12, 28, 21, 33, 44), topic="clicks", partition=0,
              addr="192.168.20.61:9092", ip="192.168.20.61", client_ip="192.168.20.1", dial=30, read=3, retry_max=1, errors=2, app="clicks")
    add(Corpus("50-sarama-details-fence", "https://github.com/IBM/sarama/issues/1865",
               "GitHub <details> block with a code fence around Go's log with the '[sarama] ' prefix and LstdFlags; the application's own lines unprefixed",
               "sarama 1.27", ["sarama.retry-redial-stall"],
               sarama(sc), go_golog("[sarama] "), G_TWIN, [Fence(details=True)]))

    sc = scen("close", seed=302, start=t_(2024, 7, 10, 10, 6, 22), topic="clicks_0709", partition=0,
              addr="172.16.40.27:9092", ip="172.16.40.27", client_ip="172.16.40.3", retry_max=3, errors=4, app="clicks")
    recs = sarama(sc)
    for r in recs:
        if r.src == "app" and r.msg.startswith("message "):
            r.msg = f"offset: {r.fields['offset']}  partitions: {r.fields['partition']}  value: click {r.fields['offset'] - 8000}"

    def plain_app(prefix):
        base = go_golog(prefix)
        return lambda r: base(r) if r.src == "lib" else r.msg
    add(Corpus("51-sarama-padded-prefix", "https://github.com/IBM/sarama/issues/1126",
               "Go's log with a padded '[sarama]      ' prefix; the application's fmt.Println lines have no timestamp",
               "sarama 1.17", ["sarama.retry-redial-stall"],
               recs, plain_app("[sarama]      "), G_TWIN))

    sc = scen("mute", seed=303, start=t_(2024, 6, 11, 17, 46, 40), topic="ledger_tx", partition=3,
              addr="10.141.8.52:9093", ip="10.141.8.52", client_ip="10.141.8.10", read=10, retry_max=2, errors=1, app="ledger")
    add(Corpus("52-sarama-glued-prefix", "https://github.com/IBM/sarama/issues/1965",
               "Go's log with the prefix '[sarama]' glued to the date (no space)",
               "sarama 1.29", ["sarama.retry-redial-stall"],
               sarama(sc), go_golog("[sarama]"), G_TWIN, [Fence()]))

    sc = scen("blackhole", seed=304, start=t_(2024, 10, 10, 9, 7, 10), topic="c41f9a02-6e7b-4d35-9a8e-2b17d05e63f1", partition=0,
              addr="kafka-4.kafka.svc:9092", ip="10.4.8.14", client_ip="10.4.3.77", dial=10, read=10, retry_max=3, errors=1, app="ingest")
    add(Corpus("53-sarama-logrus-text", "https://github.com/IBM/sarama/issues/2998",
               "logrus text formatter time=\"...\" level=... msg=\"...\\n\" client=Sarama (sarama's newline escaped inside msg); application lines as logrus fields",
               "sarama 1.43", ["sarama.retry-redial-stall"],
               sarama(sc), go_logrus, G_TWIN, [Fence(details=True)]))

    sc = scen("blackhole", seed=305, start=t_(2024, 5, 2, 10, 15, 31), topic="spans", partition=2,
              addr="kafka-0.kafka:9092", ip="10.12.0.40", client_ip="10.12.3.3", dial=5, read=5, retry_max=1, errors=1, app="tracer")
    add(Corpus("54-sarama-zap-console", "zap's development console encoder (go.uber.org/zap NewDevelopmentConfig: ISO8601 time, capital level, tab-separated); adapter as in knative's SaramaZapLogger",
               "zap console encoder: time, LEVEL, logger name, caller and message separated by tabs, fields as trailing JSON",
               "sarama 1.38", ["sarama.retry-redial-stall"],
               sarama(sc), go_zap_console, G_TWIN))

    sc = scen("blackhole", seed=306, start=t_(2024, 8, 27, 15, 19, 29), topic="jaeger-spans", partition=1,
              addr="kafka:9092", ip="10.0.3.3", client_ip="10.0.3.9", dial=30, read=30, retry_max=1, errors=1, app="jaeger-collector")
    recs = [r for r in sarama(sc) if r.src == "app"]  # sarama's Logger is off (its default)
    for r in recs:
        if r.fields.get("msg") == "send failed":
            r.fields["msg"] = r.fields["error"]
            r.fields.pop("error", None)
    add(Corpus("55-sarama-zap-json-app-only", "https://github.com/jaegertracing/jaeger/pull/1023",
               "zap production JSON ({\"level\",\"ts\" epoch seconds,\"caller\",\"msg\",\"stacktrace\"}), only the application's lines: sarama's Logger is off",
               "sarama 1.x (Logger off)", ["sarama.retry-redial-stall"],
               recs, go_zap_json_epoch("kafka"), G_TWIN))

    sc = scen("close", seed=307, start=t_(2024, 4, 12, 19, 14, 40), topic="txn-events", partition=0,
              addr="b-1.our-server:9094", ip="10.80.1.11", client_ip="10.80.4.2", retry_max=3, errors=3, app="txn")
    add(Corpus("56-sarama-zerolog-json", "https://github.com/IBM/sarama/issues/2859 + https://github.com/IBM/sarama/issues/3037",
               "zerolog JSON ({\"level\",\"time\" with offset,\"caller\",\"message\"}); sarama's lines keep their trailing newline inside 'message'",
               "sarama 1.43", ["sarama.retry-redial-stall"],
               sarama(sc), go_zerolog_json, G_TWIN))

    sc = scen("mute", seed=308, start=t_(2024, 3, 1, 15, 50, 0), topic="metrics", partition=5,
              addr="10.2.0.9:9092", ip="10.2.0.9", client_ip="10.2.0.30", read=5, retry_max=3, errors=1, app="metrics")
    add(Corpus("57-sarama-zerolog-console", "https://pkg.go.dev/github.com/karmi/consolelog (zerolog ConsoleWriter output) with TimeFormat RFC 3339",
               "zerolog ConsoleWriter: 'RFC3339 LVL message key=value' (three-letter levels)",
               "sarama 1.42", ["sarama.retry-redial-stall"],
               sarama(sc), go_zerolog_console, G_TWIN))

    sc = scen("mute", seed=309, start=t_(2024, 3, 12, 19, 8, 42), topic="stock", partition=0,
              addr="localhost:9092", ip="127.0.0.1", client_ip="127.0.0.1", read=3, retry_max=3, errors=1, app="changefeed")
    add(Corpus("58-sarama-cockroach-log", "https://github.com/cockroachdb/cockroach/pull/35661",
               "CockroachDB's log format 'I190312 19:08:42.416833 1948 file.go:680  [tags] msg' (glog-like with year, two spaces, bracketed tags) carrying sarama's lines",
               "sarama 1.20 (vendored)", ["sarama.retry-redial-stall"],
               sarama(sc), go_cockroach, G_TWIN))

    sc = scen("blackhole", seed=310, start=t_(2024, 5, 20, 3, 12, 8), topic="audit", partition=4,
              addr="kafka-1.kafka.svc:9092", ip="10.96.4.21", client_ip="10.96.9.8", dial=10, read=3, retry_max=1, errors=2, app="auditd")
    add(Corpus("59-sarama-klog-kubectl-prefix", "https://github.com/geerlingguy/ansible-for-kubernetes/issues/75 (kubectl logs --prefix) + klog's header",
               "kubectl logs --prefix '[pod/NAME/CONTAINER] ' before klog 'I0520 03:12:08.123456       1 file.go:41] msg'",
               "sarama 1.40", ["sarama.retry-redial-stall"],
               sarama(sc), go_klog, G_TWIN, [Prefix(lambda r, f: "[pod/auditd-6d8f9c7b5-kq2vx/auditd] ")]))

    rng = random.Random(311)
    recs = []
    t = t_(2024, 5, 11, 11, 37, 2)
    recs.append(Rec(t, "NOTICE", "relay", "", 'kafkaMdm "metrics": now connected to kafka', src="app"))
    for i in range(24):
        t += ms(rng.randint(20, 40))
        recs.append(Rec(t, "ERROR", "relay", "", "Write to kafka failed: %!(EXTRA *sarama.ProducerError=kafka: Failed to produce message to topic metrics: dial tcp: lookup kafka-7f3a on 10.0.0.2:53: no such host)",
                        known=True, src="app"))
        if i % 6 == 5:
            t += sec(rng.uniform(1, 2))
            recs.append(Rec(t, "WARN", "relay", "", f'KafkaMdm "metrics": failed to submit data: kafka: Failed to deliver {56 + i} messages. will try again in 100ms. (this attempt took 1.145096886s)', src="app"))
    add(Corpus("60-sarama-go-logging-mangled", "https://github.com/grafana/carbon-relay-ng/pull/187 + https://github.com/grafana/carbon-relay-ng/issues/186",
               "op/go-logging 'HH:MM:SS.micro ▶ LEVL  msg' (time only); Go's mangled printf %!(EXTRA *sarama.ProducerError=...) around sarama's error",
               "sarama 1.x via an application logger", [],
               recs, go_logging, G_TWIN, note="Fast failures (DNS): no stall to report."))

    recs = []
    t = t_(2024, 3, 14, 9, 21, 30)
    old = [
        ("lib", "Initializing new client", True), ("lib", "Fetching metadata from broker kafka-1:9092", True),
        ("lib", "Connected to broker kafka-1:9092", True), ("lib", "Registered new broker #3 at kafka-3:9092", True),
        ("lib", "Successfully initialized new client", True),
    ]
    for src, text, k in old:
        t += ms(3)
        recs.append(Rec(t, "INFO", "Sarama" if src == "lib" else "Pump", "", text, known=k, src=src))
    for i in range(6):
        t += ms(rng.randint(100, 200))
        recs.append(Rec(t, "INFO", "Pump", "", "sending batch", src="app"))
    # pre-1.0 texts (sarama at cb416e94, 2014-11): patterns/packs/sarama.toml, section 'real-shapes corpus'
    seq = [("Failed to connect to broker kafka-3:9092", True), ("dial tcp 10.9.0.13:9092: connection refused", False),
           ("Unexpected error from GetMetadata, closing broker: dial tcp 10.9.0.13:9092: connection refused", True),
           ("Disconnecting Broker 3", True), ("Fetching metadata from broker kafka-1:9092", True),
           ("Failed to close connection to broker kafka-3:9092.", True), ("kafka: broker: not connected", False),
           ("producer/leader state change to [retrying] on clicks/1", True), ("producer/leader state change to [flushing] on clicks/1", True),
           ("producer/leader state change to [normal] on clicks/1", True)]
    for text, k in seq:
        t += ms(rng.randint(1, 4))
        recs.append(Rec(t, "INFO", "Sarama", "", text, known=k, src="lib"))
        if rng.random() < 0.5:
            recs.append(Rec(t + ms(1), "INFO", "Pump", "", "sending batch", src="app"))
    add(Corpus("61-sarama-2014-quoted", "https://github.com/IBM/sarama/issues/213",
               "Markdown '> ' quote of Go's log with '[Sarama] ' and the application's own '[Name] ' prefixes; sarama's pre-1.0 texts (Nov 2014)",
               "sarama pre-1.0 (2014-11)", ["sarama.retry-redial-stall"],
               recs, lambda r: f"[{r.logger}] {r.t:%Y/%m/%d %H:%M:%S} {r.msg}", G_TWIN, [Quote()],
               note=("A broker that refuses, in the oldest wording: the chain fails at once and the partition recovers; "
                     "docs/findings/sarama.retry-redial-stall.md counts that as its 'refused' kind (low), as it does for "
                     "the same chain in 1.2x wording. Whole seconds only: the stall cannot be measured.")))

    def pre120(text: str) -> str:
        return re.sub(r"got error from broker -?\d+ while fetching metadata: ", "got error from broker while fetching metadata: ", text)
    sc = scen("blackhole", seed=312, start=t_(2024, 8, 6, 8, 28, 12), topic="alerts", partition=1,
              addr="kafka-2.kafka-brokers.streaming.svc.cluster.local:9092", ip="172.20.14.66", client_ip="172.20.9.4",
              dial=30, read=5, retry_max=3, errors=1, app="alerter")
    recs = sarama(sc, edit=pre120)
    for r in recs:
        if "got error from broker while fetching metadata" in r.msg:
            r.known = True  # the pre-1.20 text (no broker id): patterns/packs/sarama.toml, section 'real-shapes corpus'
    add(Corpus("62-sarama-1.19-no-broker-id", "https://github.com/IBM/sarama/issues/1146",
               "Go's log '[sarama] ' + LstdFlags; sarama before 1.20: 'client/metadata got error from broker while fetching metadata: err' without the broker id",
               "sarama 1.19", ["sarama.retry-redial-stall"],
               recs, go_golog("[sarama] "), G_TWIN))

    sc = scen("none", seed=313, start=t_(2024, 2, 3, 7, 0, 1), topic="heartbeats", partition=0,
              addr="kafka-a:9092", ip="10.9.9.9", client_ip="10.9.9.20", before=40, app="beacon")
    add(Corpus("63-sarama-healthy-shortfile", "Go's log with Lmicroseconds|Lshortfile as in the go-log layout's samples; healthy decoy",
               "Go's log 'yyyy/mm/dd HH:MM:SS.micro file.go:NN: msg' (Lshortfile) for both sarama and the application",
               "sarama 1.41", [],
               sarama(sc), lambda r: f"{r.t:%Y/%m/%d %H:%M:%S}.{r.t.microsecond:06d} {'config.go:42' if r.src == 'lib' else 'main.go:77'}: {r.msg}", G_TWIN))

    sc = scen("close", seed=314, start=t_(2024, 9, 9, 12, 0, 5), topic="carts", partition=2,
              addr="kafka:9092", ip="172.22.0.4", client_ip="172.22.0.8", retry_max=1, errors=2, app="carts")
    add(Corpus("64-sarama-compose-prefix", "https://github.com/element-hq/dendrite/issues/1506 (compose prefix)",
               "docker compose 'carts-api-1  | ' before Go's log with '[sarama] '",
               "sarama 1.42", ["sarama.retry-redial-stall"],
               sarama(sc), go_golog("[sarama] ", micro=True), G_TWIN, [compose("carts-api-1", 13)]))

    sc = scen("blackhole", seed=315, start=t_(2024, 5, 2, 10, 20, 1), topic="orders", partition=6,
              addr="10.5.0.7:9092", ip="10.5.0.7", client_ip="10.5.0.33", dial=8, read=4, retry_max=1, errors=1, app="orders")
    add(Corpus("65-sarama-journald-short-precise", "journalctl -o short-precise (systemd journalctl(1))",
               "journalctl short-precise 'Mmm dd HH:MM:SS.micro host ident[pid]: ' before Go's log with '[sarama] '",
               "sarama 1.42", ["sarama.retry-redial-stall"],
               sarama(sc), go_golog("[sarama] "), G_TWIN,
               [Prefix(lambda r, f: f"{syslog_stamp(r.t)}.{r.t.microsecond:06d} ord-2 orders-api[912]: ")]))

    sc = scen("mute", seed=316, start=t_(2024, 6, 14, 1, 2, 3), topic="ledger", partition=1,
              addr="10.6.0.21:9092", ip="10.6.0.21", client_ip="10.6.0.40", read=6, retry_max=2, errors=1, app="ledger")

    seqnum = iter(range(0x16c57, 0x16c57 + 100000))  # journald's cursor: the entry's sequence number

    def journal_json(text, r):
        return {"__CURSOR": f"s=6c1f;i={next(seqnum):x}", "__REALTIME_TIMESTAMP": str(int(r.t.timestamp() * 1_000_000)),
                "_HOSTNAME": "ledger-1", "SYSLOG_IDENTIFIER": "ledger", "_PID": "744", "PRIORITY": "3" if r.level == "ERROR" else "6",
                "_SYSTEMD_UNIT": "ledger.service", "MESSAGE": text}
    add(Corpus("66-sarama-journald-json", "journalctl -o json (systemd journalctl(1), JOURNAL_EXPORT_FORMATS)",
               "journalctl -o json: one object per line, the text in MESSAGE, time in __REALTIME_TIMESTAMP (microseconds)",
               "sarama 1.42", ["sarama.retry-redial-stall"],
               sarama(sc), go_golog("[sarama] "), G_TWIN, [JsonLine(journal_json)]))
    return C


# ============================================================================================ output


def _toml_str(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def write(out: Path, twins: Path | None) -> list[Corpus]:
    corpus = build()
    names = [c.name for c in corpus]
    assert len(names) == len(set(names)), "duplicate names"
    manifest = ["# The real-shapes corpus: one file per real excerpt's shape (see make_corpus.py, which writes this).",
                "# known / known_lines: the lines that carry a message the packs have a pattern for (marked by hand",
                "# where each record is built); findings: what a correct tool should find in that file alone.", ""]
    for c in corpus:
        text, known = c.render()
        (out / f"{c.name}.log").write_text(text, encoding="utf-8")
        if twins:
            ttext, tknown = c.render(twin=True)
            (twins / f"{c.name}.log").write_text(ttext, encoding="utf-8")
            (twins / f"{c.name}.known").write_text(" ".join(map(str, tknown)) + "\n")
        manifest += ["[[file]]", f"name = {_toml_str(c.name + '.log')}", f"source = {_toml_str(c.source)}",
                     f"shape = {_toml_str(c.shape)}", f"system = {_toml_str(c.system)}", f"known = {len(known)}",
                     f"known_lines = [{', '.join(map(str, known))}]",
                     f"findings = [{', '.join(_toml_str(f) for f in c.findings)}]"]
        if c.note:
            manifest.append(f"note = {_toml_str(c.note)}")
        manifest.append("")
    (out / "manifest.toml").write_text("\n".join(manifest), encoding="utf-8")
    return corpus


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=HERE)
    ap.add_argument("--twins", type=Path, default=None, help="also write each file's clean twin (and its known lines) here")
    a = ap.parse_args(argv)
    if a.twins:
        a.twins.mkdir(parents=True, exist_ok=True)
    corpus = write(a.out, a.twins)
    print(f"wrote {len(corpus)} files to {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
