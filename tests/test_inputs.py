"""Reading inputs through the real CLI: compression, stdin, encodings, envelopes, time, accounting."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import os
import time

import pytest
import zstandard

PULSAR = [
    "10:11:19.004 [ForkJoinPool.commonPool-worker-24] INFO  org.apache.pulsar.broker.service.ServerCnx - [/10.1.116.123:15070][persistent://public/default/orders-partition-3] Creating producer. producerId=0",
    "10:11:19.010 [ForkJoinPool.commonPool-worker-24] INFO  org.apache.pulsar.broker.service.ServerCnx - [/10.1.116.123:15070] Created new producer: Producer{topic=PersistentTopic{topic=persistent://public/default/orders-partition-3}, client=/10.1.116.123:15070, producerName=pulsar-cluster-12-34, producerId=0}",
    "10:12:01.231 [pulsar-io-22-3] WARN  org.apache.pulsar.broker.service.ServerCnx - [/10.1.116.123:15070][0] Producer with id persistent://public/default/orders-partition-3 is already present on the connection",
    "java.lang.RuntimeException: boom",
    "\tat org.apache.pulsar.broker.service.ServerCnx.handleProducer(ServerCnx.java:1010)",
    "\t... 12 more",
    "10:12:02.000 [pulsar-io-22-3] INFO  org.apache.pulsar.broker.service.ServerCnx - done",
]
TEXT = "\n".join(PULSAR) + "\n"


def inspect_json(cli, *args, **kw) -> list[dict]:
    r = cli("inspect", "--format", "json", *args, **kw)
    assert r.code == 0, r
    return r.json()["inputs"]


def write(path, data: bytes | str):
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


@pytest.mark.parametrize(
    "name,compress,kind",
    [
        ("broker.log.gz", gzip.compress, "gzip"),
        ("broker.log.1.gz", gzip.compress, "gzip"),
        ("broker.log.bz2", bz2.compress, "bzip2"),
        ("broker.log.xz", lzma.compress, "xz"),
        ("broker.log.zst", lambda b: zstandard.ZstdCompressor().compress(b), "zstd"),
        ("broker.log", gzip.compress, "gzip"),  # found by magic bytes, not by name
    ],
)
def test_compression_by_magic_bytes(cli, tmp_path, name, compress, kind):
    p = write(tmp_path / name, compress(TEXT.encode()))
    (inp,) = inspect_json(cli, p, "--date", "2024-05-02")
    assert inp["compression"] == kind
    assert inp["lines"] == 7 and inp["records"] == 4
    assert inp["layout"] == "pulsar-broker-2x"
    assert inp["first_ts"] == "2024-05-02T10:11:19.004Z"


def test_multi_member_gzip_is_read_whole(cli, tmp_path):
    p = write(tmp_path / "b.log.gz", gzip.compress(TEXT.encode()) + gzip.compress(TEXT.encode()))
    (inp,) = inspect_json(cli, p)
    assert inp["lines"] == 14
    assert not any("gzip" in n or "trailing" in n for n in inp["notes"])  # (the 2nd copy's times go back: noted)


def test_truncated_gzip_reads_what_it_can_and_says_so(cli, tmp_path):
    data = gzip.compress((TEXT * 200).encode())
    p = write(tmp_path / "b.log.gz", data[: len(data) // 2])
    (inp,) = inspect_json(cli, p)
    assert inp["lines"] > 0
    assert any("truncated gzip" in n for n in inp["notes"])
    assert inp["lines_in_records"] + inp["skipped_lines"] == inp["lines"]


def test_gzip_with_trailing_garbage(cli, tmp_path):
    p = write(tmp_path / "b.log.gz", gzip.compress(TEXT.encode()) + b"\x00garbage\xff" * 10)
    (inp,) = inspect_json(cli, p)
    assert inp["lines"] == 7
    assert any("trailing data" in n for n in inp["notes"])


def test_gz_name_on_plain_text(cli, tmp_path):
    p = write(tmp_path / "b.log.gz", TEXT.encode())
    (inp,) = inspect_json(cli, p)
    assert inp["compression"] == "none" and inp["lines"] == 7


def test_stdin(cli):
    r = cli("inspect", "-f", "json", "-", "--date", "2024-05-02", input=gzip.compress(TEXT.encode()))
    assert r.code == 0, r
    (inp,) = r.json()["inputs"]
    assert inp["path"] == "<stdin>" and inp["compression"] == "gzip" and inp["records"] == 4


def test_gb18030(cli, tmp_path):
    text = PULSAR[0] + "\n" + "10:11:20.000 [main] WARN  org.apache.pulsar.broker.service.ServerCnx - 生产者已存在，连接被拒绝\n"
    p = write(tmp_path / "cn.log", text.encode("gb18030"))
    (inp,) = inspect_json(cli, p)
    assert inp["encoding"] == "gb18030" and inp["replaced_bytes"] == 0 and inp["records"] == 2


def test_invalid_utf8_is_replaced_and_counted(cli, tmp_path):
    # \xff\xff is neither UTF-8 nor GB18030
    p = write(tmp_path / "bad.log", (PULSAR[0] + "\n").encode() + b"10:11:20.000 [main] INFO  x.Y - caf\xff\xff\n")
    (inp,) = inspect_json(cli, p)
    assert inp["replaced_bytes"] == 2 and inp["records"] == 2
    assert "replaced" in inp["encoding"]


def test_crlf_lone_cr_and_nul(cli, tmp_path):
    crlf = write(tmp_path / "crlf.log", TEXT.replace("\n", "\r\n").encode())
    cr = write(tmp_path / "cr.log", TEXT.replace("\n", "\r").encode())
    nul = write(tmp_path / "nul.log", TEXT.replace("done", "do\x00ne").encode())
    a, b, c = inspect_json(cli, crlf, cr, nul)
    assert a["line_ending"] == "crlf" and a["lines"] == 7 and a["records"] == 4
    assert b["line_ending"] == "cr" and b["lines"] == 7 and b["records"] == 4
    assert c["lines"] == 7 and c["records"] == 4


def test_directory_recursive_sorted_and_glob(cli, tmp_path):
    (tmp_path / "b").mkdir()
    write(tmp_path / "b" / "z.log", TEXT.encode())
    write(tmp_path / "a.log", TEXT.encode())
    write(tmp_path / "b" / "c.log", TEXT.encode())
    inputs = inspect_json(cli, tmp_path)
    assert [os.path.relpath(i["path"], tmp_path) for i in inputs] == ["a.log", "b/c.log", "b/z.log"]
    inputs = inspect_json(cli, str(tmp_path / "b" / "*.log"))
    assert len(inputs) == 2


def test_binary_in_directory_is_skipped_binary_named_is_an_error(cli, tmp_path):
    write(tmp_path / "a.log", TEXT.encode())
    png = write(tmp_path / "logo.png", b"\x89PNG\r\n\x1a\n" + os.urandom(2000))
    inputs = inspect_json(cli, tmp_path)
    assert [i["skipped"] for i in inputs] == [None, "not a text log (looks like a PNG image)"]
    r = cli("inspect", png)
    assert r.code == 2 and "not a text log" in r.err and "Traceback" not in r.err
    assert len(r.err.strip().splitlines()) == 1


def test_missing_path_is_one_line_exit_2(cli, tmp_path):
    r = cli("inspect", tmp_path / "nope.log")
    assert r.code == 2 and r.err.strip().endswith("no such file or directory")
    assert len(r.err.strip().splitlines()) == 1


# ------------------------------------------------------------------ envelopes

def test_docker_json_file_envelope(cli, tmp_path):
    lines = [json.dumps({"log": line + "\n", "stream": "stdout", "time": f"2024-05-02T10:11:{19 + i:02d}.000000001Z"}) for i, line in enumerate(PULSAR)]
    p = write(tmp_path / "container-json.log", ("\n".join(lines) + "\n").encode())
    (inp,) = inspect_json(cli, p, "--date", "2024-05-02")
    assert inp["envelope"] == "json (log)"
    assert inp["layout"] == "pulsar-broker-2x" and inp["records"] == 4


def test_fluentd_kubernetes_envelope_and_zap(cli, tmp_path):
    spring = "2024-05-02 10:15:31.204  WARN 4242 --- [ad | producer-1] o.a.k.clients.producer.internals.Sender  : [Producer clientId=producer-1] Got error produce response with correlation id 1234 on topic-partition orders-3, retrying (2 attempts left). Error: NETWORK_EXCEPTION"
    fl = json.dumps({"log": spring + "\n", "stream": "stdout", "kubernetes": {"pod_name": "orders-7d9f", "namespace_name": "prod"}})
    p = write(tmp_path / "fluent.log", (fl + "\n") * 3)
    (inp,) = inspect_json(cli, p, "--tz", "UTC")
    assert inp["envelope"] == "json (log)" and inp["layout"] == "spring-boot-2"
    assert inp["first_ts"] == "2024-05-02T10:15:31.204Z"
    zap = json.dumps({"level": "warn", "ts": 1714644931.5, "logger": "sarama", "msg": "producer/broker/2 state change to [closing] because EOF"})
    p = write(tmp_path / "zap.log", (zap + "\n") * 3)
    (inp,) = inspect_json(cli, p)
    assert inp["envelope"] == "json (msg)" and inp["layout"] == "message-only"
    assert inp["first_ts"] == "2024-05-02T10:15:31.500Z" and inp["records_without_ts"] == 0


def test_docker_timestamps_and_cri_prefix(cli, tmp_path):
    sarama = "[sarama] 2024/05/02 10:15:31 producer/broker/2 state change to [closing] because EOF"
    p = write(tmp_path / "docker-t.log", ("2024-05-02T10:15:31.123456789Z " + sarama + "\n") * 2 + "2024-05-02T10:15:32.5Z no timestamp inside\n")
    (inp,) = inspect_json(cli, p, "--tz", "UTC")
    assert inp["envelope"] == "docker-ts" and inp["layout"] == "go-log"
    cri = "\n".join(f"2024-05-02T10:15:3{i}.000000000Z stdout F hello number {i}" for i in range(3)) + "\n"
    p = write(tmp_path / "cri.log", cri.encode())
    (inp,) = inspect_json(cli, p)
    assert inp["envelope"] == "cri" and inp["layout"] == "message-only"
    assert inp["first_ts"] == "2024-05-02T10:15:30.000Z" and inp["last_ts"] == "2024-05-02T10:15:32.000Z"


# ------------------------------------------------------------------ time

def test_midnight_rollover_and_zone(cli, tmp_path):
    lines = [
        "23:59:58.000 [main] INFO  a.B - one",
        "23:59:59.900 [main] INFO  a.B - two",
        "00:00:00.100 [main] INFO  a.B - three",
        "01:30:00.000 [main] INFO  a.B - four",
    ]
    p = write(tmp_path / "broker.log", ("\n".join(lines) + "\n").encode())
    (inp,) = inspect_json(cli, p, "--date", "2024-05-02", "--tz", "Asia/Shanghai")
    assert inp["first_ts"] == "2024-05-02T15:59:58.000Z"
    assert inp["last_ts"] == "2024-05-02T17:30:00.000Z"
    assert inp["midnight_rollovers"] == 1 and "Asia/Shanghai" in inp["zone"]


def test_time_only_date_from_file_name(cli, tmp_path):
    p = write(tmp_path / "pulsar-broker-2020-06-02.log", TEXT.encode())
    (inp,) = inspect_json(cli, p, "--tz", "UTC")
    assert inp["first_ts"] == "2020-06-02T10:11:19.004Z" and inp["date_source"] == "date in the file name"


def test_time_only_date_from_mtime_dates_the_last_line(cli, tmp_path):
    lines = ["23:00:00.000 [main] INFO  a.B - one", "00:10:00.000 [main] INFO  a.B - two"]
    p = write(tmp_path / "broker.log", ("\n".join(lines) + "\n").encode())
    # written at 2024-05-03 00:15 UTC: the last line is 2024-05-03, the first the day before
    t = 1714695300
    os.utime(p, (t, t))
    (inp,) = inspect_json(cli, p, "--tz", "UTC")
    assert inp["first_ts"] == "2024-05-02T23:00:00.000Z"
    assert inp["last_ts"] == "2024-05-03T00:10:00.000Z"
    assert "modification time" in inp["date_source"]


def test_a_time_only_log_days_off_the_others_gets_the_date_to_give(cli, tmp_path):
    """A time-only broker log saved long after the night it covers is dated by its modification time;
    when its stamps line up with a dated client log whole days away, the warning names the --date."""
    broker = write(tmp_path / "broker-0.log", ("\n".join(f"01:{m:02d}:00.000 [main] INFO  a.B - tick {m}" for m in range(0, 50, 5)) + "\n").encode())
    t = 1733000000  # 2024-11-30 20:53 UTC: months after the client's night
    os.utime(broker, (t, t))
    client = write(tmp_path / "app.log", ("\n".join(f"2024-03-14 01:{m:02d}:30,000 INFO  [main] c.e.App - beat {m}" for m in range(0, 50, 5)) + "\n").encode())
    r = cli("analyze", "--tz", "UTC", "--format", "text", broker, client)
    assert r.code == 0, r
    assert "give --date 'broker-0.log=2024-03-14': its time-only stamps then line up with app.log" in r.out, r.out
    assert "overlaps no other input" not in r.out  # the hint says it for both
    r = cli("analyze", "--tz", "UTC", "--format", "json", "--date", "broker-0.log=2024-03-14", broker, client)
    assert {i["first_ts"][:10] for i in r.json()["inputs"]} == {"2024-03-14"}


def test_per_file_zone_rules(cli, tmp_path):
    line = "[2024-05-02 10:15:31,204] WARN [Producer clientId=producer-1] Node 2 disconnected. (org.apache.kafka.clients.NetworkClient)\n"
    a = write(tmp_path / "client-a.log", line.encode())
    b = write(tmp_path / "client-b.log", line.encode())
    ia, ib = inspect_json(cli, a, b, "--tz", "UTC", "--tz", "client-b*=Asia/Shanghai")
    assert ia["first_ts"] == "2024-05-02T10:15:31.204Z"
    assert ib["first_ts"] == "2024-05-02T02:15:31.204Z"


def test_unknown_zone_is_an_error(cli, tmp_path):
    p = write(tmp_path / "a.log", TEXT.encode())
    r = cli("inspect", p, "--tz", "Mars/Olympus")
    assert r.code == 2 and "unknown time zone" in r.err


# ------------------------------------------------------------------ layout forcing, table

def test_layout_pattern_forces_a_user_layout(cli, tmp_path):
    text = "2024-05-02 10:15:31 WARN  NetworkClient:770 - Connection to node -1 could not be established.\n" * 3
    p = write(tmp_path / "custom.log", text.encode())
    (inp,) = inspect_json(cli, p, "--tz", "UTC", "--layout-pattern", "%d{yyyy-MM-dd HH:mm:ss} %-5p %c{1}:%L - %m%n")
    assert inp["layout"] == "custom" and inp["layout_forced"] and inp["first_ts"] == "2024-05-02T10:15:31.000Z"
    r = cli("inspect", p, "--layout-pattern", "%d{HH:mm} %bogus %m")
    assert r.code == 2 and "unknown conversion word %bogus" in r.err


def test_inspect_table_on_terminal_output(cli, tmp_path):
    p = write(tmp_path / "broker.log", TEXT.encode())
    r = cli("inspect", p, "--date", "2024-05-02")
    assert r.code == 0, r
    for word in ("pulsar-broker-2x", "records", "4 (0 without a timestamp)", "7 in records, 0 skipped", "2024-05-02 10:11:19.004 UTC"):
        assert word in r.out


def test_long_single_line(cli, tmp_path):
    big = "10:11:19.004 [main] INFO  a.B - " + "x" * (5 * 1024 * 1024) + "\n" + PULSAR[1] + "\n"
    p = write(tmp_path / "long.log", big.encode())
    (inp,) = inspect_json(cli, p)
    assert inp["lines"] == 2 and inp["records"] == 2


def test_chunk_seams_change_nothing(cli, tmp_path):
    """Every input read in 3 KB chunks (so records, stack traces and a line longer than a chunk all
    straddle chunk seams) gives the same counts, events and findings as the default 8 MB chunks."""
    import shutil

    from conftest import SAMPLES

    d = tmp_path / "logs"
    shutil.copytree(SAMPLES / "pulsar-incident", d)
    shutil.copy(SAMPLES / "kafka-outage" / "orders-producer.log", d / "orders-producer.log")
    body = ("10:11:19.004 [main] INFO  a.B - " + "y" * 20000 + "\n" + "\n".join(PULSAR) + "\n") * 3
    write(d / "broker-long-2024-05-02.log", body.encode())

    def outcome(env):
        r = cli("analyze", "--tz", "UTC", d, "--format", "json", env=env)
        assert r.code == 0, r
        doc = r.json()
        ins = [{k: i[k] for k in ("path", "lines", "records", "lines_in_records", "events", "first_ts", "last_ts")} for i in doc["inputs"]]
        found = [(f["id"], f["root_cause"], [(s.get("path"), s.get("attempts")) for s in f.get("subjects", [])]) for f in doc["findings"]]
        return doc["summary"], ins, found

    small = outcome({"LOGSLEUTH_CHUNK_BYTES": "3000"})
    assert small == outcome({})
    assert small[0]["findings"] >= 3 and small[0]["events"] > 1000
    long_in = next(i for i in small[1] if i["path"].endswith("broker-long-2024-05-02.log"))
    assert long_in["lines"] == 3 * (1 + len(PULSAR))


def test_json_error_key_is_read_on_every_line(cli, tmp_path):
    """An 'error' key that first appears after the lines sampled for detection is still joined to
    the message (a zap logger adds it only to failures)."""
    rows = [{"level": "info", "ts": 1714644931.0 + i, "msg": f"produced batch {i}"} for i in range(800)]
    rows.append({"level": "error", "ts": 1714645800.5, "msg": "Failed to connect to broker kafka-2:9092", "error": "dial tcp 10.0.0.7:9092: i/o timeout"})
    p = write(tmp_path / "app.json", ("\n".join(json.dumps(r) for r in rows) + "\n").encode())
    r = cli("events", p, "-f", "ndjson")
    assert r.code == 0, r
    (e,) = [json.loads(x) for x in r.out.splitlines()]
    assert (e["line"], e["address"], e["error"]) == (801, "kafka-2:9092", "dial tcp 10.0.0.7:9092: i/o timeout")


# ------------------------------------------------------------------ trial findings: envelopes, encodings

CREATED = PULSAR[1]
CREATED_HEAD, CREATED_TAIL = CREATED.split("Producer{", 1)


def test_fluentd_out_file_is_unwrapped(cli, tmp_path):
    """fluentd's default out_file format (time TAB tag TAB record JSON): the envelope is found, the
    time is the first field, the text the record's log (or message/msg), the inner layout detected."""
    tag = "kubernetes.var.log.containers.pulsar-broker-1"
    rows = [f"2024-05-02T10:11:{19 + i:02d}+00:00\t{tag}\t" + json.dumps({"log": line + "\n", "stream": "stdout"}) for i, line in enumerate(PULSAR)]
    p = write(tmp_path / "fluentd-out.log", "\n".join(rows) + "\n")
    r = cli("inspect", p)
    assert r.code == 0, r
    assert "fluentd-out_file+json (log)" in r.out and "pulsar-broker-2x" in r.out
    (inp,) = inspect_json(cli, p)
    assert inp["envelope"] == "fluentd-out_file+json (log)" and inp["layout"] == "pulsar-broker-2x"
    assert inp["records"] == 4 and inp["records_without_ts"] == 0
    # the envelope's stamp (UTC, with a date); it is in whole seconds, and the text names the same
    # second, so the text's milliseconds are kept
    assert inp["first_ts"] == "2024-05-02T10:11:19.004Z"
    r = cli("events", p, "-f", "ndjson")
    assert r.code == 0, r
    events = [json.loads(x) for x in r.out.splitlines()]
    assert [e["event"] for e in events[:2]] == ["producer_creating", "producer_created"]
    # the second record's text says 10:11:19.010, its envelope 10:11:20: the envelope wins, whole
    assert events[1]["line"] == 2 and events[1]["ts"] == "2024-05-02T10:11:20.000Z"

    # a variant whose records carry the text under `message` (some lines) and `msg` (others),
    # with a "+0000" offset and a fraction
    alt = [
        f"2024-05-02T10:11:{19 + i:02d}.250+0000\tapp.broker\t" + json.dumps({("message" if i % 3 else "msg"): line, "host": "b1"})
        for i, line in enumerate(PULSAR)
    ]
    p = write(tmp_path / "fluentd-message.log", "\n".join(alt) + "\n")
    (inp,) = inspect_json(cli, p)
    assert inp["envelope"].startswith("fluentd-out_file+json (") and inp["layout"] == "pulsar-broker-2x"
    assert inp["records"] == 4 and inp["first_ts"] == "2024-05-02T10:11:19.250Z"
    r = cli("events", p, "-f", "ndjson")
    assert r.code == 0, r
    assert [json.loads(x)["event"] for x in r.out.splitlines()][:2] == ["producer_creating", "producer_created"]


