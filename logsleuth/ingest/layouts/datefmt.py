"""Java date patterns (``%d{...}`` in log4j/logback) -> a regex and a timestamp spec Polars can parse."""

from __future__ import annotations

import re

from logsleuth.ingest.timeparse import TimeSpec, _valid_zone, stamp_expr

# log4j2's named formats (logback knows ISO8601 and a few of these too)
NAMED_FORMATS = {
    "ABSOLUTE": "HH:mm:ss,SSS",
    "ABSOLUTE_MICROS": "HH:mm:ss,SSSSSS",
    "ABSOLUTE_NANOS": "HH:mm:ss,SSSSSSSSS",
    "ABSOLUTE_PERIOD": "HH:mm:ss.SSS",
    "COMPACT": "yyyyMMddHHmmssSSS",
    "DATE": "dd MMM yyyy HH:mm:ss,SSS",
    "DATE_PERIOD": "dd MMM yyyy HH:mm:ss.SSS",
    "DEFAULT": "yyyy-MM-dd HH:mm:ss,SSS",
    "DEFAULT_MICROS": "yyyy-MM-dd HH:mm:ss,SSSSSS",
    "DEFAULT_NANOS": "yyyy-MM-dd HH:mm:ss,SSSSSSSSS",
    "DEFAULT_PERIOD": "yyyy-MM-dd HH:mm:ss.SSS",
    # log4j2 prints a 'T', log4j 1 and logback a space: accept both (see ISO_SEP below)
    "ISO8601": "yyyy-MM-dd'T'HH:mm:ss,SSS",
    "ISO8601_BASIC": "yyyyMMdd'T'HHmmss,SSS",
    "ISO8601_BASIC_PERIOD": "yyyyMMdd'T'HHmmss.SSS",
    "ISO8601_PERIOD": "yyyy-MM-dd'T'HH:mm:ss.SSS",
    "ISO8601_PERIOD_MICROS": "yyyy-MM-dd'T'HH:mm:ss.SSSSSS",
    "ISO8601_OFFSET_DATE_TIME_HH": "yyyy-MM-dd'T'HH:mm:ss,SSSX",
    "ISO8601_OFFSET_DATE_TIME_HHMM": "yyyy-MM-dd'T'HH:mm:ss,SSSXX",
    "ISO8601_OFFSET_DATE_TIME_HHCMM": "yyyy-MM-dd'T'HH:mm:ss,SSSXXX",
    "US_MONTH_DAY_YEAR2_TIME": "dd/MM/yy HH:mm:ss.SSS",
    "US_MONTH_DAY_YEAR4_TIME": "dd/MM/yyyy HH:mm:ss.SSS",
}
DEFAULT_FORMAT = "yyyy-MM-dd HH:mm:ss,SSS"


_TOKEN = re.compile(r"'(?:[^']|'')*'|([A-Za-z])\1*|.", re.S)


def _zone_name(z: str) -> str:
    """log4j/logback time-zone option -> a name Polars accepts."""
    z = z.strip()
    m = re.fullmatch(r"(?:GMT|UTC)?([+-])(\d{1,2})(?::?(\d{2}))?", z)
    if m and (m.group(3) in (None, "00")):
        sign = "-" if m.group(1) == "+" else "+"  # Etc/GMT signs are inverted
        hours = int(m.group(2))
        return "UTC" if hours == 0 else f"Etc/GMT{sign}{hours}"
    if z in ("GMT", "Z", "UTC"):
        return "UTC"
    return z


