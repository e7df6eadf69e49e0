"""Timestamps: stamp text -> UTC, vectorised.

Stamps with an offset are exact. Zone-less stamps are read in the layout's zone or the user's
``--tz`` (default: this machine's zone). Time-only stamps (Pulsar 2.x brokers) get their date from
``--date``, else a date in the file name, else the file's modification time, which dates the *last*
line, else (stdin) today, moved back a day when the last line would otherwise be later than now;
they roll over to the next day when the clock goes backwards by more than ``ROLLOVER_BACKWARDS``. Because that date is only known at the end of a file, chunks carry a
provisional naive time (``_ts_naive``) that :meth:`FileClock.finalize` turns into ``ts`` (UTC).
"""

from __future__ import annotations

import datetime as dt
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import polars as pl

from logsleuth.errors import LogsleuthError

ROLLOVER_BACKWARDS = 3 * 3600  # seconds: a jump back larger than this in a time-only log is midnight
MIDNIGHT_SLACK = 600  # seconds: a line just before midnight right after one just after it was logged out of order
PROVISIONAL = dt.date(2000, 1, 1)
# stamps outside these years are not times a log was written at (year 0, Go's zero time 0001-01-01,
# a garbled 10449): such a record is read without a time, and the input says how many there were
YEAR_MIN, YEAR_MAX = 1970, 2100
TS_MIN = dt.datetime(YEAR_MIN, 1, 1, tzinfo=dt.timezone.utc)
TS_MAX = dt.datetime(YEAR_MAX + 1, 1, 1, tzinfo=dt.timezone.utc)
_FILENAME_DATE = re.compile(r"(?<!\d)(20\d{2}|19\d{2})[-_.]?(0[1-9]|1[0-2])[-_.]?(0[1-9]|[12]\d|3[01])(?!\d)")
# log4j2's %d{MM-dd-yyyy}, Pulsar's archive names (conf/log4j2.yaml: ${pulsar.log.file}-%d{MM-dd-yyyy}-%i.log.gz)
_FILENAME_US_DATE = re.compile(r"(?<!\d)(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])-(20\d{2}|19\d{2})(?!\d)")


@dataclass(frozen=True)
class TimeSpec:
    """How to turn the text of a ``ts`` group into a datetime.

    ``fmt`` is a chrono/Polars format applied after the ``normalize`` replacements. ``has_date``
    false means a time-only stamp (the date comes from --date, the file name or its mtime);
    ``has_year`` false means the year must be supplied (glog). ``has_zone`` says the text carries
    its own offset; otherwise ``zone`` (fixed in the layout) or the user's --tz applies.
    ``epoch`` is "s" or "ms" for numeric epoch stamps.
    """

    fmt: str = ""
    has_date: bool = True
    has_year: bool = True
    has_zone: bool = False
    zone: str | None = None
    epoch: str | None = None
    normalize: tuple[tuple[str, str], ...] = field(default_factory=tuple)
    supported: bool = True



def local_zone() -> str:
    """This machine's IANA zone name (``TZ``, then /etc/localtime), else UTC."""
    tz = os.environ.get("TZ", "").lstrip(":")
    name = _usable_zone(tz) if tz else None
    if name:
        return name
    try:
        name = _usable_zone(os.path.realpath("/etc/localtime"))
        if name:
            return name
    except OSError:
        pass
    try:
        name = _usable_zone(Path("/etc/timezone").read_text().strip())
        if name:
            return name
    except OSError:
        pass
    return "UTC"


def _usable_zone(name: str) -> str | None:
    """A zone name Polars accepts for ``name`` as TZ or /etc/localtime spell it: a path under
    zoneinfo/, or the posix/ and right/ variants of the tz database, mean the plain name."""
    if "zoneinfo/" in name:
        name = name.split("zoneinfo/", 1)[1]
    for cand in (name, name.split("/", 1)[1] if name.startswith(("posix/", "right/")) else None):
        if cand and _valid_zone(cand):
            return cand
    return None


