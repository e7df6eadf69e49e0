"""Rotated logs: the segments of one log (broker.log.2.gz, broker.log.1, broker.log) are read as that
log by the detectors, while evidence cites each real file and line."""

from __future__ import annotations

import calendar
import datetime as dt
import gzip
import json
import os
import re
import shutil
from pathlib import Path

import pytest

from conftest import SAMPLES
from logsleuth.ingest.rotation import group, parse

# ----------------------------------------------------------------------------- grouping (pure)


@pytest.mark.parametrize(
    "names, expected",
    [
        (["d/broker.log.2.gz", "d/broker.log.1", "d/broker.log"], {"d/broker.log": ["d/broker.log.2.gz", "d/broker.log.1", "d/broker.log"]}),
        (["broker.log", "broker.log.10", "broker.log.9.gz"], {"broker.log": ["broker.log.10", "broker.log.9.gz", "broker.log"]}),
        (["syslog", "syslog-20240314", "syslog-20240313.gz"], {"syslog": ["syslog-20240313.gz", "syslog-20240314", "syslog"]}),
        (["b.log.2024-03-15", "b.log", "b.log.2024-03-14"], {"b.log": ["b.log.2024-03-14", "b.log.2024-03-15", "b.log"]}),
        # log4j2 RollingFile %d{yyyy-MM-dd}-%i: a higher index is newer
        (["app.log", "app-2024-03-14-2.log", "app-2024-03-14-1.log.gz", "app-2024-03-13-1.log.gz"],
         {"app.log": ["app-2024-03-13-1.log.gz", "app-2024-03-14-1.log.gz", "app-2024-03-14-2.log", "app.log"]}),
        (["app.log", "app-2024-03-14.1.log"], {"app.log": ["app-2024-03-14.1.log", "app.log"]}),
        # logback SizeAndTimeBasedRollingPolicy
        (["app.log", "app.2024-03-14.1.log", "app.2024-03-14.0.log.gz"], {"app.log": ["app.2024-03-14.0.log.gz", "app.2024-03-14.1.log", "app.log"]}),
        # kubelet under /var/log/pods/<ns>_<pod>_<uid>/<container>/: 0.log.YYYYMMDD-HHMMSS, all but the newest gzipped
        (["c/0.log", "c/0.log.20240314-235000", "c/0.log.20240314-230000.gz"],
         {"c/0.log": ["c/0.log.20240314-230000.gz", "c/0.log.20240314-235000", "c/0.log"]}),
        # logrotate dateformat: hourly, and with the epoch seconds
        (["s.log", "s.log-2024031423", "s.log-2024031422.gz"], {"s.log": ["s.log-2024031422.gz", "s.log-2024031423", "s.log"]}),
        (["s.log", "s.log-20240314-1710457200"], {"s.log": ["s.log-20240314-1710457200", "s.log"]}),
        # no current file: the newest segment names the log
        (["p.2020-06-02.log", "p.2020-06-01.log"], {"p.2020-06-02.log": ["p.2020-06-01.log", "p.2020-06-02.log"]}),
        # log4j2 filePattern '${name}.log.%d{yyyy-MM-dd}.%i.gz' after the live name
        (["app.log", "app.log.2022-03-09.0.gz", "app.log.2022-03-09.1.gz", "app.log.2022-03-08.3.gz"],
         {"app.log": ["app.log.2022-03-08.3.gz", "app.log.2022-03-09.0.gz", "app.log.2022-03-09.1.gz", "app.log"]}),
        # logback FixedWindowRollingPolicy 'app.%i.log' (a higher index is older), log4j2 'app-%i.log' (max: newer)
        (["app.log", "app.1.log", "app.2.log.gz"], {"app.log": ["app.2.log.gz", "app.1.log", "app.log"]}),
        (["app.log", "app-1.log.gz", "app-2.log"], {"app.log": ["app-1.log.gz", "app-2.log", "app.log"]}),
    ],
)
def test_rotated_segments_are_grouped_oldest_first(names, expected):
    assert group(names) == expected


