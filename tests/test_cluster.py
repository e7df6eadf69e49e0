"""The reading stage on a Dask cluster (``--engine dask``, docs/scale.md) and inputs in object
stores: the same findings and events as a plain run, byte for byte, on an in-process cluster, a
local process cluster, an external scheduler with its own worker process, and from an S3-compatible
server started here; every misuse one line and exit 2; nothing left in $TMPDIR; a plain run imports
neither Dask nor fsspec."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT, SAMPLES, run

pytest.importorskip("distributed", reason="the dask extra (pip install '.[dask]') is part of the test install")

# several systems and shapes at once: gzip'd rotated segments, time-only stamps, the sarama
# detectors that read an application's own lines again, a Pulsar broker and its clients
MIXED = [SAMPLES / "pulsar-incident", SAMPLES / "kafka-outage", SAMPLES / "sarama-blackhole", SAMPLES / "pulsar-pre24",
         SAMPLES / "kafka-rolling-restart"]


def _dask(*args, env=None, timeout=300):
    return run(*map(str, args), process=True, env=env, timeout=timeout)


def _same(plain, clustered) -> None:
    assert plain.code == clustered.code, (plain, clustered)
    assert clustered.out == plain.out, clustered
    assert clustered.err == plain.err, clustered


def test_a_local_process_cluster_gives_the_plain_runs_findings_and_events(tmp_path):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {"TMPDIR": str(scratch)}
    copy = tmp_path / "orders-producer.log.bak"  # a copy under another name: read once
    shutil.copy(SAMPLES / "kafka-outage" / "orders-producer.log", copy)
    inputs = [*MIXED, copy]
    plain = _dask("analyze", "--tz", "UTC", "-f", "json", *inputs, env=env)
    assert plain.code == 0 and len(plain.json()["findings"]) >= 8, plain
    clustered = _dask("analyze", "--tz", "UTC", "-f", "json", "--engine", "dask", "--workers", "2", *inputs, env=env)
    _same(plain, clustered)
    plain = _dask("events", "--tz", "UTC", "-f", "ndjson", *inputs, env=env)
    clustered = _dask("events", "--tz", "UTC", "-f", "ndjson", "--engine", "dask", "--workers", "2", *inputs, env=env)
    _same(plain, clustered)
    assert list(scratch.iterdir()) == []  # the store, Dask's scratch space and the texts: all removed


@pytest.mark.parametrize("sample", sorted(p.name for p in SAMPLES.iterdir() if p.is_dir() and p.name != "generators"))
def test_an_in_process_cluster_on_every_sample(sample):
    args = ["analyze", "--tz", "UTC", "-f", "json", SAMPLES / sample]
    _same(_dask(*args), _dask(*args, "--engine", "dask", "--scheduler", "threads"))


def test_the_postmortem_report_with_what_else_changed(tmp_path):
    """Markdown and HTML also count the unrecognised lines per template ('what else changed'):
    each worker counts its input's, the driver merges them."""
    args = ["analyze", "--tz", "UTC", "-f", "markdown", SAMPLES / "kafka-outage", SAMPLES / "pulsar-incident"]
    plain, clustered = _dask(*args), _dask(*args, "--engine", "dask", "--scheduler", "threads")
    assert "What else changed" in plain.out, plain
    strip = lambda t: [ln for ln in t.splitlines() if not ln.startswith("logsleuth analyze")]  # noqa: E731 (the command line)
    assert strip(clustered.out) == strip(plain.out)


def test_inputs_that_cannot_be_read_are_said_as_a_plain_run_says_them(tmp_path):
    png = tmp_path / "chart.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 20)
    missing = tmp_path / "gone.log"
    args = ["analyze", "--tz", "UTC", "-f", "json", SAMPLES / "kafka-outage", missing, png]
    plain, clustered = _dask(*args), _dask(*args, "--engine", "dask", "--scheduler", "threads")
    assert plain.code == 2 and "gone.log: no such file or directory" in plain.err, plain
    _same(plain, clustered)
    data = clustered.json()
    assert [i["unread"] for i in data["inputs"]][-2:] == [True, True] and data["findings"], clustered


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(cmd: list[str], env: dict, cwd: Path, log: Path) -> subprocess.Popen:
    return subprocess.Popen(cmd, env=env, cwd=cwd, stdout=log.open("wb"), stderr=subprocess.STDOUT, start_new_session=True)


