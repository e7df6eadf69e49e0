"""Layouts: every built-in sample, the conversion-pattern compiler on real-world patterns, detection."""

from __future__ import annotations

import datetime as dt
import json

import polars as pl
import pytest

from logsleuth.errors import PatternError
from logsleuth.ingest.layouts.catalog import builtin_layouts, from_conversion
from logsleuth.ingest.layouts.detect import detect
from logsleuth.ingest.records import full_regex
from logsleuth.ingest.timeparse import stamp_expr

LAYOUTS = list(builtin_layouts())
SAMPLES = [(lay, i, s) for lay in LAYOUTS for i, s in enumerate(lay.samples)]


def parse(layout, line: str) -> dict:
    df = pl.DataFrame({"text": [line]})
    row = df.select(pl.col("text").str.extract_groups(full_regex(layout))).to_series().to_list()[0]
    starts = df.select(pl.col("text").str.contains(layout.start_regex)).item() if layout.start_regex else True
    assert starts, f"{layout.id}: start regex does not match {line!r}"
    return row


def utc_of(layout, ts_text: str, tz: str = "UTC") -> dt.datetime | None:
    aware, naive, _ = stamp_expr(pl.col("t"), layout.time, 2024)
    df = pl.DataFrame({"t": [ts_text]}).select(a=aware, n=naive)
    a, n = df.row(0)
    if a is not None:
        return a.astimezone(dt.timezone.utc).replace(tzinfo=None)
    return n


@pytest.mark.parametrize("layout,i,sample", SAMPLES, ids=[f"{lay.id}-{i}" for lay, i, _ in SAMPLES])
def test_builtin_layout_sample(layout, i, sample):
    got = parse(layout, sample.line)
    for key, want in sample.expect.items():
        if key == "utc":
            assert got.get("ts"), f"{layout.id} sample {i}: no ts"
            t = utc_of(layout, got["ts"])
            assert t is not None, f"{layout.id} sample {i}: ts {got['ts']!r} does not parse"
            assert t.isoformat(timespec="milliseconds") + "Z" == want
        else:
            assert got.get(key) == want, f"{layout.id} sample {i}: {key} = {got.get(key)!r}, want {want!r}"


def test_every_builtin_layout_with_ts_parses_its_samples():
    for lay in LAYOUTS:
        if lay.time is None:
            continue
        for s in lay.samples:
            got = parse(lay, s.line)
            if got.get("ts"):
                aware, naive, tod = stamp_expr(pl.col("t"), lay.time, 2024)
                row = pl.DataFrame({"t": [got["ts"]]}).select(a=aware, n=naive, d=tod).row(0)
                assert any(v is not None for v in row), f"{lay.id}: cannot parse {got['ts']!r}"


