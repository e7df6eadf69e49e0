"""The ``analyze`` report for people: a rich view on a terminal, the same content as plain text
(``--format text``) for pasting. Log text is always shown through render/safe.py."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from pathlib import Path

from rich.console import Console, Group
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from logsleuth import __version__
from logsleuth.ingest import rotation
from logsleuth.findings import Analysis
from logsleuth.detectors.finding import SEVERITIES, Finding
from logsleuth.safe import one_line, visible
from logsleuth.ingest.timeparse import iso_utc

SEV_STYLE = {"critical": "bold white on red", "high": "bold red", "medium": "yellow", "low": "cyan", "info": "dim"}
MAX_EVIDENCE = 12
MAX_SUBJECTS = 25


def _t(t: dt.datetime | None) -> str:
    s = iso_utc(t)
    return s.replace("T", " ").replace("Z", " UTC") if s else "n/a"


def headline(a: Analysis) -> str:
    first, last = a.span
    n = len(a.findings)
    worst = a.findings[0].severity if a.findings else None
    files = len([r for r in a.inputs if not r.skipped_input])
    head = f"logsleuth {__version__}: {files} file(s), {a.lines:,} lines, {a.records:,} records, {a.events.height:,} events"
    span = f"{_t(first)} → {_t(last)}" if first else "no timestamps"
    verdict = f"{n} finding(s), worst: {worst}" if n else "no findings"
    return f"{head}; {span}; {verdict}"


def input_rows(a: Analysis) -> list[list[str]]:
    out = []
    for r in a.inputs:
        if r.skipped_input:
            out.append([visible(r.name), "skipped: " + visible(r.skipped_input), "", "", "", "", ""])
            continue
        out.append([
            visible(r.name),
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


def notes(a: Analysis) -> list[str]:
    out = []
    clock = clock_notes(a.inputs, a.logs)
    for r in a.inputs:
        for n in r.stats.notes:
            out.append(f"{visible(r.name)}: {visible(n)}")
        if r.stats.replaced_bytes:
            out.append(f"{visible(r.name)}: {r.stats.replaced_bytes} bytes were not valid text and were replaced")
        if r.name in clock:
            out.append(clock[r.name])
        if r.date_source and "modification time" in r.date_source or r.date_source.startswith("today"):
            out.append(f"{visible(r.name)}: time-only stamps dated by {r.date_source}; give --date if that is wrong")
    for log, segments in a.logs.items():
        out.append(f"{', '.join(visible(Path(s).name) for s in segments)} read as one log (rotated): {visible(log)}")
    # one span per log: the segments of a rotated log follow each other, they do not overlap
    spans = [(r.name, r.first_ts, r.last_ts) for r in a.log_inputs() if r.first_ts and r.last_ts and not r.skipped_input]
    if len(spans) >= 2:
        for name, f0, l0 in spans:
            if not any(f1 <= l0 and f0 <= l1 for other, f1, l1 in spans if other != name):
                out.append(f"{visible(name)} ({_t(f0)} → {_t(l0)}) overlaps no other input in time: check --date and --tz")
    if a.since or a.until:
        out.append(f"window: {_t(a.since) if a.since else 'start'} → {_t(a.until) if a.until else 'end'} (the detectors read the whole logs; findings going on in the window are shown, with their true start and cause)")
    return out


def coverage_notes(a: Analysis) -> list[str]:
    """Gaps and missing levels per input (logsleuth/coverage.py)."""
    from logsleuth.ingest.coverage import compute

    out = []
    for r in a.log_inputs():
        if r.skipped_input:
            continue
        cov = compute(r)
        for g in cov.gaps:
            out.append(f"coverage: {r.name} has no lines from {_t(g.start)} to {_t(g.end)}")
        if cov.levels and not cov.has_info:
            out.append(f"coverage: {r.name} holds no INFO lines (levels: {', '.join(sorted(cov.levels))})")
    return out


def closing(a: Analysis) -> list[tuple[str, str]]:
    """Hayabusa-style end-of-scan summary."""
    first, last = a.span
    sev = Counter(f.severity for f in a.findings)
    reduction = (1 - a.events.height / a.lines) * 100 if a.lines else 0.0
    return [
        ("lines read", f"{a.lines:,}"),
        ("records", f"{a.records:,}"),
        ("events", f"{a.events.height:,} ({reduction:.2f}% data reduction)"),
        ("first / last", f"{_t(first)} / {_t(last)}"),
        ("findings", ", ".join(f"{s}: {sev[s]}" for s in SEVERITIES if sev[s]) or "none"),
    ]


# ----------------------------------------------------------------------------- plain text


def text(a: Analysis) -> str:
    out: list[str] = [headline(a), ""]
    out.append("Inputs")
    cols = ["path", "layout", "lines", "events", "first (UTC)", "last (UTC)", "zone"]
    rows = input_rows(a)
    widths = [max(len(c), *(len(r[i]) for r in rows)) if rows else len(c) for i, c in enumerate(cols)]
    out.append("  " + "  ".join(c.ljust(widths[i]) for i, c in enumerate(cols)).rstrip())
    for r in rows:
        out.append("  " + "  ".join(v.ljust(widths[i]) for i, v in enumerate(r)).rstrip())
    for n in notes(a) + coverage_notes(a):
        out.append(f"  note: {n}")
    out.append("")
    if not a.findings:
        out.append("Findings: none. No detector recognised an incident in these logs.")
    else:
        out.append(f"Findings ({len(a.findings)})")
    for i, f in enumerate(a.findings, 1):
        out.extend(finding_text(i, f))
    out.append("Summary")
    for k, v in closing(a):
        out.append(f"  {k:<13} {v}")
    return "\n".join(out) + "\n"


def finding_text(i: int, f: Finding) -> list[str]:
    out = ["", f"{i}. [{f.severity.upper()}] {visible(f.title)}", f"   id: {f.id}   confidence: {f.confidence:.2f}   seen: {_t(f.first_seen)} → {_t(f.last_seen)}", ""]
    out += _wrap("Root cause: " + visible(f.root_cause), "   ")
    if f.confidence_reasons:
        out.append("   Confidence:")
        out += [f"     {visible(r)}" for r in f.confidence_reasons]
    if f.cause:
        out.append("   Cause: " + ", ".join(f"{k}={visible(_cell(v))}" for k, v in f.cause.items() if v is not None and not isinstance(v, (list, dict))))
    if f.subjects:
        out.append(f"   Subjects ({len(f.subjects)}):")
        for s in f.subjects[:MAX_SUBJECTS]:
            out.append("     - " + ", ".join(f"{k}={visible(_cell(v))}" for k, v in s.items() if v is not None and not isinstance(v, (list, dict))))
        if len(f.subjects) > MAX_SUBJECTS:
            out.append(f"     … {len(f.subjects) - MAX_SUBJECTS} more (see --format json)")
    if f.evidence:
        out.append("   Evidence:")
        for e in f.evidence[:MAX_EVIDENCE]:
            note = f"  [{visible(e.note)}]" if e.note else ""
            out.append(f"     {visible(e.path)}:{e.line}:{note}")
            out.append(f"       {one_line(e.text, 400)}")
        if len(f.evidence) > MAX_EVIDENCE:
            out.append(f"     … {len(f.evidence) - MAX_EVIDENCE} more lines (see --format json)")
    if f.remediation:
        out.append("   What to do:")
        for r in f.remediation:
            out += _wrap("- " + visible(r), "     ", "       ")
    if f.ruled_out:
        out.append("   Ruled out:")
        for r in f.ruled_out:
            out += _wrap("- " + visible(r), "     ", "       ")
    if f.references:
        out.append("   References: " + "; ".join(visible(r) for r in f.references))
    return out


def _wrap(s: str, first: str, rest: str | None = None, width: int = 110) -> list[str]:
    import textwrap

    return textwrap.wrap(s, width=width, initial_indent=first, subsequent_indent=rest if rest is not None else first) or [first]


# ----------------------------------------------------------------------------- terminal


def terminal(a: Analysis, con: Console) -> None:
    con.print(Text(headline(a), style="bold"))
    t = Table(box=None, pad_edge=False, header_style="bold dim")
    for c in ("path", "layout", "lines", "events", "first (UTC)", "last (UTC)", "zone"):
        t.add_column(c, overflow="fold", justify="right" if c in ("lines", "events") else "left")
    for r in input_rows(a):
        t.add_row(*(Text(v) for v in r))
    con.print(Padding(t, (1, 0, 0, 2)))
    for n in notes(a):
        con.print(Text("  note: " + n, style="dim"))
    con.print()
    if not a.findings:
        con.print(Text("No findings: no detector recognised an incident in these logs.", style="green"))
    for i, f in enumerate(a.findings, 1):
        con.print(_panel(i, f))
    s = Table(box=None, show_header=False, pad_edge=False)
    s.add_column(style="bold")
    s.add_column()
    for k, v in closing(a):
        s.add_row(Text(k), Text(v))
    con.print(Panel(s, title="summary", title_align="left", expand=False))


def _panel(i: int, f: Finding) -> Panel:
    parts: list = []
    meta = Text()
    meta.append(f"{f.severity.upper()}", style=SEV_STYLE[f.severity])
    meta.append(f"  confidence {f.confidence:.2f}  ·  {_t(f.first_seen)} → {_t(f.last_seen)}  ·  {f.id}")
    parts.append(meta)
    parts.append(Text(""))
    parts.append(Text(visible(f.root_cause)))
    if f.confidence_reasons:
        parts.append(Text(""))
        parts.append(Text("Confidence", style="bold"))
        for r in f.confidence_reasons:
            parts.append(Text("  " + visible(r)))
    if f.cause:
        parts.append(Text(""))
        parts.append(Text("Cause  ", style="bold") + Text(", ".join(f"{k}={visible(_cell(v))}" for k, v in f.cause.items() if v is not None and not isinstance(v, (list, dict)))))
    if f.subjects:
        keys = subject_columns(f)
        parts.append(Text(""))
        parts.append(Text(f"Subjects ({len(f.subjects)})", style="bold"))
        if len(keys) <= 6:
            st = Table(box=None, pad_edge=False, header_style="bold dim")
            for k in keys:
                st.add_column(k, overflow="fold")
            for s in f.subjects[:MAX_SUBJECTS]:
                st.add_row(*(Text(visible(_cell(s.get(k)))) for k in keys))
            parts.append(st)
        else:  # too many columns for a table on a terminal: one wrapped line per subject
            for s in f.subjects[:MAX_SUBJECTS]:
                parts.append(Text("  • " + ", ".join(f"{k}={visible(_cell(s.get(k)))}" for k in keys if s.get(k) is not None)))
        if len(f.subjects) > MAX_SUBJECTS:
            parts.append(Text(f"… {len(f.subjects) - MAX_SUBJECTS} more (see --format json)", style="dim"))
    if f.evidence:
        parts.append(Text(""))
        parts.append(Text("Evidence", style="bold"))
        for e in f.evidence[:MAX_EVIDENCE]:
            loc = Text(f"{visible(e.path)}:{e.line}:", style="magenta")
            if e.note:
                loc.append(f" {visible(e.note)}", style="dim")
            parts.append(loc)
            parts.append(Text("  " + one_line(e.text, 300)))
        if len(f.evidence) > MAX_EVIDENCE:
            parts.append(Text(f"… {len(f.evidence) - MAX_EVIDENCE} more lines (see --format json)", style="dim"))
    if f.remediation:
        parts.append(Text(""))
        parts.append(Text("What to do", style="bold"))
        for r in f.remediation:
            parts.append(Text("  • " + visible(r)))
    if f.ruled_out:
        parts.append(Text(""))
        parts.append(Text("Ruled out", style="bold"))
        for r in f.ruled_out:
            parts.append(Text("  • " + visible(r), style="dim"))
    if f.references:
        parts.append(Text(""))
        parts.append(Text("References  ", style="bold") + Text("; ".join(visible(r) for r in f.references)))
    return Panel(Group(*parts), title=Text(f"{i}. {visible(f.title)}"), title_align="left", border_style=SEV_STYLE[f.severity].split()[-1])


def subject_columns(f: Finding) -> list[str]:
    """The scalar keys of a finding's subjects, in first-seen order: the subjects table's columns."""
    keys: list[str] = []
    for s in f.subjects:
        for k, v in s.items():
            if k not in keys and not isinstance(v, (list, dict)):
                keys.append(k)
    return keys


def _cell(v) -> str:
    if v is None:
        return ""
    if isinstance(v, dt.datetime):
        return _t(v)
    if isinstance(v, bool):
        return "yes" if v else "no"
    return str(v)
