"""The compiled reading core (rust/, logsleuth._core; docs/architecture.md "Reading core"): the
default; LOGSLEUTH_CORE=off reads with the Polars path, the reference it is compared with.

It must be built by the project's install (pip install . runs cargo), and what it reads must be
what the Polars path reads: the same outputs byte for byte on every sample, every zoo shape and
every golden case, across chunk seams; and, below the CLI, the same lines, record starts and
candidate lines as the Polars expressions on arbitrary text."""

from __future__ import annotations

import json
import os
import re
import shutil
import struct

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zoo
from conftest import ROOT, SAMPLES, run, run_process
from logsleuth.ingest import compiled

ON: dict[str, str] = {}  # the core reads by default
OFF = {"LOGSLEUTH_CORE": "off"}  # the Polars path, the reference


def test_the_install_built_the_core():
    """CI installs with pip from a clean clone: the extension must be there and be used."""
    mod = compiled.module()
    assert mod is not None, "logsleuth._core is missing: pip install . must build it (hatch_build.py, needs cargo)"
    assert mod.VERSION


def test_the_core_reads_by_default_and_not_when_turned_off(monkeypatch):
    """Without this, the comparisons below would pass with the core never used."""
    fed: list[int] = []
    feed = compiled.Scanner.feed
    monkeypatch.setattr(compiled.Scanner, "feed", lambda self, text, last=False: (fed.append(len(text)), feed(self, text, last))[1])
    r = run("events", "--tz", "UTC", "-f", "ndjson", SAMPLES / "pulsar-incident", env=ON)
    assert r.code == 0 and sum(fed) > 1_000_000, fed  # the broker logs and the Java clients' logs
    fed.clear()
    r = run("events", "--tz", "UTC", "-f", "ndjson", SAMPLES / "pulsar-incident", env=OFF)
    assert r.code == 0 and fed == []


_TOOK = re.compile(r"(?m)^( *read .*) in [0-9]+\.[0-9] s$")  # the text report's time taken (render.report)


def _same(args: list, env_extra: dict | None = None, process: bool = False) -> None:
    on = run(*args, env={**ON, **(env_extra or {})}, process=process)
    off = run(*args, env={**OFF, **(env_extra or {})}, process=process)
    assert on.code == off.code, (on, off)
    assert _TOOK.sub(r"\1", on.out) == _TOOK.sub(r"\1", off.out), f"stdout differs for {args}"
    assert on.err == off.err, f"stderr differs for {args}: {on.err!r} vs {off.err!r}"


SAMPLE_DIRS = sorted(p for p in SAMPLES.iterdir() if p.is_dir() and p.name != "generators")


@pytest.mark.parametrize("sample", SAMPLE_DIRS, ids=lambda p: p.name)
def test_every_sample_analyzes_the_same(sample):
    _same(["analyze", "--tz", "UTC", "-f", "json", sample])


def test_every_sample_event_reads_the_same():
    _same(["events", "--tz", "UTC", "-f", "ndjson", *SAMPLE_DIRS])


def test_chunk_seams_read_the_same():
    """Small chunks: records cut by chunk ends, carried into the next (a separate process each:
    the chunk size is read once)."""
    _same(["events", "--tz", "UTC", "-f", "ndjson", SAMPLES / "kafka-outage", SAMPLES / "sarama-cluster"], {"LOGSLEUTH_CHUNK_BYTES": "30000"}, process=True)
    _same(["analyze", "--tz", "UTC", "-f", "json", SAMPLES / "pulsar-incident"], {"LOGSLEUTH_CHUNK_BYTES": "9000"}, process=True)


def test_every_zoo_layout_reads_the_same(tmp_path):
    """The zoo's shapes without a wrapper (those with one: test_envelopes_read_the_same)."""
    picked = {"pulsar": ("level-first", "pipes", "brackets", "offset-iso", "log4j-iso-no-traces"),
              "kafka": ("log4j-iso", "dotted-date", "kafka-style"), "sarama": ("go-std", "logrus", "klog", "zap-console")}
    shapes = [(inc, sh) for inc in zoo.INCIDENTS for sh in zoo.shapes(inc) if not sh.wrappers and sh.name in picked[inc]]
    assert len(shapes) == sum(len(v) for v in picked.values())
    for inc, sh in shapes:
        zoo.write(inc, sh, tmp_path / inc / sh.name)
    _same(["events", "--tz", "UTC", "-f", "ndjson", tmp_path])


def test_every_golden_case_reads_the_same():
    cases = sorted(p for p in (ROOT / "tests" / "golden").rglob("*") if p.is_file() and p.suffix in (".log", ".gz", ".txt") and "expected" not in p.name)
    assert cases
    _same(["events", "--tz", "UTC", "-f", "ndjson", *cases])