def _stop(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        p.terminate()
    for p in procs:
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()


def _scheduler_and_worker(tmp_path: Path, worker_path: str | None = None) -> tuple[str, list[subprocess.Popen]]:
    """A real Dask scheduler and one worker, each its own process started here, the worker in
    another directory than the CLI (paths must travel absolute)."""
    bin_dir = Path(sys.executable).parent
    port = _free_port()
    env = dict(os.environ, TMPDIR=str(tmp_path))
    if worker_path:
        env["PYTHONPATH"] = worker_path
    away = tmp_path / "worker-home"
    away.mkdir(exist_ok=True)
    procs = [_start([str(bin_dir / "dask"), "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"], env, away, tmp_path / "scheduler.log")]
    addr = f"tcp://127.0.0.1:{port}"
    procs.append(_start([str(bin_dir / "dask"), "worker", addr, "--nworkers", "1", "--nthreads", "1", "--no-dashboard",
                         "--local-directory", str(tmp_path / "worker-scratch")], env, away, tmp_path / "worker.log"))
    deadline = time.monotonic() + 60
    from distributed import Client

    while True:
        try:
            with Client(addr, timeout="5s") as c:
                if c.scheduler_info()["workers"]:
                    return addr, procs
        except OSError:
            pass
        if time.monotonic() > deadline:
            _stop(procs)
            pytest.fail("the Dask scheduler and worker did not start: " + (tmp_path / "worker.log").read_text(errors="replace")[-2000:])
        time.sleep(0.5)


def test_an_external_scheduler_and_worker_write_the_store_this_machine_reads(tmp_path):
    addr, procs = _scheduler_and_worker(tmp_path)
    try:
        args = ["analyze", "--tz", "UTC", "-f", "json", SAMPLES / "kafka-outage", SAMPLES / "sarama-blackhole"]
        r = _dask(*args, "--engine", "dask", "--scheduler", addr)
        assert r.code == 2 and r.err.startswith("logsleuth: error: a remote Dask cluster writes the events where this machine can read them: give --store"), r
        assert len(r.err.splitlines()) == 1
        store = tmp_path / "store"
        r = _dask(*args, "--engine", "dask", "--store", store, env={"DASK_SCHEDULER_ADDRESS": addr})
        _same(_dask(*args), r)
        parts = sorted(p.relative_to(store).as_posix() for p in store.rglob("*.parquet"))
        assert parts and all(p.startswith("events/system=") for p in parts), parts
        r = _dask(*args, "--engine", "dask", "--store", store, "--scheduler", addr)
        assert r.code == 2 and r.err == f"logsleuth: error: --store {store}: the directory is not empty (give a new or empty one)\n", r
        # the worker lives on: what it spilled past the memory budget and the texts are gone with each task
        r = _dask(*args, "--engine", "dask", "--store", tmp_path / "store-2", "--scheduler", addr, "--memory-budget", "0")
        assert r.code == 0, r
        assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(("logsleuth-events-", "logsleuth-texts-"))]
    finally:
        _stop(procs)


def test_a_worker_killed_while_reading_is_replaced_and_the_answer_is_the_same(tmp_path):
    """The worker reading the big input is killed (SIGKILL) in the middle of it: its nanny starts
    a new one, Dask runs the task again, and the findings are those of a plain run."""
    import signal
    import threading

    from distributed import Client

    big = tmp_path / "broker.log"
    subprocess.run([sys.executable, str(ROOT / "benchmarks" / "gen_broker_log.py"), "--lines", "400000", "--out", str(big), "--event-rate", "0.2"],
                   check=True, capture_output=True)
    inputs = [big, SAMPLES / "kafka-outage"]
    addr, procs = _scheduler_and_worker(tmp_path)
    killed: list[int] = []

    def kill_the_reader() -> None:
        with Client(addr, timeout="10s") as c:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and not killed:
                busy = [w for w, keys in c.processing().items() if any("logsleuth-read-0-" in str(k) for k in keys)]
                if busy:
                    time.sleep(1.0)  # well into the read
                    pids = c.run(os.getpid, workers=busy)
                    for pid in pids.values():
                        os.kill(pid, signal.SIGKILL)
                        killed.append(pid)
                    return
                time.sleep(0.1)

    try:
        killer = threading.Thread(target=kill_the_reader, daemon=True)
        killer.start()
        r = _dask("analyze", "--tz", "UTC", "-f", "json", *inputs, "--engine", "dask", "--scheduler", addr, "--store", tmp_path / "store")
        killer.join(timeout=30)
        assert killed, "the reading worker was never seen busy"
        _same(_dask("analyze", "--tz", "UTC", "-f", "json", *inputs), r)
    finally:
        _stop(procs)