@lru_cache(maxsize=64)
def _valid_zone(name: str) -> bool:
    """Known to Python's zoneinfo *and* to Polars (which has its own copy of the tz database and
    rejects some names zoneinfo reads from disk: localtime, posixrules, Factory, posix/..., right/...)."""
    try:
        import zoneinfo

        zoneinfo.ZoneInfo(name)
        pl.select(pl.lit(None, dtype=pl.Datetime("us")).dt.replace_time_zone(name))
        return True
    except Exception:
        return False


_FIXED_OFFSET = re.compile(r"^\s*(?:UTC|GMT)?\s*([+-])(\d{1,2})(?::?00)?\s*$", re.IGNORECASE)


def zone_label(zone: str) -> str:
    """How a zone is named to people: 'Etc/GMT-2' (a whole-hour offset) as '+02:00', 'Etc/UTC' as 'UTC'."""
    if zone in ("UTC", "Etc/UTC", "Z"):
        return "UTC"
    m = re.fullmatch(r"Etc/GMT([+-])(\d{1,2})", zone)
    if m:  # the Etc zones' sign is the other way round (POSIX)
        return f"{'-' if m.group(1) == '+' else '+'}{int(m.group(2)):02d}:00"
    return zone


def check_zone(name: str) -> str:
    """A zone name as given, or its canonical spelling ('utc' -> 'UTC', 'asia/shanghai' -> 'Asia/Shanghai');
    a whole-hour offset ('+02:00', 'UTC+2') as its fixed zone ('Etc/GMT-2')."""
    m = _FIXED_OFFSET.match(name)
    if m and int(m.group(2)) <= 14:
        hours = int(m.group(2))
        return "UTC" if hours == 0 else f"Etc/GMT{'-' if m.group(1) == '+' else '+'}{hours}"
    if _valid_zone(name):
        return name
    import zoneinfo

    folded = {z.lower(): z for z in zoneinfo.available_timezones()}
    canon = folded.get(name.strip().lower())
    if canon and _valid_zone(canon):
        return canon
    raise LogsleuthError(f"unknown time zone {name!r} (use an IANA name such as Asia/Shanghai or UTC)")


def date_from_filename(name: str) -> dt.date | None:
    """The last date in a file's name: YYYY-MM-DD (or YYYYMMDD, with _ or . between), else MM-DD-YYYY."""
    base = Path(name).name
    m = None
    for m in _FILENAME_DATE.finditer(base):
        pass
    ymd = (1, 2, 3)
    if not m:
        for m in _FILENAME_US_DATE.finditer(base):
            pass
        ymd = (3, 1, 2)
    if not m:
        return None
    try:
        return dt.date(int(m.group(ymd[0])), int(m.group(ymd[1])), int(m.group(ymd[2])))
    except ValueError:
        return None


def stamp_expr(ts_text: pl.Expr, spec: TimeSpec, year: int | None) -> tuple[pl.Expr, pl.Expr, pl.Expr]:
    """(aware UTC datetime, naive datetime, time-of-day) expressions for a ts text column.

    Exactly one of them is meaningful for a given spec; the others are null literals.
    """
    import warnings

    with warnings.catch_warnings():  # Polars warns (on stderr) about a bare %f from "SS"-style fractions
        warnings.simplefilter("ignore", getattr(pl.exceptions, "ChronoFormatWarning", Warning))
        return _stamp_expr(ts_text, spec, year)


_T_RULE = (r"^(\d{4}-\d{2}-\d{2})T", "${1} ")
_COMMA_RULE = (r"(\d{2}),(\d+)", "${1}.${2}")
_ISO_FORMATS = {"%Y-%m-%d %H:%M:%S%.f": (True, False, False), "%Y-%m-%d %H:%M:%S%.f%#z": (True, False, True),
                "%Y-%m-%dT%H:%M:%S%.f%#z": (False, True, True)}  # fmt -> (space, T, zone)