def test_cri_partial_lines_are_joined(cli, tmp_path):
    """The kubelet splits long lines into `P` parts ended by an `F` part: they are one logical line,
    numbered by the first physical line, and the pack matches it."""
    ts = "2024-05-02T10:11:19.010000000Z"
    rows = [
        f"2024-05-02T10:11:19.004000000Z stdout F {PULSAR[0]}",
        f"{ts} stdout P {CREATED_HEAD}Producer{{",
        f"{ts} stdout F {CREATED_TAIL}",
        f"2024-05-02T10:11:19.500000000Z stdout F {PULSAR[0].replace('producerId=0', 'producerId=1')}",
        # three parts
        f"{ts} stdout P {CREATED_HEAD.replace('10:11:19.010', '10:11:19.600')}Pro",
        f"{ts} stdout P ducer{{topic=PersistentTopic{{topic=persistent://public/default/orders-partition-3}}, ",
        f"{ts} stdout F client=/10.1.116.123:15070, producerName=pulsar-cluster-12-35, producerId=1}}",
        f"2024-05-02T10:11:20.000000000Z stdout F {PULSAR[-1]}",
    ]
    p = write(tmp_path / "broker-cri.log", "\n".join(rows) + "\n")
    r = cli("patterns", "test", p)
    assert r.code == 0, r
    assert "Created new producer" not in "".join(x for x in r.out.splitlines() if "no pattern" in x), r.out
    assert not any(f"broker-cri.log:{n}:" in r.out for n in (3, 6, 7))  # joined into lines 2 and 5
    created = [x for x in r.out.splitlines() if "producer_created" in x]
    assert [x.split(": ", 1)[0].rsplit(":", 1)[1] for x in created] == ["2", "5"]
    assert "producer_name=pulsar-cluster-12-34" in created[0] and "producer_name=pulsar-cluster-12-35" in created[1]
    (inp,) = inspect_json(cli, p)
    assert inp["lines"] == 8 and inp["records"] == 5
    assert inp["lines_in_records"] == 8 and inp["skipped_lines"] == 0
    # the same across chunk seams (a chunk ending in the middle of a P run) and from stdin
    r = cli("events", p, "-f", "ndjson", env={"LOGSLEUTH_CHUNK_BYTES": "300"})
    assert r.code == 0, r
    ev = [json.loads(x) for x in r.out.splitlines()]
    assert [(e["line"], e["event"]) for e in ev if e["event"] == "producer_created"] == [(2, "producer_created"), (5, "producer_created")]
    assert ev[1]["text"].endswith("producerId=0}") and "stdout P" in ev[1]["text"]
    r = cli("inspect", "-f", "json", "-", input=p.read_bytes(), env={"LOGSLEUTH_CHUNK_BYTES": "300"})
    assert r.code == 0, r
    (inp,) = r.json()["inputs"]
    assert inp["records"] == 5 and inp["lines_in_records"] == 8
    # each stream is joined on its own: a stderr line between a stdout part and its completion
    # stays its own line, and the stdout line is still whole (also across a chunk seam)
    mixed = rows[:2] + [f"{ts} stderr F WARNING: an illegal reflective access operation has occurred"] + rows[2:]
    p = write(tmp_path / "broker-cri-mixed.log", "\n".join(mixed) + "\n")
    for chunk in ("100000", "260", "330"):
        r = cli("events", p, "-f", "ndjson", env={"LOGSLEUTH_CHUNK_BYTES": chunk})
        assert r.code == 0, r
        ev = [json.loads(x) for x in r.out.splitlines()]
        made = [e for e in ev if e["event"] == "producer_created"]
        assert [e["line"] for e in made] == [2, 6], chunk
        assert made[0]["text"].endswith("producerId=0}") and "illegal reflective" not in made[0]["text"], chunk


