"""What the reading core reads, through the CLI, without a second reader to compare it with.

Two kinds of check:

- **Reference-free**: the same log read in different ways gives the same events — at any chunk
  size (records cut by chunk ends), in byte ranges (``--split-size``) or whole, spilled or in
  memory; with CRLF line ends, NUL padding, a BOM, no final newline, prose on top or a stray
  Latin-1 byte (the lines mapped); coloured by a terminal-minded logger or plain (the ``text``
  with its escapes removed is the plain one).
- **Pinned outputs** (``tests/reading/expected/<case>.json``) for what has no such twin: hostile
  ANSI escapes, envelopes (CRI partial lines, a JSON logger's multi-line stacks, ``docker logs -t``,
  every zoo wrapper), inferred and message-only layouts, templates and reports, reads without the
  matcher. Each pins the output's digest, its line count, the events per kind and its first and
  last lines; ``LOGSLEUTH_REGENERATE=1`` rewrites them (read the diff as a change of output). They
  were first written by the Polars reading path, when it was the reference, and checked equal to
  the core's byte for byte (docs/performance.md, thirteenth session) before that path was removed.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import shutil
from pathlib import Path

import pytest

import zoo
from conftest import ROOT, SAMPLES, run
from logsleuth.ingest import compiled
from logsleuth.ingest.envelopes import ANSI_RE

REGENERATE = bool(os.environ.get("LOGSLEUTH_REGENERATE"))
EXPECTED = ROOT / "tests" / "reading" / "expected"
EVENTS = ("events", "--tz", "UTC", "-f", "ndjson")
DATED = ("--date", "2020-06-01")  # time-only logs dated by this, not by their files' times (a clone's are its own)
ANALYZE = ("analyze", "--tz", "UTC", "-f", "json")

_E = "\x1b["
_LEVEL = re.compile(r"\b(TRACE|DEBUG|INFO|WARN|ERROR)\b")
_ANSI = re.compile(ANSI_RE)  # the escapes a coloured line is read without
COLOURS = {  # how a terminal-minded logger (or a `script` capture) colours a line
    "level": lambda x, n: _LEVEL.sub(lambda m: f"{_E}3{n % 7}m{m.group(1)}{_E}0;39m", x, count=1) if _LEVEL.search(x) else
    re.sub(r"^(\S+)", f"{_E}2m\\1{_E}0m", x),  # (sarama's lines have no level: their first word)
    "whole": lambda x, n: f"{_E}3{n % 7}m{x}{_E}0m" if x else x,
    "in-words": lambda x, n: re.sub(r"(?<=\w)(?=\w{3}\b)", f"{_E}1m", x, count=3) + (f"{_E}K" if n % 3 == 0 else ""),
    "before-stamp": lambda x, n: (f"{_E}2m{x}{_E}22m") if n % 2 else (f"{_E}?25l{_E}0m{x}"),
    # escapes that never end, NULs and a CR next to one, lone ESCs, a long run of parameters
    "hostile": lambda x, n: [x + f"{_E}1;2;3;4", f"{_E}0m\x00\x00{x}", f"{x}\r{_E}0m", f"{x}\x1b", x + _E + "9" * 3000,
                             f"\x00{_E}31m{x}", x.replace(" ", f" {_E}m", 2) + "\r", f"{x}{_E}38;5;196m{_E}", x][n % 9],
}
COLOURED_SAMPLES = [f for d in ("kafka-outage", "pulsar-incident", "sarama-blackhole") for f in sorted((SAMPLES / d).iterdir())
                    if "pulsar-broker-2" not in f.name and "client-billing" not in f.name]  # (the rest of the incident: time)
BROKER = SAMPLES / "pulsar-incident" / "pulsar-broker-1.2020-06-01.log"
REAL = ROOT / "tests" / "shapes" / "real"


def coloured(src: Path, dst: Path, colour: str) -> Path:
    data = src.read_bytes()
    text = (gzip.decompress(data) if src.suffix == ".gz" else data).decode("utf-8")
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_text("\n".join(COLOURS[colour](x, n) for n, x in enumerate(text.split("\n"))), encoding="utf-8", newline="")
    return dst


def cri(lines: list[str], width: int) -> str:
    """``lines`` as a kubelet writes them: each line longer than ``width`` cut into ``P`` parts and
    the ``F`` rest, every 7th line on stderr, written between another line's parts."""
    out, err = [], []
    for n, x in enumerate(lines):
        stamp = f"2024-05-02T10:{n // 60 % 60:02d}:{n % 60:02d}.{n:09d}Z"
        stream = "stderr" if n % 7 == 3 else "stdout"
        parts = [x[i:i + width] for i in range(0, len(x), width)] or [""]
        for k, part in enumerate(parts):
            out.append(f"{stamp} {stream} {'F' if k == len(parts) - 1 else 'P'} {part}")
            if k == 0 and len(parts) > 1 and err:
                out.append(err.pop())  # another stream's line between the parts
        if n % 11 == 5:
            err.append(f"{stamp} stderr F a line of the other stream {n}")
    return "\n".join(out + err) + "\n"


