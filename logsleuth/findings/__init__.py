"""The findings of one run: every detector's findings ranked (worst first), kept to the
``--since/--until`` window, checked against ``--fail-on``, with the inputs and events they came from
(``Analysis``, what every renderer reads)."""

from __future__ import annotations

import datetime as dt
import functools
from dataclasses import dataclass, field

import polars as pl

from logsleuth.detectors.finding import SEVERITY_RANK, Finding
from logsleuth.ingest.inputs import InputReport


@dataclass
class Analysis:
    inputs: list[InputReport]
    events: pl.DataFrame
    findings: list[Finding]
    since: dt.datetime | None = None
    until: dt.datetime | None = None
    options: dict = field(default_factory=dict)
    changes: list = field(default_factory=list)  # templates.Change: what else changed
    window: tuple | None = None  # (incident window, baseline window) the changes compare
    templates_counted: bool = False
    logs: dict = field(default_factory=dict)  # rotated log -> its segments, oldest first (rotation.group)
    texts: object = None  # the events' record texts (ingest.texts.TextStore): events has no raw column
    failures: list = field(default_factory=list)  # detectors that raised (detectors.facts.DetectorFailure)
    ignored: list = field(default_factory=list)  # (finding, the --ignore rule that hid it): counted, not shown
    replaced_patterns: list = field(default_factory=list)  # (built-in pattern id, the user's pack replacing it)

    @functools.cached_property
    def incidents(self) -> list:
        """The findings grouped by the root cause they share (findings/incidents.py), worst first."""
        from logsleuth.findings.incidents import group

        return group(self.findings)

    @property
    def span(self) -> tuple[dt.datetime | None, dt.datetime | None]:
        firsts = [r.first_ts for r in self.inputs if r.first_ts is not None]
        lasts = [r.last_ts for r in self.inputs if r.last_ts is not None]
        return (min(firsts) if firsts else None, max(lasts) if lasts else None)

    @property
    def lines(self) -> int:
        return sum(r.lines for r in self.inputs)

    @property
    def records(self) -> int:
        return sum(r.records for r in self.inputs)

    def spans_by_path(self) -> dict:
        return {r.name: (r.first_ts, r.last_ts) for r in self.inputs if r.first_ts and r.last_ts}

    def log_inputs(self) -> list[InputReport]:
        """One report per log: the segments of a rotated log merged into one (detectors/base.merged)."""
        from logsleuth.detectors.base import merged

        reps = {r.name: r for r in self.inputs}
        grouped = {s for segs in self.logs.values() for s in segs}
        out = [r for r in self.inputs if r.name not in grouped]
        for log, segs in self.logs.items():
            live = [reps[s] for s in segs if s in reps and not reps[s].skipped_input]
            if live:
                out.append(merged(live, reps.get(log) or live[-1]))
        return out

    def events_by_file(self) -> dict[str, int]:
        if self.events.height == 0:
            return {}
        return {str(k): v for k, v in self.events.group_by("file", maintain_order=True).len().iter_rows()}


def at_or_above(severity: str, threshold: str) -> bool:
    return SEVERITY_RANK[severity] <= SEVERITY_RANK[threshold]


def rank(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: f.rank_key)


def overlaps(f: Finding, since: dt.datetime | None, until: dt.datetime | None) -> bool:
    """A finding belongs to the window when what it tells was going on in it (no times: kept)."""
    first, last = f.first_seen, f.last_seen or f.first_seen
    for x in f.subjects:  # a producer still stuck at the end is stuck after its last line too
        if x.get("still_stuck"):
            last = None
    if since is not None and last is not None and last < since:
        return False
    return not (until is not None and first is not None and first > until)


def ignore_rules(rules: list[str] | None) -> list[tuple[str, str | None]]:
    """``--ignore ID[:SUBJECT]`` as (id glob, subject glob or None); a bad rule is a one-line error."""
    from logsleuth.errors import LogsleuthError

    out = []
    for r in rules or []:
        fid, sep, subject = r.partition(":")
        if not fid.strip() or (sep and not subject.strip()):
            raise LogsleuthError(f"--ignore {r!r}: give a finding id (or a glob: 'kafka.*') and optionally ':SUBJECT' (a value of its subjects, e.g. a client id or log name)")
        out.append((fid.strip(), subject.strip() if sep else None))
    return out


def _values(x) -> list[str]:
    if isinstance(x, dict):
        return [v for y in x.values() for v in _values(y)]
    if isinstance(x, (list, tuple)):
        return [v for y in x for v in _values(y)]
    return [str(x)] if x is not None else []


def ignored_by(f: Finding, rules: list[tuple[str, str | None]]) -> str | None:
    """The rule that hides a finding: its id matches and, with a SUBJECT, every one of its subjects
    has a value that matches it (a path matches by its file name too); None when none does."""
    from fnmatch import fnmatchcase
    from pathlib import PurePath

    for fid, subject in rules:
        if not fnmatchcase(f.id, fid):
            continue
        if subject is None:
            return fid
        def hit(s) -> bool:
            return any(fnmatchcase(v, subject) or fnmatchcase(PurePath(v).name, subject) for v in _values(s))
        if f.subjects and all(hit(s) for s in f.subjects):
            return f"{fid}:{subject}"
    return None


def split_ignored(findings: list[Finding], rules: list[tuple[str, str | None]]) -> tuple[list[Finding], list[tuple[Finding, str]]]:
    kept, hidden = [], []
    for f in findings:
        rule = ignored_by(f, rules) if rules else None
        if rule is None:
            kept.append(f)
        else:
            hidden.append((f, rule))
    return kept, hidden
