"""The Pulsar diagnosis through the real CLI: the sample incident, the healthy case, and hand-made
variants (transient clash, another layout era)."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from conftest import SAMPLES, run

INCIDENT = SAMPLES / "pulsar-incident"
HEALTHY = SAMPLES / "pulsar-healthy"
REJECT = re.compile(r"\[(?P<conn>/[^\]]+)\]\[(?P<pid>\d+)\] Producer with id (?P<topic>\S+) is already present on the connection")


def rejections(path) -> Counter:
    """Count the broker's 'already present' lines per (connection, producer id, topic) straight from the file."""
    c: Counter = Counter()
    for line in path.read_text().splitlines():
        m = REJECT.search(line)
        if m:
            c[(m["conn"], int(m["pid"]), m["topic"])] += 1
    return c


@pytest.fixture(scope="module")
def incident(request):
    from conftest import run

    r = run("analyze", "--tz", "UTC", INCIDENT, "--format", "json")
    assert r.code == 0, r
    return r.json()


def dangling(doc):
    return [f for f in doc["findings"] if f["id"] == "pulsar.dangling-producer-future"]


def test_names_every_stuck_producer_and_the_unload_behind_it(incident):
    found = dangling(incident)
    assert len(found) == 2
    broker1 = INCIDENT / "pulsar-broker-1.2020-06-01.log"
    expected = {k: n for k, n in rejections(broker1).items() if n > 10}
    f1 = next(f for f in found if f["cause"]["bundle"] == "public/default/0x40000000_0x80000000")
    got = {(s["connection"], s["producer_id"], s["topic"]): s for s in f1["subjects"]}
    assert set(got) == set(expected)  # two producers stranded by one unload
    assert {k[2] for k in got} == {"persistent://public/default/orders-partition-3", "persistent://public/default/orders-partition-7"}
    for key, s in got.items():
        assert s["attempts"] == expected[key]
        assert s["still_stuck"] is True
        assert s["path"].endswith("pulsar-broker-1.2020-06-01.log")
        assert s["first_seen"].startswith("2020-06-01T23:10:4") and s["last_seen"].startswith("2020-06-02T01:")
        assert s["client"].endswith("client-orders-7d9f.log")
    assert f1["severity"] == "critical" and f1["confidence"] >= 0.9
    # the cause line really is the start of that unload on broker-1
    cause = f1["cause"]
    assert cause["kind"] == "bundle-unload" and cause["path"].endswith("pulsar-broker-1.2020-06-01.log")
    line = broker1.read_text().splitlines()[cause["line"] - 1]
    assert "Disabling ownership: public/default/0x40000000_0x80000000" in line
    assert "Overload shedder" in cause["trigger"]
    # every evidence line is quoted exactly as it is in its file
    for e in f1["evidence"]:
        path = SAMPLES.parent / e["path"] if not e["path"].startswith("/") else e["path"]
        if str(path).endswith(".gz"):
            continue
        assert open(path).read().splitlines()[e["line"] - 1] == e["text"]
    texts = "\n".join(e["text"] for e in f1["evidence"])
    assert "Creating producer. producerId=3" in texts and "Creating producer. producerId=7" in texts
    assert "not served by this instance" in texts


def test_stuck_producer_on_the_other_broker_resolved_by_a_reconnect(incident):
    f2 = next(f for f in dangling(incident) if f["cause"]["bundle"] == "public/default/0xc0000000_0xffffffff")
    (s,) = f2["subjects"]
    broker2 = INCIDENT / "pulsar-broker-2.2020-06-01.log"
    counts = rejections(broker2)
    assert s["topic"] == "persistent://public/default/payments-partition-2"
    assert s["attempts"] == counts[(s["connection"], s["producer_id"], s["topic"])]
    assert s["still_stuck"] is False and s["resolved_by"].startswith("connection closed")
    assert s["client"].endswith("client-payments-5c2a.log.gz")
    assert f2["severity"] == "high"
    assert f2["cause"]["path"].endswith("pulsar-broker-2.2020-06-01.log")


