"""The Kafka producer diagnoses through the real CLI: kafka.delivery-timeout, kafka.broker-unreachable,
kafka.buffer-exhausted and kafka.callback-error, on the sample incidents (Kafka tools log4j layout,
Spring Boot 2 and 3 layouts; sample_logs/generators/kafka.py) and on hand-made logs that pin the
counting and linking rules."""

from __future__ import annotations

import datetime as _dt
import html
import json
import re

import pytest

from conftest import SAMPLES
from logsleuth.detectors.base import fmt_duration

OUTAGE = SAMPLES / "kafka-outage"
SPRING = SAMPLES / "kafka-outage-spring"
CALLBACK = SAMPLES / "kafka-callback"
RECOVERED = SAMPLES / "kafka-recovered"
RANK = {"critical": 0, "high": 1, "medium": 2, "low": 3, "info": 4}


def analyze(*args):
    from conftest import run

    r = run("analyze", "--tz", "UTC", *args)
    assert r.code == 0, r
    return r


@pytest.fixture(scope="module")
def outage():
    return analyze(OUTAGE, "--format", "json").json()


@pytest.fixture(scope="module")
def outage_text():
    return analyze(OUTAGE, "--format", "text", "-v").out  # -v: the subjects' and causes' fields too


@pytest.fixture(scope="module")
def spring():
    return analyze(SPRING, "--format", "json").json()


@pytest.fixture(scope="module")
def spring_text():
    return analyze(SPRING, "--format", "text", "-v").out


@pytest.fixture(scope="module")
def callback():
    return analyze(CALLBACK, "--format", "json").json()


@pytest.fixture(scope="module")
def recovered():
    return analyze(RECOVERED, "--format", "json").json()


def of(doc, fid, path_end=None):
    out = [f for f in doc["findings"] if f["id"] == fid]
    if path_end is not None:
        out = [f for f in out if any(s.get("path", "").endswith(path_end) for s in f["subjects"])]
    return out


def per_tp(finding):
    return {s["topic_partition"]: (s["records"], s["batches"]) for s in finding["subjects"]}


def file_stamps(path, needle):
    """(line number, stamp text) of every line of ``path`` that contains ``needle``."""
    return [(i, line) for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line]


# ----------------------------------------------------------------------------- the log4j incident


def test_log4j_outage_expired_records_per_partition(outage):
    (f,) = of(outage, "kafka.delivery-timeout")  # billing-producer.log recovered: nothing expired there
    assert f["severity"] == "critical"
    assert per_tp(f) == {"orders-1": (135, 3), "orders-4": (61, 2), "payments-2": (13, 3)}
    assert f["details"]["records"] == 209 and f["details"]["batches"] == 8 and f["details"]["partitions"] == 3
    # 209 records, each logged by the application once: one log record per expired record
    assert f["details"]["log_records"] == 209
    for s in f["subjects"]:
        assert s["path"].endswith("kafka-outage/orders-producer.log")
        assert s["client_id"] == "producer-1" and s["node"] == 2
    s1 = next(s for s in f["subjects"] if s["topic_partition"] == "orders-1")
    assert s1["first_seen"] == "2024-05-02T10:17:29.912Z" and s1["last_seen"] == "2024-05-02T10:19:10.824Z"
    d1 = f["details"]["by_partition"]["orders-1"]
    assert (d1["elapsed_ms_min"], d1["elapsed_ms_max"]) == (120005.0, 120027.0)
    assert (d1["topic"], d1["partition"], d1["log_records"]) == ("orders", 1, 135) and len(d1["batch_list"]) == 3
    assert f["first_seen"] == "2024-05-02T10:17:29.912Z"
    assert f["details"]["delivery_timeout_ms_at_most"] == 120004.0
    assert "NOT delivered" in f["root_cause"] and "re-sent" in f["root_cause"]


def test_log4j_outage_cause_is_node_2_and_its_window(outage):
    (f,) = of(outage, "kafka.delivery-timeout")
    c = f["cause"]
    assert c["kind"] == "broker-unreachable"
    assert c["node"] == 2 and c["address"] == "kafka-2/10.0.0.7:9092" and c["host"] == "kafka-2"
    log = OUTAGE / "orders-producer.log"
    # the window runs from the first to the last trouble line of producer-1: check against the file itself
    fails = file_stamps(log, "Connection to node 2 (kafka-2/10.0.0.7:9092) could not be established")
    assert c["from"] == "2024-05-02T10:15:30.412Z"  # "Node 2 disconnected." opens it
    assert file_stamps(log, "Node 2 disconnected.")[0][1].startswith("[2024-05-02 10:15:30,412]")
    assert c["to"] == "2024-05-02T10:19:39.351Z"
    assert fails[-1][1].startswith("[2024-05-02 10:19:39,351]")
    assert c["failed_connections"] == len(fails) + len(file_stamps(log, "due to socket connection setup timeout"))
    assert c["retries_by_error"] == {"NETWORK_EXCEPTION": 3}
    assert c["metadata_errors"] == len(file_stamps(log, "Error while fetching metadata"))
    # the evidence quotes the Kafka expiry text itself (the continuation line), at its real line number
    lines = log.read_text().splitlines()
    quoted = [e for e in f["evidence"] if "first expired batch" in e.get("note", "")]
    assert len(quoted) == 3
    for e in quoted:
        assert lines[e["line"] - 1] == e["text"] and "Expiring" in e["text"]
    assert any("first failed connection to node 2" in e.get("note", "") for e in f["evidence"])
    assert len(f["evidence"]) < 30  # the lines a human quotes, not the 500 failures
    assert any("slow broker" in r for r in f["ruled_out"])
    assert any("callback" in r.lower() for r in f["ruled_out"])


def test_log4j_outage_broker_unreachable_both_clients(outage):
    found = of(outage, "kafka.broker-unreachable")
    assert len(found) == 2
    orders = of(outage, "kafka.broker-unreachable", "orders-producer.log")[0]
    billing = of(outage, "kafka.broker-unreachable", "billing-producer.log")[0]
    # nothing lost on billing, and it was over in 31.5 s: context (low), not an alert
    assert orders["severity"] == "high" and billing["severity"] == "low"
    assert orders["subjects"][0]["expired_records"] == 209 and orders["subjects"][0]["buffer_exhausted"] == 23
    b = billing["subjects"][0]
    assert b["node"] == 2 and b["client_id"] == "billing-1" and b["expired_records"] == 0 and b["recovered"] is True
    assert billing["cause"]["retries_by_error"] == {"NETWORK_EXCEPTION": 1, "NOT_LEADER_OR_FOLLOWER": 1}
    assert (billing["first_seen"], billing["last_seen"]) == ("2024-05-02T10:15:30.911Z", "2024-05-02T10:16:02.421Z")
    # each client saw the same node fail at the same time: said so, and it raises the confidence
    assert [x["path"] for x in billing["details"]["same_node_elsewhere"]] == [orders["subjects"][0]["path"]]
    assert "Nothing expired" in billing["root_cause"]


def test_log4j_outage_buffer_exhausted(outage):
    (f,) = of(outage, "kafka.buffer-exhausted")
    (s,) = f["subjects"]
    assert s["path"].endswith("orders-producer.log")
    assert s["count"] == 23 == len(file_stamps(OUTAGE / "orders-producer.log", "BufferExhaustedException: Failed to allocate"))
    assert s["max_block_ms"] == 60000 and s["buffer_memory"] == 1048576 and f["details"]["available_bytes_min"] == 0
    # the expiries it states are the ones of its cause, the same 209 records in 8 batches as kafka.delivery-timeout
    assert s["expired_records"] == 209 and f["details"]["expired_batches"] == 8 and f["details"]["expired_scope"] == "cause"
    assert "209 records in 8 batches" in f["root_cause"] and "208" not in f["root_cause"]
    assert (s["first_seen"], s["last_seen"]) == ("2024-05-02T10:18:50.113Z", "2024-05-02T10:19:30.893Z")
    assert f["cause"]["kind"] == "broker-unreachable" and f["cause"]["node"] == 2
    assert f["confidence"] >= 0.8
    text = " ".join(f["remediation"])
    for setting in ("buffer.memory", "max.block.ms", "batch.size", "linger.ms", "delivery.timeout.ms"):
        assert setting in text


def test_log4j_outage_severity_ordering(outage):
    order = [(f["id"], f["severity"]) for f in outage["findings"] if f["id"].startswith("kafka.")]
    assert order[0] == ("kafka.delivery-timeout", "critical")
    ranks = [RANK[s] for _, s in order]
    assert ranks == sorted(ranks)
    assert {i for i, s in order if s == "high"} == {"kafka.broker-unreachable", "kafka.buffer-exhausted"}
    assert order[-1] == ("kafka.broker-unreachable", "low")
    assert not of(outage, "kafka.callback-error")


def test_log4j_outage_text_report(outage_text):
    t = outage_text
    assert "[CRITICAL] 209 records expired undelivered on 3 partitions" in t
    assert "topic_partition=orders-1, records=135, batches=3" in t
    assert "topic_partition=payments-2, records=13, batches=3" in t
    assert "kind=broker-unreachable, node=2, address=kafka-2/10.0.0.7:9092" in t
    assert "were NOT delivered to Kafka" in t
    assert "count=23, max_block_ms=60000, buffer_memory=1048576" in t
    assert "[LOW] Broker node 2 (kafka-2/10.0.0.7:9092) unreachable" in t
    assert t.index("[CRITICAL]") < t.index("[HIGH]") < t.index("[LOW]")


# ----------------------------------------------------------------------------- Spring Boot 2 and 3


def test_spring_layouts_recognised(spring):
    layouts = {i["path"].rsplit("/", 1)[-1]: i["layout"] for i in spring["inputs"]}
    assert layouts == {"order-service.log": "spring-boot-3", "payment-service.log": "spring-boot-2"}


def test_spring_boot_3_expired_records_and_cause(spring):
    (f,) = of(spring, "kafka.delivery-timeout", "order-service.log")
    assert per_tp(f) == {"inventory-0": (92, 3), "inventory-5": (27, 1), "shipments-2": (8, 2)}
    assert f["details"]["records"] == 127 and f["details"]["batches"] == 6
    c = f["cause"]
    assert (c["kind"], c["node"], c["address"]) == ("broker-unreachable", 1, "kafka-1.prod.internal/10.20.0.11:9092")
    # the file's stamps are +02:00; the window is reported in UTC
    assert (c["from"], c["to"]) == ("2024-09-17T14:02:10.118Z", "2024-09-17T14:06:19.516Z")
    assert file_stamps(SPRING / "order-service.log", "Node 1 disconnected.")[0][1].startswith("2024-09-17T16:02:10.118+02:00")
    # callbacks run on the network thread: the client id comes from the thread name
    assert {s["client_id"] for s in f["subjects"]} == {"order-svc-producer-1"}
    assert all(p["node_named_by_retries"] for p in f["details"]["by_partition"].values())  # 3.9: "Error Message: Disconnected from node 1"


