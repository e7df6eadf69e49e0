"""The timing model of a failing sarama SendMessage, measured on the real library (sarama 1.22.1, one
broker that is also the seed; docs/findings/sarama.retry-redial-stall.md): how long a send takes for each
kind of outage (``blackhole``, ``refused``, ``silent``) as a total and its terms per setting, the
formula in words, the setting that weighs most and the change worth making. Settings are sarama's
config keys (``Net.DialTimeout`` …), in seconds / counts. Part of sarama.retry-redial-stall.
"""

from __future__ import annotations


def _refresh(c: dict, dial: float, seed_read: float | None) -> dict:
    """The retry's metadata refresh (client.go tryRefreshMetadata): the first round asks the seed on its
    idle connection (``seed_read`` seconds; None when the chain shows no such read) and dials the
    broker, then each of Metadata.Retry.Max retries waits Metadata.Retry.Backoff and dials again.
    With Metadata.Timeout > 0 (newer sarama) the refresh stops at its deadline: no new broker is asked
    once it has passed ('not fetching metadata from broker …') and no retry is started whose back-off
    would pass it ('skipping last retries as we would go past the metadata timeout')."""
    m, mb = int(c["Metadata.Retry.Max"]), float(c["Metadata.Retry.Backoff"])
    limit = float(c.get("Metadata.Timeout") or 0.0)

    def past(t: float, extra: float) -> bool:
        return limit > 0 and t + extra >= limit - 1e-9

    t, dials, backoffs, cut = 0.0, 0, 0, False
    for wait, is_dial in ([(seed_read, False)] if seed_read is not None else []) + [(dial, True)]:
        if past(t, 0.0):
            cut = True
            break
        t += wait
        dials += int(is_dial)
    for _ in range(0 if cut else m):
        if past(t, mb):
            cut = True
            break
        t += mb + dial
        backoffs += 1
        dials += 1
    return {"seconds": t, "dials": dials, "backoffs": backoffs, "seed_reads": int(seed_read is not None), "cut": cut}


def model_parts(kind: str, c: dict, shape: dict | None = None) -> dict:
    """How long a failing SendMessage takes (sarama 1.22.1, one broker that is also the seed),
    the model that fits every measured run within 10 ms (reference sarama-timing.md), as a total and
    its terms per setting. ``shape`` says what the log shows of the chain: ``first``, the setting
    of the produce request's own wait (Net.ReadTimeout, or Net.WriteTimeout when the error says
    'write tcp'); ``seed_read``, whether the retry's metadata refresh first waited on the seed's idle
    connection (1.22.1 does; newer versions close the connection on the socket error)."""
    shape = shape or {}
    first_key = shape.get("first", "Net.ReadTimeout")
    d, r, rb = float(c["Net.DialTimeout"]), float(c["Net.ReadTimeout"]), float(c["Producer.Retry.Backoff"])
    first, retries = float(c[first_key]), int(c["Producer.Retry.Max"])
    terms: dict[str, float] = {}

    def add(key: str, v: float) -> None:
        terms[key] = terms.get(key, 0.0) + v

    refresh = None
    if kind == "silent":
        add(first_key, (retries + 1) * first)
        add("Producer.Retry.Backoff", retries * rb)
    elif retries == 0:
        if kind == "blackhole":
            add(first_key, first)
    else:
        black = kind == "blackhole"
        refresh = _refresh(c, d if black else 0.0, (r if black else 0.0) if shape.get("seed_read", True) else None)
        if black:
            add(first_key, first)
            if refresh["seed_reads"]:
                add("Net.ReadTimeout", r)
            add("Net.DialTimeout", refresh["dials"] * d)
        add("Producer.Retry.Backoff", rb)
        add("Metadata.Retry.Backoff", refresh["backoffs"] * float(c["Metadata.Retry.Backoff"]))
    return {"seconds": sum(terms.values()), "terms": terms, "refresh": refresh}


def model_seconds(kind: str, c: dict, shape: dict | None = None) -> float:
    return model_parts(kind, c, shape)["seconds"]


def model_formula(kind: str, retries: int, shape: dict | None = None, cut: bool = False) -> str:
    shape = shape or {}
    first_key = shape.get("first", "Net.ReadTimeout")
    seed = shape.get("seed_read", True)
    if kind == "blackhole":
        if retries == 0:
            return f"{first_key} (the next send then pays the metadata/dial path)"
        head = "2 × Net.ReadTimeout" if first_key == "Net.ReadTimeout" and seed else first_key + (" + Net.ReadTimeout" if seed else "")
        text = f"{head} + Producer.Retry.Backoff + (1 + Metadata.Retry.Max) × Net.DialTimeout + Metadata.Retry.Max × Metadata.Retry.Backoff"
        return text + (", the metadata refresh cut short at Metadata.Timeout" if cut else "")
    if kind == "refused":
        return "Producer.Retry.Backoff + Metadata.Retry.Max × Metadata.Retry.Backoff" + (", cut short at Metadata.Timeout" if cut else "")
    return f"(Producer.Retry.Max + 1) × {first_key} + Producer.Retry.Max × Producer.Retry.Backoff"


def dominant(kind: str, c: dict, shape: dict | None = None) -> tuple[str, float]:
    """The setting whose term weighs most in the model, and that term in seconds."""
    terms = model_parts(kind, c, shape)["terms"] or {"Producer.Retry.Backoff": 0.0}
    key = max(terms, key=lambda k: terms[k])
    return key, terms[key]


def suggest(kind: str, c: dict, shape: dict | None = None) -> dict:
    """The change worth making for this kind of outage (settings in seconds / counts)."""
    out: dict = {}
    read_floor = float(c["Producer.Timeout"]) + 2.0  # the broker may hold a produce request up to Producer.Timeout
    uses_read = "Net.ReadTimeout" in model_parts(kind, c, shape)["terms"]
    if kind == "blackhole":
        if float(c["Net.DialTimeout"]) > 5.0:
            out["Net.DialTimeout"] = 5.0
        elif int(c["Metadata.Retry.Max"]) > 1:
            out["Metadata.Retry.Max"] = 1
        if uses_read and float(c["Net.ReadTimeout"]) > read_floor:
            out["Net.ReadTimeout"] = read_floor
    elif kind == "silent":
        if uses_read and float(c["Net.ReadTimeout"]) > read_floor:
            out["Net.ReadTimeout"] = read_floor
        if int(c["Producer.Retry.Max"]) > 1:
            out["Producer.Retry.Max"] = 1
    return out
