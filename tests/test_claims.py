"""Claims checked against what the inputs cover (issue: findings built from facts): a finding that
says something did not happen names the input that covers that subject and window, or says which
log would settle it. Each test is a case where the tool once stated an absence its own inputs
contradicted."""

from __future__ import annotations

from conftest import SAMPLES, run

UNTIMED = """\
INFO  c.e.shipping.ShipmentPublisher - published shipment 8418 to shipments
WARN  o.a.k.clients.NetworkClient - [Producer clientId=producer-1] Connection to node 1001 (kafka-1/10.0.0.5:9092) could not be established. Broker may not be available.
WARN  o.a.k.clients.NetworkClient - [Producer clientId=producer-1] Connection to node 1001 (kafka-1/10.0.0.5:9092) could not be established. Broker may not be available.
WARN  o.a.k.clients.NetworkClient - [Producer clientId=producer-1] Connection to node 1001 (kafka-1/10.0.0.5:9092) could not be established. Broker may not be available.
ERROR c.e.shipping.ShipmentPublisher - send failed for shipment 8419
org.apache.kafka.common.errors.TimeoutException: Expiring 1 record(s) for shipments-2:120004 ms has passed since batch creation
ERROR c.e.shipping.ShipmentPublisher - send failed for shipment 8420
org.apache.kafka.common.errors.TimeoutException: Expiring 1 record(s) for shipments-2:120011 ms has passed since batch creation
INFO  c.e.shipping.ShipmentPublisher - published shipment 8421 to shipments
INFO  c.e.shipping.ShipmentPublisher - published shipment 8422 to shipments
"""


def test_a_log_without_time_stamps_is_not_said_to_lack_its_failed_connections(tmp_path):
    p = tmp_path / "producer.log"
    p.write_text(UNTIMED)
    doc = run("analyze", "--tz", "UTC", "--format", "json", p).json()
    (f,) = [f for f in doc["findings"] if f["id"] == "kafka.delivery-timeout"]
    said = " ".join([f["root_cause"], *f["confidence_reasons"], *f["ruled_out"]])
    assert "no failed connections" not in said, said
    assert "unknown time" not in f["root_cause"]
    assert "3 failed connections to node 1001 (lines 2, 3, 4)" in f["root_cause"]
    assert "no time stamps" in f["root_cause"]
    assert [e["line"] for e in f["evidence"] if "failed connection" in (e.get("note") or "")] == [2, 3, 4]
    assert f["cause"]["kind"] == "broker-unreachable" and f["cause"]["node"] == 1001
    # the terminal says it too
    out = run("analyze", "--tz", "UTC", "--format", "text", p).out
    assert "no failed connections" not in out and "line 6" in " ".join(out.split())


def test_a_broker_log_given_is_not_said_to_be_missing(tmp_path):
    """The brokers' rejection lines in a wording no pattern knows: the client-side finding must not
    say no broker log was given, nor ask for the broker log it was given; it names the broker logs
    that cover the window and quotes the unmatched line (a near miss)."""
    import re
    import shutil

    from conftest import SAMPLES

    inc = tmp_path / "inc"
    shutil.copytree(SAMPLES / "pulsar-incident", inc)
    for b in inc.glob("pulsar-broker-*.log"):
        text = b.read_text()
        text = re.sub(r"\[(/[0-9.:]+)\]\[([0-9]+)\] Producer with id (\S+) is already present on the connection",
                      r"Producer \2 with id \3 on \1 is already present on the connection", text)
        b.write_text(text)
    doc = run("analyze", "--tz", "UTC", "--format", "json", inc).json()
    f = next(f for f in doc["findings"] if f["id"] == "pulsar.dangling-producer-future" and f["details"].get("client_only"))
    said = " ".join([f["root_cause"], *f["confidence_reasons"], *f["remediation"]])
    assert "No broker log given" not in said and "not in the logs given" not in said and "Get the broker log" not in said, said
    assert "pulsar-broker-1.2020-06-01.log" in f["root_cause"] and "cover this window" in f["root_cause"]
    near = [e for e in f["evidence"] if "no pattern matched" in (e.get("note") or "")]
    assert near and near[0]["path"].endswith("pulsar-broker-1.2020-06-01.log")
    line = (inc / "pulsar-broker-1.2020-06-01.log").read_text().splitlines()[near[0]["line"] - 1]
    assert "is already present on the connection" in line and near[0]["text"] == line


