"""Records -> events, as Polars expressions.

1. A literal prefilter (each pattern's required text, Aho-Corasick via ``str.contains_any``) runs on
   every line while the record stream is read; only records with a hit are parsed at all.
2. For each pattern, the selected records are narrowed by its own literal and its logger scope,
   and only those run the regex (``str.extract_groups`` on the Rust engine: linear time).
3. The output is the events table: the record columns, ``system``, ``component``, ``pack``,
   ``pattern``, ``event``, ``severity`` and one typed column per vocabulary field.
"""

from __future__ import annotations

import math
import re

import polars as pl

from logsleuth.recognise.packs import Pattern, PackSet, cast_field

EVENT_COLUMNS = ["system", "component", "pack", "pattern", "event", "severity"]
# the columns whose values are few and long (a pattern id is 30 characters): stored as categories, 4
# bytes per event instead of a string each (they sort and compare like strings)
CATEGORICAL = ("system", "component", "pack", "pattern", "event", "severity")
# the record columns of few distinct values (a log has some dozens of loggers and threads, a few
# levels), 16-60 bytes per event as strings: categories in the events table too (``categories``).
# Code that runs a ``.str`` method on them casts to String first.
RECORD_CATEGORICAL = ("level", "logger", "thread")


def categories(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with its low-cardinality text columns (CATEGORICAL, RECORD_CATEGORICAL) as categories."""
    cols = [pl.col(c).cast(pl.Categorical) for c in (*CATEGORICAL, *RECORD_CATEGORICAL) if frame.schema.get(c) == pl.String]
    return frame.with_columns(cols) if cols else frame


def as_strings(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with its categorical columns as plain strings (what a Parquet output writes, for any reader)."""
    cats = [pl.col(c).cast(pl.String) for c, t in frame.schema.items() if isinstance(t, pl.Categorical)]
    return frame.with_columns(cats) if cats else frame


def _literal(name: str, value: str) -> pl.Expr:
    e = pl.lit(value)
    return (e.cast(pl.Categorical) if name in CATEGORICAL else e).alias(name)


class Matcher:
    def __init__(self, packs: PackSet, patterns: list[Pattern] | None = None):
        self.packs = packs
        self.patterns = patterns if patterns is not None else packs.patterns
        cs = sorted({s for p in self.patterns if not p.ignore_case for s in p.contains})
        ci = sorted({s.lower() for p in self.patterns if p.ignore_case for s in p.contains})
        self._cs = cs
        self._ci = ci
        # Rust's literal searcher is much faster under 64 literals: split the set, OR the parts
        # (Polars evaluates them side by side); measured 0.53 s -> 0.42 s per 1.5M lines here
        parts = max(1, math.ceil(len(cs) / 64))
        k = max(1, math.ceil(len(cs) / parts))  # literals per alternation, the parts about equal
        self._alternations = ["|".join(re.escape(x) for x in cs[i : i + k]) for i in range(0, len(cs), k)]
        self._alternation_ci = "(?i)" + "|".join(re.escape(x) for x in ci) if ci else ""

    def prefilter(self, column: str = "text") -> pl.Expr:
        """True for a line that contains some pattern's required literal.

        Alternations of escaped literals (at most 64 each, ORed): Rust's regex engine compiles each
        to a literal multi-substring searcher, measured ~1.8x faster here than ``str.contains_any``."""
        parts = [pl.col(column).str.contains(a) for a in self._alternations]
        if self._alternation_ci:
            parts.append(pl.col(column).str.contains(self._alternation_ci))
        return pl.any_horizontal(parts) if parts else pl.lit(False)

    def prefilter_regexes(self) -> list[str]:
        """The regexes of :meth:`prefilter` (a line is a candidate when one of them matches it),
        for the compiled reading core, which searches them over a chunk's unsplit text."""
        return list(self._alternations) + ([self._alternation_ci] if self._alternation_ci else [])

    def match(self, records: pl.DataFrame, text: str = "msg", complete: bool = True) -> pl.DataFrame:
        """Events of ``records`` (every pattern that matches a record gives one event). ``complete``:
        with every vocabulary field as a column (else only the fields some event here has; the
        caller completes the table with ``complete``)."""
        if records.height == 0:
            return self.empty(records)
        records = records.with_row_index("_rec")
        candidates = self._candidates(records, text)
        out: list[pl.DataFrame] = []
        positioned = "isolated" in records.columns
        for p_index, rec_ids in candidates:
            p = self.patterns[p_index]
            cand = records.filter(pl.col("_rec").is_in(rec_ids.implode()))
            if p.scope_regex:  # a record without a logger is not excluded by a scope, unless it must have one
                in_scope = pl.col("logger").str.contains(p.scope_regex)
                cand = cand.filter(in_scope.fill_null(False) if p.require_scope else (pl.col("logger").is_null() | in_scope))
            if p.anchored and positioned:
                # the message where the layout isolated it; elsewhere, wherever it sits in the line
                iso = pl.col("isolated").fill_null(False)
                parts = [(cand.filter(iso), p.regex), (cand.filter(~iso), p.boundary_regex)]
            else:
                parts = [(cand, p.regex)]
            for frame, regex in parts:
                hit = self._hits(frame, p, regex, text)
                if hit is not None:
                    out.append(hit)
        if not out:
            return self.empty(records.drop("_rec"))
        ev = pl.concat(out, how="diagonal_relaxed").sort("_rec", maintain_order=True).drop("_rec")
        ev = ev.drop("isolated", strict=False)
        return self.complete(ev) if complete else ev

    def _hits(self, cand: pl.DataFrame, p: Pattern, regex: str, text: str) -> pl.DataFrame | None:
        """The candidates ``regex`` matches, with the pattern's fields: one regex pass (an empty
        group in front tells a match from a miss when every field is optional)."""
        if cand.height == 0:
            return None
        cols = [_literal(k, v) for k, v in zip(EVENT_COLUMNS, (p.system, p.component, p.pack, p.id, p.event, p.severity))]
        if not p.fields:
            hit = cand.filter(pl.col(text).str.contains(regex))
            return hit.with_columns(cols) if hit.height else None
        found = cand.with_columns(_g=pl.col(text).str.extract_groups(f"(?P<_hit_>)(?:{regex})"))
        hit = found.filter(pl.col("_g").struct.field("_hit_").is_not_null())
        if hit.height == 0:
            return None
        groups = pl.col("_g")
        cols += [cast_field(groups.struct.field(f), self.packs.field_type(f)).alias(f) for f in p.fields]  # issue 21: wide/non-ASCII integers
        return hit.with_columns(cols).drop("_g")

    def _candidates(self, records: pl.DataFrame, text: str) -> list[tuple[int, pl.Series]]:
        """(pattern index, record ids) pairs whose record contains the pattern's literal: one
        Aho-Corasick pass over the text for all literals at once."""
        owners: dict[tuple[str, bool], list[int]] = {}
        for i, p in enumerate(self.patterns):
            for lit in p.contains:
                key = (lit.lower(), True) if p.ignore_case else (lit, False)
                owners.setdefault(key, []).append(i)
        pairs: list[pl.DataFrame] = []
        for ci in (False, True):
            lits = sorted({k[0] for k in owners if k[1] == ci})
            if not lits:
                continue
            found = records.select(
                "_rec", _lit=pl.col(text).str.extract_many(lits, overlapping=True, ascii_case_insensitive=ci)
            ).explode("_lit").drop_nulls("_lit")
            if ci:
                found = found.with_columns(pl.col("_lit").str.to_lowercase())
            table = pl.DataFrame(
                [(lit, i) for (lit, c), idx in owners.items() if c == ci for i in idx],
                schema={"_lit": pl.String, "_p": pl.Int64},
                orient="row",
            )
            pairs.append(found.join(table, on="_lit").select("_p", "_rec"))
        if not pairs:
            return []
        allp = pl.concat(pairs).unique(maintain_order=True)
        return [(int(k[0]), g["_rec"]) for k, g in allp.group_by("_p", maintain_order=True)]

    def _narrow(self, p: Pattern, text: str) -> pl.Expr:
        col = pl.col(text)
        lit = col.str.contains_any(list(p.contains), ascii_case_insensitive=p.ignore_case)
        if p.scope_regex:
            lit = lit & (pl.col("logger").is_null() | pl.col("logger").str.contains(p.scope_regex))
        return lit

    def empty(self, records: pl.DataFrame) -> pl.DataFrame:
        ev = records.clear().drop("isolated", strict=False).with_columns(
            [pl.lit(None, dtype=pl.Categorical if c in CATEGORICAL else pl.String).alias(c) for c in EVENT_COLUMNS]
        )
        return self.complete(ev)

    def complete(self, ev: pl.DataFrame) -> pl.DataFrame:
        """Every vocabulary field as a typed column: the missing ones as constant null columns
        (which Polars keeps as one value, not a value per row)."""
        missing = [pl.lit(None, dtype=self.packs.field_type(f)).alias(f) for f in self.packs.vocabulary if f not in ev.columns]
        if missing:
            ev = ev.with_columns(missing)
        return ev