def iso_stamps(ts_text: pl.Series, spec: TimeSpec) -> pl.Series | None:
    """``stamp_expr``'s meaningful column (aware UTC when the spec has a zone, else naive) read by the
    compiled core (rust/src/stamps.rs), when the spec is one of the ISO formats it knows and every
    stamp has the canonical shape whose reading is not in doubt; None otherwise (``stamp_expr`` then)."""
    shape = _ISO_FORMATS.get(spec.fmt)
    rules = set(spec.normalize)
    if shape is None or not spec.supported or spec.epoch or not spec.has_date or not spec.has_year or not rules <= {_T_RULE, _COMMA_RULE}:
        return None
    if ts_text.dtype != pl.String:
        return None
    from logsleuth.ingest.compiled import module

    mod = module()
    if mod is None:
        return None
    space, t_sep, zone = shape
    if zone != spec.has_zone:
        return None
    got = mod.iso_stamps(ts_text.__arrow_c_stream__(), space, t_sep or _T_RULE in rules, _COMMA_RULE in rules, zone)
    if got is None:
        return None
    us, valid = pl.Series(got[0]), pl.Series(got[1])
    dtype = pl.Datetime("us", "UTC") if zone else pl.Datetime("us")
    return pl.select(pl.when(valid).then(us).cast(dtype)).to_series()


def _stamp_expr(ts_text: pl.Expr, spec: TimeSpec, year: int | None) -> tuple[pl.Expr, pl.Expr, pl.Expr]:
    null_aware = pl.lit(None, dtype=pl.Datetime("us", "UTC"))
    null_naive = pl.lit(None, dtype=pl.Datetime("us"))
    null_time = pl.lit(None, dtype=pl.Time)
    if not spec.supported:
        return null_aware, null_naive, null_time
    text = ts_text
    for pat, rep in spec.normalize:
        text = text.str.replace(pat, rep)
    if spec.epoch:
        n = text.cast(pl.Int64, strict=False)
        unit = "ms" if spec.epoch == "ms" else "s"
        return pl.from_epoch(n, time_unit=unit).cast(pl.Datetime("us")).dt.replace_time_zone("UTC"), null_naive, null_time
    if not spec.has_date:
        return null_aware, null_naive, text.str.to_time(spec.fmt, strict=False)
    fmt = spec.fmt
    if not spec.has_year:
        text = pl.concat_str([pl.lit(f"{year or PROVISIONAL.year} "), text])
        fmt = "%Y " + fmt
    if spec.has_zone:
        aware = text.str.to_datetime(fmt, strict=False, time_unit="us")
        return aware.dt.convert_time_zone("UTC"), null_naive, null_time
    return null_aware, text.str.to_datetime(fmt, strict=False, time_unit="us"), null_time


