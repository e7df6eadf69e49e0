"""The timeline chart (render/chart.py) as SVG, written as text: no plotting library, no scripts, no
fonts or images from outside; it prints, and it reads the same inline in the HTML report, beside a
Markdown report, or alone (``timeline --chart FILE.svg``). Every string in it (subject labels come
from log lines) is escaped for XML."""

from __future__ import annotations

import datetime as dt
import re
from html import escape

from logsleuth.detectors.base import fmt_duration
from logsleuth.render import clock
from logsleuth.render.chart import CAUSES, SEV_COLOR, Chart, Marker
from logsleuth.safe import visible

W = 960
LEFT = 290
RIGHT = 18
PW = W - LEFT - RIGHT
LANE_H = 20
RATE_H = 15
FONT = "DejaVu Sans, Verdana, Helvetica, Arial, sans-serif"
_XML_BAD = re.compile("[\ufffe\uffff\ud800-\udfff]")
STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800]


def esc(s: object) -> str:
    return escape(_XML_BAD.sub(lambda m: f"\\u{ord(m.group(0)):04x}", visible(str(s))), quote=True)


def fit(s: str, px: float, size: float = 11) -> str:
    """``s`` cut with '…' to about ``px`` pixels of text at ``size``."""
    n = max(4, int(px / (size * 0.6)))
    return s if len(s) <= n else s[: n - 1] + "…"


class _Scale:
    def __init__(self, t0: dt.datetime, t1: dt.datetime, x0: float, width: float):
        self.t0, self.t1, self.x0, self.w = t0, t1, x0, width
        self.span = max((t1 - t0).total_seconds(), 1e-6)

    def __call__(self, t: dt.datetime) -> float:
        return self.x0 + self.w * (t - self.t0).total_seconds() / self.span

    def clamp(self, t: dt.datetime) -> float:
        return min(self.x0 + self.w, max(self.x0, self(t)))


