"""The compiled reading core (rust/, logsleuth._core; docs/architecture.md "Reading core"), below
the CLI: it must be built by the project's install (pip install . runs cargo); on arbitrary text
it finds the same lines, record starts, candidate lines and stamps as Polars' string functions
and regexes find; the matcher and the events writer. What it reads through the CLI:
tests/test_reading.py."""

from __future__ import annotations

import json
import os
import re
import struct

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import SAMPLES, run
from logsleuth.ingest import compiled

def test_the_install_built_the_core():
    """CI installs with pip from a clean clone: the extension must be there and be used."""
    mod = compiled.module()
    assert mod is not None, "logsleuth._core is missing: pip install . must build it (hatch_build.py, needs cargo)"
    assert mod.VERSION


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
    # a time-only layout's stamp text of every record (the layout's stamp regex on its first line)
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


@pytest.mark.parametrize("args", [("analyze", "--tz", "UTC"), ("inspect",), ("patterns", "test"), ("templates",)])
def test_without_the_compiled_core_a_run_says_so_in_one_line(monkeypatch, args):
    """The core is the only reader and matcher: without it, one line saying so (not "no text logs
    found", not the error once per input)."""
    monkeypatch.setattr(compiled, "_module", None)
    r = run(*args, SAMPLES / "kafka-outage", SAMPLES / "kafka-untimed" / "shipping-console.log")
    assert r.code == 2, r
    assert r.err.strip().count("\n") == 0 and "compiled core (logsleuth._core) is not built" in r.err, r.err


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