def test_spring_boot_2_expired_records_and_cause(spring):
    (f,) = of(spring, "kafka.delivery-timeout", "payment-service.log")
    # two batches of 37 on payments-0 (different ages) are two batches, not one
    assert per_tp(f) == {"payments-0": (79, 3), "payments-3": (21, 1)}
    assert f["details"]["records"] == 100 and f["details"]["batches"] == 4
    c = f["cause"]
    assert (c["kind"], c["node"], c["address"]) == ("broker-unreachable", 1, "kafka-1.prod.internal/10.20.0.11:9092")
    assert (c["from"], c["to"]) == ("2024-09-17T14:02:10.609Z", "2024-09-17T14:06:20.085Z")
    assert c["retries_by_error"] == {"NOT_LEADER_OR_FOLLOWER": 3, "NETWORK_EXCEPTION": 2}
    # 2.6 texts do not name the node in the retries: linked by time, so a little less sure
    assert not any(p["node_named_by_retries"] for p in f["details"]["by_partition"].values())
    order = of(spring, "kafka.delivery-timeout", "order-service.log")[0]
    assert f["confidence"] < order["confidence"]
    # ExecutionException + "Caused by:" of one record count once: 79 records, not 158
    log = (SPRING / "payment-service.log").read_text()
    assert log.count("Caused by: org.apache.kafka.common.errors.TimeoutException: Expiring 37 record(s) for payments-0") == 74


def test_spring_buffer_exhausted_both_versions(spring):
    got = {f["subjects"][0]["path"].rsplit("/", 1)[-1]: f for f in of(spring, "kafka.buffer-exhausted")}
    assert set(got) == {"order-service.log", "payment-service.log"}
    o = got["order-service.log"]["subjects"][0]
    assert (o["count"], o["max_block_ms"], o["buffer_memory"]) == (11, 10000, 4194304)  # 3.1+ text
    p = got["payment-service.log"]["subjects"][0]
    assert (p["count"], p["max_block_ms"], p["buffer_memory"]) == (7, 30000, None)  # 2.6-3.0 text
    for f in got.values():
        assert f["cause"]["kind"] == "broker-unreachable" and f["cause"]["node"] == 1


def test_spring_text_report(spring_text):
    t = spring_text
    assert "[CRITICAL] 127 records expired undelivered on 3 partitions" in t
    assert "[CRITICAL] 100 records expired undelivered on 2 partitions" in t
    assert "topic_partition=inventory-0, records=92, batches=3" in t
    assert "from=2024-09-17 14:02:10.118 UTC" in t  # the cause window
    assert "count=7, max_block_ms=30000" in t


# ----------------------------------------------------------------------------- callback errors


def test_callback_errors_by_exception_and_partition(callback):
    found = of(callback, "kafka.callback-error")
    assert len(found) == 2
    orders = of(callback, "kafka.callback-error", "orders-app.log")[0]
    got = {(s["exception"], s["topic_partition"]): (s["count"], s["culprit"]) for s in orders["subjects"]}
    assert got == {
        ("java.lang.NullPointerException", "orders-3"): (17, "com.example.orders.OrderCallback.onCompletion"),
        ("java.lang.NullPointerException", "orders-1"): (5, "com.example.orders.OrderCallback.onCompletion"),
        ("java.lang.IllegalStateException", "orders-3"): (4, "com.example.orders.AckStore.record"),
    }
    npe = next(g for g in orders["details"]["groups"] if g["topic_partition"] == "orders-3" and "Null" in g["exception"])
    assert npe["culprit_frame"] == "com.example.orders.OrderCallback.onCompletion(OrderCallback.java:42)"
    assert "application code, not in Kafka" in orders["root_cause"]
    assert orders["severity"] == "high" and orders["confidence"] >= 0.85
    shipping = of(callback, "kafka.callback-error", "shipping-app.log")[0]
    got = {(s["exception"], s["topic_partition"]): (s["count"], s["culprit"]) for s in shipping["subjects"]}
    assert got == {
        ("java.lang.ClassCastException", "shipments-0"): (6, "com.example.shipping.ShipmentPublisher.lambda$publish$2"),
        ("java.lang.ClassCastException", "shipments-1"): (3, "com.example.shipping.ShipmentPublisher.lambda$publish$2"),
    }
    # the culprit frame is quoted at its real line
    lines = (CALLBACK / "shipping-app.log").read_text().splitlines()
    frames = [e for e in shipping["evidence"] if e.get("note", "").startswith("culprit frame")]
    assert frames and all(lines[e["line"] - 1].strip() == "at com.example.shipping.ShipmentPublisher.lambda$publish$2(ShipmentPublisher.java:64)" for e in frames)
    assert not of(callback, "kafka.delivery-timeout") and not of(callback, "kafka.broker-unreachable")


def test_callback_text_report():
    t = analyze(CALLBACK, "--format", "text", "-v").out
    assert "culprit=com.example.orders.OrderCallback.onCompletion" in t
    assert "exception=java.lang.IllegalStateException, topic_partition=orders-3, count=4, culprit=com.example.orders.AckStore.record" in t


# ----------------------------------------------------------------------------- recovered


def test_recovered_retries_give_no_delivery_timeout(recovered):
    assert not of(recovered, "kafka.delivery-timeout")
    assert not of(recovered, "kafka.buffer-exhausted")
    found = of(recovered, "kafka.broker-unreachable")
    assert len(found) == 2
    for f in found:
        assert RANK[f["severity"]] >= RANK["medium"]
        assert f["subjects"][0]["expired_records"] == 0 and f["subjects"][0]["recovered"] is True
    inv = of(recovered, "kafka.broker-unreachable", "inventory-producer.log")[0]
    assert inv["cause"]["kind"] == "broker-unreachable" and inv["cause"]["node"] == 3
    assert inv["subjects"][0]["failed_connections"] == 5
    cat = of(recovered, "kafka.broker-unreachable", "catalog-service.log")[0]
    assert cat["cause"]["kind"] == "broker-disconnects"  # request timeouts, every reconnect worked
    assert cat["details"]["request_timeouts"] == 2 and cat["cause"]["request_timeouts"] == 2


# ----------------------------------------------------------------------------- hand-made logs: the counting rules


def l4j(ts, level, msg, logger, *cont):
    return "\n".join([f"[{ts}] {level} {msg} ({logger})", *cont])


APP = "com.example.App"
NET = "org.apache.kafka.clients.NetworkClient"


def expiry_lines(n_lines, records, tp, elapsed, ts="2024-05-02 10:17:31,220"):
    exc = f"org.apache.kafka.common.errors.TimeoutException: Expiring {records} record(s) for {tp}:{elapsed} ms has passed since batch creation"
    return [l4j(ts, "ERROR", f"send failed for key {i}", APP, exc) for i in range(n_lines)]


def write(tmp_path, name, lines):
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n")
    return p


def delivery(tmp_path, *files):
    doc = analyze(*files, "--format", "json").json()
    return of(doc, "kafka.delivery-timeout")


def test_52_identical_lines_are_one_batch_of_52(tmp_path):
    p = write(tmp_path, "app.log", expiry_lines(52, 52, "orders-0", 120012))
    (f,) = delivery(tmp_path, p)
    assert per_tp(f) == {"orders-0": (52, 1)}  # not 52 × 52
    assert f["details"]["by_partition"]["orders-0"]["log_records"] == 52
    # no drain problem in this log, which holds only the expiries (ERROR lines, nothing before them):
    # the cause is said to be not in it (not that none happened), lower confidence
    assert f["cause"]["kind"] == "not-in-log" and f["cause"]["node"] is None
    assert "holds no WARN or INFO lines" in f["root_cause"] or "starts at" in f["root_cause"], f["root_cause"]
    assert f["confidence"] <= 0.6


def test_52_identical_lines_spring_boot_3(tmp_path):
    exc = "org.apache.kafka.common.errors.TimeoutException: Expiring 52 record(s) for orders-0:120012 ms has passed since batch creation"
    lines = []
    for i in range(52):
        lines += [
            f"2024-05-02T12:17:31.2{i % 10}0+02:00 ERROR 4242 --- [app] [kafka-producer-network-thread | producer-7] c.e.orders.OrderPublisher                : Failed to send order {i}",
            "",
            exc,
        ]
    p = write(tmp_path, "app.log", lines)
    (f,) = delivery(tmp_path, p)
    assert per_tp(f) == {"orders-0": (52, 1)}
    assert f["subjects"][0]["client_id"] == "producer-7"
    assert f["first_seen"] == "2024-05-02T10:17:31.200Z"


def test_error_line_and_caused_by_of_one_record_count_once(tmp_path):
    exc = "org.apache.kafka.common.errors.TimeoutException: Expiring 3 record(s) for payments-1:120001 ms has passed since batch creation"
    lines = [
        l4j("2024-05-02 10:17:31,221", "ERROR", f"Order {i} failed: {exc}", APP,
            f"java.util.concurrent.ExecutionException: {exc}",
            "\tat org.apache.kafka.clients.producer.internals.FutureRecordMetadata.valueOrError(FutureRecordMetadata.java:98)",
            f"Caused by: {exc}")
        for i in range(3)
    ]
    (f,) = delivery(tmp_path, write(tmp_path, "app.log", lines))
    assert per_tp(f) == {"payments-1": (3, 1)}


def test_records_come_from_the_text_not_from_the_lines(tmp_path):
    # an application that logs a failed batch once (not once per record)
    (f,) = delivery(tmp_path, write(tmp_path, "app.log", expiry_lines(1, 7, "orders-1", 120003)))
    assert per_tp(f) == {"orders-1": (7, 1)}


def test_more_identical_lines_than_records_are_several_batches(tmp_path):
    # one batch cannot produce more than N callbacks: 104 identical "Expiring 52" lines are 2 batches
    (f,) = delivery(tmp_path, write(tmp_path, "app.log", expiry_lines(104, 52, "orders-0", 120012)))
    assert per_tp(f) == {"orders-0": (104, 2)}


def test_batches_are_told_apart_by_age_and_by_time(tmp_path):
    lines = (
        expiry_lines(2, 5, "orders-0", 120012, ts="2024-05-02 10:17:31,000")  # only 2 of its 5 records logged
        + expiry_lines(5, 5, "orders-0", 120019, ts="2024-05-02 10:17:31,400")  # same count, other age
        + expiry_lines(2, 5, "orders-0", 120012, ts="2024-05-02 10:47:31,000")  # same text, 30 min later
    )
    (f,) = delivery(tmp_path, write(tmp_path, "app.log", lines))
    assert per_tp(f) == {"orders-0": (15, 3)}


def failures(node, start_min, end_min, client="producer-1", hour=10):
    out = []
    for m in range(start_min, end_min):
        for s in (0, 20, 40):
            out.append(l4j(f"2024-05-02 {hour:02d}:{m:02d}:{s:02d},000", "WARN",
                           f"[Producer clientId={client}] Connection to node {node} (kafka-{node}/10.0.0.{node}:9092) could not be established. Broker may not be available.", NET))
    return out


