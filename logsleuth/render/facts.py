"""What every human report says besides the findings: the headline, the inputs, and the notes on
how the logs were read, sorted into the ones that change the reading (a wrong zone, a clock off by
more than a second, coverage gaps, a layout not recognised, damaged input: warnings, shown near the
top) and the routine ones (clocks in step, rotated segments joined: shown with ``-v``)."""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from logsleuth import __version__
from logsleuth.detectors.finding import SEVERITIES
from logsleuth.findings import Analysis
from logsleuth.ingest import rotation
from logsleuth.render import clock
from logsleuth.safe import visible

YEARS_NOTE_DAYS = 365  # inputs spanning this long get a note (they are seldom one incident)
SKEW_WARN_S = 1.0  # a clock off by more than this is worth a warning, corrected or not
ROUTINE_INGEST = ("UTF-8 byte-order mark removed",)


def _t(t: dt.datetime | None) -> str:
    """A time as every human report shows it, in the display zone (render/clock.py)."""
    return clock.when(t, ms=True)


def _cell(v) -> str:
    if v is None:
        return ""
    if isinstance(v, dt.datetime):
        return _t(v)
    if isinstance(v, bool):
        return "yes" if v else "no"
    return str(v)


def headline(a: Analysis) -> str:
    first, last = a.span
    n = len(a.findings)
    worst = a.findings[0].severity if a.findings else None
    files = len([r for r in a.inputs if not r.skipped_input])
    head = f"logsleuth {__version__}: {files} file(s), {a.lines:,} lines, {a.records:,} records, {a.events.height:,} events"
    span = f"{_t(first)} → {_t(last)}" if first else "no timestamps"
    verdict = f"{n} finding(s), worst: {worst}" if n else "no findings"
    if a.ignored:
        verdict += f" ({len(a.ignored)} more ignored by --ignore)"
    return f"{head}; {span}; {verdict}"


def input_rows(a: Analysis, short=visible) -> list[list[str]]:
    out = []
    for r in a.inputs:
        if r.skipped_input:
            out.append([short(r.name), ("unread: " if r.unread else "skipped: ") + visible(r.skipped_input), "", "", "", "", ""])
            continue
        out.append([
            short(r.name),
            r.layout + (f" ({r.envelope})" if r.envelope != "none" else ""),
            f"{r.lines:,}",
            f"{r.events or 0:,}",
            _t(r.first_ts),
            _t(r.last_ts),
            r.zone,
        ])
    return out


def clock_notes(inputs: list, logs: dict) -> dict[str, str]:
    """{input: '<input>: clock …'} for every input whose skew was looked at; a rotated log's
    segments share one estimate, so it is said once, for the log."""
    later = {seg for seg, log in rotation.log_of(logs).items() if seg != log}
    return {
        r.name: f"{visible(r.name)}: clock {r.clock_skew.describe()}"
        for r in inputs
        if r.clock_skew is not None and r.clock_skew.status != "no counterpart" and r.name not in later
    }


def _skew_matters(sk) -> bool:
    if sk.status in ("zone mismatch", "inconsistent", "behind another broker"):
        return True
    return sk.status == "estimated" and abs(sk.offset_s or 0) >= SKEW_WARN_S


def _skew_short(name: str, sk) -> str:
    off = sk.offset_s or 0
    if sk.status == "zone mismatch":
        return f"{name}: clock {off / 3600:+.1f} h off: most likely a wrong zone (check --tz)"
    if sk.status == "inconsistent":
        return f"{name}: clock offsets disagree by more than 1 s (not corrected)"
    if sk.status == "behind another broker":
        return f"{name}: clock at least {abs(off):.1f} s behind another broker (not corrected)"
    return f"{name} {abs(off):.1f} s {'ahead' if off > 0 else 'behind'}" + ("" if sk.applied else " (not corrected)")


@dataclass
class Notes:
    warnings: list[tuple[str, str]] = field(default_factory=list)  # (short form for the top, full text)
    routine: list[str] = field(default_factory=list)
    clocks: list[str] = field(default_factory=list)  # short forms of clocks off by over a second, corrected


