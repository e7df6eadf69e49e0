"""The bad-input battery (issue 9), through the real CLI: one case each, run through ``inspect``,
``events`` and ``analyze`` where it makes sense.

Every case ends one of two ways: analysed (exit 0, or 1 for ``events`` that found nothing) with the
oddity counted in the summary, or one line ``logsleuth: error: <input>: ...`` on stderr and exit 2.
Never a traceback, never a hang (every run has a timeout), and every line read is accounted for:
``lines == lines_in_records + skipped_lines`` per file. docs/robustness.md lists the same cases.
"""

from __future__ import annotations

import array
import fcntl
import gzip
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

import pytest

from conftest import ROOT, SAMPLES, Result

TIMEOUT = 300  # seconds for any single run: a hang fails the test instead of the CI job (a hang guard, not a speed bound: a busy 2-core machine took 190 s for the 20 MB line)

# a Pulsar 2.x broker line the pulsar-broker pack turns into a producer_already_present event
# (and the dangling-producer detector into a finding)
PRESENT = (
    "10:12:01.231 [pulsar-io-22-3] WARN  org.apache.pulsar.broker.service.ServerCnx - "
    "[/10.1.116.123:15070][0] Producer with id persistent://public/default/orders-partition-3 "
    "is already present on the connection"
)
INFO = "10:12:02.000 [pulsar-io-22-3] INFO  org.apache.pulsar.broker.service.ServerCnx - done"
TEXT = "\n".join([PRESENT, INFO, PRESENT.replace("10:12:01.231", "10:12:03.000")]) + "\n"
# the same event with a short message, so that a table cell (160 characters) shows all of it
SHORT = "10:12:01.231 [io-1] WARN  org.apache.pulsar.broker.service.ServerCnx - [/1.2.3.4:5][0] Producer with id t is already present on the connection"


# --------------------------------------------------------------------------- running the CLI


