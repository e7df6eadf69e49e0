"""Scale: memory stays bounded as the input grows (at a size CI can afford; the big run is the
benchmark's job), and the events table round-trips through Parquet for `analyze --events`."""

from __future__ import annotations

import shutil
from pathlib import Path

import os
import subprocess
import sys

import pytest

from conftest import ROOT, SAMPLES

GEN = ROOT / "benchmarks" / "gen_broker_log.py"


# Linux keeps a forked child's peak RSS from before its exec: a CLI started straight from this
# (large) test process would report this process's size. A small launcher starts it instead.
_LAUNCH = (
    "import os, subprocess, sys\n"
    "p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)\n"
    "err = p.stderr.read()\n"
    "_, status, ru = os.wait4(p.pid, 0)\n"
    "sys.stderr.buffer.write(err[-2000:])\n"
    "print(os.waitstatus_to_exitcode(status), ru.ru_maxrss, ru.ru_utime + ru.ru_stime)\n"
)


def cpu_seconds(*args: str, timeout: float = 300) -> tuple[int, float, float, str]:
    """(exit code, peak RSS in MB, CPU-s of the process, stderr): CPU, not wall-clock time, so a
    busy machine does not fail the test (issue 27)."""
    e = dict(os.environ, TZ="UTC")
    e.pop("LOGSLEUTH_DEBUG", None)
    r = subprocess.run([sys.executable, "-c", _LAUNCH, sys.executable, "-m", "logsleuth", *args],
                       capture_output=True, env=e, text=True, timeout=timeout, cwd=Path(__file__).resolve().parent.parent)
    code, kb, cpu = r.stdout.split()
    return int(code), int(kb) / 1024, float(cpu), r.stderr


def peak_rss_mb(*args: str, env: dict | None = None) -> float:
    """Run the CLI and return the peak RSS of that process (os.wait4, in a launcher)."""
    env = dict(os.environ, TZ="UTC", **(env or {}))
    r = subprocess.run([sys.executable, "-c", _LAUNCH, sys.executable, "-m", "logsleuth", *args], capture_output=True, env=env, text=True)
    code, kb = (int(x) for x in r.stdout.split()[:2])
    assert code in (0, 1), r.stderr
    return kb / 1024


def generated(d, sizes: tuple[int, ...], event_rate: str) -> dict:
    """{lines: a generated broker log of about that many lines} (benchmarks/gen_broker_log.py)."""
    out = {}
    for n in sizes:
        f = d / f"broker-{n}-ev{event_rate}.log"
        subprocess.run([sys.executable, str(GEN), "--lines", str(n), "--out", str(f), "--event-rate", event_rate], check=True, capture_output=True)
        out[n] = f
    return out


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    return generated(tmp_path_factory.mktemp("scale"), (150_000, 600_000), "0.005")


def test_memory_is_bounded(logs):
    small, big = logs[150_000], logs[600_000]
    assert big.stat().st_size > 3.5 * small.stat().st_size
    for cmd in (["inspect", "--format", "json"], ["events", "--format", "grep"], ["analyze", "--format", "json"]):
        a = peak_rss_mb(*cmd, str(small), "--tz", "UTC")
        b = peak_rss_mb(*cmd, str(big), "--tz", "UTC")
        # 4x the input: memory may grow by the events kept (0.5 % of lines), not with the input
        assert b < a + 80, (cmd, a, b)
        assert b < 400, (cmd, b)


def test_events_round_trip_through_parquet(cli, tmp_path):
    store = tmp_path / "store"
    r = cli("events", "--tz", "UTC", SAMPLES / "pulsar-incident", "--format", "parquet", "-o", store)
    assert r.code == 0 and "wrote" in r.err, r
    assert (store / "inputs.json").exists() and list((store / "events").glob("system=*/*.parquet"))
    direct = cli("analyze", "--tz", "UTC", SAMPLES / "pulsar-incident", "--format", "json").json()
    stored = cli("analyze", "--events", store, "--format", "json").json()

    def key(doc):
        return sorted((f["id"], f["severity"], tuple(sorted((s.get("connection"), s.get("producer_id"), s.get("attempts")) for s in f["subjects"] if "attempts" in s))) for f in doc["findings"])

    assert key(direct) == key(stored)
    assert [i["path"] for i in direct["inputs"]] == [i["path"] for i in stored["inputs"]]
    r = cli("events", "--tz", "UTC", SAMPLES / "pulsar-incident", "--format", "parquet", "-o", store)
    assert r.code == 2 and "not empty" in r.err
    r = cli("analyze", "--events", tmp_path)
    assert r.code == 2 and "not an events directory" in r.err


def test_an_events_dir_read_from_elsewhere_finds_its_logs_or_says_it_cannot(cli, tmp_path):
    # the sarama detector reads the application's own lines again (they are not events): an events
    # dir written with relative paths and analysed from another directory still finds the logs
    logs = tmp_path / "logs"
    shutil.copytree(SAMPLES / "sarama-blackhole", logs)
    store = tmp_path / "store"
    r = cli("events", "--tz", "UTC", "logs", "--format", "parquet", "-o", store, cwd=tmp_path)
    assert r.code == 0, r
    direct = cli("analyze", "--tz", "UTC", logs, "--format", "json").json()
    away = tmp_path / "elsewhere"
    away.mkdir()
    stored = cli("analyze", "--events", store, "--format", "json", cwd=away).json()

    def key(doc):
        return [(f["id"], f["title"], f["confidence"]) for f in doc["findings"]]

    assert key(stored) == key(direct) and key(direct)
    # the logs are gone: the notes say what could not be read (not a silent, weaker answer)
    shutil.rmtree(logs)
    gone = cli("analyze", "--events", store, "--format", "json", cwd=away).json()
    assert any("cannot read logs/orders-producer.log again" in n for i in gone["inputs"] for n in i["notes"])