def test_outage_links_only_within_the_same_file(tmp_path):
    a = write(tmp_path, "a.log", expiry_lines(4, 4, "orders-0", 120000, ts="2024-05-02 10:17:31,000"))
    b = write(tmp_path, "b.log", failures(2, 14, 19))
    (f,) = delivery(tmp_path, a, b)
    # not linked to b.log's outage; a.log holds the expiries only, so their cause is not in it
    assert f["cause"]["kind"] == "not-in-log" and f["cause"]["node"] is None
    # the same lines in one file do link
    c = write(tmp_path, "c.log", failures(2, 14, 19) + expiry_lines(4, 4, "orders-0", 120000, ts="2024-05-02 10:17:31,000"))
    (g,) = delivery(tmp_path, c)
    assert (g["cause"]["kind"], g["cause"]["node"], g["cause"]["address"]) == ("broker-unreachable", 2, "kafka-2/10.0.0.2:9092")
    assert (g["cause"]["from"], g["cause"]["to"]) == ("2024-05-02T10:14:00.000Z", "2024-05-02T10:18:40.000Z")
    assert g["confidence"] > f["confidence"]


def test_an_outage_long_over_before_the_batch_was_created_is_not_the_cause(tmp_path):
    lines = failures(2, 0, 2, hour=9) + expiry_lines(4, 4, "orders-0", 120000, ts="2024-05-02 10:17:31,000")
    doc = analyze(write(tmp_path, "a.log", lines), "--format", "json").json()
    (f,) = of(doc, "kafka.delivery-timeout")
    assert f["cause"]["kind"] == "none-found"
    (b,) = of(doc, "kafka.broker-unreachable")  # the 09:00 outage itself is still reported
    assert b["subjects"][0]["expired_records"] == 0 and b["first_seen"] == "2024-05-02T09:00:00.000Z"


def test_trouble_that_starts_after_the_expiry_is_not_its_cause(tmp_path):
    lines = expiry_lines(4, 4, "orders-0", 120000, ts="2024-05-02 10:17:31,000") + failures(2, 20, 22)
    (f,) = delivery(tmp_path, write(tmp_path, "a.log", lines))
    # not linked; the file starts at the expiry, so the batches' lifetime is not in it
    assert f["cause"]["kind"] == "not-in-log" and f["cause"]["node"] is None


def test_the_client_of_the_network_thread_must_match(tmp_path):
    # producer-1 cannot reach node 2; the expiries are producer-2's (its network thread logs them)
    exc = "org.apache.kafka.common.errors.TimeoutException: Expiring 2 record(s) for orders-0:120000 ms has passed since batch creation"
    lines = []
    for m in range(14, 19):
        lines.append(f"2024-05-02 10:{m:02d}:00.000  WARN 1 --- [kafka-producer-network-thread | producer-1] o.a.kafka.clients.NetworkClient          : "
                     "[Producer clientId=producer-1] Connection to node 2 (kafka-2/10.0.0.2:9092) could not be established. Broker may not be available.")
    for i in range(2):
        lines += [f"2024-05-02 10:17:31.00{i} ERROR 1 --- [kafka-producer-network-thread | {{c}}] c.e.App                                  : failed", "", exc]
    doc_lines = [x.replace("{c}", "producer-2") for x in lines]
    (f,) = delivery(tmp_path, write(tmp_path, "two.log", doc_lines))
    assert f["cause"]["kind"] == "none-found"
    same = [x.replace("{c}", "producer-1") for x in lines]
    (g,) = delivery(tmp_path, write(tmp_path, "one.log", same))
    assert g["cause"]["kind"] == "broker-unreachable" and g["cause"]["client_id"] == "producer-1"


def test_lowered_delivery_timeout_is_called_out(tmp_path):
    (f,) = delivery(tmp_path, write(tmp_path, "a.log", expiry_lines(3, 3, "orders-0", 30004)))
    assert f["details"]["delivery_timeout_ms_at_most"] == 30004.0
    assert "lowered" in f["root_cause"]
    assert not any("lowered delivery.timeout.ms" in r for r in f["ruled_out"])


def test_pre_2_1_expiry_texts(tmp_path):
    exc = "org.apache.kafka.common.errors.TimeoutException: Expiring 7 record(s) for orders-1: 30012 ms has passed since batch creation plus linger time"
    lines = [l4j("2018-06-01 03:04:05,006", "ERROR", "Error when sending message to topic orders with key: null, value: 12 bytes with error:",
                 "org.apache.kafka.clients.producer.internals.ErrorLoggingCallback", exc) for _ in range(7)]
    (f,) = delivery(tmp_path, write(tmp_path, "a.log", lines))
    assert per_tp(f) == {"orders-1": (7, 1)}
    assert f["details"]["pre_2_1_texts"] is True and "request.timeout.ms" in f["root_cause"]


def test_buffer_exhausted_without_a_drain_problem(tmp_path):
    lines = [
        l4j(f"2019-04-01 10:16:{s:02d},000", "ERROR", "send failed", APP,
            "org.apache.kafka.common.errors.TimeoutException: Failed to allocate memory within the configured max blocking time 45000 ms.")
        for s in range(0, 50, 5)
    ]
    # the application's own INFO lines cover the max.block.ms before the first failure, and show no trouble
    lines = [l4j(f"2019-04-01 10:{m:02d}:00,000", "INFO", f"order {m} published", APP) for m in range(10, 16)] + lines
    doc = analyze(write(tmp_path, "a.log", lines), "--format", "json").json()
    (f,) = of(doc, "kafka.buffer-exhausted")
    s = f["subjects"][0]
    assert (s["count"], s["max_block_ms"]) == (10, 45000)
    assert f["details"]["exception"] == "org.apache.kafka.common.errors.TimeoutException"
    assert f["cause"]["kind"] == "production-rate"
    assert "production rate above what buffer.memory absorbs" in f["root_cause"]
    assert f["confidence"] <= 0.6
    assert not of(doc, "kafka.delivery-timeout") and not of(doc, "kafka.broker-unreachable")


def test_callback_error_without_a_stack_trace(tmp_path):
    lines = [l4j("2024-05-02 10:15:31,204", "ERROR", "[Producer clientId=producer-1] Error executing user-provided callback on message for topic-partition 'orders-3'",
                 "org.apache.kafka.clients.producer.internals.ProducerBatch")]
    doc = analyze(write(tmp_path, "a.log", lines), "--format", "json").json()
    (f,) = of(doc, "kafka.callback-error")
    (s,) = f["subjects"]
    assert s["culprit"] is None and s["count"] == 1 and s["topic_partition"] == "orders-3"
    assert f["confidence"] < 0.7


def test_a_lone_disconnect_is_not_an_outage(tmp_path):
    lines = [l4j("2024-05-02 10:07:12,005", "INFO", "[Producer clientId=producer-1] Node 1 disconnected.", NET),
             l4j("2024-05-02 10:07:13,000", "INFO", "published 12 orders", APP)]
    doc = analyze(write(tmp_path, "a.log", lines), "--format", "json").json()
    assert not [f for f in doc["findings"] if f["id"].startswith("kafka.")]


def test_untrusted_client_id_is_shown_escaped(tmp_path):
    lines = failures(2, 14, 16, client="evil\x1b[2Jx")
    r = analyze(write(tmp_path, "a.log", lines), "--format", "text")
    assert "\x1b" not in r.out and "\\x1b[2Jx" in r.out


def test_sample_generator_is_deterministic(tmp_path):
    import subprocess
    import sys

    gen = SAMPLES / "generators" / "kafka.py"
    subprocess.run([sys.executable, str(gen), "--out", str(tmp_path)], check=True, capture_output=True)
    for d in ("kafka-outage", "kafka-outage-spring", "kafka-callback", "kafka-recovered", "kafka-untimed"):
        for f in (SAMPLES / d).iterdir():
            assert (tmp_path / d / f.name).read_bytes() == f.read_bytes(), f


def test_odd_numbers_and_missing_timestamps_do_not_break_anything(tmp_path):
    exc = "org.apache.kafka.common.errors.TimeoutException: Expiring {n} record(s) for orders-3:{e} ms has passed since batch creation"
    lines = [
        l4j("2024-05-02 10:17:31,220", "ERROR", "x", APP, exc.format(n=0, e=120015)),
        l4j("2024-05-02 10:17:31,221", "ERROR", "x", APP, exc.format(n="9" * 25, e="9" * 30)),
        l4j("2024-05-02 10:17:31,222", "ERROR", "x", APP, exc.format(n=5, e=9223372036854775807)),
        l4j("2024-05-02 10:17:31,223", "ERROR", "x", APP,
            "org.apache.kafka.clients.producer.BufferExhaustedException: Failed to allocate memory within the configured max blocking time 9223372036854775807 ms."),
        l4j("2024-05-02 10:17:31,224", "WARN", "[Producer clientId=p] Connection to node 99999999999999999999 (x/1:2) could not be established. Broker may not be available.", NET),
    ]
    r = analyze(write(tmp_path, "a.log", lines), "--format", "json")
    assert r.err == ""
    (f,) = of(r.json(), "kafka.delivery-timeout")
    # 0 records is not a batch; a count wider than 64 bits is one, clamped (the sum saturates), with a note
    assert per_tp(f) == {"orders-3": (2**63 - 1, 2)}
    notes = [n for i in r.json()["inputs"] for n in i["notes"]]
    assert any("wider than 64 bits" in n or "Int64" in n or "clamped" in n for n in notes), notes
    # no time stamps at all (the layout is not recognised): identical expiries are still one batch
    p = write(tmp_path, "b.log", ["foo " + exc.format(n=3, e=120000)] * 3)
    (g,) = delivery(tmp_path, p)
    assert per_tp(g) == {"orders-3": (3, 1)}


# ----------------------------------------------------------------------------- one set of numbers per outage, in every format

DOCS = SAMPLES.parent / "docs" / "findings"
KAFKA_IDS = ("kafka.delivery-timeout", "kafka.broker-unreachable", "kafka.buffer-exhausted", "kafka.callback-error")
EPISODE_KINDS = ("broker-unreachable", "broker-disconnects", "produce-errors")
LOST = re.compile(r"(\d+) records? in (\d+) batch(?:es)?\b")
FAILED = re.compile(r"send\(\) failed (\d+) times?\b")
RETRIES = re.compile(r"(\d+) produce retr(?:y|ies)\b")
WINDOW_SPAN = re.compile(r"to \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(([^)]*)\)")
DURATION = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?) (ms|s|min|h|days)\b")


def prose(f):
    """Everything a finding says in words, as JSON carries it."""
    return " ".join([f["title"], f["root_cause"], *f["confidence_reasons"], *f["remediation"], *f["ruled_out"]])


