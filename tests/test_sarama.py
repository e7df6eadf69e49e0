"""sarama's retry/re-dial stall through the real CLI: the three outage kinds (black hole, refused,
mute), their time budgets and the "after the change" estimate, the breaker and out-of-brokers
reports, --sarama-config comparisons, the healthy case, and logs made on the fly with other
timeouts so that nothing can be tuned to the committed samples.

Expected numbers come from the measured model (../shared/reference/sarama-timing.md): e.g. a black
hole with Retry.Max=1, DialTimeout=30s, ReadTimeout=3s fails after 126.86 s; the application's last
successful send was logged about one send interval (1 s) before the failing send began, and the stall
runs from the write of the stalled request (the '[closing]' line minus Net.ReadTimeout), not from that
line. A refused broker is no stall: sarama.broker-refused (test_refused.py)."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys

import pytest

from conftest import ROOT, SAMPLES, run

GENERATOR = SAMPLES / "generators" / "sarama.py"
ID = "sarama.retry-redial-stall"


def _generator():
    spec = importlib.util.spec_from_file_location("sarama_generator", GENERATOR)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["sarama_generator"] = mod
    spec.loader.exec_module(mod)
    return mod


gen = _generator()


def analyze(*args) -> dict:
    r = run("analyze", "--tz", "UTC", *args, "--format", "json")
    assert r.code == 0, r
    return r.json()


def stalls(doc) -> list[dict]:
    return [f for f in doc["findings"] if f["id"] == ID]


def one(path, *extra) -> dict:
    fs = stalls(analyze(path, *extra))
    assert len(fs) == 1, [f["title"] for f in fs]
    return fs[0]


def budget(f) -> dict:
    return {b["component"]: b for b in f["details"]["budget"]}


_cache: dict = {}


def sample(name: str) -> dict:
    if name not in _cache:
        _cache[name] = one(SAMPLES / name)
    return _cache[name]


# ----------------------------------------------------------------------------- the generator


def test_generator_reproduces_the_measured_table():
    r = subprocess.run([sys.executable, str(GENERATOR), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "9 measured runs reproduced" in r.stdout


def test_generator_is_deterministic_and_the_samples_are_its_output(tmp_path):
    r = subprocess.run([sys.executable, str(GENERATOR), str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    for sc in gen.SCENARIOS + gen.OLD:
        assert (tmp_path / sc.path).read_bytes() == (SAMPLES / sc.path).read_bytes(), sc.path


# ----------------------------------------------------------------------------- the three kinds

# path, kind, stall (±1 s: from the write of the stalled request to the error), failing send as
# measured (s), topic/partition, broker
KINDS = [
    ("sarama-blackhole/orders-producer.log", "blackhole", 126.86, 126.86, "orders/0", "kafka-0.kafka.prod.svc:9092"),
    ("sarama-blackhole/payments-producer.log", "blackhole", 14.86, 14.86, "payments/2", "10.0.0.7:9092"),
    ("sarama-silent/orders-api.json", "silent", 12.31, 12.31, "orders/4", "b-1.msk.internal:9092"),
    ("sarama-silent/ledger-producer.log", "silent", 60.1, 60.1, "ledger/7", "192.168.10.21:9092"),
]


@pytest.mark.parametrize("path,kind,stall,send,tp,broker", KINDS)
def test_stall_length_kind_partition_and_broker(path, kind, stall, send, tp, broker):
    f = sample(path)
    (s,) = f["subjects"]
    assert s["topic_partition"] == tp
    assert s["path"].endswith(path)
    assert abs(s["stall_seconds"] - stall) <= 1.0, s["stall_seconds"]
    assert s["kind"] == kind and f["cause"]["kind"] == kind
    assert s["broker"] == broker and f["cause"]["broker"] == broker
    assert s["ended_by"] == "error" and s["end_bound"] == "error returned"
    assert s["start_bound"] == "write" and "Net.ReadTimeout" in s["start_bound_from"]
    assert s["from"] < s["to"]
    assert f["details"]["model"]["fits"] is True
    if s["time_resolution"] == "sub-second":  # microsecond stamps: the failing send itself to 50 ms
        assert abs(s["send_seconds"] - send) <= 0.05, s["send_seconds"]
        assert abs(s["idle_seconds"] - 1.0) <= 0.01
    else:
        assert abs(s["send_seconds"] - send) <= 1.0


def test_blackhole_budget_lstdflags():
    f = sample("sarama-blackhole/orders-producer.log")
    (s,) = f["subjects"]
    b = budget(f)
    # 1 produce read timeout, 1 metadata read timeout, 4 dials, 3 metadata back-offs, 1 retry back-off
    assert (s["dial_timeouts"], s["read_timeouts"], s["metadata_backoffs"], s["retry_backoffs"]) == (4, 2, 3, 1)
    assert abs(s["dial_timeout_seconds"] - 30) <= 1 and abs(s["read_timeout_seconds"] - 3) <= 1
    assert b["dial_timeout"]["count"] == 4 and abs(b["dial_timeout"]["seconds"] - 120) <= 1
    assert b["produce_read_timeout"]["count"] == 1 and b["metadata_read_timeout"]["count"] == 1
    assert b["metadata_backoff"]["each_seconds"] == 0.25 and b["metadata_backoff"]["estimated_seconds"] == 0.75
    assert abs(b["idle"]["seconds"] - 1) <= 1 and abs(s["idle_seconds"] - 1) <= 1
    assert "dial_refused" not in b
    # every second of the stall is in some component; the idle second before the write is listed, not in the stall
    assert abs(sum(x["seconds"] for x in b.values() if x["component"] != "idle") - s["stall_seconds"]) < 0.01
    assert f["details"]["inferred"]["Metadata.Retry.Max"]["value"] == 3
    assert f["cause"]["dominant_setting"] == "Net.DialTimeout"
    assert f["severity"] == "high"


def test_blackhole_budget_microseconds_and_retry_max_3_behaves_like_1():
    f = sample("sarama-blackhole/payments-producer.log")
    (s,) = f["subjects"]
    b = budget(f)
    assert (s["dial_timeouts"], s["read_timeouts"], s["metadata_backoffs"], s["retry_backoffs"]) == (4, 2, 3, 1)
    assert abs(s["dial_timeout_seconds"] - 2.0) <= 0.01 and abs(s["read_timeout_seconds"] - 3.0) <= 0.01
    assert abs(b["dial_timeout"]["seconds"] - 8.0) <= 0.01
    assert abs(b["produce_read_timeout"]["seconds"] - 3.0) <= 0.01 and abs(b["metadata_read_timeout"]["seconds"] - 3.0) <= 0.01
    assert abs(b["metadata_backoff"]["seconds"] - 0.75) <= 0.01
    assert abs(b["retry_backoff"]["seconds"] - 0.1) <= 0.01
    assert abs(f["details"]["inferred"]["Producer.Retry.Backoff"]["value"] - 0.1) <= 0.01
    assert sum(x["seconds"] for x in b.values() if x["component"] == "other") < 0.02


def test_silent_budget_grows_with_retry_max():
    f3 = sample("sarama-silent/orders-api.json")
    f1 = sample("sarama-silent/ledger-producer.log")
    (s3,), (s1,) = f3["subjects"], f1["subjects"]
    assert s3["read_timeouts"] == 4 and s3["retry_backoffs"] == 3 and s3["dial_timeouts"] == 0
    assert abs(s3["read_timeout_seconds"] - 3.0) <= 0.01
    assert abs(budget(f3)["produce_read_timeout"]["seconds"] - 12.0) <= 0.02
    assert f3["details"]["inferred"]["Producer.Retry.Max"]["value"] == 3
    assert s1["read_timeouts"] == 2 and s1["retry_backoffs"] == 1 and abs(s1["read_timeout_seconds"] - 30) <= 1
    assert f1["details"]["inferred"]["Producer.Retry.Max"]["value"] == 1
    assert "metadata_read_timeout" not in budget(f3) and "dial_timeout" not in budget(f3)


# ----------------------------------------------------------------------------- the suggested change

# path, suggested change, worst case after it (model, s)
AFTER = [
    ("sarama-blackhole/orders-producer.log", "Net.DialTimeout=5s", 3 + 0.1 + 3 + 4 * 5 + 3 * 0.25),
    ("sarama-blackhole/payments-producer.log", "Metadata.Retry.Max=1", 3 + 0.1 + 3 + 2 * 2 + 0.25),
    ("sarama-silent/orders-api.json", "Producer.Retry.Max=1", 2 * 3 + 0.1),
    ("sarama-silent/ledger-producer.log", "Net.ReadTimeout=12s", 2 * 12 + 0.1),
]


@pytest.mark.parametrize("path,change,after", AFTER)
def test_after_the_suggested_change(path, change, after):
    f = sample(path)
    (s,) = f["subjects"]
    assert s["suggested_change"] == change
    assert abs(s["after_change_seconds"] - after) <= 0.01
    assert abs(f["details"]["suggestion"]["worst_case_seconds"] - after) <= 0.01
    assert any(change in r for r in f["remediation"])


def test_given_config_that_the_log_contradicts():
    f = one(SAMPLES / "sarama-blackhole/orders-producer.log", "--sarama-config", "Net.DialTimeout=5s,Producer.Retry.Max=1")
    cfg = f["details"]["config"]
    assert cfg["given"] == ["Net.DialTimeout", "Producer.Retry.Max"]
    assert len(cfg["mismatches"]) == 1 and "Net.DialTimeout=5s" in cfg["mismatches"][0] and "30s" in cfg["mismatches"][0]
    assert any(r.startswith("Make Net.DialTimeout=5s take effect") for r in f["remediation"])
    assert abs(f["details"]["suggestion"]["with_given_config_seconds"] - 26.85) <= 0.01
    # a config that matches the log: no mismatch, the model uses the given values
    f = one(SAMPLES / "sarama-blackhole/orders-producer.log", "--sarama-config", "Net.DialTimeout=30s,Net.ReadTimeout=3s")
    assert f["details"]["config"]["mismatches"] == []
    assert abs(f["details"]["model"]["seconds"] - 126.85) <= 0.01


def test_later_failure_repeats_the_path():
    f = sample("sarama-blackhole/orders-producer.log")
    # the retry-buffer flush and the next message each pay 4 dials + 3 back-offs: 2 × 120.75 s (+ 0.1 s back-off)
    assert abs(f["details"]["longest_wait_between_errors_seconds"] - 241.6) <= 1.0
    assert "next error came" in f["root_cause"]


# ----------------------------------------------------------------------------- text output


def test_text_report():
    r = run("analyze", "--tz", "UTC", SAMPLES / "sarama-blackhole", SAMPLES / "sarama-refused", SAMPLES / "sarama-silent", "--format", "text")
    assert r.code == 0, r
    out = re.sub(r"\s+", " ", re.sub(r"-\n\s+", "-", r.out))  # undo the report's line wrapping
    # the refused samples are fast failures (sarama.broker-refused), not stalls
    assert out.count("· sarama.retry-redial-stall ·") == 4 and out.count("· sarama.broker-refused ·") == 3
    assert "sarama send stalled 127 s on orders/0: broker kafka-0.kafka.prod.svc:9092 black-holed" in out
    assert "4 dial timeouts of ≈30 s (120 s)" in out
    assert "With Net.DialTimeout=5s a failing send would take ≈26.9 s" in out
    assert "'circuit breaker is open' from 14:03:52 to 14:04:02 UTC (11 sends)" in out
    assert "4 produce read timeouts of ≈3.0 s (12.0 s)" in out
    assert "silent (mute)" in out and "refused/closed" not in out and "stalled 1.9 s" not in out


# ----------------------------------------------------------------------------- the healthy case and fresh logs


@pytest.mark.parametrize("style,prefix", [("micro", "[sarama] "), ("lstd", "[Sarama] "), ("zap", "")])
def test_healthy_log_has_no_stall(tmp_path, style, prefix):
    p = tmp_path / ("healthy.json" if style == "zap" else "healthy.log")
    p.write_text(gen.healthy(style, prefix))
    doc = analyze(p)
    assert doc["summary"]["events"] > 5  # sarama's start-up lines were read
    assert stalls(doc) == []


@pytest.mark.parametrize(
    "kind,dial,read,retries,expect_kind",
    [("blackhole", 10.0, 5.0, 1, "blackhole"), ("mute", 30.0, 7.0, 2, "silent")],
)
def test_other_timeouts_are_inferred_not_assumed(tmp_path, kind, dial, read, retries, expect_kind):
    sc = gen.Scenario(path="x.log", kind=kind, style="micro", cfg=gen.Config(dial=dial, read=read, retry_max=retries),
                      addr="10.9.8.7:9093", ip="10.9.8.7", topic="audit", partition=11, seed=5)
    text, sim = gen.simulate(sc)
    (tmp_path / "x.log").write_text(text)
    f = one(tmp_path / "x.log")
    (s,) = f["subjects"]
    first = next(r for r in sim.results if r[3] is not None)
    assert s["kind"] == expect_kind and s["topic_partition"] == "audit/11" and s["broker"] == "10.9.8.7:9093"
    assert abs(s["send_seconds"] - (first[2] - first[1])) <= 0.05
    if kind == "blackhole":
        assert s["dial_timeouts"] == 4 and abs(s["dial_timeout_seconds"] - dial) <= 0.01
        assert abs(s["read_timeout_seconds"] - read) <= 0.01
        assert abs(s["send_seconds"] - (2 * read + 0.1 + 4 * dial + 0.75)) <= 0.05
    elif kind == "mute":
        assert s["read_timeouts"] == retries + 1 and abs(s["read_timeout_seconds"] - read) <= 0.01
        assert f["details"]["inferred"]["Producer.Retry.Max"]["value"] == retries


def test_without_application_lines_the_start_is_estimated():
    """stdin is read once: only sarama's own lines and the errors are seen, so the last line before the
    chain is sarama's start-up, 40 s earlier; the start is then the first line minus its wait."""
    data = (SAMPLES / "sarama-silent/orders-api.json").read_bytes()
    r = run("analyze", "--tz", "UTC", "-", "--format", "json", input=data)
    assert r.code == 0, r
    (f,) = stalls(r.json())
    (s,) = f["subjects"]
    assert s["start_estimated"] is True
    assert s["ended_by"] == "recovery"
    assert abs(s["stall_seconds"] - 12.4) <= 1.0