def test_odd_bytes_read_the_same(tmp_path):
    """CRLF, NUL padding, a stray Latin-1 byte (transcoded), a BOM, no final newline, prose on top."""
    src = (SAMPLES / "pulsar-incident" / "pulsar-broker-1.2020-06-01.log").read_bytes()
    lines = src.split(b"\n")
    (tmp_path / "crlf.log").write_bytes(b"\r\n".join(lines))
    (tmp_path / "nul.log").write_bytes(b"\n".join(lines[:40]) + b"\n\x00\x00\x00" + b"\n".join(lines[40:]))
    (tmp_path / "latin1.log").write_bytes(b"\n".join(lines[:30]) + b"\nproducer-\xe9] odd\n" + b"\n".join(lines[30:]))
    (tmp_path / "bom.log").write_bytes(b"\xef\xbb\xbf" + src.rstrip(b"\n"))
    (tmp_path / "prose.log").write_bytes(b"Pasted from the broker:\n\nsee below\n" + src)
    for f in sorted(tmp_path.iterdir()):
        _same(["events", "--tz", "UTC", "-f", "ndjson", f])
    _same(["analyze", "--tz", "UTC", "-f", "json", tmp_path], {"LOGSLEUTH_CHUNK_BYTES": "20000"}, process=True)


_GENERATED = re.compile(r"(?m)^Generated by logsleuth .* on [0-9-]+ [0-9:]+ UTC")  # the report's own time


def test_templates_and_reports_read_the_same(tmp_path, monkeypatch):
    """`templates` and the Markdown/HTML reports parse every record (the unrecognised ones are
    counted per template and minute): the core parses them all, as the Polars path does. Real
    shapes with templates to rank, NUL padding and CRLF, ANSI colours, small chunks."""
    src = (SAMPLES / "pulsar-incident" / "pulsar-broker-1.2020-06-01.log").read_bytes().split(b"\n")
    (tmp_path / "nul-crlf.log").write_bytes(b"\r\n".join(src[:40] + [b"\x00\x00" + src[40]] + src[41:]))
    _coloured(ROOT / "tests" / "shapes" / "real" / "01-pulsar-2x-fenced.log", tmp_path / "coloured.log", "level")
    reals = [ROOT / "tests" / "shapes" / "real" / f for f in ("01-pulsar-2x-fenced.log", "04-pulsar-kubectl-prefix.log", "06-pulsar-journald-short.log")]
    fed: list[int] = []
    feed = compiled.Scanner.feed
    monkeypatch.setattr(compiled.Scanner, "feed", lambda self, text, last=False: (fed.append(len(text)), feed(self, text, last))[1])
    for f in [*sorted(tmp_path.iterdir()), *reals]:
        _same(["templates", "-f", "json", f])
        fed.clear()
        on, off = (run("analyze", "--tz", "UTC", "-f", "markdown", f, env=e) for e in (ON, OFF))
        assert on.code == off.code and _GENERATED.sub("", on.out) == _GENERATED.sub("", off.out), f
        if f.parent == tmp_path or "fenced" in f.name:  # (kubectl's prefix, journald: envelopes, read by TextScanner)
            assert sum(fed) > 0, f
    assert '"template"' in run("templates", "-f", "json", reals[0]).out  # (something to rank: the comparison is not of empty lists)
    _same(["templates", "-f", "json", tmp_path], {"LOGSLEUTH_CHUNK_BYTES": "9000"}, process=True)


def test_byte_ranges_of_a_split_file_read_the_same(tmp_path, monkeypatch):
    """A big file read in byte ranges (``--engine dask --split-size``): each range skips the lines
    before its first record start and reads past its end up to the next one; the core reads the
    ranges as the Polars path does (events with their lines, the findings). Ranges of 6 KB: range
    ends inside stack traces, colours, an inferred layout."""
    pytest.importorskip("distributed", reason="the dask extra is part of the test install")
    _coloured(SAMPLES / "kafka-outage" / "orders-producer.log", tmp_path / "coloured.log", "level")
    shutil.copy(ROOT / "tests" / "shapes" / "real" / "01-pulsar-2x-fenced.log", tmp_path)
    inputs = [SAMPLES / "kafka-outage" / "orders-producer.log", SAMPLES / "sarama-cluster", tmp_path]
    split = ["--engine", "dask", "--scheduler", "threads", "--split-size", "6K"]
    fed: list[int] = []
    feed = compiled.Scanner.feed
    monkeypatch.setattr(compiled.Scanner, "feed", lambda self, text, last=False: (fed.append(len(text)), feed(self, text, last))[1])
    for args in (["events", "--tz", "UTC", "-f", "grep"], ["analyze", "--tz", "UTC", "-f", "json"]):
        fed.clear()
        on, off = (run(*args, *inputs, *split, env=e) for e in (ON, OFF))
        assert on.code == off.code == 0 and on.out == off.out and on.err == off.err, args
        assert len(fed) > 100, len(fed)  # (the ranges were the core's: ~6 KB each)


def _read_by_core(monkeypatch, paths: list, args: tuple = ("events", "--tz", "UTC", "-f", "ndjson")) -> dict[str, bool]:
    """Whether the core reads ``paths``' inputs on an ``args`` run, by layout|envelope|ansi (reader._scanner's answer)."""
    from logsleuth.ingest import reader

    got: dict[str, bool] = {}
    scanner = reader._scanner

    def spy(det, clock, *args):
        s = scanner(det, clock, *args)
        key = f"{det.layout.id}|{det.envelope.name}|{'ansi' if det.envelope.ansi else ''}"
        got[key] = got.get(key, True) and s is not None
        return s

    monkeypatch.setattr(reader, "_scanner", spy)
    assert run(*args, *paths, env=ON).code in (0, 1)
    return got


