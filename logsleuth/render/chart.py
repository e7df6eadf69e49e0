"""The report's timeline chart, drawn with matplotlib (the optional ``report`` extra): event rates
per kind over time, vertical markers at the causes (unloads, outages, stalls) and shaded windows
for the findings' periods (stuck, expired, stalled). Without matplotlib, :func:`available` is
False and the reports show a text sparkline table instead (render/html.py, render/markdown.py).

Text on the chart comes from event names and finding ids (pack and detector data), never from log
lines; matplotlib's SVG writer escapes it.
"""

from __future__ import annotations

import datetime as dt
import io

from logsleuth.findings import Analysis
from logsleuth.detectors.finding import SEVERITY_RANK
from logsleuth.timeline.histogram import bucket_label, histogram

COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]
SHADE = {"critical": "#d62728", "high": "#ff7f0e", "medium": "#bcbd22", "low": "#17becf", "info": "#cccccc"}


def available() -> bool:
    try:
        import matplotlib  # noqa: F401

        return True
    except ImportError:
        return False


def draw(a: Analysis, fmt: str = "svg", kinds: int = 8) -> bytes | None:
    """The chart as SVG or PNG bytes (None when there is nothing to draw)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.dates as mdates
    import matplotlib.pyplot as plt

    h = histogram(a.events, top=kinds, target=120)
    if h is None:
        return None
    plt.rcParams["svg.fonttype"] = "none"
    fig, ax = plt.subplots(figsize=(11, 4.2), dpi=110)
    times = [h.start + dt.timedelta(seconds=i * h.bucket_s) for i in range(h.n)]
    per_min = 60.0 / h.bucket_s
    for i, (name, total, series) in enumerate(h.rows):
        ax.step(times, [v * per_min for v in series], where="post", color=COLORS[i % len(COLORS)], linewidth=1.4, label=f"{name} ({total:,})")
    for f in sorted(a.findings, key=lambda f: -SEVERITY_RANK[f.severity]):
        if f.first_seen and f.last_seen and f.severity != "info" and f.last_seen > f.first_seen:
            ax.axvspan(f.first_seen, f.last_seen, color=SHADE[f.severity], alpha=0.10, linewidth=0)
    seen: set[str] = set()
    for m in h.markers:
        lab = m["label"] if m["label"] not in seen else None
        seen.add(m["label"])
        ax.axvline(m["ts"], color="#444444", linestyle="--", linewidth=0.9, alpha=0.8, label=f"▲ {lab}" if lab else None)
    ax.set_ylabel(f"events per minute ({bucket_label(h.bucket_s)} buckets)")
    ax.set_yscale("symlog", linthresh=1)
    ax.xaxis.set_major_formatter(mdates.DateFormatter("%m-%d %H:%M", tz=dt.timezone.utc))
    ax.set_xlabel("time (UTC); shaded: the findings' periods; dashed: causes")
    ax.grid(True, alpha=0.25)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    fig.autofmt_xdate()
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, metadata={"Date": None} if fmt == "svg" else None)
    plt.close(fig)
    return buf.getvalue()
