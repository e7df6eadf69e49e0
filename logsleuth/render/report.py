"""The ``analyze`` report for people, verdict first: the first screen (24 lines at 80 columns) is
the answer (per finding of medium or more: severity and confidence in words, the title, one line of
root cause, the one action to take now, the top subjects), warnings that change the reading under
the headline; then each finding in reading order (root cause → what to do → evidence → subjects →
ruled out → references); then the inputs and notes; and a closing summary that names the worst
finding again, so the last screen is the answer too.

The terminal view and ``--format text`` are the same lines (text has no colours). Log text goes
through logsleuth/safe.py; paths lose the directory all inputs share (render/paths.py)."""

from __future__ import annotations

import io
from dataclasses import dataclass

from rich.cells import cell_len
from rich.console import Console

from logsleuth.safe import SafeConsole
from rich.table import Table
from rich.text import Text

from logsleuth import __version__
from logsleuth.detectors.finding import SEVERITY_RANK, Finding
from logsleuth.findings import Analysis
from logsleuth.render import clock
from logsleuth.render import subjects as subj
from logsleuth.render.facts import (  # noqa: F401  (the helpers the other reports share)
    _cell, _t, clock_notes, closing, coverage_notes, headline, ignored_text, input_rows, notes, reading_notes, severity_counts,
)
from logsleuth.render.paths import Shortener, prefix_lines
from logsleuth.render.words import confidence_text, confidence_word, counts, span_text, LOW_CONFIDENCE
from logsleuth.safe import EVIDENCE_CHARS, one_line, visible

SEV_STYLE = {"critical": "bold white on red", "high": "bold red", "medium": "bold yellow", "low": "cyan", "info": "dim"}
EVIDENCE_SHOWN = 6  # evidence lines per finding without -v ("the few lines that prove it")
SUBJECTS_SHOWN = 10
SCREEN = 24  # the first screen when the terminal does not say


def subject_columns(f: Finding) -> list[str]:
    return subj.all_columns(f)