# Real-world conversion patterns (reference notes: Pulsar conf/log4j2.yaml, Kafka tools-log4j,
# Spring Boot defaults.xml, logback/log4j documentation defaults) with a line each printed.
REAL_WORLD = [
    (
        "%d{HH:mm:ss.SSS} [%t] %-5level %logger{36} - %msg%n",
        "12:00:02.950 [pulsar-web-41-5] INFO  org.apache.pulsar.broker.namespace.OwnedBundle - Disabling ownership: public/default/0x40000000_0x80000000",
        {"thread": "pulsar-web-41-5", "level": "INFO", "logger": "org.apache.pulsar.broker.namespace.OwnedBundle", "msg": "Disabling ownership: public/default/0x40000000_0x80000000"},
        None,
    ),
    (
        "%d{ISO8601_OFFSET_DATE_TIME_HHMM} [%t] %-5level %logger{36} - %msg%n",
        "2023-09-12T07:17:05,388+0000 [pulsar-io-4-1] WARN  org.apache.pulsar.broker.service.ServerCnx - [/127.0.0.6:37543] Failed to add producer",
        {"level": "WARN", "msg": "[/127.0.0.6:37543] Failed to add producer"},
        "2023-09-12T07:17:05.388",
    ),
    (
        "[%d] %p %m (%c)%n",
        "[2024-05-02 10:15:30,001] WARN [Producer clientId=producer-1] Connection to node 2 (kafka-2/10.0.0.7:9092) could not be established. Broker may not be available. (org.apache.kafka.clients.NetworkClient)",
        {"level": "WARN", "logger": "org.apache.kafka.clients.NetworkClient", "msg": "[Producer clientId=producer-1] Connection to node 2 (kafka-2/10.0.0.7:9092) could not be established. Broker may not be available."},
        "2024-05-02T10:15:30.001",
    ),
    (
        "%d{yyyy-MM-dd HH:mm:ss.SSS} %5p ${PID} --- [%t] %-40.40logger{39} : %m%n%wEx",
        "2024-05-02 10:15:31.204 ERROR 4242 --- [ad | producer-1] o.a.k.c.p.internals.ProducerBatch        : [Producer clientId=producer-1] Error executing user-provided callback on message for topic-partition 'orders-3'",
        {"level": "ERROR", "pid": "4242", "thread": "ad | producer-1", "logger": "o.a.k.c.p.internals.ProducerBatch"},
        "2024-05-02T10:15:31.204",
    ),
    (
        "%clr(%d{${LOG_DATEFORMAT_PATTERN:-yyyy-MM-dd HH:mm:ss.SSS}}){faint} %clr(${LOG_LEVEL_PATTERN:-%5p}) %clr(${PID:- }){magenta} %clr(---){faint} %clr([%15.15t]){faint} %clr(%-40.40logger{39}){cyan} %clr(:){faint} %m%n${LOG_EXCEPTION_CONVERSION_WORD:-%wEx}",
        "2024-05-02 10:15:31.204  WARN 4242 --- [ad | producer-1] o.a.k.clients.producer.internals.Sender  : [Producer clientId=producer-1] Got error produce response",
        {"level": "WARN", "thread": "ad | producer-1", "logger": "o.a.k.clients.producer.internals.Sender"},
        "2024-05-02T10:15:31.204",
    ),
    (
        "%d{yyyy-MM-dd'T'HH:mm:ss.SSSXXX} %5p ${PID} --- [order-svc] [%t] ${LOG_CORRELATION_PATTERN:-}%-40.40logger{39} : %m%n%wEx",
        "2024-05-02T10:15:31.204+02:00  WARN 4242 --- [order-svc] [ad | producer-1] o.a.k.c.p.internals.Sender               : [Producer clientId=producer-1] retrying",
        {"level": "WARN", "thread": "ad | producer-1", "logger": "o.a.k.c.p.internals.Sender", "msg": "[Producer clientId=producer-1] retrying"},
        "2024-05-02T08:15:31.204",
    ),
    (
        "%clr(%d{${LOG_DATEFORMAT_PATTERN:-yyyy-MM-dd'T'HH:mm:ss.SSSXXX}}){faint} %clr(${LOG_LEVEL_PATTERN:-%5p}) %clr(${PID:- }){magenta} %clr(--- %esb(){APPLICATION_NAME}%esb{APPLICATION_GROUP}[%15.15t] ${LOG_CORRELATION_PATTERN:-}){faint}%clr(%-40.40logger{39}){cyan} %clr(:){faint} %m%n${LOG_EXCEPTION_CONVERSION_WORD:-%wEx}",
        "2024-05-02T10:15:31.204Z  INFO 4242 --- [order-svc] [           main] c.e.orders.OrderServiceApplication       : Started",
        {"level": "INFO", "thread": "main", "logger": "c.e.orders.OrderServiceApplication", "msg": "Started"},
        "2024-05-02T10:15:31.204",
    ),
    (
        "%d{HH:mm:ss.SSS} [%thread] %-5level %logger{36} - %msg%n",
        "10:15:31.204 [main] DEBUG com.example.App - hello - world",
        {"thread": "main", "level": "DEBUG", "logger": "com.example.App", "msg": "hello - world"},
        None,
    ),
    (
        "%d %-5p [%c] (%t) %m%n",
        "2024-05-02 10:15:31,204 INFO  [org.apache.kafka.clients.producer.KafkaProducer] (main) Closing the Kafka producer with timeoutMillis = 0 ms.",
        {"level": "INFO", "logger": "org.apache.kafka.clients.producer.KafkaProducer", "thread": "main", "msg": "Closing the Kafka producer with timeoutMillis = 0 ms."},
        "2024-05-02T10:15:31.204",
    ),
    (
        "%d{yyyy-MM-dd HH:mm:ss} %-5p %c{1}:%L - %m%n",
        "2024-05-02 10:15:31 WARN  NetworkClient:770 - Connection to node -1 could not be established. Broker may not be available.",
        {"level": "WARN", "logger": "NetworkClient", "srcline": "770", "msg": "Connection to node -1 could not be established. Broker may not be available."},
        "2024-05-02T10:15:31.000",
    ),
    (
        "%-4r [%t] %-5p %c %x - %m%n",
        "467  [main] INFO  org.apache.kafka.clients.producer.ProducerConfig  - ProducerConfig values:",
        {"thread": "main", "level": "INFO", "logger": "org.apache.kafka.clients.producer.ProducerConfig", "msg": "ProducerConfig values:"},
        None,
    ),
    (
        "%date{ISO8601} %level [%thread] %logger{10} [%file:%line] %msg%n",
        "2024-05-02 10:15:31,204 ERROR [kafka-producer-network-thread | producer-1] o.a.k.c.p.i.ProducerBatch [ProducerBatch.java:214] Error executing user-provided callback",
        {"level": "ERROR", "thread": "kafka-producer-network-thread | producer-1", "srcfile": "ProducerBatch.java", "srcline": "214"},
        "2024-05-02T10:15:31.204",
    ),
    (
        "%d{yyyy-MM-dd'T'HH:mm:ss.SSSZ} %highlight(%-5level) %X{traceId} %logger{0} - %msg%n",
        "2024-05-02T10:15:31.204+0800 WARN  4bf92f3577b34da6 Sender - retrying",
        {"level": "WARN", "mdc_traceId": "4bf92f3577b34da6", "logger": "Sender", "msg": "retrying"},
        "2024-05-02T02:15:31.204",
    ),
    (
        "%d{ABSOLUTE} %-5p [%c{1}] %m%n",
        "10:15:31,204 INFO  [ServerCnx] New connection from /10.0.0.5:51234",
        {"level": "INFO", "logger": "ServerCnx", "msg": "New connection from /10.0.0.5:51234"},
        None,
    ),
    (
        "%d{dd MMM yyyy HH:mm:ss,SSS} %p %t %c - %m%n",
        "02 May 2024 10:15:31,204 INFO main com.example.App - started",
        {"level": "INFO", "thread": "main", "logger": "com.example.App", "msg": "started"},
        "2024-05-02T10:15:31.204",
    ),
]