def test_model_matches_the_measured_table():
    from logsleuth.detectors.sarama.config import DEFAULTS
    from logsleuth.detectors.sarama.model import model_seconds

    kinds = {"close": "refused", "blackhole": "blackhole", "mute": "silent"}
    for kind, rmax, dial, read, took, _ in gen.MEASURED:
        c = dict(DEFAULTS, **{"Net.DialTimeout": dial, "Net.ReadTimeout": read, "Producer.Retry.Max": rmax})
        assert abs(model_seconds(kinds[kind], c) - took) <= 0.015, (kind, rmax, dial, read)


def test_unrelated_application_lines_during_the_stall(tmp_path):
    """Other goroutines keep logging while SendMessage hangs: a health-check line every 5 s inside the
    chain must neither split the incident nor cut the dial waits in two."""
    lines = (SAMPLES / "sarama-blackhole/orders-producer.log").read_text().splitlines()
    start = next(i for i, x in enumerate(lines) if "state change to [closing]" in x)
    end = next(i for i, x in enumerate(lines) if "Producer shutting down." in x)
    out = lines[:start]
    for x in lines[start:end]:
        out.append(x)
        if "fetching metadata" in x or "retrying after" in x:
            out.append(x.split(" ", 1)[1][:19] + " GET /healthz 200 0.4ms")
    out += lines[end:]
    p = tmp_path / "busy.log"
    p.write_text("\n".join(out) + "\n")
    fs = stalls(analyze(p))
    assert len(fs) == 1, [f["title"] for f in fs]
    (s,) = fs[0]["subjects"]
    assert abs(s["stall_seconds"] - 127.85) <= 1.0
    assert s["dial_timeouts"] == 4 and abs(s["dial_timeout_seconds"] - 30) <= 1
    assert s["read_timeouts"] == 2 and s["metadata_backoffs"] == 3


