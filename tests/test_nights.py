"""Whole nights: benchmarks/nights/gen.py writes incident nights with their truth, apart from
logsleuth; benchmarks/nights/score.py runs the CLI on each and checks every expected finding,
subject, count and cause, that nothing else of severity medium or more is claimed, and the number of
incidents. CI runs a small seed (two nights of each kind); the benchmark runs large ones.

The shapes it found that the detectors did not read are pinned below on small hand-written logs."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, SAMPLES

NIGHTS = ROOT / "benchmarks" / "nights"


# three small seeds (14 nights each): together they hold every shape the generator plays (two
# stranding unloads, Pulsar's own rollover, a crash and a network cut, buffer exhaustion, --tz,
# sarama on one broker and on three with std log and zap, docker json-file and kubectl --prefix)
# and seed 15's first night: two unloads of one bundle, 73 minutes apart, each stranding producers
# (two incidents; one before, the bundle's key held for the hours they stayed stuck)
@pytest.mark.parametrize("seed, nights", [(7, 14), (9, 14), (11, 14), (15, 1)])
def test_the_night_generator_s_small_seeds_are_diagnosed_right(tmp_path, seed, nights):
    gen = subprocess.run([sys.executable, NIGHTS / "gen.py", "--seed", str(seed), "--nights", str(nights), "--out", tmp_path],
                         capture_output=True, text=True, timeout=300)
    assert gen.returncode == 0, gen.stderr
    truths = [json.loads(p.read_text()) for p in sorted(tmp_path.glob("n*/truth.json"))]
    assert len(truths) == nights and sum(len(t["expect"]) for t in truths) >= nights
    if nights == 14:
        kinds = {t["kind"].split(" ")[0] for t in truths}
        assert kinds >= {"pulsar-dangling", "kafka-outage", "sarama-stall", "kafka-callback", "healthy", "kafka-rolling", "sarama-refused"}
    score = subprocess.run([sys.executable, NIGHTS / "score.py", tmp_path, "--json"], capture_output=True, text=True, timeout=900)
    assert score.returncode == 0, score.stderr
    s = json.loads(score.stdout)
    wrong = [r for r in s["rows"] if not r["right"]]
    assert s["right"] == s["nights"] == nights, json.dumps(wrong, indent=1)


def test_the_scorer_fails_a_wrong_diagnosis(tmp_path):
    """The scorer is not a rubber stamp: a truth the output does not hold is a miss, a loud finding
    the truth does not hold is unexplained, and a wrong number of incidents is said."""
    sys.path.insert(0, str(NIGHTS))
    try:
        from score import score_night
    finally:
        sys.path.remove(str(NIGHTS))
    out = {"findings": [{"id": "kafka.delivery-timeout", "severity": "critical", "title": "t",
                         "subjects": [{"topic_partition": "orders-1", "records": 10, "path": "a/app.log"}], "cause": {"node": 2}},
                        {"id": "kafka.buffer-exhausted", "severity": "high", "title": "b", "subjects": [], "cause": {}}],
           "incidents": [{"severity": "critical", "headline": "h"}]}
    right = {"expect": [{"id": "kafka.delivery-timeout", "subject": {"topic_partition": "orders-1", "records": 10, "path": "app.log"},
                         "cause": {"node": 2}}], "allow": ["kafka.buffer-exhausted"], "incidents": 1}
    assert score_night(right, out) == ([], [])
    wrong_count = json.loads(json.dumps(right))
    wrong_count["expect"][0]["subject"]["records"] = 11
    misses, _ = score_night(wrong_count, out)
    assert len(misses) == 1 and "orders-1" in misses[0]
    wrong_cause = json.loads(json.dumps(right))
    wrong_cause["expect"][0]["cause"]["node"] = 3
    assert len(score_night(wrong_cause, out)[0]) == 1
    not_allowed = dict(right, allow=[], incidents=2)
    misses, extra = score_night(not_allowed, out)
    assert not misses and len(extra) == 2 and extra[0].startswith("kafka.buffer-exhausted [high]") and "1 incidents" in extra[1]


# ----------------------------------------------------------------------------- sarama beside a JSON logger

def _sarama_stream(zap_wrapped_in_docker: bool, chatter: int = 0) -> str:
    """sarama's std logger and the application's zap JSON in one stream: the leader (one of three
    brokers) black-holed, the send failing after ReadTimeout + 3 x (Backoff + DialTimeout) = 120.3 s."""
    t0 = dt.datetime(2026, 3, 9, 2, 40, 0, tzinfo=dt.timezone.utc)
    recs: list[tuple[float, str]] = []

    def sar(x: float, msg: str) -> None:
        t = t0 + dt.timedelta(seconds=x)
        recs.append((x, f"[sarama] {t:%Y/%m/%d %H:%M:%S} {msg}"))

    def zap(x: float, level: str, msg: str, **fields) -> None:
        t = t0 + dt.timedelta(seconds=x)
        recs.append((x, json.dumps({"level": level, "ts": round(t.timestamp(), 3), "caller": "producer/main.go:88", "msg": msg, **fields},
                                   separators=(",", ":"))))

    for k in range(-60, 0, 3):
        zap(k, "info", f"delivered to events/1 at offset {9000 + k}", topic="events", partition=1)
        for j in range(chatter):  # the service's own std-log lines, far more than its zap lines
            t = t0 + dt.timedelta(seconds=k + j * 0.1)
            recs.append((k + j * 0.1, f"{t:%Y/%m/%d %H:%M:%S} http: GET /healthz 200 in {30 + j}us"))
    sar(30, "producer/broker/2 state change to [closing] because read tcp 10.0.1.5:51234->10.0.0.12:9092: i/o timeout")
    sar(30, "Closed connection to broker kafka-1.kafka:9092")
    sar(30, "producer/leader/events/1 state change to [retrying-1]")
    sar(30, "producer/leader/events/1 abandoning broker 2")
    x = 30.0
    for k in range(1, 4):
        x += 0.1
        sar(x, "client/metadata fetching metadata for [events] from broker kafka-2.kafka:9092")
        sar(x, "producer/leader/events/1 selected broker 2")
        x += 30
        sar(x, "Failed to connect to broker kafka-1.kafka:9092: dial tcp 10.0.0.12:9092: i/o timeout")
        sar(x, "producer/broker/2 state change to [closing] because dial tcp 10.0.0.12:9092: i/o timeout")
        if k < 3:
            sar(x, f"producer/leader/events/1 state change to [retrying-{k + 1}]")
            sar(x, "producer/leader/events/1 abandoning broker 2")
    zap(x, "error", "send to events failed", topic="events", partition=1,
        error="kafka: Failed to produce message to topic events: dial tcp 10.0.0.12:9092: i/o timeout")
    sar(400, "Connected to broker at kafka-1.kafka:9092 (registered as #2)")
    sar(400, "producer/leader/events/1 selected broker 2")
    sar(400, "producer/leader/events/1 state change to [normal]")
    for k in range(401, 430, 3):
        zap(k, "info", f"delivered to events/1 at offset {9100 + k}", topic="events", partition=1)
    recs.sort(key=lambda r: r[0])
    lines = [line for _, line in recs]
    if zap_wrapped_in_docker:
        lines = [json.dumps({"log": line + "\n", "stream": "stdout", "time": (t0 + dt.timedelta(seconds=x)).isoformat().replace("+00:00", "Z")},
                            separators=(",", ":")) for (x, _), line in zip(recs, lines)]
    return "\n".join(lines) + "\n"


def test_a_zap_application_beside_sarama_s_std_logger_ends_the_stall_at_its_error(cli, tmp_path):
    """Each zap JSON object is a record of its own though its text lacks the std logger's head (its
    error line was folded into the sarama line before it: the stall ran to the recovery, 400 s);
    the same inside docker's json-file lines (JSON inside JSON: the application's line was not read),
    and when the service's std-log lines far outnumber its zap lines (no JSON envelope was taken)."""
    for docker, chatter in ((False, 0), (True, 0), (False, 12), (True, 12)):
        p = tmp_path / f"producer-{docker}-{chatter}.log"
        p.write_text(_sarama_stream(docker, chatter))
        r = cli("analyze", p, "--format", "json", "--tz", "UTC")
        assert r.code == 0, r
        (f,) = [f for f in r.json()["findings"] if f["id"] == "sarama.retry-redial-stall"]
        (s,) = f["subjects"]
        assert s["topic_partition"] == "events/1" and s["ended_by"] == "error", s
        assert abs(s["stall_seconds"] - 120.3) <= 1.5, s
        assert "dial tcp 10.0.0.12:9092: i/o timeout" in s["returned_error"]
        ins = r.json()["inputs"][0]
        assert ins["envelope"] == ("json (log)+json (msg)" if docker else "json (msg)"), ins


