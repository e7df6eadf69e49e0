"""--memory-budget: past it the events table goes to Parquet files and later stages read it back by
lazy queries (logsleuth/recognise/spill.py). Whatever the budget, a user sees the same answer."""

from __future__ import annotations

import pytest

from conftest import SAMPLES

SAMPLE_DIRS = sorted(p.name for p in SAMPLES.iterdir() if p.is_dir() and p.name != "generators")


@pytest.mark.parametrize("sample", SAMPLE_DIRS)
def test_every_sample_gives_the_same_answers_with_its_events_on_disk(cli, sample):
    for cmd in (["analyze", "--format", "json"], ["events", "--format", "ndjson"]):
        plain = cli(*cmd, "--tz", "UTC", SAMPLES / sample)
        spilled = cli(*cmd, "--tz", "UTC", SAMPLES / sample, "--memory-budget", "0")
        assert (spilled.code, spilled.out, spilled.err) == (plain.code, plain.out, plain.err), (sample, cmd)


def test_the_budget_is_a_size_and_the_spill_directory_must_take_the_events(cli, tmp_path):
    r = cli("analyze", "--tz", "UTC", SAMPLES / "pulsar-incident", "--memory-budget", "12x")
    assert r.code == 2 and "--memory-budget '12x'" in r.err and "Traceback" not in r.err
    missing = {"LOGSLEUTH_SPILL_DIR": str(tmp_path / "missing")}
    r = cli("events", "--tz", "UTC", SAMPLES / "pulsar-incident", "--memory-budget", "0", env=missing)
    assert r.code == 2 and r.err.count("\n") == 1 and "LOGSLEUTH_SPILL_DIR" in r.err and r.out == "", r
    r = cli("events", "--tz", "UTC", SAMPLES / "pulsar-incident", "--memory-budget", "1G", env=missing)
    assert r.code == 0 and r.out.count("\n") > 1000  # within the budget nothing goes there
    # a spilled run in its own process leaves nothing behind
    spill = tmp_path / "spill"
    spill.mkdir()
    r = cli("events", "--tz", "UTC", SAMPLES / "pulsar-incident", "--memory-budget", "0", env={"LOGSLEUTH_SPILL_DIR": str(spill)}, process=True)
    assert r.code == 0 and r.out.count("\n") > 1000
    assert list(spill.iterdir()) == []