def _ticks(t0: dt.datetime, t1: dt.datetime) -> tuple[list[dt.datetime], int]:
    span = (t1 - t0).total_seconds()
    step = next((s for s in STEPS if span / s <= 8), STEPS[-1])
    off = int(clock.local(t0).utcoffset().total_seconds())  # ticks on round times of the display zone
    first = dt.datetime.fromtimestamp((int(t0.timestamp() + off) // step + 1) * step - off, tz=dt.timezone.utc)
    out = []
    t = first
    while t <= t1 and len(out) < 20:
        out.append(t)
        t += dt.timedelta(seconds=step)
    return out, step


def _clock(t: dt.datetime, step: float) -> str:
    return clock.clock(t, seconds=step < 60)


def _shape(m: Marker, x: float, y: float, r: float = 5.5) -> str:
    c = m.color
    if m.shape == "triangle":
        return f'<polygon points="{x - r:.1f},{y - r:.1f} {x + r:.1f},{y - r:.1f} {x:.1f},{y + r:.1f}" fill="{c}"/>'
    if m.shape == "diamond":
        return f'<polygon points="{x:.1f},{y - r:.1f} {x + r:.1f},{y:.1f} {x:.1f},{y + r:.1f} {x - r:.1f},{y:.1f}" fill="{c}"/>'
    if m.shape == "cross":
        return (f'<path d="M{x - r:.1f},{y - r:.1f} L{x + r:.1f},{y + r:.1f} M{x - r:.1f},{y + r:.1f} L{x + r:.1f},{y - r:.1f}" '
                f'stroke="{c}" stroke-width="2.4"/>')
    if m.shape == "square":
        return f'<rect x="{x - r + 1:.1f}" y="{y - r + 1:.1f}" width="{2 * r - 2:.1f}" height="{2 * r - 2:.1f}" fill="{c}"/>'
    return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r - 0.5:.1f}" fill="{c}"/>'


def _when(t: dt.datetime, millis: bool = True) -> str:
    s = clock.clock(t)
    return s + (f".{t.microsecond // 1000:03d}" if millis else "")


def draw(c: Chart, standalone: bool = False) -> str:
    w0, w1 = c.window
    x = _Scale(w0, w1, LEFT, PW)
    out: list[str] = []
    y = 8
    # ---------------------------------------------------------------- overview: the whole span
    ov = _Scale(c.span[0], c.span[1], LEFT, PW)
    oh = 18
    out.append(f'<g class="overview"><text x="8" y="{y + 13}" font-size="11" fill="#555">{esc(fit("whole logs " + _brief(*c.span), LEFT - 16))}</text>')
    out.append(f'<rect x="{LEFT}" y="{y}" width="{PW}" height="{oh}" fill="#f3f3f3"/>')
    top = max(c.overview) or 1
    bw = PW / max(1, len(c.overview))
    for k, v in enumerate(c.overview):
        if v:
            h = max(1.0, (oh - 5) * v / top)
            out.append(f'<rect x="{LEFT + k * bw:.1f}" y="{y + oh - 5 - h:.1f}" width="{max(bw, 0.8):.1f}" height="{h:.1f}" fill="#9aa5ab"/>')
    for p0, p1, sev in c.periods:
        x0, x1 = ov.clamp(p0), ov.clamp(p1)
        out.append(f'<rect x="{x0:.1f}" y="{y + oh - 4}" width="{max(2.0, x1 - x0):.1f}" height="4" fill="{SEV_COLOR[sev]}"/>')
    zx0, zx1 = ov.clamp(w0), ov.clamp(w1)
    out.append(f'<rect class="zoom" x="{zx0:.1f}" y="{y - 1}" width="{max(2.0, zx1 - zx0):.1f}" height="{oh + 2}" fill="none" stroke="#263238" stroke-width="1.4"/>')
    out.append("</g>")
    y += oh + 6
    if c.zoomed:
        out.append(f'<path d="M{zx0:.1f},{y - 5} L{LEFT},{y + 6} M{zx1:.1f},{y - 5} L{LEFT + PW},{y + 6}" stroke="#90a4ae" stroke-width="0.8" fill="none"/>')
    y += 10

    # ---------------------------------------------------------------- cause markers: letters, staggered
    levels: list[float] = []
    placed = []
    for m in c.markers:
        mx = x.clamp(m.ts)
        lvl = next((k for k, last in enumerate(levels) if mx - last >= 26), None)
        if lvl is None:
            lvl = len(levels)
            levels.append(-1e9)
        levels[lvl] = mx
        placed.append((m, mx, lvl))
    row_h = 15 * max(1, len(levels))
    out.append(f'<text x="8" y="{y + 12}" font-size="11" fill="#555">causes (see the key below)</text>' if c.markers else "")
    lanes_top = y + row_h + 4
    lanes_bottom = lanes_top + LANE_H * (len(c.lanes) + (1 if c.more_lanes else 0))
    if not c.lanes:
        lanes_bottom = lanes_top + LANE_H
    # lane backgrounds first, markers' lines over them, bars on top
    for k in range(len(c.lanes) + (1 if c.more_lanes else 0)):
        if k % 2 == 0:
            out.append(f'<rect x="0" y="{lanes_top + k * LANE_H}" width="{W}" height="{LANE_H}" fill="#f7f9fa"/>')
    ticks, step = _ticks(w0, w1)
    for t in ticks:
        out.append(f'<line x1="{x(t):.1f}" y1="{lanes_top}" x2="{x(t):.1f}" y2="{lanes_bottom}" stroke="#e0e0e0" stroke-width="1"/>')
    for m, mx, lvl in placed:
        my = y + 7 + 15 * lvl
        band = ""
        if m.end is not None and x.clamp(m.end) - mx >= 2:
            ex = x.clamp(m.end)
            band = (f'<rect x="{mx:.1f}" y="{lanes_top}" width="{ex - mx:.1f}" height="{lanes_bottom - lanes_top}" fill="{m.color}" opacity="0.08"/>'
                    f'<line x1="{ex:.1f}" y1="{lanes_top}" x2="{ex:.1f}" y2="{lanes_bottom}" stroke="{m.color}" stroke-width="1.2" stroke-dasharray="2,3"/>')
        out.append(
            f'<g class="marker" data-kind="{esc(m.kind)}" data-letter="{m.letter}">{band}'
            f'<line x1="{mx:.1f}" y1="{my + 6:.1f}" x2="{mx:.1f}" y2="{lanes_bottom}" stroke="{m.color}" stroke-width="1.3" stroke-dasharray="5,3"/>'
            f"{_shape(m, mx, my)}"
            f'<text x="{mx + 8:.1f}" y="{my + 4:.1f}" font-size="11" font-weight="bold" fill="{m.color}">{m.letter}</text>'
            f"<title>{esc(m.letter + ' ' + _when(m.ts) + ' ' + m.kind + (' ' + m.detail if m.detail else ''))}</title></g>"
        )

    # ---------------------------------------------------------------- lanes
    for k, lane in enumerate(c.lanes):
        ly = lanes_top + k * LANE_H
        col = SEV_COLOR[lane.severity]
        tag = f"{lane.finding} {lane.severity.upper()}"
        out.append(f'<g class="lane" data-finding="{lane.finding}" data-severity="{lane.severity}">')
        out.append(f'<text x="8" y="{ly + 14}" font-size="11" font-weight="bold" fill="{col}">{lane.finding}</text>')
        out.append(f'<text x="24" y="{ly + 14}" font-size="11" fill="#212121">{esc(fit(lane.label, LEFT - 32))}<title>{esc(lane.label)}</title></text>')
        if lane.start is None:
            out.append(f'<text x="{LEFT + 4}" y="{ly + 14}" font-size="10" fill="#777" font-style="italic">{esc(tag)}: no times</text>')
        elif lane.outside:
            out.append(
                f'<text x="{LEFT + 4}" y="{ly + 14}" font-size="10" fill="{col}" font-style="italic">'
                f"{esc(tag)} {esc(_span(lane.start, lane.end or lane.start))}: outside this window (see the overview)</text>"
            )
        else:
            bx0, bx1 = x.clamp(lane.start), x.clamp(lane.end or lane.start)
            if lane.ongoing:
                bx1 -= 7
            width = max(3.0, bx1 - bx0)
            dur = fmt_duration(((lane.end or lane.start) - lane.start).total_seconds())
            what = f"{tag}: {lane.label}, {_span(lane.start, lane.end or lane.start)}" + (" (still affected at the end of the logs)" if lane.ongoing else "")
            out.append(f'<rect class="bar" x="{bx0:.1f}" y="{ly + 3}" width="{width:.1f}" height="{LANE_H - 6}" rx="2" fill="{col}"><title>{esc(what)}</title></rect>')
            text = f"{tag} · {dur}" + (" · still at the end" if lane.ongoing else "")
            if width >= len(text) * 6 + 8:
                out.append(f'<text x="{bx0 + 4:.1f}" y="{ly + 14}" font-size="10" font-weight="bold" fill="#ffffff">{esc(text)}</text>')
            elif bx1 + 8 + len(text) * 6 <= LEFT + PW:
                out.append(f'<text x="{bx0 + width + 4:.1f}" y="{ly + 14}" font-size="10" font-weight="bold" fill="{col}">{esc(text)}</text>')
            else:
                out.append(f'<text x="{bx0 - 4:.1f}" y="{ly + 14}" font-size="10" font-weight="bold" fill="{col}" text-anchor="end">{esc(text)}</text>')
            if lane.ongoing:
                ex = bx0 + width
                out.append(f'<polygon points="{ex:.1f},{ly + 2} {ex + 7:.1f},{ly + LANE_H / 2:.1f} {ex:.1f},{ly + LANE_H - 2}" fill="{col}"/>')
        out.append("</g>")
    if c.more_lanes:
        ly = lanes_top + len(c.lanes) * LANE_H
        out.append(f'<text x="84" y="{ly + 14}" font-size="11" fill="#555">+{c.more_lanes} more subjects (see the findings)</text>')
    if not c.lanes:
        out.append(f'<text x="{LEFT + 4}" y="{lanes_top + 14}" font-size="11" fill="#555">no finding with a period to draw</text>')
    y = lanes_bottom

    # ---------------------------------------------------------------- time axis
    out.append(f'<line x1="{LEFT}" y1="{y}" x2="{LEFT + PW}" y2="{y}" stroke="#424242"/>')
    day = None
    for t in ticks:
        tx = x(t)
        out.append(f'<line x1="{tx:.1f}" y1="{y}" x2="{tx:.1f}" y2="{y + 4}" stroke="#424242"/>')
        out.append(f'<text x="{tx:.1f}" y="{y + 15}" font-size="10" text-anchor="middle" fill="#333">{_clock(t, step)}</text>')
        if clock.local(t).date() != day:
            day = clock.local(t).date()
            out.append(f'<text x="{tx:.1f}" y="{y + 26}" font-size="9" text-anchor="middle" fill="#777">{day:%Y-%m-%d}</text>')
    out.append(f'<text x="8" y="{y + 15}" font-size="11" fill="#555">{esc(_span(w0, w1))}</text>')
    y += 34

    # ---------------------------------------------------------------- event rates, each row its own linear scale
    if c.rates:
        out.append(f'<text x="8" y="{y + 10}" font-size="11" fill="#555">events per {esc(fmt_duration(c.bucket_s))} (each row to its own scale)</text>')
        y += 15
        for kind, series in c.rates:
            top = max(series) or 1
            col = CAUSES[kind][2] if kind in CAUSES else "#607d8b"
            out.append(f'<g class="rate" data-event="{esc(kind)}">')
            out.append(f'<text x="14" y="{y + 11}" font-size="10" fill="#333">{esc(fit(kind, LEFT - 80, 10))}</text>')
            out.append(f'<text x="{LEFT - 6}" y="{y + 11}" font-size="9" text-anchor="end" fill="#777">max {top:,}</text>')
            out.append(f'<line x1="{LEFT}" y1="{y + RATE_H - 1}" x2="{LEFT + PW}" y2="{y + RATE_H - 1}" stroke="#e0e0e0"/>')
            bw = PW * c.bucket_s / max((w1 - w0).total_seconds(), 1e-6)
            r0 = c.rate_start or w0
            for k, v in enumerate(series):
                if v:
                    h = max(1.0, (RATE_H - 3) * v / top)
                    bx = x.clamp(r0 + dt.timedelta(seconds=k * c.bucket_s))
                    out.append(f'<rect x="{bx:.1f}" y="{y + RATE_H - 1 - h:.1f}" width="{max(min(bw - 0.3, LEFT + PW - bx), 0.8):.1f}" height="{h:.1f}" fill="{col}"/>')
            out.append("</g>")
            y += RATE_H
        y += 8

    # ---------------------------------------------------------------- key
    if c.markers:
        out.append(f'<text x="8" y="{y + 10}" font-size="11" font-weight="bold" fill="#333">Causes</text>')
        y += 16
        for m in c.markers:
            out.append(_shape(m, 16, y + 5, 5))
            what = f"{m.letter}  {_when(m.ts)}"
            if m.end is not None:
                what += f" → {_when(m.end)}"
            what += f"  {m.kind}"
            if m.count > 1:
                what += f" ×{m.count:,}" + (" (start and end)" if m.end is not None else "")
            if m.detail:
                what += f": {m.detail}"
            out.append(f'<text x="28" y="{y + 9}" font-size="11" fill="#212121">{esc(fit(what, W - 40))}</text>')
            y += 15
        if c.more_markers:
            out.append(f'<text x="28" y="{y + 9}" font-size="11" fill="#555">+{c.more_markers} more cause events (in the rates above)</text>')
            y += 15
    note = "Lanes: one per subject of a finding (its number at the left), the bar when it was affected; ▶ still at the end of the logs."
    if c.prefixes:
        note += " Left out of the labels: " + ", ".join(dict.fromkeys(c.prefixes))
    y += 6
    for line in _lines(note, int((W - 16) / 6)):
        out.append(f'<text x="8" y="{y + 9}" font-size="10" fill="#555">{esc(line)}</text>')
        y += 13
    y += 6
    head = '<?xml version="1.0" encoding="UTF-8"?>\n' if standalone else ""
    n_lanes, n_marks = len(c.lanes) + c.more_lanes, len(c.markers)
    title = (f"Timeline {_span(w0, w1)}: {n_lanes} {'subject' if n_lanes == 1 else 'subjects'}, "
             + (f"{n_marks} {'cause' if n_marks == 1 else 'causes'} marked" if n_marks else "no cause event in this window"))
    return (
        f'{head}<svg xmlns="http://www.w3.org/2000/svg" class="timeline" viewBox="0 0 {W} {y}" width="{W}" height="{y}" '
        f'font-family="{FONT}" role="img" aria-label="{esc(title)}"><title>{esc(title)}</title>'
        f'<rect width="{W}" height="{y}" fill="#ffffff"/>' + "".join(out) + "</svg>\n"
    )


def _lines(text: str, width: int) -> list[str]:
    import textwrap

    return textwrap.wrap(text, width=width, break_long_words=True) or [""]


def _brief(a: dt.datetime, b: dt.datetime) -> str:
    la, lb = clock.local(a), clock.local(b)
    if la.date() == lb.date():
        return clock.span(a, b, seconds=False, duration=False)
    return f"{la:%m-%d %H:%M} → {lb:%m-%d %H:%M} {clock.abbr(b)}"


def _span(a: dt.datetime, b: dt.datetime) -> str:
    return clock.span(a, b, duration=False) if a != b else clock.when(a)


def render(a, standalone: bool = False) -> str | None:
    """The chart of an analysis as SVG text (None: nothing with a time to draw)."""
    from logsleuth.render import chart
    from logsleuth.render.paths import Shortener

    names = [r.name for r in a.inputs] + [s for segs in a.logs.values() for s in segs]
    c = chart.build(a, Shortener(names).path)
    return draw(c, standalone) if c is not None else None
