"""The inferred head: time, level and logger found in a line without knowing its layout.

Used when no layout of the catalogue fits a file well (``inferred_layout``: the file's dominant
timestamp shape, found in the first 120 characters of its lines, becomes an ad-hoc layout whose
records start at every line with such a stamp), and per line where the file's layout does not fit
(a line with a dated stamp near its start, ``any_dated_stamp`` in its first ``HEAD_CHARS``
characters, begins a record of its own instead of continuing the one before it: the reading core
searches it; ``stamp_exprs`` reads its time). The stamp shapes are data
(``patterns/stamps.toml``). A record read this way has no isolated message: the matcher searches
the whole line (see ``recognise/packs.boundary_form``). Level words are found in any dress
(``WARN``, ``[ ERROR ]``, ``<W>``, ``level=warn``, zap's tab-separated ``info``), a logger when a
class name stands before a separator (``org.apache…ServerCnx -``, ``o.a.k.c.NetworkClient :``).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import lru_cache

import polars as pl

from logsleuth.cache import parsed_toml
from logsleuth.errors import PackError
from logsleuth.ingest.layouts.catalog import Layout
from logsleuth.ingest.timeparse import TimeSpec, stamp_expr
from logsleuth.resources import patterns_dir

HEAD = 120  # a stamp must begin within (about) this many characters of the line's start
# the regexes run on the line's first HEAD_CHARS characters (a slice, not a counted repetition:
# `[^\n]{0,119}?` compiles to a hundred-state automaton per regex, ~10 ms each at every start-up)
HEAD_CHARS = HEAD + 40
# the part of a line before its stamp: nothing, or text ending in a non-alphanumeric
_BEFORE = r"(?:[^\n]*?[^0-9A-Za-z\n])??"
# after the stamp: not another digit (so 10:15:31 is not read out of 10:15:311)
_AFTER = r"(?:[^0-9]|$)"
INFER_MARGIN = 0.10  # the inferred head must fit this much more of a file's lines than the best layout
MIN_FIT = 0.30  # ... and at least this share of them

_LEVEL_WORDS = "TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|ERR|FATAL|SEVERE|CRITICAL|CRIT|PANIC|DPANIC|FINEST|FINER|FINE"
# a level in any dress, in the head of a line; one group per dress (a name may appear once)
_LEVEL_RE = (
    r"^[^\n]*?(?:"
    r"(?:^|[^\w=\"'])(?P<l0>%s)(?:$|[^\w=])"  # INFO, [ERROR], ERROR:
    r"|(?i:\blevel|\blvl|\bseverity|\bloglevel)[=:] ?\"?(?P<l1>[A-Za-z]+)"  # level=warn, "level":"info"
    r"|[\[<(] ?(?P<l2>(?i:trace|debug|info|notice|warn|warning|error|fatal|severe|critical|panic)) ?[\]>)]"  # [ warn ], <error>
    r"|<(?P<l3>[IWEFDT])>"  # <W>
    r"|\t(?P<l4>debug|info|warn|error|dpanic|panic|fatal)\t"  # zap console
    r"|(?:^|\s)(?P<l5>[DIWE])! "  # telegraf / InfluxData: '2024-03-14T02:10:00Z E! [agent] ...'
    r")" % _LEVEL_WORDS
)
# a class name (at least one package segment, the last one capitalised) before a separator
_LOGGER_RE = r"^[^\n]*?(?:^|[\s\[(])(?P<logger>(?:[A-Za-z_$][\w$]*\.)+[A-Z][\w$]*)(?:\s*(?:[-:|\])]))"


def head(text: pl.Expr) -> pl.Expr:
    """The part of a line the inferred head reads."""
    return text.str.slice(0, HEAD_CHARS)


@dataclass(frozen=True)
class Stamp:
    id: str
    description: str
    regex: str
    time: TimeSpec
    samples: tuple[tuple[str, str], ...]  # (text, utc)


@lru_cache(maxsize=1)
def stamps() -> tuple[Stamp, ...]:
    path = patterns_dir() / "stamps.toml"
    try:
        data = parsed_toml(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise PackError(f"{path.name}: {e}") from None
    out = []
    for i, entry in enumerate(data.get("stamp", [])):
        where = f"{path.name}: stamp {entry.get('id') or '#' + str(i + 1)}"
        if not all(isinstance(entry.get(k), str) for k in ("id", "regex", "format")):
            raise PackError(f"{where}: needs id, regex and format")
        spec = TimeSpec(
            fmt=entry["format"],
            has_date=bool(entry.get("has_date", True)),
            has_year=bool(entry.get("has_year", True)),
            has_zone=bool(entry.get("has_zone", False)),
            normalize=tuple(tuple(x) for x in entry.get("normalize", [])),
        )
        samples = tuple((s["text"], s["utc"]) for s in entry.get("sample", []))
        if not samples:
            raise PackError(f"{where}: every stamp needs at least one sample")
        out.append(Stamp(entry["id"], entry.get("description", ""), entry["regex"], spec, samples))
    return tuple(out)


def _dated() -> tuple[Stamp, ...]:
    return tuple(s for s in stamps() if s.time.has_date)


@lru_cache(maxsize=1)
def any_dated_stamp() -> str:
    """A line with a dated stamp of any shape near its start; group ``_sN`` holds the N-th shape's
    text (the first shape that fits at the earliest position)."""
    alts = "|".join(f"(?P<_s{i}>{s.regex})" for i, s in enumerate(_dated()))
    return f"^{_BEFORE}(?:{alts}){_AFTER}"


def stamp_at_start_rate(texts: pl.Series) -> float:
    """Share of non-empty lines that begin with a stamp of any shape (after at most a bracket or quote)."""
    texts = texts.filter(texts.str.strip_chars() != "")
    if texts.len() == 0:
        return 0.0
    found = _quick_counts(texts, [_at_start()])[0]
    if found is not None:
        return found / texts.len()
    return texts.str.slice(0, HEAD_CHARS).str.contains(_at_start()).sum() / texts.len()


def _quick_counts(texts: pl.Series, regexes: list[str]) -> list[int | None]:
    """How many of a tiny sample's lines' heads each regex finds, with Python's ``re``
    (``quick.py``); None for each regex it does not answer alike (all when the sample is not tiny)."""
    from logsleuth.ingest.layouts import quick

    lines = texts.to_list()
    if not quick.tiny(lines):
        return [None for _ in regexes]
    heads = [x[:HEAD_CHARS] for x in lines]
    out: list[int | None] = []
    for r in regexes:
        c = quick.safe(r)
        out.append(None if c is None else sum(1 for x in heads if c.search(x)))
    return out


@lru_cache(maxsize=1)
def _at_start() -> str:
    return r"^[\[(<\"']?(?:" + "|".join(s.regex for s in stamps()) + f"){_AFTER}"


def stamp_exprs(text: pl.Expr, year: int | None) -> tuple[pl.Expr, pl.Expr, pl.Expr]:
    """(aware UTC, naive, stamp text) of the first dated stamp in the head of ``text``."""
    groups = head(text).str.extract_groups(any_dated_stamp())
    aware, naive, texts = [], [], []
    for i, s in enumerate(_dated()):
        part = groups.struct.field(f"_s{i}")
        a, n, _ = stamp_expr(part, s.time, year)
        (aware if s.time.has_zone else naive).append(a if s.time.has_zone else n)
        texts.append(part)
    return (
        pl.coalesce(aware) if aware else pl.lit(None, dtype=pl.Datetime("us", "UTC")),
        pl.coalesce(naive) if naive else pl.lit(None, dtype=pl.Datetime("us")),
        pl.coalesce(texts),
    )


def level_expr(text: pl.Expr) -> pl.Expr:
    """The level word of a line's head, as printed (normalised by the caller)."""
    g = head(text).str.extract_groups(_LEVEL_RE)
    return pl.coalesce([g.struct.field(f"l{i}") for i in range(6)])


