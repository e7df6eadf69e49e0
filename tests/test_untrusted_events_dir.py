"""An events directory is untrusted input (it travels between machines): its files are read only as
regular files inside it, within size limits, as strict JSON; its locations are opened with the
reader's checks. Each case once hung, read gigabytes, printed invalid JSON or was an internal error."""

from __future__ import annotations

import json
import os

import pytest

from conftest import SAMPLES, run_process


@pytest.fixture()
def store(tmp_path):
    d = tmp_path / "ev"
    r = run_process("events", "--tz", "UTC", "--format", "parquet", "-o", d, SAMPLES / "kafka-outage")
    assert r.code == 0, r
    return d


def _one_line_refusal(r, *words):
    assert r.code == 2, r
    assert len(r.err.strip().splitlines()) == 1 and "Traceback" not in r.err and "internal error" not in r.err, r.err
    for w in words:
        assert w in r.err, r.err


def test_inputs_json_as_a_link_to_dev_zero_is_refused(store):
    (store / "inputs.json").unlink()
    (store / "inputs.json").symlink_to("/dev/zero")
    _one_line_refusal(run_process("analyze", "--events", store, timeout=60), "inputs.json", "outside the directory")


def test_a_fifo_among_its_files_is_refused_not_waited_on(store):
    os.remove(store / "coverage.parquet")
    os.mkfifo(store / "coverage.parquet")
    _one_line_refusal(run_process("analyze", "--events", store, timeout=60), "coverage.parquet", "not a regular file")
    part = next((store / "events").glob("system=*/*.parquet"))
    os.remove(store / "coverage.parquet")
    os.remove(part)
    os.mkfifo(part)
    _one_line_refusal(run_process("analyze", "--events", store, timeout=60), "not a regular file")


def test_nan_in_inputs_json_is_refused(store):
    text = (store / "inputs.json").read_text()
    doc = json.loads(text)
    doc["inputs"][0]["layout_match_rate"] = float("nan")
    (store / "inputs.json").write_text(json.dumps(doc))  # Python writes NaN, which JSON does not allow
    _one_line_refusal(run_process("analyze", "--events", store, "--format", "json", timeout=60), "inputs.json")


def test_a_location_that_is_a_fifo_does_not_hang_the_report(tmp_path):
    import shutil

    work = tmp_path / "work"
    shutil.copytree(SAMPLES / "kafka-outage", work / "logs")
    r = run_process("events", "--tz", "UTC", "--format", "parquet", "-o", "ev", "logs", cwd=work)
    assert r.code == 0, r
    store = work / "ev"
    doc = json.loads((store / "inputs.json").read_text())
    fifo = tmp_path / "not-a-log"
    os.mkfifo(fifo)
    doc["locations"] = {k: str(fifo) for k in doc["locations"]}
    (store / "inputs.json").write_text(json.dumps(doc))
    elsewhere = tmp_path / "elsewhere"  # away from the logs: their names do not resolve, the locations are used
    elsewhere.mkdir()
    out = tmp_path / "pm.md"
    r = run_process("analyze", "--events", store, "-o", out, cwd=elsewhere, timeout=60)
    assert r.code == 0, r
    assert "not a regular file" in out.read_text(encoding="utf-8")
