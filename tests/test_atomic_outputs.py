"""Outputs are written whole or not at all (logsleuth/atomic.py): on a full disk (here: a file-size
limit, as a quota would give) the old report stays as it was, the error is one line naming the file,
and no temporary file or partial directory is left."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

from conftest import SAMPLES, run_process

LIMIT = 20_000  # bytes: more than the run's own temporary parts, less than the outputs below (HTML ~24 kB, events part ~31 kB)


def _limited() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG) instead of killing
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))


def _run_limited(*args, tmp: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOGSLEUTH_")}
    env.update(TZ="UTC", TMPDIR=str(tmp), XDG_CONFIG_HOME=str(tmp / "no-config"), LOGSLEUTH_NO_CACHE="1")
    return subprocess.run([sys.executable, "-m", "logsleuth", *map(str, args)], capture_output=True, text=True,
                          env=env, preexec_fn=_limited, stdin=subprocess.DEVNULL, timeout=300)


def test_a_full_disk_keeps_the_old_report(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    for cmd, name in (("analyze", "old.html"), ("report", "older.html")):
        old = out / name
        old.write_text("the report of last night\n")
        r = _run_limited(cmd, "--tz", "UTC", SAMPLES / "kafka-outage" / "billing-producer.log", "-o", old, tmp=tmp)
        assert r.returncode == 2, (name, r.returncode, r.stderr)
        err = r.stderr.strip().splitlines()
        assert len(err) == 1 and err[0].startswith(f"logsleuth: error: {old}: cannot write") and f"the old {name} is left as it was" in err[0], r.stderr
        assert "Traceback" not in r.stderr
        assert old.read_text() == "the report of last night\n", name
    assert sorted(p.name for p in out.iterdir()) == ["old.html", "older.html"]  # no temporary left
    # without the limit the same command replaces it
    r = run_process("analyze", "--tz", "UTC", SAMPLES / "kafka-outage" / "billing-producer.log", "-o", out / "old.html")
    assert r.code == 0 and (out / "old.html").read_text().startswith("<!DOCTYPE html>")


def test_a_full_disk_leaves_no_partial_events_directory(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    dest = tmp_path / "events-dir"
    r = _run_limited("events", "--tz", "UTC", "--format", "parquet", "-o", dest, SAMPLES / "kafka-outage" / "billing-producer.log", tmp=tmp)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr, r.stderr
    assert str(dest) in r.stderr
    assert not dest.exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".events-dir")]