def test_transient_warning_is_not_reported(incident):
    subjects = [s for f in dangling(incident) for s in f["subjects"]]
    transient = [k for k, n in rejections(INCIDENT / "pulsar-broker-2.2020-06-01.log").items() if n <= 3]
    assert transient, "the sample has a transient decoy"
    for conn, pid, topic in transient:
        assert not any(s["connection"] == conn and s["producer_id"] == pid for s in subjects)
    ruled = " ".join(r for f in dangling(incident) for r in f["ruled_out"])
    assert "transient, not this bug" in ruled


def test_load_shedding_context(incident):
    shed = [f for f in incident["findings"] if f["id"] == "pulsar.load-shedding"]
    assert {f["cause"]["broker"] for f in shed} == {"10.0.0.11:8080", "10.0.0.12:8080"}
    for f in shed:
        assert f["severity"] in ("info", "low")
        assert 30 * 60 < f["cause"]["cadence_s"] < 40 * 60
        assert "> threshold 85%" in f["cause"]["usage"]
    # ranked after the stuck producers
    ids = [f["id"] for f in incident["findings"]]
    assert ids.index("pulsar.load-shedding") > ids.index("pulsar.dangling-producer-future")


def test_healthy_case_has_no_stuck_producers(cli):
    r = cli("analyze", "--tz", "UTC", HEALTHY, "--format", "json")
    assert r.code == 0, r
    assert not dangling(r.json())
    r = cli("analyze", "--tz", "UTC", HEALTHY, "--fail-on", "high")
    assert r.code == 0, r


def test_text_report_and_fail_on(cli):
    r = cli("analyze", "--tz", "UTC", INCIDENT, "--format", "text", "--fail-on", "high")
    assert r.code == 1, r
    out = r.out
    assert "[CRITICAL] 2 producers stuck since 2020-06-01 23:10:41 UTC" in out
    assert "If the brokers run 2.5.1 or older: upgrade to Pulsar 2.5.2 or later" in out
    assert re.search(r"pulsar-broker-1\.2020-06-01\.log:\d+:", out)
    todo = out.split("\nWhat to do\n", 1)[1].split("\nRuled out\n", 1)[0]
    assert "client-orders-7d9f.log" in todo and "orders-" in todo
    assert "── summary" in out and "read 5 logs, 16,963 lines" in out
    md = cli("analyze", "--tz", "UTC", INCIDENT, "--format", "markdown")
    assert md.code == 0 and "### 1. 2 producers stuck" in md.out and "```text" in md.out


ISO_BROKER = """\
2023-09-12T07:30:01,500+0000 [pulsar-load-manager-3-1] INFO  org.apache.pulsar.broker.loadbalance.impl.ModularLoadManagerImpl - [ThresholdShedder] Unloading bundle: tenant/ns/0x40000000_0x80000000 from broker broker-1.example:8080
2023-09-12T07:30:01,600+0000 [pulsar-web-3-1] INFO  org.apache.pulsar.broker.namespace.OwnedBundle - Disabling ownership: tenant/ns/0x40000000_0x80000000
2023-09-12T07:30:01,700+0000 [pulsar-web-3-1] INFO  org.apache.pulsar.broker.service.Producer - Disconnecting producer: Producer{topic=PersistentTopic{topic=persistent://tenant/ns/events}, client=/10.2.0.5:40001, producerName=p-1, producerId=5}
2023-09-12T07:30:01,900+0000 [pulsar-io-4-1] INFO  org.apache.pulsar.broker.service.ServerCnx - [/10.2.0.5:40001][persistent://tenant/ns/events] Creating producer. producerId=5
2023-09-12T07:30:01,901+0000 [pulsar-io-4-1] WARN  org.apache.pulsar.broker.service.BrokerService - Namespace bundle for topic (persistent://tenant/ns/events) not served by this instance. Please redo the lookup. Request is denied: namespace=tenant/ns
2023-09-12T07:30:02,400+0000 [pulsar-web-3-1] INFO  org.apache.pulsar.broker.namespace.OwnedBundle - Unloading tenant/ns/0x40000000_0x80000000 namespace-bundle with 1 topics completed in 800.0 ms
"""


