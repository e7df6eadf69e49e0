"""The events' record texts live outside the events table (ingest/texts.py): what a user sees must
not change for it, whatever the input (a file, a gzip, stdin, an envelope), and the temporary
directory that holds them must not outlive the run, even a killed one."""

from __future__ import annotations

import gc
import gzip
import json
import os
import subprocess
import sys
import tempfile

from conftest import ROOT, SAMPLES, run_process

BROKER = SAMPLES / "pulsar-incident" / "pulsar-broker-1.2020-06-01.log"
INCIDENT = SAMPLES / "pulsar-incident"


def _texts_dirs(where) -> list:
    return sorted(p.name for p in where.iterdir() if p.name.startswith("logsleuth-texts-"))


def _evidence_matches_its_lines(doc: dict, read) -> int:
    """Every evidence line's text is the file's line at that number (its first line, for a record
    that spans several); returns how many were checked."""
    n = 0
    for f in doc["findings"]:
        for e in f["evidence"]:
            lines = read(e["path"])
            assert e["text"], e
            assert lines[e["line"] - 1] == e["text"].split("\n")[0], (e, lines[e["line"] - 1])
            n += 1
    return n


def test_evidence_and_events_quote_the_lines_of_a_file_a_gzip_and_stdin(cli, tmp_path):
    # the incident's broker log three ways: as it is, compressed, and on stdin
    gz = tmp_path / "broker.log.gz"
    gz.write_bytes(gzip.compress(BROKER.read_bytes()))
    plain = BROKER.read_text().splitlines()
    seen = {}
    for args, stdin in (([str(BROKER)], None), ([str(gz)], None), (["-"], BROKER.read_bytes())):
        r = cli("events", *args, "--tz", "UTC", "--format", "grep", input=stdin)
        assert r.code == 0, r
        out = r.out.splitlines()
        assert len(out) > 20
        for x in out:
            _, n, text = x.split(":", 2)
            assert plain[int(n) - 1] == text, x
        seen[args[0]] = [x.split(":", 1)[1] for x in out]
    assert seen[str(BROKER)] == seen[str(gz)] == seen["-"]

    # the whole incident: the cited lines of every finding, their texts fetched after the detectors ran
    r = cli("analyze", INCIDENT, "--tz", "UTC", "--format", "json")
    assert r.code == 0, r
    doc = r.json()
    assert doc["findings"]

    def read(path: str) -> list[str]:
        p = INCIDENT / path if not os.path.isabs(path) else path
        data = gzip.decompress(open(p, "rb").read()) if str(p).endswith(".gz") else open(p, "rb").read()
        return data.decode().splitlines()

    assert _evidence_matches_its_lines(doc, read) >= 5


def test_ndjson_and_csv_carry_each_events_text_in_an_envelope(cli, tmp_path):
    # docker's json-file envelope: the text is the JSON line, the message what it wraps
    src = BROKER.read_text().splitlines()[:400]
    log = tmp_path / "broker-json.log"
    log.write_text("".join(json.dumps({"log": s + "\n", "stream": "stdout", "time": "2020-06-01T10:00:00.000000000Z"}) + "\n" for s in src))
    wrapped = log.read_text().splitlines()
    r = cli("events", log, "--tz", "UTC", "--format", "ndjson")
    assert r.code == 0, r
    rows = [json.loads(x) for x in r.out.splitlines()]
    assert len(rows) > 10
    for row in rows:
        assert row["text"] == wrapped[row["line"] - 1]
        assert row["message"] and row["message"] in row["text"].replace('\\"', '"')
    r = cli("events", log, "--tz", "UTC", "--format", "csv")
    assert r.code == 0, r
    assert r.out.count("\n") >= len(rows) + 1 and '"log"' not in r.out.splitlines()[0]


def test_no_temporary_directory_outlives_a_run(cli, tmp_path, monkeypatch):
    # in this process: each run's directory is gone when the run ends
    from logsleuth.ingest import texts

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    made = []
    directory = texts.TextStore._directory

    def recorded(self):
        d = directory(self)
        made.append(d)
        return d

    monkeypatch.setattr(texts.TextStore, "_directory", recorded)
    for args in (("analyze", INCIDENT), ("events", INCIDENT, "--format", "ndjson"), ("timeline", INCIDENT, "--format", "lines")):
        made.clear()
        r = cli(*args, "--tz", "UTC")
        assert r.code == 0, r
        gc.collect()
        assert made and all(d.parent == tmp_path for d in made), args  # the texts were written there
        assert _texts_dirs(tmp_path) == [], args

    # a real process, and a directory a killed run left behind (its process is gone)
    tmp = tmp_path / "t"
    tmp.mkdir()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True).stdout.strip()
    left = tmp / f"logsleuth-texts-{dead}-abcd"
    left.mkdir()
    (left / "part-0.arrow").write_bytes(b"x" * 100)
    r = run_process("analyze", INCIDENT, "--tz", "UTC", "--format", "json", env={"TMPDIR": str(tmp)})
    assert r.code == 0, r
    assert json.loads(r.out)["findings"]
    assert _texts_dirs(tmp) == []  # its own removed at exit, the stale one on the way