def _all_three_same(paths: list) -> None:
    for args in (["analyze", "--tz", "UTC", "-f", "json"], ["events", "--tz", "UTC", "-f", "ndjson"], ["analyze", "--tz", "UTC"]):
        _same([*args, *paths])


_E = "\x1b["
_LEVEL = re.compile(r"\b(TRACE|DEBUG|INFO|WARN|ERROR)\b")
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


def _coloured(src, dst, colour) -> None:
    import gzip

    data = src.read_bytes()
    text = (gzip.decompress(data) if src.suffix == ".gz" else data).decode("utf-8")
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_text("\n".join(COLOURS[colour](x, n) for n, x in enumerate(text.split("\n"))), encoding="utf-8", newline="")


@pytest.mark.parametrize("colour", sorted(COLOURS))
def test_ansi_coloured_inputs_read_the_same(tmp_path, monkeypatch, colour):
    """A log with ANSI colours (a terminal's capture, a logger writing colours to a file): the core
    reads each line with its escapes removed, as the Polars path does (envelopes.unwrap), and the
    records' raw lines as they are. The same outputs, in memory and spilled."""
    for d in ("kafka-outage", "pulsar-incident", "sarama-blackhole"):
        for f in sorted((SAMPLES / d).iterdir()):
            if "pulsar-broker-2" not in f.name and "client-billing" not in f.name:  # (the rest of the incident: time)
                _coloured(f, tmp_path / d / f.name.removesuffix(".gz"), colour)
    read = _read_by_core(monkeypatch, [tmp_path])
    assert read and all(read.values()), read
    assert all(k.endswith("|ansi") for k in read), read  # (every input's colours were seen)
    _all_three_same(sorted(tmp_path.iterdir()))
    _same(["analyze", "--tz", "UTC", "-f", "json", "--memory-budget", "0", tmp_path])


def test_ansi_odd_bytes_read_the_same(tmp_path, monkeypatch):
    """Colours with a stray Latin-1 byte (transcoded), a 15 MB line of escapes, a line of 200,000
    unfinished escapes, NUL padding behind an escape, no final newline: one small chunk after another."""
    src = (SAMPLES / "kafka-outage" / "orders-producer.log").read_bytes().split(b"\n")
    col = [COLOURS["level"](x.decode(), n).encode() for n, x in enumerate(src)]
    (tmp_path / "latin1.log").write_bytes(b"\n".join(col[:30] + [b"[2024-05-02 10:09:00,000] \x1b[31mERROR\x1b[0m producer-\xe9] odd \xff"] + col[30:]))
    (tmp_path / "huge.log").write_bytes(b"\n".join(col[:50] + [b"\x1b[1m" + b"x\x1b[0m" * 3_000_000 + b" Expiring 1 record(s)"] + col[50:]))
    (tmp_path / "unfinished.log").write_bytes(b"\n".join(col[:20] + [b"\x1b[" * 200_000, b"\x1b[0m" * 1000] + col[20:]))
    (tmp_path / "nul.log").write_bytes(b"\n".join(col[:20] + [b"\x00" * 100_000 + b"\x1b[0m" + col[20]] + col[21:]))
    (tmp_path / "no-final-newline.log").write_bytes(b"\n".join(col).rstrip(b"\n") + b"\x1b[0")
    read = _read_by_core(monkeypatch, sorted(tmp_path.iterdir()))
    assert read and all(read.values()), read
    for f in sorted(tmp_path.iterdir()):
        _same(["events", "--tz", "UTC", "-f", "ndjson", f])
    _same(["analyze", "--tz", "UTC", "-f", "json", tmp_path], {"LOGSLEUTH_CHUNK_BYTES": "20000"}, process=True)


INFERRED_SHAPES = sorted([*(ROOT / "tests" / "shapes" / "real").glob("*.log"), *(ROOT / "tests" / "shapes" / "measured" / "logs").glob("*.log")])


def test_inferred_and_plain_layouts_read_the_same(tmp_path, monkeypatch):
    """Lines no catalogued layout reads: the inferred head (records start at a stamp in a line's
    first characters, infer.py) and the message-only fallback (every line a record). The real and
    measured shapes read so, the untimed sample, and made ones: a time-only stamp after a line number,
    plain lines, each also coloured."""
    from logsleuth.ingest.layouts.detect import SAMPLE_LINES, detect
    from logsleuth.ingest.layouts.catalog import builtin_layouts

    picked = []
    for f in INFERRED_SHAPES:
        det = detect(f.read_text(encoding="utf-8", errors="replace").splitlines()[:SAMPLE_LINES], list(builtin_layouts()))
        if det.envelope.is_none and (det.layout.inferred or det.layout.is_fallback):
            picked.append(f)
    assert len(picked) >= 10, picked
    src = (SAMPLES / "pulsar-incident" / "pulsar-broker-1.2020-06-01.log").read_text().splitlines()
    (tmp_path / "gutter.log").write_text("".join(f"#{n} {x}\n" for n, x in enumerate(src, 1)))  # time of day only
    (tmp_path / "plain.log").write_text("".join(f"{x[13:]}\n" for x in src))  # no stamps at all
    _coloured(tmp_path / "gutter.log", tmp_path / "coloured" / "gutter.log", "whole")
    _coloured(tmp_path / "plain.log", tmp_path / "coloured" / "plain.log", "level")
    made = [tmp_path / "gutter.log", tmp_path / "plain.log", tmp_path / "coloured" / "gutter.log", tmp_path / "coloured" / "plain.log"]
    untimed = SAMPLES / "kafka-untimed" / "shipping-console.log"
    read = _read_by_core(monkeypatch, [*picked, *made, untimed])
    assert all(read.values()) and any(k.startswith("inferred-head") for k in read) and any(k.startswith("message-only") for k in read), read
    _all_three_same([*picked, *made, untimed])
    _same(["events", "--tz", "UTC", "-f", "ndjson", "--memory-budget", "0", *picked, *made])
    _same(["analyze", "--tz", "UTC", "-f", "json", *made], {"LOGSLEUTH_CHUNK_BYTES": "9000"}, process=True)