def test_other_layout_era_and_transient_only(cli, tmp_path):
    lines = [ISO_BROKER]
    for i in range(6):
        lines.append(f"2023-09-12T07:3{1 + i}:00,000+0000 [pulsar-io-4-2] WARN  org.apache.pulsar.broker.service.ServerCnx - [/10.2.0.5:40001][5] Producer with id persistent://tenant/ns/events is already present on the connection\n")
    p = tmp_path / "broker.log"
    p.write_text("".join(lines))
    r = cli("analyze", p, "--format", "json")
    (f,) = dangling(r.json())
    (s,) = f["subjects"]
    assert (s["connection"], s["producer_id"], s["attempts"], s["still_stuck"]) == ("/10.2.0.5:40001", 5, 6, True)
    assert f["cause"]["bundle"] == "tenant/ns/0x40000000_0x80000000"
    # the ISO8601_OFFSET layout came after 2.5.2: not the 2.4–2.5.1 bug itself, and no advice to upgrade to 2.5.2
    assert any("ISO8601_OFFSET" in r and "newer than 2.5.1" in r for r in f["confidence_reasons"])
    assert "not #6416/#6872 itself" in f["root_cause"] and f["confidence"] <= 0.75
    assert not any("upgrade to Pulsar 2.5.2" in x for x in f["remediation"])
    # the same rejections, but cleared within a second by a successful creation: not stuck
    q = tmp_path / "transient.log"
    q.write_text(
        ISO_BROKER
        + "2023-09-12T07:31:00,000+0000 [pulsar-io-4-2] WARN  org.apache.pulsar.broker.service.ServerCnx - [/10.2.0.5:40001][5] Producer with id persistent://tenant/ns/events is already present on the connection\n"
        + "2023-09-12T07:31:00,300+0000 [pulsar-io-4-2] WARN  org.apache.pulsar.broker.service.ServerCnx - [/10.2.0.5:40001][5] Producer with id persistent://tenant/ns/events is already present on the connection\n"
        + "2023-09-12T07:31:00,500+0000 [pulsar-io-4-2] INFO  org.apache.pulsar.broker.service.ServerCnx - [/10.2.0.5:40001] Created new producer: Producer{topic=PersistentTopic{topic=persistent://tenant/ns/events}, client=/10.2.0.5:40001, producerName=p-1, producerId=5}\n"
    )
    r = cli("analyze", q, "--format", "json")
    assert r.code == 0 and not dangling(r.json())


def _reject(t: str) -> str:
    return f"2023-09-12T{t}+0000 [pulsar-io-4-2] WARN  org.apache.pulsar.broker.service.ServerCnx - [/10.2.0.5:40001][5] Producer with id persistent://tenant/ns/events is already present on the connection\n"


def _created(t: str) -> str:
    return (f"2023-09-12T{t}+0000 [pulsar-io-4-2] INFO  org.apache.pulsar.broker.service.ServerCnx - [/10.2.0.5:40001] Created new producer: "
            "Producer{topic=PersistentTopic{topic=persistent://tenant/ns/events}, client=/10.2.0.5:40001, producerName=p-1, producerId=5}\n")


def test_each_stretch_of_rejections_is_judged_on_its_own(cli, tmp_path):
    # three short clashes of the same producer id, each cleared within a second by a re-creation:
    # over ten minutes they add up to 6 rejections, but none of them is a stuck producer
    bursts = []
    for minute in ("07:31", "07:35", "07:40"):
        bursts += [_reject(f"{minute}:00,000"), _reject(f"{minute}:00,300"), _created(f"{minute}:00,600")]
    p = tmp_path / "broker.log"
    p.write_text("".join(bursts))
    r = cli("analyze", p, "--format", "json")
    assert r.code == 0 and not dangling(r.json()), r.out
    # the same history followed by a stretch that never clears: only that stretch is reported,
    # counted from its own first rejection, and the earlier recoveries are not taken for its end
    stuck = [_reject(f"07:{m}:00,000") for m in range(45, 55)]
    p.write_text("".join(bursts + stuck))
    r = cli("analyze", p, "--format", "json")
    (f,) = dangling(r.json())
    (s,) = f["subjects"]
    assert s["attempts"] == 10 and s["still_stuck"] is True
    assert s["first_seen"].startswith("2023-09-12T07:45:00")
    # no 'Creating producer' and no ownership warning in this log: the root cause must not claim them
    assert "ownership check" not in f["root_cause"] and "does not show the creation" in f["root_cause"]