def test_a_worker_of_another_version_is_one_line(tmp_path):
    other = tmp_path / "other"
    shutil.copytree(ROOT / "logsleuth", other / "logsleuth", ignore=shutil.ignore_patterns("__pycache__"))
    init = other / "logsleuth" / "__init__.py"
    text = init.read_text()
    import logsleuth

    init.write_text(text.replace(f'__version__ = "{logsleuth.__version__}"', '__version__ = "0.0.1-other"'))
    assert "0.0.1-other" in init.read_text()
    addr, procs = _scheduler_and_worker(tmp_path, worker_path=str(other))
    try:
        r = _dask("analyze", "--tz", "UTC", SAMPLES / "kafka-outage", "--engine", "dask", "--scheduler", addr, "--store", tmp_path / "store")
        assert r.code == 2 and r.err == (f"logsleuth: error: a worker runs logsleuth 0.0.1-other and this machine {logsleuth.__version__}: "
                                         "install the same version on the workers\n"), r
    finally:
        _stop(procs)


def test_misuse_is_one_line(tmp_path):
    cases = [
        (["analyze", SAMPLES / "kafka-outage", "--store", tmp_path / "s"], "--store is for --engine dask"),
        (["analyze", SAMPLES / "kafka-outage", "--workers", "2"], "--workers is for --engine dask"),
        (["analyze", "-", "--engine", "dask"], "-: standard input cannot be read on a cluster (give files or URLs, or drop --engine dask)"),
        (["analyze", SAMPLES / "kafka-outage", "--engine", "dask", "--scheduler", "tcp://10.0.0.1:8786", "--workers", "2"],
         "--workers is for a local cluster; the scheduler at tcp://10.0.0.1:8786 has its own workers"),
        (["analyze", "nosuch://bucket/logs/", "--tz", "UTC"], "nosuch://bucket/logs/: not a URL logsleuth can read (Protocol not known: nosuch)"),
        (["analyze", SAMPLES / "kafka-outage", "--storage-option", "anon"], "--storage-option 'anon': expected KEY=VALUE"),
    ]
    for args, message in cases:
        r = _dask(*args)
        assert r.code == 2 and r.err == f"logsleuth: error: {message}\n", (args, r)


def test_an_unreachable_scheduler_is_one_line():
    port = _free_port()  # nothing listens there
    r = _dask("analyze", SAMPLES / "kafka-outage", "--engine", "dask", "--scheduler", f"tcp://127.0.0.1:{port}", "--store", "/nonexistent-store")
    assert r.code == 2 and r.err.startswith(f"logsleuth: error: cannot reach the Dask scheduler at tcp://127.0.0.1:{port} ("), r
    assert len(r.err.splitlines()) == 1


def test_a_plain_run_imports_neither_dask_nor_fsspec():
    probe = (
        "import atexit, sys\n"
        "atexit.register(lambda: sys.stderr.write('loaded:' + ','.join(m for m in ('dask', 'distributed', 'fsspec', 's3fs') if m in sys.modules) + '\\n'))\n"
        "from logsleuth.cli.app import main\n"
        "main(sys.argv[1:])\n"
    )
    for args in (["analyze", "--tz", "UTC", str(SAMPLES / "kafka-outage")], ["events", "--tz", "UTC", str(SAMPLES / "pulsar-incident")]):
        r = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, cwd=ROOT, timeout=300,
                           env=dict(os.environ, TZ="UTC", XDG_CONFIG_HOME=str(ROOT / "tests" / "no-such-config-home")))
        assert r.returncode == 0 and r.stderr.splitlines()[-1] == "loaded:", r.stderr[-2000:]