def test_a_broker_log_that_ends_before_the_outage_does_not_say_it_kept_running():
    """A client log read in the wrong zone (New York for UTC stamps) puts the outage four hours
    after the broker's server.log ends: the finding must not say the broker's own logs show no
    shutdown and that it kept running; it says the log does not reach the window, lowers the
    confidence, and points at --tz (moved 4 h, the window falls inside the broker's log)."""
    from conftest import SAMPLES

    inc = SAMPLES / "kafka-rolling-restart"
    right = run("analyze", "--tz", "UTC", "--format", "json", inc).json()
    wrong = run("analyze", "--tz", "UTC", "--tz", "orders-producer.log=America/New_York", "--format", "json", inc).json()
    for f in [f for f in wrong["findings"] if f["id"] in ("kafka.delivery-timeout", "kafka.broker-unreachable")]:
        said = " ".join([f["root_cause"], *f["confidence_reasons"], *f["ruled_out"]])
        assert "kept running" not in said.replace("shut down, restarted or kept running", "").replace("stopped or kept running", "") and "show no shutdown" not in said, said
        assert "does not reach this window" in said and "Moved 4 h earlier" in f["root_cause"] and "--tz" in f["root_cause"]
        same = next(g for g in right["findings"] if g["id"] == f["id"])
        assert f["confidence"] < same["confidence"], (f["confidence"], same["confidence"])


def test_a_detector_that_raises_fails_alone(monkeypatch):
    """One detector raising on an odd shape of log (here made to raise) is said in one line; the
    other detectors' findings stand, in every output (issue 27)."""
    from conftest import run_in_process

    import dataclasses

    import logsleuth.detectors as detectors

    def boom(ctx):
        raise ValueError("an odd shape of log")

    real = detectors.all_detectors()
    made = [dataclasses.replace(d, run=boom) if d.id == "kafka.broker-unreachable" else d for d in real]
    monkeypatch.setattr(detectors, "all_detectors", lambda systems=None: made)
    r = run_in_process("analyze", "--tz", "UTC", SAMPLES / "kafka-outage", "--format", "json")
    assert r.code == 0, r
    doc = r.json()
    assert doc["detector_failures"] == [{"detector": "kafka.broker-unreachable", "error": "ValueError: an odd shape of log"}]
    ids = {f["id"] for f in doc["findings"]}
    assert "kafka.broker-unreachable" not in ids and {"kafka.delivery-timeout", "kafka.buffer-exhausted"} <= ids, ids
    r = run_in_process("analyze", "--tz", "UTC", SAMPLES / "kafka-outage", "--format", "text")
    assert r.code == 0 and "kafka.delivery-timeout" in r.out
    said = [ln for ln in r.out.splitlines() if "kafka.broker-unreachable" in ln and "odd shape of log" in ln]
    assert len(said) == 1, r.out[-3000:]


# ----------------------------------------------------------------------------- excerpts that start at the failure


def _said(f: dict) -> str:
    return " ".join([f["title"], f["root_cause"], *f["confidence_reasons"], *f["ruled_out"]])


def _one(tmp_path, name: str, lines: list[str], fid: str) -> dict:
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    doc = run("analyze", "--tz", "UTC", "--format", "json", p).json()
    (f,) = [f for f in doc["findings"] if f["id"] == fid]
    return f