@dataclass
class View:
    a: Analysis
    width: int
    height: int = SCREEN
    verbose: bool = False
    elapsed: float | None = None

    def __post_init__(self) -> None:
        names = [r.name for r in self.a.inputs if not r.unread]  # an unread path is named in full
        for segs in self.a.logs.values():
            names += list(segs)
        self.short = Shortener(names)
        self.told: set[str] = set()
        self._measure = SafeConsole(width=self.width, markup=False, emoji=False, highlight=False, color_system=None)

    # ------------------------------------------------------------------ helpers

    def s(self, text: str | None) -> str:
        """Detector prose for a person: visible, with the shared directory left out of paths."""
        return self.short.text(visible(text or ""))

    def wrap(self, body: Text | str, label: str = "", indent: int | None = None, max_lines: int | None = None, style: str = "") -> list[Text]:
        """``label`` then ``body`` wrapped to the width, continuation lines indented under the body;
        at most ``max_lines`` (the last one ends in '…' when cut)."""
        if isinstance(body, str):
            body = Text(body, style=style)
        ind = len(label) if indent is None else indent
        room = max(10, self.width - max(ind, len(label)))
        lines = [ln for ln in body.wrap(self._measure, room, overflow="fold")] or [Text("")]
        cut = max_lines is not None and len(lines) > max_lines
        if cut:
            lines = lines[:max_lines]
        out = []
        for k, ln in enumerate(lines):
            ln = ln.copy()
            ln.rstrip()
            if cut and k == len(lines) - 1:
                if ln.cell_len >= room:
                    ln.truncate(room - 1)
                    ln.rstrip()
                ln.append("…")
            out.append((Text(label, style="bold") if k == 0 else Text(" " * ind)) + ln)
        return out

    def table(self, t: Table, indent: int = 0) -> list[Text]:
        """A rich table as lines of text at the width (no trailing padding)."""
        opts = self._measure.options.update_width(self.width - indent)
        out = []
        for segs in self._measure.render_lines(t, opts, pad=False):
            ln = Text(" " * indent)
            for seg in segs:
                ln.append(seg.text, seg.style)
            ln.rstrip()
            out.append(ln)
        return out

    def sev(self, f: Finding) -> Text:
        return Text(f.severity.upper(), style=SEV_STYLE[f.severity])

    def conf(self, f: Finding) -> Text:
        style = "bold yellow" if f.confidence < LOW_CONFIDENCE else ""
        return Text(confidence_text(f.confidence), style=style)

    def title_line(self, i: int, f: Finding, max_lines: int | None = None) -> list[Text]:
        t = Text(f"{i} ") + self.sev(f) + Text(" · ") + self.conf(f) + Text(" · ") + Text(self.s(f.title), style="bold")
        return self.wrap(t, indent=2, max_lines=max_lines)

    def rule(self, label: Text) -> Text:
        t = Text("── ") + label + Text(" ")
        if t.cell_len < self.width:
            t.append("─" * (self.width - t.cell_len), style="dim")
        return t

    # ------------------------------------------------------------------ the first screen

    def header(self) -> list[Text]:
        a = self.a
        first, last = a.span
        files = len([r for r in a.inputs if not r.skipped_input])
        out = self.wrap(
            Text(f"{counts(files, 'log')} · {counts(a.lines, 'line')} · {span_text(first, last, seconds=False)}", style="bold"),
            indent=2,
        )
        if self.short.prefix:
            for part in prefix_lines(visible(self.short.prefix), self.width - 2):
                out += self.wrap(Text(part, style="dim"), indent=2)
        return out

    def warnings(self, room: int = 4) -> list[Text]:
        n = reading_notes(self.a, self.short.path)
        lines: list[Text] = []
        items = []
        if n.clocks:
            items.append(("clocks corrected: " + ", ".join(n.clocks), None))
        items += n.warnings
        shown = 0
        for k, (w, full) in enumerate(items):
            wl = self.wrap(Text(self.s(w)), label="! ", max_lines=2)
            if len(lines) + len(wl) > room - (1 if k < len(items) - 1 else 0):
                lines += self.wrap(Text(f"+{len(items) - shown} more warnings: see Notes below", style="yellow"), label="! ")
                break
            lines += wl
            shown += 1
            if full == w and not wl[-1].plain.endswith("…"):
                self.told.add(full)  # said in full at the top: not again under Notes
        for ln in lines:
            ln.stylize("yellow")
        return lines

    def block(self, i: int, f: Finding, level: int) -> list[Text]:
        out = self.title_line(i, f)
        if level >= 3:
            out += self.wrap(Text(self.s(f.root_cause)), label="  cause  ", max_lines=2)
        if level >= 2 and f.remediation:
            out += self.wrap(Text(now_text(self.s(f.remediation[0]))), label="  now    ", max_lines=2)
        if level >= 3 and f.subjects:
            out += self.wrap(Text(self.on(f)), label="  on     ", max_lines=2)
        return out

    def on(self, f: Finding, top: int = 3) -> str:
        labels, prefix = subj.labels(f, self.short.path)
        s = ", ".join(labels[:top]) + (f" +{len(labels) - top} more" if len(labels) > top else "")
        return s + (f" · in {prefix}" if prefix else "")

    def verdict_set(self) -> list[int]:
        """Indexes of the incidents the first screen is about: medium or worse; without any, the
        worst there are."""
        fs, inc = self.a.findings, self.a.incidents
        sev = [i.severity(fs) for i in inc]
        top = [k for k, s in enumerate(sev) if SEVERITY_RANK[s] <= SEVERITY_RANK["medium"]]
        if top:
            return top
        return [k for k, s in enumerate(sev) if s == sev[0]] if sev else []

    def _where(self) -> str:
        """'in these logs', or 'in the window asked for' with --since/--until (a finding outside it is not shown)."""
        return "in the window asked for (--since/--until)" if self.a.since is not None or self.a.until is not None else "in these logs"

    def said(self, text) -> str:
        """An incident's words (typed times) in the display zone, for a person."""
        from logsleuth.detectors.words import render as render_words

        return self.s(render_words(text, clock.display_clock()))

    def incident_block(self, n: int, level: int) -> list[Text]:
        """An incident: its headline (severity, confidence, the day's times, the cause); at level
        >= 1 what it hit and the action to take now; >= 2 its window and the numbers of its
        findings; >= 3 each of its findings' titles. Rows are wrapped, never cut."""
        fs = self.a.findings
        inc = self.a.incidents[n]
        sev, conf = inc.severity(fs), inc.confidence(fs)
        head = (Text(f"{n + 1} ") + Text(sev.upper(), style=SEV_STYLE[sev]) + Text(" · ")
                + Text(confidence_text(conf), style="bold yellow" if conf < LOW_CONFIDENCE else "") + Text(" · "))
        if inc.first is not None:
            head += Text(_clock(inc.first, inc.last) + " · ")
        head += Text(self.said(inc.headline), style="bold")
        out = self.wrap(head, indent=2)
        if level >= 2 and inc.first is not None:
            out += self.wrap(Text(span_text(inc.first, inc.last, estimated=inc.first_estimated)), label="  when   ")
        if level >= 0 and inc.hit:
            top = 4
            hit = [self.s(h) for h in inc.hit]
            out += self.wrap(Text(", ".join(hit[:top]) + (f" and {len(hit) - top} more" if len(hit) > top else "")), label="  hit    ")
        if level >= 1 and inc.now:
            out += self.wrap(Text(self.said(inc.now)), label="  now    ")
        if level >= 3:
            for k in inc.members:
                f = fs[k]
                out += self.wrap(Text(f"{k + 1} ") + self.sev(f) + Text(" " + self.s(f.title)), label="  · ", indent=4)
        elif level >= 2:
            nums = ", ".join(str(k + 1) for k in inc.members)
            out += self.wrap(Text(f"finding{'s' if len(inc.members) > 1 else ''} {nums} below", style="dim"), label="  seen   ")
        return out

    def first_screen(self) -> list[Text]:
        fs = self.a.findings
        incidents = self.a.incidents
        head = self.header()
        warn = self.warnings()
        out = head + warn + [Text("")]
        if not fs:
            out += self.wrap(Text(f"No findings: no detector recognised an incident {self._where()}" + (f" ({len(self.a.ignored)} finding{'s' if len(self.a.ignored) != 1 else ''} ignored by --ignore)." if self.a.ignored else "."), style="green"))
            return out
        chosen = self.verdict_set()
        levels = {k: 3 for k in chosen}
        rest = len(incidents) - len(chosen)

        def render(blanks: bool) -> list[Text]:
            lines: list[Text] = []
            shown = [k for k in chosen if levels[k] >= 0]
            for m, k in enumerate(shown):
                if blanks and m:
                    lines.append(Text(""))
                lines += self.incident_block(k, levels[k])
            hidden = len(chosen) - len(shown) + rest
            if hidden or len(fs) > 1:
                lines.append(Text(""))
                lines += self.wrap(Text(self.below(chosen, shown), style="dim"))
            return lines

        budget = self.height - len(out)
        others = list(reversed(chosen[1:]))  # the worst incident keeps its whole block longest
        for blanks in (True, False):
            body = render(blanks)
            if len(body) <= budget:
                return out + body
        steps = [(2, others), (1, others), (0, others), (2, chosen[:1]), (-1, others), (1, chosen[:1])]
        for target, which in steps:
            for k in which:
                if levels[k] > target:
                    levels[k] = target
                    body = render(False)
                    if len(body) <= budget:
                        return out + body
        return out + render(False)

    def below(self, chosen: list[int], shown: list[int]) -> str:
        fs, incidents = self.a.findings, self.a.incidents
        others = [i for k, i in enumerate(incidents) if k not in shown]
        n_inc = len(incidents)
        what_inc = f"{n_inc} {'incident' if n_inc == 1 else 'incidents'} from {counts(len(fs), 'finding')}"
        if self.a.ignored:
            what_inc += f" ({len(self.a.ignored)} more ignored by --ignore)"
        if not others:
            return f"{what_inc}: the details of each finding below"
        from collections import Counter

        c = Counter(i.severity(fs) for i in others)
        what = ", ".join(f"{c[s]} {s}" for s in ("critical", "high", "medium", "low", "info") if c[s])
        return f"{what_inc}; +{len(others)} more {'incident' if len(others) == 1 else 'incidents'} ({what}) and the details below"

    # ------------------------------------------------------------------ details

    def details(self, i: int, f: Finding) -> list:
        if f.severity == "info" and not self.verbose:
            return self.title_line(i, f)
        out: list = [self.rule(Text(f"{i} · {f.id} · ") + self.conf(f))]
        out += self.wrap(Text("[") + self.sev(f) + Text("] ") + Text(self.s(f.title), style="bold"), indent=2)
        out += self.wrap(Text(f"seen {span_text(f.first_seen, f.last_seen, estimated=f.start_estimated)}", style="dim"))
        out.append(Text(""))
        out.append(Text("Root cause", style="bold"))
        out += self.wrap(Text(self.s(f.root_cause)), label="  ")
        reasons = f.confidence_reasons if self.verbose else [r for r in f.confidence_reasons if r.startswith("-")]
        if reasons:
            out.append(Text("Confidence" if self.verbose else "Doubts", style="bold"))
            for r in reasons:
                out += self.wrap(Text(self.s(r)), indent=4, label="  ")
        if f.remediation:
            out.append(Text("What to do", style="bold"))
            for n, r in enumerate(f.remediation, 1):
                out += self.wrap(Text(self.s(r)), label=f"  {n}. ")
        if f.evidence:
            shown = f.evidence if self.verbose else f.evidence[:EVIDENCE_SHOWN]
            more = len(f.evidence) - len(shown)
            head = f"Evidence ({len(f.evidence)} lines)" if not more else f"Evidence ({len(shown)} of {len(f.evidence)} lines; -v for all)"
            out.append(Text(head, style="bold"))
            for e in shown:
                loc = Text(f"{self.short.path(e.path)}:{e.line}:", style="magenta")
                if e.note:
                    loc.append(f"  {self.s(e.note)}", style="dim")
                out += self.wrap(loc, indent=4, label="  ")
                text = one_line(e.text, EVIDENCE_CHARS) if self.verbose else self.quote(e, 3)
                out += self.wrap(Text(text), indent=4, label="    ", max_lines=None if self.verbose else 3)
        if f.subjects:
            out += self.subjects(f)
        if self.verbose and f.cause:
            out.append(Text("Cause", style="bold"))
            kv = ", ".join(f"{k}={self.s(_cell(v))}" for k, v in f.cause.items() if v is not None and not isinstance(v, (list, dict)))
            out += self.wrap(Text(kv), label="  ")
        if f.ruled_out:
            out.append(Text("Ruled out", style="bold"))
            for r in f.ruled_out:
                out += self.wrap(Text(self.s(r), style="dim"), label="  - ")
        if f.references:
            out.append(Text("References", style="bold"))
            for r in f.references:
                out += self.wrap(self.reference(self.s(r)), label="  - ")
        out.append(Text(""))
        return out

    def reference(self, r: str) -> Text:
        """A reference with its links: the URL written after each (so a pasted or piped report keeps
        it), the link itself an OSC 8 hyperlink where the terminal shows them (render/links.py)."""
        from rich.style import Style

        from logsleuth.render.links import links

        t = Text(style="dim")
        pos = 0
        for link in links(r):
            t.append(r[pos:link.start])
            t.append(r[link.start:link.end], style=Style(link=link.url))
            shown = link.url[len("file://"):] if link.url.startswith("file://") else link.url
            t.append(f" <{shown}>", style=Style(link=link.url, dim=True))
            pos = link.end
        t.append(r[pos:])
        return t

    def quote(self, e, lines: int) -> str:
        """An evidence line for ``lines`` rows of the screen: when it does not fit, its head (wrapper,
        stamp, thread, logger) is cut before its message is, so the words that prove it stay."""
        text = one_line(e.text, EVIDENCE_CHARS)
        room = lines * (max(20, self.width - 4) - 8)  # what fits (slack for the words wrapping leaves at each line end)
        msg = one_line(e.message) if e.message else ""
        if len(text) <= room or not msg or msg not in text:
            return text
        at = text.find(msg)
        head, rest = text[:at], text[at:]
        keep = room - len(rest) - 2
        if keep >= 12:
            return head[:keep].rstrip() + "… " + rest
        return text[: min(24, len(head))].rstrip() + "… " + rest

    def subjects(self, f: Finding) -> list:
        out: list = [Text(f"Subjects ({len(f.subjects)})", style="bold")]
        if self.verbose:
            for s in f.subjects:
                kv = ", ".join(f"{k}={self.s(_cell(v))}" for k, v in s.items() if v is not None and not isinstance(v, (list, dict)))
                out += self.wrap(Text(kv), label="  - ")
            return out
        t = subj.Table(f, width=self.width - 2, short=self.short.path, limit=SUBJECTS_SHOWN)
        if t.shared:
            out += self.wrap(Text("all: " + " · ".join(f"{h} {v}" for h, v in t.shared), style="dim"), indent=4, label="  ")
        if t.columns:
            tab = Table(box=None, pad_edge=False, header_style="bold dim", padding=(0, 2, 0, 0))
            for c in t.columns:
                tab.add_column(c, overflow="fold")
            for row in t.rows:
                tab.add_row(*(Text(v) for v in row))
            out += self.table(tab, indent=2)
        tail = []
        if t.more:
            tail.append(f"+{t.more} more")
        if t.rest:
            tail.append("-v or --format json for " + ("all fields" if len(t.rest) > 4 else ", ".join(t.rest)))
        if tail:
            out += self.wrap(Text("; ".join(tail), style="dim"), indent=4, label="  ")
        return out

    # ------------------------------------------------------------------ inputs, notes, summary

    def inputs(self) -> list:
        out: list = [self.rule(Text("inputs", style="bold"))]
        heads = ["log", "layout", "lines", "events", clock.abbr(self.a.span[0])] + (["zone"] if self.verbose else [])
        rows = [row[:4] + [_clock(r.first_ts, r.last_ts) if not r.skipped_input else ""] + (row[6:] if self.verbose else [])
                for r, row in zip(self.a.inputs, input_rows(self.a, self.short.path))]
        # the columns as read logs fill them (an unread log's reason wraps at its words like any cell)
        read = [x for x in rows if x[2]] or rows
        widths = [max(cell_len(h), *(cell_len(x[i]) for x in (rows if i == 0 else read))) if rows else cell_len(h) for i, h in enumerate(heads)]
        if sum(widths) + 2 * (len(widths) - 1) > self.width:
            out += self._inputs_stacked(heads, rows)  # a name that does not fit is never cut: one on its own line
        else:
            t = Table(box=None, pad_edge=False, header_style="bold dim", padding=(0, 2, 0, 0))
            for c in heads:
                t.add_column(c, overflow="fold", justify="right" if c in ("lines", "events") else "left")
            for row in rows:
                t.add_row(*(Text(v) for v in row))
            out += self.table(t)
        n = reading_notes(self.a, self.short.path)
        full = [w for _, w in n.warnings if w not in self.told]
        if full or n.routine:
            out.append(Text(""))
            out.append(Text("Notes", style="bold"))
            for w in full:
                out += self.wrap(Text(self.s(w), style="yellow"), label="  ! ")
            if self.verbose:
                for w in n.routine:
                    out += self.wrap(Text(self.s(w), style="dim"), label="  - ")
            elif n.routine:
                out += self.wrap(Text(f"{counts(len(n.routine), 'routine note')} (clocks in step or corrected, rotated logs joined): -v shows {'it' if len(n.routine) == 1 else 'them'}", style="dim"), label="  ")
        out.append(Text(""))
        return out

    def _inputs_stacked(self, heads: list[str], rows: list[list[str]]) -> list[Text]:
        """The inputs when a log's name and its columns do not fit the width: each name whole on
        its own line, what was read of it on the next ('kafka-log4j · 841 lines · 705 events ·
        13:30–13:54 UTC')."""
        out: list[Text] = []
        zone = heads[4]
        for row in rows:
            name, layout, lines, events, when, *rest = row
            out += self.wrap(Text(name))
            if not lines:  # unread or skipped: the reason is in the layout cell
                bits = [layout]
            else:
                bits = [layout, f"{lines} {'line' if lines == '1' else 'lines'}", f"{events} {'event' if events == '1' else 'events'}",
                        f"{when} {zone}" if when and "no times" not in when else when]
            bits += [f"zone {z}" for z in rest if z]
            out += self.wrap(Text(" · ".join(b for b in bits if b), style="dim"), label="    ", indent=4)
        return out

    def summary(self) -> list[Text]:
        a = self.a
        reduction = (1 - a.events.height / a.lines) * 100 if a.lines else 0.0
        files = len([r for r in a.inputs if not r.skipped_input])
        took = f" in {self.elapsed:.1f} s" if self.elapsed is not None else ""
        out = [self.rule(Text(f"summary · logsleuth {__version__}", style="bold"))]
        out += self.wrap(Text(f"read {counts(files, 'log')}, {counts(a.lines, 'line')}, {counts(a.events.height, 'event')} ({reduction:.1f}% reduction){took}"), indent=2)
        out += self.wrap(Text(f"span {span_text(*a.span)}"), indent=2)
        if not a.findings:
            if a.ignored:
                out += self.wrap(Text(f"ignored (--ignore): {ignored_text(a)}", style="dim"), indent=2)
            out += self.wrap(Text(f"no findings: no detector recognised an incident {self._where()}" + (" besides the ignored" if a.ignored else ""), style="green"), indent=2)
            return out
        if a.ignored:
            out += self.wrap(Text(f"ignored (--ignore): {ignored_text(a)}", style="dim"), indent=2)
        out += self.wrap(Text(f"findings: {severity_counts(a)}, worst first:"), indent=2)
        room = 6
        listed: list[Text] = []
        for k, f in enumerate(a.findings):
            lines = self.title_line(k + 1, f, max_lines=2 if k else None)
            rest = len(a.findings) - k - 1
            if k and len(listed) + len(lines) + (1 if rest else 0) > room:
                listed += self.wrap(Text(f"+{len(a.findings) - k} more above", style="dim"), indent=2)
                break
            listed += lines
        out += listed
        worst = a.incidents[0] if a.incidents else None
        if worst is not None and worst.now:
            out += self.wrap(Text(self.said(worst.headline)), label="→ incident 1: ")
            out += self.wrap(Text(self.said(worst.now)), label="→ now: ")
        return out

    def all(self) -> list:
        out: list = self.first_screen() + [Text("")]
        for i, f in enumerate(self.a.findings, 1):
            out += self.details(i, f)
        if any(f.severity == "info" for f in self.a.findings) and not self.verbose:
            out.append(Text("(info findings in one line each: -v shows them in full)", style="dim"))
            out.append(Text(""))
        out += self.inputs()
        out += self.summary()
        return out


