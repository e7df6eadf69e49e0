"""The cause behind the outage: the Kafka broker's own logs linked to the client findings, the
broker-side findings of their own, and Pulsar's Go and C++ clients in the dangling-producer
diagnosis. Runs the real CLI on the incidents of sample_logs/generators/broker_side.py, with and
without the broker logs (without them, today's client findings and no invented cause)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import SAMPLES, run

GEN = SAMPLES / "generators" / "broker_side.py"
DIRS = ("kafka-rolling-restart", "kafka-disk-full", "kafka-broker-hang", "pulsar-go-clients")


def analyze(*paths) -> dict:
    r = run("analyze", "--tz", "UTC", *paths, "--format", "json")
    assert r.code == 0 and r.err == "", r
    return r.json()


def by_id(d: dict, fid: str) -> list[dict]:
    return [f for f in d["findings"] if f["id"] == fid]


def cited(f: dict, name: str) -> list[dict]:
    return [e for e in f["evidence"] if e["path"].endswith(name)]


def line_of(path, text: str) -> int:
    for i, line in enumerate(path.read_text().splitlines(), 1):
        if text in line:
            return i
    raise AssertionError(f"{text!r} not in {path}")


def test_generator_is_deterministic(tmp_path):
    subprocess.run([sys.executable, str(GEN), "--out", str(tmp_path)], check=True, capture_output=True)
    for d in DIRS:
        for f in (SAMPLES / d).rglob("*"):
            if f.is_file():
                assert (tmp_path / f.relative_to(SAMPLES)).read_bytes() == f.read_bytes(), f


def test_rolling_restart_names_the_controlled_restart_with_its_lines():
    d = analyze(SAMPLES / "kafka-rolling-restart")
    seg = SAMPLES / "kafka-rolling-restart/kafka-2/server.log.2024-05-02-13"
    for fid in ("kafka.broker-unreachable", "kafka.delivery-timeout"):
        [f] = by_id(d, fid)
        assert "node 2: controlled restart" in f["title"]
        assert "controlled shutdown at 2024-05-02 13:41:55 UTC and started again at 2024-05-02 13:47:09 UTC" in f["root_cause"]
        assert f["cause"]["broker_side"]["kind"] == "controlled-restart"
        lines = {e["line"] for e in cited(f, "server.log.2024-05-02-13")}  # the rotated segment, cited by its own name
        assert line_of(seg, "Starting controlled shutdown") in lines or line_of(seg, "Controlled shutdown request returned") in lines
        assert line_of(seg, "[KafkaServer id=2] started") in lines
        assert f["remediation"][0].startswith("This was a planned restart of node 2")
    [out] = by_id(d, "kafka.broker-unreachable")
    # the leadership moves in state-change.log explain the NOT_LEADER_OR_FOLLOWER retries
    assert "orders-1 → broker 3" in out["root_cause"] and "explain the 2 NOT_LEADER_OR_FOLLOWER retries" in out["root_cause"]
    assert cited(out, "kafka-1/state-change.log")
    assert not any(r.startswith("A controlled shutdown") for r in out["ruled_out"])
    assert any(r.startswith("A full disk") for r in out["ruled_out"])
    [rs] = by_id(d, "kafka.broker-restart")
    assert rs["severity"] == "medium" and "1 client hit" in rs["title"]
    [isr] = by_id(d, "kafka.isr-shrink")
    assert isr["subjects"][0]["node"] == 2 and isr["subjects"][0]["recovered"] is True


def test_disk_full_is_named_with_the_ioexception_line():
    d = analyze(SAMPLES / "kafka-disk-full")
    log = SAMPLES / "kafka-disk-full/kafka-1/server.log"
    for fid in ("kafka.broker-unreachable", "kafka.delivery-timeout"):
        [f] = by_id(d, fid)
        assert "node 1: disk full" in f["title"]
        assert "No space left on device: the disk was full" in f["root_cause"]
        assert "Shutdown broker because all log dirs in" in f["root_cause"]
        assert {e["line"] for e in cited(f, "kafka-1/server.log")} >= {line_of(log, "Error while appending records to invoices-0"),
                                                                       line_of(log, "Shutdown broker because all log dirs")}
        assert f["remediation"][0].startswith("Free or grow the disk")
    [f] = by_id(d, "kafka.delivery-timeout")
    assert f["details"]["records"] == 30


def test_hung_broker_is_the_silence_of_its_log():
    d = analyze(SAMPLES / "kafka-broker-hang")
    log = SAMPLES / "kafka-broker-hang/kafka-3/server.log"
    [f] = by_id(d, "kafka.broker-unreachable")
    assert "node 3: silent" in f["title"]
    assert "broker node 3 logged nothing from 2024-05-02 16:02:11 UTC to 2024-05-02 16:06:40 UTC" in f["root_cause"]
    assert "host or the JVM stopped" in f["root_cause"] and "fenced broker node 3" in f["root_cause"]
    lines = {e["line"]: e["note"] for e in cited(f, "kafka-3/server.log")}
    assert lines.get(line_of(log, "Rolled new log segment at offset 771200")) == "node 3's last line before its silence"
    assert cited(f, "controller-1/controller.log")
    assert "A controlled shutdown or rolling restart of node 3: its log has no shutdown lines" in " ".join(f["ruled_out"])
    assert "A crash and restart of node 3: no start-up banner" in " ".join(f["ruled_out"])


@pytest.mark.parametrize("incident,client", [
    ("kafka-rolling-restart", "orders-producer.log"),
    ("kafka-disk-full", "billing-service.log"),
    ("kafka-broker-hang", "inventory-producer.log"),
])
def test_without_the_broker_logs_the_client_findings_invent_no_cause(incident, client):
    d = analyze(SAMPLES / incident / client)
    ids = {f["id"] for f in d["findings"]}
    assert ids == {"kafka.broker-unreachable", "kafka.delivery-timeout"}
    for f in d["findings"]:
        assert "broker_side" not in (f["cause"] or {}) and "broker_side" not in f["details"]
        assert "its own log" not in f["title"] and "The broker's side" not in f["root_cause"]
        assert all(e["path"].endswith(client) for e in f["evidence"])


def test_a_broker_log_of_another_node_links_nothing():
    d = analyze(SAMPLES / "kafka-broker-hang/inventory-producer.log", SAMPLES / "kafka-rolling-restart/kafka-2")
    for fid in ("kafka.broker-unreachable", "kafka.delivery-timeout"):
        [f] = by_id(d, fid)
        assert "broker_side" not in f["details"]


def test_broker_log_alone_gives_a_low_broker_finding():
    d = analyze(SAMPLES / "kafka-rolling-restart/kafka-2")
    [f] = d["findings"]
    assert f["id"] == "kafka.broker-restart" and f["severity"] == "low"
    assert f["subjects"][0]["node"] == 2 and f["subjects"][0]["kind"] == "controlled-restart"
    d = analyze(SAMPLES / "kafka-disk-full/kafka-1/server.log")
    [f] = d["findings"]
    assert f["severity"] == "low" and "disk full" in f["title"]
    assert f["root_cause"].endswith("No client log was given: the producers' logs of that time would say whether they were hit.")


def test_no_client_failing_is_said_only_of_client_logs_that_cover_the_window():
    """'No client log given shows this node failing then' was said whatever the client logs covered
    (issue 27): now the client logs that cover the window are named, or it says none does."""
    broker = SAMPLES / "kafka-disk-full/kafka-1/server.log"  # node 1, 2024-05-02 10:05
    [f] = by_id(analyze(broker, SAMPLES / "kafka-outage"), "kafka.broker-restart")  # producers of node 2, 10:00-10:29 that day
    assert "The client logs given that cover that window (" in f["root_cause"] and "orders-producer.log" in f["root_cause"]
    assert f["root_cause"].endswith("show no failure of node 1 then; with replication.factor >= 3 the other brokers took over its partitions.")
    [f] = by_id(analyze(broker, SAMPLES / "sarama-blackhole/orders-producer.log"), "kafka.broker-restart")  # 2026-11-30
    assert f["root_cause"].endswith("No client log given covers that window (1 client log given, all outside it): the producers' logs of "
                                    "that time would say whether they were hit."), f["root_cause"]


def test_pulsar_go_clients_with_and_without_the_broker_log():
    d = analyze(SAMPLES / "pulsar-go-clients")
    [f] = by_id(d, "pulsar.dangling-producer-future")
    assert "client_only" not in f["details"]
    assert f["details"]["clients"] == [str(SAMPLES / "pulsar-go-clients/orders-go.log")]
    go = SAMPLES / "pulsar-go-clients/orders-go.log"
    assert line_of(go, "Failed to create producer at send PRODUCER request") in {e["line"] for e in cited(f, "orders-go.log")}
    d = analyze(SAMPLES / "pulsar-go-clients/orders-go.log", SAMPLES / "pulsar-go-clients/audit-go.log")
    [f] = d["findings"]
    assert f["details"]["client_only"] is True and f["severity"] == "critical"
    [s] = f["subjects"]
    assert s["topic"] == "persistent://public/default/orders-go-partition-0" and s["producer_name"] == "pulsar-7-1"
    assert s["still_stuck"] is True and s["attempts"] == 58


CPP = "{ts} {lvl:<5} [140213330491136] {src} | {msg}"


def test_pulsar_cpp_client_log_alone_is_read(tmp_path):
    tp, nm = "persistent://public/default/orders-partition-0", "orders-py-0-2"
    lines = [CPP.format(ts="2024-05-02 13:30:00.120", lvl="INFO", src="ProducerImpl:224", msg=f"[{tp}, {nm}] Created producer on broker [10.0.0.5:41234 -> 10.0.0.9:6650] "),
             CPP.format(ts="2024-05-02 13:41:55.401", lvl="INFO", src="ProducerImpl:1003", msg="Broker notification of Closed producer: 0")]
    for i in range(12):  # <=4.0: the producer line has the result code only, the message is on the line before
        s = 56 + 3 * i
        lines.append(CPP.format(ts=f"2024-05-02 13:4{s // 60 + 1}:{s % 60:02d}.100", lvl="WARN", src="ClientConnection:1779",
                                msg=f"[10.0.0.5:41234 -> 10.0.0.9:6650] Received error response from server: Retryable (Producer is already present on the connection) -- req_id: {12 + i}"))
        lines.append(CPP.format(ts=f"2024-05-02 13:4{s // 60 + 1}:{s % 60:02d}.101", lvl="WARN", src="ProducerImpl:297",
                                msg=f"[{tp}, {nm}] Failed to reconnect producer: Retryable"))
    p = tmp_path / "orders-py.log"
    p.write_text("\n".join(lines) + "\n")
    d = analyze(p)
    [f] = d["findings"]
    assert f["id"] == "pulsar.dangling-producer-future" and f["details"]["client_only"] is True
    assert f["subjects"][0]["attempts"] == 12 and f["subjects"][0]["producer_name"] == nm
    # a C++ reconnect failure with another server error is not taken for the dangling producer
    p.write_text("\n".join(x.replace("Producer is already present on the connection", "Namespace bundle is being unloaded") for x in lines) + "\n")
    assert analyze(p)["findings"] == []


def test_sarama_stall_names_the_broker_side_cause(tmp_path):
    # the node sarama's stall names (producer/broker/1, kafka-0.kafka.prod.svc:9092), restarted per its own log
    b = tmp_path / "server.log"
    lines = [f"[2026-11-30 02:{m:02d}:{s:02d},000] INFO [GroupMetadataManager brokerId=1] Removed 0 expired offsets in 1 milliseconds. (kafka.coordinator.group.GroupMetadataManager)"
             for m in range(40, 54) for s in range(0, 60, 5)]
    lines += [
        "[2026-11-30 02:54:30,100] INFO [KafkaServer id=1] shutting down (kafka.server.KafkaServer)",
        "[2026-11-30 02:54:30,104] INFO [KafkaServer id=1] Starting controlled shutdown (kafka.server.KafkaServer)",
        "[2026-11-30 02:54:33,000] INFO [KafkaServer id=1] shut down completed (kafka.server.KafkaServer)",
        "[2026-11-30 03:00:20,000] INFO starting (kafka.server.KafkaServer)",
        "[2026-11-30 03:00:31,000] INFO [KafkaServer id=1] started (kafka.server.KafkaServer)",
    ]
    b.write_text("\n".join(lines) + "\n")
    d = analyze(SAMPLES / "sarama-blackhole/orders-producer.log", b)
    [f] = by_id(d, "sarama.retry-redial-stall")
    assert "node 1: controlled restart" in f["title"]
    assert f["cause"]["broker_side"]["kind"] == "controlled-restart"
    assert {e["line"] for e in cited(f, "server.log")} >= {len(lines) - 4, len(lines)}
    # and the broker's finding counts that sarama client among those hit (it said "No client log given
    # shows this node failing then" with the client's log among the inputs: issue 33)
    [r] = by_id(d, "kafka.broker-restart")
    assert "No client log given" not in r["root_cause"] and [c.endswith("/orders-producer.log") for c in r["subjects"][0]["clients_hit"]] == [True], r
    assert "(see sarama.broker-refused / sarama.retry-redial-stall)" in r["root_cause"] and r["severity"] == "medium"
    d = analyze(SAMPLES / "sarama-blackhole/orders-producer.log")
    [f] = by_id(d, "sarama.retry-redial-stall")
    assert "broker_side" not in f["cause"]


def test_a_broker_crash_beside_sarama_refused_sends(tmp_path):
    """A broker killed in the middle of the night (an OutOfMemoryError, no shutdown lines, a start-up
    banner 10 s later) while a sarama producer's dials to it are refused: the client's finding names
    the crash as the cause, and the broker's finding names the client it hit (issue 33)."""
    b = tmp_path / "kafka-1" / "server.log"
    b.parent.mkdir()
    lines = [f"[2026-11-30 14:{m:02d}:{s:02d},000] INFO [GroupMetadataManager brokerId=1] Removed 0 expired offsets in 1 milliseconds. (kafka.coordinator.group.GroupMetadataManager)"
             for m in range(0, 4) for s in range(0, 50, 7)]
    lines += [
        "[2026-11-30 14:03:49,812] ERROR [KafkaApi-1] Error when handling request: clientId=sarama, correlationId=4411, api=PRODUCE, version=7 (kafka.server.KafkaApis)",
        "java.lang.OutOfMemoryError: Java heap space",
        "[2026-11-30 14:04:00,118] INFO starting (kafka.server.KafkaServer)",
        "[2026-11-30 14:04:00,208] INFO KafkaConfig values:  (kafka.server.KafkaConfig)",
        "\tadvertised.listeners = PLAINTEXT://kafka-1:9092",
        "\tbroker.id = 1",
        "[2026-11-30 14:04:03,870] INFO [KafkaServer id=1] started (kafka.server.KafkaServer)",
    ]
    lines += [f"[2026-11-30 14:{m:02d}:{s:02d},000] INFO [GroupMetadataManager brokerId=1] Removed 0 expired offsets in 3 milliseconds. (kafka.coordinator.group.GroupMetadataManager)"
              for m in range(5, 7) for s in range(0, 60, 7)]
    b.write_text("\n".join(lines) + "\n")
    d = analyze(SAMPLES / "sarama-refused/inventory-producer.log", b)
    [f] = by_id(d, "sarama.broker-refused")
    assert "node 1: crashed and restarted" in f["title"] and f["cause"]["broker_side"]["kind"] == "crash-restart", f["title"]
    [r] = by_id(d, "kafka.broker-restart")
    assert r["title"].endswith("— 1 client hit") and r["severity"] == "medium", r["title"]
    assert "No client log given" not in r["root_cause"] and "inventory-producer.log could not use node 1" in r["root_cause"]
    assert "+ 1 client log shows the node failing in the same window, and records or sends were lost" in r["confidence_reasons"]