def test_an_excerpt_starting_at_the_buffer_failure_does_not_say_no_drain_problem_was_logged(tmp_path):
    lines = ["[2025-03-14 02:12:40,000] ERROR Failed to publish payment 7731 (com.example.payments.PaymentPublisher)",
             "org.apache.kafka.clients.producer.BufferExhaustedException: Failed to allocate 16384 bytes within the configured max blocking time 60000 ms. Total memory: 33554432 bytes. Available memory: 0 bytes. Poolable size: 16384 bytes"]
    f = _one(tmp_path, "payments.log", lines, "kafka.buffer-exhausted")
    said = _said(f)
    assert "No drain problem is logged" not in said and "none logged" not in said, said
    assert "Why the buffer filled is not in this log" in f["root_cause"]
    assert "log from 2025-03-14 02:11:40 UTC to 2025-03-14 02:12:40 UTC would show" in f["root_cause"]
    assert f["cause"]["kind"] == "not-in-log"
    # a log that covers the minute before, quiet, keeps the production-rate reading
    quiet = [f"[2025-03-14 02:{m:02d}:00,000] INFO Published payment {7700 + m} (com.example.payments.PaymentPublisher)" for m in range(5, 12)]
    g = _one(tmp_path, "payments-whole.log", quiet + lines, "kafka.buffer-exhausted")
    assert g["cause"]["kind"] == "production-rate" and "No drain problem is logged on this client" in g["root_cause"]


def test_an_excerpt_starting_at_the_expiry_does_not_say_the_client_logged_no_trouble(tmp_path):
    lines = ["[2025-03-14 02:14:31,220] ERROR Failed to send order 81233 (com.example.orders.OrderPublisher)",
             "org.apache.kafka.common.errors.TimeoutException: Expiring 12 record(s) for orders-3:120015 ms has passed since batch creation"]
    f = _one(tmp_path, "orders.log", lines, "kafka.delivery-timeout")
    assert "No drain problem is logged" not in _said(f) and "no failed connections" not in _said(f), _said(f)
    assert "does not cover these batches' lifetime" in f["root_cause"] and f["cause"]["kind"] == "not-in-log"
    assert "from 2025-03-14 02:12:31 UTC to 2025-03-14 02:14:31 UTC" in f["root_cause"]


def test_a_one_line_broker_excerpt_rules_nothing_out_by_absence(tmp_path):
    f = _one(tmp_path, "server.log", ["[2025-03-14 02:11:30,500] INFO [KafkaServer id=2] shutting down (kafka.server.KafkaServer)"],
             "kafka.broker-restart")
    assert not any("no start-up banner" in r or "no log directory failure" in r for r in f["ruled_out"]), f["ruled_out"]


def test_a_warn_only_pulsar_log_does_not_say_there_was_no_unload(tmp_path):
    cnx = "org.apache.pulsar.broker.service.ServerCnx"
    rej = "[/10.20.3.17:51422][12] Producer with id persistent://tenant/ns/payments is already present on the connection"
    f = _one(tmp_path, "broker.log", [f"2025-03-14T02:16:{s:02d},101+0000 [pulsar-io-4-7] WARN  {cnx} - {rej}" for s in (0, 16, 31)],
             "pulsar.dangling-producer-future")
    assert "no unload in these logs" not in f["title"] and "an unload would not show:" in f["title"] and "broker.log holds no INFO lines" in f["title"], f["title"]


