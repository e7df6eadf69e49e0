"""Big plain files read in byte ranges on a Dask cluster (``--split-size``, docs/scale.md): a
record that straddles a range's end belongs to the range holding its first line, line numbers
are the file's, time-only stamps get the day a read of the whole file gives them — so findings,
events and ``path:line`` are byte-identical to a plain run's, whatever the range size."""

from __future__ import annotations

import datetime as dt
import json
import os
import random

import pytest

from conftest import SAMPLES, run

pytest.importorskip("distributed", reason="the dask extra (pip install '.[dask]') is part of the test install")

ALL = sorted(p for p in SAMPLES.iterdir() if p.is_dir() and p.name != "generators")
ONE_TASK = "is read by one task"


def _cli(*args, env=None):
    return run(*map(str, args), process=True, env=env, timeout=600)


def _same_but_notes(plain, split) -> None:
    """The same exit code and output; stderr the same but for the notes naming a big file that
    is read whole (compressed: no byte offset is a line start)."""
    assert split.code == plain.code, (plain, split)
    assert split.out == plain.out, split
    assert [ln for ln in split.err.splitlines() if ONE_TASK not in ln] == plain.err.splitlines(), split


@pytest.mark.parametrize("size, samples", [
    ("64K", ALL),  # every bundled sample at once: ~130 ranges
    ("4K", [SAMPLES / "kafka-outage", SAMPLES / "kafka-callback", SAMPLES / "sarama-cluster",  # ~250 ranges of a few KB
            SAMPLES / "pulsar-incident" / "client-payments-5c2a.log.gz"]),
])
def test_samples_split_in_small_ranges_give_the_plain_runs_findings_and_events(size, samples):
    """Java stack traces, JSON loggers, wrappers, time-only stamps crossing midnight, gzip'd
    segments, in ranges of a few KB: range ends inside multi-line records by the hundred."""
    threads = ["--engine", "dask", "--scheduler", "threads", "--split-size", size]
    plain = _cli("analyze", "--tz", "UTC", "-f", "json", *samples)
    assert plain.code == 0 and len(plain.json()["findings"]) >= 3, plain
    split = _cli("analyze", "--tz", "UTC", "-f", "json", *samples, *threads)
    _same_but_notes(plain, split)
    if size == "4K":
        assert "client-payments-5c2a.log.gz (0.0 MiB) is read by one task: compressed" in split.err  # said, not split
    if samples is ALL:
        return
    plain = _cli("events", "--tz", "UTC", "-f", "grep", *samples)
    split = _cli("events", "--tz", "UTC", "-f", "grep", *samples, *threads)
    _same_but_notes(plain, split)


def _time_only_log(path, seed: int) -> int:
    """A Java client's log with time-only stamps over three midnights (one of them with lines of
    the day before logged a few ms after midnight), stack traces, and an outage; returns lines."""
    rnd = random.Random(seed)
    t = dt.datetime(2024, 3, 8, 21, 0, 0)
    out: list[str] = []
    n = 0
    while t < dt.datetime(2024, 3, 11, 2, 0, 0):
        n += 1
        t += dt.timedelta(seconds=rnd.choice([1, 7, 30, 90]), milliseconds=rnd.randint(0, 999))
        stamp = t.strftime("%H:%M:%S.") + f"{t.microsecond // 1000:03d}"
        if t.hour == 0 and t.minute == 0 and n % 3 == 0:  # a thread that logged just before midnight, written after
            late = t - dt.timedelta(seconds=t.second + 1)
            out.append(f"{late:%H:%M:%S}.998 [kafka-producer-network-thread | producer-1] INFO  o.a.k.c.producer.internals.Sender - "
                       "[Producer clientId=producer-1] late line")
        if dt.datetime(2024, 3, 9, 23, 50) <= t <= dt.datetime(2024, 3, 10, 0, 20):  # the outage, across a midnight
            out.append(f"{stamp} [kafka-producer-network-thread | producer-1] WARN  org.apache.kafka.clients.NetworkClient - "
                       "[Producer clientId=producer-1] Connection to node 2 (kafka-2/10.0.0.7:9092) could not be established. "
                       "Broker may not be available.")
            if n % 4 == 0:
                out.append(f"{stamp} [main] ERROR com.example.OrderPublisher - Failed to send order {n} to orders")
                out.append("org.apache.kafka.common.errors.TimeoutException: Expiring 12 record(s) for orders-4:120009 ms has "
                           "passed since batch creation")
                out.extend(f"\tat com.example.OrderPublisher.frame{i}(OrderPublisher.java:{40 + i})" for i in range(rnd.randint(1, 25)))
            continue
        out.append(f"{stamp} [main] INFO  com.example.OrderPublisher - sent order {n} to orders-{n % 6}")
    path.write_text("\n".join(out) + "\n")
    mtime = dt.datetime(2024, 3, 11, 2, 0, 5, tzinfo=dt.timezone.utc).timestamp()
    os.utime(path, (mtime, mtime))
    return len(out)