def test_a_rolling_restart_the_clients_rode_out_stays_low(tmp_path):
    """The broker's controlled restart and a client that only reconnected (nothing expired, no send
    failed): both findings low, so --fail-on medium stays quiet through a routine restart."""
    lines = []
    t = 13 * 3600 + 41 * 60 + 50
    for i in range(150):  # a send every 2 s; node 2 goes away at 13:41:55, its partitions move within 30 s
        s = t + 2 * i
        stamp = f"2024-05-02 {s // 3600:02d}:{s % 3600 // 60:02d}:{s % 60:02d},{(37 * i) % 1000:03d}"
        if 13 * 3600 + 41 * 60 + 56 <= s <= 13 * 3600 + 42 * 60 + 24:
            lines.append(f"[{stamp}] WARN [Producer clientId=stock-sync] Connection to node 2 (kafka-2/10.0.0.7:9092) could not be established. Broker may not be available. (org.apache.kafka.clients.NetworkClient)")
        else:
            lines.append(f"[{stamp}] INFO stock update {4000 + i} sent (com.example.stock.Publisher)")
    client = tmp_path / "stock-sync.log"
    client.write_text("\n".join(lines) + "\n")
    r = run("analyze", "--tz", "UTC", "--fail-on", "medium", "-f", "json", SAMPLES / "kafka-rolling-restart/kafka-2", client)
    assert r.code == 0, r  # nothing at medium or above
    [restart] = by_id(r.json(), "kafka.broker-restart")
    assert restart["severity"] == "low" and "1 client hit" in restart["title"]
    assert any("nothing was lost" in x for x in restart["confidence_reasons"])
    [client_f] = by_id(r.json(), "kafka.broker-unreachable")
    assert client_f["severity"] == "low"


