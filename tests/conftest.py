"""Shared helpers: run the real CLI as a user would.

``run`` calls the command line's entry point in this process (argv, stdin, stdout, stderr,
environment and working directory as a subprocess would have them, exit code from ``SystemExit``):
the many-shape tests stay fast. ``run_process`` (and ``run(..., process=True)``) starts a real
``python -m logsleuth`` for what only a process shows: signals, closed pipes, file descriptors,
settings read at import time. ``LOGSLEUTH_TEST_PROCESS=1`` runs every test in a subprocess.
"""

from __future__ import annotations

import json
import os
import contextlib
import io
import subprocess
import sys
import threading
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


# settings a developer's shell may hold that would change what the tests see (docs/cli.md)
_SETTINGS_ENV = ("LOGSLEUTH_CONFIG", "LOGSLEUTH_TZ", "LOGSLEUTH_DISPLAY_TZ", "LOGSLEUTH_COLOR", "LOGSLEUTH_PATTERNS",
                 "LOGSLEUTH_SARAMA_CONFIG", "LOGSLEUTH_MEMORY_BUDGET", "LOGSLEUTH_SPILL_DIR", "NO_COLOR", "FORCE_COLOR")


# LOGSLEUTH_TEST_MEMORY_BUDGET=0 pytest: every CLI run of the suite with its events table on disk
# (--memory-budget; the answers must be the same)
_TEST_BUDGET = os.environ.get("LOGSLEUTH_TEST_MEMORY_BUDGET")


def _env(env: dict | None) -> dict:
    e = dict(os.environ)
    e.setdefault("TZ", "UTC")
    e["COLUMNS"] = "200"
    e.pop("LOGSLEUTH_DEBUG", None)
    for name in _SETTINGS_ENV:
        e.pop(name, None)
    e["XDG_CONFIG_HOME"] = str(ROOT / "tests" / "no-such-config-home")  # not the developer's ~/.config/logsleuth
    if _TEST_BUDGET is not None:
        e["LOGSLEUTH_MEMORY_BUDGET"] = _TEST_BUDGET
    if env:
        e.update(env)
    return e


@pytest.fixture(autouse=True, scope="session")
def _no_config_file_here():
    """A ./logsleuth.toml where the tests run would be read by every command they run."""
    for d in {Path.cwd(), ROOT}:
        if (d / "logsleuth.toml").exists():
            pytest.exit(f"{d / 'logsleuth.toml'} would be read by every logsleuth the tests run: move it away", returncode=2)


def run_process(*args: str | Path, input: bytes | str | None = None, cwd: Path | None = None, env: dict | None = None, timeout: float = 300) -> Result:
    if isinstance(input, str):
        input = input.encode("utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "logsleuth", *map(str, args)],
        input=input,
        stdin=subprocess.DEVNULL if input is None else None,  # not the test runner's own stdin (a pipe in CI is read when no path is given)
        capture_output=True,
        cwd=cwd,
        env=_env(env),
        timeout=timeout,
    )
    return Result(
        subprocess.CompletedProcess(proc.args, proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace"))
    )


def run_on_pty(*args: str | Path, env: dict, stdout: bool = True, stderr: bool = False, timeout: float = 120, cwd: Path | None = None) -> tuple[int, bytes]:
    """``python -m logsleuth ARGS`` with stdout and/or stderr on a pseudo-terminal (what an analyst's
    terminal gets); the other stream is discarded. Exit code and every byte the terminal got."""
    import pty
    import time

    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "logsleuth", *map(str, args)], stdout=slave if stdout else subprocess.DEVNULL,
                            stderr=slave if stderr else subprocess.DEVNULL, stdin=subprocess.DEVNULL, env=env, cwd=cwd or ROOT)
    os.close(slave)
    seen = b""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the other end closed: the process is done writing
            break
        if not chunk:
            break
        seen += chunk
    code = proc.wait(timeout=60)
    os.close(master)
    return code, seen


# settings read once per process (at import or first use): a test that sets one needs a process
_PROCESS_ENV = {"LOGSLEUTH_CHUNK_BYTES", "LOGSLEUTH_DEBUG", "PYTHONPATH", "HOME", "XDG_CACHE_HOME", "LOGSLEUTH_CACHE_DIR", "LOGSLEUTH_NO_CACHE"}
_LOCK = threading.Lock()


class _Stream(io.TextIOWrapper):
    """stdout/stderr of an in-process run: text over bytes (``.buffer`` works), never a terminal."""

    def __init__(self) -> None:
        super().__init__(io.BytesIO(), encoding="utf-8", errors="strict", newline="\n", write_through=True)

    def isatty(self) -> bool:
        return False

    def text(self) -> str:
        self.flush()
        return self.buffer.getvalue().decode("utf-8", "replace")  # type: ignore[attr-defined]


def run_in_process(*args: str | Path, input: bytes | str | None = None, cwd: Path | None = None, env: dict | None = None) -> Result:
    from logsleuth.cli.app import main

    if isinstance(input, str):
        input = input.encode("utf-8")
    out, err = _Stream(), _Stream()
    # standard input as a process would have it: the input as a file (a pipe or a file is read
    # when no path is given, as grep does), or /dev/null when there is none
    import tempfile

    if input is not None:
        holder = tempfile.TemporaryFile()
        holder.write(input)
        holder.seek(0)
        stdin = io.TextIOWrapper(holder, encoding="utf-8")
    else:
        stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 - closed below
    saved_env = dict(os.environ)
    saved = (sys.stdin, sys.stdout, sys.stderr, sys.unraisablehook)
    code = 0
    with _LOCK:
        cwd_before = os.getcwd()
        try:
            os.environ.clear()
            os.environ.update(_env(env))
            if cwd is not None:
                os.chdir(cwd)
            sys.stdin, sys.stdout, sys.stderr = stdin, out, err
            try:
                main([str(a) for a in args])
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        finally:
            sys.stdin, sys.stdout, sys.stderr, sys.unraisablehook = saved
            os.chdir(cwd_before)
            os.environ.clear()
            os.environ.update(saved_env)
    stdin.close()
    return Result(subprocess.CompletedProcess(list(args), code, out.text(), err.text()))


def run(*args: str | Path, input: bytes | str | None = None, cwd: Path | None = None, env: dict | None = None, timeout: float = 300, process: bool = False) -> Result:
    if process or os.environ.get("LOGSLEUTH_TEST_PROCESS") or (env and _PROCESS_ENV & set(env)):
        return run_process(*args, input=input, cwd=cwd, env=env, timeout=timeout)
    return run_in_process(*args, input=input, cwd=cwd, env=env)


@pytest.fixture
def cli():
    return run


@pytest.fixture(autouse=True)
def _ctrl_c_still_works(request):
    """A test must leave this process's Ctrl-C as it found it: SIG_IGN is inherited by every process
    started afterwards, and the Ctrl-C tests that ran later on the same worker failed (CI, issue 31's
    stop) when something left it ignored."""
    import signal

    before = signal.getsignal(signal.SIGINT)
    yield
    after = signal.getsignal(signal.SIGINT)
    if after is not before:
        signal.signal(signal.SIGINT, before)
        pytest.fail(f"{request.node.nodeid} left SIGINT's handler changed ({before!r} -> {after!r})")