@pytest.mark.parametrize("pattern,line,fields,utc", REAL_WORLD, ids=[p[:40] for p, *_ in REAL_WORLD])
def test_conversion_pattern_compiles_and_parses(pattern, line, fields, utc):
    lay = from_conversion(pattern)
    got = parse(lay, line)
    for k, v in fields.items():
        assert got.get(k) == v, f"{k}: {got.get(k)!r} != {v!r}\nregex: {lay.regex}"
    if utc:
        t = utc_of(lay, got["ts"])
        assert t is not None, f"ts {got['ts']!r} did not parse with {lay.time}"
        assert t.isoformat(timespec="milliseconds") == utc


def test_conversion_pattern_zone_option():
    lay = from_conversion("%d{yyyy-MM-dd HH:mm:ss, GMT+8} %-5p %m%n")
    assert lay.time.zone == "Etc/GMT-8"
    lay = from_conversion('%date{"HH:mm:ss,SSS", UTC} %msg%n')
    assert lay.time.zone == "UTC" and not lay.time.has_date


@pytest.mark.parametrize(
    "bad",
    ["", "%d{HH:mm} %p", "%foo %m%n", "%highlight %m", "%", "%d{HH:mm:ss} %(%m"],
)
def test_conversion_pattern_errors_are_pattern_errors(bad):
    with pytest.raises(PatternError):
        from_conversion(bad)


def _pick(lines: list[str]) -> str:
    return detect(lines, LAYOUTS).layout.id


def test_detection_picks_each_layout_from_its_samples():
    for lay in LAYOUTS:
        if lay.is_fallback:
            continue
        lines = [s.line for s in lay.samples] * 3
        assert _pick(lines) == lay.id


def test_detection_ignores_stack_traces_and_falls_back():
    lines = [
        "[2024-05-02 10:15:31,204] ERROR [Producer clientId=producer-1] Error executing user-provided callback on message for topic-partition 'orders-3' (org.apache.kafka.clients.producer.internals.ProducerBatch)",
        "java.lang.IllegalStateException: boom",
        "\tat com.example.OrderCallback.onCompletion(OrderCallback.java:42)",
        "\tat org.apache.kafka.clients.producer.internals.ProducerBatch.completeFutureAndFireCallbacks(ProducerBatch.java:273)",
    ]
    assert _pick(lines) == "kafka-log4j"
    assert _pick(["hello world", "another line"]) == "message-only"


# ----------------------------------------------------------------------------- through the CLI

_T = "kafka-producer-network-thread | producer-1"
_C = "org.apache.kafka.clients.NetworkClient"
_M = "[Producer clientId=producer-1] Connection to node 2 (kafka-2/10.0.0.7:9092) could not be established. Broker may not be available."
_LINE = f"10:15:31.204 [{_T}] WARN  {_C} - {_M}"

