"""Pick the envelope and layout of a file from its first lines.

Every (envelope, layout) pair is scored by the share of the sample's non-empty lines that the
layout recognises as the start of a record (continuation lines such as stack traces count against
every layout alike). The best rate wins; among rates within ``TIE`` of the best, the layout that
pins down more fields wins, then the envelope listed first. When no catalogued layout
fits the lines well, the inferred head (``infer.py``: the file's dominant timestamp shape) is used
if it fits clearly more of them; the message-only fallback only when nothing reaches ``MIN_RATE``.
A ``docker-ts`` envelope competes only when it earns its place (``_earns``): an application's own
ISO stamp at the start of its lines is not taken for one.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import polars as pl

import dataclasses

from logsleuth.ingest import envelopes
from logsleuth.ingest import wrappers as wrap
from logsleuth.ingest.envelopes import Envelope
from logsleuth.ingest.layouts import infer, quick
from logsleuth.ingest.layouts.catalog import KNOWN_LEVELS, Layout

SAMPLE_LINES = 500
MIN_RATE = 0.05
TIE = 0.02


@dataclass(frozen=True)
class Detection:
    envelope: Envelope
    layout: Layout
    rate: float
    runner_up: Layout | None
    runner_rate: float
    forced: bool = False


def _starts(lay: Layout) -> pl.Expr:
    """Does a line start a record of this layout? A layout whose level column holds no level word
    on that line does not fit it (``%d [%t] %p`` reading ``[ INFO ] ProducerImpl`` as thread 'INFO'
    and level 'ProducerImp'). The fallback starts one on every line."""
    if lay.is_fallback:
        return pl.col("t").is_not_null()
    return _starts_of(lay.start_regex, lay.inferred)


@lru_cache(maxsize=256)
def _starts_of(start_regex: str, inferred: bool) -> pl.Expr:
    """Built once per start regex (building extract_groups compiles the regex, ~1 ms each)."""
    text = infer.head(pl.col("t")) if inferred else pl.col("t")
    if "(?P<level>" not in start_regex:
        return text.str.contains(start_regex)
    level = text.str.extract_groups(start_regex).struct.field("level").str.strip_chars().str.to_uppercase()
    return level.is_in(list(KNOWN_LEVELS)).fill_null(False)


Counts = dict[tuple[str, ...], dict[int, int]]


def score(texts: pl.Series, layouts: list[Layout], memo: Counts | None = None) -> list[float]:
    """Each layout's record-start rate on the non-empty ``texts``. ``memo``: the counts of earlier
    calls in one detection, by lines and layout, so the same lines are not scored twice by one
    layout (each layout's regex is compiled per call: most of the start-up of a small input)."""
    texts = texts.filter(texts.str.strip_chars() != "")
    n = texts.len()
    if n == 0:
        return [0.0 for _ in layouts]
    lines = texts.to_list()
    known = memo.setdefault(tuple(lines), {}) if memo is not None else {}
    todo = [lay for lay in layouts if id(lay) not in known]
    if todo:
        counts = _quick_counts(lines, todo)
        rest = [lay for lay, c in zip(todo, counts) if c is None]
        if rest:
            frame = pl.DataFrame({"t": texts})
            found = iter(frame.select([_starts(lay).sum().alias(str(i)) for i, lay in enumerate(rest)]).row(0))
            counts = [next(found) if c is None else c for c in counts]
        known.update((id(lay), c) for lay, c in zip(todo, counts))
    return [known[id(lay)] / n for lay in layouts]


def _quick_counts(lines: list[str], layouts: list[Layout]) -> list[int | None]:
    """What ``_starts(lay).sum()`` counts, for a tiny sample, with Python's ``re`` (``quick.py``);
    None for each layout it does not answer alike (all of them when the sample is not tiny)."""
    if not quick.tiny(lines):
        return [None for _ in layouts]
    counts: list[int | None] = []
    for lay in layouts:
        if lay.is_fallback:
            counts.append(len(lines))
            continue
        cre = quick.safe(lay.start_regex)
        if cre is None:
            counts.append(None)
            continue
        texts = [x[: infer.HEAD_CHARS] for x in lines] if lay.inferred else lines
        if "(?P<level>" not in lay.start_regex:
            counts.append(sum(1 for x in texts if cre.search(x)))
            continue
        n = 0
        for x in texts:
            m = cre.search(x)
            level = m.group("level") if m else None
            n += level is not None and level.strip().upper() in KNOWN_LEVELS
        counts.append(n)
    return counts


def fit(texts: pl.Series, layouts: list[Layout], memo: Counts | None = None) -> float:
    """How well lines are recognised: the best layout's record-start rate, or the share of lines
    that begin with a timestamp (for a layout the catalogue lacks)."""
    rates = score(texts, [lay for lay in layouts if not lay.is_fallback], memo)
    return max([*rates, infer.stamp_at_start_rate(texts)])


def _earns(env: Envelope, inner: pl.Series, plain: pl.Series, layouts: list[Layout], memo: Counts | None = None) -> bool:
    """Does a ``docker-ts`` envelope read these lines better than no envelope does? Its stamp is
    an RFC 3339 stamp and a space, which is also how many applications begin their own lines
    (logback's ``%d{yyyy-MM-dd'T'HH:mm:ss.SSSX} [%level] …``). The stamp is there either way, so it
    is no evidence: what counts is what is read beyond it, the text inside (a layout, or a stamp of
    its own) against a catalogued layout on the whole line. ``docker logs -t`` and ``kubectl logs
    --timestamps`` print 9 fraction digits, GitHub Actions 7 (``envelopes.fixed_stamps``): with those
    the envelope only has to read the lines no worse; with any other stamp it must read them clearly
    better (as a loose wrapper must, ``wrappers.needs_gain``). A JSON record inside is read as such."""
    if env.outer != "docker-ts" or env.json_text:
        return True
    inside = fit(inner, layouts, memo)
    whole = max(score(plain, [lay for lay in layouts if not lay.is_fallback], memo), default=0.0)
    if envelopes.fixed_stamps(plain):
        return inside >= whole - wrap.GAIN
    return inside > whole + wrap.GAIN


def detect(sample: list[str], layouts: list[Layout], forced: Layout | None = None) -> Detection:
    ansi = any("\x1b[" in x for x in sample[:SAMPLE_LINES])
    clean = pl.Series(sample[:SAMPLE_LINES], dtype=pl.String)
    if ansi:
        clean = clean.str.replace_all(envelopes.ANSI_RE, "")
    memo: Counts = {}  # the layouts' counts on lines already scored (the sample often comes back unchanged)
    chain, inner = wrap.peel_sample(clean.to_list(), lambda s: fit(s, layouts, memo))
    envs = envelopes.candidates(inner)
    if chain or ansi:
        envs = [dataclasses.replace(e, wrappers=chain, ansi=e.ansi or ansi) for e in envs]
    raw = pl.DataFrame({"line": list(range(1, min(len(sample), SAMPLE_LINES) + 1)), "raw": sample[:SAMPLE_LINES]},
                       schema={"line": pl.Int64, "raw": pl.String})

    def text_of(env: Envelope) -> pl.Series:
        if env.is_none and not env.ansi:
            return raw["raw"]
        return envelopes.unwrap(envelopes.join_partials(raw, env), env)["text"]

    texts_of = [text_of(env) for env in envs]
    plain = texts_of[-1]  # the last candidate: no outer envelope (the wrappers peeled, if any)
    kept = [(env, t) for env, t in zip(envs, texts_of) if _earns(env, t, plain, layouts, memo)]
    pool = [forced] if forced is not None else list(layouts)
    scored: list[tuple[float, int, int, Envelope, Layout]] = []
    inferred: list[tuple[float, int, int, Envelope, Layout]] = []
    for ei, (env, texts) in enumerate(kept):
        rates = score(texts, pool, memo)
        for lay, rate in zip(pool, rates):
            scored.append((rate, lay.specificity, -ei, env, lay))
        if forced is None and ei == 0:  # the inferred head reads the most unwrapped text (an envelope's own stamp is not a layout)
            best_here = max((r for lay, r in zip(pool, rates) if not lay.is_fallback), default=0.0)
            guess = infer.inferred_layout(texts, best_here)
            if guess is not None:
                inferred.append((guess[1], guess[0].specificity, -ei, env, guess[0]))
    real = [s for s in scored if not s[4].is_fallback and s[0] >= MIN_RATE]
    if forced is not None:
        real = scored
    top_inferred = max(inferred, key=lambda s: (s[0], s[2])) if inferred else None
    top_real = max((s[0] for s in real), default=0.0)
    if top_inferred is not None and (not real or top_inferred[0] >= top_real + infer.INFER_MARGIN):
        others = sorted((s for s in scored if not s[4].is_fallback), key=lambda s: (-s[0], -s[1]))
        ru = others[0] if others else None
        return Detection(top_inferred[3], top_inferred[4], top_inferred[0], ru[4] if ru else None, ru[0] if ru else 0.0, False)
    if not real:
        fallback = [s for s in scored if s[4].is_fallback]
        best = max(fallback, key=lambda s: (s[0], s[2]))
        others = sorted((s for s in scored if not s[4].is_fallback), key=lambda s: -s[0])
        ru = others[0] if others else None
        return Detection(best[3], best[4], best[0], ru[4] if ru else None, ru[0] if ru else 0.0, forced is not None)
    top = max(s[0] for s in real)
    near = [s for s in real if s[0] >= top - TIE]
    best = max(near, key=lambda s: (s[1], s[2], s[0]))
    rest = sorted(
        (s for s in scored if s[4].id != best[4].id and not s[4].is_fallback), key=lambda s: (-s[0], -s[1])
    )
    ru = rest[0] if rest else None
    return Detection(best[3], best[4], best[0], ru[4] if ru else None, ru[0] if ru else 0.0, forced is not None)