def test_the_broker_finding_counts_only_the_clients_that_lost_something(tmp_path):
    # the disk-full incident, plus a second service that only failed to connect to node 1 in the same
    # window and lost nothing: both were hit, one of them lost records
    import shutil

    d = tmp_path / "incident"
    shutil.copytree(SAMPLES / "kafka-disk-full", d)
    billing = (d / "billing-service.log").read_text().splitlines()
    refused = [x.replace("billing-producer-1", "shipping-producer-1") for x in billing if "could not be established" in x]
    assert len(refused) > 10
    (d / "shipping-service.log").write_text("\n".join(refused) + "\n")
    [f] = by_id(analyze(d), "kafka.broker-restart")
    assert f["severity"] == "medium" and f["title"].endswith("— 2 clients hit")
    assert "+ 2 client logs show the node failing in the same window, and 1 of them lost records or sends" in f["confidence_reasons"]
    assert "billing-producer-1 in " in f["root_cause"] and "shipping-producer-1 in " in f["root_cause"]


def _crash_loop(tmp_path, attempts: int, then_started: bool):
    """A ZooKeeper-mode broker whose start-up fails ``attempts`` times in a minute (a full disk
    under its checkpoint files), each attempt shutting itself down; ``then_started``: the last
    attempt is followed by one that comes up."""
    lines = []
    for i in range(attempts):
        t = 5 + 23 * i
        lines += [
            f"[2024-05-02 13:44:{t:02d},000] INFO starting (kafka.server.KafkaServer)",
            f"[2024-05-02 13:44:{t:02d},900] INFO [KafkaServer id=2] Loading logs from log dirs ArrayBuffer(/var/lib/kafka/data) (kafka.log.LogManager)",
            f"[2024-05-02 13:44:{t + 5:02d},500] ERROR [KafkaServer id=2] Fatal error during KafkaServer startup. Prepare to shutdown (kafka.server.KafkaServer)",
            "org.apache.kafka.common.errors.KafkaStorageException: Error while writing to checkpoint file /var/lib/kafka/data/orders-1/leader-epoch-checkpoint",
            "\tat org.apache.kafka.storage.internals.checkpoint.CheckpointFileWithFailureHandler.write(CheckpointFileWithFailureHandler.java:56)",
            "Caused by: java.io.IOException: No space left on device",
            f"[2024-05-02 13:44:{t + 5:02d},600] INFO [KafkaServer id=2] shutting down (kafka.server.KafkaServer)",
            f"[2024-05-02 13:44:{t + 5:02d},700] INFO [KafkaServer id=2] shut down completed (kafka.server.KafkaServer)",
        ]
    if then_started:
        lines += ["[2024-05-02 13:52:00,000] INFO starting (kafka.server.KafkaServer)",
                  "[2024-05-02 13:52:04,000] INFO [KafkaServer id=2] started (kafka.server.KafkaServer)"]
    p = tmp_path / "server.log"
    p.write_text("\n".join(lines) + "\n")
    return p