def flat(text):
    """A rendered report as one line: wrapping undone, Markdown escapes and entities removed."""
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"\\(.)", r"\1", text)))


@pytest.fixture(scope="module", params=["kafka-outage", "kafka-outage-spring", "kafka-callback", "kafka-recovered"])
def sample_all_formats(request):
    d = SAMPLES / request.param
    return (
        analyze(d, "--format", "json").json(),
        analyze(d, "--format", "text", "-v").out,
        analyze(d, "--format", "markdown").out,
    )


def test_findings_of_one_outage_state_the_same_numbers(sample_all_formats):
    doc, _, _ = sample_all_formats
    groups: dict = {}
    for f in doc["findings"]:
        c = f["cause"] or {}
        if f["id"] in KAFKA_IDS and c.get("kind") in EPISODE_KINDS:
            groups.setdefault((c["path"], c["client_id"], c["from"]), []).append(f)
    # every sample but the callback one has an outage: an empty loop would check nothing
    assert groups or "kafka-callback" in doc["inputs"][0]["path"]
    for key, fs in groups.items():
        by = {}
        for f in fs:
            assert f["id"] not in by, f"two {f['id']} findings for one cause {key}"
            by[f["id"]] = f
        # one outage window, one set of counts: the cause object is the same in every finding that links to it
        assert len({json.dumps(f["cause"], sort_keys=True) for f in fs}) == 1, key
        cause = fs[0]["cause"]
        dt_, br, bx = by.get("kafka.delivery-timeout"), by.get("kafka.broker-unreachable"), by.get("kafka.buffer-exhausted")
        lost = (dt_["details"]["records"], dt_["details"]["batches"]) if dt_ else (0, 0)
        failed = bx["subjects"][0]["count"] if bx else 0
        # the prose of each says exactly these numbers, nothing else
        for f in fs:
            text = f["root_cause"]
            assert {tuple(map(int, m)) for m in LOST.findall(text)} <= {lost}, (f["id"], text)
            if lost[0] and f["id"] != "kafka.callback-error":  # what was lost is said, not only not contradicted
                assert {tuple(map(int, m)) for m in LOST.findall(text)} == {lost}, (f["id"], text)
            assert {int(n) for n in FAILED.findall(text)} <= {failed}, (f["id"], text)
            assert {int(n) for n in RETRIES.findall(text)} <= {cause["retries"]}, (f["id"], text)
            assert set(WINDOW_SPAN.findall(text)) == {fmt_duration(cause["duration_s"])}, (f["id"], text)
        # ... and so do their numbers
        if dt_:
            assert lost == (sum(s["records"] for s in dt_["subjects"]), sum(s["batches"] for s in dt_["subjects"]))
            assert dt_["details"]["failed_sends"] == failed
        if br:
            s = br["subjects"][0]
            assert (s["expired_records"], br["details"]["expired_batches"], s["buffer_exhausted"]) == (*lost, failed), key
            assert br["first_seen"] == cause["from"] and br["last_seen"] == cause["to"]
        if bx:
            assert (bx["subjects"][0]["expired_records"], bx["details"]["expired_batches"]) == lost, key
            assert bx["details"]["expired_scope"] == ("cause" if lost[0] else None)


def test_text_and_markdown_say_what_json_says(sample_all_formats):
    doc, text, markdown = sample_all_formats
    said = " ".join(prose(f) for f in doc["findings"] if f["id"] in KAFKA_IDS)
    assert any(p.findall(said) for p in (LOST, FAILED, RETRIES)) or "kafka-callback" in doc["inputs"][0]["path"]
    for rendered in (flat(text), flat(markdown)):
        for pattern in (LOST, FAILED, RETRIES):  # the same statements (the verdict and summary repeat some)
            assert set(pattern.findall(rendered)) == set(pattern.findall(said)), pattern.pattern


def test_durations_are_formatted_one_way(sample_all_formats):
    doc, _, _ = sample_all_formats
    for f in doc["findings"]:
        if f["id"] not in KAFKA_IDS:
            continue
        words = prose(f) + " " + str(f["details"].get("recovery", ""))
        for number, unit in DURATION.findall(words):
            # fmt_duration: whole milliseconds, one decimal for s / min / h / days ("2.0 s", never "2 s")
            assert ("." not in number) if unit == "ms" else re.fullmatch(r"\d+\.\d", number), (f["id"], number, unit)
        if "quiet_after_s" in f["details"]:  # the numeric twin of the human duration in details.recovery
            assert fmt_duration(f["details"]["quiet_after_s"]) in f["details"]["recovery"]
        for s in f["subjects"]:
            for k, v in s.items():
                if isinstance(v, str) and DURATION.fullmatch(v):
                    assert any(isinstance(s.get(t), (int, float)) for t in (f"{k}_s", f"{k}_seconds")), (f["id"], k)


def doc_subject_keys(fid):
    """The subject keys the finding's page promises: the first subject of its JSON example."""
    page = (DOCS / f"{fid}.md").read_text()
    example = json.loads(re.search(r"```json\n(.*?)```", page, re.S).group(1))
    assert example["id"] == fid
    return list(example["subjects"][0])


def test_subjects_are_the_documented_keys_and_a_readable_table(sample_all_formats):
    doc, _, markdown = sample_all_formats
    for f in doc["findings"]:
        if f["id"] not in KAFKA_IDS:
            continue
        keys = doc_subject_keys(f["id"])
        assert len(keys) <= 11, f["id"]
        for s in f["subjects"]:
            assert list(s) == keys, f["id"]
            assert not any(isinstance(v, (list, dict)) for v in s.values())
    # the Markdown report shows every one of these fields (a narrow table of the key columns, every
    # field in the details block under it)
    details = markdown.split("<details><summary>Every field of the subjects</summary>")[1:]
    for f in doc["findings"]:
        if f["id"] in KAFKA_IDS:
            assert any(all(f"{k}: " in d.split("</details>")[0] for k in doc_subject_keys(f["id"])) for d in details), f["id"]


BUFFER = ("org.apache.kafka.clients.producer.BufferExhaustedException: Failed to allocate 16384 bytes within the configured "
          "max blocking time 60000 ms. Total memory: 1048576 bytes. Available memory: 0 bytes. Poolable size: 16384 bytes")


def exhaustions(*stamps):
    return [l4j(ts, "ERROR", "send failed", APP, BUFFER) for ts in stamps]


def test_two_outages_in_one_file_each_own_their_failed_sends(tmp_path):
    lines = (
        failures(2, 0, 5, hour=9)  # node 2: 09:00:00 -> 09:04:40
        + exhaustions(*(f"2024-05-02 09:0{m}:{s:02d},000" for m, s in ((3, 0), (3, 30), (4, 0), (4, 30), (5, 0))))
        + expiry_lines(4, 4, "orders-0", 120000, ts="2024-05-02 09:04:10,000")
        + failures(3, 0, 4, hour=11)  # node 3: 11:00:00 -> 11:03:40
        + exhaustions("2024-05-02 11:02:00,000", "2024-05-02 11:02:10,000", "2024-05-02 11:02:20,000")
        + expiry_lines(2, 2, "orders-1", 120000, ts="2024-05-02 11:03:00,000")
    )
    doc = analyze(write(tmp_path, "a.log", sorted(lines)), "--format", "json").json()
    got = {}
    for f in doc["findings"]:
        if f["id"].startswith("kafka."):
            got.setdefault(f["cause"]["node"], {})[f["id"]] = f
    assert set(got) == {2, 3}
    for node, failed, lost in ((2, 5, (4, 1)), (3, 3, (2, 1))):
        br, bx, dt_ = (got[node][i] for i in ("kafka.broker-unreachable", "kafka.buffer-exhausted", "kafka.delivery-timeout"))
        assert bx["subjects"][0]["count"] == br["subjects"][0]["buffer_exhausted"] == dt_["details"]["failed_sends"] == failed
        assert (br["subjects"][0]["expired_records"], br["details"]["expired_batches"]) == lost
        assert (bx["subjects"][0]["expired_records"], bx["details"]["expired_batches"]) == lost
        assert f"send() failed {failed} times" in br["root_cause"] and f"send() failed {failed} times" in bx["root_cause"]


def test_buffer_without_a_cause_states_which_expiries_it_counts(tmp_path):
    lines = (
        expiry_lines(4, 4, "orders-0", 120000, ts="2024-05-02 10:05:00,000")  # before the 10-minute look-back
        + expiry_lines(5, 5, "orders-1", 120000, ts="2024-05-02 10:10:00,000")  # in it
        + exhaustions(*(f"2024-05-02 10:16:{s:02d},000" for s in range(0, 50, 5)))
        + expiry_lines(3, 3, "orders-2", 120000, ts="2024-05-02 10:16:30,000")  # during the exhaustions
        + expiry_lines(7, 7, "orders-3", 120000, ts="2024-05-02 10:30:00,000")  # after them
    )
    doc = analyze(write(tmp_path, "a.log", sorted(lines)), "--format", "json").json()
    (dt_,) = of(doc, "kafka.delivery-timeout")
    # the file starts at the first expiry and holds ERROR lines only: the batches' lifetime is not in it
    assert (dt_["details"]["records"], dt_["details"]["batches"]) == (19, 4) and dt_["cause"]["kind"] == "not-in-log"
    (bx,) = of(doc, "kafka.buffer-exhausted")
    assert bx["cause"]["kind"] == "expired-batches"
    assert bx["subjects"][0]["expired_records"] == 8 and bx["details"]["expired_batches"] == 2
    assert bx["details"]["expired_scope"] == "window"
    assert bx["details"]["expired_window"] == {"from": "2024-05-02T10:06:00.000Z", "to": "2024-05-02T10:16:45.000Z"}
    rc = bx["root_cause"]
    # the subset is named: which expiries, which window, and the whole it is part of
    assert "8 records in 2 batches with no logged cause expired in this file between 2024-05-02 10:10:00 UTC and 2024-05-02 10:16:30 UTC" in rc
    assert "from 10.0 min before the first failed send to the last one" in rc
    assert "(of the 19 records in 4 batches with no logged cause in this file)" in rc


def test_json_log_evidence_points_at_the_json_line(cli, tmp_path):
    """The same outage logged as JSON (logstash encoder: the exception in 'stack_trace'): one file line
    holds several message lines, so the evidence must quote the JSON line itself, not a line below it."""
    head = re.compile(r"^\[(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d),(\d{3})\] (\w+) (.*) \(([\w.$]+)\)$")
    out: list[dict] = []
    for line in (OUTAGE / "orders-producer.log").read_text().splitlines():
        m = head.match(line)
        if m:
            out.append({"@timestamp": f"{m[1]}T{m[2]}.{m[3]}Z", "level": m[4], "logger_name": m[6], "message": m[5]})
        else:
            out[-1]["stack_trace"] = (out[-1].get("stack_trace", "") + "\n" + line).lstrip("\n")
    p = tmp_path / "orders-producer.json"
    p.write_text("".join(json.dumps(o) + "\n" for o in out))
    r = cli("analyze", p, "--format", "json")
    assert r.code == 0, r
    doc = r.json()
    ids = {f["id"] for f in doc["findings"]}
    assert {"kafka.delivery-timeout", "kafka.broker-unreachable"} <= ids, ids
    lines = p.read_text().splitlines()
    quoted = [e for f in doc["findings"] for e in f["evidence"] if "expired batch" in e.get("note", "")]
    assert quoted
    for e in quoted:
        assert e["line"] <= len(lines) and "Expiring" in lines[e["line"] - 1], e