def _cri(lines: list[str], width: int) -> str:
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


def test_envelopes_read_the_same(tmp_path, monkeypatch):
    """Inputs with an envelope: Polars unwraps each chunk's lines (envelopes.unwrap), the core reads
    their texts (compiled.TextScanner), the records take the lines' numbers, raw lines and envelope
    fields. Every zoo shape with a wrapper or an envelope; CRI partial lines cut by chunk ends,
    another stream between them; a JSON logger's objects whose text holds newlines (the stack in
    ``stack_trace``); small chunks: the same outputs as the Polars path."""
    # (every wrapper and envelope once: the Pulsar incident's; sarama's and Kafka's combinations)
    shapes = [(inc, sh) for inc in zoo.INCIDENTS for sh in zoo.shapes(inc)
              if (inc == "pulsar" and sh.name.startswith("as-is+")) or (inc != "pulsar" and len(sh.wrappers) > 1)
              or sh.name in ("logstash-json+cri", "level-first+markdown-quote+indented", "zap-json+cri", "klog+docker-json")]
    assert len(shapes) >= 18, len(shapes)
    for inc, sh in shapes:
        zoo.write(inc, sh, tmp_path / "zoo" / inc / sh.name)
        for f in sorted((tmp_path / "zoo" / inc / sh.name).iterdir())[2:]:  # (two files of each: time)
            f.unlink()
    made = tmp_path / "made"
    made.mkdir()
    src = (SAMPLES / "kafka-outage" / "orders-producer.log").read_text().splitlines()
    (made / "cri-parts.log").write_text(_cri(src, 40))
    head = re.compile(r"^\[(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d),(\d{3})\] (\w+) (.*) \(([\w.$]+)\)$")
    objs: list[dict] = []
    for line in src:
        m = head.match(line)
        if m:
            objs.append({"@timestamp": f"{m[1]}T{m[2]}.{m[3]}Z", "level": m[4], "logger_name": m[6], "message": m[5]})
        else:  # the logstash encoder's stack trace: one key, its lines joined by newlines
            objs[-1]["stack_trace"] = (objs[-1].get("stack_trace", "") + "\n" + line).lstrip("\n")
    assert sum("stack_trace" in o for o in objs) >= 3
    (made / "logstash.json").write_text("".join(json.dumps(o) + "\n" for o in objs))
    broker = (SAMPLES / "pulsar-incident" / "pulsar-broker-1.2020-06-01.log").read_text().splitlines()[:1500]
    (made / "docker-ts.log").write_text("".join(f"2020-06-01T22:{n // 600 % 60:02d}:{n // 10 % 60:02d}.{n:09d}Z {x}\n" for n, x in enumerate(broker)))
    read = _read_by_core(monkeypatch, [tmp_path])
    assert read and all(read.values()), read
    wrapped = [k for k in read if "|none|" not in k]  # (a zap-json shape's std-log lines: no envelope)
    assert len(wrapped) >= 15 and any("cri" in k for k in wrapped) and any("json" in k for k in wrapped), read
    _same(["events", "--tz", "UTC", "-f", "ndjson", tmp_path])
    _all_three_same([made])
    _same(["templates", "-f", "json", made])
    _same(["events", "--tz", "UTC", "-f", "ndjson", made / "cri-parts.log", made / "logstash.json"], {"LOGSLEUTH_CHUNK_BYTES": "9000"}, process=True)


def test_reads_without_the_matcher_read_the_same(monkeypatch):
    """Reads that keep records, not events: ``inspect`` (every record parsed and counted),
    ``patterns test`` (every record, each with its pattern or none), a detector's second read of
    a log (the sarama stall's lines no pattern matched). The core reads them, the same as Polars."""
    inputs = [SAMPLES / "kafka-outage", SAMPLES / "kafka-untimed", ROOT / "tests" / "shapes" / "real" / "04-pulsar-kubectl-prefix.log",
              ROOT / "tests" / "shapes" / "real" / "06-pulsar-journald-short.log", ROOT / "tests" / "shapes" / "real" / "01-pulsar-2x-fenced.log"]
    for args in (("inspect", "--tz", "UTC"), ("patterns", "test", "--tz", "UTC")):
        read = _read_by_core(monkeypatch, inputs, args)
        assert len(read) >= 4 and all(read.values()), (args, read)
        _same([*args, *inputs])
    _same(["analyze", "--tz", "UTC", "-f", "json", SAMPLES / "sarama-silent"])