def test_a_broker_that_fails_to_start_three_times_is_down_not_restarted(tmp_path):
    """Issue 28: three 'Fatal error during KafkaServer startup' in a minute were read as 'shut down
    ... and started again' (a 'starting' line is an attempt, not a start), ranked low as context,
    with 'its log has no shutdown lines' among the ruled-out causes of a log full of them."""
    p = _crash_loop(tmp_path, 3, then_started=False)
    (f,) = by_id(analyze(p), "kafka.broker-restart")
    assert f["subjects"][0]["kind"] == "startup-failed" and f["severity"] == "medium", f
    rc = f["root_cause"]
    assert "failed to start 3 times" in rc and "java.io.IOException: No space left on device" in rc, rc
    assert "no successful start" in rc and "started again" not in rc, rc
    assert not any("no shutdown lines" in r or "no log directory failure" in r for r in f["ruled_out"]), f["ruled_out"]
    assert any("Free or grow the disk" in r for r in f["remediation"])
    assert [e["line"] for e in f["evidence"]] == [line_of(p, "13:44:10,500"), line_of(p, "13:44:56,500")]
    text = run("analyze", "--tz", "UTC", p).out
    assert "start-up failed at" in text and "Read the exception after 'Fatal error during KafkaServer startup'" in text, text