def test_success_after_the_error_ends_the_incident_without_a_sarama_state_line(tmp_path):
    """If sarama logs nothing when the leader comes back, the application's next line of the same
    shape as its last success before the chain ends the incident."""
    lines = (SAMPLES / "sarama-silent/ledger-producer.log").read_text().splitlines()
    err = next(i for i, x in enumerate(lines) if "send failed:" in x)
    rest = [x for x in lines[err + 1:] if not x.startswith("[Sarama] ") or "Producer shutting down." in x]
    p = tmp_path / "quiet-recovery.log"
    p.write_text("\n".join(lines[: err + 1] + rest) + "\n")
    (f,) = stalls(analyze(p))
    first_ok = next(x for x in rest if "delivered to partition" in x)
    assert f["details"]["recovered_at"].replace("T", " ").startswith(first_ok[:19].replace("/", "-"))
    (s,) = f["subjects"]
    assert abs(s["stall_seconds"] - 60.1) <= 1.0 and s["kind"] == "silent"


# ----------------------------------------------------------------------------- inputs from the new-user trial
# (sarama's Logger off, the newest sarama texts, a log that starts inside the chain); logs written inline


def _golog(*items, start="2024/05/02 10:14:50", fmt="%Y/%m/%d %H:%M:%S", prefix="[sarama] ") -> str:
    """Go log lines (log.LstdFlags by default) from (seconds after the previous line, text, sarama's line?)."""
    import datetime as dt

    t = dt.datetime.strptime(start, fmt)
    out = []
    for delay, text, sar in items:
        t += dt.timedelta(seconds=delay)
        out.append((prefix if sar else "") + t.strftime(fmt) + " " + text)
    return "\n".join(out) + "\n"


def _text(r) -> str:
    return re.sub(r"\s+", " ", re.sub(r"-\n\s+", "-", r.out))  # undo the report's line wrapping


OOB = "kafka: client has run out of available brokers to talk to (Is your cluster reachable?)"
DELIVERED = [(1, f"message {i} delivered to partition 0 at offset {8630 + i}", False) for i in range(1, 6)]
BREAKER = [(1, f"send of message {i} failed: kafka: Failed to produce message to topic orders: circuit breaker is open", False) for i in (7, 8)]


def test_sarama_logger_off_stall_from_the_application_lines(tmp_path):
    """sarama discards its Logger by default: deliveries every second, a 3-minute gap, then the
    application's own 'failed after 180.85s: … run out of available brokers' and the open breaker."""
    p = tmp_path / "orders-app-only.log"
    p.write_text(_golog(*DELIVERED, (182, f"send of message 6 failed after 180.85s: {OOB}", False), *BREAKER))
    f = one(p)
    (s,) = f["subjects"]
    # the failing send names its topic, the deliveries before it their partition (issue 33)
    assert s["sarama_logger"] == "off" and s["kind"] == "blackhole" and s["topic_partition"] == "orders/0"
    # the stall starts where the application's own figure puts the failing send, 1.15 s after its last line
    assert s["stall_seconds"] == 180.85 and s["send_seconds"] == 180.85 and s["start_estimated"] is False
    assert s["start_bound"] == "application figure" and abs(s["idle_seconds"] - 1.15) <= 0.01
    b = budget(f)
    assert b["unseen"]["seconds"] == 180.85 and abs(b["idle"]["seconds"] - 1.15) <= 0.01
    assert abs(sum(x["seconds"] for x in b.values() if x["component"] != "idle") - s["stall_seconds"]) < 0.01
    assert f["details"]["model"]["fits"] is True and abs(f["details"]["model"]["seconds"] - 180.85) <= 0.01
    assert f["confidence"] < 0.7  # only the application's lines: lower than a full chain (0.9)
    assert any('sarama.Logger = log.New(os.Stderr, "[sarama] ", log.LstdFlags)' in r for r in f["remediation"])
    assert s["breaker_open_periods"] == 1
    out = _text(run("analyze", "--tz", "UTC", p, "--format", "text"))
    assert "Findings: none" not in out
    assert "sarama's Logger was off" in out and "inside the failing send, not broken down" in out
    assert "the application measured 180.85 s" in out


