"""What a user sees when the inputs or options are not what the tool expects (found by trying it as
a new user): warnings instead of silent wrong answers, errors instead of false all-clears."""

from __future__ import annotations

import json
import os
import shutil

from conftest import SAMPLES

KAFKA = SAMPLES / "kafka-outage"


def test_unrecognised_layout_says_so_and_the_pattern_fixes_it(cli, tmp_path):
    src = (KAFKA / "orders-producer.log").read_text().splitlines()
    out = []
    import re

    for line in src:
        m = re.match(r"^\[(\d{4})-(\d\d)-(\d\d) (\d\d:\d\d:\d\d),(\d{3})\] (\w+) (.*) \(([\w.$]+)\)$", line)
        out.append(f"{m[3]}.{m[2]}.{m[1]} {m[4]}.{m[5]} | {m[6]:<5} | main | {m[8]} | {m[7]}" if m else line)
    p = tmp_path / "custom.log"
    p.write_text("\n".join(out) + "\n")
    r = cli("analyze", "--tz", "UTC", p, "--format", "text")
    assert "no built-in layout recognises these lines" in r.out and "--layout-pattern" in r.out
    fixed = cli("analyze", "--tz", "UTC", p, "--format", "json", "--layout-pattern", "%d{dd.MM.yyyy HH:mm:ss.SSS} | %-5level | %t | %logger | %msg%n").json()
    direct = cli("analyze", "--tz", "UTC", KAFKA / "orders-producer.log", "--format", "json").json()
    key = lambda d: sorted((f["id"], f["title"].split(" (")[0], f["severity"]) for f in d["findings"])  # noqa: E731
    assert key(direct) and key(fixed) == key(direct)


def test_copies_are_read_once_and_code_files_are_skipped(cli, tmp_path):
    d = tmp_path / "logs"
    shutil.copytree(SAMPLES / "pulsar-incident", d)
    shutil.copy(d / "pulsar-broker-1.2020-06-01.log", d / "pulsar-broker-1.2020-06-01.log.bak")
    (d / "notes.py").write_text('print("Producer with id x is already present on the connection")\n')
    doc = cli("analyze", "--tz", "UTC", d, "--format", "json").json()
    names = [os.path.basename(i["path"]) for i in doc["inputs"]]
    assert "notes.py" not in names
    bak = next(i for i in doc["inputs"] if i["path"].endswith(".bak"))
    assert bak["skipped"].startswith("same content as")
    once = cli("analyze", "--tz", "UTC", SAMPLES / "pulsar-incident", "--format", "json").json()
    assert [f["title"] for f in doc["findings"]] == [f["title"] for f in once["findings"]]


def test_random_bytes_are_not_a_log(cli, tmp_path):
    p = tmp_path / "blob.dat"
    p.write_bytes(os.urandom(20000))
    r = cli("inspect", p)
    assert r.code == 2 and "not a text log" in r.err


def test_time_filters_that_select_nothing_are_errors(cli):
    r = cli("analyze", "--tz", "UTC", "--since", "2024-05-02 10:20", "--until", "2024-05-02 10:10", KAFKA)
    assert r.code == 2 and "is after --until" in r.err
    r = cli("analyze", "--tz", "UTC", "--since", "2031-01-01", KAFKA, "--fail-on", "high")
    assert r.code == 2 and "select nothing" in r.err
    # a time of day alone is on the logs' day, not today
    doc = cli("analyze", "--tz", "UTC", "--since", "10:15", KAFKA, "--format", "json").json()
    assert doc["summary"]["since"] == "2024-05-02T10:15:00.000Z"


def test_unknown_event_or_system_is_an_error_not_silence(cli):
    r = cli("events", KAFKA, "--event", "batch_expird")
    assert r.code == 2 and "no pattern emits such an event" in r.err
    r = cli("events", KAFKA, "--system", "kafak")
    assert r.code == 2 and "unknown" in r.err
    # a mistyped detector would otherwise be an all-clear that keeps a --fail-on job green forever
    r = cli("analyze", KAFKA, "-d", "kafka.delivery-timout", "--fail-on", "high")
    assert r.code == 2 and "no detector 'kafka.delivery-timout'" in r.err and len(r.err.strip().splitlines()) == 1
    r = cli("analyze", "--tz", "UTC", KAFKA, "-d", "kafka.delivery*", "--format", "json")
    assert r.code == 0 and {f["id"] for f in r.json()["findings"]} == {"kafka.delivery-timeout"}


def test_envelope_time_beats_a_time_only_stamp(cli, tmp_path):
    inner = (SAMPLES / "pulsar-incident" / "pulsar-broker-1.2020-06-01.log").read_text().splitlines()[:50]
    lines = []
    for x in inner:
        hh, mm, rest = x[:2], x[3:5], x[6:12]
        lines.append(json.dumps({"log": x + "\n", "stream": "stdout", "time": f"2020-06-01T{hh}:{mm}:{rest}000Z"}))
    p = tmp_path / "docker.log"  # no date in the name: the stamps alone would be dated by mtime
    p.write_text("\n".join(lines) + "\n")
    (i,) = cli("inspect", p, "--format", "json", "--tz", "UTC").json()["inputs"]
    assert i["first_ts"].startswith("2020-06-01T22:00")


