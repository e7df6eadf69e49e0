"""The display zone: every time a person reads (terminal and text reports, postmortems, the chart,
the ``events``/``timeline``/``inspect``/``templates`` views) is shown in one zone and one format,
``2020-06-02 01:05:12 CEST`` (ISO-like, the zone named by its abbreviation; with milliseconds where a
line's own time is shown). The zone is ``--display-tz`` (default UTC); JSON, NDJSON, CSV and Parquet
stay in UTC whatever it is, and nothing here changes what the detectors conclude: they reason in
UTC, and their prose keeps its times typed (``detectors.words.Text``) until it is shown here.

The zone is set once per run by the command line (:func:`set_zone`), in the run's view (render/view.py)."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace

from logsleuth.render.view import current

_UTC = dt.timezone.utc


def set_zone(name: str | None) -> str:
    """``UTC`` (the default), ``local`` (this machine's zone) or an IANA name; returns the zone's
    name. A bad name is a LogsleuthError (one line, exit 2)."""
    v = current()
    if not name or name.strip().upper() in ("UTC", "Z"):
        v.zone, v.zone_name = _UTC, "UTC"
        return v.zone_name
    import zoneinfo

    from logsleuth.ingest.timeparse import check_zone, local_zone

    zone = local_zone() if name.strip().lower() == "local" else check_zone(name.strip())
    v.zone, v.zone_name = (_UTC, "UTC") if zone in ("UTC", "Etc/UTC") else (zoneinfo.ZoneInfo(zone), zone)
    return v.zone_name


def zone_name() -> str:
    """The display zone's IANA name (``UTC`` by default)."""
    return current().zone_name


def is_utc() -> bool:
    return current().zone is _UTC


def local(t: dt.datetime) -> dt.datetime:
    if t.tzinfo is None:
        t = t.replace(tzinfo=_UTC)
    return t.astimezone(current().zone)


def abbr(t: dt.datetime | None = None) -> str:
    """The zone's name at ``t`` (CET or CEST), ``UTC`` in UTC."""
    if is_utc():
        return "UTC"
    return local(t or dt.datetime.now(_UTC)).tzname() or current().zone_name


def when(t: dt.datetime | None, seconds: bool = True, ms: bool = False, zone: bool = True, missing: str = "n/a") -> str:
    """'2020-06-02 01:05:12 CEST' (``ms``: '…:12.345 CEST'; ``zone=False``: under a header that names it)."""
    if t is None:
        return missing
    x = local(t)
    s = x.strftime("%Y-%m-%d %H:%M:%S" if seconds or ms else "%Y-%m-%d %H:%M")
    if ms:
        s += f".{x.microsecond // 1000:03d}"
    return f"{s} {abbr(t)}" if zone else s


def clock(t: dt.datetime | None, seconds: bool = True) -> str:
    """'01:05:12' in the display zone (a day's times under a header or span that names the zone)."""
    if t is None:
        return ""
    return local(t).strftime("%H:%M:%S" if seconds else "%H:%M")


def iso(t: dt.datetime | None) -> str | None:
    """ISO 8601 in the display zone, milliseconds (or microseconds when the time has them): '…Z' in
    UTC, '…+02:00' elsewhere (the piped ``timeline`` lines: they still sort within one zone)."""
    if t is None:
        return None
    x = local(t)
    frac = f"{x.microsecond:06d}" if x.microsecond % 1000 else f"{x.microsecond // 1000:03d}"
    base = x.strftime("%Y-%m-%dT%H:%M:%S.") + frac
    return base + "Z" if is_utc() else base + x.strftime("%z")[:3] + ":" + x.strftime("%z")[3:]


def iso_expr(col: str, zone: str | None = None):
    """:func:`iso` as a Polars expression, in ``zone`` (default: the display zone): milliseconds, or
    microseconds when the time has them; 'Z' in UTC, '+02:00' elsewhere. With ``zone="UTC"`` it is
    ``timeparse.iso_utc``, what the JSON, NDJSON and CSV outputs write."""
    import polars as pl

    zone = zone or ("UTC" if is_utc() else current().zone_name)
    ts = pl.col(col).dt.convert_time_zone(zone)
    end = "Z" if zone == "UTC" else "%:z"
    return (
        pl.when((ts.dt.microsecond() % 1000) == 0)
        .then(ts.dt.strftime("%Y-%m-%dT%H:%M:%S%.3f" + end))
        .otherwise(ts.dt.strftime("%Y-%m-%dT%H:%M:%S%.6f" + end))
    )


def span(first: dt.datetime | None, last: dt.datetime | None, seconds: bool = True, duration: bool = True,
         estimated: bool = False) -> str:
    """'2020-06-01 22:00:00 → 2020-06-02 01:29:59 UTC (3.5 h)': the second date is left out on the
    same day; each end names its zone when they differ (a change to or from summer time).
    ``estimated``: the start is an estimate, not a line's stamp ('(3.5 h, start estimated)')."""
    if first is None:
        return "no timestamps"
    if last is None or last == first:
        return when(first, seconds) + (" (estimated)" if estimated else "")
    from logsleuth.detectors.base import fmt_duration

    a, b = local(first), local(last)
    left = when(first, seconds, zone=False)
    right = when(last, seconds, zone=False)
    if a.date() == b.date():
        right = right.split(" ", 1)[1]
    za, zb = abbr(first), abbr(last)
    text = f"{left} → {right} {zb}" if za == zb else f"{left} {za} → {right} {zb}"
    note = ", start estimated" if estimated else ""
    return f"{text} ({fmt_duration((last - first).total_seconds())}{note})" if duration else text + (f" ({note[2:]})" if note else "")


class ZoneClock:
    """The display zone as the findings' words need it (detectors.words.Clock): a finding's prose
    keeps its times as times until a renderer shows them with this."""

    def __init__(self, zone: dt.tzinfo, name: str) -> None:
        self.zone, self.name = zone, name

    def _local(self, t: dt.datetime) -> dt.datetime:
        return (t if t.tzinfo else t.replace(tzinfo=_UTC)).astimezone(self.zone)

    def _abbr(self, x: dt.datetime) -> str:
        return "UTC" if self.zone is _UTC else (x.tzname() or self.name)

    def when(self, t: dt.datetime, ms: bool = False) -> str:
        x = self._local(t)
        s = x.strftime("%Y-%m-%d %H:%M:%S")
        if ms:
            s += f".{x.microsecond // 1000:03d}"
        return f"{s} {self._abbr(x)}"

    def time_of_day(self, t: dt.datetime, digits: int = 0) -> tuple[str, str]:
        x = self._local(t)
        s = x.strftime("%H:%M:%S")
        if digits:
            s += "." + f"{x.microsecond:06d}"[:digits]
        return s, self._abbr(x)


def display_clock() -> ZoneClock:
    """The clock of the display zone set for this run (``set_zone``)."""
    v = current()
    return ZoneClock(v.zone, v.zone_name)


# ----------------------------------------------------------------------------- findings


def localised_findings(findings: list) -> list:
    """Copies of the findings with their prose in the display zone: every finding's words keep
    their times typed (detectors.words.Text) until this renders them with the display clock; no
    finished prose is rewritten. Times as data stay as they are."""
    zc = display_clock()
    return [f.worded(zc) for f in findings]


def localised(analysis):
    """The analysis as people read it: its findings' prose in the display zone (see above)."""
    return replace(analysis, findings=localised_findings(analysis.findings))