def test_another_client_log_of_another_hour_does_not_rule_out_a_cluster_wide_outage(tmp_path):
    """'The other client logs given show no failures of this node' was said of a client log that
    covers another hour; only a log that covers the window can say it."""
    nc = "(org.apache.kafka.clients.NetworkClient)"
    fail = "WARN [Producer clientId=orders-1] Connection to node 2 (kafka-2/10.0.0.7:9092) could not be established. Broker may not be available."
    a = [f"[2025-03-14 02:{m:02d}:00,000] INFO order {m} published (com.example.Orders)" for m in range(0, 10)]
    a += [f"[2025-03-14 02:10:{s:02d},000] {fail} {nc}" for s in range(0, 60, 5)]
    a += [f"[2025-03-14 02:{m:02d}:00,000] INFO order {m} published (com.example.Orders)" for m in range(12, 16)]
    other = "WARN [Producer clientId=audit-1] Connection to node 3 (kafka-3/10.0.0.8:9092) could not be established. Broker may not be available."
    b = [f"[2025-03-14 05:{m:02d}:00,000] INFO audit {m} (com.example.Audit)" for m in range(0, 5)] + [f"[2025-03-14 05:05:{s:02d},000] {other} {nc}" for s in range(0, 30, 5)]
    pa, pb = tmp_path / "orders.log", tmp_path / "audit.log"
    pa.write_text("\n".join(a) + "\n", encoding="utf-8")
    pb.write_text("\n".join(b) + "\n", encoding="utf-8")
    doc = run("analyze", "--tz", "UTC", "--format", "json", pa, pb).json()
    (f,) = [f for f in doc["findings"] if f["id"] == "kafka.broker-unreachable" and f["subjects"][0]["node"] == 2]
    assert not any("cluster-wide" in r for r in f["ruled_out"]), f["ruled_out"]
    # a second producer log that covers the window, quiet, does rule it out, and is named
    c = [f"[2025-03-14 02:{m:02d}:30,000] INFO invoice {m} sent (com.example.Billing)" for m in range(0, 16)]
    c.insert(0, f"[2025-03-14 01:59:00,000] WARN [Producer clientId=billing-1] Connection to node 4 (kafka-4/10.0.0.9:9092) could not be established. Broker may not be available. {nc}")
    pc = tmp_path / "billing.log"
    pc.write_text("\n".join(c) + "\n", encoding="utf-8")
    doc = run("analyze", "--tz", "UTC", "--format", "json", pa, pb, pc).json()
    (f,) = [f for f in doc["findings"] if f["id"] == "kafka.broker-unreachable" and f["subjects"][0]["node"] == 2]
    assert any("cluster-wide" in r and "billing.log" in r and "audit.log" not in r for r in f["ruled_out"]), f["ruled_out"]


def test_a_hostile_file_name_in_a_coverage_reason_is_made_visible(tmp_path):
    """The file name in 'why this log does not cover the window' is untrusted like any log text: an
    escape sequence or a bidi override in it reaches no output raw, JSON included."""
    lines = ["[2025-03-14 02:12:40,000] ERROR Failed to publish payment 7731 (com.example.payments.PaymentPublisher)",
             "org.apache.kafka.clients.producer.BufferExhaustedException: Failed to allocate 16384 bytes within the configured max blocking time 60000 ms. Total memory: 33554432 bytes. Available memory: 0 bytes. Poolable size: 16384 bytes"]
    f = _one(tmp_path, "pay\x1b[2J\u202ements.log", lines, "kafka.buffer-exhausted")
    said = _said(f)
    assert "starts at" in f["root_cause"] and "\x1b" not in said and "\u202e" not in said, said
    assert "pay\\x1b[2J\\u202ements.log starts at" in f["root_cause"]


def test_a_broker_excerpt_of_a_few_seconds_does_not_say_the_broker_kept_running(tmp_path):
    """A broker log that spans 7 s of a 7-minute outage window shows no shutdown because it holds a
    few lines: the client findings must not say the broker's own logs show none and that it kept
    running; they say the log covers too little of the window and ask for the rest of it."""
    from conftest import SAMPLES

    inc = SAMPLES / "kafka-broker-hang"
    broker = (inc / "kafka-3" / "server.log").read_text().splitlines()
    (tmp_path / "kafka-3").mkdir()
    fetcher = broker[392].replace("2024-05-02 15:58:02,310", "2024-05-02 16:00:06,310")  # a line that names node 3 (replicaId=3)
    (tmp_path / "kafka-3" / "server.log").write_text("\n".join([*broker[450:455], fetcher]) + "\n")
    (tmp_path / "inventory-producer.log").write_text((inc / "inventory-producer.log").read_text())
    doc = run("analyze", "--tz", "UTC", "--format", "json", tmp_path).json()
    linked = [f for f in doc["findings"] if f["id"] in ("kafka.delivery-timeout", "kafka.broker-unreachable")]
    assert linked
    for f in linked:
        said = " ".join([f["root_cause"], *f["confidence_reasons"], *f["ruled_out"]])
        assert "kept running" not in said.replace("shut down, restarted or kept running", "").replace("stopped or kept running", ""), said
        assert "show no shutdown" not in said and "covers only" in f["root_cause"], said
        assert any("Give node 3's log of" in r for r in f["remediation"]), f["remediation"]
