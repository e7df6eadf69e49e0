"""Wrappers and the inferred head, through the CLI: what a tool put in front of each line is peeled,
times and levels are found without a known layout, and messages are found wherever they sit."""

from __future__ import annotations

import json

from conftest import SAMPLES

BROKER = "[pulsar-io-4-3] WARN  org.apache.pulsar.broker.service.ServerCnx - [/10.1.116.123:15070][0] Producer with id persistent://public/default/orders-partition-3 is already present on the connection"
SARAMA = "producer/broker/2 state change to [closing] because read tcp 10.0.0.5:53422->10.0.0.7:9092: i/o timeout"


def inspect(cli, path, *args):
    r = cli("inspect", "--format", "json", path, *args)
    assert r.code == 0, r
    return r.json()["inputs"][0]


def events(cli, path, *args):
    r = cli("events", "--format", "ndjson", path, *args)
    assert r.code in (0, 1), r
    return [json.loads(x) for x in r.out.splitlines()]


def test_compose_logs_of_two_services_with_different_layouts(cli, tmp_path):
    p = tmp_path / "compose.log"
    p.write_text(
        f"pulsar-broker-1  | 2024-05-02T10:15:31,204+0000 {BROKER}\n"
        "orders-app-1     | 2024-05-02 10:15:32.100 ERROR 1 --- [r-client-io-1-1] o.a.pulsar.client.impl.ProducerImpl      : [persistent://public/default/orders-partition-3] [orders-1] Failed to create producer: Producer is already present on the connection\n"
        "orders-app-1     | java.lang.IllegalStateException: boom\n"
        "orders-app-1     | \tat com.example.Orders.send(Orders.java:42)\n"
        f"pulsar-broker-1  | 2024-05-02T10:15:33,204+0000 {BROKER}\n"
    )
    inp = inspect(cli, p, "--tz", "UTC")
    assert inp["envelope"].startswith("docker-compose")
    evs = events(cli, p, "--tz", "UTC")
    assert [(e["event"], e["host"], e["ts"]) for e in evs] == [
        ("producer_already_present", "pulsar-broker-1", "2024-05-02T10:15:31.204Z"),
        ("client_producer_create_failed", "orders-app-1", "2024-05-02T10:15:32.100Z"),
        ("producer_already_present", "pulsar-broker-1", "2024-05-02T10:15:33.204Z"),
    ]
    assert evs[1]["line"] == 2 and evs[1]["line_end"] == 4  # the stack trace stays with its record


def test_kubectl_prefix_and_timestamps(cli, tmp_path):
    p = tmp_path / "k.log"
    p.write_text("".join(f"[pod/payments-6c9d7f5b8-q8w2e/app] 2024-05-02T10:15:3{i}.123456789Z [sarama] 2024/05/02 10:15:3{i} {SARAMA}\n" for i in range(3)))
    inp = inspect(cli, p, "--tz", "UTC")
    assert inp["envelope"] == "kubectl-prefix+docker-ts" and inp["layout"] == "go-log"
    evs = events(cli, p, "--tz", "UTC")
    assert len(evs) == 3 and evs[0]["host"] == "payments-6c9d7f5b8-q8w2e" and evs[0]["event"] == "sarama_broker_closing"


def test_syslog_stamps_without_a_zone_are_read_in_tz(cli, tmp_path):
    p = tmp_path / "messages"
    p.write_text("".join(f"May  2 12:15:3{i} node-3 payments[4242]: {SARAMA}\n" for i in range(3)))
    inp = inspect(cli, p, "--tz", "Europe/Berlin", "--date", "2024-05-02")
    assert inp["envelope"] == "syslog"
    evs = events(cli, p, "--tz", "Europe/Berlin")
    assert evs[0]["ts"].endswith("T10:15:30.000Z") and evs[0]["host"] == "node-3"


def test_markdown_quote_inside_indentation_and_rfc5424(cli, tmp_path):
    md = tmp_path / "ticket.md"
    md.write_text("".join(f"    > 10:15:3{i}.204 {BROKER}\n" for i in range(4)))
    inp = inspect(cli, md, "--tz", "UTC", "--date", "2024-05-02")
    assert inp["envelope"] == "indented+markdown-quote" and inp["layout"] == "pulsar-broker-2x"
    assert len(events(cli, md, "--tz", "UTC", "--date", "2024-05-02")) == 4
    sl = tmp_path / "syslog-5424.log"
    sl.write_text("".join(f"<132>1 2024-05-02T10:15:3{i}.204Z broker-2 pulsar 812 - - 10:15:3{i}.204 {BROKER}\n" for i in range(3)))
    evs = events(cli, sl, "--tz", "UTC")
    assert len(evs) == 3 and evs[0]["host"] == "broker-2" and evs[0]["connection"] == "/10.1.116.123:15070"