def logger_expr(text: pl.Expr) -> pl.Expr:
    """The logger of a line's head: a class name before a separator, not an exception's
    (``java.net.ConnectException: …`` names what was thrown, not who logged it)."""
    name = text.str.slice(0, HEAD_CHARS + 80).str.extract(_LOGGER_RE, 1)
    return pl.when(name.str.contains(r"(?:Exception|Error|Throwable)$")).then(None).otherwise(name)


def inferred_layout(texts: pl.Series, best_rate: float) -> tuple[Layout, float] | None:
    """An ad-hoc layout for a file no catalogued layout fits: the most specific stamp shape that
    fits (nearly) as many of the sample's non-empty lines as any, when it fits clearly more of
    them than the best catalogued layout (``best_rate``). None when no shape does."""
    texts = texts.filter(texts.str.strip_chars() != "")
    n = texts.len()
    if n == 0:
        return None
    shapes = stamps()
    regexes = [f"^{_BEFORE}(?:{s.regex}){_AFTER}" for s in shapes]
    counts = _quick_counts(texts, regexes)
    rest = [r for r, c in zip(regexes, counts) if c is None]
    if rest:
        frame = pl.DataFrame({"t": texts.str.slice(0, HEAD_CHARS)})
        found = iter(frame.select([pl.col("t").str.contains(r).sum().alias(str(i)) for i, r in enumerate(rest)]).row(0))
        counts = [next(found) if c is None else c for c in counts]
    rates = [c / n for c in counts]
    top = max(rates)
    if top < MIN_FIT or top < best_rate + INFER_MARGIN:
        return None
    i = next(i for i, r in enumerate(rates) if r >= top - 0.02)
    s = shapes[i]
    start = f"^{_BEFORE}(?P<ts>{s.regex}){_AFTER}"
    lay = Layout(
        id=f"inferred-head ({s.id})",
        description=f"no known layout fits: records start at lines with a {s.id} stamp in their first {HEAD} characters; "
        "level and logger found in the line's head, messages searched in the whole line",
        regex=start,
        start_regex=start,
        fields=("ts",),
        time=s.time,
        tail_regex=None,
        inferred=True,
    )
    return lay, rates[i]