@dataclass
class FileClock:
    """Per-file time state: rollover carry for time-only stamps and the date/zone decisions."""

    name: str
    zone: str
    spec: TimeSpec | None
    date_given: dt.date | None = None
    mtime: float | None = None
    day: int = 0
    last_tod: float | None = None
    last_naive: dt.datetime | None = None
    date_source: str = ""
    zone_source: str = ""
    rollovers: int = 0
    out_of_range: int = 0  # records whose stamp is outside YEAR_MIN..YEAR_MAX (read without a time)
    out_of_range_example: str | None = None
    _shift_days: int | None = field(default=None, repr=False)
    first_tod: float | None = None  # seconds into the day of the first time-only stamp (a byte range's, for the one before)
    # a rotated segment's: when the segment before it in its set ends (UTC), and that segment's name;
    # its time-only stamps then continue from there (ingest/reader.iter_read reads a set oldest first)
    follows: dt.datetime | None = None
    follows_name: str | None = None

    @property
    def time_only(self) -> bool:
        return self.spec is not None and self.spec.supported and not self.spec.has_date and not self.spec.epoch

    @property
    def zoned(self) -> bool:
        return self.spec is not None and (self.spec.has_zone or bool(self.spec.epoch))

    @property
    def effective_zone(self) -> str:
        if self.spec is not None and self.spec.zone:
            return self.spec.zone
        return self.zone

    def year_hint(self) -> int | None:
        d = self.date_given or date_from_filename(self.name)
        if d:
            return d.year
        if self.mtime:
            return dt.datetime.fromtimestamp(self.mtime).year
        return dt.date.today().year

    def naive_from_tod(self, frame: pl.DataFrame) -> pl.DataFrame:
        """Give time-only stamps a provisional date, counting midnight rollovers (vectorised)."""
        if not self.time_only or frame.height == 0:
            return frame
        secs = (pl.col("_tod").cast(pl.Int64) / 1e9).alias("_s")
        f = frame.with_columns(secs)
        prev = pl.col("_s").forward_fill().shift(1)
        if self.last_tod is not None:
            prev = prev.fill_null(self.last_tod)
        back = ((prev - pl.col("_s")) > ROLLOVER_BACKWARDS).fill_null(False).cast(pl.Int64)
        # threads log a few ms out of order: 23:59:59.990, 00:00:00.001, 23:59:59.999 is one rollover,
        # the third line belongs to the day before
        ahead = ((prev < MIDNIGHT_SLACK) & (pl.col("_s") > 86400 - MIDNIGHT_SLACK)).fill_null(False).cast(pl.Int64)
        f = f.with_columns(_day=((back - ahead).cum_sum() + self.day).cast(pl.Int64))
        f = f.with_columns(
            _ts_naive=pl.when(pl.col("_tod").is_not_null()).then(
                pl.lit(dt.datetime.combine(PROVISIONAL, dt.time())).cast(pl.Datetime("us"))
                + pl.duration(days=pl.col("_day"))
                + (pl.col("_tod").cast(pl.Int64) // 1000).cast(pl.Duration("us"))
            )
        )
        first, *last = f.select(pl.col("_s").drop_nulls().first().alias("_first"), pl.col("_s").drop_nulls().last(), pl.col("_day").last()).row(0)
        if self.first_tod is None:
            self.first_tod = first
        if last[0] is not None:
            self.last_tod = float(last[0])
        if last[1] is not None:
            self.rollovers += max(0, int(last[1]) - self.day)
            self.day = int(last[1])
        return f.drop("_s", "_day")

    def observe_naive(self, frame: pl.DataFrame) -> None:
        if "_ts_naive" in frame.columns and frame.height:
            v = frame.select(pl.col("_ts_naive").drop_nulls().last()).item()
            if v is not None:
                self.last_naive = v

    def shift_days(self) -> int:
        """Days to add to provisional dates, decided once the whole file has been seen."""
        if self._shift_days is not None:
            return self._shift_days
        if not self.time_only:
            self._shift_days = 0
            return 0
        first = self.date_given or date_from_filename(self.name)
        if first is not None:
            self.date_source = "--date" if self.date_given else "date in the file name"
            base = first
        elif self.follows is not None and self.first_tod is not None:
            # the next segment of a rotated log: its first line comes after the last line of the one
            # before, on that day or the next (its time of day is earlier: it rolled over at midnight)
            import zoneinfo

            prev = self.follows.astimezone(zoneinfo.ZoneInfo(self.effective_zone)).replace(tzinfo=None)
            prev_tod = prev.hour * 3600 + prev.minute * 60 + prev.second + prev.microsecond / 1e6
            base = prev.date() + dt.timedelta(days=0 if self.first_tod >= prev_tod - 1 else 1)
            self.date_source = f"the rotated segment before it ({self.follows_name} ends {prev:%Y-%m-%d %H:%M:%S})"
            by_mtime = self._mtime_base()
            if by_mtime is not None and by_mtime != base:  # a copy without its time, or days without a line: said
                days = (by_mtime - base).days
                self.date_source += (f"; its modification time would date it {abs(days)} day{'s' if abs(days) != 1 else ''} "
                                     f"{'later' if days > 0 else 'earlier'}")
        elif (by_mtime := self._mtime_base()) is not None:
            base = by_mtime
            self.date_source = "file modification time (dates the last line)"
        else:
            base, back = self._today_base()
            self.date_source = "today (no --date, no date in the name, no file time)"
            if back:
                self.date_source = (
                    f"today, moved back {back} day{'s' if back > 1 else ''} (dated by today the last line would be "
                    "later than now; no --date, no date in the name, no file time)"
                )
        self._shift_days = (base - PROVISIONAL).days
        return self._shift_days

    def _mtime_base(self) -> dt.date | None:
        """The first day of a time-only file whose modification time dates its last line."""
        if self.mtime is None or self.last_naive is None:
            return None
        import zoneinfo

        m = dt.datetime.fromtimestamp(self.mtime, zoneinfo.ZoneInfo(self.effective_zone)).replace(tzinfo=None)
        last = dt.datetime.combine(m.date(), self.last_naive.time())
        if last > m + dt.timedelta(minutes=1):
            last -= dt.timedelta(days=1)
        return last.date() - dt.timedelta(days=(self.last_naive.date() - PROVISIONAL).days)

    def _today_base(self) -> tuple[dt.date, int]:
        """The first day of a time-only file that has no date but today (stdin): today in the
        file's zone, moved back as many days as it takes for the last line not to be later than
        now (a log read now was written before now)."""
        import zoneinfo

        now = dt.datetime.now(zoneinfo.ZoneInfo(self.effective_zone)).replace(tzinfo=None)
        base = now.date()
        if self.last_naive is None:
            return base, 0
        span = self.last_naive - dt.datetime.combine(PROVISIONAL, dt.time())
        back = 0
        while dt.datetime.combine(base, dt.time()) + span > now and back <= span.days + 1:
            base -= dt.timedelta(days=1)
            back += 1
        return base, back

    def finalize(self, frame: pl.DataFrame) -> pl.DataFrame:
        """Provisional/naive/aware/envelope times -> ``ts`` (UTC). Call after the file is read."""
        if frame.height == 0 and "ts" in frame.columns:
            return frame
        zone = self.effective_zone
        naive = pl.col("_ts_naive")
        shift = self.shift_days()
        if shift:
            naive = naive + pl.duration(days=shift)
        localized = naive.dt.replace_time_zone(zone, ambiguous="earliest", non_existent="null")
        # a stamp inside the hour skipped in spring: the clock had not jumped yet, which is the same
        # instant as one hour later on the jumped clock
        localized = pl.coalesce(
            localized, (naive + pl.duration(hours=1)).dt.replace_time_zone(zone, ambiguous="earliest", non_existent="null")
        ).dt.convert_time_zone("UTC")
        # a stamp with its own offset first; then the envelope's (docker/CRI/JSON: full date, UTC),
        # which beats a zone-less or time-only inner stamp that depends on --tz / --date guesses
        # An envelope stamp in whole seconds (fluentd out_file's default time_format) takes the
        # fraction of the inner stamp when both name the same second: the text's milliseconds order
        # the lines of one second and keep sub-second durations
        env, inner = pl.col("env_ts"), pl.col("_ts_naive")
        env = pl.when(
            (env.dt.microsecond() == 0) & inner.is_not_null() & (inner.dt.second() == env.dt.second())
        ).then(env + pl.duration(microseconds=inner.dt.microsecond())).otherwise(env)
        ts = pl.coalesce(pl.col("_ts_aware"), env, localized)
        out = frame.with_columns(ts=ts)
        outside = pl.col("ts").is_not_null() & ~pl.col("ts").is_between(pl.lit(TS_MIN), pl.lit(TS_MAX), closed="left")
        n = int(out.select(outside.sum()).item() or 0)
        if n:
            if n > self.out_of_range:  # finalize sees the records, and again the coverage: the most counts
                self.out_of_range = n
                if "ts_text" in out.columns:
                    self.out_of_range_example = out.filter(outside).select(pl.col("ts_text").drop_nulls().first()).item()
            out = out.with_columns(ts=pl.when(~outside).then(pl.col("ts")))
        return out.drop([c for c in ("_ts_aware", "_ts_naive", "_tod") if c in out.columns])

    def range_note(self) -> str | None:
        if not self.out_of_range:
            return None
        from logsleuth.safe import visible

        example = f" (such as {visible(self.out_of_range_example)[:60]!r})" if self.out_of_range_example else ""
        return (
            f"{self.out_of_range:,} record(s) have a date outside {YEAR_MIN}-{YEAR_MAX}{example}: "
            "they were read without a time"
        )

    def describe_zone(self) -> str:
        if self.spec is None or not self.spec.supported:
            return "n/a"
        if self.spec.epoch or self.spec.has_zone:
            return "from the stamps (offset in every line)"
        if self.spec.zone:
            return f"{self.spec.zone} (fixed in the layout)"
        return f"{self.zone} ({self.zone_source or 'assumed'})"


def parse_iso(expr: pl.Expr) -> pl.Expr:
    """RFC 3339 text (with Z or an offset, any fraction) -> UTC datetime."""
    return expr.str.to_datetime("%Y-%m-%dT%H:%M:%S%.f%#z", strict=False, time_unit="us").dt.convert_time_zone("UTC")


def parse_any_time(expr: pl.Expr) -> pl.Expr:
    """A JSON time value: epoch seconds/ms/us/ns (zap) or ISO 8601 text (logrus, fluentd)."""
    num = expr.cast(pl.Float64, strict=False)
    epoch_us = (
        pl.when(num > 1e17).then(num / 1000)
        .when(num > 1e14).then(num)
        .when(num > 1e11).then(num * 1000)
        .otherwise(num * 1_000_000)
    )
    from_epoch = pl.from_epoch(epoch_us.cast(pl.Int64, strict=False), time_unit="us").dt.replace_time_zone("UTC")
    iso = pl.coalesce(
        expr.str.to_datetime("%Y-%m-%dT%H:%M:%S%.f%#z", strict=False, time_unit="us").dt.convert_time_zone("UTC"),
        expr.str.to_datetime("%Y-%m-%d %H:%M:%S%.f%#z", strict=False, time_unit="us").dt.convert_time_zone("UTC"),
        expr.str.to_datetime("%Y-%m-%dT%H:%M:%S%.f", strict=False, time_unit="us").dt.replace_time_zone("UTC"),
    )
    return pl.when(num.is_not_null()).then(from_epoch).otherwise(iso)


def iso_utc(t: dt.datetime | None) -> str | None:
    """ISO 8601 in UTC with a ``Z``: milliseconds, or microseconds when the stamp has them."""
    if t is None:
        return None
    if t.tzinfo is not None:
        t = t.astimezone(dt.timezone.utc)
    if t.microsecond % 1000:
        return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


_RELATIVE = re.compile(
    r"^\s*(?P<sign>[+-])?\s*(?P<n>\d+(?:\.\d+)?)\s*(?P<unit>ms|s|sec|secs|seconds?|m|min|mins|minutes?|h|hr|hrs|hours?|d|days?)\s*(?P<ago>ago)?\s*$",
    re.I,
)
_UNIT_SECONDS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}
_NOW = re.compile(r"^\s*now\s*(?:(?P<sign>[+-])\s*(?P<rest>.+?))?\s*$", re.I)
_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_DAY = re.compile(
    r"^\s*(?P<day>today|yesterday|" + "|".join(f"{d[:3]}(?:{d[3:]})?" for d in _WEEKDAYS) + r")\b\s*(?P<time>.*?)\s*$", re.I
)


