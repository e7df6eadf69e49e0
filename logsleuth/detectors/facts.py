"""Typed facts every detector shares: when something began and ended and what line says so
(:class:`Bound`, :class:`Window`), a subject that knows its window (:class:`Subject`), and what the
inputs can say about something that did *not* happen (:class:`Absence`, made by :func:`absence`).

A finding states that something did not happen only when an input covers that subject and that
window (docs/architecture.md, "Claims and coverage"): ``absence(...)`` looks at which of the logs
that would show it were given, what time each covers (span and gaps, ingest/coverage.py), and
which of their lines in the window carry the vocabulary of the events looked for but matched no
pattern (near misses: a wording the packs do not know yet). Its answer is *settled* (an input
covers it and holds no near miss), or *open*, with the reason and the log that would settle it.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from logsleuth.detectors.words import Text, at
from logsleuth.safe import visible


@dataclass(frozen=True)
class Bound:
    """One end of a window: the time, the line that bounds it and why (``open``: the true end lies
    beyond it, e.g. the log starts inside the episode)."""

    ts: dt.datetime | None
    file: str | None = None
    line: int | None = None
    why: str = ""
    open: bool = False

    def to_json(self) -> dict:
        from logsleuth.ingest.timeparse import iso_utc

        d: dict = {"ts": iso_utc(self.ts), "why": self.why}
        if self.file is not None:
            d["file"] = self.file
            d["line"] = self.line
        if self.open:
            d["open"] = True
        return d


@dataclass(frozen=True)
class Window:
    start: Bound
    end: Bound

    @classmethod
    def of(cls, a: dt.datetime | None, b: dt.datetime | None, why_a: str = "", why_b: str = "") -> "Window":
        return cls(Bound(a, why=why_a), Bound(b, why=why_b))

    @property
    def timed(self) -> bool:
        return self.start.ts is not None and self.end.ts is not None

    @property
    def seconds(self) -> float | None:
        if not self.timed:
            return None
        return (self.end.ts - self.start.ts).total_seconds()  # type: ignore[operator]

    def to_json(self) -> dict:
        return {"from": self.start.to_json(), "to": self.end.to_json()}


class Subject(dict):
    """A finding's subject: its JSON keys (documented on the finding's page) and, typed beside them,
    the window in which it was affected (what the chart and ``--since/--until`` read)."""

    window: Window | None

    def __init__(self, *args, window: Window | None = None, **kw) -> None:
        super().__init__(*args, **kw)
        self.window = window


@dataclass(frozen=True)
class NearMiss:
    """A line that carries the vocabulary of an event looked for but matched no pattern."""

    file: str
    line: int
    ts: dt.datetime | None
    text: str


@dataclass(frozen=True)
class Absence:
    """What the inputs allow to say about "``what`` did not happen to ``subject`` in ``window``"."""

    subject: str
    what: str
    window: Window | None
    covered_by: tuple[str, ...] = ()  # the inputs that speak for the subject and cover the window
    missing_reasons: tuple = ()  # why no input covers it, one per input (words.Text; empty when one does)
    settle_with: str = ""  # which log would settle it
    near_misses: tuple[NearMiss, ...] = ()
    found: tuple[tuple[str, int], ...] = ()  # (file, line) of the events looked for, when there are some

    @property
    def missing_why(self) -> Text:
        """Why no input covers it, the inputs' reasons joined by '; ' (empty when one does)."""
        return Text.join("; ", self.missing_reasons)

    @property
    def settled(self) -> bool:
        """True: the covering inputs show it did not happen (no event, no near miss)."""
        return bool(self.covered_by) and not self.near_misses and not self.found

    @property
    def open(self) -> bool:
        return not self.settled and not self.found


# a level and the lower ones a log must hold to show events of that level, in words
LEVEL_WORDS = {"WARN": "WARN or INFO", "INFO": "INFO"}


# the words of each way a log fails to cover a window (Coverage.uncovered): before, between and after its two times
_UNCOVERED = {
    "outside": ("covers ", " to ", " only"), "starts-after": ("starts at ", ", after ", ""),
    "ends-before": ("ends at ", ", before ", ""), "gap": ("has no lines from ", " to ", ""),
}


def uncovered_words(path: str, kind: str, a: dt.datetime | None, b: dt.datetime | None) -> Text:
    """Why a log does not cover a window (``Coverage.uncovered``), in words with typed times:
    'orders.log starts at 2025-03-14 02:14:31 UTC, after 2025-03-14 02:12:31 UTC'."""
    path = visible(path)  # a file name is untrusted: its words carry it made visible, like any log text
    if kind == "no-times" or a is None or b is None:
        return Text(f"{path} has no timestamps")
    before, between, after = _UNCOVERED[kind]
    return Text(f"{path} {before}", at(a), between, at(b), after)


def absence(
    ctx: Any,  # a detectors.base.Context (not imported: base imports this module)
    subject: str,
    what: str,
    window: Window | None,
    logs: list[str],
    events: tuple[str, ...] = (),
    settle_with: str = "",
    candidates_only: bool = False,
    level: str | None = None,
) -> Absence:
    """Can the inputs say that none of ``events`` (``what``, in words) happened to ``subject`` in
    ``window``? ``logs`` are the inputs (logs, by ``path``) that speak for the subject; an event of
    ``events`` in them in the window answers "it did happen" (``found``). Without times (a window
    without both ends, or a log without stamps) the whole log is the window: the order of its
    lines is all there is. With ``level`` (the level the events are logged at), a log that can hold
    no line of that level or a lower one (an ERROR-only log) does not cover it."""
    covered: list[str] = []
    why: list[Text | str] = []
    t0 = window.start.ts if window is not None else None
    t1 = window.end.ts if window is not None else None
    found: list[tuple[str, int]] = []
    near: list[NearMiss] = []
    for path in logs:
        cov = ctx.coverage(path)
        if cov is None:
            why.append(f"{visible(path)} was not read")
            continue
        timed = t0 is not None and t1 is not None and cov.first is not None
        if timed:
            gap = cov.uncovered(t0, t1)  # type: ignore[arg-type]
            if gap is not None:
                why.append(uncovered_words(cov.path, *gap))
                continue
        if level is not None and not cov.shows(level):
            why.append(f"{visible(path)} holds no {LEVEL_WORDS.get(level, level)} lines")
            continue
        covered.append(path)
        if events:
            ev = ctx.events.filter((pl.col("path") == path) & pl.col("event").is_in(list(events)))
            if timed:
                ev = ev.filter(pl.col("ts").is_between(t0, t1))
            found += [(str(f), int(n)) for f, n in ev.select(pl.col("file").cast(pl.String), "line").head(20).iter_rows()]
            if not found and not candidates_only:
                near += ctx.near_misses(path, events, (t0, t1) if timed else None)
    return Absence(
        subject=subject, what=what, window=window, covered_by=tuple(covered), missing_reasons=tuple(why) if not covered else (),
        settle_with=settle_with, near_misses=tuple(near[:5]), found=tuple(found),
    )


@dataclass
class DetectorFailure:
    """A detector that raised on these inputs: the others' findings stand (analysis notes it)."""

    detector: str
    error: str
    where: list[str] = field(default_factory=list)