# ----------------------------------------------------------------------------- send() failed waiting for metadata

AUDIT = "com.example.audit.AuditPublisher"
BOOTSTRAP_FAIL = "Connection to node -1 (kafka-bootstrap/10.0.0.5:9092) could not be established. Broker may not be available."
META_TOPIC = "org.apache.kafka.common.errors.TimeoutException: Topic audit-events not present in metadata after 60000 ms."
META_PARTITION = ("org.apache.kafka.common.errors.TimeoutException: Partition 7 of topic orders with partition count 6 is not "
                  "present in metadata after 60000 ms.")


def stamp(t):
    return t.strftime("%Y-%m-%d %H:%M:%S,") + f"{t.microsecond // 1000:03d}"


def every(start, n, step_s):
    return [start + _dt.timedelta(seconds=i * step_s) for i in range(n)]


def bootstrap_down(start=_dt.datetime(2024, 5, 4, 6, 0, 0), n=30, client="producer-1", text=BOOTSTRAP_FAIL):
    """A producer that cannot reach its bootstrap address: n failed connections to node -1, 2 s apart."""
    return [l4j(stamp(t), "WARN", f"[Producer clientId={client}] {text}", NET) for t in every(start, n, 2)]


def broker_unreachable(doc):
    (f,) = of(doc, "kafka.broker-unreachable")
    return f


def test_metadata_wait_timeout_after_a_bootstrap_outage_is_a_failed_send(tmp_path):
    lines = bootstrap_down() + [l4j("2024-05-04 06:01:00,000", "ERROR", f"Failed to publish event: {META_TOPIC}", AUDIT)]
    p = write(tmp_path, "audit.log", lines)
    doc = analyze(p, "--format", "json").json()
    f = broker_unreachable(doc)
    assert f["severity"] == "high"  # a record was lost: not a restart, not "nothing failed"
    (s,) = f["subjects"]
    assert (s["node"], s["address"], s["failed_connections"]) == (-1, "kafka-bootstrap/10.0.0.5:9092", 30)
    assert (s["metadata_timeouts"], s["expired_records"], s["buffer_exhausted"]) == (1, 0, 0)
    assert f["details"]["metadata_timeout_topics"] == ["audit-events"]
    rc = f["root_cause"]
    assert "no send() failed" not in rc and "Nothing expired" not in rc
    assert "1 send() call failed waiting for metadata (topic audit-events, after 60000 ms)" in rc
    assert "never accepted by the producer" in rc
    # the evidence quotes the application's line itself, at its real line number
    (e,) = [e for e in f["evidence"] if "record never accepted" in e["note"]]
    assert (e["path"], e["line"]) == (str(p), 31) and e["text"] == lines[30]
    # node -1 is bootstrap.servers, not a broker that leads partitions
    rem = f["remediation"]
    assert rem[0].startswith("Node -1 is a bootstrap address (bootstrap.servers), not a broker id")
    assert "kafka-bootstrap/10.0.0.5:9092" in rem[0]
    assert not any("Partitions led by an unreachable broker" in r for r in rem)
    assert any("max.block.ms" in r and "make sure topic audit-events exists" in r for r in rem)
    assert not of(doc, "kafka.delivery-timeout") and not of(doc, "kafka.buffer-exhausted")

    t = analyze(p, "--format", "text", "-v").out
    assert "[HIGH] Bootstrap broker (node -1) (kafka-bootstrap/10.0.0.5:9092) unreachable for 58.0 s (producer-1 in" in t
    assert f"in {p.parent}/" in t and f"{p.name}:31:" in t and "metadata_timeouts=1" in t  # the shared directory said once
    assert "no send() failed" not in flat(t)
    assert "Partitions led by an unreachable broker" not in flat(t)


def test_metadata_wait_timeout_partition_form_in_a_stack_trace_counts_once(tmp_path):
    lines = bootstrap_down() + [
        l4j("2024-05-04 06:01:00,000", "ERROR", "Failed to send order 17", "com.example.orders.OrderPublisher",
            f"java.util.concurrent.ExecutionException: {META_PARTITION}",
            "\tat org.apache.kafka.clients.producer.KafkaProducer$FutureFailure.<init>(KafkaProducer.java:1442)",
            f"Caused by: {META_PARTITION}"),
        l4j("2024-05-04 06:01:05,000", "ERROR", f"Failed to send order 18: {META_PARTITION}", "com.example.orders.OrderPublisher"),
        l4j("2024-05-04 06:09:00,000", "INFO", "published 40 orders", "com.example.orders.OrderPublisher"),
    ]
    p = write(tmp_path, "orders.log", lines)
    f = broker_unreachable(analyze(p, "--format", "json").json())
    (s,) = f["subjects"]
    # an ExecutionException and its "Caused by:" are one failed send(): 2, not 3
    assert s["metadata_timeouts"] == 2 and f["severity"] == "high" and s["recovered"] is True
    assert f["details"]["metadata_timeout_topics"] == ["orders"]
    assert "2 send() calls failed waiting for metadata (topic orders, after 60000 ms)" in f["root_cause"]
    file_lines = p.read_text().splitlines()
    got = {e["note"]: e["line"] for e in f["evidence"]}
    first = got["send() failed: no metadata within max.block.ms (record never accepted)"]
    assert first == 32 and file_lines[first - 1].startswith("java.util.concurrent.ExecutionException") and "Partition 7 of topic orders" in file_lines[first - 1]
    assert got["last send() that failed waiting for metadata"] == 35


def test_pre_2_0_metadata_wait_text_is_a_failed_send_too(tmp_path):
    """Clients before 2.0 say 'Failed to update metadata after N ms.' (no topic): still a send() that failed."""
    old = "Connection to node -1 could not be established. Broker may not be available."
    lines = bootstrap_down(start=_dt.datetime(2018, 6, 1, 3, 0, 0), text=old) + [
        l4j("2018-06-01 03:01:00,000", "ERROR", "Failed to publish event", AUDIT,
            "org.apache.kafka.common.errors.TimeoutException: Failed to update metadata after 60000 ms."),
    ]
    p = write(tmp_path, "old.log", lines)
    f = broker_unreachable(analyze(p, "--format", "json").json())
    (s,) = f["subjects"]
    assert (s["node"], s["address"], s["metadata_timeouts"]) == (-1, None, 1)
    assert f["severity"] == "high" and f["details"]["pre_2_1"] is True
    assert "no send() failed" not in f["root_cause"] and "never accepted" in f["root_cause"]
    (e,) = [e for e in f["evidence"] if "record never accepted" in e["note"]]
    assert e["line"] == 32 and "Failed to update metadata after 60000 ms." in e["text"]
    assert any("older than 2.1" in r and "KIP-91" in r for r in f["remediation"])


# ----------------------------------------------------------------------------- a client older than 2.1

NET_OLD = "Connection to node 2 could not be established. Broker may not be available."  # <=2.0: no address
SENDER = "org.apache.kafka.clients.producer.internals.Sender"


def pre_2_1_client_lines():
    """A 1.1 client: node 2 away for 11 s, two batches expire after request.timeout.ms (≤2.0 texts)."""
    out = []
    for i, t in enumerate(every(_dt.datetime(2019, 11, 5, 22, 30, 0), 8, 1.3)):
        out.append(l4j(stamp(t), "WARN", f"[Producer clientId=producer-3] {NET_OLD}", NET))
        out.append(l4j(stamp(t + _dt.timedelta(seconds=1.2)), "WARN",
                       f"[Producer clientId=producer-3] Got error produce response with correlation id {500 + i} on topic-partition "
                       "payments-0, retrying (2 attempts left). Error: NETWORK_EXCEPTION", SENDER))
    out += [
        l4j("2019-11-05 22:30:36,500", "ERROR", "Payment 991 failed", "com.example.payments.Publisher",
            "org.apache.kafka.common.errors.TimeoutException: Expiring 5 record(s) for payments-0: 30012 ms has passed since last append"),
        l4j("2019-11-05 22:30:39,500", "ERROR", "Payment 992 failed", "com.example.payments.Publisher",
            "org.apache.kafka.common.errors.TimeoutException: Expiring 3 record(s) for payments-0: 30107 ms has passed since batch creation plus linger time"),
        l4j("2019-11-05 22:35:00,000", "INFO", "published 12 payments", "com.example.payments.Publisher"),
    ]
    return out


@pytest.fixture(scope="module")
def pre_2_1(tmp_path_factory):
    p = tmp_path_factory.mktemp("pre21") / "payments-producer.log"
    p.write_bytes(("\n".join(pre_2_1_client_lines()) + "\n").replace("\n", "\r\n").encode())  # a Windows host: CRLF
    return p, analyze(p, "--format", "json").json(), analyze(p, "--format", "text").out


def test_pre_2_1_delivery_timeout_speaks_of_request_timeout(pre_2_1):
    _, doc, _ = pre_2_1
    (f,) = of(doc, "kafka.delivery-timeout")
    assert per_tp(f) == {"payments-0": (8, 2)}
    d = f["details"]
    assert d["pre_2_1_texts"] is True
    assert d["request_timeout_ms_at_most"] == 30012.0 and d["delivery_timeout_ms_at_most"] is None
    c = f["cause"]
    assert (c["kind"], c["node"], c["address"], c["failed_connections"]) == ("broker-unreachable", 2, None, 8)
    rc = f["root_cause"]
    assert "delivery.timeout.ms ran out" not in rc
    assert "until request.timeout.ms ran out" in rc
    assert "there is no delivery.timeout.ms before 2.1" in rc
    assert "counted from its last append (a full batch) or from its creation plus linger.ms" in rc
    words = prose(f)
    assert "delivery.timeout.ms ran out" not in words and "lowered delivery.timeout.ms" not in words
    assert "just past the default request.timeout.ms (30000 ms)" in " ".join(f["confidence_reasons"])
    assert any(r.startswith("This client is older than 2.1") and "Upgrading the client to 2.1+" in r and "KIP-91" in r
               for r in f["remediation"])
    assert not any(r.startswith("delivery.timeout.ms (default") for r in f["remediation"])