def reading_notes(a: Analysis, short=visible) -> Notes:
    """The notes on how the logs were read, sorted (see the module doc). ``short`` shortens paths."""
    out = Notes()
    later = {seg for seg, log in rotation.log_of(a.logs).items() if seg != log}
    spans = [(r.name, r.first_ts, r.last_ts) for r in a.log_inputs() if r.first_ts and r.last_ts and not r.skipped_input]
    lined_up: set[str] = set()  # inputs a --date hint lines up (their no-overlap warning is that hint)
    for r in a.inputs:
        name = short(r.name)
        if r.skipped_input:
            what = "unread" if r.unread else "skipped"
            out.warnings.append((f"{name}: {what} ({visible(r.skipped_input)})", f"{name}: {what}: {visible(r.skipped_input)}"))
        for n in r.stats.notes:
            full = f"{name}: {visible(n)}"
            if n in ROUTINE_INGEST:
                out.routine.append(full)
            else:
                out.warnings.append((full, full))
        if r.stats.replaced_bytes:
            t = f"{name}: {r.stats.replaced_bytes} bytes were not valid text and were replaced"
            out.warnings.append((t, t))
        sk = r.clock_skew
        if sk is not None and sk.status != "no counterpart" and r.name not in later:
            full = f"{name}: clock {visible(sk.describe())}"
            if not _skew_matters(sk):
                out.routine.append(full)
            elif sk.status == "estimated" and sk.applied:
                out.clocks.append(_skew_short(name, sk))
                out.routine.append(full)
            else:
                out.warnings.append((_skew_short(name, sk), full))
        if r.date_source and r.date_source.startswith("the rotated segment before it") and "would date it" in r.date_source:
            m = re.match(r"the rotated segment before it \((.*) ends [^)]*\); its modification time would date it (.*)$", r.date_source)
            short_t = (f"{name}: dated as the continuation of {visible(Path(m.group(1)).name)}; its file time would date it "
                       f"{m.group(2)} (give --date if that is right)") if m else f"{name}: time-only stamps dated by {r.date_source}"
            out.warnings.append((short_t, f"{name}: time-only stamps dated by {visible(r.date_source)}; give --date if that is right"))
        elif r.date_source and ("modification time" in r.date_source or r.date_source.startswith("today")):
            timed = r.first_ts is not None and r.last_ts is not None
            hint = None if not timed or _overlaps(r.name, r.first_ts, r.last_ts, spans) else _date_hint(a, r.name, r.first_ts, r.last_ts, spans)
            if hint:
                lined_up |= {r.name, hint[1]}
            t = f"{name}: {hint[0]}" if hint else f"{name}: time-only stamps dated by {r.date_source}; give --date if that is wrong"
            out.warnings.append((t, t))
    for log, segments in a.logs.items():
        out.routine.append(f"{', '.join(visible(Path(s).name) for s in segments)} read as one log (rotated): {short(log)}")
    if len(spans) >= 2:
        for name, f0, l0 in spans:
            if not _overlaps(name, f0, l0, spans):
                from logsleuth.render.words import span_text

                if name in lined_up:
                    continue  # said above, with the --date that lines them up
                hint = "check --date and --tz"
                t = f"{short(name)} ({_t(f0)} → {_t(l0)}) overlaps no other input in time: {hint}"
                brief = f"{short(name)} ({span_text(f0, l0, seconds=False).rsplit(' (', 1)[0]}) overlaps no other input in time: {hint}"
                out.warnings.append((brief, t))
    if a.replaced_patterns:  # a pack that replaces a built-in pattern changes what is recognised
        shown = ", ".join(f"{visible(pid)} (by {short(src)})" for pid, src in a.replaced_patterns[:5])
        more = f" and {len(a.replaced_patterns) - 5} more" if len(a.replaced_patterns) > 5 else ""
        t = f"built-in patterns replaced by your packs: {shown}{more}"
        out.warnings.append((t, t))
    first, last = a.span
    if first is not None and last is not None and (last - first).days >= YEARS_NOTE_DAYS:  # a stray stamp, or logs of years ago
        years = (last - first).days / 365.25
        t = (f"the inputs span {years:.1f} years ({_t(first)} → {_t(last)}): a wrong --date or --tz, an old file among them, "
             "or a stray time stamp; narrow with --since/--until if that is not the night you mean")
        out.warnings.append((t, t))
    for t in coverage_notes(a, short):
        out.warnings.append((t, t))
    for x in a.failures:  # a detector that raised: its findings are missing, the others stand
        t = (f"detector {x.detector} failed on these inputs ({visible(x.error)}): its findings are missing, the others "
             "are shown (LOGSLEUTH_DEBUG=1 shows where; please report it with the log's shape)")
        out.warnings.append((t, t))
    if a.since or a.until:  # it changes what is shown: a warning
        t = (
            f"window: {_t(a.since) if a.since else 'start'} → {_t(a.until) if a.until else 'end'} (the detectors read the "
            "whole logs; findings going on in the window are shown, with their true start and cause)"
        )
        out.warnings.append((t, t))
    return out