def compile_date(pattern: str | None, zone: str | None = None) -> tuple[str, TimeSpec]:
    """A Java date pattern (or a log4j2 named format) -> (regex, TimeSpec).

    Raises :class:`~logsleuth.errors.PatternError` only (for a zone Polars cannot use)."""
    if pattern is None or pattern.strip() == "":
        pattern = DEFAULT_FORMAT
    pattern = pattern.strip()
    zone_name = _zone_name(zone) if zone else None
    if zone_name is not None:
        from logsleuth.errors import PatternError

        if not _valid_zone(zone_name):
            raise PatternError(
                f"unknown or unsupported time zone {zone.strip()!r} in the date option "
                "(use an IANA name such as Asia/Kolkata, or GMT+N for whole hours)"
            )
    if pattern in ("UNIX", "UNIX_MILLIS"):
        return (r"\d{10}" if pattern == "UNIX" else r"\d{13}"), TimeSpec(
            epoch="s" if pattern == "UNIX" else "ms", has_zone=True
        )
    iso_sep = pattern in ("ISO8601",) or pattern.startswith("ISO8601_") and "BASIC" not in pattern
    pattern = NAMED_FORMATS.get(pattern, pattern)

    regex: list[str] = []
    fmt: list[str] = []
    normalize: list[tuple[str, str]] = []
    has_date = has_year = has_zone = False
    has_time = False
    supported = True
    prev_letter = ""
    prev_literal = ""
    for m in _TOKEN.finditer(pattern):
        tok = m.group(0)
        if tok.startswith("'"):
            lit = tok[1:-1].replace("''", "'") if len(tok) > 1 else "'"
            if tok == "''":
                lit = "'"
            if iso_sep and lit == "T":
                regex.append("[T ]")
                fmt.append(" ")
                normalize.append((r"^(\d{4}-\d{2}-\d{2})T", "${1} "))
            else:
                regex.append(re.escape(lit))
                fmt.append(lit.replace("%", "%%"))
            prev_literal, prev_letter = lit, ""
            continue
        letter = tok[0]
        n = len(tok)
        if not letter.isalpha():
            regex.append(re.escape(tok))
            fmt.append(tok.replace("%", "%%"))
            prev_literal, prev_letter = tok, ""
            continue
        r, f = _letter(letter, n)
        if r is None:
            supported = False
            r, f = r"\S+?", ""
        if letter in "yu":
            has_date = has_year = True
        elif letter in "MdDEe":
            has_date = True
        elif letter in "HhKkms":
            has_time = True
        elif letter in "XxZ":
            has_zone = True
        elif letter == "z" or letter == "V":
            # zone names ("CST") cannot be parsed reliably: match them, ignore them
            normalize.append((r"\s*[A-Za-z][A-Za-z0-9/_+-]*$", ""))
        if letter == "S" and prev_literal in (",", ".") and fmt and fmt[-1] in (",", "."):
            # "ss,SSS" / "ss.SSS": parse any number of fraction digits after a '.'
            fmt[-1] = ""
            f = "%.f"
            if prev_literal == ",":
                normalize.append((r"(\d{2}),(\d+)", "${1}.${2}"))
        regex.append(r)
        fmt.append(f)
        prev_letter, prev_literal = letter, ""
    del prev_letter
    if any(pat.startswith(r"\s*[A-Za-z]") for pat, _ in normalize):
        fmt = ["".join(fmt).rstrip()]
    if not has_time:
        supported = False
    spec = TimeSpec(
        fmt="".join(fmt),
        has_date=has_date,
        has_year=has_year or not has_date,
        has_zone=has_zone,
        zone=zone_name,
        normalize=tuple(normalize),
        supported=supported,
    )
    if supported and not _polars_accepts(spec):
        # a format Polars refuses (e.g. an hour without minutes): the stamp is matched, not parsed
        spec = TimeSpec(spec.fmt, spec.has_date, spec.has_year, spec.has_zone, spec.zone, spec.epoch, spec.normalize, False)
    return "".join(regex), spec


def _polars_accepts(spec: TimeSpec) -> bool:
    """Does the parse that :func:`logsleuth.timeparse.stamp_expr` builds for ``spec`` run?"""
    import polars as pl


    exprs = stamp_expr(pl.lit("2000-01-01 00:00:00", dtype=pl.String), spec, 2000)
    try:
        pl.select(*(e.alias(str(i)) for i, e in enumerate(exprs)))
    except Exception:  # polars raises ComputeError / InvalidOperationError for a bad format
        return False
    return True


def _letter(letter: str, n: int) -> tuple[str | None, str]:
    if letter in "yu":
        return (r"\d{2}", "%y") if n == 2 else (r"\d{4}", "%Y")
    if letter in "ML":
        if n == 1:
            return r"\d{1,2}", "%m"
        if n == 2:
            return r"\d{2}", "%m"
        if n == 3:
            return r"[A-Za-z]{3}\.?", "%b"
        return r"[A-Za-z]+", "%B"
    if letter == "d":
        return (r"\d{1,2}", "%d") if n == 1 else (r"\d{2}", "%d")
    if letter == "D":
        return r"\d{1,3}", "%j"
    if letter == "H":
        return (r"\d{1,2}", "%H") if n == 1 else (r"\d{2}", "%H")
    if letter == "k":
        return r"\d{1,2}", "%H"
    if letter in "hK":
        return (r"\d{1,2}", "%I") if n == 1 else (r"\d{2}", "%I")
    if letter == "m":
        return (r"\d{1,2}", "%M") if n == 1 else (r"\d{2}", "%M")
    if letter == "s":
        return (r"\d{1,2}", "%S") if n == 1 else (r"\d{2}", "%S")
    if letter == "S":
        if n in (3, 6, 9):
            return rf"\d{{{n}}}", f"%{n}f"
        return rf"\d{{{n}}}", "%f"
    if letter == "a":
        return r"[AaPp][Mm]", "%p"
    if letter == "E":
        return (r"[A-Za-z]{3}", "%a") if n <= 3 else (r"[A-Za-z]+", "%A")
    if letter == "X":
        if n == 1:
            return r"(?:Z|[+-]\d{2}(?::?\d{2})?)", "%#z"
        if n == 2:
            return r"(?:Z|[+-]\d{4})", "%#z"
        return r"(?:Z|[+-]\d{2}:\d{2})", "%#z"
    if letter == "x":
        if n == 1:
            return r"[+-]\d{2}(?:\d{2})?", "%#z"
        if n == 2:
            return r"[+-]\d{4}", "%#z"
        return r"[+-]\d{2}:\d{2}", "%#z"
    if letter == "Z":
        if n <= 3:
            return r"[+-]\d{4}", "%z"
        if n == 4:
            return r"(?:GMT)?[+-]\d{2}:\d{2}|Z", "%#z"
        return r"(?:Z|[+-]\d{2}:\d{2})", "%#z"
    if letter in "zV":
        return r"[A-Za-z][A-Za-z0-9/_+-]*", ""
    if letter == "G":
        return r"[A-Za-z]+", ""
    return None, ""
