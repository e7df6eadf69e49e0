"""Claims checked against what the inputs cover (issue: findings built from facts): a finding that
says something did not happen names the input that covers that subject and window, or says which
log would settle it. Each test is a case where the tool once stated an absence its own inputs
contradicted."""

from __future__ import annotations

from conftest import run

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
