"""Wrappers: what collecting or showing a log put in front of each line, peeled off first.

``docker compose logs``' ``service-1  | ``, ``kubectl logs --prefix``' ``[pod/name/container] ``,
stern, syslog and journald heads, RFC 5424, CI console stamps, ``grep -n`` prefixes, Markdown
quotes, indentation and line-number gutters: the shapes are data (``patterns/wrappers.toml``).
``peel_sample`` finds a file's chain of wrappers on its first lines, outermost first (a compose
prefix, then a Markdown quote, ...); a wrapper is taken when most lines fit it and the text inside
is no worse recognised than the line was (a loose shape, ``needs_gain``, only when it is clearly
better recognised). ``peel`` then removes the chain from every line as Polars expressions; a line
that does not fit passes through. A wrapper's stamp and host are kept for records without their
own (``env_ts`` for a stamp with an offset, ``env_naive`` for one without, ``env_host``).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import polars as pl

from logsleuth.cache import parsed_toml
from logsleuth.errors import PackError
from logsleuth.ingest.timeparse import TimeSpec, parse_iso, stamp_expr
from logsleuth.resources import patterns_dir

MIN_RATE = 0.6  # share of a file's non-empty first lines that must fit a wrapper
MAX_DEPTH = 4  # wrappers around wrappers
GAIN = 0.05  # how much better (needs_gain) or how much worse (any wrapper) the peeled lines may fit


@dataclass(frozen=True)
class Wrapper:
    id: str
    description: str
    regex: str
    time: TimeSpec | None  # how to read ets; None with rfc3339 = True
    rfc3339: bool
    needs_gain: bool
    not_hosts: frozenset[str]
    samples: tuple[dict, ...]

    @property
    def groups(self) -> set[str]:
        import re

        return set(re.findall(r"\(\?P<(\w+)>", self.regex))


@lru_cache(maxsize=1)
def wrappers() -> tuple[Wrapper, ...]:
    path = patterns_dir() / "wrappers.toml"
    try:
        data = parsed_toml(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise PackError(f"{path.name}: {e}") from None
    out = []
    for i, entry in enumerate(data.get("wrapper", [])):
        where = f"{path.name}: wrapper {entry.get('id') or '#' + str(i + 1)}"
        if not isinstance(entry.get("id"), str) or not isinstance(entry.get("regex"), str):
            raise PackError(f"{where}: needs id and regex")
        if "(?P<inner>" not in entry["regex"]:
            raise PackError(f"{where}: the regex needs an (?P<inner>...) group")
        t = entry.get("time")
        spec = None
        if isinstance(t, dict):
            spec = TimeSpec(
                fmt=t["format"], has_zone=bool(t.get("has_zone", False)), has_year=bool(t.get("has_year", True)),
                normalize=tuple(tuple(x) for x in t.get("normalize", [])),
            )
        if not entry.get("sample"):
            raise PackError(f"{where}: every wrapper needs at least one sample")
        out.append(Wrapper(
            entry["id"], entry.get("description", ""), entry["regex"], spec, t == "rfc3339",
            bool(entry.get("needs_gain", False)), frozenset(entry.get("not_hosts", [])), tuple(entry["sample"]),
        ))
    return tuple(out)


def stamped(chain: tuple[str, ...]) -> bool:
    """Does one of these wrappers put a stamp on every line it wraps?"""
    return any("ets" in w.groups for w in by_id(chain))


def by_id(ids: tuple[str, ...]) -> tuple[Wrapper, ...]:
    known = {w.id: w for w in wrappers()}
    return tuple(known[i] for i in ids)


def _fits(lines: pl.Series, w: Wrapper) -> tuple[float, pl.Series, pl.Series | None]:
    """(share of lines that fit, the lines peeled, the hosts found)."""
    quick = _quick_fits(lines, w)
    if quick is not None:
        return quick
    parts = lines.to_frame("t").select(_groups_of(w.regex)).unnest("g")
    inner = parts["inner"]
    rate = inner.is_not_null().sum() / max(1, lines.len())
    host = parts["host"] if "host" in parts.columns else None
    return rate, pl.select(pl.coalesce(inner, lines)).to_series(), host


def _quick_fits(lines: pl.Series, w: Wrapper) -> tuple[float, pl.Series, pl.Series | None] | None:
    """``_fits`` of a tiny sample with Python's ``re`` (``layouts/quick.py``: only where it reads
    the lines as Polars' engine does), else None."""
    from logsleuth.ingest.layouts import quick

    texts = lines.to_list()
    if not quick.tiny(texts) or None in texts:
        return None
    cre = quick.safe(w.regex)
    if cre is None:
        return None
    found = [cre.search(x) for x in texts]
    inner = [m.group("inner") if m else None for m in found]
    rate = sum(1 for x in inner if x is not None) / max(1, lines.len())
    host = None
    if "host" in cre.groupindex:
        host = pl.Series("host", [m.group("host") if m else None for m in found], dtype=pl.String)
    peeled = pl.Series("inner", [x if x is not None else t for x, t in zip(inner, texts)], dtype=pl.String)
    return rate, peeled, host


