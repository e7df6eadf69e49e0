"""The Kafka producer diagnoses through the real CLI: kafka.delivery-timeout, kafka.broker-unreachable,
kafka.buffer-exhausted and kafka.callback-error, on the sample incidents (Kafka tools log4j layout,
Spring Boot 2 and 3 layouts; sample_logs/generators/kafka.py) and on hand-made logs that pin the
counting and linking rules."""

from __future__ import annotations

import pytest

from conftest import SAMPLES

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
    return analyze(OUTAGE, "--format", "text").out


@pytest.fixture(scope="module")
def spring():
    return analyze(SPRING, "--format", "json").json()


@pytest.fixture(scope="module")
def spring_text():
    return analyze(SPRING, "--format", "text").out


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
    assert (s1["elapsed_ms_min"], s1["elapsed_ms_max"]) == (120005.0, 120027.0)
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
    assert orders["severity"] == "high" and billing["severity"] == "medium"  # nothing lost on billing
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
    assert s["max_block_ms"] == 60000 and s["buffer_memory"] == 1048576 and s["available_bytes_min"] == 0
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
    assert order[-1] == ("kafka.broker-unreachable", "medium")
    assert not of(outage, "kafka.callback-error")


def test_log4j_outage_text_report(outage_text):
    t = outage_text
    assert "[CRITICAL] 209 records expired undelivered on 3 partitions" in t
    assert "topic_partition=orders-1, topic=orders, partition=1, records=135, batches=3" in t
    assert "topic_partition=payments-2, topic=payments, partition=2, records=13, batches=3" in t
    assert "kind=broker-unreachable, node=2, address=kafka-2/10.0.0.7:9092" in t
    assert "were NOT delivered to Kafka" in t
    assert "count=23, max_block_ms=60000" in t
    assert "[MEDIUM] Broker node 2 (kafka-2/10.0.0.7:9092) unreachable" in t
    assert t.index("[CRITICAL]") < t.index("[HIGH]") < t.index("[MEDIUM]")


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
    assert all(s["node_named_by_retries"] for s in f["subjects"])  # 3.9: "Error Message: Disconnected from node 1"


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
    assert not any(s["node_named_by_retries"] for s in f["subjects"])
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
    assert "topic_partition=inventory-0, topic=inventory, partition=0, records=92, batches=3" in t
    assert "from=2024-09-17 14:02:10.118 UTC" in t
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
    npe = next(s for s in orders["subjects"] if s["topic_partition"] == "orders-3" and "Null" in s["exception"])
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
    t = analyze(CALLBACK, "--format", "text").out
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
    assert cat["subjects"][0]["request_timeouts"] == 2


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
    assert f["subjects"][0]["log_records"] == 52
    # no drain problem in this log: said so, lower confidence
    assert f["cause"]["kind"] == "none-found" and f["cause"]["node"] is None
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
    assert f["cause"]["kind"] == "none-found"
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
    assert f["cause"]["kind"] == "none-found"


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
    doc = analyze(write(tmp_path, "a.log", lines), "--format", "json").json()
    (f,) = of(doc, "kafka.buffer-exhausted")
    s = f["subjects"][0]
    assert (s["count"], s["max_block_ms"], s["exception"]) == (10, 45000, "org.apache.kafka.common.errors.TimeoutException")
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
    for d in ("kafka-outage", "kafka-outage-spring", "kafka-callback", "kafka-recovered"):
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
    assert per_tp(f) == {"orders-3": (5, 1)}  # 0 records and an unreadable count are not batches
    # no time stamps at all (the layout is not recognised): identical expiries are still one batch
    p = write(tmp_path, "b.log", ["foo " + exc.format(n=3, e=120000)] * 3)
    (g,) = delivery(tmp_path, p)
    assert per_tp(g) == {"orders-3": (3, 1)}