def test_byte_ranges_with_an_envelope_read_the_same(tmp_path, monkeypatch):
    """An input with an envelope read in byte ranges of 6 KB (``docker logs -t``; kubectl's prefix):
    the core reads each range's unwrapped texts as the Polars path reads them."""
    pytest.importorskip("distributed", reason="the dask extra is part of the test install")
    broker = (SAMPLES / "pulsar-incident" / "pulsar-broker-1.2020-06-01.log").read_text().splitlines()[:700]
    (tmp_path / "docker-ts.log").write_text("".join(f"2020-06-01T22:{n // 600 % 60:02d}:{n // 10 % 60:02d}.{n:09d}Z {x}\n" for n, x in enumerate(broker)))
    shutil.copy(ROOT / "tests" / "shapes" / "real" / "04-pulsar-kubectl-prefix.log", tmp_path)
    scanned: list[int] = []
    feed = compiled.TextScanner.feed
    monkeypatch.setattr(compiled.TextScanner, "feed", lambda self, frame, last=False: (scanned.append(0), feed(self, frame, last))[1])
    split = ["--engine", "dask", "--scheduler", "threads", "--split-size", "6K"]
    for args in (["events", "--tz", "UTC", "-f", "grep"], ["analyze", "--tz", "UTC", "-f", "json"]):
        scanned.clear()
        on, off = (run(*args, tmp_path, *split, env=e) for e in (ON, OFF))
        assert on.code == off.code == 0 and on.out == off.out and on.err == off.err, args
        assert len(scanned) > 20, len(scanned)  # (the ranges were the core's: ~6 KB each)


# ---------------------------------------------------------------- below the CLI: the core itself

START = r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}"
STAMP = r"^(?:[^\n]*?[^0-9A-Za-z\n])??(?P<_s0>\d{2}:\d{2}:\d{2})(?:[^0-9]|$)"
SELECT = (["lit", "Zap", "ε"], ["producer", "stop"])  # case-sensitive; ASCII-case-insensitive (ſ is not s)
ALPHABET = st.sampled_from(["2024-01-02 10:11", "12:13:14 ", "lit", "zap", "ZAP", "Producer", "stop", "STOP", "ε", "é", "\r", "\n", "\n", "\x00", " ", "x", "ſ"])


def _u64(b: bytes) -> list[int]:
    return list(struct.unpack(f"<{len(b) // 8}Q", b))


def _polars_reading(buf: bytes, head_chars: int, ansi: bool = False) -> tuple[list[str], list[str], list[bool], list[bool]]:
    """Lines, their texts (what the layout reads), record starts and candidate lines as the Polars
    path computes them (with ``ansi``: the escapes removed first, envelopes.unwrap)."""
    from logsleuth.ingest.envelopes import ANSI_RE

    raw = pl.read_lines(buf, name="raw").to_series() if buf else pl.Series("raw", [], dtype=pl.String)
    text = pl.col("raw").str.replace_all(ANSI_RE, "") if ansi else pl.col("raw")
    df = pl.DataFrame({"raw": raw}).with_columns(text=text.str.strip_chars_start("\x00"))
    df = df.with_row_index("i").with_columns(
        is_start=pl.col("text").str.contains(START) | (pl.col("i") == 0) | pl.col("text").str.slice(0, head_chars).str.contains(STAMP),
        sel=pl.col("text").str.contains_any(SELECT[0]) | pl.col("text").str.contains_any(SELECT[1], ascii_case_insensitive=True),
    )
    return df["raw"].to_list(), df["text"].to_list(), df["is_start"].to_list(), df["sel"].to_list()


ESCAPES = st.sampled_from(["\x1b[", "\x1b", "[", "31", ";", "?", "m", "0m", "\x1b[0m", "\x1b[1;2", "K"])