def _client_created(t: str, port: int, name: str) -> str:
    return (f"2023-09-12T{t}+00:00  INFO 1 --- [{name}] [r-client-io-1-1] o.a.pulsar.client.impl.ProducerImpl      : "
            f"[persistent://tenant/ns/other] [{name}-0] Created producer on cnx [id: 0x0000abcd, L:/10.2.0.5:{port} - R:broker-1/10.0.0.11:6650]\n")


def test_client_is_named_only_when_the_logs_tell(cli, tmp_path):
    broker = tmp_path / "broker.log"
    broker.write_text(ISO_BROKER + "".join(_reject(f"07:{m}:00,000") for m in range(31, 37)))
    one = tmp_path / "client-one.log"
    one.write_text(_client_created("07:20:00.000", 51000, "one"))
    # one client log on that host: the stuck connection's other port on the same IP links it
    (f,) = dangling(cli("analyze", broker, one, "--format", "json").json())
    (s,) = f["subjects"]
    assert s["client"].endswith("client-one.log") and s["client_link"] == "same host"
    # two client logs from the same host (two services on one node): which one made the connection
    # is a guess, so none is named
    two = tmp_path / "client-two.log"
    two.write_text(_client_created("07:21:00.000", 52000, "two"))
    (f,) = dangling(cli("analyze", broker, one, two, "--format", "json").json())
    (s,) = f["subjects"]
    assert s["client"] is None and s["client_link"] is None


def test_client_log_alone_still_names_the_stuck_producers(cli):
    # app teams often have only their own log: the client's 'Failed to create producer: Producer is
    # already present on the connection' retried for hours is the same incident, seen from the client
    clients = sorted(INCIDENT.glob("client-*"))
    r = cli("analyze", "--tz", "UTC", *clients, "--format", "json")
    assert r.code == 0, r
    found = dangling(r.json())
    assert len(found) == 2
    crit = next(f for f in found if f["severity"] == "critical")
    assert crit["details"]["client_only"] is True and "client log only" in crit["title"]
    assert {s["topic"] for s in crit["subjects"]} == {"persistent://public/default/orders-partition-3", "persistent://public/default/orders-partition-7"}
    assert all(s["still_stuck"] and s["producer_id"] is None for s in crit["subjects"])
    assert crit["confidence"] < 0.7 and "No broker log given covers this window" in crit["root_cause"]
    # the first rejection it cites is the file's first 'already present' line
    orders = INCIDENT / "client-orders-7d9f.log"
    first = next(i for i, line in enumerate(orders.read_text().splitlines(), 1) if "already present on the connection" in line)
    assert any(e["path"].endswith("client-orders-7d9f.log") and e["line"] == first for e in crit["evidence"])
    assert any("Get the broker log" in x for x in crit["remediation"])
    # the payments producer recovered (it connected again): high, with the recovery time
    rec = next(f for f in found if f["severity"] == "high")
    assert rec["subjects"][0]["resolved_at"] and not rec["subjects"][0]["still_stuck"]
    # with the brokers' logs the broker-side findings tell it: no client-only duplicate
    both = dangling(cli("analyze", "--tz", "UTC", INCIDENT, "--format", "json").json())
    assert len(both) == 2 and not any(f["details"].get("client_only") for f in both)
    # healthy clients: nothing
    r = cli("analyze", "--tz", "UTC", *sorted(HEALTHY.glob("client-*")), "--format", "json")
    assert r.code == 0 and not dangling(r.json())


