"""The terminal report as an on-call engineer reads it at 80 columns: the answer on the first screen
(the worst incident's cause, what it hit and the action, with its findings' titles, within 24 lines), the answer again on the last
one, nothing wider than the terminal, and a pager only on a terminal."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time

import pytest

from conftest import ROOT, SAMPLES, run

SAMPLE_DIRS = sorted(p.name for p in SAMPLES.iterdir() if p.is_dir() and p.name != "generators")
SCREEN = {"COLUMNS": "80", "LINES": "24"}


def flat(lines: list[str]) -> str:
    """Lines joined with their wrapping undone."""
    return re.sub(r"\s+", " ", " ".join(lines))


def start(text: str, n: int = 45) -> str:
    """The first words of a sentence (what a cut '…' line still shows), whitespace normalised."""
    s = re.sub(r"\s+", " ", text)
    return s[:n].rsplit(" ", 1)[0]


@pytest.fixture(scope="module", params=SAMPLE_DIRS)
def sample(request):
    d = SAMPLES / request.param
    doc = run("analyze", "--tz", "UTC", d, "--format", "json").json()
    r = run("analyze", "--tz", "UTC", d, "--format", "terminal", env=SCREEN)
    assert r.code == 0, r
    return request.param, doc, r.out.splitlines()


def _short(doc: dict, text: str) -> str:
    """What the report does to paths: the directory all inputs share is left out."""
    prefix = os.path.commonpath([i["path"] for i in doc["inputs"]]) + "/"
    return text.replace(prefix, "")


def test_the_worst_incident_is_on_the_first_screen(sample):
    """One headline per incident: the worst one's cause, the logs it hit and the action to take now,
    each whole (wrapped, never cut mid-phrase), and the titles of the findings it groups."""
    name, doc, lines = sample
    inc = doc["incidents"][0]
    first = flat(lines[:24])
    assert _short(doc, inc["headline"]) in first, (name, inc["headline"], "\n".join(lines[:24]))
    assert re.sub(r"\s+", " ", _short(doc, inc["now"])) in first, (name, "\n".join(lines[:24]))
    for h in inc["hit"][:4]:
        assert _short(doc, h) in first, (name, h)
    worst = doc["findings"][inc["findings"][0] - 1]
    assert worst is doc["findings"][0] or doc["findings"][0]["severity"] == worst["severity"]
    nums = ", ".join(str(n) for n in inc["findings"])
    assert _short(doc, worst["title"]) in first or f"finding{'s' if len(inc['findings']) > 1 else ''} {nums} below" in first, (name, "\n".join(lines[:24]))
    # severity and confidence in words, not only a number
    assert re.search(rf"1 {inc['severity'].upper()} · (near certain|very likely|likely|possible|uncertain) \(", first)
    assert not [ln for ln in lines[:24] if ln.startswith(("  now", "         ")) and ln.rstrip().endswith("…")], name


def test_the_last_screen_names_it_again(sample):
    name, doc, lines = sample
    inc = doc["incidents"][0]
    last = flat(lines[-12:])
    assert start(_short(doc, inc["headline"]), 60) in last, (name, "\n".join(lines[-12:]))
    assert re.sub(r"\s+", " ", _short(doc, inc["now"])) in flat(lines[-20:]), (name, "\n".join(lines[-20:]))
    assert "── summary" in flat(lines[-24:])


def test_every_line_fits_80_columns_and_paths_are_short(sample):
    name, doc, lines = sample
    from rich.cells import cell_len

    wide = [ln for ln in lines if cell_len(ln) > 80]
    assert not wide, (name, wide)
    prefix = os.path.commonpath([i["path"] for i in doc["inputs"]]) + "/"
    body = "\n".join(lines)
    assert body.count(prefix) == 1, name  # said once, in the headline's second line
    # one phrase, whether it fits one line or the directory is long enough to take a line of its own
    assert f"in {prefix} (named below without it)" in flat(lines)
    assert not any(ln.rstrip().endswith("(named below") for ln in lines)


def test_routine_notes_wait_for_verbose():
    inc = SAMPLES / "pulsar-incident"
    out = run("analyze", "--tz", "UTC", inc, "--format", "terminal", env=SCREEN).out
    top = flat(out.splitlines()[:6])
    # the clocks off by more than a second are warnings near the top; the ones in step are not
    assert "clocks corrected: client-billing-1b7e.log 1.7 s behind, client-payments-5c2a.log.gz 3.2 s ahead" in top
    assert "clock in step" not in out and "routine notes" in out
    verbose = run("analyze", "--tz", "UTC", inc, "--format", "terminal", "-v", env=SCREEN).out
    assert "clock in step with pulsar-broker-1.2020-06-01.log" in flat(verbose.splitlines())
    assert "connection=/10.1.116.123:10837, producer_id=3" in flat(verbose.splitlines())  # the fields, with -v


def test_low_confidence_is_said_in_words(cli, tmp_path):
    # a client log alone: the broker side of the dangling producer is not in the logs given
    src = (SAMPLES / "pulsar-incident" / "client-orders-7d9f.log").read_text()
    p = tmp_path / "client-orders.log"
    p.write_text(src)
    doc = cli("analyze", "--tz", "UTC", p, "--format", "json").json()
    f = doc["findings"][0]
    out = cli("analyze", "--tz", "UTC", p, "--format", "terminal", env=SCREEN).out
    if f["confidence"] < 0.7:
        assert "low confidence" in flat(out.splitlines()[:24])
    else:
        assert "low confidence" not in out
    assert "Doubts" in out or not any(r.startswith("-") for r in f["confidence_reasons"])


def test_a_long_head_is_cut_before_the_evidence_message(cli, tmp_path):
    """A kubectl prefix around a Quarkus-style head leaves a 3-line evidence quote no room for the
    message at 80 columns: the head is cut (…) and the words that prove it are shown whole."""
    src = (SAMPLES / "kafka-outage" / "orders-producer.log").read_text().splitlines()
    pod = "[pod/orders-api-6d8f9c7b5-x2kqp/orders-api] "
    quarkus = re.compile(r"^\[([\d-]+ [\d:,]+)\] (\w+) (.*) \(([\w.$]+)\)$")  # '[%d] %p %m (%c)' -> '%d %-5p [%c] (%t) %m'
    lines = []
    for line in src:
        m = quarkus.match(line)
        lines.append(f"{pod}{m[1]} {m[2]:<5} [{m[4]}] (kafka-producer-network-thread | producer-1) {m[3]}" if m else pod + line)
    p = tmp_path / "orders.log"
    p.write_text("\n".join(lines) + "\n")
    out = cli("analyze", "--tz", "UTC", p, "--format", "text", env={"COLUMNS": "80"}).out
    assert "Kafka broker unreachable" in out or "unreachable" in out, out
    quoted = flat(out.splitlines())
    assert "… [Producer clientId=producer-1] Connection to node 2" in quoted, quoted
    assert "could not be established. Broker may not be available." in quoted


def test_a_long_log_name_stays_whole_in_the_inputs_at_80_columns(cli, tmp_path):
    """A pod's log name longer than the inputs table leaves room for is not folded mid-word: each
    log on a line of its own, what was read of it indented below."""
    name = "payments-service-orders-producer-7f9c8d6b5-x2k4q_production-eu-west-1.log"
    (tmp_path / name).write_text((SAMPLES / "kafka-outage" / "orders-producer.log").read_text())
    out = cli("analyze", "--tz", "UTC", tmp_path, "--format", "text", env={"COLUMNS": "80"}).out.splitlines()
    inputs = out[out.index(next(x for x in out if x.startswith("── inputs"))):]
    assert name in inputs, inputs[:6]
    detail = inputs[inputs.index(name) + 1]
    assert detail.startswith("    ") and " lines · " in detail and " events · " in detail, detail
    assert all(len(x) <= 80 for x in out)


def test_text_is_the_same_report_without_colours():
    inc = SAMPLES / "kafka-outage"
    env = {"COLUMNS": "80"}
    t = run("analyze", "--tz", "UTC", inc, "--format", "text", env=env).out
    term = run("analyze", "--tz", "UTC", inc, "--format", "terminal", env=SCREEN).out
    strip = lambda s: re.sub(r" in \d+\.\d s$", "", s, flags=re.M)  # the elapsed time differs
    assert strip(t) == strip(term)
    assert "\x1b" not in t


# ----------------------------------------------------------------------------- the pager


def _on_a_terminal(args: list[str], env: dict, timeout: float = 120) -> tuple[int, str]:
    """Run logsleuth with stdout and stderr on a pseudo-terminal; (exit code, what it showed)."""
    pid, fd = pty.fork()
    if pid == 0:  # the child
        os.chdir(ROOT)
        os.execve(sys.executable, [sys.executable, "-m", "logsleuth", *args], env)
    out = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r, _, _ = select.select([fd], [], [], 1)
        if r:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), out.decode("utf-8", "replace")


def _env(**extra) -> dict:
    e = {k: v for k, v in os.environ.items() if not k.startswith("LOGSLEUTH_")}
    e.update({"TZ": "UTC", "COLUMNS": "80", "LINES": "24", "TERM": "xterm-256color"}, **extra)
    for name in ("PAGER", "NO_COLOR", "FORCE_COLOR"):
        e.pop(name, None)
    e["XDG_CONFIG_HOME"] = str(ROOT / "tests" / "no-such-config-home")  # no config file of the developer's
    return e


def test_long_output_on_a_terminal_goes_through_the_pager(tmp_path):
    paged = tmp_path / "paged.txt"
    code, shown = _on_a_terminal(
        ["analyze", "--tz", "UTC", str(SAMPLES / "pulsar-incident")], _env(LOGSLEUTH_PAGER=f"cat > {paged}")
    )
    assert code == 0, shown
    text = paged.read_text()
    assert "\x1b[" in text  # colours kept for the pager (less -R)
    plain = re.sub(r"\x1b\[[0-9;]*m", "", text)
    assert "1 CRITICAL · near certain" in plain and "── summary" in plain
    assert "1 CRITICAL" not in re.sub(r"\x1b\[[0-9;]*m", "", shown)  # it went to the pager, not the screen


def test_no_pager_when_asked_or_piped(tmp_path):
    paged = tmp_path / "paged.txt"
    code, shown = _on_a_terminal(
        ["analyze", "--tz", "UTC", "--no-pager", str(SAMPLES / "pulsar-incident")], _env(LOGSLEUTH_PAGER=f"cat > {paged}")
    )
    assert code == 0 and not paged.exists()
    assert "1 CRITICAL · near certain" in re.sub(r"\x1b\[[0-9;]*m", "", shown)
    code, shown = _on_a_terminal(["analyze", "--tz", "UTC", str(SAMPLES / "pulsar-incident")], _env(LOGSLEUTH_PAGER=""))
    assert code == 0 and "1 CRITICAL · near certain" in re.sub(r"\x1b\[[0-9;]*m", "", shown)
    # piped: never a pager
    env = _env(LOGSLEUTH_PAGER=f"cat > {paged}")
    p = subprocess.run([sys.executable, "-m", "logsleuth", "analyze", "--tz", "UTC", str(SAMPLES / "pulsar-incident")],
                       capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert p.returncode == 0 and not paged.exists() and "[CRITICAL]" in p.stdout


# ----------------------------------------------------------------------------- timeline


def test_terminal_timeline_keeps_the_findings_causes(tmp_path):
    inc = SAMPLES / "pulsar-incident"
    r = run("timeline", "--tz", "UTC", inc, "--format", "terminal", env={"COLUMNS": "120"})
    assert r.code == 0, r
    rows = {ln.split()[0]: ln for ln in r.out.splitlines() if ln.strip()}
    # the ownership check is 3 lines among 1,729 events: the smoking gun is still a row
    assert "bundle_not_served" in rows and "bundle_not_served" in r.out
    assert re.search(r"^1 CRITICAL +━", r.out, re.M) and re.search(r"^2 HIGH +━", r.out, re.M)  # the periods marked
    chart = tmp_path / "t.svg"
    r = run("timeline", "--tz", "UTC", inc, "--chart", chart, "--format", "csv")
    assert r.code == 0 and f"wrote {chart}" in r.err
    body = chart.read_text()
    assert body.count('<g class="lane"') == 3 and 'data-kind="bundle unload"' in body and 'data-event="bundle_not_served"' in body
