"""Run every sample of every pack through the real pipeline (layout detection, records, matcher).

A sample passes when it is one record, its own pattern matches it and yields exactly the fields it
lists, and no other pattern matches it unless the sample names that pattern in ``also``. Layout
samples (``patterns/layouts.toml``) are checked by the test suite and by ``patterns check`` too.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import polars as pl

from logsleuth.ingest.layouts.catalog import builtin_layouts
from logsleuth.recognise.matcher import Matcher
from logsleuth.recognise.packs import PackSet, Pattern
from logsleuth.ingest.reader import read_source
from logsleuth.ingest.inputs import ReadOptions
from logsleuth.ingest.records import full_regex
from logsleuth.ingest.sources import Source


def records_of_text(text: str, name: str = "<sample>") -> pl.DataFrame:
    recs, _ = read_source(Source(name, None, data=text.encode("utf-8")), ReadOptions(tz="UTC"))
    return recs


def _layout_of(first_line: str):
    """The built-in layout a sample line is written in (Python's re on the start regexes)."""
    best = None
    for lay in builtin_layouts():
        if lay.is_fallback:
            continue
        try:
            if re.match(lay.start_regex, first_line) and (best is None or lay.specificity > best.specificity):
                best = lay
        except re.error:
            return None
    return best or next(lay for lay in builtin_layouts() if lay.is_fallback)


def records_of_texts(texts: list[str]) -> list[pl.DataFrame]:
    """Records of many samples, read as one file per layout (fast), each sample's rows apart."""
    groups: dict[str, list[int]] = {}
    layouts = {}
    for i, t in enumerate(texts):
        lay = _layout_of(t.split("\n", 1)[0])
        if lay is None:
            groups.setdefault(f"#{i}", []).append(i)
            continue
        layouts[lay.id] = lay
        groups.setdefault(lay.id, []).append(i)
    out: list[pl.DataFrame | None] = [None] * len(texts)
    for key, idx in groups.items():
        if key.startswith("#"):
            out[idx[0]] = records_of_text(texts[idx[0]])
            continue
        starts: list[int] = []
        lines: list[str] = []
        for i in idx:
            starts.append(len(lines) + 1)
            lines.extend(texts[i].split("\n"))
        data = ("\n".join(lines) + "\n").encode("utf-8")
        recs, _ = read_source(Source("<samples>", None, data=data), ReadOptions(tz="UTC", layout=layouts[key]))
        bounds = starts + [len(lines) + 1]
        for n, i in enumerate(idx):
            out[i] = recs.filter((pl.col("line") >= bounds[n]) & (pl.col("line") < bounds[n + 1]))
    return out  # type: ignore[return-value]


def _same(got, want) -> bool:
    if isinstance(want, float) or isinstance(got, float):
        try:
            return got is not None and math.isclose(float(got), float(want), rel_tol=1e-9, abs_tol=1e-9)
        except (TypeError, ValueError):
            return False
    return got == want


# samples read and matched this many at a time: a 10,000-pattern pack is checked in bounded memory
# (the matcher's work per batch is the patterns whose literals its samples contain)
SAMPLE_BATCH = 256


def check_pattern_samples(packs: PackSet, only: list[Pattern] | None = None) -> list[str]:
    problems: list[str] = []
    matcher = Matcher(packs)
    known = {p.id for p in packs.patterns}
    chosen = only if only is not None else packs.patterns
    samples = [(p, i, s) for p in chosen for i, s in enumerate(p.samples, 1)]
    for start in range(0, len(samples), SAMPLE_BATCH):
        problems += _check_batch(matcher, known, samples[start : start + SAMPLE_BATCH])
    return problems


def _check_batch(matcher: Matcher, known: set[str], samples: list) -> list[str]:
    problems: list[str] = []
    recs_list = records_of_texts([s.line for _, _, s in samples])
    tagged = [r.with_columns(_sample=pl.lit(k, dtype=pl.Int64)) for k, r in enumerate(recs_list)]
    everything = pl.concat(tagged, how="vertical_relaxed") if tagged else None
    events = matcher.match(everything) if everything is not None else None
    by_sample = {k: g for (k,), g in events.group_by("_sample")} if events is not None and events.height else {}
    for k, (p, i, s) in enumerate(samples):
        where = f"{Path(p.source).name}: pattern {p.id}"
        for other in s.also:
            if other not in known:
                problems.append(f"{where}: sample {i}: also names unknown pattern {other!r}")
        recs = recs_list[k]
        if recs.height != 1:
            problems.append(f"{where}: sample {i}: is {recs.height} records, not 1 (no layout recognises its first line?)")
            continue
        ev = by_sample.get(k)
        if ev is None:
            ev = events.clear()  # type: ignore[union-attr]
        mine = ev.filter(pl.col("pattern") == p.id)
        if mine.height == 0:
            r = recs.row(0, named=True)
            msg = (r["msg"] or "").split("\n", 1)[0][:120]
            problems.append(
                f"{where}: sample {i}: does not match its own pattern "
                f"(logger {r['logger']!r}, message {msg!r})"
            )
            continue
        row = mine.row(0, named=True)
        for key, want in s.fields.items():
            if not _same(row.get(key), want):
                problems.append(f"{where}: sample {i}: field {key} = {row.get(key)!r}, expected {want!r}")
        others = sorted(set(ev["pattern"].to_list()) - {p.id} - set(s.also))
        if others:
            problems.append(
                f"{where}: sample {i}: also matches {', '.join(others)} "
                "(make the regexes exclusive, or list them in the sample's also = [...])"
            )
    return problems


def check_layout_samples() -> list[str]:
    from logsleuth.errors import PackError
    from logsleuth.ingest.layouts.catalog import load_record_starts

    problems: list[str] = []
    try:
        load_record_starts()  # [[record_start]]: anchored, and every sample matches (checked on load)
    except PackError as e:
        problems.append(str(e))
    for lay in builtin_layouts():
        for i, s in enumerate(lay.samples, 1):
            df = pl.DataFrame({"t": [s.line]})
            got = df.select(pl.col("t").str.extract_groups(full_regex(lay))).to_series().to_list()[0]
            for k, want in s.expect.items():
                if k == "utc":
                    continue
                if got.get(k) != want:
                    problems.append(f"layouts.toml: layout {lay.id}: sample {i}: {k} = {got.get(k)!r}, expected {want!r}")
    return problems


def check_wrapper_samples() -> list[str]:
    """Every wrapper sample (patterns/wrappers.toml) peels to its inner text, host and stamp."""
    from logsleuth.ingest import wrappers as wrap

    problems: list[str] = []
    for w in wrap.wrappers():
        for i, s in enumerate(w.samples, 1):
            where = f"wrappers.toml: wrapper {w.id}: sample {i}"
            frame = wrap.peel(pl.DataFrame({"raw": [s.get("line", "")]}), pl.col("raw"), (w.id,), 2024)
            row = frame.row(0, named=True)
            if row["_wtext"] != s.get("inner"):
                problems.append(f"{where}: inner = {row['_wtext']!r}, expected {s.get('inner')!r}")
            if "host" in s and row["_whost"] != s["host"]:
                problems.append(f"{where}: host = {row['_whost']!r}, expected {s['host']!r}")
            if "ets" in s:
                import datetime as dt

                got = row["_wets"] or row["_wnaive"]
                want = dt.datetime.fromisoformat(s["ets"].replace("Z", "+00:00"))
                if got is None or got != want:
                    problems.append(f"{where}: stamp = {got}, expected {s['ets']}")
    return problems


def check_stamp_samples() -> list[str]:
    """Every stamp sample (patterns/stamps.toml) is found by its shape and reads as its UTC time."""
    import datetime as dt

    from logsleuth.ingest.layouts import infer
    from logsleuth.ingest.timeparse import stamp_expr

    problems: list[str] = []
    for s in infer.stamps():
        for i, (text, utc) in enumerate(s.samples, 1):
            where = f"stamps.toml: stamp {s.id}: sample {i}"
            if not re.fullmatch(s.regex, text):
                problems.append(f"{where}: {text!r} does not fit the stamp's regex")
                continue
            aware, naive, tod = stamp_expr(pl.lit(text), s.time, 2024)
            got_a, got_n, got_t = pl.select(a=aware, n=naive, t=tod).row(0)
            want = dt.datetime.fromisoformat(utc.replace("Z", "+00:00"))
            got = got_a or (got_n.replace(tzinfo=dt.timezone.utc) if got_n else None)
            if got_t is not None:
                ok = got_t == want.time().replace(tzinfo=None)
            else:
                ok = got is not None and got == want
            if not ok:
                problems.append(f"{where}: {text!r} reads as {got or got_t}, expected {utc}")
    return problems