def _overlaps(name: str, f0, l0, spans) -> bool:
    """Does the span f0..l0 of input ``name`` overlap that of any other input?"""
    return any(f1 <= l0 and f0 <= l1 for other, f1, l1 in spans if other != name)


def _date_hint(a: Analysis, name: str, f0, l0, spans) -> tuple[str, str] | None:
    """For a time-only log dated by a guess (its modification time, today): the --date that makes it
    overlap another input, when one does (the stamps line up whole days apart). A segment of a
    rotated log other than its current one gets none (its log is judged as a whole)."""
    import datetime as dt
    from pathlib import PurePath

    rep = next((r for r in a.log_inputs() if r.name == name), None)
    if rep is None or not rep.date_source or not ("modification time" in rep.date_source or rep.date_source.startswith("today")):
        return None
    for other, f1, l1 in spans:
        if other == name:
            continue
        for day in sorted({f1.date(), l1.date()}):
            shift = dt.timedelta(days=(day - f0.date()).days)
            if shift and f1 <= l0 + shift and f0 + shift <= l1:
                glob = PurePath(name).name
                return (f"give --date '{visible(glob)}={day.isoformat()}': its time-only stamps then line up with "
                        f"{visible(PurePath(other).name)} (dated by {rep.date_source} now, {abs(shift.days)} day(s) off)"), other
    return None


def notes(a: Analysis, short=visible) -> list[str]:
    """Every note in full (the postmortems keep them all)."""
    n = reading_notes(a, short)
    return [full for _, full in n.warnings] + n.routine


def coverage_notes(a: Analysis, short=visible) -> list[str]:
    """Gaps and missing levels per input (logsleuth/coverage.py)."""
    from logsleuth.ingest.coverage import compute

    out = []
    for r in a.log_inputs():
        if r.skipped_input:
            continue
        cov = compute(r)
        for g in cov.gaps:
            out.append(f"coverage: {short(r.name)} has no lines from {_t(g.start)} to {_t(g.end)}")
        if cov.levels and not cov.has_info:
            # the levels are those of a sample of the records (every 100th) and of the events: a
            # level of a few lines (ERROR) may be missing from them, so they are not "the" levels
            out.append(f"coverage: {short(r.name)} holds no INFO lines (levels seen in a sample of its lines: {', '.join(sorted(cov.levels))})")
    return out


def closing(a: Analysis) -> list[tuple[str, str]]:
    """The run in numbers (the postmortems' summary table)."""
    first, last = a.span
    sev = Counter(f.severity for f in a.findings)
    reduction = (1 - a.events.height / a.lines) * 100 if a.lines else 0.0
    return [
        ("lines read", f"{a.lines:,}"),
        ("records", f"{a.records:,}"),
        ("events", f"{a.events.height:,} ({reduction:.2f}% data reduction)"),
        ("first / last", f"{_t(first)} / {_t(last)}"),
        ("findings", severity_counts(a)),
    ] + ([("ignored (--ignore)", ignored_text(a))] if a.ignored else [])


def ignored_text(a: Analysis) -> str:
    """'2 findings: kafka.broker-unreachable (billing-1 …) by kafka.broker-unreachable:billing-1, …'."""
    from logsleuth.detectors.words import render as render_words

    n = len(a.ignored)
    shown = [f"{f.id} ({visible(render_words(f.title, clock.display_clock()))[:60]}) by --ignore {visible(rule)}" for f, rule in a.ignored[:3]]
    more = f" and {n - 3} more" if n > 3 else ""
    return f"{n} finding{'s' if n != 1 else ''}: " + "; ".join(shown) + more


def severity_counts(a: Analysis) -> str:
    sev = Counter(f.severity for f in a.findings)
    return ", ".join(f"{sev[s]} {s}" for s in SEVERITIES if sev[s]) or "none"


@dataclass
class IncidentWords:
    """An incident as the Markdown and HTML reports say it: words in the display zone, log text
    made visible (each renderer escapes for its format)."""

    severity: str
    confidence: float
    headline: str
    window: str
    hit: list[str]
    now: str


def incident_words(a: Analysis, inc) -> IncidentWords:
    from logsleuth.detectors.words import render as render_words

    zc = clock.display_clock()
    return IncidentWords(
        severity=inc.severity(a.findings),
        confidence=inc.confidence(a.findings),
        headline=visible(render_words(inc.headline, zc)),
        window=clock.span(inc.first, inc.last, estimated=inc.first_estimated) if inc.first is not None else "",
        hit=[visible(h) for h in inc.hit],
        now=visible(render_words(inc.now, zc)),
    )