def run(*args, input: bytes | str | None = None, prefix: list[str] | None = None, env: dict | None = None, timeout: float = TIMEOUT) -> Result:
    """Like conftest's ``cli`` fixture, optionally under a command prefix (setpriv, runuser)."""
    e = dict(os.environ, TZ="UTC", COLUMNS="200")
    e.pop("LOGSLEUTH_DEBUG", None)
    e.update(env or {})
    if isinstance(input, str):
        input = input.encode()
    proc = subprocess.run(
        [*(prefix or []), sys.executable, "-m", "logsleuth", *map(str, args)],
        input=input, capture_output=True, env=e, timeout=timeout, cwd=ROOT,
    )
    return Result(subprocess.CompletedProcess(proc.args, proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")))


def assert_one_line_error(r: Result, *words: str) -> None:
    """Exit 2 and exactly one line on stderr, naming the input; never a traceback."""
    assert r.code == 2, r
    assert "Traceback" not in r.err and "internal error" not in r.err, r
    lines = r.err.strip("\n").split("\n")
    assert len(lines) == 1 and lines[0].startswith("logsleuth: error: "), r
    for w in words:
        assert w in lines[0], (w, r)


def assert_clean(r: Result, codes=(0,)) -> None:
    assert r.code in codes, r
    assert r.err == "", r


def accounted(inputs: list[dict]) -> None:
    for i in inputs:
        assert i["lines"] == i["lines_in_records"] + i["skipped_lines"], i


def inspect_json(path, *args) -> list[dict]:
    r = run("inspect", "--format", "json", path, *args)
    assert_clean(r)
    inputs = r.json()["inputs"]
    accounted(inputs)
    return inputs


def analyze_json(path, *args) -> dict:
    r = run("analyze", "--format", "json", path, *args)
    assert_clean(r)
    doc = r.json()
    accounted(doc["inputs"])
    return doc


def events_ndjson(path, *args, code=(0, 1)) -> list[dict]:
    r = run("events", "--format", "ndjson", path, *args)
    assert_clean(r, code)
    return [json.loads(x) for x in r.out.splitlines()]


def write(path: Path, data: bytes | str) -> Path:
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


# --------------------------------------------------------------------------- paths


@pytest.mark.parametrize("command", ["inspect", "events", "analyze"])
def test_nonexistent_path(tmp_path, command):
    missing = tmp_path / "nope.log"
    assert_one_line_error(run(command, missing), str(missing), "no such file or directory")


def test_directory_with_no_logs(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    for command in ("inspect", "events", "analyze"):
        assert_one_line_error(run(command, empty), str(empty), "contains no files")
    hidden = tmp_path / "hidden"  # only dot-files: nothing to read either
    hidden.mkdir()
    write(hidden / ".rotated.log", TEXT)
    assert_one_line_error(run("inspect", hidden), str(hidden), "contains no files")
    binaries = tmp_path / "binaries"  # files, but none of them text
    binaries.mkdir()
    write(binaries / "logo.png", b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8)
    assert_one_line_error(run("events", binaries), str(binaries), "no text logs found")
    code = tmp_path / "code"  # only files that are not logs by their name: said which, and how to read one
    code.mkdir()
    write(code / "deploy.yaml", TEXT)
    write(code / "gen.py", TEXT)
    assert_one_line_error(run("inspect", code), str(code), "2 file(s) left out by their name", "deploy.yaml, gen.py", "name a file to read it")


def test_a_markdown_paste_in_a_directory_is_read(tmp_path):
    """An issue paste saved as .md is a log like any other in a directory walk (its quote is peeled)."""
    d = tmp_path / "incident"
    d.mkdir()
    write(d / "issue-paste.md", "From the broker:\n\n" + "".join(f"> {line}\n" for line in TEXT.splitlines()))
    r = run("events", d)
    assert r.code == 0, r
    assert "issue-paste.md:" in r.out and "already present on the connection" in r.out


def test_empty_file(tmp_path):
    p = write(tmp_path / "empty.log", b"")
    (inp,) = inspect_json(p)
    assert inp["lines"] == 0 and inp["records"] == 0 and "empty input: no lines" in inp["notes"]
    assert events_ndjson(p, code=(1,)) == []  # nothing found: exit 1, like grep
    doc = analyze_json(p)
    assert doc["summary"]["lines"] == 0 and doc["findings"] == []


def _unprivileged(tmp_path: Path) -> list[str] | None:
    """A command prefix under which a mode-000 file really is unreadable (we may be root), or None."""
    if os.geteuid() != 0:
        return []
    probe = write(tmp_path / "probe", "x")
    probe.chmod(0)
    tries = [
        # root without the capabilities that bypass file permissions (the venv under /root stays usable)
        ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--inh-caps=-dac_override,-dac_read_search"],
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"],
        ["runuser", "-u", "nobody", "--"],
    ]
    code = f"import logsleuth.cli.app; open({str(probe)!r}).read()"
    for prefix in tries:
        if shutil.which(prefix[0]) is None:
            continue
        try:
            r = subprocess.run([*prefix, sys.executable, "-c", code], capture_output=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if r.returncode != 0 and b"PermissionError" in r.stderr:  # Python ran, logsleuth imported, open failed
            return prefix
    return None


def test_permission_denied(tmp_path):
    prefix = _unprivileged(tmp_path)
    if prefix is None:
        pytest.skip("running as root and neither setpriv nor runuser can drop the right to read any file")
    secret = write(tmp_path / "secret.log", TEXT)
    secret.chmod(0)
    locked = tmp_path / "locked"
    (locked / "inner").mkdir(parents=True)
    write(locked / "inner" / "a.log", TEXT)
    (locked / "inner").chmod(0)
    try:
        for command in ("inspect", "events", "analyze"):
            assert_one_line_error(run(command, secret, prefix=prefix), str(secret), "permission denied")
        # in a directory walk (/var/log/pulsar with one file of another user), what cannot be read
        # is skipped and said, and the rest is read
        write(locked / "ok.log", TEXT)
        (locked / "old.log").write_text(TEXT)
        (locked / "old.log").chmod(0)
        r = run("analyze", locked, "--format", "json", prefix=prefix)
        assert r.code == 0, r
        assert "inner: cannot read directory (permission denied), skipped" in r.err and "Traceback" not in r.err
        inputs = {Path(i["path"]).name: i for i in r.json()["inputs"]}
        assert inputs["old.log"]["skipped"] == "permission denied" and inputs["ok.log"]["events"] == 2
        (locked / "ok.log").unlink()
        r = run("inspect", locked, prefix=prefix)
        assert r.code == 2 and "no text logs found (every file was binary or unreadable)" in r.err
    finally:
        (locked / "inner").chmod(0o755)
        (locked / "old.log").chmod(0o644) if (locked / "old.log").exists() else None


# --------------------------------------------------------------------------- what the bytes are


@pytest.mark.parametrize(
    "name,data,what",
    [
        ("logo.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4, "a PNG image"),
        ("tool", Path(sys.executable).resolve().read_bytes()[:200_000], "an ELF executable"),
    ],
)
def test_binary_file(tmp_path, name, data, what):
    if what == "an ELF executable" and not data.startswith(b"\x7fELF"):
        data = b"\x7fELF\x02\x01\x01" + bytes(range(256)) * 4  # not on Linux: a synthetic ELF header
    p = write(tmp_path / name, data)
    for command in ("inspect", "events", "analyze"):
        assert_one_line_error(run(command, p), str(p), f"not a text log (looks like {what})")
    if what != "a PNG image":
        return
    # found while walking a directory: skipped and reported, the logs beside it are read
    write(tmp_path / "broker.log", TEXT)
    inputs = inspect_json(tmp_path)
    skipped = {i["path"]: i["skipped"] for i in inputs}
    assert skipped[str(p)] == f"not a text log (looks like {what})" and skipped[str(tmp_path / "broker.log")] is None
    assert len(events_ndjson(tmp_path, code=(0,))) == 2


def test_nul_bytes_inside_lines(tmp_path):
    p = write(tmp_path / "nul.log", (PRESENT + " \x00\x00 tail\n" + INFO.replace("done", "do\x00ne") + "\n").encode())
    (inp,) = inspect_json(p)
    assert inp["lines"] == 2 and inp["records"] == 2 and inp["layout"] == "pulsar-broker-2x"
    (ev,) = events_ndjson(p)
    assert "\x00\x00 tail" in ev["text"]  # kept, not cut at the NUL (JSON escapes it)
    r = run("events", p)  # piped grep format: the line as it was
    assert_clean(r)
    assert r.out == f"{p}:1:{PRESENT} \x00\x00 tail\n"
    r = run("events", p, "--format", "table", env={"COLUMNS": "1000"})
    assert_clean(r)
    assert "\x00" not in r.out and "\\x00\\x00 tail" in r.out
    assert_clean(run("analyze", p))


def test_a_line_after_nul_padding_is_still_a_record(tmp_path):
    # a crash leaves NUL padding where the file was preallocated; the next write follows it on the
    # same line: that line is a record and its event counts
    p = write(tmp_path / "crash.log", (INFO + "\n" + "\x00" * 32 + PRESENT + "\n" + INFO + "\n").encode())
    (inp,) = inspect_json(p)
    assert inp["records"] == 3
    (ev,) = events_ndjson(p)
    assert ev["line"] == 2 and ev["event"] == "producer_already_present" and ev["text"] == PRESENT
    r = run("events", p)  # piped grep format: the record, at the line it is on
    assert_clean(r)
    assert r.out.startswith(f"{p}:2:") and r.out.endswith(PRESENT + "\n")


def test_invalid_utf8(tmp_path):
    p = write(tmp_path / "bad.log", PRESENT.encode() + b" caf\xff\xfe\x80\n" + INFO.encode() + b"\n")
    (inp,) = inspect_json(p)
    assert inp["replaced_bytes"] == 3 and "invalid bytes replaced" in inp["encoding"] and inp["records"] == 2
    (ev,) = events_ndjson(p)
    assert ev["text"].endswith("caf\ufffd\ufffd\ufffd")
    r = run("analyze", p)
    assert_clean(r)
    assert "3 bytes were not valid text and were replaced" in r.out


def test_gb18030_text(tmp_path):
    line = PRESENT + " 生产者已存在，连接被拒绝"
    p = write(tmp_path / "cn.log", (line + "\n" + INFO + "\n").encode("gb18030"))
    (inp,) = inspect_json(p)
    assert inp["encoding"] == "gb18030" and inp["replaced_bytes"] == 0
    (ev,) = events_ndjson(p)
    assert ev["text"] == line  # decoded, not mojibake
    doc = analyze_json(p)
    assert doc["inputs"][0]["encoding"] == "gb18030"


@pytest.mark.parametrize("ending,label", [("\r\n", "crlf"), ("\r", "cr")])
def test_crlf_and_lone_cr(tmp_path, ending, label):
    p = write(tmp_path / f"{label}.log", TEXT.replace("\n", ending))
    (inp,) = inspect_json(p)
    assert inp["line_ending"] == label and inp["lines"] == 3 and inp["records"] == 3
    evs = events_ndjson(p)
    assert [e["line"] for e in evs] == [1, 3] and all("\r" not in e["text"] for e in evs)
    assert [e["text"] for e in evs] == [x for x in TEXT.splitlines() if "Producer" in x]
    assert len(analyze_json(p)["inputs"]) == 1


def test_a_20_mb_single_line(tmp_path):
    p = write(tmp_path / "huge-line.log", PRESENT + " " + "x" * (20 * 1024 * 1024) + "\n" + INFO + "\n")
    (inp,) = inspect_json(p)
    assert inp["lines"] == 2 and inp["records"] == 2
    (ev,) = events_ndjson(p)
    assert ev["line"] == 1 and len(ev["text"]) > 20 * 1024 * 1024
    doc = analyze_json(p)
    assert doc["summary"]["lines"] == 2
    nonl = write(tmp_path / "no-newline.log", b"y" * (20 * 1024 * 1024))  # and no line ending at all
    (inp,) = inspect_json(nonl)
    assert inp["lines"] == 1 and inp["records"] == 1


def test_truncated_gzip(tmp_path):
    data = gzip.compress((TEXT * 3000).encode())
    p = write(tmp_path / "broker.log.gz", data[: len(data) // 2])
    (inp,) = inspect_json(p)
    assert inp["compression"] == "gzip" and inp["lines"] > 100
    assert any(n.startswith("truncated gzip archive") for n in inp["notes"])
    assert len(events_ndjson(p)) > 50
    r = run("analyze", p)
    assert_clean(r)
    assert f"in {p.parent}/" in r.out and "! broker.log.gz: truncated gzip archive" in r.out  # a warning under the headline
    # cut inside the header: nothing to read, said so
    head = write(tmp_path / "head.log.gz", data[:6])
    (inp,) = inspect_json(head)
    assert inp["lines"] == 0 and any("truncated gzip" in n for n in inp["notes"])
    # not even the first block decompresses: that is an error, not an empty file
    corrupt = write(tmp_path / "corrupt.log.gz", data[:10] + b"\xff" * 200)
    for command in ("inspect", "events", "analyze"):
        assert_one_line_error(run(command, corrupt), str(corrupt), "corrupt gzip data")


def test_gzip_with_trailing_garbage(tmp_path):
    p = write(tmp_path / "broker.log.gz", gzip.compress(TEXT.encode()) + b"\x00garbage\xff" * 50)
    (inp,) = inspect_json(p)
    assert inp["lines"] == 3 and "trailing data after the gzip archive was ignored" in inp["notes"]
    assert len(events_ndjson(p)) == 2
    doc = analyze_json(p)
    assert "trailing data after the gzip archive was ignored" in doc["inputs"][0]["notes"]


def test_gz_name_on_plain_text(tmp_path):
    p = write(tmp_path / "broker.log.1.gz", TEXT)
    (inp,) = inspect_json(p)
    assert inp["compression"] == "none" and inp["lines"] == 3 and inp["notes"] == []
    assert len(events_ndjson(p)) == 2
    assert_clean(run("analyze", p))


def test_file_growing_while_read(tmp_path):
    p = write(tmp_path / "live.log", TEXT * 20_000)
    stop = threading.Event()

    def append() -> None:  # a broker still writing to its log
        with open(p, "a") as fh:
            while not stop.is_set():
                fh.write(PRESENT + "\n")
                fh.flush()
                time.sleep(0.001)

    writer = threading.Thread(target=append, daemon=True)
    writer.start()
    try:
        time.sleep(0.05)
        (inp,) = inspect_json(p)
        evs = events_ndjson(p)
    finally:
        stop.set()
        writer.join(10)
    assert inp["lines"] >= 60_000 and inp["records"] >= inp["lines"] - 1  # at most the last line torn
    assert "the file grew while it was read; only what it held when opened was read" in inp["notes"]
    assert len(evs) >= 40_000


def test_lines_with_no_timestamp(tmp_path):
    p = write(tmp_path / "free.log", "starting up\njust some text\n[bold]not markup[/bold]\n")
    (inp,) = inspect_json(p)
    assert inp["records"] == 3 and inp["records_without_ts"] == 3 and inp["first_ts"] is None
    r = run("inspect", p)
    assert_clean(r)
    assert "3 (3 without a timestamp)" in r.out and "3 in records, 0 skipped" in r.out
    r = run("analyze", p)
    assert_clean(r)
    assert "no timestamps" in r.out
    # a time window needs times: one clear line, not a crash
    assert_one_line_error(run("events", p, "--since", "-1h"), "no timestamps to count back from")
    # absolute windows still work (nothing has a time, so nothing is inside)
    assert events_ndjson(p, "--since", "2024-01-01", code=(1,)) == []


def test_timestamps_going_backwards(tmp_path):
    lines = [
        "[2024-05-02 10:15:31,204] WARN [Producer clientId=p-1] Node 2 disconnected. (org.apache.kafka.clients.NetworkClient)",
        "[2024-05-02 10:15:30,204] WARN [Producer clientId=p-1] Node 2 disconnected. (org.apache.kafka.clients.NetworkClient)",
        "[2024-05-02 09:15:31,204] WARN [Producer clientId=p-1] Node 2 disconnected. (org.apache.kafka.clients.NetworkClient)",
        "[2024-05-02 11:00:00,000] WARN [Producer clientId=p-1] Node 2 disconnected. (org.apache.kafka.clients.NetworkClient)",
    ]
    p = write(tmp_path / "client.log", "\n".join(lines) + "\n")
    (inp,) = inspect_json(p)
    assert inp["first_ts"] == "2024-05-02T09:15:31.204Z" and inp["last_ts"] == "2024-05-02T11:00:00.000Z"
    assert "2 record(s) have a timestamp earlier than the record before them (out of order)" in inp["notes"]
    evs = events_ndjson(p)
    assert [e["line"] for e in evs] == [3, 2, 1, 4]  # events are ordered by time
    doc = analyze_json(p)
    assert doc["summary"]["first_ts"] == "2024-05-02T09:15:31.204Z"


def test_a_one_line_file(tmp_path):
    p = write(tmp_path / "one.log", PRESENT)  # no trailing newline either
    (inp,) = inspect_json(p)
    assert inp["lines"] == 1 and inp["records"] == 1 and inp["records_without_ts"] == 0
    (ev,) = events_ndjson(p)
    assert ev["text"] == PRESENT
    assert analyze_json(p)["summary"]["events"] == 1


def test_100k_identical_lines(tmp_path):
    p = write(tmp_path / "same.log", (PRESENT + "\n") * 100_000)
    (inp,) = inspect_json(p)
    assert inp["lines"] == 100_000 and inp["records"] == 100_000
    r = run("events", p)
    assert_clean(r)
    assert r.out.count("\n") == 100_000
    doc = analyze_json(p)
    assert doc["summary"]["events"] == 100_000


# --------------------------------------------------------------------------- user packs

PACK_HEAD = 'id = "mine"\nsystem = "mine"\ndescription = "my patterns"\n'


def _pattern(pid: str, regex: str, line: str, extra: str = "") -> str:
    return (
        f'\n[[pattern]]\nid = "{pid}"\nevent = "e_{pid.replace(".", "_")}"\nversions = "all"\n'
        f"regex = '{regex}'\n{extra}\n  [[pattern.sample]]\n  line = \"{line}\"\n"
    )


SAMPLE_LINE = "10:12:01.231 [main] WARN  a.B - Frobnicator exploded: BOOM"
BAD_PACKS = {
    "invalid-regex": (PACK_HEAD + _pattern("mine.bad", "Frobnicator (exploded", SAMPLE_LINE), "pattern mine.bad: the regex does not compile: unclosed group"),
    "look-around": (PACK_HEAD + _pattern("mine.look", "Frobnicator (?!ok)", SAMPLE_LINE, 'contains = ["Frobnicator"]'), "pattern mine.look: the regex uses look-around"),
    "unknown-field": (PACK_HEAD + _pattern("mine.unk", "Frobnicator (?P<no_such_field>\\w+)", SAMPLE_LINE), "group 'no_such_field' is not in the field vocabulary"),
    "duplicate-id": (PACK_HEAD + _pattern("mine.dup", "Frobnicator exploded", SAMPLE_LINE) + _pattern("mine.dup", "Frobnicator imploded", SAMPLE_LINE), "pattern mine.dup: duplicate id"),
    "not-toml": ('id = "mine\n[[[', "not valid TOML"),
    "pattern-not-a-table": (PACK_HEAD + 'pattern = "Frobnicator"\n', "patterns must be tables"),
}


@pytest.mark.parametrize("case", sorted(BAD_PACKS))
def test_broken_user_pack(tmp_path, case):
    text, message = BAD_PACKS[case]
    packs = tmp_path / "packs"
    packs.mkdir()
    write(packs / "mine.toml", text)
    log = write(tmp_path / "broker.log", TEXT)
    assert_one_line_error(run("patterns", "check", packs), "mine.toml", message)
    for command in ("events", "analyze"):
        assert_one_line_error(run(command, log, "--patterns", packs), "mine.toml", message)


def test_user_pack_with_a_failing_sample(tmp_path):
    packs = tmp_path / "packs"
    packs.mkdir()
    failing = SAMPLE_LINE.replace("exploded", "imploded")
    write(packs / "mine.toml", PACK_HEAD + _pattern("mine.fail", "Frobnicator exploded: (?P<error>\\w+)", failing))
    r = run("patterns", "check", packs)
    assert_one_line_error(r, "mine.toml: pattern mine.fail: sample 1: does not match its own pattern")
    # loading does not run samples (that is what `patterns check` is for): events still run
    log = write(tmp_path / "app.log", SAMPLE_LINE + "\n")
    (ev,) = events_ndjson(log, "--patterns", packs)
    assert ev["pattern"] == "mine.fail" and ev["error"] == "BOOM"


def test_pack_directory_problems(tmp_path):
    log = write(tmp_path / "broker.log", TEXT)
    empty = tmp_path / "nopacks"
    empty.mkdir()
    assert_one_line_error(run("events", log, "--patterns", empty), str(empty), "no *.toml packs")
    assert_one_line_error(run("patterns", "check", empty), str(empty), "no *.toml packs")
    missing = tmp_path / "missing"
    assert_one_line_error(run("events", log, "--patterns", missing), str(missing), "needs a directory")
    two = tmp_path / "two"
    two.mkdir()
    write(two / "a.toml", PACK_HEAD + _pattern("mine.same", "Frobnicator exploded", SAMPLE_LINE))
    write(two / "b.toml", PACK_HEAD + _pattern("mine.same", "Frobnicator imploded", SAMPLE_LINE))
    assert_one_line_error(run("patterns", "check", two), "b.toml", "pattern mine.same: duplicate id (also in a.toml)")


# --------------------------------------------------------------------------- regexes run in linear time


def test_catastrophic_regex_does_not_slow_analysis(tmp_path):
    """``(a+)+$`` against a's followed by a non-matching character takes a backtracking engine
    (Python's ``re``) about 2**n steps: hours for n = 40. Pack regexes only ever run on Polars'
    Rust engine, which is linear: 200,000 a's cost nothing."""
    packs = tmp_path / "packs"
    packs.mkdir()
    write(packs / "redos.toml", PACK_HEAD + _pattern("mine.redos", "REDOS (a+)+$", "10:12:01.231 [main] WARN  a.B - REDOS aaaa", 'contains = ["REDOS"]'))
    evil = "10:12:01.231 [main] WARN  a.B - REDOS " + "a" * 200_000 + "!"
    good = "10:12:01.231 [main] WARN  a.B - REDOS " + "a" * 200_000
    p = write(tmp_path / "redos.log", "\n".join([evil] * 20 + [good] + [PRESENT] * 100) + "\n")
    from test_scale import cpu_seconds

    code, _, baseline, err = cpu_seconds("analyze", "--format", "json", str(p))
    assert code == 0, err
    code, _, with_pack, err = cpu_seconds("analyze", "--format", "json", str(p), "--patterns", str(packs))
    assert code == 0 and "internal error" not in err, err
    assert with_pack < baseline + 10, (baseline, with_pack)  # CPU-s, not wall-clock time
    evs = events_ndjson(p, "--patterns", packs, "--event", "e_mine_redos")
    assert [e["line"] for e in evs] == [21]  # the pattern works: only the line that ends in a's
    assert_clean(run("patterns", "check", packs))


# --------------------------------------------------------------------------- untrusted text

# a topic name and a message tail an attacker controls: markup, an OSC title change, a screen clear,
# a bidi override and an 8-bit CSI
EVIL = SHORT.replace("id t ", "id t\x1b]0;pwned\x07\x1b[2J\u202egnp\x9b31m ") + " [bold red]EVIL[/] [link=x]y[/link]"


def run_on_terminal(*args, cwd: Path = ROOT, timeout: float = TIMEOUT) -> tuple[int, str, str]:
    """Run the CLI with stdout on a pseudo-terminal (so it renders for a person)."""
    master, slave = os.openpty()
    env = dict(os.environ, TZ="UTC", COLUMNS="1000", TERM="xterm-256color")
    env.pop("LOGSLEUTH_DEBUG", None)
    p = subprocess.Popen([sys.executable, "-m", "logsleuth", *map(str, args)], stdin=subprocess.DEVNULL, stdout=slave, stderr=subprocess.PIPE, env=env, cwd=cwd)
    os.close(slave)
    chunks: list[bytes] = []
    reader = threading.Thread(target=lambda: _drain(master, chunks), daemon=True)
    reader.start()
    try:
        err = p.communicate(timeout=timeout)[1]
    finally:
        reader.join(10)
        os.close(master)
    return p.returncode, b"".join(chunks).decode("utf-8", "replace"), err.decode("utf-8", "replace")


def _drain(fd: int, out: list[bytes]) -> None:
    while True:
        try:
            b = os.read(fd, 65536)
        except OSError:  # EIO: the child closed the terminal
            return
        if not b:
            return
        out.append(b)


def assert_neutralised(out: str, shown: str | None = "\\x1b]0;pwned\\x07") -> None:
    """None of the log's escape sequences reached the terminal raw; they are shown instead."""
    for raw in ("\x1b]0;pwned", "\x07", "\x1b[2J", "\u202e", "\x9b"):
        assert raw not in out, repr(raw)
    if shown is not None:
        assert shown in out, out[-3000:]


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_control_characters_are_neutralised_on_a_terminal(tmp_path):
    p = write(tmp_path / "evil.log", EVIL + "\n" + INFO + "\n")
    code, out, err = run_on_terminal("events", p)  # default on a terminal: the table
    assert (code, err) == (0, ""), (code, err, out)
    assert_neutralised(out)
    assert "[bold red]EVIL[/] [link=x]y[/link]" in out  # markup printed literally
    for fmt, shown in (("grep", None), ("csv", None), ("ndjson", "\\u001b]0;pwned\\u0007")):
        code, out, err = run_on_terminal("events", p, "--format", fmt)
        assert (code, err) == (0, ""), (fmt, err)
        assert_neutralised(out, shown)
        if shown is None:
            assert "t\\x1b]0;pwned\\x07\\x1b[2J\\u202egnp\\x9b31m is already present on the connection [bold red]EVIL[/]" in out, fmt
    code, out, err = run_on_terminal("timeline", p, "--format", "lines")  # grep-like, with times
    assert (code, err) == (0, "")
    assert_neutralised(out)
    code, out, err = run_on_terminal("analyze", p)
    assert (code, err) == (0, "")
    assert_neutralised(out, None)
    named = write(tmp_path / "x\x1b]0;pwned\x07[bold]y.log", TEXT)  # file names are untrusted too
    code, out, err = run_on_terminal("inspect", named.name, cwd=tmp_path)
    assert (code, err) == (0, "")
    assert_neutralised(out)
    assert "[bold]y.log" in out


def test_grep_output_keeps_the_original_line_when_piped(tmp_path):
    p = write(tmp_path / "evil.log", (EVIL + "\n").encode())
    r = run("events", p)
    assert_clean(r)
    assert r.out == f"{p}:1:{EVIL}\n"  # byte for byte, as grep -n would print it
    (ev,) = events_ndjson(p)
    assert ev["text"] == EVIL  # JSON escapes the control characters; the text is intact


def test_markup_is_never_interpreted(tmp_path):
    p = write(tmp_path / "markup.log", SHORT + " [bold red]EVIL[/] [/] [link=x]y[/link]\n")
    for fmt in ("table", "grep", "csv"):
        r = run("events", p, "--format", fmt, env={"COLUMNS": "1000"})
        assert_clean(r)
        assert "[bold red]EVIL[/] [/] [link=x]y[/link]" in r.out, fmt
    # enough rejections for a finding, so the report quotes the lines
    many = "".join(SHORT.replace("01.231", f"{i:02d}.231") + " [bold red]EVIL[/] [/] [link=x]y[/link]\n" for i in range(25))
    p = write(tmp_path / "markup-many.log", many)
    for fmt in ("text", "terminal", "markdown"):
        r = run("analyze", p, "--format", fmt)
        assert_clean(r)
        assert r.code == 0 and "[bold red]EVIL[/] [/] [link=x]y[/link]" in r.out, fmt


def test_markdown_report_escapes_log_text(tmp_path):
    """File names and quoted log lines cannot add markup, HTML or links to a pasted postmortem."""
    name = "b*old*_[x](javascript:alert)_<img src=x>|$x$.log"
    p = write(tmp_path / name, "\n".join([EVIL.replace("EVIL", "<script>alert(1)</script> **EVIL**")] * 3) + "\n")
    r = run("analyze", p, "--format", "markdown")
    assert_clean(r)
    body = r.out
    assert "\x1b" not in body and "\x07" not in body and "\u202e" not in body
    fences = re.findall(r"^(`{3,})text\n(.*?)^\1$", body, re.M | re.S)
    for _, block in fences:  # evidence is quoted inside code fences (not rendered), escapes visible
        assert "pwned" not in block or "\\x1b]0;pwned\\x07" in block
    outside = re.sub(r"^(`{3,})text\n.*?^\1$", "", body, flags=re.M | re.S)
    assert "<img" not in outside and "<script>" not in outside and not re.search(r"(?<!\\)\]\(", outside)
    assert "\\*old\\*\\_\\[x\\](javascript:alert)\\_&lt;img src=x&gt;\\|\\$x\\$.log" in outside


def test_html_report_escapes_log_text(tmp_path):
    name = "<script>alert(1)<.script><img src=x onerror=alert(2)>.log"  # no '/' in a file name
    p = write(tmp_path / name, "\n".join([EVIL.replace("EVIL", "<script>alert(3)</script>")] * 3) + "\n")
    r = run("analyze", p, "--format", "html")
    assert_clean(r)
    body = r.out
    assert "<script" not in body and "<img" not in body and "onerror=alert(2)>" not in body
    assert "&lt;script&gt;alert(1)&lt;.script&gt;&lt;img src=x onerror=alert(2)&gt;.log" in body
    assert "\x1b" not in body and "\x07" not in body and "\u202e" not in body


def test_markdown_renderer_escapes_every_field():
    import datetime as dt

    import polars as pl

    from logsleuth.findings import Analysis
    from logsleuth.detectors.finding import Evidence, Finding
    from logsleuth.ingest.inputs import InputReport
    from logsleuth.render.markdown import document
    from logsleuth.ingest.stats import ReadStats

    evil = "1. [bold]x[/bold] <b>html</b> *em* _u_ `code` | $m$ ~s~ \x1b[2J\u202e\n# heading"
    t = dt.datetime(2024, 5, 2, tzinfo=dt.timezone.utc)
    f = Finding(
        id="x.y", severity="high", title=evil, root_cause=evil, confidence=0.9, confidence_reasons=[evil],
        first_seen=t, last_seen=t, subjects=[{"topic": evil}], cause={"topic": evil},
        evidence=[Evidence(path=evil, line=3, text="line ```` with ``` fences\x1b[31m" + evil, ts=t, note=evil)],
        remediation=[evil], references=[evil], ruled_out=[evil],
    )
    rep = InputReport(evil, ReadStats(notes=[evil]))
    body = document(Analysis(inputs=[rep], events=pl.DataFrame(), findings=[f]))
    outside = re.sub(r"^(`{3,})text\n.*?^\1$", "", body, flags=re.M | re.S)
    assert "\x1b" not in body and "\u202e" not in body
    assert "<b>" not in outside
    assert "[bold]" not in outside and "*em*" not in outside and "$m$" not in outside and "`code`" not in outside
    assert "\n# heading" not in outside and "\n1. [" not in outside
    # one line, every markup character escaped; "1." cannot start a list, "#" is not at a line start
    assert "1\\. \\[bold\\]x\\[/bold\\] &lt;b&gt;html&lt;/b&gt; \\*em\\* \\_u\\_ \\`code\\` \\| \\$m\\$ \\~s\\~ \\\\x1b\\[2J\\\\u202e\\\\n# heading" in body
    fences = [f for f in re.findall(r"^(`{3,})text\n(.*?)^\1$", body, re.M | re.S) if "fences" in f[1]]
    assert len(fences) == 1 and len(fences[0][0]) == 5  # longer than the longest run of backticks it quotes


# --------------------------------------------------------------------------- signals and pipes


@pytest.mark.parametrize(
    "args",
    [("events",), ("events", "--format", "table"), ("events", "--format", "ndjson"), ("analyze", "--format", "text")],
    ids=lambda a: "-".join(a),
)
def test_piping_into_head_exits_quietly(tmp_path, args):
    p = tmp_path / "same.log"
    if not p.exists():
        write(p, (PRESENT + "\n") * 100_000)
    env = dict(os.environ, TZ="UTC", COLUMNS="200")
    proc = subprocess.Popen([sys.executable, "-m", "logsleuth", *args, str(p)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ROOT)
    try:
        assert select.select([proc.stdout], [], [], TIMEOUT)[0], "no output"
        first = proc.stdout.readline()  # what `| head -1` does: read one line, close the pipe
        proc.stdout.close()
        err = proc.communicate(timeout=TIMEOUT)[1]
        code = proc.returncode
    finally:
        proc.kill()
    assert first.strip()
    assert err == b"", err.decode()
    assert code == 0


def _as_at_a_terminal() -> None:
    """Ctrl-C as a shell at a terminal leaves it to a program: not ignored. A test run started in the
    background of a script inherits SIGINT ignored (POSIX: a program started so keeps ignoring it,
    and logsleuth does), which is not what these tests are about."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _unread(fd: int) -> int:
    buf = array.array("i", [0])
    fcntl.ioctl(fd, termios.FIONREAD, buf)
    return buf[0]


@pytest.mark.parametrize("command", ["inspect", "events", "analyze"])
def test_ctrl_c_exits_130_with_one_line(command):
    """SIGINT while waiting for input: the reader has taken what was written and blocks for more."""
    env = dict(os.environ, TZ="UTC")
    proc = subprocess.Popen([sys.executable, "-m", "logsleuth", command, "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ROOT,
                            preexec_fn=_as_at_a_terminal)
    try:
        proc.stdin.write(TEXT.encode() * 10)
        proc.stdin.flush()
        deadline = time.monotonic() + 60
        while _unread(proc.stdin.fileno()) and time.monotonic() < deadline:  # started and reading
            time.sleep(0.02)
        time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=30)
        err = proc.stderr.read().decode()
    finally:
        proc.kill()
    assert code == 130
    assert err == "logsleuth: interrupted\n"


def test_ctrl_c_while_busy_exits_130_with_one_line(tmp_path):
    """SIGINT while Polars is working through chunks (a generator is closed while unwinding); the
    events' texts written so far (ingest/texts.py) go with it."""
    env = dict(os.environ, TZ="UTC", TMPDIR=str(tmp_path))
    proc = subprocess.Popen([sys.executable, "-m", "logsleuth", "analyze", "-"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=ROOT,
                            preexec_fn=_as_at_a_terminal)
    block = (PRESENT + "\n").encode() * 20_000
    sent = 0
    try:
        try:
            while sent < 80 * 1024 * 1024:  # a few 32 MB chunks in
                proc.stdin.write(block)
                sent += len(block)
        except BrokenPipeError:
            pass
        proc.send_signal(signal.SIGINT)
        try:
            proc.stdin.close()
        except BrokenPipeError:
            pass
        code = proc.wait(timeout=60)
        err = proc.stderr.read().decode()
    finally:
        proc.kill()
    assert code == 130
    assert err == "logsleuth: interrupted\n"
    assert not list(tmp_path.glob("logsleuth-texts-*"))


@pytest.mark.parametrize("fmt", ["ndjson", "grep"])
def test_ctrl_c_while_the_output_pipe_is_full_exits_130(tmp_path, fmt):
    """SIGINT while the compiled writer (rust/src/writer.rs) waits on a pipe nobody reads (a pager
    left open): the interrupted write runs Python's handler, as Python's own writes do."""
    p = write(tmp_path / "many.log", (PRESENT + "\n") * 30_000)
    env = dict(os.environ, TZ="UTC")
    proc = subprocess.Popen([sys.executable, "-m", "logsleuth", "events", "--format", fmt, str(p)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env, cwd=ROOT, preexec_fn=_as_at_a_terminal)
    try:
        deadline = time.monotonic() + 120
        while _unread(proc.stdout.fileno()) < 60_000 and time.monotonic() < deadline:  # the pipe is full: the writer waits
            time.sleep(0.05)
        time.sleep(0.3)
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=30)  # (the output is never read)
        err = proc.stderr.read().decode()
    finally:
        proc.kill()
    assert code == 130
    assert err == "logsleuth: interrupted\n"


# --------------------------------------------------------------------------- options on the edge


def test_out_of_range_times_and_zones_are_one_line_errors(tmp_path):
    p = write(tmp_path / "client.log", "[2024-05-02 10:15:31,204] WARN x (a.B)\n")
    assert_one_line_error(run("events", p, "--since", "0001-01-01", "--display-tz", "Asia/Shanghai"), "out of range")
    assert_one_line_error(run("events", p, "--since", "-99999999999d"), "out of range")
    assert_one_line_error(run("inspect", p, "--tz", "localtime"), "unknown time zone 'localtime'")
    assert_one_line_error(run("inspect", p, "--layout-pattern", "%d{yyyy-MM-dd HH:mm:ss}{GMT-03:30} %m%n"), "GMT-03:30")
    for tz in ("posix/Asia/Shanghai", ":right/UTC", "localtime"):  # how TZ may spell this machine's zone
        (inp,) = [i for i in run("inspect", "-f", "json", p, env={"TZ": tz}).json()["inputs"]]
        assert inp["first_ts"] is not None, tz


def test_unencodable_terminal_and_deep_json(tmp_path):
    p = write(tmp_path / "cn.log", (SHORT + " 生产者 → …\n").encode())
    for fmt in ("table", "grep"):
        r = run("events", p, "--format", fmt, env={"PYTHONIOENCODING": "ascii", "COLUMNS": "1000"})
        assert_clean(r)
        assert "\\u751f" in r.out, fmt  # escaped, not a UnicodeEncodeError
    deep = write(tmp_path / "deep.log", '{"log": "x", "a": ' + "[" * 200_000 + "\n")
    (inp,) = inspect_json(deep)
    assert inp["lines"] == 1


def test_a_fresh_cache_with_two_inputs_read_side_by_side_never_fails(cli, tmp_path):
    """Two inputs are read on two threads; with no cache yet both compile the built-in layouts
    with pyparsing, whose grammar is not thread-safe (this failed about every other run)."""
    for i in range(4):
        r = cli("analyze", "--tz", "UTC", "-f", "json", SAMPLES / "kafka-outage", env={"LOGSLEUTH_CACHE_DIR": str(tmp_path / f"cache{i}")})
        assert r.code == 0, r
        assert r.json()["findings"], r


def test_chart_svg_escapes_log_text(tmp_path):
    """Subject labels in the chart come from log lines (topics): in the SVG they are text, never
    markup, in every way out (timeline --chart, the SVG beside a Markdown report, inline in HTML)."""
    import xml.etree.ElementTree as ET

    evil_topic = "persistent://t/ns/<script>alert(1)</script>\x1b[2J\u202e&x"
    lines = [
        "2023-09-12T07:30:01,600+0000 [pulsar-web-3-1] INFO  org.apache.pulsar.broker.namespace.OwnedBundle - Disabling ownership: t/ns/0x40000000_0x80000000",
        f"2023-09-12T07:30:01,900+0000 [pulsar-io-4-1] INFO  org.apache.pulsar.broker.service.ServerCnx - [/10.2.0.5:40001][{evil_topic}] Creating producer. producerId=5",
        f"2023-09-12T07:30:01,901+0000 [pulsar-io-4-1] WARN  org.apache.pulsar.broker.service.BrokerService - Namespace bundle for topic ({evil_topic}) not served by this instance. Please redo the lookup. Request is denied: namespace=t/ns",
    ] + [
        f"2023-09-12T07:3{1 + i}:00,000+0000 [pulsar-io-4-2] WARN  org.apache.pulsar.broker.service.ServerCnx - [/10.2.0.5:40001][5] Producer with id {evil_topic} is already present on the connection"
        for i in range(6)
    ]
    p = write(tmp_path / "broker.log", ("\n".join(lines) + "\n").encode())
    chart = tmp_path / "chart.svg"
    md, html = tmp_path / "r.md", tmp_path / "r.html"
    for args in (("timeline", p, "--chart", chart, "--format", "csv"), ("report", p, "-o", md), ("report", p, "-o", html)):
        r = run(*args)
        assert r.code == 0 and r.err.startswith("wrote ") and "Traceback" not in r.err, r
    inline = html.read_text()
    inline = inline[inline.index("<svg"): inline.index("</svg>") + 6]
    for body in (chart.read_text(), md.with_suffix(".svg").read_text(), inline):
        root = ET.fromstring(body.split("?>", 1)[-1])  # well-formed XML
        assert root.tag.endswith("svg")
        assert "<script" not in body and "\x1b" not in body and "\u202e" not in body
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body and "\\u202e&amp;x" in body  # (ingest drops the ANSI sequence itself)
        assert '<g class="lane"' in body