def now_text(action: str) -> str:
    """The first remediation as the action to take now ('Now: restart …' loses its 'Now: ')."""
    return action[5:].lstrip()[:1].upper() + action[5:].lstrip()[1:] if action.lower().startswith("now: ") else action


def _clock(first, last) -> str:
    """'22:00–01:29' (a day's times in the display zone; the headline has the dates)."""
    if first is None:
        return "no times"
    a = clock.clock(first, seconds=False)
    return a if last is None else f"{a}–{clock.clock(last, seconds=False)}"


# ----------------------------------------------------------------------------- entry points


def render(a: Analysis, con: Console, height: int = SCREEN, verbose: bool = False, elapsed: float | None = None) -> None:
    v = View(a, width=con.width, height=height, verbose=verbose, elapsed=elapsed)
    for part in v.all():
        con.print(part, overflow="fold", crop=False) if not isinstance(part, Text) else con.print(part, no_wrap=True, overflow="ignore", crop=False)


def terminal(a: Analysis, con: Console, height: int | None = None, verbose: bool = False, elapsed: float | None = None) -> None:
    render(a, con, height or con.size.height or SCREEN, verbose, elapsed)


def text(a: Analysis, width: int = 100, verbose: bool = False, elapsed: float | None = None) -> str:
    buf = io.StringIO()
    con = SafeConsole(file=buf, width=width, markup=False, emoji=False, highlight=False, color_system=None, force_terminal=False, legacy_windows=False)
    render(a, con, SCREEN, verbose, elapsed)
    return "\n".join(ln.rstrip() for ln in buf.getvalue().splitlines()) + "\n"