def test_a_broker_whose_start_failed_once_then_came_up_stays_low(tmp_path):
    p = _crash_loop(tmp_path, 1, then_started=True)
    (f,) = by_id(analyze(p), "kafka.broker-restart")
    assert f["subjects"][0]["kind"] == "startup-failed" and f["severity"] == "low", f
    assert "failed to start at" in f["root_cause"] and "it started at last at 2024-05-02 13:52:04" in f["root_cause"], f["root_cause"]


def test_a_session_expiry_in_an_excerpt_is_not_a_crash_or_a_silence(tmp_path):
    """Issue 28 ('a ZooKeeper session expiry on its own'): an excerpt of six lines that begins with
    the broker's 'started' banner and holds a session expiry two minutes later was 'crashed and
    restarted at 13:40' (the banner at the log's first line taken for a restart) and 'logged nothing
    from 13:40 to 13:42: the host or the JVM stopped' (the gaps of six lines taken for a silence)."""
    p = tmp_path / "server.log"
    p.write_text("\n".join([
        "[2024-05-02 13:40:00,000] INFO [KafkaServer id=3] started (kafka.server.KafkaServer)",
        "[2024-05-02 13:42:03,441] INFO [ZooKeeperClient Kafka server] Session expired. (kafka.zookeeper.ZooKeeperClient)",
        "[2024-05-02 13:42:03,500] INFO [ZooKeeperClient Kafka server] Initializing a new session to zk-1:2181. (kafka.zookeeper.ZooKeeperClient)",
        "[2024-05-02 13:42:04,201] INFO Registered broker 3 at path /brokers/ids/3 with addresses: PLAINTEXT://kafka-3:9092, czxid (broker epoch): 4294967300 (kafka.zk.KafkaZkClient)",
    ]) + "\n")
    (f,) = by_id(analyze(p), "kafka.broker-restart")
    assert f["subjects"][0]["kind"] == "session-expired", f
    assert "crashed" not in f["root_cause"] and "logged nothing" not in f["root_cause"], f["root_cause"]
    assert [e["line"] for e in f["evidence"]] == [2]
