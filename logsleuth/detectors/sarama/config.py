"""sarama's configuration as the user passes it (``--sarama-config``), with sarama's defaults.

Defaults from config.go NewConfig (identical in v1.22.0, v1.27.2 and HEAD; reference §C.2).
Durations use Go's syntax (``30s``, ``250ms``, ``1m30s``; a number without a unit is refused, as Go's
time.ParseDuration does, except 0); values are kept in seconds. Counts (``Producer.Retry.Max``) have no unit.
"""

from __future__ import annotations

import re

from logsleuth.errors import LogsleuthError

DEFAULTS: dict[str, float] = {
    "Net.DialTimeout": 30.0,
    "Net.ReadTimeout": 30.0,
    "Net.WriteTimeout": 30.0,
    "Net.MaxOpenRequests": 5,
    "Metadata.Retry.Max": 3,
    "Metadata.Retry.Backoff": 0.25,
    "Metadata.Timeout": 0.0,  # 0: no overall limit
    "Producer.Timeout": 10.0,
    "Producer.Retry.Max": 3,
    "Producer.Retry.Backoff": 0.1,
}
DURATIONS = {"Net.DialTimeout", "Net.ReadTimeout", "Net.WriteTimeout", "Metadata.Retry.Backoff", "Metadata.Timeout", "Producer.Timeout", "Producer.Retry.Backoff"}
_UNIT = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


class UnitlessDuration(LogsleuthError):
    """A duration without a unit ('250'): Go's time.ParseDuration refuses it (only '0' may go without)."""


def parse_duration(text: str) -> float:
    """Go duration -> seconds ('1m30s', '250ms', '5s'). As in Go's time.ParseDuration, a number
    without a unit is refused, except 0 (people copy ``250 * time.Millisecond`` as '250')."""
    t = text.strip()
    if re.fullmatch(r"\d+(\.\d+)?", t):
        if float(t) == 0:
            return 0.0
        raise UnitlessDuration(f"{text!r} has no unit (e.g. {t}ms or {t}s)")
    parts = re.findall(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)", t)
    if not parts or "".join(n + u for n, u in parts) != t:
        raise LogsleuthError(f"--sarama-config: {text!r} is not a Go duration (e.g. 30s, 250ms, 1m30s)")
    return sum(float(n) * _UNIT[u] for n, u in parts)


def parse_sarama_config(text: str) -> dict[str, float]:
    """'Net.DialTimeout=5s,Producer.Retry.Max=1' -> the full config (defaults filled in), plus
    ``_given``: the keys the user set."""
    cfg: dict = dict(DEFAULTS)
    given = []
    for item in [x for x in re.split(r"[,\s]+", text.strip()) if x]:
        if "=" not in item:
            raise LogsleuthError(f"--sarama-config: {item!r} must be KEY=VALUE (e.g. Net.DialTimeout=5s)")
        key, value = (x.strip() for x in item.split("=", 1))
        match = next((k for k in DEFAULTS if k.lower() == key.lower()), None)
        if match is None:
            raise LogsleuthError(f"--sarama-config: unknown setting {key!r} (known: {', '.join(DEFAULTS)})")
        if match in DURATIONS:
            try:
                cfg[match] = parse_duration(value)
            except UnitlessDuration:
                raise LogsleuthError(
                    f"--sarama-config: {match}={value} has no unit (Go's time.ParseDuration refuses a number "
                    f"without one, except 0): write {value}ms (or {value}s if you meant seconds)"
                ) from None
        else:
            if not re.fullmatch(r"-?\d+", value):
                raise LogsleuthError(f"--sarama-config: {key} needs a whole number, not {value!r}")
            cfg[match] = int(value)
        given.append(match)
    cfg["_given"] = given
    return cfg