def test_a_live_runs_directory_is_left_alone(tmp_path):
    # another run still going (this test's own process id stands for it): its texts are not touched
    env = dict(os.environ, TMPDIR=str(tmp_path))
    live = tmp_path / f"logsleuth-texts-{os.getpid()}-wxyz"
    live.mkdir()
    r = subprocess.run([sys.executable, "-m", "logsleuth", "events", "--tz", "UTC", str(BROKER)], capture_output=True, text=True, env=env, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert _texts_dirs(tmp_path) == [live.name]


def test_texts_stay_off_a_ram_backed_tmp(monkeypatch, tmp_path):
    # /tmp on tmpfs (Debian 13, Fedora, Arch; many containers): the texts would take memory again, so
    # they go to /var/tmp (on disk by convention) unless TMPDIR says where
    import pytest

    from logsleuth.ingest import texts

    if not texts._on_tmpfs("/dev/shm"):
        pytest.skip("no tmpfs at /dev/shm here")
    monkeypatch.delenv("TMPDIR", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", "/dev/shm")
    if not texts._on_tmpfs("/var/tmp") and os.access("/var/tmp", os.W_OK):
        assert texts.base_dir() == "/var/tmp"
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert texts.base_dir() == str(tmp_path)  # the user's choice wins


def test_a_batch_written_while_the_program_ends_leaves_nothing(monkeypatch, tmp_path):
    # Ctrl-C: the reader thread may still hand over a batch while the exit removes the directory; the
    # removal and every write take one lock, and nothing is written once the store is closed
    import polars as pl

    from logsleuth.ingest.texts import TextStore, with_raw

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    store = TextStore()
    add = store.sink("a.log")
    add(pl.DataFrame({"line": [3, 3, 9], "raw": ["three", "three", "nine"]}))
    assert len(_texts_dirs(tmp_path)) == 1
    got = with_raw(pl.DataFrame({"file": ["a.log", "a.log", "a.log"], "line": [9, 3, 4]}), store)
    assert got["raw"].to_list() == ["nine", "three", None]  # in the frame's order; an unknown line has none
    store.close()
    assert _texts_dirs(tmp_path) == []
    add(pl.DataFrame({"line": [12], "raw": ["twelve"]}))  # too late: dropped, no directory made again
    assert _texts_dirs(tmp_path) == []


def test_stamps_texts_leave_the_table_but_not_the_parquet_outputs(cli, tmp_path):
    # the stamp as written (ts_text) is kept with the record's text, not in the events table: the
    # events directory and the timeline's Parquet still hold it, row for row as the log wrote it
    import polars as pl

    from logsleuth.cli.options import read_options
    from logsleuth.recognise import events as ev
    from logsleuth.recognise.packs import load_packs

    got = ev.collect([str(BROKER)], read_options(["UTC"], None, None, None), load_packs(None), ev.EventFilter())
    assert got.events.height > 20 and "ts_text" not in got.events.columns and "raw" not in got.events.columns
    got.texts.close()

    out = tmp_path / "ev"
    r = cli("events", BROKER, "--tz", "UTC", "--format", "parquet", "-o", out)
    assert r.code == 0, r
    table = pl.read_parquet(sorted((out / "events").glob("system=*/part-*.parquet")))  # the parts, 50,000 events each
    cols = table.columns
    assert cols[cols.index("line") + 1 : cols.index("line") + 3] == ["raw", "ts_text"]
    lines = BROKER.read_text().splitlines()
    for line, raw, stamp in table.select("line", "raw", "ts_text").iter_rows():
        assert raw.split("\n")[0] == lines[line - 1] and stamp and stamp in raw, (line, stamp)
    r = cli("timeline", BROKER, "--tz", "UTC", "--format", "parquet", "-o", tmp_path / "t.parquet")
    assert r.code == 0, r
    tl = pl.read_parquet(tmp_path / "t.parquet")
    assert tl["ts_text"].null_count() == 0 and tl.height == table.height