def test_a_time_only_layout_is_not_taken_for_grep_n_output(cli):
    """'22:00:02.063 [thread] …' begins like 'LINE:' grep output; peeling it would lose the time."""
    inp = inspect(cli, SAMPLES / "pulsar-incident" / "pulsar-broker-1.2020-06-01.log", "--tz", "UTC")
    assert inp["envelope"] == "none" and inp["layout"] == "pulsar-broker-2x"


def test_grep_n_output_of_several_files_is_peeled(cli, tmp_path):
    lines = (SAMPLES / "kafka-outage" / "orders-producer.log").read_text().splitlines()
    hits = [f"logs/orders-producer.log:{n}:{x}" for n, x in enumerate(lines, 1) if "Connection to node" in x or "Expiring" in x]
    p = tmp_path / "grep.txt"
    p.write_text("\n".join(hits) + "\n")
    inp = inspect(cli, p, "--tz", "UTC")
    assert inp["envelope"] == "grep-n" and inp["layout"] == "kafka-log4j"
    conn = [e for e in events(cli, p, "--tz", "UTC") if e["event"] == "connection_failed"]
    assert len(conn) == sum("Connection to node" in h for h in hits) and conn[0]["node"] == 2


def test_journald_json(cli, tmp_path):
    p = tmp_path / "journal.json"
    rows = [{"__REALTIME_TIMESTAMP": str(1714644931000000 + i * 1_000_000), "_HOSTNAME": "node-3", "SYSLOG_IDENTIFIER": "payments", "MESSAGE": f"[sarama] 2024/05/02 10:15:3{1 + i} {SARAMA}"} for i in range(3)]
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    inp = inspect(cli, p, "--tz", "UTC")
    assert inp["envelope"] == "json (MESSAGE)"
    evs = events(cli, p, "--tz", "UTC")
    assert [e["ts"] for e in evs] == ["2024-05-02T10:15:31.000Z", "2024-05-02T10:15:32.000Z", "2024-05-02T10:15:33.000Z"]


def test_an_unknown_layout_with_levels_in_any_dress(cli, tmp_path):
    p = tmp_path / "odd.log"
    p.write_text(
        f"<W> 02/May/2024:10:15:31 +0000 pid=12 level=warn ServerCnx - {BROKER.split(' - ', 1)[1]}\n"
        f"[ ERROR ] 02/May/2024:10:15:32 +0000 ServerCnx - {BROKER.split(' - ', 1)[1]}\n"
        f"02/May/2024:10:15:33 +0000 something else entirely\n"
    )
    inp = inspect(cli, p, "--tz", "UTC")
    assert inp["layout"] == "inferred-head (common-log)" and inp["records"] == 3
    assert [e["level"] for e in events(cli, p, "--tz", "UTC")] == ["WARN", "ERROR"]
    p.write_text(  # telegraf / InfluxData's 'E!' after the stamp
        f"2024-05-02T10:15:31Z W! [outputs.pulsar] {BROKER.split(' - ', 1)[1]}\n"
        f"2024-05-02T10:15:32Z E! [outputs.pulsar] {BROKER.split(' - ', 1)[1]}\n"
        "2024-05-02T10:15:33Z I! [agent] Hang on, flushing any cached metrics before shutdown\n"
    )
    assert [e["level"] for e in events(cli, p, "--tz", "UTC")] == ["WARN", "ERROR"]


def test_a_message_is_not_found_in_the_middle_of_a_word(cli, tmp_path):
    """At a boundary only: a pattern's text glued to other text is not a message."""
    p = tmp_path / "glued.log"
    p.write_text("2024-05-02 10:15:31 xx[/10.1.1.1:5][0]Producer with id t is already present on the connection\n" * 2)
    assert events(cli, p, "--tz", "UTC") == []


def test_plain_words_of_other_programs_are_not_kafka_broker_events(cli, tmp_path):
    """A Go client's 'starting' / 'started' / 'shutting down' (no logger to check a scope against)
    is not a Kafka broker starting or stopping."""
    p = tmp_path / "app.log"
    p.write_text("2024/05/02 10:15:31 starting\n2024/05/02 10:15:32 started\n2024/05/02 10:15:33 shutting down\n2024/05/02 10:15:34 shut down completed\n")
    assert [e["event"] for e in events(cli, p, "--tz", "UTC")] == []