def test_usage_errors_are_one_line(cli):
    for args in (["analyze", "--fail-on", "bogus", str(KAFKA)], ["report", str(KAFKA)], ["nosuch"]):
        r = cli(*args)
        assert r.code == 2 and len(r.err.strip().splitlines()) == 1 and r.err.startswith("logsleuth: error:"), r


def test_analyze_output_format_follows_the_file_name(cli, tmp_path):
    for name, probe in (("a.html", "<!DOCTYPE html>"), ("a.json", '"tool": "logsleuth"'), ("a.md", "# Incident analysis")):
        r = cli("analyze", "--tz", "UTC", KAFKA, "-o", tmp_path / name)
        assert r.code == 0, r
        assert probe in (tmp_path / name).read_text(), name


# ------------------------------------------------------------------ --layout-pattern per file, globs

APP_PATTERN = "%d{yyyy-MM-dd HH:mm:ss.SSS} %5p [%15.15t] %-40.40c{1.} : %m%n"


def _app_and_broker(tmp_path):
    d = tmp_path / "logs"
    d.mkdir()
    app = [
        f"2024-05-02 10:00:{i:02d}.005  WARN [ad | producer-1] {'o.a.k.c.NetworkClient':<40} : [Producer clientId=producer-1] "
        "Connection to node 2 (kafka-2/10.0.0.7:9092) could not be established. Broker may not be available."
        for i in range(30)
    ]
    broker = [
        f"10:12:{i:02d}.231 [pulsar-io-22-3] INFO  org.apache.pulsar.broker.service.ServerCnx - New connection from /10.0.0.{i}:5123"
        for i in range(30)
    ]
    (d / "app-orders.log").write_text("\n".join(app) + "\n")
    (d / "pulsar-broker-host1.log").write_text("\n".join(broker) + "\n")
    return d


def _by_name(inputs):
    return {os.path.basename(i["path"]): i for i in inputs}


def test_layout_pattern_glob_applies_to_its_files_only(cli, tmp_path):
    d = _app_and_broker(tmp_path)
    base = ("--tz", "UTC", "--date", "2024-05-02")
    r = cli("inspect", "--format", "json", d, *base, "--layout-pattern", f"app-*.log={APP_PATTERN}")
    assert r.code == 0 and "matches no input" not in r.err, r
    got = _by_name(r.json()["inputs"])
    app, broker = got["app-orders.log"], got["pulsar-broker-host1.log"]
    assert app["layout"] == "custom" and app["layout_forced"] and app["records"] == 30 and app["records_without_ts"] == 0
    assert broker["layout"] == "pulsar-broker-2x" and not broker["layout_forced"] and broker["records"] == 30
    # a bare pattern still applies to every file; the one it does not fit says so, naming it
    r = cli("analyze", "--format", "json", d, *base, "--layout-pattern", APP_PATTERN)
    assert r.code in (0, 1), r
    got = _by_name(r.json()["inputs"])
    assert got["app-orders.log"]["layout"] == got["pulsar-broker-host1.log"]["layout"] == "custom"
    (note,) = [n for n in got["pulsar-broker-host1.log"]["notes"] if "recognises almost none" in n]
    assert f"--layout-pattern {APP_PATTERN!r}" in note and "1 of 30 lines" in note and "GLOB=PATTERN" in note
    assert not any("recognises almost none" in n for n in got["app-orders.log"]["notes"])
    text = cli("inspect", d, *base, "--layout-pattern", APP_PATTERN).out
    assert "recognises almost none of these lines" in text
    # first matching glob wins; the bare pattern covers the rest
    r = cli("inspect", "--format", "json", d, *base, "--layout-pattern", "pulsar-*=%d{HH:mm:ss.SSS} [%t] %-5level %c - %m%n",
            "--layout-pattern", APP_PATTERN)
    got = _by_name(r.json()["inputs"])
    assert got["pulsar-broker-host1.log"]["records"] == 30 and got["app-orders.log"]["records"] == 30
    assert cli("inspect", d, "--layout-pattern", APP_PATTERN, "--layout-pattern", APP_PATTERN).code == 2
    r = cli("inspect", d, "--layout-pattern", "app-*.log=%d %c{36 - %m%n")
    assert r.code == 2 and r.err.startswith("logsleuth: error: --layout-pattern 'app-*.log=%d %c{36 - %m%n': unbalanced braces"), r


