"""sarama.retry-redial-stall's verdict (sarama.retry-redial-stall.toml beside this module) and the
filters its words use: plain strings without times (format.py) and the spans of times of day. Its
own module so that the mechanism's stages read the thresholds they apply (app_only.py: the least a
stall read from the application's lines alone must show) without importing the detector.
"""

from __future__ import annotations

from logsleuth.detectors.base import plural
from logsleuth.detectors.sarama.format import brokers_text, fmt_s, fmt_setting, settings_text, where_time_went
from logsleuth.detectors.verdict import Verdict
from logsleuth.detectors.words import TimesOfDay

VERDICT = Verdict.load(__file__, "sarama.retry-redial-stall")


def _span(p, sep: str = " → ") -> TimesOfDay | None:
    """Two times of day: a (from, to) pair, or a breaker period's {from, to}."""
    if not p:
        return None
    a, b = (p["from"], p["to"]) if isinstance(p, dict) else p
    return TimesOfDay(a, b, sep)


VERDICT.filters.update({
    "s": lambda v, whole=0: fmt_s(v, bool(whole)),
    "settings": settings_text,
    "g": lambda v: None if v is None else f"{v:g}",
    "brokers": brokers_text,
    "span": _span,
    "where": where_time_went,
    "label_count": lambda b: None if not b else plural(b["count"], b["label"]),
    "setting_value": lambda d: None if not d else fmt_setting(d["setting"], d["value_s"]),
})
