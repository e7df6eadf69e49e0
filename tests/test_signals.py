"""No temporary directory outlives a run (docs/robustness.md): SIGTERM and SIGHUP clean up as Ctrl-C
does, and what a SIGKILL leaves is removed by the next run (the directories carry the process id)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import SAMPLES, run_process


def _storm(path: Path, lines: int = 300_000) -> Path:
    """A long reconnect storm from the Kafka outage sample's failing lines: enough to spill for a while."""
    src = [x for x in (SAMPLES / "kafka-outage" / "orders-producer.log").read_text().splitlines() if "could not be established" in x or "disconnected" in x]
    with open(path, "w", encoding="utf-8") as f:
        for k in range(lines):
            f.write(src[k % len(src)] + "\n")
    return path


def _env(tmp: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOGSLEUTH_")}
    env.update(TMPDIR=str(tmp), LOGSLEUTH_SPILL_DIR=str(tmp), TZ="UTC", LOGSLEUTH_CHUNK_BYTES="65536",
               XDG_CONFIG_HOME=str(tmp / "no-config"), LOGSLEUTH_NO_CACHE="1")
    return env


def _ours(tmp: Path) -> list[str]:
    return sorted(p.name for p in tmp.iterdir() if p.name.startswith("logsleuth-"))


def _start_and_wait_for_a_spill(log: Path, tmp: Path) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "logsleuth", "analyze", "--tz", "UTC", "--memory-budget", "0", "--format", "json", str(log)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=_env(tmp))
    deadline = time.monotonic() + 120
    while not any(n.startswith("logsleuth-events-") for n in _ours(tmp)):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"the run never spilled (exit {proc.returncode}): {proc.stderr.read().decode()[-500:] if proc.stderr else ''}")
        time.sleep(0.02)
    return proc


@pytest.fixture(scope="module")
def storm(tmp_path_factory) -> Path:
    return _storm(tmp_path_factory.mktemp("storm") / "storm.log")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_terminated_run_removes_its_temporary_directories(storm, tmp_path, sig):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc = _start_and_wait_for_a_spill(storm, tmp)
    assert any(n.startswith(f"logsleuth-events-{proc.pid}-") for n in _ours(tmp)), _ours(tmp)  # named after its process
    proc.send_signal(sig)
    code = proc.wait(timeout=120)
    err = proc.stderr.read().decode() if proc.stderr else ""
    assert code in (128 + sig, 0), (code, err)  # 0: it had finished before the signal landed
    assert "Traceback" not in err
    assert _ours(tmp) == [], _ours(tmp)


def test_what_a_killed_run_left_is_removed_by_the_next(storm, tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc = _start_and_wait_for_a_spill(storm, tmp)
    proc.kill()
    proc.wait(timeout=60)
    left = _ours(tmp)
    assert left, "a SIGKILL gives no chance to clean up: something is expected to be left"
    r = run_process("analyze", "--tz", "UTC", "--format", "json", SAMPLES / "kafka-outage", env=_env(tmp))
    assert r.code == 0, r
    assert _ours(tmp) == [], _ours(tmp)