def test_pre_2_1_outage_advice_is_for_the_old_client(pre_2_1):
    _, doc, _ = pre_2_1
    f = broker_unreachable(doc)
    assert f["details"]["pre_2_1"] is True and f["subjects"][0]["expired_records"] == 8
    rem = " ".join(f["remediation"])
    assert "This is a client older than 2.1" in rem and "Upgrading the client to 2.1+ (KIP-91)" in rem
    assert "default Integer.MAX_VALUE since 2.1" not in rem
    assert any("request.timeout.ms" in r and "<=2.0" in r for r in f["references"])


def test_pre_2_1_crlf_file_quotes_clean_lines_at_their_numbers(pre_2_1):
    p, doc, text = pre_2_1
    (inp,) = doc["inputs"]
    assert inp["line_ending"] == "crlf" and inp["layout"] == "kafka-log4j"
    lines = p.read_bytes().decode().split("\r\n")
    quoted = [e for fd in doc["findings"] for e in fd["evidence"]]
    assert len(quoted) >= 5
    for e in quoted:
        assert "\r" not in e["text"] and lines[e["line"] - 1] == e["text"], e
    (f,) = of(doc, "kafka.delivery-timeout")
    assert [e["line"] for e in f["evidence"] if "expired batch" in e["note"] or "expiry" in e["note"]][:1] == [18]
    assert "\r" not in text
    assert "[CRITICAL] 8 records expired undelivered on 1 partition" in text
    assert "until request.timeout.ms ran out" in flat(text)
    assert "delivery.timeout.ms ran out" not in flat(text)


# ----------------------------------------------------------------------------- restarts and long outages with nothing lost