@settings(max_examples=300, deadline=None)
@given(st.lists(ALPHABET, max_size=40), st.integers(min_value=0, max_value=12), st.booleans(), st.data())
def test_the_core_splits_and_flags_lines_as_polars_does(parts, head_chars, ansi, data):
    mod = compiled.module()
    if mod is None:
        pytest.skip("the core is not built (test_the_install_built_the_core says so)")
    if ansi:  # ANSI escapes, whole and broken, anywhere (inside a stamp, a literal, before a NUL or a CR)
        parts = [p for x in parts for p in (data.draw(st.lists(ESCAPES, max_size=2)) + [x])]
    buf = "".join(parts).encode("utf-8")
    lines, texts, starts, sel = _polars_reading(buf, head_chars, ansi)
    done, total, ls, rl, wanted, tod = mod.LineScanner(START, STAMP, head_chars, SELECT, r"(?P<ts>\d{2}:\d{2})", 1, ansi=ansi).scan(buf, True, True)
    assert done == total == len(lines)
    recs = _u64(rl)
    assert recs == [i for i, s in enumerate(starts) if s]
    bounds = recs + [len(lines)]
    assert pl.Series(wanted).to_list() == [r for r in range(len(recs)) if any(sel[bounds[r]:bounds[r + 1]])]
    # a time-only layout's stamp text of every record, as stamp_prefix_expr extracts it
    texts0 = pl.Series([texts[a] for a in recs], dtype=pl.String)
    assert pl.Series(tod).to_list() == texts0.str.extract(r"(?P<ts>\d{2}:\d{2})", 1).to_list()
    # every record parsed again from the chunk: its first line and its continuation lines are the
    # texts Polars reads (leading NULs off, escapes removed), raw the line as it is with escapes
    # (without, the text: one buffer), its line numbers theirs
    parser = mod.RecordParser(None, None, r"(?s)^(?P<msg>\d{4}.*)$", ["msg"], ansi=ansi)
    cols = dict(parser.records(buf, ls, rl, pl.Series(range(len(recs)), dtype=pl.Int64).__arrow_c_stream__(), False, 1, 0))
    got = pl.DataFrame({k: pl.Series(v) for k, v in cols.items()})
    assert got["raw"].to_list() == [(lines if ansi else texts)[a] for a in recs]
    assert got["msg"].to_list() == [texts[a] for a in recs]
    assert got["line"].to_list() == [a + 1 for a in recs] and got["line_end"].to_list() == [b for b in bounds[1:]]
    assert got["_cont"].to_list() == [("\n".join(texts[a + 1:b]) if b > a + 1 else None) for a, b in zip(recs, bounds[1:])]
    assert got["isolated"].to_list() == [re.match(r"\d{4}", texts[a]) is not None for a in recs]
    # the message-only fallback: no regex, every first line its message, nothing isolated
    plain = dict(mod.RecordParser(None, None, None, ["msg"], ansi=ansi).records(buf, ls, rl, pl.Series(range(len(recs)), dtype=pl.Int64).__arrow_c_stream__(), True, 1, 0))
    assert pl.Series(plain["msg"]).to_list() == [texts[a] for a in recs] and not any(pl.Series(plain["isolated"]).to_list())
    # not the input's end: the last record is left for the next chunk
    if recs:
        done2, _, ls2, _, _, _ = mod.LineScanner(START, STAMP, head_chars, SELECT, ansi=ansi).scan(buf, True, False)
        assert done2 == recs[-1] and _u64(ls2)[-1] == (_u64(ls)[recs[-1]] if recs[-1] < len(lines) else len(buf))


def test_the_core_says_when_bytes_are_not_utf8():
    mod = compiled.module()
    if mod is None:
        pytest.skip("the core is not built")
    assert mod.is_utf8(b"ok \xc3\xa9") and not mod.is_utf8(b"bad \xe9]")
    with pytest.raises(ValueError):
        mod.LineScanner(START, None, 0, SELECT).scan(b"bad \xe9]\n", True, True)


# ---------------------------------------------------------------- the matcher (compiled only)


def test_a_line_two_patterns_match_gives_both_events_in_the_packs_order(tmp_path):
    """The Kafka console producer's callback error and the expiry on its next line (one record):
    both patterns' events, batch_expired's pattern before send-error-callback's as the packs list
    them, with each one's own fields (the Polars matcher ordered them by a hash join)."""
    log = tmp_path / "producer.log"
    log.write_text(
        "[2024-03-11 10:43:14,018] ERROR Error when sending message to topic orders with key: null, value: 11 bytes with error: "
        "(org.apache.kafka.clients.producer.internals.ErrorLoggingCallback)\n"
        "org.apache.kafka.common.errors.TimeoutException: Expiring 3 record(s) for orders-0:120018 ms has passed since batch creation\n"
    )
    r = run("events", "--tz", "UTC", "-f", "ndjson", log)
    assert r.code == 0, r.err
    rows = [json.loads(x) for x in r.out.splitlines()]
    assert [(x["line"], x["event"]) for x in rows] == [(1, "batch_expired"), (1, "send_error")]
    assert rows[0]["topic_partition"] == "orders-0" and rows[0]["records"] == 3
    assert "topic_partition" not in rows[1] and rows[1]["bytes"] == 11


def test_without_the_compiled_core_a_run_says_so_in_one_line(monkeypatch):
    monkeypatch.setattr(compiled, "_module", None)
    r = run("analyze", "--tz", "UTC", SAMPLES / "kafka-outage")
    assert r.code == 2
    assert r.err.strip().count("\n") == 0 and "compiled core (logsleuth._core) is not built" in r.err


# --------------------------------------------------------------------------- the events writer (writer.rs)

# every C0 control, DEL, C1, the characters safe.visible and safe.json_visible escape, quotes,
# backslashes, what looks like an escape, wide and astral characters
_TRICKY = [chr(c) for c in range(0x20)] + ['"', "\\", "\\u0041", "/", "\x7f", "\x85", "\x9b", "\x9f", "\xa0", "\u061c", "\u180e", "\u200b",
                                             "\u200f", "\u2028", "\u2029", "\u202e", "\u2060", "\u2069", "\ufeff", "\ufff9", "\ufffb", "\ufffc",
                                             "\ufffd", "é", "日", "\U0001f600", "\U0010ffff", ""]
_FLOATS = [1e16, 1e15, 1e-7, 1e-5, 1e-4, 0.1, 120018.0, 512.0, 0.30000000000000004, 123456789.12345679, 1.2345678901234567e19, 1e22,
           5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, -0.0, 0.0, -1.5, float("inf"), float("-inf"), float("nan"), 9007199254740993.0]


_TEXT = st.lists(st.one_of(st.characters(blacklist_categories=("Cs",)), st.sampled_from(_TRICKY))).map("".join)