BROKER_25 = """\
10:00:00.000 [pulsar-io-22-1] INFO  org.apache.pulsar.broker.service.ServerCnx - New connection from /10.1.116.123:15070
10:01:40.020 [pulsar-load-manager-3-1] INFO  org.apache.pulsar.broker.loadbalance.impl.ModularLoadManagerImpl - [Overload shedder] Unloading bundle: public/default/0x40000000_0x80000000 from broker 10.0.0.12:8080
10:01:40.070 [pulsar-web-41-5] INFO  org.apache.pulsar.broker.namespace.OwnedBundle - Disabling ownership: public/default/0x40000000_0x80000000
10:01:40.130 [ForkJoinPool.commonPool-worker-24] INFO  org.apache.pulsar.broker.service.ServerCnx - [/10.1.116.123:15070][persistent://public/default/orders-partition-3] Creating producer. producerId=0
10:01:40.140 [ForkJoinPool.commonPool-worker-24] WARN  org.apache.pulsar.broker.service.BrokerService - Namespace bundle for topic (persistent://public/default/orders-partition-3) not served by this instance. Please redo the lookup. Request is denied: namespace=public/default
"""
FAILED_ADD = (
    "10:01:40.141 [ForkJoinPool.commonPool-worker-24] ERROR org.apache.pulsar.broker.service.ServerCnx - [/10.1.116.123:15070] Failed to add producer "
    "to topic persistent://public/default/orders-partition-3: java.lang.RuntimeException: org.apache.pulsar.broker.service.BrokerServiceException$ServiceUnitNotReadyException: "
    "Namespace bundle for topic (persistent://public/default/orders-partition-3) not served by this instance. Please redo the lookup. Request is denied: namespace=public/default\n"
)


def _reject_25(m: int) -> str:
    return (f"10:{m:02d}:10.541 [pulsar-io-22-3] WARN  org.apache.pulsar.broker.service.ServerCnx - [/10.1.116.123:15070][0] "
            "Producer with id persistent://public/default/orders-partition-3 is already present on the connection\n")


def test_a_creation_answered_by_the_id_less_failed_add_did_not_dangle(cli, tmp_path):
    # the 2.x 'Failed to add producer to topic T: …' names no producer id: it answers the creation of T
    # on that connection, so that future completed (the 2.5.2 fix at work), whatever the later rejections
    p = tmp_path / "broker.log"
    p.write_text(BROKER_25 + FAILED_ADD + "".join(_reject_25(m) for m in range(2, 12)))
    r = cli("analyze", p, "--date", "2024-03-14", "--tz", "UTC", "--format", "json")
    (f,) = dangling(r.json())
    (s,) = f["subjects"]
    assert s["dangling_creation_line"] is None and s["answered_creation_line"] == 4
    assert "was answered with Failed to add producer (line 6)" in f["root_cause"]
    assert "#9792" in f["root_cause"] and f["confidence"] <= 0.6
    assert not any("upgrade to Pulsar 2.5.2" in x for x in f["remediation"])
    # without that line the same log is the 2.4–2.5.1 dangling future, told with confidence
    p.write_text(BROKER_25 + "".join(_reject_25(m) for m in range(2, 12)))
    (f,) = dangling(cli("analyze", p, "--date", "2024-03-14", "--tz", "UTC", "--format", "json").json())
    assert f["subjects"][0]["dangling_creation_line"] == 4 and f["confidence"] >= 0.9
    assert "ServerCnx.handleProducer" in f["root_cause"]
    assert any("upgrade to Pulsar 2.5.2" in x for x in f["remediation"])


def test_id_less_rejections_take_the_producer_from_the_unanswered_creation(cli, tmp_path):
    # structured logging (newest master) prints the rejection with no topic, id or connection: the
    # producer is the only unanswered 'Creating producer' shortly before, and the unload is found
    slog = "".join(
        f"2023-09-12T07:{m}:00,000+0000 [pulsar-io-4-2] WARN  org.apache.pulsar.broker.service.ServerCnx - "
        "Producer with id is already present on the connection, producerId\n" for m in range(31, 41)
    )
    p = tmp_path / "broker.log"
    p.write_text(ISO_BROKER + slog)
    r = cli("analyze", p, "--format", "json")
    (f,) = dangling(r.json())
    (s,) = f["subjects"]
    assert (s["connection"], s["producer_id"], s["topic"]) == ("/10.2.0.5:40001", 5, "persistent://tenant/ns/events")
    assert s["identity_from_line"] == 4 and s["dangling_creation_line"] == 4
    assert f["cause"]["bundle"] == "tenant/ns/0x40000000_0x80000000"
    assert any("structured-logging" in x for x in f["confidence_reasons"])
    t = cli("analyze", p, "--format", "text").out
    assert "None" not in t and "producer 5 (persistent://tenant/ns/events) on /10.2.0.5:40001" in t
    # the pre-2.4 text names the connection and topic but no id: no 'None' either
    pre = "".join(
        f"10:{m:02d}:00.000 [pulsar-io-22-3] WARN  org.apache.pulsar.broker.service.ServerCnx - [/10.1.116.123:15070][persistent://public/default/orders-partition-3] "
        "Producer is already present on the connection\n" for m in range(0, 20)
    )
    p.write_text(pre)
    r = cli("analyze", p, "--date", "2024-03-14", "--tz", "UTC", "--format", "text")
    assert r.code == 0 and "None" not in r.out
    (f,) = dangling(cli("analyze", p, "--date", "2024-03-14", "--tz", "UTC", "--format", "json").json())
    assert "a producer (persistent://public/default/orders-partition-3) on /10.1.116.123:15070" in f["root_cause"]
    # no unload in this log, which holds WARN lines only: the title says an unload would not show
    assert "an unload would not show" in f["title"] and "holds no INFO lines" in f["title"] and f["cause"] is None