def test_layout_pattern_with_equals_is_bare_unless_a_glob_comes_first(cli, tmp_path):
    d = _app_and_broker(tmp_path)
    base = ("--tz", "UTC", "--date", "2024-05-02")
    # '=' inside the pattern (after the first '%'): one pattern for every file, not GLOB=PATTERN
    pat = "%d{yyyy-MM-dd HH:mm:ss.SSS} %highlight{%5p}{ERROR=red, WARN=yellow} [%15.15t] %-40.40c{1.} : %replace{%m}{a=b}{}%n"
    r = cli("inspect", "--format", "json", d, *base, "--layout-pattern", pat)
    assert r.code == 0 and "matches no input" not in r.err, r
    got = _by_name(r.json()["inputs"])
    assert got["app-orders.log"]["layout"] == got["pulsar-broker-host1.log"]["layout"] == "custom"
    assert got["app-orders.log"]["records_without_ts"] == 0
    # a literal '=' before the first '%' needs an explicit glob
    (d / "kv.log").write_text("time=2024-05-02 10:00:00.005 level=WARN msg=hello\n" * 3)
    r = cli("inspect", "--format", "json", d / "kv.log", *base, "--layout-pattern", "*=time=%d{yyyy-MM-dd HH:mm:ss.SSS} level=%p msg=%m%n")
    (kv,) = r.json()["inputs"]
    assert kv["layout"] == "custom" and kv["records"] == 3 and kv["records_without_ts"] == 0
    r = cli("inspect", "--format", "json", d / "kv.log", *base, "--layout-pattern", "time=%d{yyyy-MM-dd HH:mm:ss.SSS} level=%p msg=%m%n")
    assert "--layout-pattern 'time=%d{yyyy-MM-dd HH:mm:ss.SSS} level=%p msg=%m%n' matches no input" in r.err, r
    assert "write '*=time=%d" in r.err


def test_globs_that_match_no_input_are_noted(cli, tmp_path):
    d = _app_and_broker(tmp_path)
    r = cli("inspect", "--format", "json", d, "--tz", "broker-*.log=Asia/Shanghai", "--tz", "UTC",
            "--date", "broker-*.log=2024-05-02", "--layout-pattern", f"nope-*.log={APP_PATTERN}")
    assert r.code == 0, r
    assert "logsleuth: note: --tz 'broker-*.log=Asia/Shanghai' matches no input" in r.err
    assert "logsleuth: note: --date 'broker-*.log=2024-05-02' matches no input" in r.err
    assert f"logsleuth: note: --layout-pattern 'nope-*.log={APP_PATTERN}' matches no input" in r.err
    assert r.json()["inputs"]  # still analysed
    # a glob that matches (the file name, or the path as given) is silent
    r = cli("inspect", d, "--tz", "pulsar-broker-*.log=Asia/Shanghai", "--tz", f"{d}/app-*=UTC", "--date", "2024-05-02")
    assert r.code == 0 and "matches no input" not in r.err, r


def test_readme_tz_glob_matches_pulsars_default_file_name(cli, tmp_path):
    import re

    from conftest import ROOT

    readme = (ROOT / "README.md").read_text()
    glob, zone = re.search(r"--tz '([^'=]+)=([^']+)'", readme).groups()
    d = _app_and_broker(tmp_path)  # pulsar-daemon writes pulsar-broker-<host>.log
    r = cli("inspect", "--format", "json", d / "pulsar-broker-host1.log", "--tz", f"{glob}={zone}", "--date", "2024-05-02")
    assert r.code == 0 and "matches no input" not in r.err, r
    (inp,) = r.json()["inputs"]
    assert zone in inp["zone"], inp


def test_an_unknown_layout_gives_the_same_findings_without_a_pattern(cli, tmp_path):
    """The inferred head: times, levels and messages found with no --layout-pattern."""
    import re

    out = []
    for line in (KAFKA / "orders-producer.log").read_text().splitlines():
        m = re.match(r"^\[(\d{4})-(\d\d)-(\d\d) (\d\d:\d\d:\d\d),(\d{3})\] (\w+) (.*) \(([\w.$]+)\)$", line)
        out.append(f"{m[3]}.{m[2]}.{m[1]} {m[4]}.{m[5]} | {m[6]:<5} | main | {m[8]} | {m[7]}" if m else line)
    p = tmp_path / "custom.log"
    p.write_text("\n".join(out) + "\n")
    doc = cli("analyze", "--tz", "UTC", p, "--format", "json").json()
    assert doc["inputs"][0]["layout"].startswith("inferred-head")
    direct = cli("analyze", "--tz", "UTC", KAFKA / "orders-producer.log", "--format", "json").json()
    def key(d, path):
        return sorted((f["id"], f["title"].replace(str(path), "<log>"), f["severity"], f["first_seen"], f["last_seen"]) for f in d["findings"])

    assert key(direct, KAFKA / "orders-producer.log") and key(doc, p) == key(direct, KAFKA / "orders-producer.log")


def test_no_findings_in_a_window_says_it_is_the_window(cli):
    # the outage starts after 10:02: the window before it holds no finding, and the all-clear says
    # it is the window's, not the logs'
    r = cli("analyze", "--tz", "UTC", "--until", "2024-05-02 10:02", SAMPLES / "kafka-outage")
    assert r.code == 0, r
    assert "No findings: no detector recognised an incident in the window asked for (--since/--until)." in r.out
    assert "in these logs" not in r.out
    r = cli("analyze", "--tz", "UTC", SAMPLES / "kafka-outage")
    assert "No findings" not in r.out