def restart(node, start, down_s=15, client="producer-1"):
    """What a client sees of one broker restart: the connection drops, the leader moves, reconnects fail for down_s."""
    t0 = stamp(start)
    out = [
        l4j(t0, "INFO", f"[Producer clientId={client}] Node {node} disconnected.", NET),
        l4j(t0, "WARN", f"[Producer clientId={client}] Got error produce response with correlation id {100 * node} on topic-partition "
            f"orders-{node}, retrying (2147483646 attempts left). Error: NOT_LEADER_OR_FOLLOWER", SENDER),
    ]
    for t in every(start + _dt.timedelta(seconds=3), down_s // 3, 3):
        out.append(l4j(stamp(t), "WARN", f"[Producer clientId={client}] Connection to node {node} (kafka-{node}/10.0.0.{node}:9092) "
                       "could not be established. Broker may not be available.", NET))
    return out


def rolling_restart(gap_s):
    """Brokers 1, 2, 3 restarted one after another (each away 15 s, gap_s between them); nothing expires."""
    start = _dt.datetime(2024, 5, 5, 3, 0, 0)
    lines = []
    for i, node in enumerate((1, 2, 3)):
        lines += restart(node, start + _dt.timedelta(seconds=i * (15 + gap_s)))
    end = start + _dt.timedelta(seconds=3 * (15 + gap_s) + 600)
    return lines + [l4j(stamp(end), "INFO", "published 1200 orders", APP)]


@pytest.mark.parametrize("gap_s", [585, 90])
def test_rolling_restart_is_one_low_finding_per_broker(cli, tmp_path, gap_s):
    p = write(tmp_path, "orders.log", rolling_restart(gap_s))
    doc = analyze(p, "--format", "json").json()
    found = sorted(of(doc, "kafka.broker-unreachable"), key=lambda f: f["subjects"][0]["node"])
    assert [f["subjects"][0]["node"] for f in found] == [1, 2, 3]
    for f in found:
        (s,) = f["subjects"]
        assert f["severity"] == "low", f["title"]
        assert (s["duration_s"], s["failed_connections"], s["recovered"]) == (15.0, 5, True)
        assert (s["expired_records"], s["buffer_exhausted"], s["metadata_timeouts"]) == (0, 0, 0)
        assert f["details"]["other_nodes"] == []
        assert "what a broker restart (a rolling restart, say) looks like from a client" in f["root_cause"]
        assert "Nothing expired and no send() failed" in f["root_cause"]
    # the quiet after broker 1 ends where broker 2's restart begins: never "no trouble in the next 10 minutes"
    first = found[0]
    assert first["details"]["quiet_after_s"] == gap_s
    assert f"no trouble logged for {fmt_duration(gap_s)} after 2024-05-05 03:00:15 UTC" in first["root_cause"]
    assert not of(doc, "kafka.delivery-timeout") and not of(doc, "kafka.buffer-exhausted")
    r = cli("analyze", "--tz", "UTC", p, "--fail-on", "medium")
    assert r.code == 0, r
    r = cli("analyze", "--tz", "UTC", p, "--format", "text", "--fail-on", "low")
    assert r.code == 1, r
    assert r.out.count("[LOW] Broker node ") == 3 and "[MEDIUM]" not in r.out


def test_a_minute_long_outage_with_nothing_lost_stays_medium(cli, tmp_path):
    # node 2 away 10:14:00 -> 10:16:20 (140 s), then 10 quiet minutes: recovered, nothing lost
    lines = failures(2, 14, 17)[:-1] + [l4j("2024-05-02 10:26:00,000", "INFO", "published 12 orders", APP)]
    p = write(tmp_path, "a.log", lines)
    f = broker_unreachable(analyze(p, "--format", "json").json())
    (s,) = f["subjects"]
    assert (s["duration_s"], s["recovered"], s["expired_records"]) == (140.0, True, 0)
    assert f["severity"] == "medium"
    assert "Nothing expired and no send() failed" in f["root_cause"] and "rolling restart" not in f["root_cause"]
    r = cli("analyze", "--tz", "UTC", p, "--fail-on", "medium")
    assert r.code == 1, r
    # the same node back after 57 s is a restart (low); after exactly a minute it is not
    for secs, severity in ((57, "low"), (60, "medium")):
        short = [l4j(stamp(t), "WARN", "[Producer clientId=producer-1] Connection to node 2 (kafka-2/10.0.0.2:9092) could not be "
                     "established. Broker may not be available.", NET)
                 for t in every(_dt.datetime(2024, 5, 2, 10, 0, 0), secs // 3 + 1, 3)]
        g = broker_unreachable(analyze(write(tmp_path, f"b{secs}.log", short + lines[-1:]), "--format", "json").json())
        assert (g["subjects"][0]["duration_s"], g["severity"]) == (float(secs), severity)


# ----------------------------------------------------------------------------- sends refused meanwhile

METADATA = "org.apache.kafka.clients.Metadata"


def short_outage_with(*extra):
    """Node 2 away 27 s (a restart, were it not for the extra lines), then 10 quiet minutes."""
    lines = [l4j(stamp(t), "WARN", "[Producer clientId=producer-1] Connection to node 2 (kafka-2/10.0.0.2:9092) could not be "
                 "established. Broker may not be available.", NET) for t in every(_dt.datetime(2024, 5, 6, 9, 0, 0), 10, 3)]
    return sorted(lines + list(extra)) + [l4j("2024-05-06 09:10:00,000", "INFO", "done", APP)]


AUTH_FAILED = l4j("2024-05-06 09:00:10,000", "ERROR", "[Producer clientId=producer-1] Topic authorization failed for topics [orders, payments]", METADATA)
INVALID = l4j("2024-05-06 09:00:12,000", "ERROR", "[Producer clientId=producer-1] Metadata response reported invalid topics [orders!]", METADATA)


def test_topic_authorization_failure_during_an_outage_is_medium(tmp_path):
    p = write(tmp_path, "a.log", short_outage_with(AUTH_FAILED))
    f = broker_unreachable(analyze(p, "--format", "json").json())
    (s,) = f["subjects"]
    assert (s["duration_s"], s["recovered"], s["expired_records"], s["metadata_timeouts"]) == (27.0, True, 0, 0)
    assert f["severity"] == "medium" and f["details"]["refused_sends"] == 1
    rc = f["root_cause"]
    assert "no send() failed" not in rc and "rolling restart" not in rc
    assert "1 topic authorization failure (orders, payments)" in rc
    (e,) = [e for e in f["evidence"] if e["note"] == "sends to these topics fail"]
    assert e["line"] == 5 and "Topic authorization failed for topics [orders, payments]" in e["text"]
    assert any("ACL" in r and "orders, payments" in r for r in f["remediation"])


def test_invalid_topics_during_an_outage_are_medium(tmp_path):
    doc = analyze(write(tmp_path, "a.log", short_outage_with(INVALID)), "--format", "json").json()
    f = broker_unreachable(doc)
    assert f["severity"] == "medium" and f["details"]["refused_sends"] == 1
    assert "1 invalid-topic response (orders!)" in f["root_cause"] and "no send() failed" not in f["root_cause"]
    both = broker_unreachable(analyze(write(tmp_path, "b.log", short_outage_with(AUTH_FAILED, INVALID)), "--format", "json").json())
    assert both["details"]["refused_sends"] == 2
    assert "1 topic authorization failure (orders, payments) and 1 invalid-topic response (orders!)" in both["root_cause"]


def test_refused_topics_long_after_the_outage_do_not_raise_it(tmp_path):
    late = AUTH_FAILED.replace("09:00:10", "09:05:00")
    f = broker_unreachable(analyze(write(tmp_path, "a.log", short_outage_with(late)), "--format", "json").json())
    assert f["severity"] == "low" and f["details"]["refused_sends"] == 0
    assert "authorization" not in f["root_cause"]


# ----------------------------------------------------------------------------- Spring Kafka double logging; consumers

SB2_NET = "o.a.kafka.clients.NetworkClient"
SB2_NT = "kafka-producer-network-thread | producer-1"
LISTENER = "o.s.k.support.LoggingProducerListener"
SHIPPING = "c.e.shipping.ShipmentService"


def sb2(t, level, thread, logger, msg, *cont):
    """One Spring Boot 2 FILE-layout record (Spring Kafka apps)."""
    head = f"{t:%Y-%m-%d %H:%M:%S}.{t.microsecond // 1000:03d} {level:>5} 1 --- [{thread[-15:]:>15}] {logger[:40]:<40} : {msg}"
    return "\n".join([head, *cont])


def sb2_failures(node, start, seconds, prefix="[Producer clientId=producer-1] ", thread=SB2_NT, step_s=3):
    return [sb2(t, "WARN", thread, SB2_NET, f"{prefix}Connection to node {node} (kafka-{node}/10.2.0.{node}:9092) could not be "
                "established. Broker may not be available.") for t in every(start, seconds // step_s + 1, step_s)]


def spring_double_logged(at, records, tp="shipments-2", elapsed=120004, key0=7000):
    """One expired batch the way a KafkaTemplate app logs it: Spring Kafka's LoggingProducerListener logs every
    failed record with the TimeoutException, then the application's own future callback logs it again
    (KafkaProducerException wrapping it): 2 log records per record, all with Kafka's one text."""
    exc = f"org.apache.kafka.common.errors.TimeoutException: Expiring {records} record(s) for {tp}:{elapsed} ms has passed since batch creation"
    out = []
    for r in range(records):
        t = at + _dt.timedelta(milliseconds=r)
        out.append(sb2(t, "ERROR", SB2_NT, LISTENER, f"Exception thrown when sending a message with key='{key0 + r}' and "
                       f"payload='ShipmentEvent(id={key0 + r})' to topic {tp.rsplit('-', 1)[0]} and partition {tp.rsplit('-', 1)[1]}:", "", exc))
        out.append(sb2(t + _dt.timedelta(microseconds=300), "ERROR", SB2_NT, SHIPPING, f"could not publish shipment {key0 + r}", "",
                       "org.springframework.kafka.core.KafkaProducerException: Failed to send; nested exception is " + exc,
                       "\tat org.springframework.kafka.core.KafkaTemplate.lambda$buildCallback$4(KafkaTemplate.java:602)",
                       f"Caused by: {exc}"))
    return out


SPRING_T0 = _dt.datetime(2024, 5, 2, 3, 40, 0, 250000)


def spring_outage(*batches):
    """Node 3 away for 4 minutes from SPRING_T0, the given expired batches, then 4 quiet minutes."""
    lines = sb2_failures(3, SPRING_T0, 240)
    for b in batches:
        lines += b
    end = SPRING_T0 + _dt.timedelta(minutes=8)
    return sorted(lines) + [sb2(end, "INFO", "http-nio-8080-exec-5", SHIPPING, "shipment event sent")]


def test_spring_kafka_double_logging_counts_each_batch_once(tmp_path):
    at = SPRING_T0 + _dt.timedelta(seconds=120.2)
    p = write(tmp_path, "shipping.log", spring_outage(spring_double_logged(at, 40)))
    doc = analyze(p, "--format", "json").json()
    (f,) = of(doc, "kafka.delivery-timeout")
    assert per_tp(f) == {"shipments-2": (40, 1)}  # not 80 records in 2 batches
    assert (f["details"]["records"], f["details"]["batches"], f["details"]["log_records"]) == (40, 1, 80)
    assert f["details"]["by_partition"]["shipments-2"]["loggers"] == 2
    assert f["title"].startswith("40 records expired undelivered on 1 partition")
    assert f["cause"]["kind"] == "broker-unreachable" and f["cause"]["node"] == 3
    b = broker_unreachable(doc)
    (s,) = b["subjects"]
    assert (s["expired_records"], b["details"]["expired_batches"]) == (40, 1)


def test_two_real_batches_of_one_size_still_count_twice(tmp_path):
    # two batches of 40 on shipments-2, the same age, expiring 5 s apart: each double-logged by Spring Kafka
    at = SPRING_T0 + _dt.timedelta(seconds=120.2)
    later = at + _dt.timedelta(seconds=5)
    p = write(tmp_path, "shipping.log", spring_outage(spring_double_logged(at, 40), spring_double_logged(later, 40, key0=8000)))
    doc = analyze(p, "--format", "json").json()
    (f,) = of(doc, "kafka.delivery-timeout")
    assert per_tp(f) == {"shipments-2": (80, 2)}
    assert (f["details"]["records"], f["details"]["log_records"]) == (80, 160)
    assert broker_unreachable(doc)["subjects"][0]["expired_records"] == 80
    # the same two batches logged by one logger only (once per record): still two
    one = [x for x in spring_outage(spring_double_logged(at, 40), spring_double_logged(later, 40, key0=8000)) if LISTENER not in x]
    (g,) = delivery(tmp_path, write(tmp_path, "one-logger.log", one))
    assert per_tp(g) == {"shipments-2": (80, 2)} and g["details"]["log_records"] == 80
    # and a listener that logged only the first batch does not hide the second one the callback logged
    mixed = [x for x in spring_outage(spring_double_logged(at, 40), spring_double_logged(later, 40, key0=8000))
             if not (LISTENER in x and "key='80" in x)]
    (h,) = delivery(tmp_path, write(tmp_path, "mixed.log", mixed))
    assert per_tp(h) == {"shipments-2": (80, 2)} and h["details"]["log_records"] == 120


CONSUMER_THREAD = "org.springframework.kafka.KafkaListenerEndpointContainer#0-0-C-1"


def test_a_consumer_only_outage_is_no_producer_finding(cli, tmp_path):
    # a service with no producer: its consumer cannot reach node 1 for 3 minutes, then 5 quiet minutes
    t0 = _dt.datetime(2024, 5, 2, 12, 0, 0, 100000)
    lines = [sb2(t, "INFO", CONSUMER_THREAD, "c.e.audit.AuditListener", "consumed audit batch") for t in every(t0, 120, 5)]
    lines += sb2_failures(1, t0 + _dt.timedelta(seconds=100), 180, step_s=1, thread=CONSUMER_THREAD,
                          prefix="[Consumer clientId=consumer-audit-1, groupId=audit] ")
    lines += [sb2(t0 + _dt.timedelta(seconds=101), "WARN", "kafka-admin-client-thread | adminclient-1", SB2_NET,
                  "[AdminClient clientId=adminclient-1] Connection to node 1 (kafka-1/10.2.0.1:9092) could not be established. "
                  "Broker may not be available.")]
    p = write(tmp_path, "audit.log", sorted(lines))
    ev = cli("events", "--tz", "UTC", p, "--format", "ndjson", "--event", "connection_failed")
    roles = {json.loads(x)["client_role"] for x in ev.out.splitlines()}
    assert roles == {"Consumer", "AdminClient"}, ev
    doc = analyze(p, "--format", "json").json()
    assert [f["id"] for f in doc["findings"] if f["id"].startswith("kafka.")] == []
    r = cli("analyze", "--tz", "UTC", p, "--fail-on", "medium")
    assert r.code == 0, r


def test_consumer_lines_leave_the_producer_finding_and_its_numbers_alone(tmp_path):
    # one service, one client.id for both clients (spring.kafka.client-id does that): the producer loses node 2
    # 10:14:00 -> 10:18:40 and a batch; its consumer sees node 2 fail from 10:10 to 10:25 and node 1 after that
    producer = failures(2, 14, 19, client="orders-svc") + expiry_lines(4, 4, "orders-0", 120000, ts="2024-05-02 10:17:31,000")
    consumer = []
    for m in range(10, 30):
        for s in (0, 20, 40):
            node = 2 if m < 25 else 1
            consumer.append(l4j(f"2024-05-02 10:{m:02d}:{s:02d},500", "WARN", f"[Consumer clientId=orders-svc, groupId=orders] "
                                f"Connection to node {node} (kafka-{node}/10.0.0.{node}:9092) could not be established. Broker may not be available.", NET))
    quiet = [l4j("2024-05-02 10:40:00,000", "INFO", "published 12 orders", APP)]
    alone = analyze(write(tmp_path, "alone.log", producer + quiet), "--format", "json").json()
    mixed = analyze(write(tmp_path, "mixed.log", sorted(producer + consumer) + quiet), "--format", "json").json()
    (b,) = of(mixed, "kafka.broker-unreachable")
    (b0,) = of(alone, "kafka.broker-unreachable")
    (s,), (s0,) = b["subjects"], b0["subjects"]
    assert s["client_id"] == "orders-svc" and s["node"] == 2
    assert (s["failed_connections"], s["duration_s"], s["expired_records"], s["recovered"]) == (15, 280.0, 4, True)
    assert {k: v for k, v in s.items() if k != "path"} == {k: v for k, v in s0.items() if k != "path"}
    assert (b["first_seen"], b["last_seen"], b["severity"]) == ("2024-05-02T10:14:00.000Z", "2024-05-02T10:18:40.000Z", "high")
    (d,) = of(mixed, "kafka.delivery-timeout")
    assert per_tp(d) == {"orders-0": (4, 1)}
    assert (d["cause"]["from"], d["cause"]["to"], d["cause"]["failed_connections"]) == ("2024-05-02T10:14:00.000Z", "2024-05-02T10:18:40.000Z", 15)


# ----------------------------------------------------------------------------- no time stamps to tell the loggers apart

UNTIMED = SAMPLES / "kafka-untimed"


@pytest.mark.parametrize("name", ["shipping-console.log", "shipping-shipped.json"])
def test_one_batch_quoted_by_several_loggers_without_time_stamps_counts_once(name):
    """A console pattern without %d (read as plain messages), as is and as a shipper forwards it
    without a time: every expired record is quoted three times (Spring's listener, the application's
    KafkaProducerException and its Caused by), one line each, with no time and no logger to tell
    them apart. Each batch counts once: shipments-2 three batches of 1 record (120004 ms, 120019 ms,
    and 120004 ms again after 150 other lines), shipments-0 one of 3."""
    doc = analyze(UNTIMED / name, "--format", "json").json()
    (f,) = of(doc, "kafka.delivery-timeout")
    assert per_tp(f) == {"shipments-0": (3, 1), "shipments-2": (3, 3)}
    assert (f["details"]["records"], f["details"]["batches"], f["details"]["log_records"]) == (6, 4, 18)
    lines = (UNTIMED / name).read_text()
    assert lines.count("Expiring 1 record(s) for shipments-2:120004 ms") == 6  # 2 batches × 3 quotes
    r = analyze(UNTIMED / name, "--format", "text")
    assert "6 records expired undelivered on 2 partitions" in r.out


def test_untimed_layouts_are_recognised():
    from conftest import run

    r = run("inspect", UNTIMED)
    assert r.code == 0
    assert sorted(re.findall(r"^envelope\s+(\S+)", r.out, re.M)) == ["json", "none"]
    assert re.findall(r"^layout\s+(\S+)", r.out, re.M) == ["message-only", "message-only"]


def _old_console_producer_log(tmp_path, texts: str, seconds: int = 90, servers: tuple[str, ...] = ("broker-a:9092",)):
    """A 0.10-era producer in the Kafka tools layout: no [Producer clientId=..] prefix, no thread,
    bootstrap disconnects about once a second, and the application's callback logging expiries."""
    t0 = _dt.datetime(2023, 3, 7, 2, 10, 0)
    lines = []
    for i in range(seconds):
        at = t0 + _dt.timedelta(seconds=i, milliseconds=37 * (i % 7))
        server = servers[i % len(servers)]
        lines.append(f"[{at:%Y-%m-%d %H:%M:%S},{at.microsecond // 1000:03d}] WARN Bootstrap broker {server} disconnected (org.apache.kafka.clients.NetworkClient)")
        if i in (40, 52):  # a batch of 2 records, then one of 3: the callback logs once per record
            n = 2 if i == 40 else 3
            for k in range(n):
                lines.append(f"[{at:%Y-%m-%d %H:%M:%S},{500 + k:03d}] ERROR Error when sending message to topic audit with key: null, value: {9 + k} bytes with error: (org.apache.kafka.clients.producer.internals.ErrorLoggingCallback)")
                lines.append(texts.format(n=n, tp="audit-2"))
    log = tmp_path / "console-producer.log"
    log.write_text("\n".join(lines) + "\n")
    return log


def test_a_0_10_producer_that_never_got_metadata_is_diagnosed(tmp_path):
    # 0.10.0: the expiry names no elapsed time, no line names the client, and the outage is only
    # 'Bootstrap broker host:port disconnected' (logged when a bootstrap connection is dropped before
    # any metadata came back; 0.10 logs refused connections at DEBUG only). It was a false all-clear.
    log = _old_console_producer_log(
        tmp_path, "org.apache.kafka.common.errors.TimeoutException: Batch containing {n} record(s) expired due to timeout while requesting metadata from brokers for {tp}"
    )
    doc = analyze(log, "--format", "json").json()
    got = {f["id"]: f for f in doc["findings"]}
    assert set(got) == {"kafka.delivery-timeout", "kafka.broker-unreachable"}, [f["title"] for f in doc["findings"]]
    out = got["kafka.broker-unreachable"]
    assert out["title"].startswith("Bootstrap broker (node -1) (broker-a:9092) unreachable for 89.2 s (") and "?" not in out["title"]
    assert out["cause"]["client_id"] is None and out["cause"]["bootstrap_drops"] == 90
    assert "90 connections to the bootstrap broker dropped before any metadata came back" in out["root_cause"]
    lost = got["kafka.delivery-timeout"]
    assert lost["subjects"][0]["topic_partition"] == "audit-2" and lost["subjects"][0]["client_id"] is None
    assert (lost["subjects"][0]["records"], lost["subjects"][0]["batches"]) == (5, 2)
    assert "names no elapsed time" in lost["root_cause"] and "bootstrap broker (node -1) (broker-a:9092) was unreachable" in lost["root_cause"]
    assert lost["severity"] == "critical"
    # the evidence quotes the lines themselves (their texts fetched after the detectors ran)
    lines = log.read_text().splitlines()
    for f in doc["findings"]:
        assert f["evidence"] and all(lines[e["line"] - 1] == e["text"] for e in f["evidence"]), f["evidence"]

    text = analyze(log).out
    assert "(? in" not in text and "the producer in console-producer.log" in text


def test_old_bootstrap_disconnects_name_each_bootstrap_server(tmp_path):
    # two bootstrap servers, the 0.10.1 expiry text (it names the wait): the node ids the log does not
    # give are numbered by first appearance; the time the batches waited is read as before
    log = _old_console_producer_log(
        tmp_path, "org.apache.kafka.common.errors.TimeoutException: Expiring {n} record(s) for {tp} due to 30412 ms has passed since last append",
        servers=("broker-a:9092", "broker-b:9092"),
    )
    doc = analyze(log, "--format", "json").json()
    out = next(f for f in doc["findings"] if f["id"] == "kafka.broker-unreachable")
    # each server its own bootstrap node: -1 the first to appear, -2 the second; the two failed alike
    assert {out["cause"]["node"]: out["cause"]["address"]}.items() <= {-1: "broker-a:9092", -2: "broker-b:9092"}.items()
    assert out["cause"]["bootstrap_drops"] == 90
    lost = next(f for f in doc["findings"] if f["id"] == "kafka.delivery-timeout")
    assert "30412 ms" in lost["root_cause"]


def test_bootstrap_disconnects_of_a_newer_client_stay_soft(tmp_path):
    # 1.0+ names the node ('(id: -1 rack: null)') and logs failed connections itself: its bootstrap
    # disconnects alone are disconnects, not an unreachable broker
    log = tmp_path / "new.log"
    t0 = _dt.datetime(2023, 3, 7, 2, 10, 0)
    log.write_text("".join(
        f"[{t0 + _dt.timedelta(seconds=3 * i):%Y-%m-%d %H:%M:%S},000] WARN [Producer clientId=producer-1] Bootstrap broker broker-a:9092 (id: -1 rack: null) disconnected (org.apache.kafka.clients.NetworkClient)\n"
        for i in range(30)
    ))
    doc = analyze(log, "--format", "json").json()
    assert not [f for f in doc["findings"] if f["id"] == "kafka.broker-unreachable" and "unreachable for" in f["title"]], [f["title"] for f in doc["findings"]]


def _reshaped(shape: str) -> str:
    """sample_logs/kafka-callback/orders-app.log written by Dropwizard's layout ('%-5p
    [%d{ISO8601,UTC}] %c: %m%n%rEx', trace lines prefixed '! ') or Quarkus' (JBoss LogManager
    '%d{yyyy-MM-dd HH:mm:ss,SSS} %-5p [%c{3.}] (%t) %s%e%n': the exception after ': ' on the
    message's own line, its frames under it)."""
    import re as _re

    head = _re.compile(r"^\[(?P<ts>[^\]]+)\] (?P<lvl>\w+) (?P<msg>.*) \((?P<logger>[\w.$]+)\)$")
    out: list[str] = []
    for line in (SAMPLES / "kafka-callback" / "orders-app.log").read_text().splitlines():
        m = head.match(line)
        if shape == "dropwizard":
            out.append(f"{m['lvl']:<5} [{m['ts']}] {m['logger']}: {m['msg']}" if m else "! " + line.removeprefix("\t"))
        elif m:
            short = ".".join([p[:3] for p in m["logger"].split(".")[:-1]] + [m["logger"].split(".")[-1]])
            thread = "kafka-producer-network-thread | producer-1" if "clientId" in m["msg"] else "main"
            out.append(f"{m['ts']} {m['lvl']:<5} [{short}] ({thread}) {m['msg']}")
        elif line.startswith("\t") or not out:
            out.append(line)
        else:  # the exception's own line: after ': ' on the record's line
            out[-1] += ": " + line
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("shape", ["dropwizard", "quarkus"])
def test_callback_errors_name_the_exception_in_dropwizard_and_quarkus_layouts(cli, tmp_path, shape):
    """Dropwizard's '! ' prefix hid the exception ('(no exception logged)'); Quarkus prints it on the
    message's line, where the next line's 'at' was taken for it (issue 33)."""
    p = tmp_path / "orders-app.log"
    p.write_text(_reshaped(shape))
    r = cli("analyze", "--tz", "UTC", "-f", "json", p)
    assert r.code == 0, r
    (f,) = [f for f in r.json()["findings"] if f["id"] == "kafka.callback-error"]
    assert "(NullPointerException ×22, IllegalStateException ×4)" in f["title"], f["title"]
    assert {s["exception"] for s in f["subjects"]} == {"java.lang.NullPointerException", "java.lang.IllegalStateException"}


SENDER = "org.apache.kafka.clients.producer.internals.Sender"


def _network_exception_log(tmp_path, modern: bool, failures: bool):
    """Produce retries on NETWORK_EXCEPTION counting down to 0 attempts left, then (``failures``)
    the application's sends failing with the NetworkException; no failed connection line (the
    broker accepted connections and dropped the requests). ``modern``: 2.8+ texts ('Error Message:
    Disconnected from node 2'), else the older ones (Errors.NETWORK_EXCEPTION's own message)."""
    detail = "Disconnected from node 2" if modern else "The server disconnected before a response was received."
    retry_error = "NETWORK_EXCEPTION. Error Message: Disconnected from node 2" if modern else "NETWORK_EXCEPTION"
    lines = [l4j("2024-05-02 10:16:00,000", "INFO", f"sent order {n}", "com.example.orders.OrderPublisher") for n in range(3)]
    for i, left in enumerate((2, 1, 0)):
        lines.append(l4j(f"2024-05-02 10:17:3{i},201", "WARN", f"[Producer clientId=producer-1] Got error produce response with correlation id "
                         f"{8812 + i} on topic-partition orders-4, retrying ({left} attempts left). Error: {retry_error}", SENDER))
        lines.append(l4j(f"2024-05-02 10:17:3{i},305", "WARN", "[Producer clientId=producer-1] Received invalid metadata error in produce "
                         f"request on partition orders-4 due to org.apache.kafka.common.errors.NetworkException: {detail}. Going to "
                         "request metadata update now", SENDER))
    if failures:
        lines.append(l4j("2024-05-02 10:17:33,644", "ERROR", "Failed to send order 81376 to orders", "com.example.orders.OrderPublisher",
                         f"org.apache.kafka.common.errors.NetworkException: {detail}"))
        lines.append(l4j("2024-05-02 10:17:33,650", "ERROR", "Order submission failed", "com.example.orders.OrderController",
                         f"java.util.concurrent.ExecutionException: org.apache.kafka.common.errors.NetworkException: {detail}",
                         "\tat org.apache.kafka.clients.producer.internals.FutureRecordMetadata.valueOrError(FutureRecordMetadata.java:98)",
                         f"Caused by: org.apache.kafka.common.errors.NetworkException: {detail}"))
    lines += [l4j(f"2024-05-02 10:{m}:00,000", "INFO", f"sent order {m}", "com.example.orders.OrderPublisher") for m in range(19, 22)]
    return write(tmp_path, "orders.log", lines)


@pytest.mark.parametrize("modern", [True, False])
def test_sends_failed_with_a_network_exception_after_the_retries_ran_out_are_lost_records(tmp_path, modern):
    """Issue 28: retries on NETWORK_EXCEPTION counting down to zero, then NetworkException send
    errors, no 'could not be established': the finding said 'Nothing expired and no send() failed
    on this client: Kafka's retries covered it' with the two failed sends in the log it read."""
    p = _network_exception_log(tmp_path, modern, failures=True)
    f = broker_unreachable(analyze(p, "--format", "json").json())
    (s,) = f["subjects"]
    # the older texts name no node: the finding says so rather than guess one
    assert (s["node"], s["network_failures"], s["failed_connections"]) == (2 if modern else None, 2, 0) and f["severity"] == "high", f
    if not modern:
        assert f["title"].startswith("A broker these texts do not name dropping connections"), f["title"]
    assert "no send() failed" not in f["root_cause"] and "covered it" not in f["root_cause"]
    said = "Disconnected from node 2" if modern else "The server disconnected before a response was received."
    assert f"2 sends failed with a NetworkException ({said})" in f["root_cause"], f["root_cause"]
    quoted = [e for e in f["evidence"] if "NetworkException" in e["text"] and "no retry left" in (e.get("note") or "")]
    lines = p.read_text().splitlines()
    assert quoted and lines[quoted[0]["line"] - 1].startswith("org.apache.kafka.common.errors.NetworkException"), f["evidence"]


def test_network_exception_retries_that_recovered_stay_a_low_finding(tmp_path):
    """The near miss: the same retries, but no send failed (the retries covered it) — the Sender's
    own 'due to ...NetworkException' warnings are not failed sends."""
    p = _network_exception_log(tmp_path, True, failures=False)
    f = broker_unreachable(analyze(p, "--format", "json").json())
    assert f["severity"] == "low" and f["subjects"][0]["network_failures"] == 0, f
    assert "no send() failed on this client" in f["root_cause"]
    # the older texts (no node named), nothing lost: no finding, as before
    p = _network_exception_log(tmp_path, False, failures=False)
    assert of(analyze(p, "--format", "json").json(), "kafka.broker-unreachable") == []
