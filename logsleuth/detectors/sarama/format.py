"""How sarama.retry-redial-stall shows a setting (``fmt_setting``: Net.DialTimeout=5s, Producer.Retry.Max=1),
a number of seconds (``fmt_s``), the brokers a chain names (``brokers_text``) and its time budget
(``where_time_went``): plain strings with no time in them, registered as filters of the finding's
words (stall.py); counts use ``base.plural``.
"""

from __future__ import annotations

from logsleuth.detectors.base import plural, safe


def fmt_setting(key: str, value) -> str:
    if key in ("Metadata.Retry.Max", "Producer.Retry.Max", "Net.MaxOpenRequests"):
        return f"{key}={int(value)}"
    v = float(value)
    if v < 1 and v > 0:
        return f"{key}={round(v * 1000)}ms"
    return f"{key}={v:g}s"


def fmt_s(v: float | None, coarse: bool = False) -> str:
    if v is None:
        return "unknown"
    v = float(v) + 1e-9  # 126.85 is 126.8499999...: show it as people round
    if coarse:
        return f"{v:.0f} s"
    if v < 1:
        return f"{v * 1000:.0f} ms"
    return f"{v:.1f} s" if v < 1000 else f"{v:.0f} s"




def settings_text(settings: dict | None) -> str:
    """'Net.DialTimeout=5s, Producer.Retry.Max=1'."""
    return ", ".join(fmt_setting(k, v) for k, v in (settings or {}).items())


def brokers_text(seen: dict) -> str:
    """'several brokers (kafka-1:9092, kafka-2:9092; broker ids 1, 2)'."""
    parts = []
    if seen["addresses"]:
        parts.append(", ".join(safe(a) for a in seen["addresses"]))
    if seen["nodes"]:
        parts.append(("broker id " if len(seen["nodes"]) == 1 else "broker ids ") + ", ".join(str(n) for n in seen["nodes"]))
    return "several brokers (" + "; ".join(parts) + ")"


def _budget_part(bgt: dict, coarse: bool, figure: bool) -> str | None:
    k, n, secs, each = bgt["component"], bgt["count"], bgt["seconds"], bgt["each_seconds"]
    if k == "idle":
        return f"{fmt_s(secs, coarse)} {bgt['label']}"
    if k in ("before_log", "unseen"):
        return f"{fmt_s(secs, coarse and not figure)} {bgt['label']}"
    if k == "other":
        return f"{fmt_s(secs, coarse)} between other lines" if secs >= (1.0 if coarse else 0.05) else None
    if k == "dial_refused":
        return f"{plural(n, 'refused dial')} (≈0 s each)"
    if k == "dial_connected":
        return f"{plural(n, 'dial')} that connected late ({fmt_s(secs, coarse)}: the broker reachable again)"
    each_txt = f" of ≈{fmt_s(each, coarse and each >= 1)}" if each is not None else ""
    total = n * each if (coarse and each is not None) else secs
    total_txt = f" ({fmt_s(total, coarse and total >= 1)})" if n > 1 else ""
    return f"{plural(n, bgt['label'])}{each_txt}{total_txt}"


def where_time_went(view: dict) -> str:
    """The budget table in words, one part per component ('no gaps' when none): ``view`` holds the
    budget rows, whether the stamps are 1-second ones and whether the application gave its own figure."""
    parts = [_budget_part(b, view["coarse"], view["figure"]) for b in view["budget"]]
    return "; ".join(p for p in parts if p is not None) or "no gaps"
