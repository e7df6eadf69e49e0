"""Words that keep their times: a finding's prose is a :class:`Text`, a sequence of literal strings
and typed values (a moment, a time of day, a span of times of day) that becomes a string only when a
renderer asks for it, in the zone it shows (``Text.render(clock)``). Detectors never format a time
into a sentence; JSON renders in UTC, people's outputs in the display zone, with no rewriting of
finished prose afterwards.

A ``Text`` adds to strings and to other Texts (``"at " + Time(t)``, ``a + b``), joins
(``Text.join(", ", parts)``) and compares by its parts. ``str(text)`` is the UTC rendering.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Iterable, Protocol, Union, overload

_UTC = dt.timezone.utc


class Clock(Protocol):
    """How a renderer shows times: the display zone's formats (render/clock.py gives one)."""

    def when(self, t: dt.datetime, ms: bool = False) -> str: ...  # '2020-06-02 01:05:12 CEST'

    def time_of_day(self, t: dt.datetime, digits: int = 0) -> tuple[str, str]: ...  # ('01:05:12', 'CEST')


class UTCClock:
    """The UTC clock (JSON, and the default rendering)."""

    def when(self, t: dt.datetime, ms: bool = False) -> str:
        x = t.astimezone(_UTC)
        s = x.strftime("%Y-%m-%d %H:%M:%S")
        if ms:
            s += f".{x.microsecond // 1000:03d}"
        return s + " UTC"

    def time_of_day(self, t: dt.datetime, digits: int = 0) -> tuple[str, str]:
        x = t.astimezone(_UTC)
        s = x.strftime("%H:%M:%S")
        if digits:
            s += "." + f"{x.microsecond:06d}"[:digits]
        return s, "UTC"


UTC = UTCClock()


@dataclass(frozen=True)
class Time:
    """A moment, shown with its date and zone: '2020-06-01 23:10:40 UTC' (``missing`` when None)."""

    t: dt.datetime | None
    ms: bool = False
    missing: str = "an unknown time"

    def render(self, clock: Clock) -> str:
        return self.missing if self.t is None else clock.when(self.t, self.ms)


@dataclass(frozen=True)
class TimeOfDay:
    """A time of day with its zone: '23:10:40 UTC' (a day's times, next to a date said elsewhere)."""

    t: dt.datetime
    digits: int = 0  # fraction digits shown

    def render(self, clock: Clock) -> str:
        s, zone = clock.time_of_day(self.t, self.digits)
        return f"{s} {zone}"


@dataclass(frozen=True)
class TimesOfDay:
    """Two times of day and one zone: '23:10:40 → 23:12:02 UTC' (each end names its zone when they
    differ, across a change to or from summer time)."""

    a: dt.datetime
    b: dt.datetime
    sep: str = " → "
    digits: int = 0

    def render(self, clock: Clock) -> str:
        (sa, za), (sb, zb) = clock.time_of_day(self.a, self.digits), clock.time_of_day(self.b, self.digits)
        return f"{sa}{self.sep}{sb} {zb}" if za == zb else f"{sa} {za}{self.sep}{sb} {zb}"


Part = Union[str, Time, TimeOfDay, TimesOfDay]


class Text:
    """Prose with typed times in it (see the module's doc)."""

    __slots__ = ("parts",)

    def __init__(self, *parts: "Part | Text | None") -> None:
        out: list[Part] = []
        for p in parts:
            if p is None:
                continue
            if isinstance(p, Text):
                out.extend(p.parts)
            elif isinstance(p, str):
                if not p:
                    continue
                if out and isinstance(out[-1], str):
                    out[-1] = out[-1] + p
                else:
                    out.append(p)
            else:
                out.append(p)
        # adjacent strings merged (also across a Text's own parts)
        merged: list[Part] = []
        for p in out:
            if merged and isinstance(p, str) and isinstance(merged[-1], str):
                merged[-1] = merged[-1] + p
            else:
                merged.append(p)
        self.parts: tuple[Part, ...] = tuple(merged)

    def render(self, clock: Clock = UTC) -> str:
        return "".join(p if isinstance(p, str) else p.render(clock) for p in self.parts)

    def __str__(self) -> str:
        return self.render(UTC)

    def __repr__(self) -> str:
        return f"Text({self.render(UTC)!r})"

    def __add__(self, other: "str | Text | Part") -> "Text":
        return Text(self, other)

    def __radd__(self, other: "str | Text | Part") -> "Text":
        return Text(other, self)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Text):
            return self.parts == other.parts
        if isinstance(other, str):
            return self.render(UTC) == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.parts)

    def __bool__(self) -> bool:
        return bool(self.parts)

    def __len__(self) -> int:
        return len(self.render(UTC))

    @property
    def plain(self) -> bool:
        """True when no time is in it (it renders the same in every zone)."""
        return all(isinstance(p, str) for p in self.parts)

    def capitalized(self) -> "Text":
        """The first letter upper-cased (a fragment that starts a sentence)."""
        if self.parts and isinstance(self.parts[0], str) and self.parts[0]:
            head = self.parts[0]
            return Text(head[0].upper() + head[1:], *self.parts[1:])
        return self

    @staticmethod
    def join(sep: str, items: Iterable["str | Text | Part"]) -> "Text":
        out: list = []
        for i, x in enumerate(items):
            if i:
                out.append(sep)
            out.append(x)
        return Text(*out)


Prose = Union[str, Text]


@overload
def render(x: "Prose", clock: Clock = ...) -> str: ...
@overload
def render(x: None, clock: Clock = ...) -> None: ...
@overload
def render(x: "Prose | None", clock: Clock = ...) -> str | None: ...
def render(x: "Prose | None", clock: Clock = UTC) -> str | None:
    """A str as it is, a Text in ``clock``'s zone (None stays None: prose gives a str, typed so)."""
    if x is None or isinstance(x, str):
        return x
    return x.render(clock)


def at(t: dt.datetime | None) -> Time:
    """'2020-06-01 23:10:40 UTC' as a part of a Text ('an unknown time' for None)."""
    return Time(t)
