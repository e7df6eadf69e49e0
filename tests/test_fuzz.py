"""Property tests: arbitrary input never raises anything but the documented error type.

* the conversion-pattern compiler raises only ``PatternError``, and what it compiles runs on the
  Rust regex engine (and Python's, which records.py uses to read group names);
* the date-pattern compiler raises only ``PatternError``; its regex compiles and the timestamp
  parse it implies (``stamp_expr``) evaluates on any text (unparseable stamps become null);
* ``--since`` / ``--until`` parsing (``parse_when``) raises only ``LogsleuthError``;
* envelope detection and unwrapping never raise and never lose a line or its text;
* the pack loader raises only ``PackError`` on any TOML (or non-TOML) file.

Example counts are kept small for CI; the strategies mix grammar-aware tokens with raw text so the
interesting corners are reached quickly (``LOGSLEUTH_FUZZ_EXAMPLES=5000`` for a longer hunt). Each
bug these found is pinned by an ``@example``.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re

import polars as pl
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from logsleuth.ingest import envelopes
from logsleuth.errors import LogsleuthError, PackError, PatternError
from logsleuth.ingest.layouts.catalog import from_conversion
from logsleuth.ingest.layouts.convpattern import compile_pattern
from logsleuth.ingest.layouts.datefmt import NAMED_FORMATS, compile_date
from logsleuth.recognise.packs import check_regexes, load_pack, load_vocabulary
from logsleuth.ingest.timeparse import FileClock, parse_when, stamp_expr

# LOGSLEUTH_FUZZ_EXAMPLES=5000 for a longer hunt than CI affords
FUZZ = settings(max_examples=int(os.environ.get("LOGSLEUTH_FUZZ_EXAMPLES", "150")), deadline=None, suppress_health_check=list(HealthCheck))

# --------------------------------------------------------------------------- conversion patterns

WORDS = [
    "d", "date", "t", "thread", "p", "le", "level", "c", "logger", "m", "msg", "message", "n", "X", "mdc",
    "pid", "r", "highlight", "clr", "style", "notEmpty", "equals", "replace", "ex", "wEx", "L", "F", "M",
    "C", "l", "esb", "K", "bogus", "", "sn", "throwable",
]
OPTIONS = [
    "{ISO8601}", "{HH:mm:ss.SSS}", "{yyyy-MM-dd HH:mm:ss,SSS}", "{36}", "{UTC}", "{key}", "{", "}",
    "{yyyy-MM-dd'T'HH:mm:ss.SSSXXX, UTC}", "{''}", "{%}", "{ABSOLUTE}", '{"HH:mm, ss"}', "{DEFAULT}{GMT+8}",
    "{${X:-yyyy}}", "{UNIX}", "{EEE MMM dd}", "{zzzz}", "{HH}{GMT-03:30}", "{HM}", "{Mars/Olympus}",
]
conversion = st.builds(
    lambda mod, word, opt: "%" + mod + word + opt,
    st.sampled_from(["", "-5", "5", ".-30", "-20.40", "-"]),
    st.sampled_from(WORDS),
    st.sampled_from(["", *OPTIONS]),
)
token = st.one_of(
    conversion,
    st.sampled_from(["(", ")", "[", "]", " ", " - ", "%%", "\\n", "\\", "${PID}", "${X:-}", "${X:- }", "${", "$", ":", "'", "{", "}", "%n", "%m%n"]),
    st.text(max_size=4),
)
conversion_patterns = st.one_of(
    st.lists(token, max_size=12).map("".join),
    st.text(alphabet="%dmntpcXL{}()-.0123456789 $\\:'\"yMHsSZ,[]T!|*+?^", max_size=30),
    st.text(max_size=30),
)


def _runs_on_both_engines(regex: str) -> None:
    re.compile(regex)
    pl.select(pl.lit("10:00:00.000 [main] INFO  a.B - hello").str.extract_groups(regex))


@FUZZ
@given(conversion_patterns)
@example("%d{HH:mm:ss}{GMT-03:30} %m%n")  # zone Polars cannot use: was a ComputeError at read time
@example("%d{HM} %m%n")  # a chrono format Polars refuses: was a ComputeError at read time
@example("%d{" + "(" * 300 + "} %m")
def test_conversion_pattern_compiler_raises_only_pattern_error(pattern):
    try:
        compiled = compile_pattern(pattern)
    except PatternError:
        return
    layout = from_conversion(pattern)
    for regex in (compiled.regex, compiled.start_regex, layout.head_capture, layout.ts_regex):
        _runs_on_both_engines(regex)
    if compiled.tail_regex:
        _runs_on_both_engines(f"(?P<_tail>{compiled.tail_regex})$")
    if compiled.time is not None:
        _evaluate_stamps(compiled.time, ["10:15:31.204", "2024-05-02 10:15:31,204", "garbage", ""])


# --------------------------------------------------------------------------- timestamps

date_patterns = st.one_of(
    st.sampled_from([*NAMED_FORMATS, "UNIX", "UNIX_MILLIS", ""]),
    st.text(alphabet="yMdHhmsSaEXxZzVkKDuGL'.,:-/ T%#{}0123456789!", max_size=25),
    st.text(max_size=15),
)
zones = st.one_of(
    st.none(),
    st.sampled_from(["UTC", "GMT+8", "Asia/Shanghai", "GMT-03:30", "Mars/Olympus", "+25", "", "localtime", "posix/Asia/Tokyo"]),
    st.text(max_size=8),
)
stamps = st.lists(
    st.one_of(
        st.text(max_size=30),
        st.sampled_from([
            "2024-05-02 10:15:31,204", "10:15:31.204", "2024-05-02T10:15:31.204+02:00", "1714644931",
            "1714644931204", "02 May 2024 10:15:31,204", "9999-12-31 23:59:59,999", "0000-01-01 00:00:00,000",
            "2024-02-30 25:61:61,000", "99999999999999999999",
        ]),
    ),
    max_size=5,
)


def _evaluate_stamps(spec, texts, year=None) -> None:
    aware, naive, tod = stamp_expr(pl.col("t"), spec, year)
    frame = pl.DataFrame({"t": texts}, schema={"t": pl.String})
    out = frame.with_columns(a=aware, n=naive, d=tod)
    assert out.height == len(texts)
    clock = FileClock("broker-2024-05-02.log", "UTC", spec)
    if not clock.time_only:  # the zone decision and conversion to UTC must run too
        recs = frame.with_columns(_ts_aware=aware, _ts_naive=naive, env_ts=pl.lit(None, dtype=pl.Datetime("us", "UTC")))
        clock.finalize(recs)


@FUZZ
@given(date_patterns, zones, stamps, st.one_of(st.none(), st.integers(-5000, 20000)))
@example("HM", None, ["10 05"], None)
@example("HH:mm:ss SS", None, ["10:00:00 12"], None)  # Polars warned on stderr about %f
@example("yyyy-MM-dd HH:mm:ss", "GMT-03:30", [], None)
def test_date_pattern_and_stamp_parsing_never_raise(pattern, zone, texts, year):
    try:
        regex, spec = compile_date(pattern, zone)
    except PatternError:
        return
    re.compile(regex)
    pl.select(pl.lit("x").str.contains(regex))
    _evaluate_stamps(spec, texts, year)


when_texts = st.one_of(
    st.text(max_size=30),
    st.builds(
        lambda sign, n, unit, ago: f"{sign}{n}{unit}{ago}",
        st.sampled_from(["", "+", "-", " - "]),
        st.one_of(st.integers(0, 10**25).map(str), st.floats(0, 1e30).map(str)),
        st.sampled_from(["ms", "s", "m", "h", "d", "days", "min", "hours"]),
        st.sampled_from(["", " ago"]),
    ),
    st.sampled_from(["0001-01-01", "9999-12-31 23:59:59", "0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00", "today", "1 1 1 1 1", "2020-02-30", "10:00", "Z"]),
)
times = st.one_of(st.none(), st.datetimes(timezones=st.just(dt.timezone.utc)))


@FUZZ
@given(when_texts, st.sampled_from(["UTC", "Asia/Shanghai", "America/Los_Angeles", "Pacific/Kiritimati"]), times, times)
@example("0001-01-01 00:00", "Asia/Shanghai", None, None)  # was OverflowError (astimezone)
@example("-99999999999d", "UTC", None, dt.datetime(2024, 5, 2, tzinfo=dt.timezone.utc))  # was OverflowError
@example("+9999999d", "UTC", dt.datetime(2024, 5, 2, tzinfo=dt.timezone.utc), None)  # was OverflowError
def test_parse_when_raises_only_logsleuth_error(text, zone, first, last):
    try:
        t = parse_when(text, zone, first, last)
    except LogsleuthError:
        return
    assert t.tzinfo is not None


# --------------------------------------------------------------------------- envelopes

json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=True), st.text(max_size=10)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(
            st.sampled_from(["log", "msg", "message", "time", "ts", "level", "logger", "kubernetes", "pod_name", "host", "error", "stacktrace", "@timestamp", "x"]) | st.text(max_size=5),
            inner,
            max_size=5,
        ),
    ),
    max_leaves=15,
)
prefixes = st.sampled_from(["", "2024-05-02T10:15:31.123456789Z stdout F ", "2024-05-02T10:15:31Z ", "2024-05-02T10:15:31.1+02:00 stderr P ", "\x1b[31m", "9999-99-99T99:99:99Z "])
log_lines = st.one_of(
    st.builds(lambda p, v: p + json.dumps(v, allow_nan=True), prefixes, json_values),
    st.text(max_size=40),
    st.builds(lambda p, t: p + t, prefixes, st.text(max_size=20)),
    st.sampled_from(['{"log": 1e999}', '{"time": "x", "log": "y"}', "{", '{"log": "a\\nb"}']),
)


@FUZZ
@given(st.lists(log_lines, max_size=8))
@example(['{"log":' + "[" * 100_000])  # was RecursionError from json.loads in detection
@example(['{"log": "x", "time": "2024-05-02T10:00:00Z"}', '{"log": "deep", "x": ' + "[" * 50_000 + "]" * 50_000 + "}"])
def test_envelope_candidates_and_unwrap_never_raise_or_drop_lines(lines):
    envs = envelopes.candidates(lines)
    assert envs and envs[-1].is_none  # "no envelope" is always a candidate
    frame = pl.DataFrame({"line": list(range(1, len(lines) + 1)), "raw": lines}, schema={"line": pl.Int64, "raw": pl.String})
    for env in envs:
        out = envelopes.unwrap(frame, env)
        assert out.height == frame.height
        assert out["text"].null_count() == 0


# --------------------------------------------------------------------------- pack loader


def _toml(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(v, list):
        return "[" + ", ".join(_toml(x) for x in v) + "]"
    return "{" + ", ".join(f"{json.dumps(k)} = {_toml(x)}" for k, x in v.items()) + "}"


REGEXES = [
    "Producer with id (?P<topic>\\S+)", "Frobnicate (?P<partition>\\d+)", "(unclosed", "(?=x)abcd", "a{99999999999}",
    "Frob(?P<topic>x)(?P<topic>y)", "x(?P<nope>y)", "(a+)+$", "\\", "[", "(" * 300 + "Frobnicate" + ")" * 300,
]
scalars = st.one_of(
    st.booleans(), st.integers(-(10**20), 10**20), st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=12),
    st.sampled_from([*REGEXES, "warning", "error", "all", "kafka.x"]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["line", "fields", "also", "topic", "x"]), inner, max_size=3)),
    max_leaves=8,
)
any_pattern = st.fixed_dictionaries(
    {}, optional={k: values for k in ("id", "event", "regex", "versions", "severity", "contains", "scope", "types", "ignore_case", "description", "sample")}
)
plausible_pattern = st.fixed_dictionaries(
    {
        "id": st.sampled_from(["a.b", "a.b", "x-1"]),
        "event": st.just("e"),
        "versions": st.just("all"),
        "regex": st.sampled_from(REGEXES),
        "sample": st.lists(st.fixed_dictionaries({"line": st.text(max_size=10)}, optional={"fields": values, "also": values}), max_size=2),
    },
    optional={"types": values, "contains": values, "scope": values, "severity": values},
)
pack_docs = st.fixed_dictionaries(
    {"id": st.one_of(st.just("p"), values), "system": st.one_of(st.just("s"), values), "description": st.one_of(st.just("d"), values)},
    optional={"component": values, "versions": values, "pattern": st.one_of(values, st.lists(st.one_of(any_pattern, plausible_pattern, values), max_size=3))},
).map(lambda d: "".join(f"{json.dumps(k)} = {_toml(v)}\n" for k, v in d.items()))
pack_files = st.one_of(pack_docs, st.text(max_size=200), st.builds(lambda a, b: a + b, pack_docs, st.text(max_size=30)))


@pytest.fixture(scope="module")
def vocabulary():
    return load_vocabulary()


@FUZZ
@given(text=pack_files)
@example(text='id = "p"\nsystem = "s"\ndescription = "d"\npattern = "abc"\n')  # was AttributeError
@example(text='id = "p"\nsystem = "s"\ndescription = "d"\nversions = false\n')  # was TypeError
@example(text='id = "p"\nsystem = "s"\ndescription = "d"\n[[pattern]]\nid = "a.b"\nevent = "e"\nversions = "all"\nregex = "Frob a{99999999999}"\n[[pattern.sample]]\nline = "x"\n')
def test_pack_loader_raises_only_pack_error(tmp_path_factory, vocabulary, text):
    path = tmp_path_factory.getbasetemp() / "fuzz-pack.toml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        pack = load_pack(path, vocabulary)
        check_regexes([pack])  # what load_packs does next: every regex on the Rust engine
    except PackError as e:
        assert "\n" not in str(e).strip()  # printed as one line


# --------------------------------------------------------------------------- names, fields, packs, options (issue 21)
# Through the real CLI (in-process): whatever a name, an envelope field, a pack or an option holds,
# the run ends in a result or one line (exit 2), never an internal error, and no output carries a
# raw control, bidi or zero-width character (JSON keeps text as it is, escaped by JSON itself).

from conftest import run_in_process  # noqa: E402

from logsleuth.safe import csv_cell, json_dumps, visible  # noqa: E402

CLI_FUZZ = settings(max_examples=max(10, int(os.environ.get("LOGSLEUTH_FUZZ_EXAMPLES", "150")) // 6), deadline=None,
                    suppress_health_check=list(HealthCheck))
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ud800-\udfff]")
BROKER = (
    "10:12:01.231 [pulsar-io-22-3] WARN  org.apache.pulsar.broker.service.ServerCnx - "
    "[/10.1.116.123:15070][0] Producer with id persistent://public/default/orders-partition-3 is already present on the connection\n"
)
HOSTILE = ["\x1b]0;t\x07", "\x1b[2J", "\u202e", "\u200b", "\x07", "[bold]x[/]", "[link=https://e.x]y", "=cmd|' /C calc'!A0",
           "<script>", "`", "|", "*", "\ud800", "\x00", "\r", "\n", "\x9b", "\ufeff", "${jndi:x}", "%n", "[/]"]
hostile_text = st.one_of(
    st.lists(st.one_of(st.sampled_from(HOSTILE), st.text(max_size=6)), max_size=6).map("".join),
    st.text(max_size=30),
)


def _csv_is_safe(r) -> None:
    """CSV to a pipe keeps text as read (like grep); no cell may start like a formula."""
    import csv as _csv
    import io

    _clean_cli(r, (0, 1))
    for row in _csv.reader(io.StringIO(r.out)):
        for cell in row:
            assert not cell or cell[0] not in "=+-@\t\r", row


def _clean_cli(r, allow=(0, 1, 2)) -> None:
    assert r.code in allow, r
    assert "internal error" not in r.err and "Traceback" not in r.err, r
    if r.code == 2:
        assert len(r.err.strip().splitlines()) == 1, r
    assert not UNSAFE.search(r.err), r


@CLI_FUZZ
@given(st.binary(min_size=1, max_size=60))
@example(b"osc\x1b]0;pwned\x07.log")
@example(b"x[/]crash.log")
@example(b"\xff\xfe-not-utf8.log")
def test_any_file_name_is_neutralised(tmp_path_factory, raw):
    name = raw.replace(b"/", b"_").replace(b"\x00", b"_")
    if name in (b".", b".."):
        name += b"_"
    d = tmp_path_factory.mktemp("names")
    path = os.path.join(os.fsencode(d), name)
    with open(path, "wb") as f:
        f.write(BROKER.encode() * 3)
    for args in (("analyze", "--format", "text"), ("analyze", "--format", "markdown"), ("analyze", "--format", "html"), ("inspect",)):
        r = run_in_process(*args, os.fsdecode(path))
        _clean_cli(r, (0, 1))
        assert not UNSAFE.search(r.out), (args, r)
    _csv_is_safe(run_in_process("events", "--format", "csv", os.fsdecode(path)))
    r = run_in_process("analyze", "--format", "json", os.fsdecode(path))
    _clean_cli(r, (0,))
    json.loads(r.out)


@CLI_FUZZ
@given(level=hostile_text, logger=hostile_text, thread=hostile_text, extra=hostile_text)
def test_any_envelope_field_is_neutralised(tmp_path_factory, level, logger, thread, extra):
    msg = BROKER.split(" - ", 1)[1].strip()
    lines = [json.dumps({"time": f"2024-01-01T00:00:{i:02d}Z", "level": level, "logger": logger, "thread": thread, "x": extra,
                         "message": msg if i % 2 else extra}) for i in range(4)]
    p = tmp_path_factory.mktemp("env") / "envelope.log"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
    for args in (("analyze", "--format", "text"), ("analyze", "--format", "markdown"), ("analyze", "--format", "html"),
                 ("events",), ("inspect",)):
        r = run_in_process(*args, p)
        _clean_cli(r, (0, 1))
        assert not UNSAFE.search(r.out), (args, r)
    _csv_is_safe(run_in_process("events", "--format", "csv", p))
    for args in (("analyze", "--format", "json"), ("events", "--format", "ndjson")):
        r = run_in_process(*args, p)
        _clean_cli(r, (0, 1))
        for doc in (r.out.splitlines() if args[0] == "events" else [r.out]):
            json.loads(doc)


@CLI_FUZZ
@given(data=st.one_of(pack_files.map(lambda t: t.encode("utf-8", "surrogatepass")), st.binary(max_size=120)),
       description=hostile_text)
@example(data=b'id = "p"\nsystem = "s"\ndescription = "caf\xe9"\n', description="")
def test_any_pack_file_through_the_cli(tmp_path_factory, data, description):
    d = tmp_path_factory.mktemp("pack")
    (d / "fuzz.toml").write_bytes(data)
    good = (
        f'id = "ok"\nsystem = "pulsar"\ndescription = {_toml(description)}\n[[pattern]]\nid = "ok.one"\nevent = "ok_event"\n'
        f'severity = "info"\nversions = "any"\ndescription = {_toml(description)}\nregex = "Frobnicated widget"\n'
        '[[pattern.sample]]\nline = "10:12:01.231 [io-1] INFO  org.apache.pulsar.broker.service.ServerCnx - Frobnicated widget"\n'
    )
    d2 = tmp_path_factory.mktemp("pack2")
    (d2 / "ok.toml").write_text(good, encoding="utf-8", errors="surrogatepass")
    for args in (("patterns", "check", d), ("patterns", "list", "--patterns", d), ("patterns", "list", "--patterns", d2),
                 ("patterns", "show", "ok.one", "--patterns", d2)):
        r = run_in_process(*args)
        _clean_cli(r)
        assert not UNSAFE.search(r.out), (args, r)


OPTION_VALUES = st.one_of(hostile_text, st.sampled_from(["", "-", "0", "-1", "99999999999999999999999", "1e308", "nan", "2024-02-30",
                                                        "0001-01-01", "10449-01-01", "-99999999999d", "*=x", "x=", "=", "%d %m%n",
                                                        "Asia/Shanghai", "localtime", "::", "/dev/null", "/dev/zero"]))


@CLI_FUZZ
@given(option=st.sampled_from(["--since", "--until", "--tz", "--layout-pattern", "--date", "--top", "--around", "--patterns",
                               "--events", "--layout", "--event", "--system", "--skew", "--detector", "--fail-on"]),
       value=OPTION_VALUES, command=st.sampled_from(["analyze", "events", "inspect", "timeline", "templates"]))
@example(option="--top", value="99999999999999999999999", command="templates")
@example(option="--since", value="\x1b]0;t\x07", command="events")
@example(option="--patterns", value="\ud800", command="analyze")  # a lone surrogate: no path can hold it (lean.py took it for one)
def test_any_option_value_is_a_result_or_one_line(tmp_path_factory, option, value, command):
    p = tmp_path_factory.getbasetemp() / "options.log"
    if not p.exists():
        p.write_text(BROKER * 3)
    args = [command, option, value] if option == "--events" else [command, str(p), option, value]
    r = run_in_process(*args)
    _clean_cli(r)
    assert not UNSAFE.search(r.out), r


@FUZZ
@given(st.text())
@example("\ud800\udcff\x1b\u202e\u200b")
def test_the_sanitisers_hold_for_any_text(text):
    v = visible(text)
    assert not UNSAFE.search(v) and "\n" not in v
    assert visible(v) == v  # idempotent: a second pass changes nothing
    assert not UNSAFE.search(visible(text, keep_newlines=True).replace("\n", ""))
    cell = csv_cell(text)
    assert not cell or cell[0] not in "=+-@\t\r"
    doc = json_dumps({"k": text})
    doc.encode("utf-8")  # always encodable: a lone surrogate is written as its escape
    back = json.loads(doc)["k"]
    # the same text (JSON joins a high and a low surrogate written one after the other into one character)
    assert back == text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