def test_a_sarama_client_s_refused_sends_and_the_broker_s_crash_are_one_incident(cli, tmp_path):
    """The refused sends name the crash in their cause (the broker's own log); the broker's
    restart finding is the same incident, under one headline (two before)."""
    client = (SAMPLES / "sarama-refused" / "inventory-producer.log").read_text().splitlines()
    first = next(x for x in client if "state change to [closing] because EOF" in x)
    stamp = dt.datetime.strptime(first.split(" ")[1] + " " + first.split(" ")[2][:8], "%Y/%m/%d %H:%M:%S")
    broker = tmp_path / "kafka-1" / "server.log"
    broker.parent.mkdir()
    fmt = lambda t: f"[{t:%Y-%m-%d %H:%M:%S},{t.microsecond // 1000:03d}]"  # noqa: E731
    rows = []
    for k in range(600, 5, -7):  # a running broker, then nothing: it was killed
        t = stamp - dt.timedelta(seconds=k)
        rows.append(f"{fmt(t)} INFO [Log partition=events-{k % 6}, dir=/var/lib/kafka/data] Rolled new log segment at offset {k * 1000} in 2 ms. (kafka.log.Log)")
    back = stamp + dt.timedelta(seconds=11)
    rows.append(f"{fmt(back - dt.timedelta(seconds=4))} INFO KafkaConfig values: (kafka.server.KafkaConfig)")
    rows.append(f"{fmt(back - dt.timedelta(seconds=3))} INFO [KafkaServer id=1] starting (kafka.server.KafkaServer)")
    rows.append(f"{fmt(back)} INFO [KafkaServer id=1] started (kafka.server.KafkaServer)")
    broker.write_text("\n".join(rows) + "\n")
    r = cli("analyze", SAMPLES / "sarama-refused" / "inventory-producer.log", broker, "--format", "json", "--tz", "UTC")
    assert r.code == 0, r
    d = r.json()
    ids = sorted(f["id"] for f in d["findings"])
    assert ids == ["kafka.broker-restart", "sarama.broker-refused"], ids
    (inc,) = d["incidents"]
    assert sorted(inc["finding_ids"]) == ids and inc["headline"].startswith("Kafka broker node 1: crashed and restarted"), inc
    assert {"kind": "kafka node", "value": "1"} in inc["shares"]