@pytest.mark.parametrize(
    "names",
    [
        ["broker-1.log", "broker-2.log"],  # two brokers, not two segments
        ["broker.1.log", "broker.2.log"],  # the same without the live broker.log among them
        ["pulsar-broker-1.2020-06-01.log", "pulsar-broker-2.2020-06-01.log"],
        ["x/broker.log", "y/broker.log.1"],  # same name, other directory: other hosts
        ["broker.log"],
        ["broker.log.1"],  # one segment alone is just a log
        ["client-orders-7d9f.log", "client-billing-1b7e.log", "client-payments-5c2a.log.gz"],
        ["-", "broker.log"],
    ],
)
def test_different_logs_are_not_grouped(names):
    assert group(names) == {}


def test_parse_names_the_base_log():
    assert parse("logs/broker.log.3.gz").base == "logs/broker.log"
    assert parse("logs/app-2024-03-14-7.log.gz").base == "logs/app.log"
    # 'broker-1.log' is a segment of broker.log only when broker.log is an input too
    assert parse("broker-1.log").needs_live and group(["broker-1.log", "broker-2.log"]) == {}
    assert group(["broker-1.log", "broker.log"]) == {"broker.log": ["broker-1.log", "broker.log"]}


# ----------------------------------------------------------------------------- the CLI on split samples

RECORD_START = re.compile(r"^(?:\d\d:\d\d:\d\d|\[|\d{4}[-/])")


def _split(src: Path, cuts: list[int], dest: Path, base: str, mtimes: list[dt.datetime] | None = None) -> list[tuple[Path, int]]:
    """Cut ``src`` before the given (1-based) lines (each moved on to the next record start) into
    base.N…, base.1, base (the oldest gzipped). Returns [(segment, first line of src in it)], oldest first."""
    lines = src.read_text().splitlines(keepends=True)
    starts = [1]
    for c in cuts:
        while not RECORD_START.match(lines[c - 1]):
            c += 1
        starts.append(c)
    bounds = starts + [len(lines) + 1]
    n = len(starts)
    out = []
    for i in range(n):
        age = n - 1 - i
        name = base if age == 0 else f"{base}.{age}" + (".gz" if i == 0 else "")
        p = dest / name
        text = "".join(lines[bounds[i] - 1 : bounds[i + 1] - 1])
        if name.endswith(".gz"):
            with gzip.open(p, "wt") as f:
                f.write(text)
        else:
            p.write_text(text)
        if mtimes:
            t = calendar.timegm(mtimes[i].timetuple()) + 1
            os.utime(p, (t, t))
        out.append((p, bounds[i]))
    return out


def _segment_text(p: Path) -> list[str]:
    data = gzip.open(p, "rt").read() if p.suffix == ".gz" else p.read_text()
    return data.splitlines()


def _where(segs: list[tuple[Path, int]], line: int) -> tuple[str, int]:
    """The (segment name, line) that a line of the unsplit file became."""
    p, first = [s for s in segs if s[1] <= line][-1]
    return p.name, line - first + 1


def _compare(whole: dict, split: dict, src: Path, segs: list[tuple[Path, int]]) -> None:
    def norm_a(t: str) -> str:  # the log named the same way in both runs, directories left out
        return t.replace(str(src), "LOG").replace(str(src.parent) + "/", "")

    def norm_b(t: str) -> str:
        return t.replace(str(segs[-1][0]), "LOG").replace(str(segs[-1][0].parent) + "/", "")

    assert [norm_a(f["title"]) for f in whole["findings"]] == [norm_b(f["title"]) for f in split["findings"]]
    checked = 0
    for a, b in zip(whole["findings"], split["findings"]):
        assert (a["id"], a["severity"], a["confidence"], a["first_seen"], a["last_seen"]) == (
            b["id"], b["severity"], b["confidence"], b["first_seen"], b["last_seen"]
        ), a["title"]
        assert [norm_a(r) for r in a["confidence_reasons"]] == [norm_b(r) for r in b["confidence_reasons"]]
        assert norm_a(a["root_cause"]) == norm_b(b["root_cause"])
        assert len(a["subjects"]) == len(b["subjects"]), a["title"]
        for sa, sb in zip(a["subjects"], b["subjects"]):
            for k in ("attempts", "first_seen", "last_seen", "still_stuck", "stuck_seconds", "stall_seconds", "records", "count"):
                assert sa.get(k) == sb.get(k), (k, sa, sb)
            if sa.get("path") == str(src):  # a subject's path is the log: its current segment
                assert sb["path"] == str(segs[-1][0])
        # the same lines cited, each in the segment it went to
        want = [(Path(e["path"]).name, e["line"]) if e["path"] != str(src) else _where(segs, e["line"]) for e in a["evidence"]]
        got = [(Path(e["path"]).name, e["line"]) for e in b["evidence"]]
        assert got == want, a["title"]
        for e in b["evidence"]:  # and the cited line is that file's line
            seg = next((p for p, _ in segs if str(p) == e["path"]), None)
            if seg is not None:
                text = _segment_text(seg)[e["line"] - 1]
                assert text.rstrip() == e["text"].splitlines()[0].rstrip() or e["text"].splitlines()[0].strip() in text
                checked += 1
    assert checked, "no evidence line was cited in a segment"


