"""Rotated logs: which inputs are segments of one log.

``analyze broker.log*`` hands logsleuth ``broker.log.2.gz``, ``broker.log.1`` and ``broker.log``:
one broker's log, cut by logrotate (or log4j2's RollingFile, logback's rolling policies). The
detectors must read them as one log — a producer that got stuck in the oldest segment is still
stuck in the newest — so the analysis stage (``analysis.analyze``) groups them with
:func:`group` and gives their events one ``path`` (the log) while ``file`` keeps the real file.

:func:`group` is a pure function of the input names. A name is a segment of ``base`` when removing
a rotation suffix from it gives ``base`` (in the same directory):

* ``name.N`` and ``name.N.gz|bz2|xz|zst`` (logrotate; a higher N is older), ``name.gz`` …
* ``name-YYYYMMDD``, ``name.YYYY-MM-DD`` (logrotate ``dateext``), optionally ``.N`` / ``-N`` after the date
  (also Kafka's hourly ``server.log.YYYY-MM-DD-HH``, log4j DailyRollingFileAppender ``'.'yyyy-MM-dd-HH``: the hour sorts as N);
  ``name-YYYYMMDDHH`` and ``name-YYYYMMDD-<epoch>`` (logrotate ``dateformat``)
* ``0.log.YYYYMMDD-HHMMSS`` (kubelet, under ``/var/log/pods/…``; all but the newest gzipped)
* ``name.log-MM-DD-YYYY-N.log.gz`` (Pulsar's ``conf/log4j2.yaml``: ``${pulsar.log.file}-%d{MM-dd-yyyy}-%i.log.gz``)
* ``stem-YYYY-MM-DD-N.log``, ``stem-YYYY-MM-DD.N.log`` (log4j2 RollingFile ``%d{yyyy-MM-dd}-%i``) and
  ``stem.YYYY-MM-DD.N.log`` (logback), also compressed, of the log ``stem.log`` (a higher N is newer);
  ``name.log.YYYY-MM-DD.N.gz`` (log4j2 ``%d{yyyy-MM-dd}.%i.gz`` after the live name)
* ``stem.N.log`` (logback FixedWindowRollingPolicy, a higher N is older) and ``stem-N.log`` (log4j2
  ``%i`` with the max strategy, a higher N is newer), only when ``stem.log`` itself is an input

Only names that share a base with at least one other input are grouped; ``broker-1.log`` and
``broker-2.log`` are two logs.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

COMPRESSED = re.compile(r"\.(?:gz|bz2|xz|zst|zstd|lz4)$", re.IGNORECASE)
# kubelet's YYYYMMDD-HHMMSS, logrotate's dateformat -%Y%m%d-%s and hourly -%Y%m%d%H, then the days
_DATE = r"(?P<date>\d{8}-\d{10}|\d{8}-\d{6}|\d{10}|\d{4}-\d{2}-\d{2}|\d{2}-\d{2}-\d{4}|\d{8})"
_INDEX = re.compile(r"^(?P<stem>.+?)\.(?P<n>\d{1,4})$")  # name.N (logrotate)
_DATED = re.compile(r"^(?P<stem>.+?)[-.]" + _DATE + r"(?:[-.](?P<n>\d{1,4}))?$")  # name-YYYYMMDD, name.YYYY-MM-DD[.N]
_DATED_EXT = re.compile(r"^(?P<stem>.+?)[-.]" + _DATE + r"(?:[-.](?P<n>\d{1,4}))?(?P<ext>\.(?:log|txt|out|json))$", re.IGNORECASE)
# logback FixedWindowRollingPolicy 'name.%i.log' (a higher index is older) and log4j2 'name-%i.log'
# (DefaultRolloverStrategy max: a higher index is newer); only with the live name.log among the inputs
# (broker-1.log and broker-2.log alone are two brokers' logs)
_INDEX_EXT = re.compile(r"^(?P<stem>.+?)(?P<sep>[-.])(?P<n>\d{1,4})(?P<ext>\.(?:log|txt|out|json))$", re.IGNORECASE)


@dataclass(frozen=True)
class Segment:
    name: str  # as given
    base: str  # the log it belongs to: dir/base name without the rotation suffix
    order: tuple  # sorts oldest first
    needs_live: bool = False  # a segment only when the live log (``base``) is an input too


def parse(name: str) -> Segment:
    """The log a file name belongs to, and its place among that log's segments."""
    folder, file = os.path.split(name)
    bare = COMPRESSED.sub("", file)
    m = _DATED_EXT.match(bare)
    live = False
    if m:  # log4j2 / logback: stem-DATE-N.log -> stem.log; a higher index is newer
        stem = m.group("stem")
        # Pulsar's conf/log4j2.yaml appends to the whole live name: ${pulsar.log.file}-%d{MM-dd-yyyy}-%i.log.gz
        base = stem if _LOG_EXT.search(stem) else stem + m.group("ext")
        base, order = base, (0, _day(m.group("date")), int(m.group("n") or 0))
    elif m := _DATED.match(bare):  # logrotate dateext, log4j2 'name.log.%d{yyyy-MM-dd}.%i(.gz)'
        base, order = m.group("stem"), (0, _day(m.group("date")), int(m.group("n") or 0))
    elif m := _INDEX.match(bare):  # logrotate: name.N; a higher N is older
        base, order = m.group("stem"), (1, -int(m.group("n")), 0)
    elif m := _INDEX_EXT.match(bare):  # logback name.N.log (higher older), log4j2 name-N.log (higher newer)
        n = int(m.group("n"))
        base, order, live = m.group("stem") + m.group("ext"), (1, -n if m.group("sep") == "." else n, 0), True
    else:  # the current file (perhaps compressed)
        base, order = bare, (2, 0, 0 if bare != file else 1)
    return Segment(name, os.path.join(folder, base), order, live)


