"""sarama over a whole client (issue 19): several brokers, one gone, the partitions it led stalled
while the others deliver; the stall's true bounds; and no stall where nothing stalled.

The expected values come from the generator's simulation of the same log (sample_logs/generators/
sarama_cluster.py), not from the committed files: which partitions the gone broker led, when the
first stalled message was written, when its error was returned or when those partitions delivered
again. Each case is checked in two layouts the reader parses (Go's log with and without sarama's
prefix, zap / logrus / zerolog JSON)."""

from __future__ import annotations

import datetime as dt
import importlib.util
import re
import subprocess
import sys

import pytest

from conftest import SAMPLES, run

GEN = SAMPLES / "generators" / "sarama_cluster.py"
STALL = "sarama.retry-redial-stall"


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


gen = _load("sarama_cluster_generator", GEN)
_cache: dict = {}


def analyze(*args) -> dict:
    r = run("analyze", "--tz", "UTC", *args, "--format", "json")
    assert r.code == 0, r
    return r.json()


def scenario(path: str):
    return next(c for c in gen.SCENARIOS if c.path == path)


def truth(path: str) -> dict:
    """What the simulation of this log did: the stalled partitions, the first stalled message (written
    at its enqueue time: one request in flight, the bridge writes it at once), its error, the first
    delivery on those partitions after the stall."""
    if path not in _cache:
        c = scenario(path)
        _, sim = gen.simulate(c)
        faulty = {p for p in range(c.partitions) if p % len(c.brokers) == c.faulty}
        slow = [r for r in sim.results if r[1] in faulty and r[3] - r[2] > 1.0]
        first = min(slow, key=lambda r: r[2])
        errors = [r for r in sim.results if r[4] is not None]
        after = [r for r in sim.results if r[1] in faulty and r[4] is None and r[3] > first[2] + 1.0]
        stamp = lambda s: c.start + dt.timedelta(seconds=s)  # noqa: E731
        _cache[path] = {
            "tps": sorted(f"{c.topic}/{p}" for p in faulty if any(r[1] == p for r in slow)),
            "write": stamp(first[2]),
            "first_error": stamp(min(r[3] for r in errors)) if errors else None,
            "errors": len(errors),
            "delivered_again": stamp(min(r[3] for r in after)),
            "broker": c.brokers[c.faulty],
        }
    return _cache[path]


def ts(s: str) -> dt.datetime:
    return dt.datetime.fromisoformat(s.replace("Z", "+00:00"))


def stalls(doc) -> list[dict]:
    return [f for f in doc["findings"] if f["id"] == STALL]


def sample_stall(path: str) -> dict:
    key = ("doc", path)
    if key not in _cache:
        fs = stalls(analyze(SAMPLES / path))
        assert len(fs) == 1, [f["title"] for f in fs]
        _cache[key] = fs[0]
    return _cache[key]