def _no_overlap_note(text_report: str, segs) -> None:
    assert "overlaps no other input" not in text_report
    assert ", ".join(p.name for p, _ in segs) + " read as one log (rotated)" in text_report


def _copy_others(src_dir: Path, src: Path | None, dest: Path) -> list[Path]:
    """Copy every file of a sample directory but ``src`` (the one a test splits; None: all) to ``dest``."""
    out = []
    for f in src_dir.iterdir():
        if f != src:
            shutil.copy(f, dest / f.name)
            out.append(f)
    return out


def test_a_rotated_pulsar_broker_log_gives_the_findings_of_the_whole_log(cli, tmp_path):
    src_dir = SAMPLES / "pulsar-incident"
    src = src_dir / "pulsar-broker-1.2020-06-01.log"
    others = _copy_others(src_dir, src, tmp_path)
    # time-only stamps: each segment dated by its modification time (the time of its last line)
    ends = [dt.datetime(2020, 6, 1, 23, 10, 41), dt.datetime(2020, 6, 2, 0, 20, 20), dt.datetime(2020, 6, 2, 1, 29, 59)]
    segs = _split(src, [1476, 2994], tmp_path, "pulsar-broker-1.log", ends)
    whole_dir = tmp_path / "whole"
    whole_dir.mkdir()
    _copy_others(src_dir, None, whole_dir)
    whole = cli("analyze", whole_dir, "--tz", "UTC", "--format", "json")
    split = cli("analyze", tmp_path / "pulsar-broker-1.log*", *[tmp_path / f.name for f in others], "--tz", "UTC", "--format", "json")
    assert whole.code == 0 and split.code == 0, split
    w, s = whole.json(), split.json()
    assert [f["id"] for f in s["findings"]].count("pulsar.dangling-producer-future") == 2
    _compare(w, s, whole_dir / src.name, segs)
    # the dangling creation is in the oldest segment, the rejections go on into the newest
    f = s["findings"][0]
    sub = [x for x in f["subjects"] if x["path"] == str(segs[-1][0])]
    assert sub and all(x["dangling_creation_file"] == str(segs[0][0]) for x in sub)
    assert {Path(e["path"]).name for e in f["evidence"]} >= {"pulsar-broker-1.log.2.gz", "pulsar-broker-1.log.1", "pulsar-broker-1.log"}
    text = cli("analyze", tmp_path / "pulsar-broker-1.log*", *[tmp_path / f.name for f in others], "--tz", "UTC", "--format", "text", "-v")
    _no_overlap_note(text.out, segs)
    assert "no unload in these logs" not in text.out


def test_a_rotated_kafka_producer_log_gives_the_findings_of_the_whole_log(cli, tmp_path):
    src_dir = SAMPLES / "kafka-outage"
    src = src_dir / "orders-producer.log"
    whole_dir = tmp_path / "whole"
    whole_dir.mkdir()
    for name in ("billing-producer.log", "orders-producer.log"):
        shutil.copy(src_dir / name, whole_dir / name)
    shutil.copy(src_dir / "billing-producer.log", tmp_path / "billing-producer.log")
    segs = _split(src, [400, 900], tmp_path, "orders-producer.log")
    src = whole_dir / "orders-producer.log"
    whole = cli("analyze", whole_dir / "billing-producer.log", src, "--format", "json")
    split = cli("analyze", tmp_path / "billing-producer.log", *[p for p, _ in segs], "--format", "json")
    assert whole.code == 0 and split.code == 0, split
    w, s = whole.json(), split.json()
    assert len(s["findings"]) == len(w["findings"]) >= 3
    # billing-producer.log is the same content in another directory: compare its evidence by name
    _compare(w, s, src, segs)
    text = cli("analyze", tmp_path / "billing-producer.log", *[p for p, _ in segs], "--format", "text", "-v")
    _no_overlap_note(text.out, segs)