@pytest.fixture(scope="module")
def storm(tmp_path_factory):
    """Two logs of the same length: a quiet one, and a reconnect storm where about half the lines
    are producer/connection events."""
    d = tmp_path_factory.mktemp("storm")
    out = {}
    for name, rate in (("quiet", "0.005"), ("storm", "0.5")):
        f = d / f"broker-{name}.log"
        subprocess.run([sys.executable, str(GEN), "--lines", "300000", "--out", str(f), "--event-rate", rate], check=True, capture_output=True)
        out[name] = f
    return out


def test_memory_per_event_is_bounded(storm, cli):
    """What each event costs at the peak of a run: the peak-RSS difference between the storm and
    the quiet log, per event. jemalloc is told to give freed pages back at once, so the figure is
    the memory in use (the events table, the chunks in flight, what the detectors build), not the
    freed pages the allocator would keep for a while, which vary with the machine's load. About
    400 B here. With level, logger, thread and severity as strings and the stamps' texts in the
    table it was 517 B; with the records' texts in it too, 714 B (and 730-760 B before the table's
    columns were made one chunk each): a column copied per event, a text back in the table, or a
    detector copying whole rows, goes past 480. (The table in memory: --memory-budget off; past the
    budget it is on disk, tested below.)"""
    counts = {k: cli("analyze", "--tz", "UTC", f, "--format", "json").json()["summary"]["events"] for k, f in storm.items()}
    assert counts["storm"] > 100_000 > 10 * counts["quiet"], counts
    env = {"_RJEM_MALLOC_CONF": "dirty_decay_ms:0,muzzy_decay_ms:0"}
    quiet = peak_rss_mb("analyze", str(storm["quiet"]), "--tz", "UTC", "--format", "json", "--memory-budget", "off", env=env)
    busy = peak_rss_mb("analyze", str(storm["storm"]), "--tz", "UTC", "--format", "json", "--memory-budget", "off", env=env)
    per_event = (busy - quiet) * 2**20 / (counts["storm"] - counts["quiet"])
    assert per_event < 480, (quiet, busy, counts, per_event)


@pytest.fixture(scope="module")
def storms(tmp_path_factory):
    """Reconnect storms (about half the lines producer/connection events) of 1x and 4x the length."""
    return generated(tmp_path_factory.mktemp("storms"), (250_000, 1_000_000), "0.5")


def test_memory_stays_within_the_budget_past_which_events_go_to_disk(storms, cli):
    """--memory-budget: past it the events go to Parquet files and are read back by lazy queries.
    The storm of 1M lines holds about 450k events, some 180 MB of events table in memory, well
    past a 16 MB budget. With the budget, 4x the input may add only what the detectors' own
    answers grow by (the rejections' keys and times: measured +24 MB here), not the table (+142
    MB without it); the report is the same either way. jemalloc gives freed pages back at once, so
    the peaks are memory in use, not what the allocator keeps for a while."""
    small, big = storms[250_000], storms[1_000_000]
    args = ("analyze", "--tz", "UTC", "--format", "json")
    plain = cli(*args, big).out
    spilled = cli(*args, big, "--memory-budget", "16M").out
    assert spilled == plain
    events = __import__("json").loads(plain)["summary"]["events"]
    assert events > 400_000, events
    env = {"_RJEM_MALLOC_CONF": "dirty_decay_ms:0,muzzy_decay_ms:0"}
    off = {n: peak_rss_mb(*args, str(f), "--memory-budget", "off", env=env) for n, f in storms.items()}
    on = {n: peak_rss_mb(*args, str(f), "--memory-budget", "16M", env=env) for n, f in storms.items()}
    grew_off, grew_on = off[1_000_000] - off[250_000], on[1_000_000] - on[250_000]
    assert grew_off > 90, off  # the table in memory: what the budget is for
    assert grew_on < grew_off / 3, (off, on)
    assert on[1_000_000] < off[1_000_000] - 60, (off, on)


def test_the_events_store_takes_the_memory_of_a_plain_run(storm, tmp_path):
    """``events -o`` writes the table a slice at a time with its texts, and ``analyze --events``
    reads it back a slice at a time within the memory budget: each peaks about where ``analyze``
    of the same log does (issue 31: they took 6x and 5x as much on a 1.5M-line storm, holding the
    whole table with its texts)."""
    log = str(storm["storm"])
    env = {"_RJEM_MALLOC_CONF": "dirty_decay_ms:0,muzzy_decay_ms:0"}  # the memory in use (see above), not the allocator's moods
    plain = peak_rss_mb("analyze", "--tz", "UTC", "--format", "json", log, env=env)
    store = tmp_path / "store"
    written = peak_rss_mb("events", "--tz", "UTC", "--format", "parquet", "-o", str(store), log, env=env)
    read = peak_rss_mb("analyze", "--events", str(store), "--format", "json", env=env)
    # (1.25 for the write: since the matcher is compiled, more stays in use after reading a
    # 300k-line storm — 198 against 172 MB, with or without the reading core; on 2026-12-05 the
    # same storm measured 238-252 MB for analyze and 275-299 MB for events -o, 1.16-1.19x, at this
    # session's start (c490794) as at its end, run alone or beside other tests: not this session's
    # change; the cause is not found yet, said so in the closing note of issue 30 — analyze's own
    # later peak hides it and events -o's does not)
    assert written < plain * 1.25, (plain, written)
    assert read < plain * 1.1, (plain, read)
