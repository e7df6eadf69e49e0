"""Shared helpers: run the real CLI in a subprocess, as a user would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_logs"


class Result:
    def __init__(self, proc: subprocess.CompletedProcess):
        self.code = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr

    def json(self):
        return json.loads(self.out)

    def __repr__(self) -> str:
        return f"<exit {self.code}\nstdout:\n{self.out[-3000:]}\nstderr:\n{self.err[-3000:]}>"


def run(*args: str | Path, input: bytes | str | None = None, cwd: Path | None = None, env: dict | None = None, timeout: float = 300) -> Result:
    e = dict(os.environ)
    e.setdefault("TZ", "UTC")
    e["COLUMNS"] = "200"
    e.pop("LOGSLEUTH_DEBUG", None)
    if env:
        e.update(env)
    if isinstance(input, str):
        input = input.encode("utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "logsleuth", *map(str, args)],
        input=input,
        capture_output=True,
        cwd=cwd,
        env=e,
        timeout=timeout,
    )
    return Result(
        subprocess.CompletedProcess(proc.args, proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace"))
    )


@pytest.fixture
def cli():
    return run
