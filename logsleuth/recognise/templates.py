"""What else changed: the log messages no pack recognises, reduced to templates, and the templates
whose rate in the incident window differs most from the baseline before it.

A template is a record's first message line with its variable parts masked, in Polars
expressions: topics (``persistent://…``) and IP addresses (with ports) become ``<topic>`` and
``<ip>``; every other token that holds a digit — a UUID, a hex id, a request id that mixes letters
and digits (``req-7f3a9c``, ``a1b2c3d4``), a number — is one placeholder, ``<*>`` (a line's ids are
masked whole, not digit by digit, so one statement is one template). Records are counted per (logger,
template, minute) while the files are read, so memory does not grow with the input; a Drain-style
miner is not used (the masks already collapse the variable parts of these logs; see
docs/reports.md).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import polars as pl

from logsleuth.recognise.matcher import Matcher

ID = "<*>"
MASKS = [
    (r"(?:non-)?persistent://[^\s\]\),}'\"]+", "<topic>"),
    (r"/?\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b", "<ip>"),
    # a token with a digit in it (UUIDs, hex and mixed ids, numbers, 1.5 and 1,024): one placeholder
    (r"\b[A-Za-z_\-]*[0-9][A-Za-z0-9_\-]*(?:[.,:][A-Za-z0-9_\-]+)*\b", ID),
]
MIN_INCIDENT = 3  # a template needs at least this many records in the incident window to be ranked


def template_expr(col: str = "msg") -> pl.Expr:
    e = pl.col(col).str.extract(r"^([^\n]*)", 1).str.slice(0, 300)
    for pat, rep in MASKS:
        e = e.str.replace_all(pat, rep)
    return e


def reducer(matcher: Matcher):
    """A ``read_source(reduce=...)`` function: unrecognised records -> counts per (logger,
    template, minute) with the first line and text as the example."""

    def reduce(recs: pl.DataFrame) -> pl.DataFrame:
        cand = recs.filter(pl.col("_selected"))
        matched = matcher.match(cand.drop("_selected"))["line"] if cand.height else pl.Series("line", [], dtype=pl.Int64)
        rest = recs.filter(~pl.col("line").is_in(matched.implode()))
        return (
            rest.with_columns(
                template=template_expr(),
                _ts_aware=pl.col("_ts_aware").dt.truncate("1m"),
                _ts_naive=pl.col("_ts_naive").dt.truncate("1m"),
                env_ts=pl.col("env_ts").dt.truncate("1m"),
            )
            .group_by("logger", "template", "_ts_aware", "_ts_naive", "env_ts", maintain_order=True)
            .agg(count=pl.len(), line=pl.col("line").min(), example=pl.col("raw").first(), level=pl.col("level").first())
        )

    return reduce


@dataclass
class Change:
    logger: str | None
    template: str
    incident: int
    baseline: int
    incident_rate: float  # per minute
    baseline_rate: float
    score: float
    path: str
    line: int
    example: str
    level: str | None

    def to_json(self) -> dict:
        return {
            "logger": self.logger, "template": self.template, "incident": self.incident, "baseline": self.baseline,
            "incident_per_min": round(self.incident_rate, 3), "baseline_per_min": round(self.baseline_rate, 3),
            "score": round(self.score, 2), "path": self.path, "line": self.line, "example": self.example, "level": self.level,
        }


def collect(inputs: list) -> pl.DataFrame:
    """All inputs' template counts as one frame {path, logger, template, ts (minute), count, line, example, level}."""
    parts = []
    for rep in inputs:
        if rep.reduced is not None and rep.reduced.height:
            parts.append(rep.reduced.with_columns(path=pl.lit(rep.name)))
    if not parts:
        return pl.DataFrame(schema={"path": pl.String, "logger": pl.String, "template": pl.String, "ts": pl.Datetime("us", "UTC"), "count": pl.UInt32, "line": pl.Int64, "example": pl.String, "level": pl.String})
    return pl.concat(parts, how="diagonal_relaxed")


MIN_BASELINE = dt.timedelta(minutes=5)  # a file needs this much baseline of its own to be compared


def changes(
    counts: pl.DataFrame,
    window: tuple[dt.datetime, dt.datetime],
    baseline: tuple[dt.datetime, dt.datetime],
    top: int = 10,
    spans: dict[str, tuple[dt.datetime, dt.datetime]] | None = None,
) -> list[Change]:
    """Templates ranked by how much more often they occur in ``window`` than in ``baseline``, each
    against its own file: the minutes compared are those the file covers, and a file without at
    least MIN_BASELINE of baseline is not compared (a new file is not a change)."""
    if counts.height == 0:
        return []
    w0, w1 = window
    b0, b1 = baseline
    minutes = []
    for path in counts["path"].unique().to_list():
        f, l = (spans or {}).get(path, (b0, w1))
        wm = (min(w1, l) - max(w0, f)).total_seconds() / 60
        bm = (min(b1, l) - max(b0, f)).total_seconds() / 60
        if bm * 60 >= MIN_BASELINE.total_seconds() and wm > 0:
            minutes.append((path, max(wm, 1.0), bm))
    if not minutes:
        return []
    mins = pl.DataFrame(minutes, schema={"path": pl.String, "wm": pl.Float64, "bm": pl.Float64}, orient="row")
    inside = pl.col("ts").is_between(w0, w1)
    before = pl.col("ts").is_between(b0, b1, closed="left")
    agg = (
        counts.join(mins, on="path").sort("ts").group_by("path", "logger", "template", maintain_order=True)
        .agg(
            incident=pl.col("count").filter(inside).sum(),
            baseline=pl.col("count").filter(before).sum(),
            line=pl.col("line").first(),
            example=pl.col("example").first(),
            level=pl.col("level").first(),
            # where it was first seen inside the window
            wm=pl.col("wm").first(),
            bm=pl.col("bm").first(),
            w_path=pl.col("path").filter(inside).first(),
            w_line=pl.col("line").filter(inside).first(),
            w_example=pl.col("example").filter(inside).first(),
        )
        .filter(pl.col("incident") >= MIN_INCIDENT)
        .with_columns(
            ir=pl.col("incident") / pl.col("wm"),
            br=pl.col("baseline") / pl.col("bm"),
        )
        .with_columns(score=(pl.col("ir") + 1 / pl.col("wm")) / (pl.col("br") + 1 / pl.col("bm")))
        .filter(pl.col("score") > 1.5)
        .sort(["score", "incident", "template"], descending=[True, True, False])
        .head(top)
    )
    return [
        Change(r["logger"], r["template"], int(r["incident"]), int(r["baseline"]), float(r["ir"]), float(r["br"]), float(r["score"]),
               r["w_path"] or r["path"], int(r["w_line"] or r["line"]), r["w_example"] or r["example"], r["level"])
        for r in agg.iter_rows(named=True)
    ]


def incident_window(findings: list, span: tuple[dt.datetime | None, dt.datetime | None]) -> tuple[tuple, tuple] | None:
    """The incident window (the worst finding's start, up to an hour on) and the baseline before it."""
    first, last = span
    if first is None or last is None:
        return None
    worst = next((f for f in findings if f.severity != "info" and f.first_seen), None)
    if worst is not None:
        start = worst.first_seen - dt.timedelta(minutes=2)
        end = min((worst.last_seen or start) + dt.timedelta(minutes=2), start + dt.timedelta(hours=1))
        end = max(end, start + dt.timedelta(minutes=10))
    else:  # no incident found: the last fifth of the span against what came before
        start = last - (last - first) / 5
        end = last
    if start <= first:
        return None
    return (start, end), (first, start)
