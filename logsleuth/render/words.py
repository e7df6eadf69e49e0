"""Words for numbers a person reads at a glance: confidence as a word, severity labels, durations
between two times, and counts with the right plural."""

from __future__ import annotations

import datetime as dt

from logsleuth.detectors.base import plural

# (lowest score, word): a finding's confidence in words, so that a CRITICAL at 0.48 does not read
# like one at 0.98 (docs/reports.md)
CONFIDENCE_WORDS = [(0.95, "near certain"), (0.85, "very likely"), (0.7, "likely"), (0.5, "possible"), (0.0, "uncertain")]
LOW_CONFIDENCE = 0.7  # below: the verdict says so, visibly


# how much of a long list a Markdown/HTML report shows (a reconnect storm can make 20,000 stuck
# producers: their names, evidence lines and fields would be a report of tens of MB); the JSON
# output always has every one, and the report says how many are left out and where they are
REPORT_NAMES_MAX = 50  # names in one line (the clients an incident hit)
REPORT_EVIDENCE_MAX = 200  # evidence lines of one finding
REPORT_SUBJECTS_MAX = 500  # rows of "every field of the subjects"


def shown(items: list, limit: int) -> tuple[list, str]:
    """(the first ``limit`` items, and a sentence saying how many more there are and where, or '')."""
    if len(items) <= limit:
        return items, ""
    return items[:limit], f"and {len(items) - limit:,} more (every one in the JSON output: --format json)"


def confidence_word(c: float) -> str:
    return next(w for lo, w in CONFIDENCE_WORDS if c >= lo)


def confidence_text(c: float) -> str:
    """'near certain (0.98)'; below LOW_CONFIDENCE: 'possible (0.55), low confidence'."""
    s = f"{confidence_word(c)} ({c:.2f})"
    return s + (", low confidence" if c < LOW_CONFIDENCE else "")


def span_text(first: dt.datetime | None, last: dt.datetime | None, seconds: bool = True, estimated: bool = False) -> str:
    """'2020-06-01 22:00:00 → 2020-06-02 01:29:59 UTC (3.5 h)' in the display zone: the second date
    is left out on the same day."""
    from logsleuth.render import clock

    return clock.span(first, last, seconds, estimated=estimated)


def counts(n: int, one: str, many: str | None = None) -> str:
    """'1 log', '5 logs', '16,963 lines'."""
    return plural(n, one, many).replace(str(n), f"{n:,}", 1)
