"""Layout detection of a tiny sample with Python's ``re`` (ingest/layouts/quick.py) gives what the
Polars path gives: every count, rate, peeled line and detection, on the lines of every sample log
and shape (checked with the size bound lifted, so each file's first lines take both paths)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from logsleuth.ingest import wrappers as W
from logsleuth.ingest.layouts import detect as D
from logsleuth.ingest.layouts import infer, quick
from logsleuth.ingest.layouts.catalog import builtin_layouts

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted(
    p for d in ("sample_logs", "tests/shapes") for p in (ROOT / d).rglob("*")
    if p.is_file() and p.suffix in (".log", ".txt", "") and p.stat().st_size < 20_000_000
)


@pytest.mark.parametrize(
    "regex",
    [r"\p{L}+", r"[[:alpha:]]", r"\<word", r"a\z", r"(?s).", r"[a&&b]", r"[a--b]", r"\x{FEFF}", "é", "a}", r"x{,3}",
     r"(?<n>a)", r"(?=a)", r"a(?i)b", r"\b{start}", r"[\b]", r"[]a]", r"\1", r"\u00e9", r"x{5000}"],
)
def test_syntax_one_engine_reads_otherwise_is_left_to_polars(regex):
    assert quick.safe(regex) is None


def test_the_catalogue_is_mostly_read_here():
    lays = [lay for lay in builtin_layouts() if not lay.is_fallback]
    assert sum(quick.safe(lay.start_regex) is not None for lay in lays) >= len(lays) - 3
    assert quick.safe(r"^(?P<ts>\d{4}-\d{2}-\d{2}) \[(?P<t>[^\]]*)\] (?i:info|warn)\s+\S+$") is not None


def test_only_a_tiny_plain_sample():
    assert quick.tiny(["2024-01-01 10:00:00,000 INFO hello", "\tat x.Y(Z.java:1)"])
    assert not quick.tiny(["2024-01-01 10:00:00,000 INFO héllo"])  # not ASCII
    assert not quick.tiny(["a\x1fb"])  # a control character \s reads differently
    assert not quick.tiny(["x" * 100] * (quick.MAX_CHARS // 100 + 1))


@pytest.fixture
def both(monkeypatch):
    def run(fn):
        monkeypatch.setattr(quick, "MAX_CHARS", 10**9)
        fast = fn()
        monkeypatch.setattr(quick, "MAX_CHARS", -1)
        slow = fn()
        return fast, slow

    return run


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(ROOT)) for p in FILES])
def test_quick_and_polars_agree(path, both):
    sample = path.read_bytes()[:400_000].decode("utf-8", "replace").split("\n")[: D.SAMPLE_LINES]
    texts = pl.Series([x for x in sample if x.strip()], dtype=pl.String)
    lays = list(builtin_layouts())

    def fits():
        out = []
        for w in W.wrappers():
            rate, peeled, host = W._fits(texts, w)
            out.append((rate, peeled.to_list(), None if host is None else host.to_list()))
        return out

    for fn in (lambda: D.score(texts, lays), lambda: infer.stamp_at_start_rate(texts), lambda: infer.inferred_layout(texts, 0.0),
               fits, lambda: D.detect(sample, lays)):
        fast, slow = both(fn)
        assert fast == slow
