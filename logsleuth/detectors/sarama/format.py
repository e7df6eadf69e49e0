"""How sarama.retry-redial-stall shows a setting (``fmt_setting``: Net.DialTimeout=5s, Producer.Retry.Max=1),
and a number of seconds (``fmt_s``); counts use ``base.plural``.
"""

from __future__ import annotations


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