def test_sarama_logger_off_the_partition_that_stopped_getting_deliveries(tmp_path):
    """sarama's Logger off and failing sends that name no partition (issue 33: the stall said
    "unknown"): the partition the application delivered to before the stall and not during it is
    the one named, and the text says it was inferred; a JSON logger's fields count as its words do.
    Several partitions all silent at once (one blocked sender) name none."""
    fail = [(128, f"send failed: {OOB}", False), (240, f"send failed: {OOB}", False)]
    p = tmp_path / "orders-app-only.log"
    p.write_text(_golog(*DELIVERED, *fail))
    f = one(p)
    assert f["subjects"][0]["topic_partition"] == "partition 0", f["subjects"]
    out = _text(run("analyze", "--tz", "UTC", p, "--format", "text"))
    assert "The failing sends name no partition: partition 0 is the one the application delivered to before the stall and not during it" in out
    import datetime as dt

    t0 = dt.datetime(2024, 5, 2, 10, 14, 50, tzinfo=dt.timezone.utc)
    lines = [json.dumps({"level": "info", "message": "message delivered", "topic": "orders", "partition": 3, "offset": 100 + i,
                         "time": (t0 + dt.timedelta(seconds=i)).strftime("%Y-%m-%dT%H:%M:%SZ")}) for i in range(5)]
    lines.append(json.dumps({"level": "error", "error": OOB, "message": "send failed", "time": (t0 + dt.timedelta(seconds=132)).strftime("%Y-%m-%dT%H:%M:%SZ")}))
    lines.append(json.dumps({"level": "error", "error": OOB, "message": "send failed", "time": (t0 + dt.timedelta(seconds=372)).strftime("%Y-%m-%dT%H:%M:%SZ")}))
    z = tmp_path / "orders-zerolog.log"
    z.write_text("\n".join(lines) + "\n")
    assert one(z)["subjects"][0]["topic_partition"] == "orders/3"
    both = [(1, f"message {i} delivered to partition {i % 2} at offset {8630 + i}", False) for i in range(1, 7)]
    q = tmp_path / "two-partitions.log"
    q.write_text(_golog(*both, *fail))
    assert one(q)["subjects"][0]["topic_partition"] == "unknown"


def test_sarama_logger_off_without_a_figure_uses_the_gap_and_the_pace(tmp_path):
    p = tmp_path / "app.log"
    p.write_text(_golog(*DELIVERED, (182, f"send failed: {OOB}", False), *BREAKER))
    f = one(p)
    (s,) = f["subjects"]
    # nothing marks the write: the application's last line before the error bounds the stall (not its pace)
    assert s["sarama_logger"] == "off" and s["idle_seconds"] == 0 and abs(s["send_seconds"] - 182.0) <= 0.01
    assert s["start_bound"] == "last line before the chain" and abs(s["stall_seconds"] - 182.0) <= 0.01


@pytest.mark.parametrize(
    "items",
    [
        # an error a second after the last delivery, then deliveries again: no stall
        [*DELIVERED, (1, f"send of message 6 failed: {OOB}", False), *DELIVERED],
        # the application's own figure says the send was fast (a refused broker)
        [*DELIVERED, (1, f"send of message 6 failed after 0.85s: {OOB}", False), *BREAKER, *DELIVERED],
        # a long quiet time, but no pace to compare it with and no figure
        [(0, "service started", False), (300, f"send failed: {OOB}", False)],
        # the error is the first line: nothing tells how long the send took
        [(0, f"send failed: {OOB}", False), *DELIVERED],
        # a closed broker fails at once: a gap before EOF is not sarama's wait
        [*DELIVERED, (120, "send failed: kafka: Failed to produce message to topic orders: EOF", False), *DELIVERED],
        # only the breaker's instant failures
        [*DELIVERED, *BREAKER, *DELIVERED],
    ],
    ids=["quick-error", "fast-figure", "no-pace", "first-line", "eof", "breaker-only"],
)
def test_sarama_logger_off_a_single_surfaced_error_is_no_alarm(tmp_path, items):
    p = tmp_path / "app.log"
    p.write_text(_golog(*items))
    doc = analyze(p)
    assert doc["summary"]["events"] >= 1  # the error text was recognised as sarama's
    assert stalls(doc) == []


NEWEST = [
    (0, "message 1 delivered", False),
    (1, "producer/broker/1 state change to [closing] because write tcp 10.0.0.5:53422->10.0.0.7:9092: i/o timeout", True),
    (0, "client/brokers close broker #1 at kafka-1:9092 due to socket error: write tcp 10.0.0.5:53422->10.0.0.7:9092: i/o timeout", True),
    (0, "producer/leader/orders/0 state change to [retrying-1]", True),
    (0, "producer/leader/orders/0 abandoning broker 1", True),
    (0, "client/metadata fetching metadata for [orders] from broker kafka-1:9092", True),
    (30, "Failed to connect to broker kafka-1:9092: dial tcp 10.0.0.7:9092: i/o timeout", True),
    (0, "client/metadata got error from broker 1 while fetching metadata: dial tcp 10.0.0.7:9092: i/o timeout", True),
    (0, "client/metadata skipping last retries as we would go past the metadata timeout", True),
    (0, "Failed retrying batch for orders-0 because of kafka: client has run out of available brokers to talk to: dial tcp 10.0.0.7:9092: i/o timeout while looking up for new leader", True),
    (0, "kafka: Failed to produce message to topic orders: kafka: client has run out of available brokers to talk to: dial tcp 10.0.0.7:9092: i/o timeout", True),
]


def test_newest_texts_write_timeout_counted_once_and_metadata_timeout(tmp_path):
    p = tmp_path / "newest-texts.log"
    p.write_text(_golog(*NEWEST, start="2024/05/02 14:00:00"))
    f = one(p)
    (s,) = f["subjects"]
    b = budget(f)
    # the [closing] line and the 'close broker … due to socket error' line are one failure
    assert s["write_timeouts"] == 1 and b["produce_write_timeout"]["count"] == 1 and s["read_timeouts"] == 0
    ruled = " ".join(f["ruled_out"])
    assert "'write tcp'" in ruled and "read tcp" not in ruled
    # the refresh stopped at Metadata.Timeout, so the model stops it too and fits the log
    m = f["details"]["model"]
    assert m["metadata_refresh_cut"] is True and m["shape"]["first"] == "Net.WriteTimeout"
    assert m["fits"] is True and abs(m["seconds"] - 31.1) <= 0.01
    inf = f["details"]["inferred"]["Metadata.Timeout"]
    assert inf["range"] == [0.0, 30.25]
    assert not any("several brokers" in r for r in f["confidence_reasons"])
    out = _text(run("analyze", "--tz", "UTC", p, "--format", "text"))
    assert "the error says 'read tcp'" not in out
    assert "1 produce write timeout of ≈1 s;" in out
    assert "Metadata.Timeout is at most 30.25 s" in out


def test_metadata_timeout_passed_is_compared_with_the_log(tmp_path):
    p = tmp_path / "newest-texts.log"
    p.write_text(_golog(*NEWEST, start="2024/05/02 14:00:00"))
    f = one(p, "--sarama-config", "Metadata.Timeout=30s")
    assert f["details"]["config"]["mismatches"] == []
    assert f["details"]["config"]["used_for_model"]["Metadata.Timeout"] == 30.0
    assert abs(f["details"]["model"]["seconds"] - 31.1) <= 0.01
    f = one(p, "--sarama-config", "Metadata.Timeout=2m")
    (m,) = f["details"]["config"]["mismatches"]
    assert "Metadata.Timeout=120s" in m and "30.25 s" in m