def test_inspect_names_the_envelope_stamp_as_the_time_source(cli, tmp_path):
    """With a CRI or docker json-file envelope the times are the envelope's UTC stamps: inspect must
    not claim the machine's zone or the file's modification time."""
    cri = "\n".join(f"2024-05-02T10:11:{19 + i:02d}.000000000Z stdout F {line}" for i, line in enumerate(PULSAR)) + "\n"
    docker = "\n".join(json.dumps({"log": line + "\n", "stream": "stdout", "time": f"2024-05-02T10:11:{19 + i:02d}.5Z"}) for i, line in enumerate(PULSAR)) + "\n"
    for name, body in (("cri.log", cri), ("docker.json", docker)):
        p = write(tmp_path / name, body)
        r = cli("inspect", p, env={"TZ": "Asia/Shanghai"})
        assert r.code == 0, r
        assert "Asia/Shanghai" not in r.out and "modification time" not in r.out, r.out
        assert "from the envelope's timestamps" in r.out
        (inp,) = inspect_json(cli, p, env={"TZ": "Asia/Shanghai"})
        assert inp["zone"] == "from the envelope's timestamps"
        assert inp["date_source"] == "the envelope's timestamps" and inp["midnight_rollovers"] == 0
        assert inp["first_ts"].startswith("2024-05-02T10:11:19")
    # without an envelope, the guesses are still named
    p = write(tmp_path / "plain.log", TEXT)
    (inp,) = inspect_json(cli, p, env={"TZ": "Asia/Shanghai"})
    assert "Asia/Shanghai" in inp["zone"] and "modification time" in inp["date_source"]