# --------------------------------------------------------------------------- an S3-compatible server


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    """moto's server mode: real HTTP and S3's request signing on 127.0.0.1, with one bucket holding
    two samples. It does not prove a real store's permissions, consistency or speed (docs/scale.md)."""
    pytest.importorskip("moto", reason="moto[server] is part of the test install")
    import boto3

    port = _free_port()
    log = tmp_path_factory.mktemp("moto") / "moto.log"
    proc = _start([str(Path(sys.executable).parent / "moto_server"), "-H", "127.0.0.1", "-p", str(port)], dict(os.environ), ROOT, log)
    endpoint = f"http://127.0.0.1:{port}"
    client = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id="testing", aws_secret_access_key="testing", region_name="us-east-1")
    deadline = time.monotonic() + 60
    while True:
        try:
            client.create_bucket(Bucket="night")
            break
        except Exception:  # noqa: BLE001 - not listening yet
            if time.monotonic() > deadline or proc.poll() is not None:
                _stop([proc])
                pytest.fail("moto_server did not start: " + log.read_text(errors="replace")[-2000:])
            time.sleep(0.3)
    for sample in ("kafka-outage", "sarama-blackhole"):
        for f in sorted((SAMPLES / sample).iterdir()):
            if f.is_file():
                client.upload_file(str(f), "night", f"logs/{sample}/{f.name}")
    yield endpoint
    _stop([proc])


def _creds(endpoint: str) -> list[str]:
    return ["--storage-option", f"endpoint_url={endpoint}", "--storage-option", "key=testing", "--storage-option", "secret=testing"]


def _findings_without_paths(r, prefix: str) -> str:
    """The findings with each input's location cut to its name (the same logs named by path or URL)."""
    text = json.dumps(r.json()["findings"], sort_keys=True)
    return text.replace(prefix, "")


def test_logs_in_an_s3_bucket_on_a_cluster_writing_its_store_there(s3, tmp_path):
    plain = run("analyze", "--tz", "UTC", "-f", "json", "kafka-outage", "sarama-blackhole", process=True, cwd=SAMPLES)
    assert plain.code == 0, plain
    r = _dask("analyze", "--tz", "UTC", "-f", "json", "s3://night/logs/", "--engine", "dask", "--workers", "2",
              "--store", "s3://night/events/run-1", *_creds(s3), env={"TMPDIR": str(tmp_path)})
    assert r.code == 0, r
    assert _findings_without_paths(r, "s3://night/logs/") == json.dumps(plain.json()["findings"], sort_keys=True)
    assert [i["path"] for i in r.json()["inputs"]][:1] == ["s3://night/logs/kafka-outage/billing-producer.log"]
    assert list(tmp_path.iterdir()) == []  # the fetched copies are unlinked once open
    # the same bucket read without a cluster: fsspec alone
    r = _dask("analyze", "--tz", "UTC", "-f", "json", "s3://night/logs/sarama-*/*.log", *_creds(s3))
    assert r.code == 0 and {f["id"] for f in r.json()["findings"]} == {"sarama.retry-redial-stall"}, r
    # and the evidence with the lines around it, fetched again
    r = _dask("show", "1", "--tz", "UTC", "-C", "1", "s3://night/logs/kafka-outage/", *_creds(s3))
    assert r.code == 0 and "── s3://night/logs/kafka-outage/orders-producer.log:52 (the trouble starts)" in r.out, r
    assert "no such file" not in r.out and any(ln.startswith(">") and "Node 2 disconnected" in ln for ln in r.out.splitlines()), r.out[:3000]


def test_store_errors_are_one_line(s3):
    r = _dask("analyze", "s3://night/logs/nothing-here/", *_creds(s3))
    assert r.code == 2 and r.err == "logsleuth: error: s3://night/logs/nothing-here/: no such object or prefix\n", r
    r = _dask("analyze", "s3://night/logs/", "--storage-option", f"endpoint_url={s3}",
              env={"AWS_SHARED_CREDENTIALS_FILE": "/nonexistent", "AWS_CONFIG_FILE": "/nonexistent", "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": ""})
    assert r.code == 2 and r.err.startswith("logsleuth: error: s3://night/logs/: no credentials for this store"), r
    assert len(r.err.splitlines()) == 1
