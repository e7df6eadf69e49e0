"""``analyze --format markdown``: a postmortem section to paste. Every log-derived string is escaped:
inline text by :func:`md`, quoted log lines inside fences longer than any backtick run they hold."""

from __future__ import annotations

import re

from logsleuth.findings import Analysis
from logsleuth.detectors.finding import Finding
from logsleuth.render.report import _cell, _t, closing, coverage_notes, headline, input_rows, notes, subject_columns
from logsleuth.safe import EVIDENCE_CHARS, one_line, visible

_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~$])")  # $: GitHub renders $...$ as math
_LINE_START = re.compile(r"^([#>+=-])")
_LIST_NUMBER = re.compile(r"^(\d+)([.)])")  # "1. x" would start a list: escape the '.', not the digit


def md(s: object) -> str:
    """Text safe inside a Markdown paragraph or table cell (no markup, no HTML, no line breaks)."""
    t = visible(str(s))
    t = t.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    t = _MD_SPECIAL.sub(r"\\\1", t)
    t = _LIST_NUMBER.sub(r"\1\\\2", t)
    return _LINE_START.sub(r"\\\1", t)


def fence(lines: list[str]) -> str:
    body = "\n".join(visible(x) for x in lines)
    longest = max((len(m) for m in re.findall(r"`+", body)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}text\n{body}\n{ticks}"


def document(a: Analysis, title: str = "Incident analysis", image: str | None = None) -> str:
    """``image``: the file name of the chart written beside the report (render/chart.py).
    Sections in the HTML report's order: summary, timeline, findings, what else changed, inputs
    and coverage."""
    out = [f"# {md(title)}", "", md(headline(a)), "", "## Summary", ""]
    for k, v in closing(a):
        out.append(f"- **{md(k)}**: {md(v)}")
    if a.findings:
        out.append("")
        out += [f"{i}. **{md(f.severity.upper())}** {md(f.title)} (confidence {f.confidence:.2f})" for i, f in enumerate(a.findings, 1)]
    out.append("")
    if image:
        out += ["## Timeline", "", f"![events per minute with the causes marked]({image})", ""]
    elif a.templates_counted:
        from logsleuth.render.timeline import spark
        from logsleuth.timeline.histogram import histogram

        h = histogram(a.events, top=10)
        if h is not None:
            from logsleuth.render import chart

            why = (
                "The chart is written as an image beside the report: give `-o FILE.md`"
                if chart.available()
                else "The chart needs matplotlib (`pip install 'logsleuth-broker[report]'`)"
            )
            out += ["## Timeline", "", f"{why}; event rates as sparklines:", ""]
            out += fence([f"{name:<34} {total:>7,}  {spark(series)}" for name, total, series in h.rows]).splitlines()
            out.append("")
    out += ["## Findings", ""]
    if not a.findings:
        out.append("No detector recognised an incident in these logs.")
    for i, f in enumerate(a.findings, 1):
        out += finding(i, f)
    out += changes(a)
    out += ["", "## Inputs and coverage", ""]
    out.append("| path | layout | lines | events | first (UTC) | last (UTC) | zone |")
    out.append("|---|---|---:|---:|---|---|---|")
    for r in input_rows(a):
        out.append("| " + " | ".join(md(v) for v in r) + " |")
    for n in notes(a) + coverage_notes(a):
        out.append(f"\n> note: {md(n)}")
    return "\n".join(out) + "\n"


def changes(a: Analysis) -> list[str]:
    if not a.templates_counted:
        return []
    out = ["", "## What else changed", ""]
    if a.window is None:
        return out + ["No incident window to compare: the incident starts where the logs start (no baseline before it)."]
    (w0, w1), (b0, b1) = a.window
    out.append(f"Messages no pack recognises, reduced to templates; their rate from {md(_t(w0))} to {md(_t(w1))} against {md(_t(b0))} to {md(_t(b1))}.")
    out.append("")
    if not a.changes:
        return out + ["Nothing unrecognised changed its rate markedly."]
    out.append("| template | logger | in window | before | × | first in window |")
    out.append("|---|---|---:|---:|---:|---|")
    for c in a.changes:
        out.append(
            f"| {md(c.template)} | {md(c.logger or '')} | {c.incident:,} ({c.incident_rate:.2f}/min) | {c.baseline:,} ({c.baseline_rate:.2f}/min) | {c.score:.1f} | {md(c.path)}:{c.line} |"
        )
    return out


def finding(i: int, f: Finding) -> list[str]:
    out = [f"### {i}. {md(f.title)}", ""]
    out.append(f"**{md(f.severity.upper())}** · confidence {f.confidence:.2f} · `{f.id}` · {md(_t(f.first_seen))} → {md(_t(f.last_seen))}")
    out += ["", md(f.root_cause), ""]
    if f.confidence_reasons:
        out.append("**Confidence**")
        out.append("")
        out += [f"- {md(r)}" for r in f.confidence_reasons]
        out.append("")
    if f.cause:
        out.append("**Cause:** " + ", ".join(f"{md(k)}={md(_cell(v))}" for k, v in f.cause.items() if v is not None and not isinstance(v, (list, dict))))
        out.append("")
    if f.subjects:
        keys = subject_columns(f)
        out.append(f"**Subjects ({len(f.subjects)})**")
        out.append("")
        out.append("| " + " | ".join(md(k) for k in keys) + " |")
        out.append("|" + "---|" * len(keys))
        for s in f.subjects:
            out.append("| " + " | ".join(md(_cell(s.get(k))) for k in keys) + " |")
        out.append("")
    if f.evidence:
        out.append("**Evidence**")
        out.append("")
        lines = []
        for e in f.evidence:
            lines.append(f"{e.path}:{e.line}:" + (f"  [{e.note}]" if e.note else ""))
            lines.append("    " + one_line(e.text, EVIDENCE_CHARS))
        out.append(fence(lines))
        out.append("")
    if f.remediation:
        out.append("**What to do**")
        out.append("")
        out += [f"{n}. {md(r)}" for n, r in enumerate(f.remediation, 1)]
        out.append("")
    if f.ruled_out:
        out.append("**Ruled out**")
        out.append("")
        out += [f"- {md(r)}" for r in f.ruled_out]
        out.append("")
    if f.references:
        out.append("**References:** " + "; ".join(md(r) for r in f.references))
        out.append("")
    return out