def test_a_rotated_sarama_log_gives_the_findings_of_the_whole_log(cli, tmp_path):
    src_dir = SAMPLES / "sarama-blackhole"
    src = src_dir / "orders-producer.log"
    segs = _split(src, [56, 78], tmp_path, "orders-producer.log")
    whole = cli("analyze", src, "--format", "json")
    split = cli("analyze", *[p for p, _ in segs], "--format", "json")
    assert whole.code == 0 and split.code == 0, split
    w, s = whole.json(), split.json()
    assert [f["id"] for f in s["findings"]] == ["sarama.retry-redial-stall"]
    _compare(w, s, src, segs)
    (sub,) = s["findings"][0]["subjects"]
    (wsub,) = w["findings"][0]["subjects"]
    assert (sub["from_file"], sub["from_line"]) == (str(segs[0][0]), wsub["from_line"])
    # the last line is in the current segment, which is the subject's path: no file named
    assert "to_file" not in sub and sub["path"] == str(segs[2][0]) and sub["to_line"] == wsub["to_line"] - segs[2][1] + 1


def test_timeline_puts_rotated_client_segments_on_the_broker_clock(cli, tmp_path):
    # the billing host's clock runs 1.7 s behind: its rotated segments share one estimate, as in
    # analyze, so timeline gives each line the time the unsplit log gives it, cited in its segment
    src_dir = SAMPLES / "pulsar-incident"
    src = src_dir / "client-billing-1b7e.log"
    _copy_others(src_dir, src, tmp_path)
    n = len(src.read_text().splitlines())
    segs = _split(src, [n // 3, 2 * n // 3], tmp_path, "client-billing.log")
    whole = [x for x in cli("timeline", "--tz", "UTC", src_dir, "--format", "ndjson").out.splitlines()]
    split = [x for x in cli("timeline", "--tz", "UTC", tmp_path, "--format", "ndjson").out.splitlines()]
    w = {(e["line"], e["event"]): e["ts"] for e in map(json.loads, whole) if e["path"].endswith("client-billing-1b7e.log")}
    s = {}
    for e in map(json.loads, split):
        if Path(e["path"]).name.startswith("client-billing.log"):
            first = next(start for p, start in segs if p.name == Path(e["path"]).name)
            s[(e["line"] + first - 1, e["event"])] = e["ts"]
    assert w and s == w
    # the shared estimate is said once, for the log, not once per segment
    t = cli("analyze", "--tz", "UTC", tmp_path, "--format", "text", "-v").out  # -v: the routine notes too
    notes = [x for x in t.splitlines() if "client-billing.log" in x and ": clock " in x]
    assert len(notes) == 1 and "1.70 s behind" in notes[0]


def test_an_empty_current_segment_keeps_the_log_s_layout(cli, tmp_path):
    # right after a rotation the current file is empty: the log is still the 2.x time-only broker log
    src_dir = SAMPLES / "pulsar-incident"
    src = src_dir / "pulsar-broker-1.2020-06-01.log"
    (tmp_path / "pulsar-broker-1.log.1").write_text(src.read_text())
    (tmp_path / "pulsar-broker-1.log").write_text("")
    _copy_others(src_dir, src, tmp_path)
    one = tmp_path / "one"
    one.mkdir()
    shutil.copy(src, one / "pulsar-broker-1.log")
    _copy_others(src_dir, src, one)
    date = ["--date", "pulsar-broker-1.log*=2020-06-01"]
    split = cli("analyze", tmp_path, "--tz", "UTC", *date, "--format", "json").json()
    whole = cli("analyze", one, "--tz", "UTC", *date, "--format", "json").json()
    key = lambda d: [(f["id"], f["title"], f["confidence"], f["confidence_reasons"]) for f in d["findings"]]  # noqa: E731
    assert key(split) == key(whole)


def test_a_log4j2_dated_archive_and_the_live_log_are_one_log_in_every_finding(cli, tmp_path):
    """An outage spanning app.log.2024-05-02.0.gz and app.log: one finding per subject, with the
    counts of the whole log and the live name (it came out twice, its counts split, before)."""
    src = SAMPLES / "kafka-outage" / "orders-producer.log"
    lines = src.read_text().splitlines(keepends=True)
    (tmp_path / "orders-producer.log.2024-05-02.0.gz").write_bytes(gzip.compress("".join(lines[:300]).encode()))
    (tmp_path / "orders-producer.log").write_text("".join(lines[300:]))
    whole = cli("analyze", "--tz", "UTC", src, "--format", "json").json()
    split = cli("analyze", "--tz", "UTC", tmp_path, "--format", "json").json()
    assert [f["id"] for f in split["findings"]] == [f["id"] for f in whole["findings"]]
    (dt_,) = [f for f in split["findings"] if f["id"] == "kafka.delivery-timeout"]
    assert dt_["title"].startswith("209 records expired undelivered on 3 partitions") and "orders-producer.log)" in dt_["title"]
    assert {s["path"] for s in dt_["subjects"]} == {str(tmp_path / "orders-producer.log")}


def test_pulsar_s_own_archive_names_and_a_live_segment_copied_without_its_time(cli, tmp_path):
    """Pulsar's conf/log4j2.yaml rolls ``pulsar-broker-1.log`` into
    ``pulsar-broker-1.log-%d{MM-dd-yyyy}-%i.log.gz`` at midnight. The archive's time-only stamps are
    dated by its name; the live segment, copied without its modification time (dated today, 2,400
    days away before), continues from where the archive ends. The set is one log: one dangling-future
    finding with the unload in the archive and the rejections in both (two before, the live half
    said "no unload in these logs")."""
    src_dir = SAMPLES / "pulsar-incident"
    src = src_dir / "pulsar-broker-1.2020-06-01.log"
    lines = src.read_text().splitlines(keepends=True)
    cut = next(i for i, x in enumerate(lines) if x.startswith("00:"))  # the first line after midnight
    archive = tmp_path / "pulsar-broker-1.log-06-01-2020-1.log.gz"
    archive.write_bytes(gzip.compress("".join(lines[:cut]).encode()))
    live = tmp_path / "pulsar-broker-1.log"
    live.write_text("".join(lines[cut:]))  # its modification time: now
    others = _copy_others(src_dir, src, tmp_path)
    whole = cli("analyze", src_dir, "--tz", "UTC", "--format", "json").json()
    # the live name given first, as a shell's glob sorts it
    r = cli("analyze", live, archive, *[tmp_path / f.name for f in others], "--tz", "UTC", "--format", "json")
    assert r.code == 0, r
    split = r.json()
    ins = {Path(i["path"]).name: i for i in split["inputs"]}
    assert ins[archive.name]["date_source"] == "date in the file name"
    assert ins[live.name]["first_ts"].startswith("2020-06-02T00:"), ins[live.name]
    # its own time (now) would put it years later: said, with what to do if that were right
    assert ins[live.name]["date_source"].startswith(f"the rotated segment before it ({archive} ends 2020-06-01 23:59:59); "
                                                    "its modification time would date it "), ins[live.name]["date_source"]
    assert [Path(i["path"]).name for i in split["inputs"]].index(archive.name) < [Path(i["path"]).name for i in split["inputs"]].index(live.name)
    assert [(f["id"], f["severity"], f["first_seen"], f["last_seen"]) for f in split["findings"]] == [
        (f["id"], f["severity"], f["first_seen"], f["last_seen"]) for f in whole["findings"]]
    stuck = [f for f in split["findings"] if f["id"] == "pulsar.dangling-producer-future"]
    assert all(f["cause"] and f["cause"]["kind"] == "bundle-unload" for f in stuck)
    assert len(split["incidents"]) == len(whole["incidents"])
    text = cli("analyze", live, archive, *[tmp_path / f.name for f in others], "--tz", "UTC").out
    assert "no unload in these logs" not in text and " days)" not in text
    assert f"pulsar-broker-1.log: dated as the continuation of {archive.name}; its file time would date it " in text.replace("\n  ", " ")
    # with its time kept (a copy that preserves it), nothing to say
    t = calendar.timegm(dt.datetime(2020, 6, 2, 1, 30).timetuple())
    os.utime(live, (t, t))
    kept = cli("analyze", live, archive, *[tmp_path / f.name for f in others], "--tz", "UTC", "--format", "json").json()
    (i,) = [i for i in kept["inputs"] if Path(i["path"]).name == live.name]
    assert i["date_source"] == f"the rotated segment before it ({archive} ends 2020-06-01 23:59:59)"