def _written(fields: list, end: str = "\n", terminal: bool = False) -> str:
    """What ``write_lines`` writes for ``fields`` ((prefix, Series, kind, optional)), handed back."""
    out = compiled.required().write_lines(-1, [(p, s.__arrow_c_stream__(), k, o) for p, s, k, o in fields], end, terminal)
    return out.decode("utf-8")


def _json_lines(strings: list, floats: list, ints: list, terminal: bool = False) -> None:
    from logsleuth.safe import json_visible

    frame = pl.DataFrame({"s": strings, "f": floats, "i": ints, "b": [None if x is None else x % 2 == 0 for x in ints]},
                         schema={"s": pl.String, "f": pl.Float64, "i": pl.Int64, "b": pl.Boolean})
    fields = [('{"s": ', frame["s"], "j", False), (', "f": ', frame["f"], "j", False), (', "i": ', frame["i"], "j", True), (', "b": ', frame["b"], "j", False)]
    got = _written(fields, "}\n", terminal).split("\n")[:-1]  # (not splitlines: U+2028 in a JSON string is not a line break)
    want = []
    for s, f, i, b in zip(strings, floats, ints, frame["b"].to_list()):
        line = json.dumps({"s": s, "f": f, **({"i": i} if i is not None else {}), "b": b}, ensure_ascii=False)
        want.append(json_visible(line) if terminal else line)
    assert got == want


@pytest.mark.parametrize("terminal", [False, True])
def test_the_writer_writes_what_json_dumps_writes(terminal):
    strings = [None, *_TRICKY, "".join(_TRICKY), "x" * 100_000 + "\x01\u2028"]
    floats = (_FLOATS * 3)[: len(strings)]
    floats[1] = None
    ints = [None, 0, -1, 2**63 - 1, -(2**63), *range(len(strings) - 5)]
    _json_lines(strings, floats, ints, terminal)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.one_of(st.none(), _TEXT),
                          st.one_of(st.none(), st.floats()), st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1))), min_size=1, max_size=20),
       st.booleans())
def test_the_writer_writes_what_json_dumps_writes_for_any_values(rows, terminal):
    _json_lines([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], terminal)


@settings(max_examples=500, deadline=None)
@given(st.floats(allow_nan=False) | st.floats(min_value=1e-6, max_value=1e18) | st.integers(0, 2**60).map(float))
def test_the_writer_writes_floats_as_python_repr(x):
    assert _written([("", pl.Series([x], dtype=pl.Float64), "j", False)]) == json.dumps(x) + "\n"  # repr(x), but Infinity


@settings(max_examples=300, deadline=None)
@given(_TEXT)
def test_grep_text_on_a_terminal_is_what_safe_visible_shows(text):
    from logsleuth.safe import visible

    s = pl.Series([text])
    assert _written([("a:", s, "t", False)], "\n", True) == "a:" + visible(text) + "\n"
    assert _written([("a:", s, "t", False)], "\n", False) == "a:" + text + "\n"  # piped: as it was
    assert _written([("a:", s, "p", False)], "\n", True) == "a:" + text + "\n"


def test_the_writer_reads_chunked_columns_and_writes_to_a_descriptor(tmp_path):
    s = pl.concat([pl.Series("x", ["a", None]), pl.Series("x", []), pl.Series("x", ["\x01", "b" * 20])], rechunk=False)
    n = pl.concat([pl.Series("n", [1, 2, 3]), pl.Series("n", [None])], rechunk=False)
    assert s.n_chunks() >= 2 and n.n_chunks() == 2
    fields = [("", s, "t", False), (":", n, "j", True)]
    want = "a:1\n:2\n\x01:3\n" + "b" * 20 + "\n"
    assert _written(fields) == want
    with open(tmp_path / "out", "wb") as f:
        assert compiled.required().write_lines(f.fileno(), [(p, c.__arrow_c_stream__(), k, o) for p, c, k, o in fields], "\n", False) is None
    assert (tmp_path / "out").read_text() == want
    with pytest.raises(ValueError, match="differ in length"):
        _written([("", s, "t", False), ("", n.head(1), "j", False)])
    with open("/dev/full", "wb") as f, pytest.raises(OSError) as e:
        compiled.required().write_lines(f.fileno(), [("", pl.Series(["x" * 3_000_000]).__arrow_c_stream__(), "t", False)], "\n", False)
    assert e.value.errno == 28 and e.value.strerror == os.strerror(28)


def test_ndjson_is_json_dumps_of_the_records_on_every_sample():
    """The CLI's NDJSON (written by the core) against the reference: json.dumps of
    render.events.records() for the same events."""
    from logsleuth.recognise import events as ev
    from logsleuth.recognise.packs import load_packs
    from logsleuth.cli.options import read_options
    from logsleuth.ingest.texts import with_raw
    from logsleuth.render.events import records

    packs = load_packs(None)
    for d in sorted(p for p in SAMPLES.iterdir() if p.is_dir() and p.name != "generators"):
        r = run("events", d, "--tz", "UTC", "--format", "ndjson")
        assert r.code in (0, 1), r
        got = r.out.split("\n")[:-1]
        result = ev.collect([str(d)], read_options(["UTC"], None, None, None), packs, ev.EventFilter())
        events = with_raw(result.events, result.texts)
        want = [json.dumps(x, ensure_ascii=False) for x in records(events, packs)]
        assert got == want, d.name