def test_a_time_window_narrows_what_is_shown_not_what_is_known(cli):
    # the last 30 minutes of the night: the producers stuck since 23:10 are still stuck in it, and
    # their start, unload and dangling creation (all before the window) are still told
    r = cli("analyze", "--tz", "UTC", INCIDENT, "--since", "-30m", "--format", "json")
    assert r.code == 0, r
    doc = r.json()
    found = dangling(doc)
    crit = next(f for f in found if f["severity"] == "critical")
    assert crit["first_seen"].startswith("2020-06-01T23:10:41") and crit["confidence"] >= 0.9
    assert crit["cause"]["bundle"] and all(s["dangling_creation_line"] for s in crit["subjects"])
    # findings over before the window are left out (the shedding decisions of the evening)
    assert all((f["last_seen"] or "") >= doc["summary"]["since"] or any(s.get("still_stuck") for s in f["subjects"]) for f in doc["findings"])
    assert len(doc["findings"]) < len(cli("analyze", "--tz", "UTC", INCIDENT, "--format", "json").json()["findings"])
    t = cli("analyze", "--tz", "UTC", INCIDENT, "--since", "-30m", "--format", "text").out
    assert "the detectors read the whole logs" in t


# ----------------------------------------------------------------------------- Pulsar before 2.4: an hour-old creation

PRE24 = SAMPLES / "pulsar-pre24"
# broker log, its stuck producer's connection and topic, the line of its unanswered creation
PRE24_CASES = [
    ("pulsar-broker-a.2019-04-02.log", "/10.1.20.7:41234", "persistent://public/default/orders"),
    ("pulsar-broker-b.log", "/10.1.30.4:38817", "persistent://public/default/payments"),
]


@pytest.mark.parametrize("name,conn,topic", PRE24_CASES)
def test_pre_2_4_rejection_names_the_producer_from_an_hour_old_creation(cli, name, conn, topic):
    """Pulsar 2.3 rejects with '[conn][topic] Producer is already present on the connection' (no id). The
    producer is the one creation on that connection and topic that nothing answered — 65 minutes before
    the first rejection; a creation on another connection that nothing answered either, but whose
    connection closed, is not it; an answered one on the same connection is not it."""
    path = PRE24 / name
    text = path.read_text().splitlines()
    creation = next(i for i, x in enumerate(text, 1) if f"[{conn}][{topic}] Creating producer" in x)
    first = next(i for i, x in enumerate(text, 1) if "Producer is already present on the connection" in x)
    r = cli("analyze", "--tz", "UTC", path, "--format", "json")
    assert r.code == 0, r
    (f,) = dangling(r.json())
    (s,) = f["subjects"]
    assert (s["connection"], s["producer_id"], s["topic"]) == (conn, 0, topic)
    assert s["identity_from_line"] == creation and s["dangling_creation_line"] == creation
    assert s["attempts"] == 40 and s["resolved_by"] == "connection closed (client reconnected)"
    assert s["first_seen"].startswith("2019-04-02T09:10:1")
    # the creation is an hour before the first rejection: far outside the 10 minutes it used to look back
    from datetime import datetime

    def stamp(line: str) -> datetime:
        m = re.search(r"(\d{2}:\d{2}:\d{2})\.\d{3}", line)
        return datetime.strptime(m.group(1), "%H:%M:%S")

    assert (stamp(text[first - 1]) - stamp(text[creation - 1])).total_seconds() > 3600
    t = cli("analyze", "--tz", "UTC", path, "--format", "text").out
    assert "None" not in t and f"producer 0 ({topic}) on {conn}" in t