def _wall_clock(text: str, zone: str, now: dt.datetime | None) -> dt.datetime | None:
    """``now``, ``now-2h`` (counted from the wall clock, not from the logs), ``today``,
    ``yesterday`` and weekday names (the last such day, today included), each at midnight in
    ``zone`` or at a time given after it ('yesterday 22:00'); None for any other text."""
    import zoneinfo

    m = _NOW.match(text)
    day_m = None if m else _DAY.match(text)
    if m is None and day_m is None:
        return None
    tz = zoneinfo.ZoneInfo(zone)
    now = (now or dt.datetime.now(dt.timezone.utc)).astimezone(tz)
    if m:
        if not m.group("sign"):
            return now.astimezone(dt.timezone.utc)
        rel = _RELATIVE.match(m.group("rest"))
        if rel is None or rel.group("sign") or rel.group("ago"):
            raise LogsleuthError(f"cannot read the time {text!r} (use e.g. 'now-2h', 'now - 30m')")
        unit = rel.group("unit").lower()
        delta = dt.timedelta(seconds=float(rel.group("n")) * _UNIT_SECONDS["ms" if unit == "ms" else unit[0]])
        return (now - delta if m.group("sign") == "-" else now + delta).astimezone(dt.timezone.utc)
    m = day_m
    word = m.group("day").lower()
    if word == "today":
        day = now.date()
    elif word == "yesterday":
        day = now.date() - dt.timedelta(days=1)
    else:
        want = next(i for i, d in enumerate(_WEEKDAYS) if d.startswith(word[:3]))
        day = now.date() - dt.timedelta(days=(now.weekday() - want) % 7)
    at = dt.time(0, 0)
    if m.group("time"):
        from dateutil import parser as dparser

        try:
            t = dparser.parse(m.group("time"), default=dt.datetime(1900, 1, 1))
        except (ValueError, OverflowError):
            raise LogsleuthError(f"cannot read the time {text!r} (use e.g. 'yesterday 22:00', 'monday 09:30')") from None
        if t.date() != dt.date(1900, 1, 1) or t.tzinfo is not None:
            raise LogsleuthError(f"cannot read the time {text!r}: after '{m.group('day')}' give a time of day only")
        at = t.time()
    return dt.datetime.combine(day, at, tzinfo=tz).astimezone(dt.timezone.utc)