MID = [
    (0, "client/metadata no available broker to send metadata request to", True),
    (0, "client/brokers resurrecting 1 dead seed brokers", True),
    (0, "client/metadata retrying after 250ms... (3 attempts remaining)", True),
    (0, "client/metadata fetching metadata for [orders] from broker kafka-1:9092", True),
    (30, "Failed to connect to broker kafka-1:9092: dial tcp 10.0.0.7:9092: i/o timeout", True),
    (0, "client/metadata got error from broker -1 while fetching metadata: dial tcp 10.0.0.7:9092: i/o timeout", True),
    (0, "client/metadata no available broker to send metadata request to", True),
    (0, "client/brokers resurrecting 1 dead seed brokers", True),
    (0, "client/metadata retrying after 250ms... (2 attempts remaining)", True),
    (0, "client/metadata fetching metadata for [orders] from broker kafka-1:9092", True),
    (30, "Failed to connect to broker kafka-1:9092: dial tcp 10.0.0.7:9092: i/o timeout", True),
    (0, "client/metadata got error from broker -1 while fetching metadata: dial tcp 10.0.0.7:9092: i/o timeout", True),
    (0, "client/metadata no available broker to send metadata request to", True),
]


@pytest.mark.parametrize("figure", [True, False])
def test_log_that_starts_inside_the_chain(tmp_path, figure):
    p = tmp_path / "orders-blackhole-midincident.log"
    err = f"send of message 6 failed after 180.85s: {OOB}" if figure else f"send of message 6 failed: {OOB}"
    p.write_text(_golog(*MID, (0, err, False), *BREAKER, start="2024/05/02 10:16:55"))
    f = one(p)
    (s,) = f["subjects"]
    assert s["start_estimated"] is True and f["details"]["log_starts_inside_chain"] is True
    reasons = " ".join(f["confidence_reasons"])
    assert "the log starts inside the failure chain" in reasons and "several brokers" not in reasons
    if figure:
        assert s["stall_seconds"] == 180.85 and s["send_seconds"] == 180.85
        assert abs(budget(f)["before_log"]["seconds"] - (180.85 - 60)) <= 0.01
        assert s["from"].replace("T", " ").startswith("2024-05-02 10:14:54.15")
        assert f["details"]["model"]["fits"] is True
        assert "from the start of the failing send as the application measured it" in _text(run("analyze", "--tz", "UTC", p, "--format", "text"))
    else:
        assert abs(s["stall_seconds"] - 60) <= 0.01 and s["send_seconds"] is None and "before_log" not in budget(f)
        assert "stalled at least 60 s" in f["root_cause"]


# ----------------------------------------------------------------------------- several brokers, what-ifs, durations
# (new-user trial 3: the one-broker model applied to a three-broker log; --sarama-config as a what-if with the
# Logger off; 'Metadata.Retry.Backoff=250' read as 250 s)


def _micro(items, start="2024/05/02 10:14:25.002100") -> str:
    """Go log lines (log.LstdFlags|log.Lmicroseconds, newer sarama's '[Sarama] ' prefix) from
    (seconds after the previous line, text, sarama's line?)."""
    return _golog(*items, start=start, fmt="%Y/%m/%d %H:%M:%S.%f", prefix="[Sarama] ")


DIAL2 = "dial tcp 10.0.0.7:9092: i/o timeout"


def _retry_redial(n: int, seed: str) -> list:
    """Retry n of a message whose leader (broker 2, black-holed) is still named by a live broker's metadata:
    one 30 s dial to broker 2 per retry (sarama 1.4x with three brokers)."""
    return [
        (0.0001, f"producer/leader/orders/1 state change to [retrying-{n}]", True),
        (0.0001, "producer/leader/orders/1 abandoning broker 2", True),
        (0.1004, f"client/metadata fetching metadata for [orders] from broker {seed}", True),
        (0.0035, "producer/leader/orders/1 selected broker 2", True),
        (30.0005, f"Failed to connect to broker kafka-2.kafka:9092: {DIAL2}", True),
        (0.0002, f"producer/broker/2 state change to [retrying] on orders/1 because {DIAL2}", True),
    ]


def _three_brokers(end: str) -> str:
    items = [(0, f"message {i} delivered to partition 1 at offset {500 + i}", False) for i in range(1, 6)]
    items = [(1 if i else 0, t, s) for i, (_, t, s) in enumerate(items)]
    items += [
        (10, "producer/broker/2 state change to [closing] because read tcp 10.0.0.5:53422->10.0.0.7:9092: i/o timeout", True),
        (0.0002, "client/brokers close broker #2 at kafka-2.kafka:9092 due to socket error: read tcp 10.0.0.5:53422->10.0.0.7:9092: i/o timeout", True),
        *_retry_redial(1, "kafka-0.kafka:9092"),
        *_retry_redial(2, "kafka-1.kafka:9092"),
    ]
    if end == "delivered":  # on retry 3 the leader has moved to broker 1
        items += [
            (0.0003, "producer/leader/orders/1 state change to [retrying-3]", True),
            (0.0001, "producer/leader/orders/1 abandoning broker 2", True),
            (0.1004, "client/metadata fetching metadata for [orders] from broker kafka-0.kafka:9092", True),
            (0.0035, "producer/leader/orders/1 selected broker 1", True),
            (0.0001, "producer/broker/1 starting up", True),
            (0.0001, "producer/broker/1 state change to [open] on orders/1", True),
            (0.0008, "producer/leader/orders/1 state change to [flushing-3]", True),
            (0.0001, "producer/leader/orders/1 state change to [normal]", True),
            (0.013, "message 6 delivered to partition 1 at offset 506", False),
        ]
    else:  # retry 3 re-dials broker 2 too, and the error reaches the application
        items += [*_retry_redial(3, "kafka-0.kafka:9092"), (0.0003, f"send of message 6 failed: {DIAL2}", False)]
    items += [(1, f"message {i} delivered to partition 1 at offset {500 + i}", False) for i in range(7, 10)]
    return _micro(items)


@pytest.mark.parametrize("end", ["delivered", "error"])
def test_several_brokers_budget_from_the_log_not_the_one_broker_model(tmp_path, end):
    p = tmp_path / "orders-3brokers.log"
    p.write_text(_three_brokers(end))
    f = one(p)
    (s,) = f["subjects"]
    dials = 2 if end == "delivered" else 3
    assert s["kind"] == "blackhole" and s["broker"] == "kafka-2.kafka:9092" and s["dial_timeouts"] == dials
    m = f["details"]["model"]
    # the chain names three addresses and two broker ids: the one-broker (= seed) model does not apply
    assert m["applies"] is False and m["seconds"] is None and s["model_seconds"] is None
    assert set(m["brokers_seen"]["addresses"]) == {"kafka-0.kafka:9092", "kafka-1.kafka:9092", "kafka-2.kafka:9092"}
    # where the time went, and the effect of a shorter dial, come from the log's own waits
    assert f["cause"]["dominant_setting"] == "Net.DialTimeout" and abs(m["dominant_seconds"] - 30.0 * dials) <= 0.01
    send = s["stall_seconds"] - s["idle_seconds"]
    assert s["suggested_change"] == "Net.DialTimeout=5s"
    assert abs(s["after_change_seconds"] - (send - dials * 25.0)) <= 0.01
    assert abs(f["details"]["suggestion"]["now_seconds"] - send) <= 0.01
    out = _text(run("analyze", "--tz", "UTC", p, "--format", "text"))
    assert f"{dials} dial timeouts of ≈30.0 s ({30 * dials}.0 s)" in out
    assert f"Net.DialTimeout ({30 * 4}" not in out and "120.0 s" not in out  # the one-broker model's 4 dials
    assert "gives 1" not in out and "(model)" not in out  # no model total is offered as a fact
    assert "The measured model for this kind" not in out
    assert "one broker that is also the seed" in out and "does not apply" in out
    assert "does not shorten this" not in out
    reasons = " ".join(f["confidence_reasons"])
    assert "several brokers, a newer sarama" not in reasons
    if end == "delivered":
        assert s["ended_by"] == "recovery"
        assert f["details"]["delivered_by_retry"]["retry"] == 3 and f["details"]["delivered_by_retry"]["selected_broker"] == 1
        assert "the message went through on retry 3 ([retrying-3]" in out and "selected broker 1" in out
        assert any(r.startswith("Keep Producer.Retry.Max at 3 or more: retry 3 delivered the message") for r in f["remediation"])
        assert f["confidence"] == 0.6
    else:
        assert s["ended_by"] == "error" and f["details"]["delivered_by_retry"] is None
        assert "3 producer retries ([retrying-1] … [retrying-3]) before the error" in out
        assert f["confidence"] == 0.7  # not lowered for a model that was not applied


