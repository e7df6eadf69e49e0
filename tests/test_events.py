"""`logsleuth events` through the real CLI: grep-compatible output, formats, filters, exit codes."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys

from conftest import ROOT, SAMPLES

BROKER = SAMPLES / "pulsar-incident" / "pulsar-broker-1.2020-06-01.log"


def test_piped_output_is_grep_compatible(cli):
    r = cli("events", BROKER, "--tz", "UTC")
    assert r.code == 0, r
    lines = r.out.splitlines()
    assert lines
    raw = BROKER.read_text().splitlines()
    for x in lines:
        path, n, text = x.split(":", 2)
        assert path == str(BROKER) and raw[int(n) - 1] == text


def test_pipeline_with_grep_and_head(tmp_path):
    env = dict(os.environ, TZ="UTC")
    cmd = f"{sys.executable} -m logsleuth events --tz UTC {BROKER} | grep producerId | head -3"
    p = subprocess.run(cmd, shell=True, capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert p.returncode == 0 and len(p.stdout.splitlines()) == 3, p
    assert all("producerId" in x for x in p.stdout.splitlines())
    assert p.stderr == ""


def test_ndjson_fields_and_filters(cli):
    r = cli("events", BROKER, "--tz", "UTC", "--format", "ndjson", "--event", "producer_already_present")
    assert r.code == 0, r
    evs = [json.loads(x) for x in r.out.splitlines()]
    assert evs and all(e["event"] == "producer_already_present" for e in evs)
    e = evs[0]
    for key in ("path", "line", "line_end", "ts", "system", "event", "pattern", "text", "connection", "producer_id", "topic"):
        assert key in e, key
    assert isinstance(e["producer_id"], int) and e["ts"].endswith("Z")
    assert e["text"] == BROKER.read_text().splitlines()[e["line"] - 1]
    # globs and time windows (absolute, and relative to the end of the logs)
    r = cli("events", BROKER, "--tz", "UTC", "--format", "ndjson", "--event", "bundle_*", "--since", "2020-06-01 23:00", "--until", "2020-06-01 23:30")
    evs = [json.loads(x) for x in r.out.splitlines()]
    assert evs and {e["event"] for e in evs} <= {"bundle_disabling", "bundle_unloaded", "bundle_not_served"}
    assert all("2020-06-01T23:00" <= e["ts"] <= "2020-06-01T23:30" for e in evs)
    r = cli("events", BROKER, "--tz", "UTC", "--format", "ndjson", "--since", "-10m")
    evs = [json.loads(x) for x in r.out.splitlines()]
    assert evs and all(e["ts"] >= "2020-06-02T01:19" for e in evs)


def test_ndjson_is_what_json_dumps_writes_whatever_the_text(cli, tmp_path):
    # each column is escaped only as far as its values need (render.events._escapes): quotes,
    # backslashes, tabs and other controls in some columns and lines, none in others, must still
    # give, line for line, what json.dumps(ensure_ascii=False) writes for the same values
    head = "10:12:0{}.231 [{}] WARN  org.apache.pulsar.broker.service.ServerCnx - "
    tail = "[/10.1.116.123:15070][0] Producer with id persistent://public/default/{} is already present on the connection{}"
    lines = [
        head.format(1, "pulsar-io-22-3") + tail.format("orders", ""),
        head.format(2, 'io "quoted" \\ 1') + tail.format("orders", ' and a "quote"'),
        head.format(3, "io\t2") + tail.format("a\\b", " \x01\x07 bell"),
        head.format(4, "io-3") + tail.format("orders", " \u00e9\u2028 \\n not a newline"),
    ]
    p = tmp_path / "b.log"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    r = cli("events", p, "--tz", "UTC", "--format", "ndjson")
    assert r.code == 0, r
    out = r.out.rstrip("\n").split("\n")  # (not splitlines: U+2028 in a JSON string is not a line break)
    assert len(out) == 4, r.out
    for i, x in enumerate(out):
        doc = json.loads(x)
        assert json.dumps(doc, ensure_ascii=False) == x, x
        assert doc["text"] == lines[i] and doc["line"] == i + 1
    assert [json.loads(x)["thread"] for x in out] == ["pulsar-io-22-3", 'io "quoted" \\ 1', "io\t2", "io-3"]


def test_system_filter_csv_and_exit_codes(cli, tmp_path):
    r = cli("events", SAMPLES / "pulsar-incident", "--tz", "UTC", "--system", "pulsar-client", "--format", "csv")
    assert r.code == 0, r
    rows = list(csv.DictReader(io.StringIO(r.out)))
    assert rows and all(x["component"] == "client" for x in rows)
    quiet = tmp_path / "quiet.log"
    quiet.write_text("10:00:00.000 [main] INFO  com.example.App - nothing happened\n")
    r = cli("events", quiet)
    assert r.code == 1 and r.out == ""
    r = cli("events", tmp_path / "missing.log")
    assert r.code == 2 and r.err.startswith("logsleuth: error:")
    r = cli("events", BROKER, "--since", "not a time at all")
    assert r.code == 2 and "cannot read the time" in r.err


def test_table_on_terminal(cli):
    # --format table forces the terminal view; log text is shown, never interpreted as markup
    r = cli("events", BROKER, "--tz", "UTC", "--format", "table", "--event", "bundle_disabling")
    assert r.code == 0 and "  bundle_disabling  pulsar-broker-1.2020-06-01.log:1457  Disabling ownership" in r.out, r.out
    r = cli("events", BROKER, "--tz", "UTC", "--format", "table", "-v", "--event", "bundle_disabling")
    assert r.code == 0 and "pulsar:bundle_disabling" in r.out and "bundle=public/default/" in r.out


def test_a_copy_of_an_input_is_said_on_stderr(cli, tmp_path):
    # a.log and its copy b.log: the copy is read once, and events (whose output has no summary) says so
    src = SAMPLES / "kafka-outage" / "orders-producer.log"
    (tmp_path / "a.log").write_bytes(src.read_bytes())
    (tmp_path / "b.log").write_bytes(src.read_bytes())
    r = cli("events", tmp_path, "--tz", "UTC", "--files-with-events")
    assert r.code == 0, r
    assert r.out.splitlines() == [str(tmp_path / "a.log")]
    assert r.err == f"logsleuth: note: {tmp_path / 'b.log'}: same content as {tmp_path / 'a.log'}, read once\n"
    r = cli("timeline", tmp_path, "--tz", "UTC", "--format", "lines")
    assert r.code == 0 and "same content as" in r.err and f"{tmp_path / 'b.log'}:" not in r.out, r