# --- the stamps the core reads (rust/src/stamps.rs) against Polars' reading of them ---------------

def _iso_specs():
    from logsleuth.ingest.reader import builtin_layouts

    specs = {}
    for lay in builtin_layouts():
        if lay.time is not None:
            specs[(lay.time.fmt, lay.time.normalize, lay.time.has_zone)] = lay.time
    return list(specs.values())


_DIGITS = st.text("0123456789", min_size=1, max_size=10)
_STAMP = st.builds(
    lambda y, mo, d, sep, h, mi, se, frac, off, cut: (
        f"{y:04d}-{mo:02d}-{d:02d}{sep}{h:02d}:{mi:02d}:{se:02d}{frac}{off}"[: cut if cut else None]
    ),
    st.integers(1960, 10000), st.integers(0, 13), st.integers(0, 32), st.sampled_from([" ", "T", "  ", "t", "_"]),
    st.integers(0, 24), st.integers(0, 60), st.integers(0, 60),
    st.one_of(st.just(""), st.builds(lambda s, d: s + d, st.sampled_from([".", ",", ":"]), _DIGITS), st.sampled_from([".", ","])),
    st.one_of(st.sampled_from(["", "Z", "z", " ", "+000", "+2400", "+00:0", "Zx"]),
              st.builds(lambda s, h, m, c: f"{s}{h:02d}{c}{m:02d}", st.sampled_from("+-"), st.integers(0, 24), st.integers(0, 60), st.sampled_from(["", ":"]))),
    st.one_of(st.none(), st.integers(0, 40)),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.none(), _STAMP), min_size=1, max_size=8))
def test_the_cores_stamps_are_polars_reading_of_them(stamps):
    """For every built-in layout's stamp format: where the core reads a column of stamps
    (timeparse.iso_stamps: every stamp in the canonical shape), the values are exactly those of
    stamp_expr (normalize rules, then Polars' to_datetime); a column it does not decide is left to Polars."""
    from logsleuth.ingest.timeparse import iso_stamps, stamp_expr

    col = pl.Series("t", stamps, dtype=pl.String)
    for spec in _iso_specs():
        aware, naive, _ = stamp_expr(pl.col("t"), spec, 2024)
        for part in [col, *[col.slice(i, 1) for i in range(col.len())]]:  # the column, and each stamp alone
            got = iso_stamps(part, spec)
            if got is not None:
                ref = pl.DataFrame(part).select(aware if spec.has_zone else naive).to_series()
                assert got.dtype == ref.dtype and got.to_list() == ref.to_list(), (spec.fmt, spec.normalize, part.to_list())


def test_the_core_reads_the_usual_stamps():
    """The fast path is taken where it should be (else the test above would check nothing): the
    stamps of the dense benchmark's layout, of log4j's and of Spring Boot 3's."""
    from logsleuth.ingest.timeparse import iso_stamps

    by_fmt = {(s.fmt, s.normalize): s for s in _iso_specs()}
    pulsar = next(s for (f, n), s in by_fmt.items() if f == "%Y-%m-%d %H:%M:%S%.f%#z")
    got = iso_stamps(pl.Series(["2024-05-02T00:00:00,000+0000", None, "2024-05-02 00:00:01.5-01:00"]), pulsar)
    assert got is not None and [str(v) for v in got.to_list()] == ["2024-05-02 00:00:00+00:00", "None", "2024-05-02 01:00:01.500000+00:00"]
    log4j = next(s for (f, n), s in by_fmt.items() if f == "%Y-%m-%d %H:%M:%S%.f" and len(n) == 2)
    assert iso_stamps(pl.Series(["2024-05-02 00:00:00,123"]), log4j) is not None
    assert iso_stamps(pl.Series(["2024-05-02 00:00:00,123", "2024-05-02 23:59:60,000"]), log4j) is None  # a leap second: Polars decides


def _broker_line(stamp: str, peer: str) -> str:
    return f"{stamp} [pulsar-io-4-1] INFO  org.apache.pulsar.broker.service.ServerCnx - New connection from {peer}\n"


@pytest.mark.parametrize("middle, want_last", [
    ("2024-05-02T00:00:03,250+0530", "2024-05-01T18:30:03.250Z"),  # every stamp canonical: read by the core
    ("2024-05-02T00:00:60,000+0530", "2024-05-01T18:31:00.000Z"),  # a leap second: the batch read by Polars
])
def test_analyze_gives_the_stamps_times_whether_the_core_or_polars_reads_them(tmp_path, middle, want_last):
    """Through the CLI: a broker log in the ISO layout with an offset; the span the user sees is the
    stamps' own instants in UTC whichever reads them."""
    p = tmp_path / "broker.log"
    p.write_text(_broker_line("2024-05-02T00:00:00,000+0530", "/10.1.1.1:4000") + _broker_line(middle, "/10.1.1.2:4000")
                 + _broker_line("2024-05-02T00:00:01,500+0530", "/10.1.1.3:4000"))
    out = json.loads(run("analyze", "--format", "json", p).out)
    assert (out["summary"]["first_ts"], out["summary"]["last_ts"]) == ("2024-05-01T18:30:00.000Z", want_last)