# log4j2's brace form of wrappers (and logback's parenthesis form, which must keep working): each
# prints _LINE
WRAPPERS = [
    "%d{HH:mm:ss.SSS} [%t] %highlight{%-5level} %logger{36} - %msg%n",
    "%d{HH:mm:ss.SSS} [%t] %highlight{%-5level}{ERROR=red, WARN=yellow} %logger{36} - %msg%n",
    "%d{HH:mm:ss.SSS} [%t] %highlight{%-5level %logger{36}}{ERROR=red} - %msg%n",
    "%d{HH:mm:ss.SSS} [%t] %style{%-5level}{bright} %c - %m%n",
    "%d{HH:mm:ss.SSS} [%t] %-5level %c - %enc{%m}{CRLF}%n",
    "%d{HH:mm:ss.SSS} [%t] %-5level %c - %replace{%m}{[\\r\\n]+}{ }%n",
    "%d{HH:mm:ss.SSS} [%t] %-5level %c - %maxLen{%m}{300}%n",
    "%d{HH:mm:ss.SSS} [%t] %-5level %equals{[%marker] }{[] }{}%c - %m%n",
    "%d{HH:mm:ss.SSS} [%t] %-5level %notEmpty{[%X{trace}] }%c - %m%n",
    "%d{HH:mm:ss.SSS} [%t] %highlight(%-5level) %c - %m%n",
    "%d{HH:mm:ss.SSS} [%t] %-5level %c - %replace(%msg){'\\t', ' '}%n",
]


@pytest.mark.parametrize("pattern", WRAPPERS)
def test_wrapper_forms_parse_through_the_cli(cli, tmp_path, pattern):
    p = tmp_path / "app.log"
    p.write_text(_LINE + "\n")
    r = cli("events", p, "--tz", "UTC", "--date", "2024-05-02", "--format", "ndjson", "--layout-pattern", pattern)
    assert r.code == 0, r
    (ev,) = [json.loads(x) for x in r.out.splitlines()]
    assert ev["event"] == "connection_failed" and ev["ts"] == "2024-05-02T10:15:31.204Z"
    assert (ev["level"], ev["logger"], ev["thread"], ev["message"]) == ("WARN", _C, _T, _M)


@pytest.mark.parametrize(
    "pattern,problem",
    [
        ("%d{yyyy-MM-dd HH:mm:ss,SSS [%t] %-5level %c - %m%n", "the '{' after %d (column 3) is never closed"),
        ("%d [%t] %-5level %c{36 - %m%n", "the '{' after %c (column 20) is never closed"),
        ("%d [%t] %X{trace - %m%n", "the '{' after %X (column 11) is never closed"),
        ("%d [%t] %-5level %c - %m%n}", "the '}' at column 27 closes no '{'"),
        ("%d [%t] %-5level %c - %m}%n", "the '}' at column 25 closes no '{'"),
        ("%d [%t] %-5level %c - %m%n%", "a '%' at the end of the pattern"),
        ("%d [%t] %highlight(%-5level %c - %m%n", "the '(' after %highlight (column 19) is never closed"),
        ("%d [%t] %-5level %c - %m%n%bogus", "unknown conversion word %bogus"),
    ],
)
def test_broken_layout_pattern_is_one_line_error(cli, tmp_path, pattern, problem):
    p = tmp_path / "app.log"
    p.write_text("2024-05-02 10:15:31,204 [main] WARN  a.B - hello\n")
    r = cli("inspect", p, "--tz", "UTC", "--layout-pattern", pattern)
    assert r.code == 2 and r.out == "", r
    assert r.err.count("\n") == 1 and r.err.startswith(f"logsleuth: error: --layout-pattern {pattern!r}: "), r
    assert problem in r.err, r


def test_a_paste_of_quarkus_error_lines_is_read_as_jboss_not_nifi(cli, tmp_path):
    """Quarkus pads the level ('%-5p'), so only its ERROR lines have one space before '[': a paste of
    errors alone fitted NiFi's '%date %level [%thread] %logger{40} %msg' too, with the JBoss thread
    '(kafka-producer-network-thread' read as the logger and no event found. A logger name does not
    start with '('."""
    rec = ("2024-06-11 08:06:0{s},000 ERROR [org.apa.kaf.cli.pro.int.ProducerBatch] (kafka-producer-network-thread | producer-1) "
           "[Producer clientId=producer-1] Error executing user-provided callback on message for topic-partition 'orders-3': "
           "java.lang.IllegalStateException: ack store closed\n\tat com.example.orders.AckStore.record(AckStore.java:88)\n")
    p = tmp_path / "paste.log"
    p.write_text("".join(rec.format(s=s) for s in (2, 3)))
    r = cli("inspect", "--format", "json", p)
    assert r.code == 0 and r.json()["inputs"][0]["layout"] == "jboss-datetime", r
    r = cli("events", "--tz", "UTC", "-f", "ndjson", p)
    evs = [json.loads(x) for x in r.out.splitlines()]
    assert [e["event"] for e in evs] == ["callback_error", "callback_error"]
    assert {e["exception"] for e in evs} == {"java.lang.IllegalStateException"}
    assert {e["logger"] for e in evs} == {"org.apa.kaf.cli.pro.int.ProducerBatch"}