def cri_crossed(lines: list[str], width: int) -> str:
    """``lines`` on two streams that both write lines longer than ``width`` at once: each line cut
    into parts, the parts of a stdout line and of the stderr line after it interleaved (a stream's
    run of parts is finished after the other stream's run has started)."""
    out = []
    for n in range(0, len(lines) - 1, 2):
        stamp = f"2024-05-02T10:{n // 60 % 60:02d}:{n % 60:02d}.{n:09d}Z"
        a, b = ([x[i:i + width] for i in range(0, len(x), width)] or [""] for x in lines[n:n + 2])
        tagged = [("stdout", "F" if k == len(a) - 1 else "P", p) for k, p in enumerate(a)]
        tagged_b = [("stderr", "F" if k == len(b) - 1 else "P", p) for k, p in enumerate(b)]
        for k in range(max(len(tagged), len(tagged_b))):
            for t in (tagged_b, tagged) if n % 4 else (tagged, tagged_b):
                if k < len(t):
                    out.append(f"{stamp} {t[k][0]} {t[k][1]} {t[k][2]}")
    return "\n".join(out) + "\n"


def docker_ts(lines: list[str], step_ns: int = 1) -> str:
    """``lines`` as ``docker logs -t`` prints them; ten lines a second, ``step_ns`` apart in it."""
    return "".join(f"2020-06-01T22:{n // 600 % 60:02d}:{n // 10 % 60:02d}.{n * step_ns:09d}Z {x}\n" for n, x in enumerate(lines))


# ------------------------------------------------------------------------------- the inputs