def test_sarama_s_logger_off_the_broker_is_the_address_its_error_names(cli, tmp_path):
    """Only the application's lines (sarama's Logger at its default): the stall's broker is the
    address in the returned error (the headline said "Kafka broker  black-holed"); an error that
    names none gets a headline that says so."""
    t0 = dt.datetime(2026, 1, 17, 2, 59, 0)
    for error, broker in (("kafka: Failed to produce message to topic ledger: dial tcp 10.0.0.12:9092: i/o timeout", "10.0.0.12:9092"),
                          ("kafka: client has run out of available brokers to talk to (Is your cluster reachable?)", None)):
        rows = [f"{t0 + dt.timedelta(seconds=k):%Y/%m/%d %H:%M:%S} delivered to ledger/5 at offset {7000 + k}" for k in range(0, 50)]
        rows.append(f"{t0 + dt.timedelta(seconds=49 + 121):%Y/%m/%d %H:%M:%S} send to ledger failed: {error}")
        rows += [f"{t0 + dt.timedelta(seconds=400 + k):%Y/%m/%d %H:%M:%S} delivered to ledger/5 at offset {7100 + k}" for k in range(20)]
        p = tmp_path / f"producer-{broker is not None}.log"
        p.write_text("\n".join(rows) + "\n")
        r = cli("analyze", p, "--tz", "UTC", "--format", "json")
        assert r.code == 0, r
        (f,) = r.json()["findings"]
        (s,) = f["subjects"]
        assert f["id"] == "sarama.retry-redial-stall" and s["broker"] == broker, s
        assert s["topic_partition"] == "ledger/5", s  # from 'delivered to ledger/5' (was 'unknown' when no line named the topic)
        assert abs(s["stall_seconds"] - 121) <= 1, s
        (inc,) = r.json()["incidents"]
        if broker:
            assert inc["headline"] == f"Kafka broker {broker} black-holed: sarama sends stalled" and broker in f["title"], inc
        else:
            assert inc["headline"] == "sarama sends stalled: a Kafka broker not named in these logs", inc
            assert "  " not in inc["headline"] + inc["now"]