def test_single_broker_recovery_names_the_retry_that_delivered(tmp_path):
    """One broker, answered metadata on the retry (the broker came back): the retry delivered, so the
    measured 'Retry.Max does not shorten this' is not said."""
    items = [(0, f"message {i} delivered to partition 0 at offset {100 + i}", False) for i in range(1, 5)]
    items = [(1 if i else 0, t, s) for i, (_, t, s) in enumerate(items)]
    items += [
        (4, "producer/broker/1 state change to [closing] because read tcp 10.0.0.5:53422->10.0.0.7:9092: i/o timeout", True),
        (0.0002, "producer/leader/orders/0 state change to [retrying-1]", True),
        (0.0001, "producer/leader/orders/0 abandoning broker 1", True),
        (0.1003, "client/metadata fetching metadata for [orders] from broker kafka-1:9092", True),
        (2.0004, f"Failed to connect to broker kafka-1:9092: {DIAL2}", True),
        (0.0002, "client/metadata retrying after 250ms... (3 attempts remaining)", True),
        (0.2502, "client/metadata fetching metadata for [orders] from broker kafka-1:9092", True),
        (0.0031, "producer/leader/orders/0 selected broker 1", True),
        (0.0002, "producer/leader/orders/0 state change to [flushing-1]", True),
        (0.0001, "producer/leader/orders/0 state change to [normal]", True),
        (0.011, "message 5 delivered to partition 0 at offset 105", False),
    ]
    p = tmp_path / "one-broker-back.log"
    p.write_text(_micro(items))
    f = one(p)
    assert f["details"]["model"]["applies"] is True
    assert f["details"]["delivered_by_retry"]["retry"] == 1
    assert not any("does not shorten this" in r for r in f["remediation"])
    assert "the message went through on retry 1" in f["root_cause"]


APP_ONLY_181 = [*DELIVERED, (182, f"send failed: {OOB}", False), *BREAKER]


def test_what_if_config_that_cannot_give_the_observed_stall(tmp_path):
    """sarama's Logger off, --sarama-config Net.DialTimeout=5s: its model (80.85 s) cannot give the observed
    181 s send, the defaults (180.85 s) can: say so, keep the diagnosis (defaults), barely lower the confidence,
    and keep what the passed value would give."""
    p = tmp_path / "app.log"
    p.write_text(_golog(*APP_ONLY_181))
    base = one(p)
    f = one(p, "--sarama-config", "Net.DialTimeout=5s")
    assert base["confidence"] == 0.65 and 0 < base["confidence"] - f["confidence"] <= 0.05 + 1e-9
    wi = f["details"]["config"]["what_if"]
    assert wi["passed"] == {"Net.DialTimeout": 5.0} and wi["defaults_fit"] is True
    assert abs(wi["model_seconds"] - 80.85) <= 0.01 and abs(wi["defaults_model_seconds"] - 180.85) <= 0.01
    m = f["details"]["model"]
    assert m["fits"] is True and abs(m["seconds"] - 180.85) <= 0.01
    assert abs(f["details"]["suggestion"]["with_given_config_seconds"] - 80.85) <= 0.01
    (mm,) = f["details"]["config"]["mismatches"]
    assert "Net.DialTimeout=5s" in mm and "80.85 s" in mm and "180.85 s" in mm
    reasons = " ".join(f["confidence_reasons"])
    assert "several brokers" not in reasons and "probably not the one in use" in reasons
    out = _text(run("analyze", "--tz", "UTC", p, "--format", "text", "--sarama-config", "Net.DialTimeout=5s"))
    assert "With the configuration you passed (Net.DialTimeout=5s) the model predicts 80.85 s; the log shows 182 s: the configuration in use is probably different (sarama's defaults predict 180.85 s" in out
    assert "were it in effect, the model gives ≈80.9 s" in out
    # neither the passed value nor the defaults fit: said plainly, no switch, and no what-if penalty on top
    p2 = tmp_path / "app100.log"
    p2.write_text(_golog(*DELIVERED, (101, f"send failed: {OOB}", False), *BREAKER))
    base2, f2 = one(p2), one(p2, "--sarama-config", "Net.DialTimeout=5s")
    assert f2["details"]["config"]["what_if"]["defaults_fit"] is False and f2["confidence"] == base2["confidence"]
    assert "the configuration in use is probably different (sarama's defaults predict 180.85 s)." in f2["root_cause"]


@pytest.mark.parametrize("value", ["Metadata.Retry.Backoff=250", "Net.DialTimeout=5", "net.readtimeout=1.5"])
def test_duration_without_a_unit_is_refused(tmp_path, value):
    p = tmp_path / "app.log"
    p.write_text(_golog(*APP_ONLY_181))
    r = run("analyze", "--tz", "UTC", p, "--format", "json", "--sarama-config", value)
    assert r.code == 2, r
    err = r.err.strip()
    assert len(err.splitlines()) == 1, err
    key, num = value.split("=")
    assert "has no unit" in err and f"{num}ms" in err and key.lower() in err.lower(), err
    # a count has no unit, and 0 needs none (as in Go)
    f = one(p, "--sarama-config", "Producer.Retry.Max=1,Metadata.Timeout=0,Metadata.Retry.Backoff=250ms")
    assert f["details"]["config"]["used_for_model"]["Metadata.Retry.Backoff"] == 0.25