def _made(base: Path) -> dict[str, list[Path]]:
    """Every input set the checks read, written once per test session."""
    sets: dict[str, list[Path]] = {}
    # hostile escapes, and odd bytes behind colours: a 15 MB line of escapes, 200,000 unfinished ones
    sets["hostile"] = [coloured(f, base / "hostile" / f.parent.name / f.name.removesuffix(".gz"), "hostile") for f in COLOURED_SAMPLES]
    src = (SAMPLES / "kafka-outage" / "orders-producer.log").read_bytes().split(b"\n")
    col = [COLOURS["level"](x.decode(), n).encode() for n, x in enumerate(src)]
    odd = base / "ansi-odd"
    odd.mkdir()
    (odd / "latin1.log").write_bytes(b"\n".join(col[:30] + [b"[2024-05-02 10:09:00,000] \x1b[31mERROR\x1b[0m producer-\xe9] odd \xff"] + col[30:]))
    (odd / "huge.log").write_bytes(b"\n".join(col[:50] + [b"\x1b[1m" + b"x\x1b[0m" * 3_000_000 + b" Expiring 1 record(s)"] + col[50:]))
    (odd / "unfinished.log").write_bytes(b"\n".join(col[:20] + [b"\x1b[" * 200_000, b"\x1b[0m" * 1000] + col[20:]))
    (odd / "nul.log").write_bytes(b"\n".join(col[:20] + [b"\x00" * 100_000 + b"\x1b[0m" + col[20]] + col[21:]))
    (odd / "no-final-newline.log").write_bytes(b"\n".join(col).rstrip(b"\n") + b"\x1b[0")
    sets["ansi-odd"] = sorted(odd.iterdir())
    # envelopes: every wrapper and envelope of the zoo once (the Pulsar incident's; sarama's and Kafka's combinations)
    shapes = [(inc, sh) for inc in zoo.INCIDENTS for sh in zoo.shapes(inc)
              if (inc == "pulsar" and sh.name.startswith("as-is+")) or (inc != "pulsar" and len(sh.wrappers) > 1)
              or sh.name in ("logstash-json+cri", "level-first+markdown-quote+indented", "zap-json+cri", "klog+docker-json")]
    assert len(shapes) >= 18, len(shapes)
    for inc, sh in shapes:
        zoo.write(inc, sh, base / "zoo-wrapped" / inc / sh.name)
        for f in sorted((base / "zoo-wrapped" / inc / sh.name).iterdir())[2:]:  # (two files of each: time)
            f.unlink()
    sets["zoo-wrapped"] = [base / "zoo-wrapped"]
    picked = {"pulsar": ("level-first", "pipes", "brackets", "offset-iso", "log4j-iso-no-traces"),
              "kafka": ("log4j-iso", "dotted-date", "kafka-style"), "sarama": ("go-std", "logrus", "klog", "zap-console")}
    plain = [(inc, sh) for inc in zoo.INCIDENTS for sh in zoo.shapes(inc) if not sh.wrappers and sh.name in picked[inc]]
    assert len(plain) == sum(len(v) for v in picked.values())
    for inc, sh in plain:
        zoo.write(inc, sh, base / "zoo-plain" / inc / sh.name)
    sets["zoo-plain"] = [base / "zoo-plain"]
    made = base / "envelopes"
    made.mkdir()
    orders = (SAMPLES / "kafka-outage" / "orders-producer.log").read_text().splitlines()
    (made / "cri-parts.log").write_text(cri(orders, 40))
    head = re.compile(r"^\[(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d),(\d{3})\] (\w+) (.*) \(([\w.$]+)\)$")
    objs: list[dict] = []
    for line in orders:
        m = head.match(line)
        if m:
            objs.append({"@timestamp": f"{m[1]}T{m[2]}.{m[3]}Z", "level": m[4], "logger_name": m[6], "message": m[5]})
        else:  # the logstash encoder's stack trace: one key, its lines joined by newlines
            objs[-1]["stack_trace"] = (objs[-1].get("stack_trace", "") + "\n" + line).lstrip("\n")
    assert sum("stack_trace" in o for o in objs) >= 3
    (made / "logstash.json").write_text("".join(json.dumps(o) + "\n" for o in objs))
    broker = BROKER.read_text().splitlines()
    (made / "docker-ts.log").write_text(docker_ts(broker[:1500]))
    sets["envelopes"] = [made]
    # lines no catalogued layout reads: the inferred head and the message-only fallback
    from logsleuth.ingest.layouts.catalog import builtin_layouts
    from logsleuth.ingest.layouts.detect import SAMPLE_LINES, detect

    inferred = []
    for f in sorted([*REAL.glob("*.log"), *(ROOT / "tests" / "shapes" / "measured" / "logs").glob("*.log")]):
        det = detect(f.read_text(encoding="utf-8", errors="replace").splitlines()[:SAMPLE_LINES], list(builtin_layouts()))
        if det.envelope.is_none and (det.layout.inferred or det.layout.is_fallback):
            inferred.append(f)
    assert len(inferred) >= 10, inferred
    lay = base / "layouts"
    lay.mkdir()
    (lay / "gutter.log").write_text("".join(f"#{n} {x}\n" for n, x in enumerate(broker, 1)))  # time of day only
    (lay / "plain.log").write_text("".join(f"{x[13:]}\n" for x in broker))  # no stamps at all
    coloured(lay / "gutter.log", lay / "coloured" / "gutter.log", "whole")
    coloured(lay / "plain.log", lay / "coloured" / "plain.log", "level")
    sets["layouts"] = [*inferred, lay, SAMPLES / "kafka-untimed" / "shipping-console.log"]
    sets["layouts-made"] = [lay]
    # what templates and the reports parse: every record
    tpl = base / "templates"
    tpl.mkdir()
    lines = BROKER.read_bytes().split(b"\n")
    (tpl / "nul-crlf.log").write_bytes(b"\r\n".join(lines[:40] + [b"\x00\x00" + lines[40]] + lines[41:]))
    coloured(REAL / "01-pulsar-2x-fenced.log", tpl / "coloured.log", "level")
    sets["templates"] = [*sorted(tpl.iterdir()), *(REAL / f for f in ("01-pulsar-2x-fenced.log", "04-pulsar-kubectl-prefix.log", "06-pulsar-journald-short.log"))]
    nm = base / "no-matcher"  # (copies: the terminal's text is read from their folder)
    for d in ("kafka-outage", "kafka-untimed"):
        shutil.copytree(SAMPLES / d, nm / d)
    for f in ("04-pulsar-kubectl-prefix.log", "06-pulsar-journald-short.log", "01-pulsar-2x-fenced.log"):
        shutil.copy(REAL / f, nm)
    sets["no-matcher"] = [nm / "kafka-outage", nm / "kafka-untimed", *(nm / f for f in ("04-pulsar-kubectl-prefix.log", "06-pulsar-journald-short.log", "01-pulsar-2x-fenced.log"))]
    golden = sorted(p for p in (ROOT / "tests" / "golden").rglob("*") if p.is_file() and p.suffix in (".log", ".gz", ".txt") and "expected" not in p.name)
    sets["golden"] = golden
    sets["samples"] = sorted(p for p in SAMPLES.iterdir() if p.is_dir() and p.name != "generators")
    return sets