def test_time_only_stamps_over_several_midnights_dated_by_the_file_time(tmp_path):
    """Each range's records get the day a whole read gives them: the midnights of the ranges
    before counted (a first pass per range), the last line dated by the file's modification
    time; range ends fall on and around midnights."""
    log = tmp_path / "orders-app.log"
    lines = _time_only_log(log, 7)
    size = log.stat().st_size
    plain = _cli("analyze", "--tz", "UTC", "-f", "json", log)
    assert plain.code == 0, plain
    got = plain.json()
    assert got["inputs"][0]["midnight_rollovers"] == 3 and got["findings"], got["inputs"][0]
    events = _cli("events", "--tz", "UTC", "-f", "ndjson", log)
    for size_arg in ("24K", "61K", str(size // 3)):  # 22, 9 and 3 ranges
        args = ["--engine", "dask", "--scheduler", "threads", "--split-size", size_arg]
        _same_but_notes(plain, _cli("analyze", "--tz", "UTC", "-f", "json", log, *args))
        _same_but_notes(events, _cli("events", "--tz", "UTC", "-f", "ndjson", log, *args))
    assert lines > 1000
    # and dated by --date (the first line's day) instead
    plain = _cli("analyze", "--tz", "UTC", "--date", "2024-03-08", "-f", "json", log)
    split = _cli("analyze", "--tz", "UTC", "--date", "2024-03-08", "-f", "json", log, "--engine", "dask", "--scheduler", "threads",
                 "--split-size", "40K")
    _same_but_notes(plain, split)


def test_a_process_cluster_splits_a_file_and_show_finds_its_lines(tmp_path):
    """Two worker processes, a file in 14 ranges: the same report; a ``path:line`` of the split
    run's evidence is the line ``show`` prints (the file's own line numbers)."""
    log = tmp_path / "orders-producer.log"
    log.write_bytes((SAMPLES / "kafka-outage" / "orders-producer.log").read_bytes())
    plain = _cli("analyze", "--tz", "UTC", "-f", "json", log)
    split = _cli("analyze", "--tz", "UTC", "-f", "json", log, "--engine", "dask", "--workers", "2", "--split-size", "11K")
    _same_but_notes(plain, split)
    ev = next(e for f in split.json()["findings"] for e in f["evidence"] if e["line"] > 1000)
    text = log.read_text().splitlines()[ev["line"] - 1]
    assert ev["text"] in text, (ev, text)


def test_split_size_misuse_is_one_line(tmp_path):
    for args, said in [
        (["--split-size", "64M"], "--split-size is for --engine dask"),
        (["--engine", "dask", "--scheduler", "threads", "--split-size", "0"], "--split-size '0': expected a size"),
        (["--engine", "dask", "--scheduler", "threads", "--split-size", "lots"], "--split-size 'lots': expected a size"),
    ]:
        r = _cli("analyze", SAMPLES / "kafka-outage", *args)
        assert r.code == 2 and r.err.strip().splitlines() == [f"logsleuth: error: {said}" + r.err.split(said, 1)[1].splitlines()[0]], r
        assert "Traceback" not in r.err


def test_off_reads_every_file_as_one_task(tmp_path):
    log = tmp_path / "a.log"
    _time_only_log(log, 3)
    r = _cli("analyze", "-f", "json", log, "--engine", "dask", "--scheduler", "threads", "--split-size", "off")
    assert r.code == 0 and ONE_TASK not in r.err and json.loads(r.out)["inputs"][0]["lines"] > 1000


PLAN_SCRIPT = r'''
import pickle, sys
from pathlib import Path
from logsleuth.ingest.inputs import ReadOptions
from logsleuth.recognise import eventstore
from logsleuth.recognise.cluster import Plan
from logsleuth.recognise.packs import load_packs
out, store, split, *inputs = sys.argv[1:]
# what docs/recipes/spark_events.py does, with a list comprehension for Spark's executors: every
# task and outcome crosses a pickle, as it does between Spark's driver and its Python workers
calls = lambda cs: [pickle.loads(pickle.dumps(fn))(*pickle.loads(pickle.dumps(args))) for fn, *args in cs]
plan = pickle.loads(pickle.dumps(Plan.make(inputs, ReadOptions(tz="UTC"), load_packs(None), store, split_size=int(split), side_by_side=calls)))
outcomes = [pickle.loads(pickle.dumps(plan.run(pickle.loads(pickle.dumps(t))))) for t in plan.tasks]
result = plan.gather(outcomes)
eventstore.write(result, Path(out))
result.texts.close()
print(len(plan.tasks))
'''


def test_the_engine_neutral_plan_writes_the_events_directory_events_o_writes(tmp_path):
    """The Spark recipe's steps (docs/recipes/spark_events.py) with the executors played by a loop:
    the events directory it writes analyses as the one ``events -o`` writes (checked on a real
    local Spark too, not in CI: docs/scale.md)."""
    import subprocess
    import sys

    log = tmp_path / "night.log"
    _time_only_log(log, 11)
    inputs = [str(SAMPLES / "kafka-outage"), str(SAMPLES / "pulsar-incident"), str(log)]
    store = tmp_path / "store"
    store.mkdir()
    r = subprocess.run([sys.executable, "-c", PLAN_SCRIPT, str(tmp_path / "planned"), str(store), "60000", *inputs],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and int(r.stdout) > 20, r.stderr[-3000:]
    cli = _cli("events", "--tz", "UTC", "-f", "parquet", "-o", tmp_path / "cli", *inputs)
    assert cli.code == 0, cli
    a = _cli("analyze", "-f", "json", "--events", tmp_path / "planned")
    b = _cli("analyze", "-f", "json", "--events", tmp_path / "cli")
    assert a.code == b.code == 0 and a.out == b.out and a.json()["findings"], (a, b)