def test_stray_latin1_byte_is_replaced_not_read_as_gb18030(cli, tmp_path):
    """One invalid byte in UTF-8 text: replaced (and counted), not decoded as GB18030 (which would
    swallow the `]` after it and break the line's layout)."""
    line = b"[2024-05-02 10:15:30,001] WARN [Producer clientId=producer-\xe9] Connection to node 2 (kafka-2/10.0.0.7:9092) could not be established. Broker may not be available. (org.apache.kafka.clients.NetworkClient)\n"
    p = write(tmp_path / "latin1.log", line)
    (inp,) = inspect_json(cli, p, "--tz", "UTC")
    assert inp["encoding"] == "utf-8 (invalid bytes replaced)" and inp["replaced_bytes"] == 1
    r = cli("inspect", p, "--tz", "UTC")
    assert "utf-8 with 1 invalid byte replaced by U+FFFD" in r.out
    r = cli("events", p, "--tz", "UTC", "-f", "ndjson")
    assert r.code == 0, r
    (ev,) = [json.loads(x) for x in r.out.splitlines()]
    assert ev["line"] == 1 and "producer-\ufffd]" in ev["text"]
    # real Chinese text is still GB18030, and inspect says so
    cn = PULSAR[0] + "\n" + "10:11:20.000 [main] WARN  org.apache.pulsar.broker.service.ServerCnx - 生产者已存在，连接被拒绝\n"
    p = write(tmp_path / "cn.log", cn.encode("gb18030"))
    r = cli("inspect", p)
    assert "gb18030 (not valid UTF-8; decoded as GB18030)" in r.out