@lru_cache(maxsize=64)
def _groups_of(regex: str) -> pl.Expr:
    """Built once per wrapper (building extract_groups compiles the regex)."""
    return pl.col("t").str.extract_groups(regex).alias("g")


def peel_sample(sample: list[str], fit: Callable[[pl.Series], float]) -> tuple[tuple[str, ...], list[str]]:
    """The chain of wrapper ids around a file's lines (outermost first), and the lines inside it.
    ``fit``: how well a set of lines is recognised (0..1: the best layout's record-start rate).
    Chains are searched a few levels deep, so a loose wrapper (an indent) is peeled when what it
    holds (a Markdown quote around a log4j line) is recognised once that is peeled too."""
    lines = pl.Series("t", [x for x in sample if x.strip()], dtype=pl.String)
    if lines.len() == 0:
        return (), sample
    chain, _, _ = _search(lines, fit, MAX_DEPTH)
    if not chain:
        return (), sample
    return chain, peel_lines(sample, chain)


def _search(lines: pl.Series, fit: Callable[[pl.Series], float], depth: int) -> tuple[tuple[str, ...], pl.Series, float]:
    """(chain, lines inside it, how well they are recognised): the best chain from here."""
    base = fit(lines)
    best: tuple[tuple[str, ...], pl.Series, float] = ((), lines, base)
    if depth == 0:
        return best
    for w in wrappers():
        rate, peeled, host = _fits(lines, w)
        if rate < MIN_RATE:
            continue
        if host is not None and w.not_hosts and set(host.drop_nulls().unique().to_list()) <= w.not_hosts:
            continue  # e.g. a level column taken for a compose service name
        sub, inner, after = _search(peeled, fit, depth - 1)
        if "ets" in w.groups:  # the wrapper's own stamp dates the lines it wraps
            after = max(after, rate)
        if after < base - GAIN or (w.needs_gain and after <= base + GAIN):
            continue
        if (round(after, 2), len(sub) + 1) > (round(best[2], 2), len(best[0])):
            best = ((w.id, *sub), inner, after)
    return best


def peel_lines(lines: list[str], chain: tuple[str, ...]) -> list[str]:
    frame = pl.DataFrame({"raw": lines}, schema={"raw": pl.String})
    return peel(frame, pl.col("raw"), chain, None)["_wtext"].to_list()


def peel(frame: pl.DataFrame, text: pl.Expr, chain: tuple[str, ...], year: int | None) -> pl.DataFrame:
    """Add ``_wtext`` (the text inside the wrappers), ``_wets`` (UTC), ``_wnaive`` and ``_whost``."""
    frame = frame.with_columns(
        _wtext=text,
        _wets=pl.lit(None, dtype=pl.Datetime("us", "UTC")),
        _wnaive=pl.lit(None, dtype=pl.Datetime("us")),
        _whost=pl.lit(None, dtype=pl.String),
    )
    for w in by_id(chain):
        g = pl.col("_wtext").str.extract_groups(w.regex)
        frame = frame.with_columns(_wg=g)
        inner = pl.col("_wg").struct.field("inner")
        cols = {"_wtext": pl.coalesce(inner, pl.col("_wtext"))}
        groups = w.groups
        if "host" in groups:
            cols["_whost"] = pl.coalesce(pl.col("_whost"), pl.col("_wg").struct.field("host"))
        if "ets" in groups:
            ets = pl.col("_wg").struct.field("ets")
            if w.rfc3339:
                cols["_wets"] = pl.coalesce(parse_iso(ets), pl.col("_wets"))  # the inner stamp: nearer the source
            elif w.time is not None:
                aware, naive, _ = stamp_expr(ets, w.time, year)
                cols["_wets"] = pl.coalesce(aware, pl.col("_wets"))
                cols["_wnaive"] = pl.coalesce(naive, pl.col("_wnaive"))
        frame = frame.with_columns(**cols).drop("_wg")
    return frame
