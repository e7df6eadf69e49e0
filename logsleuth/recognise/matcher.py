"""Records -> events.

1. A literal prefilter (every pattern's required texts) runs on every line while the record
   stream is read (the compiled core's scan of the unsplit chunk); only records with a hit are
   parsed at all.
2. The compiled core's matcher (rust/src/matcher.rs, the only implementation) finds in each
   selected record's text the literals of every pattern at once (Aho-Corasick), checks each
   candidate pattern's logger scope and runs its regex (the ``regex`` crate: linear time), and
   hands back the events (record, pattern) and each captured field as a string column.
3. The output is the events table: the record columns, ``system``, ``component``, ``pack``,
   ``pattern``, ``event``, ``severity`` and one typed column per vocabulary field. A record two
   patterns match (one message in a Java and a C++ client's wording) gives two events, in the
   packs' order of their patterns.
"""

from __future__ import annotations


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


class Matcher:
    def __init__(self, packs: PackSet, patterns: list[Pattern] | None = None):
        self.packs = packs
        self.patterns = patterns if patterns is not None else packs.patterns
        cs = sorted({s for p in self.patterns if not p.ignore_case for s in p.contains})
        ci = sorted({s.lower() for p in self.patterns if p.ignore_case for s in p.contains})
        self._cs = cs
        self._ci = ci
        self._scoped = any(p.scope for p in self.patterns)  # (else the loggers are not handed over)
        self._core = None
        self._event_table: pl.DataFrame | None = None

    def literals(self) -> tuple[list[str], list[str]]:
        """(case-sensitive, ASCII-case-insensitive) required literals of the patterns, for the
        compiled reading core, which searches them over a chunk's unsplit text (a record is a
        candidate when a line of it holds one; the ASCII-case-insensitive ones as the matcher
        finds them)."""
        return list(self._cs), list(self._ci)

    def _compiled(self):
        """The compiled matcher of these patterns (logsleuth._core.Matcher), built on first use."""
        if self._core is None:
            from logsleuth.ingest.compiled import required

            owners: dict[tuple[str, bool], list[int]] = {}
            for i, p in enumerate(self.patterns):
                for lit in p.contains:
                    key = (lit.lower(), True) if p.ignore_case else (lit, False)
                    owners.setdefault(key, []).append(i)
            sides = []
            for ci in (False, True):
                lits = sorted({k[0] for k in owners if k[1] == ci})
                sides += [lits, [owners[(lit, ci)] for lit in lits]]
            specs = [(p.regex, p.boundary_regex if p.anchored else None, p.scope_regex, p.require_scope, list(p.fields))
                     for p in self.patterns]
            self._core = required().Matcher(specs, *sides)
        return self._core

    def match(self, records: pl.DataFrame, text: str = "msg", complete: bool = True) -> pl.DataFrame:
        """Events of ``records`` (every pattern that matches a record gives one event, a record's
        events in the packs' order of their patterns). ``complete``: with every vocabulary field as
        a column (else only the fields some event here has, in the vocabulary's order; the caller
        completes the table with ``complete``).

        The compiled core does the matching (rust/src/matcher.rs): one Aho-Corasick pass for the
        literals, then each candidate pattern's scope and regex; its captures come back as string
        columns, typed here."""
        if records.height == 0:
            return self.empty(records)
        positioned = "isolated" in records.columns
        texts = records[text].cast(pl.String)
        loggers = records["logger"].cast(pl.String) if "logger" in records.columns and self._scoped else None
        iso = records["isolated"].__arrow_c_stream__() if positioned else None
        recs, pats, fields = self._compiled().match_records(
            texts.__arrow_c_stream__(), loggers.__arrow_c_stream__() if loggers is not None else None, iso
        )
        if not len(recs):
            return self.empty(records)
        rec, pat = pl.Series(recs), pl.Series(pats)
        ev = records.drop("isolated", strict=False).select(pl.all().gather(rec))
        table = self._table()
        ev = ev.with_columns([table[c].gather(pat) for c in EVENT_COLUMNS])
        if fields:  # (in the vocabulary's order: the order the outputs give them)
            order = {f: i for i, f in enumerate(self.packs.vocabulary)}
            fields = sorted(fields, key=lambda f: order.get(f[0], len(order)))
            raw = pl.DataFrame([pl.Series(col).alias(name) for name, col in fields])
            typed = raw.select([cast_field(pl.col(name), self.packs.field_type(name)).alias(name) for name, _ in fields])
            ev = pl.concat([ev, typed], how="horizontal")
        return self.complete(ev) if complete else ev

    def _table(self) -> pl.DataFrame:
        """The patterns' literal columns (system ... severity), one row per pattern, as categories."""
        if self._event_table is None:
            rows = [(p.system, p.component, p.pack, p.id, p.event, p.severity) for p in self.patterns]
            self._event_table = pl.DataFrame(rows, schema=dict.fromkeys(EVENT_COLUMNS, pl.String), orient="row").with_columns(
                [pl.col(c).cast(pl.Categorical) for c in CATEGORICAL]
            )
        return self._event_table

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