@pytest.fixture(scope="session")
def inputs(tmp_path_factory) -> tuple[Path, dict[str, list[Path]]]:
    base = tmp_path_factory.mktemp("reading")
    return base, _made(base)


# ------------------------------------------------------------------------------- pinned outputs

_TOOK = re.compile(r"(?m)^( *read .*) in [0-9]+\.[0-9] s$")  # the text report's time taken (render.report)
_GENERATED = re.compile(r"(?m)^Generated by logsleuth .* on [0-9-]+ [0-9:]+ UTC")  # the Markdown report's own time

# case -> (input set, arguments); each run's stdout and stderr pinned
CASES: dict[str, tuple[str, tuple[str, ...]]] = {
    "hostile-events": ("hostile", (*EVENTS, *DATED)),
    "hostile-analyze": ("hostile", (*ANALYZE, *DATED)),
    "ansi-odd-events": ("ansi-odd", (*EVENTS, *DATED)),
    "zoo-wrapped-events": ("zoo-wrapped", (*EVENTS, *DATED)),
    "zoo-plain-events": ("zoo-plain", (*EVENTS, *DATED)),
    "envelopes-events": ("envelopes", (*EVENTS, *DATED)),
    "envelopes-analyze": ("envelopes", (*ANALYZE, *DATED)),
    "envelopes-text": ("envelopes", ("analyze", "--tz", "UTC", *DATED)),
    "envelopes-templates": ("envelopes", ("templates", "--tz", "UTC", "-f", "json", *DATED)),
    "layouts-events": ("layouts", (*EVENTS, *DATED)),
    "layouts-analyze": ("layouts", (*ANALYZE, *DATED)),
    "layouts-text": ("layouts-made", ("analyze", "--tz", "UTC", *DATED)),
    "templates-templates": ("templates", ("templates", "--tz", "UTC", "-f", "json", *DATED)),
    "templates-markdown": ("templates", ("analyze", "--tz", "UTC", "-f", "markdown", *DATED)),
    "no-matcher-inspect": ("no-matcher", ("inspect", "--tz", "UTC", *DATED)),
    "no-matcher-patterns-test": ("no-matcher", ("patterns", "test", "--tz", "UTC", *DATED)),
    "sarama-silent-analyze": ("", (*ANALYZE, *DATED, str(SAMPLES / "sarama-silent"))),
    "golden-events": ("golden", (*EVENTS, *DATED)),
    "samples-events": ("samples", (*EVENTS, *DATED)),
}


