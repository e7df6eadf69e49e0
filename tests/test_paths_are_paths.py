"""A path is a path, not a glob: a '[' or '*' in TMPDIR, the spill directory or an events directory's
name is a character (Polars reads its paths as globs unless told not to)."""

from __future__ import annotations

from conftest import SAMPLES, run_process


def test_brackets_in_tmpdir_the_spill_and_an_events_directory(tmp_path):
    odd = tmp_path / "tmp[1]*"
    odd.mkdir()
    env = {"TMPDIR": str(odd), "LOGSLEUTH_SPILL_DIR": str(odd)}
    plain = run_process("analyze", "--tz", "UTC", "--format", "json", SAMPLES / "kafka-outage")
    spilled = run_process("analyze", "--tz", "UTC", "--format", "json", "--memory-budget", "0", SAMPLES / "kafka-outage", env=env)
    assert spilled.code == 0, spilled
    assert spilled.json()["findings"] == plain.json()["findings"]
    store = tmp_path / "events[a]"
    r = run_process("events", "--tz", "UTC", "--format", "parquet", "-o", store, SAMPLES / "kafka-outage", env=env)
    assert r.code == 0, r
    again = run_process("analyze", "--format", "json", "--events", store, env=env)
    assert again.code == 0, again
    assert [f["id"] for f in again.json()["findings"]] == [f["id"] for f in plain.json()["findings"]]
    assert [p.name for p in odd.iterdir()] == []  # and nothing left behind