def parse_when(text: str, zone: str, first: dt.datetime | None, last: dt.datetime | None, now: dt.datetime | None = None) -> dt.datetime:
    """``--since``/``--until``: an absolute time (dateutil; zone-less means ``zone``), a relative
    phrase: ``-2h`` / ``2h ago`` counts back from the *last* timestamp in the inputs, ``+10m`` counts
    forward from the first; or the wall clock: ``now``, ``now-2h``, ``today``, ``yesterday``,
    ``monday`` (see :func:`_wall_clock`)."""
    import zoneinfo

    from dateutil import parser as dparser

    if not _RELATIVE.match(text):
        try:
            wall = _wall_clock(text, zone, now)
        except (ValueError, OverflowError):
            raise LogsleuthError(f"{text!r}: out of range (the result is not a date)") from None
        if wall is not None:
            return wall
    m = _RELATIVE.match(text)
    if m:
        unit = m.group("unit").lower()
        key = "ms" if unit == "ms" else unit[0]
        forward = m.group("sign") == "+" and not m.group("ago")
        base = first if forward else last
        if base is None:
            where = "to count from" if forward else "to count back from"
            raise LogsleuthError(f"{text!r}: the inputs have no timestamps {where}")
        try:
            delta = dt.timedelta(seconds=float(m.group("n")) * _UNIT_SECONDS[key])
            return base + delta if forward else base - delta
        except OverflowError:
            raise LogsleuthError(f"{text!r}: out of range (the result is not a date)") from None
    try:
        t = dparser.parse(text, default=dt.datetime(1900, 1, 1))
        dateless = t.date() != dparser.parse(text, default=dt.datetime(1901, 2, 2)).date()
    except (ValueError, OverflowError):
        raise LogsleuthError(
            f"cannot read the time {text!r} (use e.g. '2020-06-02 10:00', '2020-06-02T10:00:00Z', '-2h', '30m ago')"
        ) from None
    if t.tzinfo is None:
        t = t.replace(tzinfo=zoneinfo.ZoneInfo(zone))
    if dateless:  # a time of day alone ('10:15'): on the logs' first day, not today
        if first is None:
            raise LogsleuthError(f"{text!r} has no date and the inputs have no timestamps to take one from: give a date")
        day = first.astimezone(t.tzinfo).date()
        t = t.replace(year=day.year, month=day.month, day=day.day)
        if last is not None and t < first and t + dt.timedelta(days=1) <= last:
            t += dt.timedelta(days=1)  # the logs start after that time of day on their first day
    try:
        return t.astimezone(dt.timezone.utc)
    except (ValueError, OverflowError):  # year 1 east of UTC, year 9999 west of it
        raise LogsleuthError(f"{text!r}: out of range (the time in UTC is not a date)") from None