_LOG_EXT = re.compile(r"\.(?:log|txt|out|json)$", re.IGNORECASE)
_US_DAY = re.compile(r"^(\d{2})-(\d{2})-(\d{4})$")


def _day(text: str) -> str:
    """A sortable day: YYYYMMDD (from YYYY-MM-DD, YYYYMMDD or log4j2's %d{MM-dd-yyyy})."""
    if m := _US_DAY.match(text):
        return m.group(3) + m.group(1) + m.group(2)
    return text.replace("-", "")


def group(names: list[str]) -> dict[str, list[str]]:
    """Rotated segments among ``names``: {log: [segment names, oldest first]} for every base shared
    by two or more names. The log is named by its current segment: the one without a rotation
    suffix, else the newest. Names that are no segment of another input are left out."""
    by_base: dict[str, list[Segment]] = {}
    given = {os.path.join(os.path.split(n)[0], COMPRESSED.sub("", os.path.split(n)[1])) for n in names}
    for name in dict.fromkeys(names):
        if name in ("-", "<stdin>"):  # standard input is no segment
            continue
        seg = parse(name)
        if seg.needs_live and seg.base not in given:  # 'broker-1.log' without 'broker.log': a log of its own
            folder, file = os.path.split(name)
            bare = COMPRESSED.sub("", file)
            seg = Segment(name, os.path.join(folder, bare), (2, 0, 0 if bare != file else 1))
        by_base.setdefault(seg.base, []).append(seg)
    out: dict[str, list[str]] = {}
    for base, segs in by_base.items():
        if len(segs) < 2:
            continue
        segs.sort(key=lambda s: (s.order, s.name))
        out[segs[-1].name] = [s.name for s in segs]
    return out


def log_of(groups: dict[str, list[str]]) -> dict[str, str]:
    """{segment name: log name} for every grouped segment."""
    return {seg: log for log, segs in groups.items() for seg in segs}