def test_pre_2_4_layouts_are_recognised(cli):
    r = cli("inspect", "--tz", "UTC", PRE24)
    assert r.code == 0
    layouts = re.findall(r"^layout\s+(\S+)", r.out, re.M)
    assert sorted(layouts) == ["log4j-datetime-thread", "pulsar-broker-2x"]


def test_pre_2_4_two_unanswered_creations_name_no_producer_and_a_closed_one_does_not_count(cli, tmp_path):
    """Two unanswered creations on the same connection and topic: the rejection cannot tell which (no id).
    The same two where the first's connection closed (the port reused later): the second is the one."""
    conn, topic = "/10.1.20.7:41234", "persistent://public/default/orders"
    sc = "org.apache.pulsar.broker.service.ServerCnx"

    def line(t: str, level: str, msg: str) -> str:
        return f"2019-04-02 {t}.000 [pulsar-io-21-2] {level:<5} {sc} - {msg}\n"

    head = [
        line("08:05:00", "INFO", f"[{conn}][{topic}] Creating producer. producerId=0"),
        line("08:30:00", "INFO", f"[{conn}][{topic}] Creating producer. producerId=3"),
    ]
    rejects = [line(f"09:{10 + m:02d}:00", "WARN", f"[{conn}][{topic}] Producer is already present on the connection") for m in range(10)]
    p = tmp_path / "broker.log"
    p.write_text("".join(head + rejects))
    (f,) = dangling(cli("analyze", "--tz", "UTC", p, "--format", "json").json())
    assert f["subjects"][0]["producer_id"] is None
    closed = [head[0], line("08:10:00", "INFO", f"Closed connection from {conn}"), line("08:29:00", "INFO", f"New connection from {conn}"), head[1]]
    p.write_text("".join(closed + rejects))
    (f,) = dangling(cli("analyze", "--tz", "UTC", p, "--format", "json").json())
    (s,) = f["subjects"]
    assert s["producer_id"] == 3 and s["dangling_creation_line"] == 4


def test_pre_2_4_generator_is_deterministic_and_the_samples_are_its_output(tmp_path):
    import subprocess
    import sys

    gen = SAMPLES / "generators" / "pulsar_pre24.py"
    subprocess.run([sys.executable, str(gen), str(tmp_path)], check=True, capture_output=True)
    for f in PRE24.iterdir():
        assert (tmp_path / "pulsar-pre24" / f.name).read_bytes() == f.read_bytes(), f


def test_java_client_temporary_error_rejections_make_the_client_only_finding(tmp_path):
    """The Java client logs a retriable 'already present' as 'Temporary error in creating producer:
    …' (ProducerImpl); five of them over two minutes, with a send timed out meanwhile, are the
    client's view of a stuck producer (it made no finding: only 'Failed to create producer' was read)."""
    pi = "org.apache.pulsar.client.impl.ProducerImpl"
    tp = "[persistent://acme/sales/orders] [pulsar-7-3]"
    times = ["02:30:41.698", "02:30:42.013", "02:30:42.825", "02:31:06.862", "02:32:23.683"]
    lines = [f"2024-03-12 {t} [pulsar-client-io-1-1] WARN  {pi} - {tp} Temporary error in creating producer: Producer is already present on the connection"
             for t in times]
    lines.insert(4, f"2024-03-12 02:31:14.220 [pulsar-timer-6-1] WARN  {pi} - {tp} Message send timed out. Failing 3 messages")
    p = tmp_path / "orders-client.log"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    doc = run("analyze", "--tz", "UTC", "--format", "json", p).json()
    (f,) = [f for f in doc["findings"] if f["id"] == "pulsar.dangling-producer-future"]
    assert "client log only" in f["title"] and f["first_seen"].startswith("2024-03-12T02:30:41")