def test_sarama_own_error_lines_of_every_release_are_not_errors_returned(cli, tmp_path):
    """sarama 1.30.0-1.46.1 print 'Error while sending ApiVersionsRequest to broker B: EOF' (no
    version), 1.46+ also 'Failed to read ApiVersionsResponse V3 header from B: …': the pack knew only
    'ApiVersionsRequest V3', so on those releases the line was no sarama line and its EOF or reset was
    counted as an error returned to the application (which also ended the stall there)."""
    lines = (SAMPLES / "sarama-blackhole" / "orders-producer.log").read_text().splitlines(keepends=True)
    inject = [
        "[sarama] 2026/11/30 02:54:44 Error while sending ApiVersionsRequest to broker kafka-0.kafka.prod.svc:9092: EOF\n",
        "[sarama] 2026/11/30 02:54:44 Failed to send ApiVersions request to kafka-0.kafka.prod.svc:9092: write tcp 10.42.1.5:54830->10.42.3.17:9092: write: broken pipe\n",
        "[sarama] 2026/11/30 02:54:45 Failed to read ApiVersionsResponse V3 header from kafka-0.kafka.prod.svc:9092: read tcp 10.42.1.5:54831->10.42.3.17:9092: read: connection reset by peer\n",
        "[sarama] 2026/11/30 02:54:45 Error closing broker 1 : EOF\n",  # every release (utils.go, Println)
        "[sarama] 2026/11/30 02:54:45 Client got error from broker 1 when issuing InitProducerID : EOF\n",  # 1.20+
        "[sarama] 2026/11/30 02:54:45 Failed to read response while authenticating with SASL to broker kafka-0.kafka.prod.svc:9092: read tcp 10.42.1.5:54832->10.42.3.17:9092: i/o timeout\n",
        "[sarama] 2026/11/30 02:54:45 Failed to read SASL handshake header : EOF\n",
    ]
    p = tmp_path / "orders-producer.log"
    p.write_text("".join(lines[:48] + inject + lines[48:]))
    r = cli("events", "--tz", "UTC", "-f", "ndjson", "--event", "sarama_apiversions_error", "--event", "sarama_close_error", "--event", "sarama_init_producer_id_error", "--event", "sarama_sasl_error", p)
    assert r.code == 0, r
    got_events = sorted(json.loads(x)["event"] for x in r.out.splitlines() if json.loads(x)["line"] in range(49, 56))
    assert got_events == ["sarama_apiversions_error"] * 3 + ["sarama_close_error", "sarama_init_producer_id_error"] + ["sarama_sasl_error"] * 2, got_events
    want = cli("analyze", "--tz", "UTC", "-f", "json", SAMPLES / "sarama-blackhole" / "orders-producer.log").json()
    got = cli("analyze", "--tz", "UTC", "-f", "json", p).json()
    (w,) = [f for f in want["findings"] if f["id"] == "sarama.retry-redial-stall"]
    (g,) = [f for f in got["findings"] if f["id"] == "sarama.retry-redial-stall"]
    assert [s["errors_returned"] for s in g["subjects"]] == [s["errors_returned"] for s in w["subjects"]]  # was 5, not 2
    assert g["title"] == w["title"]  # the stall was cut at the first such line: 5 s, not 127 s


# ----------------------------------------------------------------------------- a start no line marks
# (the measured excerpt sarama-02: an AsyncProducer whose chain opens with the produce request's read
# timeout, and no line before it about the stalled partitions or their broker: the stall was timed
# from that line, 96 s where the application measured 132 s)

READ2 = "read tcp 10.0.0.5:40312->10.0.0.7:9092: i/o timeout"
DIAL7 = "dial tcp 10.0.0.7:9092: i/o timeout"


def _unmarked(opening: str = "read", last: tuple | None = None, gap: float = 42.6, printed: str | None = None) -> str:
    """An AsyncProducer of three brokers whose broker 2 (leader of orders/1 and orders/4) black-holes:
    the application's batch lines name no partition (with several partitions in the log they may be
    another's), sarama's only line before the chain is about broker 0. The chain opens ``gap`` s after
    the last batch (or ``last``, (seconds before the chain, text), comes between) with the produce
    request's read timeout (``opening="dial"``: a failed dial), two retries each wait a 10 s dial, and
    the error reaches the application."""
    items = [(0, "Connected to broker at kafka-0.kafka:9092 (registered as #0)", True)]
    if printed:
        items.append((0.2, f"producer config: {printed} Producer.Retry.Max=3", False))
    items += [(10 if k else 0.4, f"published batch {k + 1} of 200 messages in 21.3ms", False) for k in range(4)]
    if last:
        items.append((gap - last[0], last[1], False))
    first = gap if not last else last[0]
    if opening == "read":
        items += [(first, f"producer/broker/2 state change to [closing] because {READ2}", True),
                  (0.0002, "Closed connection to broker kafka-2.kafka:9092", True)]
    else:
        items += [(first, f"Failed to connect to broker kafka-2.kafka:9092: {DIAL7}", True),
                  (0.0002, f"producer/broker/2 state change to [closing] because {DIAL7}", True),
                  (0.0001, "client/brokers deregistered broker #2 at kafka-2.kafka:9092", True)]
    for n in (1, 2):
        items += [
            (0.0003, f"producer/leader/orders/1 state change to [retrying-{n}]", True),
            (0.0001, "producer/leader/orders/1 abandoning broker 2", True),
            (0.0001, f"producer/leader/orders/4 state change to [retrying-{n}]", True),
            (0.0001, "producer/leader/orders/4 abandoning broker 2", True),
            (0.0002, "producer/broker/2 shut down", True),
            (0.1, "client/metadata fetching metadata for [orders] from broker kafka-0.kafka:9092", True),
            (0.0035, "producer/leader/orders/1 selected broker 2", True),
            (0.0001, "producer/leader/orders/4 selected broker 2", True),
            (10.0, f"Failed to connect to broker kafka-2.kafka:9092: {DIAL7}", True),
            (0.0002, f"producer/broker/2 state change to [closing] because {DIAL7}", True),
        ]
    items += [(0.0004, f"publish of batch 5 failed: {DIAL7}", False), (10, "published batch 6 of 200 messages in 19.8ms", False)]
    return _micro(items)


def _stamp(text: str, needle: str):
    """The stamp of the first line of ``text`` that has ``needle``."""
    import datetime as dt

    line = next(x for x in text.splitlines() if needle in x)
    return dt.datetime.strptime(re.search(r"\d{4}/\d\d/\d\d \d\d:\d\d:\d\d\.\d{6}", line).group(0), "%Y/%m/%d %H:%M:%S.%f")


def _shown(text: str, first: str) -> float:
    """Seconds from the first line with ``first`` to the error returned to the application."""
    return (_stamp(text, "publish of batch 5 failed") - _stamp(text, first)).total_seconds()