def _normal(text: str, base: Path) -> str:
    """An output without what differs between runs: the inputs' temporary folder and the
    repository's place, the time a report took or was made, logsleuth's version."""
    from logsleuth import __version__

    text = text.replace(str(base), "<made>").replace(str(ROOT), "<root>")
    text = text.replace(f'"version": "{__version__}"', '"version": "<version>"').replace(f"logsleuth {__version__}", "logsleuth <version>")
    return _GENERATED.sub("Generated by logsleuth", _TOOK.sub(r"\1", text))


def _summary(out: str, err: str, code: int) -> dict:
    lines = out.splitlines()
    kinds: dict[str, int] = {}
    for x in lines:
        if x.startswith("{") and '"event": "' in x:
            kind = x.split('"event": "', 1)[1].split('"', 1)[0]
            kinds[kind] = kinds.get(kind, 0) + 1
    return {
        "code": code,
        "stdout_sha256": hashlib.sha256(out.encode()).hexdigest(),
        "stdout_lines": len(lines),
        "events": dict(sorted(kinds.items())),
        "first_lines": [x[:400] for x in lines[:3]],
        "last_lines": [x[:400] for x in lines[-3:]],
        "stderr": err,
    }


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_output_is_the_pinned_one(case, inputs, tmp_path):
    base, sets = inputs
    which, args = CASES[case]
    paths = sets.get(which, [])
    if "-f" not in args:  # the terminal's report wraps long paths: the inputs named from their folder, as the same text
        assert all(p.is_relative_to(base) for p in paths), case
        r = run(*args, *(p.relative_to(base) for p in paths), cwd=base)
    else:
        r = run(*args, *paths)
    out, err = _normal(r.out, base), _normal(r.err, base)
    got = _summary(out, err, r.code)
    expected_file = EXPECTED / f"{case}.json"
    if REGENERATE or not expected_file.exists():
        expected_file.parent.mkdir(parents=True, exist_ok=True)
        expected_file.write_text(json.dumps(got, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        if not REGENERATE:
            pytest.fail(f"{expected_file.relative_to(ROOT)} written: review it, then commit it")
        return
    want = json.loads(expected_file.read_text(encoding="utf-8"))
    if got != want:
        (tmp_path / f"{case}.out").write_text(out, encoding="utf-8")
        diff = {k: (want.get(k), got[k]) for k in got if want.get(k) != got[k] and k != "stdout_sha256"}
        pytest.fail(f"{case}: the output differs from {expected_file.relative_to(ROOT)} (LOGSLEUTH_REGENERATE=1 rewrites it); "
                    f"it is in {tmp_path / (case + '.out')}; {json.dumps(diff, ensure_ascii=False)[:3000]}")
    assert got["stdout_lines"] > 0


IN_PROCESS = pytest.mark.skipif(bool(os.environ.get("LOGSLEUTH_TEST_PROCESS")), reason="spies on the scanners of a run in this process")


@IN_PROCESS
def test_every_input_is_read_by_the_core(inputs, monkeypatch):
    """The scanner each kind of input goes through: an envelope's texts (TextScanner), the bytes
    of an input without one (Scanner), and not the other."""
    base, sets = inputs
    fed: dict[str, int] = {"bytes": 0, "texts": 0}
    feed, tfeed = compiled.Scanner.feed, compiled.TextScanner.feed
    monkeypatch.setattr(compiled.Scanner, "feed", lambda self, text, last=False: (fed.__setitem__("bytes", fed["bytes"] + len(text)), feed(self, text, last))[1])
    monkeypatch.setattr(compiled.TextScanner, "feed", lambda self, frame, last=False: (fed.__setitem__("texts", fed["texts"] + 1), tfeed(self, frame, last))[1])
    assert run(*EVENTS, *sets["envelopes"]).code == 0
    assert fed["texts"] >= 3 and fed["bytes"] == 0, fed
    assert run(*EVENTS, *sets["hostile"]).code == 0
    assert fed["bytes"] > 1_000_000, fed


# ------------------------------------------------------------------------------- reference-free


def _events(r) -> list[dict]:
    assert r.code in (0, 1), r
    return [json.loads(x) for x in r.out.splitlines()]


def _without(rows: list[dict], *keys: str) -> list[dict]:
    return [{k: v for k, v in x.items() if k not in keys} for x in rows]


def test_odd_bytes_give_the_logs_events(tmp_path):
    """CRLF line ends, NUL padding, a BOM without a final newline, prose on top, a stray Latin-1
    byte (transcoded): the events of the log as it is, the lines numbered as they are now."""
    src = BROKER.read_bytes()
    lines = src.split(b"\n")
    want = _events(run(*EVENTS, BROKER))
    assert len(want) > 500
    odd = {
        "crlf": (b"\r\n".join(lines), lambda n: n),
        "nul": (b"\n".join(lines[:40]) + b"\n\x00\x00\x00" + b"\n".join(lines[40:]), lambda n: n),
        "bom": (b"\xef\xbb\xbf" + src.rstrip(b"\n"), lambda n: n),
        "prose": (b"Pasted from the broker:\n\nsee below\n" + src, lambda n: n + 3),
        "latin1": (b"\n".join(lines[:30]) + b"\nproducer-\xe9] odd\n" + b"\n".join(lines[30:]), lambda n: n + (n > 30)),
    }
    for name, (data, moved) in odd.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / BROKER.name).write_bytes(data)  # (the file's name dates its stamps)
        got = _events(run(*EVENTS, tmp_path / name / BROKER.name))
        assert len(got) == len(want), name
        for a, b in zip(want, got):
            a = {**a, "path": b["path"], "line": moved(a["line"]), "line_end": moved(a["line_end"])}
            if name == "latin1" and a["line"] <= 30 < b["line_end"]:  # the record the odd line continues
                assert b["message"].endswith("producer-\ufffd] odd") or "producer-" in b["message"], b
                a["message"], a["line_end"] = b["message"], b["line_end"]
            assert a == b, (name, a, b)


@pytest.mark.parametrize("colour", ["level", "whole", "in-words"])
def test_a_coloured_log_gives_the_plain_logs_events(tmp_path, colour):
    """A log a terminal-minded logger coloured: the plain log's events, each quoting its line as
    it is (with the escapes; without them, the plain line)."""
    want = _events(run(*EVENTS, *COLOURED_SAMPLES))
    made = [coloured(f, tmp_path / f.parent.name / f.name.removesuffix(".gz"), colour) for f in COLOURED_SAMPLES]
    got = _events(run(*EVENTS, *made))
    assert len(got) == len(want) > 1000
    assert _without(got, "path", "text") == _without(want, "path", "text")
    assert [_ANSI.sub("", x["text"]) for x in got] == [x["text"] for x in want]
    assert sum(_E in x["text"] for x in got) > 1000


def test_chunk_ends_do_not_change_what_is_read(inputs):
    """Small chunks: records cut by chunk ends and carried into the next (CRI partial lines, of two
    streams writing long lines at once too, a JSON object's stack, a 15 MB line, time-only stamps): what is read at the default size (a separate
    process each: the chunk size is read once)."""
    base, sets = inputs
    crossed = base / "cri-crossed"
    crossed.mkdir(exist_ok=True)
    (crossed / "orders.log").write_text(cri_crossed((SAMPLES / "kafka-outage" / "orders-producer.log").read_text().splitlines(), 30))
    for args, paths in [
        (EVENTS, [crossed]),
        (EVENTS, [SAMPLES / "kafka-outage", SAMPLES / "sarama-cluster", *sets["envelopes"]]),
        (ANALYZE, [SAMPLES / "pulsar-incident"]),
        (EVENTS, sets["ansi-odd"]),
        (ANALYZE, sets["layouts-made"]),
        (("templates", "-f", "json"), sets["templates"][:2]),
    ]:
        whole = run(*args, *paths, process=True)
        small = run(*args, *paths, env={"LOGSLEUTH_CHUNK_BYTES": "9000"}, process=True)
        assert whole.code == small.code and whole.out == small.out and whole.err == small.err, args
        assert whole.out


def test_cri_parts_of_two_streams_chained_over_a_whole_chunk_are_read_at_once(tmp_path):
    """Hostile CRI: stdout's and stderr's runs of parts overlapping all the way through a chunk
    (each stream's line finished after the other's next one began), the last two never finished.
    Every part joined to its line (2 per logical line: 2N + 2 records of 4N + 2 lines), at the
    default chunk size and at small ones, in seconds: the cut where the chunk may end is found in
    one pass (a cut moved back one run at a time took minutes on 400k such lines). (A chain that
    never ends is held whole until it does, and read again with every chunk: what is left.)"""
    n = 20_000
    k = iter(range(1, 10 * n))

    def line(stream: str, flag: str) -> str:
        i = next(k)
        return f"2024-05-02T10:{i // 60000 % 60:02d}:{i // 1000 % 60:02d}.{i:09d}Z {stream} {flag} part {i} of a long line "
    lines = [line("stdout", "P"), line("stderr", "P")]
    for _ in range(n):
        lines += [line("stdout", "F"), line("stdout", "P"), line("stderr", "F"), line("stderr", "P")]
    log = tmp_path / "chained.log"
    log.write_text("\n".join(lines) + "\n")
    small = tmp_path / "small" / "chained.log"  # (at 9 KB chunks: the first 2,000 of them)
    small.parent.mkdir()
    small.write_text("\n".join(lines[: 4 * 2000 + 2]) + "\n")
    for path, m, env in ((log, n, {}), (small, 2000, {"LOGSLEUTH_CHUNK_BYTES": "9000"})):
        r = run("inspect", "--tz", "UTC", "-f", "json", path, env=env, process=True, timeout=120)
        assert r.code == 0, r
        got = json.loads(r.out)["inputs"][0]
        assert (got["envelope"], got["lines"], got["records"], got["lines_in_records"]) == ("cri", 4 * m + 2, 2 * m + 2, 4 * m + 2), (env, got)


def test_a_spilled_read_is_the_read_in_memory(inputs):
    """``--memory-budget 0``: the events written to disk as they come, the same outputs."""
    _, sets = inputs
    for args, paths in [(ANALYZE, sets["hostile"]), (EVENTS, sets["layouts"])]:
        mem = run(*args, *paths)
        disk = run(*args, *paths, "--memory-budget", "0")
        assert mem.code == disk.code and mem.out == disk.out, args


@IN_PROCESS
def test_byte_ranges_read_what_the_whole_file_reads(inputs, tmp_path, monkeypatch):
    """A big file read in byte ranges (``--engine dask --split-size``): each range skips the lines
    before its first record start and reads past its end up to the next one. Ranges of 6 KB:
    range ends inside stack traces, colours, an inferred layout, ``docker logs -t`` and kubectl's
    prefix; the same events and findings as the whole files (the ranges were the core's)."""
    pytest.importorskip("distributed", reason="the dask extra is part of the test install")
    coloured(SAMPLES / "kafka-outage" / "orders-producer.log", tmp_path / "coloured.log", "level")
    shutil.copy(REAL / "01-pulsar-2x-fenced.log", tmp_path)
    shutil.copy(REAL / "04-pulsar-kubectl-prefix.log", tmp_path)
    # (stamps a microsecond apart or more: of records with the same instant, the whole file's
    # latest and a range's may be different ones)
    (tmp_path / "docker-ts.log").write_text(docker_ts(BROKER.read_text().splitlines()[:700], step_ns=1000))
    paths = [SAMPLES / "kafka-outage" / "orders-producer.log", SAMPLES / "sarama-cluster", tmp_path]
    fed: list[int] = []
    feed, tfeed = compiled.Scanner.feed, compiled.TextScanner.feed
    monkeypatch.setattr(compiled.Scanner, "feed", lambda self, text, last=False: (fed.append(len(text)), feed(self, text, last))[1])
    monkeypatch.setattr(compiled.TextScanner, "feed", lambda self, frame, last=False: (fed.append(0), tfeed(self, frame, last))[1])
    split = ["--engine", "dask", "--scheduler", "threads", "--split-size", "6K"]
    for args in (["events", "--tz", "UTC", "-f", "grep"], list(ANALYZE)):
        whole = run(*args, *paths)
        fed.clear()
        ranges = run(*args, *paths, *split)
        assert whole.code == ranges.code == 0 and whole.out == ranges.out and whole.err == ranges.err, args
        assert len(fed) > 100, len(fed)