def test_generator_is_deterministic_and_the_samples_are_its_output(tmp_path):
    r = subprocess.run([sys.executable, str(GEN), str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    for c in gen.SCENARIOS:
        assert (tmp_path / c.path).read_bytes() == (SAMPLES / c.path).read_bytes(), c.path


@pytest.mark.parametrize("path", [c.path for c in gen.SCENARIOS if c.outage])
def test_the_layout_is_recognised(path):
    r = run("inspect", "--tz", "UTC", SAMPLES / path)
    assert r.code == 0, r
    layout = re.search(r"^layout\s+(\S+)", r.out, re.M).group(1)
    envelope = re.search(r"^envelope\s+(\S+)", r.out, re.M).group(1)
    assert (envelope, layout) == (("json", "message-only") if path.endswith(".json") else ("none", "go-log")), r.out
    assert "0 without a timestamp" in r.out


# ----------------------------------------------------------------------------- one black-holed broker of three

ASYNC_ERRORS = ["sarama-cluster/orders-async.log", "sarama-cluster/orders-async.json"]


@pytest.mark.parametrize("path", ASYNC_ERRORS)
def test_one_finding_for_the_broker_and_exactly_its_partitions(path):
    """Broker 2 of three black-holed, AsyncProducer, Retry.Max 5: each retry logs 'selected broker 2' and
    the other brokers' partitions keep delivering; neither ends the stall (it used to give six findings
    of 0.1-0.6 s). One finding, the partitions broker 2 led and only those."""
    t = truth(path)
    f = sample_stall(path)
    assert sorted(s["topic_partition"] for s in f["subjects"]) == t["tps"] == ["orders/2", "orders/5"]
    s = f["subjects"][0]
    assert s["broker"] == t["broker"] and s["broker_node"] == 2 and f["cause"]["node"] == 2
    assert s["kind"] == "blackhole" and s["dial_timeouts"] == 5 and abs(s["dial_timeout_seconds"] - 10.0) <= 0.05
    # from the write of the stalled request to the first error returned, ±1 s
    assert abs((ts(s["from"]) - t["write"]).total_seconds()) <= 1.0, (s["from"], t["write"])
    assert abs((ts(s["to"]) - t["first_error"]).total_seconds()) <= 1.0
    assert abs(s["stall_seconds"] - (t["first_error"] - t["write"]).total_seconds()) <= 1.0
    assert s["ended_by"] == "error" and s["end_bound"] == "error returned"
    assert f["severity"] == "high"
    # every error returned for these partitions until they delivered again, and when they did
    assert f["details"]["errors_returned"] == t["errors"] and sum(x["errors_returned"] for x in f["subjects"]) == t["errors"]
    assert abs((ts(f["details"]["recovered_at"]) - t["delivered_again"]).total_seconds()) <= 1.0
    state = f["details"]["broker_state"]
    assert state["node"] == 2 and "kafka-2.kafka:9092" in state["addresses"] and state["partitions_led"]
    assert f["details"]["model"]["applies"] is False  # several brokers: the one-broker model is not used


def test_the_start_bound_says_which_value_it_used():
    """The Go log prints the application's config (Net.ReadTimeout=10s): the write is the [closing] line
    minus that. zap's log prints none, and sarama's 30 s default would put the write before the last
    delivery on those partitions: that delivery bounds the start, and the finding says so."""
    printed = sample_stall("sarama-cluster/orders-async.log")["subjects"][0]
    assert printed["start_bound"] == "write" and "the '[closing]' line minus Net.ReadTimeout=10s, as the application printed it (line 8)" in printed["start_bound_from"]
    assert abs((ts(printed["from"]) - truth("sarama-cluster/orders-async.log")["write"]).total_seconds()) <= 0.05
    fallback = sample_stall("sarama-cluster/orders-async.json")["subjects"][0]
    assert fallback["start_bound"] == "last line before the chain"
    assert "sarama's default Net.ReadTimeout=30s would put the write before it" in fallback["start_bound_from"]
    f = sample_stall("sarama-cluster/orders-async.json")
    quoted = next(e for e in f["evidence"] if e["note"] == "last line before the failure chain")
    assert '"partition":2' in quoted["text"] or '"partition":5' in quoted["text"]  # a stalled partition's last delivery, not a healthy one's


@pytest.mark.parametrize("path", ["sarama-cluster/payments-async.log", "sarama-cluster/payments-async.logrus.json"])
def test_a_recovering_stall_ends_at_the_delivery_not_at_selected_broker(path):
    """The black hole lifts during the 3rd retry's dial: 'selected broker 2' and [normal] are logged at
    once, the dial connects 3 s later, and the application's delivery (with its latency) is the end."""
    t = truth(path)
    f = sample_stall(path)
    assert sorted(s["topic_partition"] for s in f["subjects"]) == t["tps"] == ["payments/2", "payments/5"]
    s = f["subjects"][0]
    assert s["ended_by"] == "recovery" and s["end_bound"] == "delivery" and t["first_error"] is None
    assert abs((ts(s["to"]) - t["delivered_again"]).total_seconds()) <= 1.0
    # the last line before the chain bounds the start (no ReadTimeout printed, the default too long): within
    # one send interval, plus the stamps' resolution (log.LstdFlags: 1 s)
    coarse = s["time_resolution"] != "sub-second"
    assert -(1.0 + coarse) <= (ts(s["from"]) - t["write"]).total_seconds() <= 0.01
    assert abs(s["stall_seconds"] - (t["delivered_again"] - t["write"]).total_seconds()) <= 1.0
    text = (SAMPLES / path).read_text()
    selected = [m for m in re.finditer(r"selected broker 2", text)]
    last_sel = text[: selected[-1].start()].count("\n") + 1
    sel_line = text.splitlines()[last_sel - 1]
    stamp = re.search(r"\d{4}[-/]\d{2}[-/]\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d+)?", sel_line).group(0).replace("/", "-")
    sel_ts = dt.datetime.fromisoformat(stamp.replace(" ", "T")).replace(tzinfo=dt.timezone.utc)
    assert (ts(s["to"]) - sel_ts).total_seconds() >= 2.0  # not the 'selected broker' 3 s before the connect
    assert f["details"]["bounds"]["delivery_latency_seconds"] > 10  # the delivery's own latency field was read
    assert f["details"]["errors_returned"] == 0


@pytest.mark.parametrize("path", ["sarama-cluster/shipping-async.log", "sarama-cluster/shipping-async.zerolog.json"])
def test_leadership_moved_ends_the_stall_at_the_delivery(path):
    t = truth(path)
    f = sample_stall(path)
    assert sorted(s["topic_partition"] for s in f["subjects"]) == t["tps"] == ["shipments/2", "shipments/5"]
    s = f["subjects"][0]
    assert s["end_bound"] == "delivery" and abs((ts(s["to"]) - t["delivered_again"]).total_seconds()) <= 1.0
    assert abs(s["stall_seconds"] - (t["delivered_again"] - t["write"]).total_seconds()) <= 1.0


def test_text_names_the_partitions_and_the_bounds():
    out = run("analyze", "--tz", "UTC", SAMPLES / "sarama-cluster" / "orders-async.log", "--format", "text").out
    flat = re.sub(r"\s+", " ", re.sub(r"-\n\s+", "-", out))
    assert flat.count("· sarama.retry-redial-stall ·") == 1
    assert "stalled 60.5 s on orders/2, orders/5: broker kafka-2.kafka:9092 black-holed" in flat
    assert "from the write of the stalled request (the '[closing]' line minus Net.ReadTimeout=10s, as the application printed it (line 8)) to the first error" in flat


# ----------------------------------------------------------------------------- the true start of a SyncProducer stall

@pytest.mark.parametrize("path,hung", [("sarama-bounds/ledger-sync.log", 120.3), ("sarama-bounds/ledger-sync.zerolog.json", 110.3)])
def test_sync_stall_starts_at_the_write_not_at_the_last_delivery(path, hung):
    """One send every 30 s, sarama's defaults: the request written 30 s after the last delivery hung
    30 + 3 × 30.1 s; the last delivery is 150 s before the error (what used to be reported)."""
    t = truth(path)
    f = sample_stall(path)
    (s,) = f["subjects"]
    assert s["topic_partition"] == "ledger/2" and s["ended_by"] == "error"
    assert abs(s["stall_seconds"] - hung) <= 1.0 and abs(s["stall_seconds"] - (t["first_error"] - t["write"]).total_seconds()) <= 1.0
    assert abs((ts(s["from"]) - t["write"]).total_seconds()) <= 1.0
    assert s["start_bound"] == "write" and abs(s["idle_seconds"] - 30.0) <= 1.0
    if "zerolog" in path:
        assert "Net.ReadTimeout=20s, as the application printed it" in s["start_bound_from"]
    else:
        assert "sarama's default Net.ReadTimeout=30s (the log prints no value)" in s["start_bound_from"]


# ----------------------------------------------------------------------------- no zero-second stalls

@pytest.mark.parametrize("path", ["sarama-old/startup-seed-down.log", "sarama-old/startup-seed-down.json"])
def test_a_single_dial_failure_at_start_up_is_no_stall(path):
    doc = analyze(SAMPLES / path)
    assert doc["findings"] == [], [f["title"] for f in doc["findings"]]
    assert doc["summary"]["events"] > 10


def test_a_hand_written_single_dial_failure_is_no_stall(tmp_path):
    p = tmp_path / "catalog.log"
    p.write_text(
        "2026/11/29 05:00:00 starting catalog-api\n"
        "[sarama] 2026/11/29 05:00:00 Initializing new client\n"
        "[sarama] 2026/11/29 05:00:00 client/metadata fetching metadata for all topics from broker kafka-2:9092\n"
        "[sarama] 2026/11/29 05:00:30 Failed to connect to broker kafka-2:9092: dial tcp 10.4.0.23:9092: i/o timeout\n"
        "[sarama] 2026/11/29 05:00:30 client/metadata got error from broker while fetching metadata: dial tcp 10.4.0.23:9092: i/o timeout\n"
        "[sarama] 2026/11/29 05:00:30 client/metadata fetching metadata for all topics from broker kafka-0:9092\n"
        "[sarama] 2026/11/29 05:00:30 Connected to broker at kafka-0:9092 (unregistered)\n"
        "[sarama] 2026/11/29 05:00:30 Successfully initialized new client\n"
        "2026/11/29 05:00:31 message 1 delivered to partition 3 at offset 100\n"
    )
    assert analyze(p)["findings"] == []


def test_a_prefix_the_go_log_layout_does_not_know_gives_the_same_stall(tmp_path):
    """A sarama prefix the Go-log layout does not know ('sarama> '): its lines used to be folded into
    the application's records and lose their stamps ('0 s', or a stall the length of the folded
    record). Each stamped line is a record of its own now, so the stall is the one of the clean log."""
    text = (SAMPLES / "sarama-blackhole" / "orders-producer.log").read_text().replace("[sarama] ", "sarama> ")
    p = tmp_path / "prefixed.log"
    p.write_text(text)
    doc = run("analyze", "--tz", "UTC", p, "--format", "json").json()
    clean = run("analyze", "--tz", "UTC", SAMPLES / "sarama-blackhole" / "orders-producer.log", "--format", "json").json()
    (got,), (want,) = stalls(doc), stalls(clean)
    assert got["subjects"][0]["topic_partition"] == want["subjects"][0]["topic_partition"] == "orders/0"
    assert abs(got["subjects"][0]["stall_seconds"] - want["subjects"][0]["stall_seconds"]) <= 1.0


@pytest.mark.parametrize("path", ["sarama-old/catalog-producer.log", "sarama-old/catalog-producer-noprefix.log"])
def test_pre_1_20_texts_are_recognised_and_timed(path):
    """sarama before v1.20 prints 'client/metadata got error from broker while fetching metadata: E' (no
    broker id): recognised, and the stall is the whole one the model gives (2 × 5 + 0.1 + 4 × 10 + 0.75 s)."""
    lines = (SAMPLES / path).read_text()
    assert "got error from broker while fetching metadata" in lines and "got error from broker -1" not in lines
    r = run("events", "--tz", "UTC", SAMPLES / path, "--event", "sarama_metadata_error")
    assert r.code == 0 and r.out.count("got error from broker while fetching metadata") == lines.count("got error from broker while fetching metadata")
    f = sample_stall(path)
    (s,) = f["subjects"]
    assert s["topic_partition"] == "catalog/3" and s["kind"] == "blackhole"
    assert abs(s["stall_seconds"] - 50.85) <= 1.0 and f["details"]["model"]["fits"] is True
    assert s["read_timeouts"] == 2 and s["dial_timeouts"] == 4


def test_application_lines_that_name_no_partition_do_not_bound_the_stall(tmp_path):
    """With several partitions in the log, an application line naming none may be another partition's:
    it neither ends the stall nor bounds its start; the start is the [closing] line minus the printed
    Net.ReadTimeout (an estimate: no earlier line is known to be about these partitions)."""
    text = (SAMPLES / "sarama-cluster" / "orders-async.log").read_text()
    text = re.sub(r"delivered to partition \d+ at offset", "delivered at offset", text)
    text = re.sub(r"to partition \d+ failed", "failed", text)
    p = tmp_path / "unnamed.log"
    p.write_text(text)
    (f,) = stalls(analyze(p))
    t = truth("sarama-cluster/orders-async.log")
    assert sorted(s["topic_partition"] for s in f["subjects"]) == t["tps"]
    s = f["subjects"][0]
    assert s["start_bound"] == "estimated" and abs((ts(s["from"]) - t["write"]).total_seconds()) <= 0.05
    assert abs((ts(s["to"]) - t["first_error"]).total_seconds()) <= 0.05