@pytest.mark.parametrize("printed,read_t", [(None, 30.0), ("Net.ReadTimeout=10s", 10.0)])
def test_a_chain_opening_with_a_read_timeout_and_no_line_before_it_starts_one_read_timeout_earlier(tmp_path, printed, read_t):
    """Nothing before the chain marks the write of the stalled request or is about its partitions, and
    the chain opens with its read timeout: the write was at least Net.ReadTimeout before that line (the
    printed value, else sarama's default), an estimate the report says is one, in the budget as the
    produce read timeout. (The stall used to run from the [closing] line: 20.2 s.)"""
    import datetime as dt

    text = _unmarked(printed=printed)
    p = tmp_path / "outbox-publisher.log"
    p.write_text(text)
    f = one(p)
    (s, s4) = f["subjects"]
    assert (s["topic_partition"], s4["topic_partition"]) == ("orders/1", "orders/4") and s["kind"] == "blackhole"
    assert abs(s["stall_seconds"] - (read_t + _shown(text, "[closing] because read tcp"))) <= 0.01, s["stall_seconds"]
    assert s["start_bound"] == "estimated" and s["start_estimated"] is True and s["idle_seconds"] == 0
    assert f["first_seen_estimated"] is True and f["first_seen"] == s["from"]
    (inc,) = analyze(p)["incidents"]
    assert inc["first_seen_estimated"] is True
    b = budget(f)
    assert b["produce_read_timeout"]["count"] == 1 and abs(b["produce_read_timeout"]["seconds"] - read_t) <= 0.001
    assert abs(sum(x["seconds"] for x in b.values()) - s["stall_seconds"]) < 0.01  # the read timeout's wait is in the budget
    value = "Net.ReadTimeout=10s, as the application printed it (line 2)" if printed else "sarama's default Net.ReadTimeout=30s (the log prints no value)"
    assert s["start_bound_from"] == (f"the '[closing]' line minus {value}: no line before the chain marks the write "
                                     "or is known to be about these partitions, so the start is estimated")
    # what the user reads: the window and the root cause say the start is an estimate
    out = _text(run("analyze", "--tz", "UTC", p, "--format", "text"))
    start = (_stamp(text, "[closing] because read tcp") - dt.timedelta(seconds=read_t)).strftime("%Y-%m-%d %H:%M:%S")
    assert re.search(rf"when {start} → \S+ UTC \([\d.]+ s, start estimated\)", out), out[:700]
    assert f"seen {start} → " in out
    assert f"stalled {s['stall_seconds']:.1f} s (" in out
    assert f"from an estimated write of the stalled request (the '[closing]' line minus {value}" in out


def test_a_read_timeout_estimate_stops_at_the_log_s_first_line(tmp_path):
    """The log begins 12.2 s before the chain: sarama's default 30 s would put the write before it, so
    the start is the log's first line, and the finding says the send began earlier."""
    text = "".join(_unmarked(gap=12.2).splitlines(keepends=True)[4:])  # from the last batch line on
    p = tmp_path / "late-start.log"
    p.write_text(text)
    f = one(p)
    (s, _) = f["subjects"]
    assert abs(s["stall_seconds"] - (12.2 + _shown(text, "[closing] because read tcp"))) <= 0.01, s["stall_seconds"]
    assert s["start_bound"] == "estimated" and f["first_seen_estimated"] is True
    assert s["start_bound_from"].endswith("would put the write before the log begins: the send began earlier, so the start is estimated and the stall is at least this")
    assert abs(budget(f)["produce_read_timeout"]["seconds"] - 12.2) <= 0.001


@pytest.mark.parametrize("case", ["delivery 12 s before", "delivery 35 s before", "dial first"])
def test_a_line_about_the_partition_or_a_dial_first_keeps_the_start(tmp_path, case):
    """Near misses: a delivery on a stalled partition before the chain bounds the start (12 s before it:
    sarama's default would put the write before it) or marks the send's pace (35 s before: the write is
    the [closing] line minus 30 s, not estimated); a chain that opens with a failed dial has no read
    timeout to take back and starts at its first line. None is called estimated."""
    delivery = "message 41 delivered to partition 1 at offset 506"
    if case == "dial first":
        text, first, before = _unmarked(opening="dial"), "Failed to connect", 0.0
    else:
        before = 12.0 if case.startswith("delivery 12") else 35.0
        text, first = _unmarked(last=(before, delivery)), "[closing] because read tcp"
    p = tmp_path / "outbox-publisher.log"
    p.write_text(text)
    f = one(p)
    (s, _) = f["subjects"]
    want = _shown(text, first) + min(before, 30.0)
    assert abs(s["stall_seconds"] - want) <= 0.01, s["stall_seconds"]
    want_bound = {"dial first": "first line of the chain", "delivery 35 s before": "write"}.get(case, "last line before the chain")
    assert s["start_bound"] == want_bound
    assert s["start_estimated"] is False and "first_seen_estimated" not in f
    out = _text(run("analyze", "--tz", "UTC", p, "--format", "text"))
    assert "estimated" not in out.split("What to do")[0], out[:900]
    # the start is named as what it is: with no line before the chain, not "the last line before" it
    said = " ".join(out.split())
    if case == "dial first":
        assert "from the failure chain's first line (no line before it marks the write" in said, out[:1500]
        assert "last line logged before the failure chain" not in said


def test_an_estimated_start_alone_makes_no_stall(tmp_path):
    """One read timeout that a retry on a fresh connection got through in the same millisecond, and
    the application's status lines say nothing of a delivery (the measured decoy sarama-11): the 30 s
    before the [closing] line are an estimate, and an estimate lengthens a stall the log shows, never
    makes one."""
    items = [(0, "Connected to broker at kafka-0.kafka:9092 (registered as #0)", True)]
    items += [(10 if k else 0.4, "outbox: 0 pending, 0 errors", False) for k in range(3)]  # a status line: no delivery
    items += [
        (6.2, f"producer/broker/2 state change to [closing] because {READ2}", True),
        (0.0002, "Closed connection to broker kafka-2.kafka:9092", True),
        (0.0003, "producer/leader/orders/1 state change to [retrying-1]", True),
        (0.0001, "producer/leader/orders/1 abandoning broker 2", True),
        (0.0002, "producer/broker/2 shut down", True),
        (0.0001, "client/metadata fetching metadata for [orders] from broker kafka-0.kafka:9092", True),
        (0.0003, "producer/broker/2 starting up", True),
        (0.0001, "producer/broker/2 state change to [open] on orders/1", True),
        (0.0001, "producer/leader/orders/1 selected broker 2", True),
        (0.0009, "Connected to broker at kafka-2.kafka:9092 (registered as #2)", True),
        (0.0004, "producer/leader/orders/1 state change to [flushing-1]", True),
        (0.0001, "producer/leader/orders/1 state change to [normal]", True),
        (3.8, "outbox: 0 pending, 0 errors", False),
    ]
    p = tmp_path / "one-retry.log"
    p.write_text(_micro(items))
    assert stalls(analyze(p)) == []


def test_logrus_text_escaped_newline_is_not_part_of_a_capture(cli):
    """logrus's text formatter prints sarama's trailing newline escaped inside msg="..." with the
    fields after it (IBM/sarama#2998): the addresses and errors end before it, so one broker is one
    broker (the chain named "several brokers", `kafka-4…:9092\\n` and `kafka-4…:9092`, and left the
    measured timing model out)."""
    log = ROOT / "tests" / "shapes" / "real" / "53-sarama-logrus-text.log"
    r = cli("events", "--tz", "UTC", "-f", "ndjson", log)
    assert r.code == 0, r
    rows = [json.loads(x) for x in r.out.splitlines()]
    addresses = {x["address"] for x in rows if x.get("address")}
    errors = [x["error"] for x in rows if x.get("error")]
    assert addresses == {"kafka-4.kafka.svc:9092"}, addresses
    assert errors and not any("\\n" in e or "client=" in e for e in errors), errors
    text = cli("analyze", "--tz", "UTC", log).out
    assert "several brokers" not in text and "The measured model" in text, text
