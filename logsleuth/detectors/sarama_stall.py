"""``sarama.retry-redial-stall``: why a sarama SendMessage hung for minutes, and where the time went.

A sarama producer whose broker stops answering does not fail after ``Net.WriteTimeout``: the
message waits for the produce response (``Net.ReadTimeout``), is retried, and the retry's leader
lookup refreshes metadata, which dials the broker again and again (``Net.DialTimeout`` each,
``1 + Metadata.Retry.Max`` dials with ``Metadata.Retry.Backoff`` between them). This detector finds
each such chain in a sarama log, measures it from the last line the process logged before the
chain (normally the application's last successful send) to the first error handed back to the
application (or to ``state change to [normal]`` when the application logs no error), attributes
every gap between consecutive lines to a dial timeout, a read/write timeout, a metadata back-off,
a producer retry back-off or the idle time before the failing send, infers the timeout values from
those gaps, and compares them with ``--sarama-config`` (or sarama's defaults) and with the timing
model measured on the real library (../shared/reference/sarama-timing.md, docs/findings/
sarama.retry-redial-stall.md). Three kinds, each with its own explanation: ``blackhole`` (dials
time out), ``refused`` (the broker closed: EOF / connection refused, fast failure, then the
circuit breaker), ``silent`` (a mute broker: read timeouts that grow with Producer.Retry.Max).

Polars finds the chains (per file); small Python loops then walk the few lines of each chain.
"""

from __future__ import annotations

import datetime as dt
import re
from statistics import median

import polars as pl

from logsleuth.errors import LogsleuthError

from logsleuth.detectors.base import Context, Detector, evidence, safe
from logsleuth.detectors.sarama_config import DEFAULTS
from logsleuth.findings import Finding

ID = "sarama.retry-redial-stall"

# error texts that reach the application (or that sarama prints instead of returning them)
ERROR_TEXT_EVENTS = {"sarama_out_of_brokers", "sarama_breaker_open", "sarama_produce_failed"}
# sarama's own lines that are part of a failure chain
CHAIN_EVENTS = {
    "sarama_broker_closing", "sarama_broker_retrying", "sarama_leader_retrying", "sarama_leader_abandon",
    "sarama_dial_failed", "sarama_metadata_error", "sarama_no_broker", "sarama_metadata_retry",
    "sarama_broker_deregistered", "sarama_seed_resurrect", "sarama_batch_retry", "sarama_batch_retry_failed",
    "sarama_metadata_refresh_failed", "sarama_broker_socket_error", "sarama_metadata_skip",
}
LEADER_EVENTS = {"sarama_leader_retrying", "sarama_leader_abandon", "sarama_leader_flushing", "sarama_leader_normal", "sarama_leader_selected"}
# the text of an error returned to the application: Go net errors and sarama's error values
APP_ERROR_RE = (
    r"i/o timeout|connection refused|connection reset by peer|broken pipe|no route to host|network is unreachable"
    r"|\bEOF\b|run out of available brokers|circuit breaker is open|kafka server: "
    r"|kafka: (?:Failed to produce|broker not connected|message received by producer in process of shutting down"
    r"|tried to use a client that was closed|insufficient data)"
)
SARAMA_LINE_RE = r"^(?:producer|client|consumer|broker)/|^(?:Connected to broker|Closed connection to broker|Failed to connect to broker)"
NEW_INCIDENT_GAP_S = 600.0  # with no application line in between, a quiet gap this long separates two incidents
BREAKER_TIMEOUT_S = 10.0  # breaker.New(3, 1, 10*time.Second) in async_producer.go

# budget components: key -> (label, sarama setting)
COMPONENTS = {
    "idle": ("before the failing send began (no line marks a send's start)", None),
    "produce_read_timeout": ("produce read timeout", "Net.ReadTimeout"),
    "produce_write_timeout": ("produce write timeout", "Net.WriteTimeout"),
    "metadata_read_timeout": ("metadata read timeout", "Net.ReadTimeout"),
    "metadata_write_timeout": ("metadata write timeout", "Net.WriteTimeout"),
    "dial_timeout": ("dial timeout", "Net.DialTimeout"),
    "dial_refused": ("refused dial", None),
    "retry_backoff": ("producer retry back-off", "Producer.Retry.Backoff"),
    "metadata_backoff": ("metadata back-off", "Metadata.Retry.Backoff"),
    "other": ("between other lines", None),
}

KIND_TEXT = {
    "blackhole": (
        "black-holed (packets dropped: the broker neither answers nor refuses), so every dial waited the full "
        "Net.DialTimeout"
    ),
    "refused": (
        "closed (its connections answered EOF and new dials were refused at once), so the send failed fast with "
        "'client has run out of available brokers' after the metadata retries"
    ),
    "silent": (
        "alive but silent (it accepted connections and answered metadata but never answered the produce request), "
        "so every attempt waited the full Net.ReadTimeout and each retry re-sent into the same silence"
    ),
}


# ----------------------------------------------------------------------------- the measured model


def model_seconds(kind: str, c: dict) -> float:
    """How long a failing SendMessage takes (sarama 1.22.1, one broker that is also the seed),
    the model that fits every measured run within 10 ms (reference sarama-timing.md)."""
    d, r, rb = float(c["Net.DialTimeout"]), float(c["Net.ReadTimeout"]), float(c["Producer.Retry.Backoff"])
    m, mb, retries = int(c["Metadata.Retry.Max"]), float(c["Metadata.Retry.Backoff"]), int(c["Producer.Retry.Max"])
    if kind == "blackhole":
        if retries == 0:
            return r
        return r + rb + r + (1 + m) * d + m * mb
    if kind == "refused":
        return 0.0 if retries == 0 else rb + m * mb
    return (retries + 1) * r + retries * rb  # silent


def model_formula(kind: str, retries: int) -> str:
    if kind == "blackhole":
        if retries == 0:
            return "Net.ReadTimeout (the next send then pays the metadata/dial path)"
        return "2 × Net.ReadTimeout + Producer.Retry.Backoff + (1 + Metadata.Retry.Max) × Net.DialTimeout + Metadata.Retry.Max × Metadata.Retry.Backoff"
    if kind == "refused":
        return "Producer.Retry.Backoff + Metadata.Retry.Max × Metadata.Retry.Backoff"
    return "(Producer.Retry.Max + 1) × Net.ReadTimeout + Producer.Retry.Max × Producer.Retry.Backoff"


def dominant(kind: str, c: dict) -> tuple[str, float]:
    """The setting whose term weighs most in the model, and that term in seconds."""
    d, r = float(c["Net.DialTimeout"]), float(c["Net.ReadTimeout"])
    m, mb, retries = int(c["Metadata.Retry.Max"]), float(c["Metadata.Retry.Backoff"]), int(c["Producer.Retry.Max"])
    if kind == "blackhole":
        terms = {"Net.DialTimeout": (1 + m) * d, "Net.ReadTimeout": 2 * r if retries else r, "Metadata.Retry.Backoff": m * mb}
    elif kind == "refused":
        terms = {"Metadata.Retry.Backoff": m * mb, "Producer.Retry.Backoff": float(c["Producer.Retry.Backoff"])}
    else:
        terms = {"Net.ReadTimeout": (retries + 1) * r, "Producer.Retry.Backoff": retries * float(c["Producer.Retry.Backoff"])}
    key = max(terms, key=lambda k: terms[k])
    return key, terms[key]


def suggest(kind: str, c: dict) -> dict:
    """The change worth making for this kind of outage (settings in seconds / counts)."""
    out: dict = {}
    read_floor = float(c["Producer.Timeout"]) + 2.0  # the broker may hold a produce request up to Producer.Timeout
    if kind == "blackhole":
        if float(c["Net.DialTimeout"]) > 5.0:
            out["Net.DialTimeout"] = 5.0
        elif int(c["Metadata.Retry.Max"]) > 1:
            out["Metadata.Retry.Max"] = 1
        if float(c["Net.ReadTimeout"]) > read_floor:
            out["Net.ReadTimeout"] = read_floor
    elif kind == "silent":
        if float(c["Net.ReadTimeout"]) > read_floor:
            out["Net.ReadTimeout"] = read_floor
        if int(c["Producer.Retry.Max"]) > 1:
            out["Producer.Retry.Max"] = 1
    return out


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


def plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


# ----------------------------------------------------------------------------- chains


def _col(df: pl.DataFrame, name: str, dtype=pl.String) -> pl.Expr:
    return pl.col(name) if name in df.columns else pl.lit(None, dtype=dtype).alias(name)


def _lines(ctx: Context, path: str, ev: pl.DataFrame) -> pl.DataFrame:
    """Every record of one input, with its sarama events (if any) and a class:
    chain (a sarama failure line or an error handed to the application), ok (an application line
    that is not an error: a successful send, usually), or other (sarama's other lines)."""
    per_line = ev.group_by("line").agg(
        events=pl.col("event"),
        error=_col(ev, "error").drop_nulls().first(),
        node=_col(ev, "node", pl.Int64).drop_nulls().first(),
        address=_col(ev, "address").drop_nulls().first(),
        topic_partition=_col(ev, "topic_partition").drop_nulls().first(),
        topic=_col(ev, "topic").drop_nulls().first(),
        partition=_col(ev, "partition", pl.Int64).drop_nulls().first(),
        retry=_col(ev, "retry", pl.Int64).drop_nulls().first(),
        backoff_ms=_col(ev, "backoff_ms", pl.Int64).drop_nulls().first(),
        attempts_left=_col(ev, "attempts_left", pl.Int64).drop_nulls().first(),
    )
    try:
        recs = ctx.records(path).select("line", "ts", "msg", "raw", "logger")
    except (ValueError, OSError, LogsleuthError):  # stdin, or an events directory without its logs: the sarama lines alone
        recs = ev.select("line", "ts", "msg", "raw", "logger").unique("line", keep="first").sort("line")
    df = recs.join(per_line, on="line", how="left").sort("line")
    internal = pl.col("events").list.eval(pl.element().is_in(list(ERROR_TEXT_EVENTS)).not_()).list.any().fill_null(False)
    chain_ev = pl.col("events").list.eval(pl.element().is_in(list(CHAIN_EVENTS))).list.any().fill_null(False)
    app_error = internal.not_() & pl.col("msg").fill_null("").str.contains(APP_ERROR_RE)
    looks_sarama = (
        internal
        | pl.col("logger").fill_null("").str.to_lowercase().eq("sarama")
        | pl.col("msg").fill_null("").str.contains(SARAMA_LINE_RE)
    )
    df = df.with_columns(internal=internal, app_error=app_error, chain=chain_ev | app_error)
    df = df.with_columns(ok=pl.col("chain").not_() & looks_sarama.not_() & pl.col("ts").is_not_null())
    # An ok line ends an incident only when the leader is back (the last state before it is
    # 'selected broker'), or when the chain has been quiet for long. Other goroutines of
    # the service (HTTP handlers, ...) keep logging while SendMessage hangs, and sarama keeps
    # failing after it returned an error (the retry-buffer flush, the next message); their lines
    # must not cut a chain in two. (_split_on_success handles a success without a sarama state line.)
    # 'selected broker' is logged only after a leader lookup succeeded; '[normal]' also ends a
    # flush whose lookup failed, so it is no sign of health
    healthy = pl.col("events").list.contains("sarama_leader_selected").fill_null(False)
    state = (
        pl.when(pl.col("app_error")).then(pl.lit("err"))
        .when(pl.col("chain")).then(pl.lit("fail"))
        .when(healthy).then(pl.lit("healthy"))
        .otherwise(pl.lit(None, dtype=pl.String))
    )
    df = df.with_columns(_state=state, _state_ts=pl.when(state.is_not_null()).then(pl.col("ts")))
    df = df.with_columns(_last=pl.col("_state").forward_fill().shift(1), _last_ts=pl.col("_state_ts").forward_fill().shift(1))
    quiet = (pl.col("ts") - pl.col("_last_ts")).dt.total_microseconds() / 1e6
    gap = (pl.col("ts") - pl.col("ts").forward_fill().shift(1)).dt.total_microseconds() / 1e6
    boundary = (
        pl.col("ok") & (pl.col("_last").is_null() | (pl.col("_last") == "healthy") | (quiet.fill_null(0) > NEW_INCIDENT_GAP_S))
    ) | (gap.fill_null(0) > NEW_INCIDENT_GAP_S)
    df = df.with_columns(seg=boundary.cast(pl.Int32).cum_sum(), idx=pl.int_range(pl.len()))
    return df.drop("_state", "_state_ts", "_last", "_last_ts")


def _incidents(df: pl.DataFrame) -> list[tuple[int, int]]:
    """(first, last) row indexes of the segments that hold a failure chain with sarama's own lines."""
    segs = (
        df.group_by("seg")
        .agg(
            first=pl.col("idx").min(),
            last=pl.col("idx").max(),
            chain=pl.col("chain").any(),
            sarama_chain=(pl.col("chain") & pl.col("internal")).any(),
        )
        .filter(pl.col("chain") & pl.col("sarama_chain"))
        .sort("first")
    )
    return [(r["first"], r["last"]) for r in segs.iter_rows(named=True)]


def _template(msg: str | None) -> str:
    return re.sub(r"\d+", "#", msg or "")


def _split_on_success(df: pl.DataFrame, first: int, last: int) -> list[tuple[int, int]]:
    """Cut an incident where the application logs, after an error, a line of the same shape as its
    last line before the chain (its success line, e.g. 'message # delivered to partition # at
    offset #') while sarama logged no state line in between."""
    seg = df.slice(first, last - first + 1).select("idx", "msg", "ok", "chain", "app_error")
    chain_at = seg.filter(pl.col("chain"))["idx"]
    if chain_at.len() == 0:
        return [(first, last)]
    pre = df.filter((pl.col("idx") < chain_at[0]) & pl.col("ok")).tail(1)
    err_at = seg.filter(pl.col("app_error"))["idx"]
    if pre.height == 0 or err_at.len() == 0:
        return [(first, last)]
    tpl = _template(pre["msg"][0])
    later = seg.filter((pl.col("idx") > err_at[0]) & pl.col("ok"))
    hits = [i for i, m in zip(later["idx"], later["msg"]) if _template(m) == tpl]
    if not hits:
        return [(first, last)]
    return [(first, hits[0] - 1)] + _split_on_success(df, hits[0], last)


def _has(row: dict, *names: str) -> bool:
    evs = row.get("events") or []
    return any(n in evs for n in names)


def _net_kind(err: str | None) -> str | None:
    """read | write | dial timeout, refused, closed (EOF/reset), or None."""
    e = err or ""
    if "i/o timeout" in e:
        for k in ("dial", "read", "write"):
            if re.search(rf"\b{k} tcp\b", e):
                return k
        return "read"
    if "connection refused" in e:
        return "refused"
    if re.search(r"\bEOF\b|connection reset|broken pipe", e):
        return "closed"
    return None


def _classify_gap(prev: dict, cur: dict, first_wait: bool) -> str:
    err_kind = _net_kind(cur.get("error"))
    if _has(cur, "sarama_dial_failed"):
        return "dial_timeout" if err_kind == "dial" else "dial_refused" if err_kind == "refused" else "other"
    if _has(cur, "sarama_metadata_error"):
        if err_kind == "read":
            return "metadata_read_timeout"
        if err_kind == "write":
            return "metadata_write_timeout"
        return "other"
    if _has(cur, "sarama_broker_closing", "sarama_broker_socket_error"):
        if err_kind == "read":
            return "produce_read_timeout"
        if err_kind == "write":
            return "produce_write_timeout"
        return "idle" if first_wait else "other"
    if _has(cur, "sarama_metadata_fetch"):
        if _has(prev, "sarama_metadata_retry"):
            return "metadata_backoff"
        if _has(prev, "sarama_leader_abandon", "sarama_broker_shutdown", "sarama_leader_retrying"):
            return "retry_backoff"
    if first_wait and cur.get("app_error"):
        return "idle"  # nothing sarama logged: the whole wait is before / inside the send
    return "other"


def _typical(values: list[float], coarse: bool) -> float | None:
    if not values:
        return None
    if coarse:  # second-resolution stamps: gaps are the true value or one more
        s = sorted(values)
        return float(s[(len(s) - 1) // 2])
    return round(median(values), 3)


def _cadence(df: pl.DataFrame, before_idx: int) -> float | None:
    """The application's send interval just before the chain (median gap between its last ok lines)."""
    ok = df.filter(pl.col("ok") & (pl.col("idx") <= before_idx)).tail(12)
    if ok.height < 3:
        return None
    gaps = ok.select((pl.col("ts").diff().dt.total_microseconds() / 1e6).alias("g"))["g"].drop_nulls().to_list()
    gaps = [g for g in gaps if g > 0]
    return round(median(gaps), 3) if gaps else None


def _first_line(text: str | None) -> str:
    return (text or "").split("\n", 1)[0]


def _seconds(a: dt.datetime, b: dt.datetime) -> float:
    return (b - a).total_seconds()


# ----------------------------------------------------------------------------- one incident


def _analyse(ctx: Context, path: str, df: pl.DataFrame, first: int, last: int) -> Finding | None:
    seg = df.slice(first, last - first + 1)
    rows = seg.filter(pl.col("ts").is_not_null()).to_dicts()
    if not rows:
        return None
    start_i = next(i for i, r in enumerate(rows) if r["chain"])
    # the last line the process logged before the chain: in this segment, or the line before it
    if start_i > 0:
        pre = rows[start_i - 1]
    else:
        before = df.filter((pl.col("idx") < first) & pl.col("ts").is_not_null()).tail(1).to_dicts()
        pre = before[0] if before else None
    # the chain's own lines (sarama's, and the errors handed to the application): lines that other
    # parts of the service logged meanwhile would cut the waits in two
    body = [r for r in rows[start_i:] if not r["ok"]]
    end_j = next((j for j, r in enumerate(body) if r["app_error"]), None)
    ended_by = "error"
    if end_j is None:
        # no error reached the application's log: the stall ends when the leader is back for good
        # (the first [normal] / selected broker after the last failure line; a mute broker shows
        # [normal] between its retries too)
        last_fail = max(j for j, r in enumerate(body) if r["chain"])
        back = [j for j, r in enumerate(body) if j > last_fail and _has(r, "sarama_leader_normal", "sarama_leader_selected")]
        if back:
            end_j, ended_by = back[0], "recovery"
        else:
            end_j, ended_by = len(body) - 1, "end of the log"
    stall_rows = ([pre] if pre else []) + body[: end_j + 1]
    all_rows = body

    coarse = all(r["ts"].microsecond == 0 for r in stall_rows)

    # ---- kind and broker (the whole incident: with Retry.Max=0 the dials come after the first error)
    kinds = [_net_kind(r.get("error")) for r in all_rows if r.get("internal") and r.get("error")]
    app_kinds = [_net_kind(r.get("msg")) for r in all_rows if r.get("app_error")]
    if "dial" in kinds:
        kind = "blackhole"
    elif "refused" in kinds or "closed" in kinds:
        kind = "refused"
    elif "read" in kinds or "write" in kinds:
        kind = "silent"
    elif "dial" in app_kinds:
        kind = "blackhole"
    elif "refused" in app_kinds or "closed" in app_kinds:
        kind = "refused"
    else:
        return None  # a retry chain without a broker outage (e.g. a leader move): not this finding's business
    addr_rows = [r for r in all_rows if _has(r, "sarama_dial_failed") and r.get("address")]
    addr_rows = addr_rows or [r for r in all_rows if _has(r, "sarama_connection_closed") and r.get("address")]
    addr_rows = addr_rows or [r for r in all_rows if _has(r, "sarama_metadata_fetch") and r.get("address")]
    broker = None
    if addr_rows:
        counts: dict[str, int] = {}
        for r in addr_rows:
            counts[r["address"]] = counts.get(r["address"], 0) + 1
        broker = max(counts, key=lambda a: (counts[a], -list(counts).index(a)))
    node = next((r["node"] for r in all_rows if _has(r, "sarama_broker_closing") and r.get("node") is not None), None)
    first_error = next((r.get("error") for r in all_rows if r.get("internal") and _net_kind(r.get("error"))), None)

    # ---- partitions
    tps: list[str] = []
    for r in all_rows:
        tp = None
        if _has(r, *LEADER_EVENTS, "sarama_broker_retrying", "sarama_batch_retry", "sarama_batch_retry_failed") and r.get("topic") and r.get("partition") is not None:
            tp = f"{r['topic']}/{r['partition']}"
        if tp and tp not in tps:
            tps.append(tp)
    if not tps:
        topic = next((r.get("topic") for r in all_rows if r.get("topic")), None)
        tps = [f"{topic}/?" if topic else "unknown"]

    # ---- the time budget: every gap between consecutive lines of the stall
    waits: list[tuple[str, float, dict]] = []
    for k in range(1, len(stall_rows)):
        prev, cur = stall_rows[k - 1], stall_rows[k]
        g = _seconds(prev["ts"], cur["ts"])
        waits.append((_classify_gap(prev, cur, first_wait=(k == 1 and pre is not None)), g, cur))
    stall = _seconds(stall_rows[0]["ts"], stall_rows[-1]["ts"]) if len(stall_rows) > 1 else 0.0

    # ---- inferred values
    dial_gaps = [g for c, g, _ in waits if c == "dial_timeout"]
    clean_read = [g for i, (c, g, _) in enumerate(waits) if c in ("produce_read_timeout", "metadata_read_timeout") and not (i == 0 and pre is not None)]
    first_c, first_g = (waits[0][0], waits[0][1]) if waits else (None, 0.0)
    cadence = _cadence(df, stall_rows[0]["idx"]) if pre is not None else None
    read_t = _typical(clean_read, coarse)
    read_source = "gaps between sarama's lines" if read_t is not None else None
    idle = 0.0
    skipped = pre_gap = 0.0  # time cut from the start when the line before the chain is an old sarama line
    pre_is_app = pre is not None and bool(pre.get("ok"))
    if pre is not None and not pre_is_app and waits:
        expected = read_t if first_c in ("produce_read_timeout", "produce_write_timeout") else 0.0 if first_c == "idle" else None
        if expected is not None and first_g > expected + 2.0:
            skipped, pre_gap = first_g - expected, first_g
            if first_c == "idle":
                waits.pop(0)
            else:
                waits[0] = (first_c, expected, waits[0][2])
            first_c, first_g = None, 0.0
    if first_c in ("produce_read_timeout", "produce_write_timeout"):
        if read_t is not None and first_g >= read_t - (1.0 if coarse else 0.05):
            idle = max(0.0, first_g - read_t)
        elif cadence is not None and first_g > cadence:
            idle = cadence if not coarse else round(cadence)
            read_t = first_g - idle
            read_source = "the first wait minus the application's send interval"
        else:
            read_t = read_t if read_t is not None else first_g
            read_source = read_source or "the first wait (an upper bound)"
        waits[0] = (first_c, first_g - idle, waits[0][2])
        if idle > 0:
            waits.insert(0, ("idle", idle, waits[0][2]))
    elif first_c == "idle":
        idle = first_g
    stall -= skipped
    dial_t = _typical(dial_gaps, coarse)
    md_backoffs = [r["backoff_ms"] / 1000.0 for r in stall_rows if _has(r, "sarama_metadata_retry") and r.get("backoff_ms") is not None]
    md_backoff_t = _typical(md_backoffs, False)
    rb_gaps = [g for c, g, _ in waits if c == "retry_backoff"]
    md_max = max((r["attempts_left"] for r in all_rows if _has(r, "sarama_metadata_retry") and r.get("attempts_left") is not None), default=None)
    retry_levels = [r["retry"] for r in all_rows if _has(r, "sarama_leader_retrying") and r.get("retry") is not None]
    produce_timeouts = sum(1 for c, _, _ in waits if c in ("produce_read_timeout", "produce_write_timeout"))

    given_cfg = ctx.options.get("sarama_config") or dict(DEFAULTS, _given=[])
    given = list(given_cfg.get("_given", []))
    cfg = {k: given_cfg[k] for k in DEFAULTS}
    eff = dict(cfg)
    inferred: dict[str, dict] = {}

    def infer(key: str, value, source: str) -> None:
        if value is None:
            return
        inferred[key] = {"value": value, "from": source}
        eff[key] = value

    infer("Net.DialTimeout", dial_t, f"{len(dial_gaps)} dial timeout gap(s)")
    infer("Net.ReadTimeout", round(read_t, 3) if read_t is not None else None, read_source or "")
    infer("Metadata.Retry.Backoff", md_backoff_t, "'retrying after Nms' lines")
    infer("Metadata.Retry.Max", md_max, "the first '(N attempts remaining)'")
    if rb_gaps and not coarse:
        infer("Producer.Retry.Backoff", _typical(rb_gaps, False), f"{len(rb_gaps)} retry back-off gap(s)")
    if kind == "silent" and ended_by == "error" and produce_timeouts:
        infer("Producer.Retry.Max", produce_timeouts - 1, "read timeouts before the error, minus one")
    elif retry_levels and int(eff["Producer.Retry.Max"]) < max(retry_levels):
        infer("Producer.Retry.Max", max(retry_levels), "the highest [retrying-N]")
    elif kind in ("blackhole", "refused") and retry_levels and int(eff["Producer.Retry.Max"]) == 0:
        infer("Producer.Retry.Max", max(retry_levels), "the highest [retrying-N]")

    # ---- the budget table
    budget: list[dict] = []
    for key, (label, setting) in COMPONENTS.items():
        gs = [g for c, g, _ in waits if c == key]
        if not gs:
            continue
        each = None
        if key == "dial_timeout":
            each = dial_t
        elif key in ("produce_read_timeout", "metadata_read_timeout"):
            each = read_t
        elif key == "metadata_backoff":
            each = md_backoff_t
        elif key == "retry_backoff":
            each = eff["Producer.Retry.Backoff"]
        budget.append({
            "component": key,
            "label": label,
            "setting": setting,
            "count": len(gs),
            "seconds": round(sum(gs), 3),  # the gaps as stamped
            "each_seconds": each,  # the inferred value of one wait
            "estimated_seconds": round(len(gs) * each, 3) if each is not None else round(sum(gs), 3),
        })
    by = {b["component"]: b for b in budget}

    def cnt(k: str) -> int:
        return by[k]["count"] if k in by else 0

    # ---- model, comparison, suggestion
    send_observed = max(0.0, stall - idle) if ended_by == "error" else None
    model_now = model_seconds(kind, eff)
    tol = 1.5 if coarse else max(0.1, 0.02 * model_now)
    fits = send_observed is not None and abs(send_observed - model_now) <= tol
    change = suggest(kind, eff)
    after_cfg = dict(eff, **change)
    after = model_seconds(kind, after_cfg)
    # what the configuration the user passed would give, were it in effect (inferred values for the rest)
    as_given = dict(eff, **{k: cfg[k] for k in given})
    with_given = model_seconds(kind, as_given) if given else None
    dom_key, dom_s = dominant(kind, eff)
    mismatches: list[str] = []
    notes: list[str] = []
    for key, inf in inferred.items():
        v, c = float(inf["value"]), float(cfg[key])
        close_enough = abs(v - c) <= (1.0 + 0.05 * c if coarse else max(0.05, 0.05 * c))
        if key == "Producer.Retry.Max" and kind != "silent":
            close_enough = close_enough or (v >= 1 and c >= 1)
        if close_enough:
            continue
        shown = fmt_setting(key, v).split("=", 1)[1]
        if key in given:
            mismatches.append(
                f"you passed {fmt_setting(key, c)}, but this log shows ≈{shown} ({inf['from']}): the client that wrote it did not use that value"
            )
        else:
            notes.append(f"{key} ≈{shown} in this log (sarama's default is {fmt_setting(key, c).split('=', 1)[1]})")

    # ---- breaker periods and out-of-brokers, over the whole incident
    inc = seg.filter(pl.col("ts").is_not_null())
    breaker = inc.filter(pl.col("events").list.contains("sarama_breaker_open").fill_null(False) | pl.col("msg").str.contains("circuit breaker is open"))
    periods: list[dict] = []
    if breaker.height:
        b = breaker.select("ts", "line").with_columns(
            p=((pl.col("ts").diff().dt.total_microseconds() / 1e6).fill_null(0) > BREAKER_TIMEOUT_S + 1).cast(pl.Int32).cum_sum()
        )
        for r in b.group_by("p").agg(start=pl.col("ts").min(), end=pl.col("ts").max(), n=pl.len(), line=pl.col("line").min()).sort("start").iter_rows(named=True):
            periods.append({"from": r["start"], "to": r["end"], "seconds": round(_seconds(r["start"], r["end"]), 3), "failed_sends": r["n"], "line": r["line"]})
    oob = inc.filter(pl.col("app_error") & pl.col("msg").str.contains("run out of available brokers"))
    returned = [r for r in all_rows if r["app_error"]]
    later = []
    for a, b2 in zip(returned, returned[1:]):
        later.append({"at": b2["ts"], "line": b2["line"], "after_seconds": round(_seconds(a["ts"], b2["ts"]), 3), "error": _first_line(b2["msg"])})
    longest_next = max((x["after_seconds"] for x in later), default=None)
    recovered = df.filter((pl.col("idx") > last) & pl.col("ok")).head(1).to_dicts()
    recovered_at = recovered[0]["ts"] if recovered else None

    # ---- subjects
    t_from, t_to = stall_rows[0]["ts"] + dt.timedelta(seconds=skipped), stall_rows[-1]["ts"]
    res = "1 s (log.LstdFlags)" if coarse else "sub-second"
    subj_common = {
        "path": path,
        "kind": kind,
        "broker": broker,
        "stall_seconds": round(stall, 3),
        "from": t_from,
        "to": t_to,
        "from_line": stall_rows[0]["line"] if not skipped else body[0]["line"],
        "start_estimated": bool(skipped),
        "to_line": stall_rows[-1]["line"],
        "ended_by": ended_by,
        "returned_error": _first_line(stall_rows[-1]["msg"]) if ended_by == "error" else None,
        "idle_seconds": round(idle, 3),
        "send_seconds": round(send_observed, 3) if send_observed is not None else None,
        "dial_timeouts": cnt("dial_timeout"),
        "dial_timeout_seconds": dial_t,
        "dials_refused": cnt("dial_refused"),
        "read_timeouts": cnt("produce_read_timeout") + cnt("metadata_read_timeout"),
        "read_timeout_seconds": round(read_t, 3) if read_t is not None else None,
        "write_timeouts": cnt("produce_write_timeout") + cnt("metadata_write_timeout"),
        "metadata_backoffs": cnt("metadata_backoff"),
        "retry_backoffs": cnt("retry_backoff"),
        "model_seconds": round(model_now, 3),
        "suggested_change": ",".join(fmt_setting(k, v) for k, v in change.items()) or None,
        "after_change_seconds": round(after, 3),
        "out_of_brokers": oob.height,
        "breaker_open_periods": len(periods),
        "time_resolution": res,
    }
    subjects = [{"topic_partition": tp, **subj_common} for tp in tps]

    # ---- prose
    tp_text = ", ".join(safe(t) for t in tps)
    b_text = safe(broker) if broker else "the partition leader"
    parts = []
    for bgt in budget:
        k, n, secs, each = bgt["component"], bgt["count"], bgt["seconds"], bgt["each_seconds"]
        if k == "idle":
            parts.append(f"{fmt_s(secs, coarse)} {bgt['label']}")
        elif k == "other":
            if secs >= (1.0 if coarse else 0.05):
                parts.append(f"{fmt_s(secs, coarse)} between other lines")
        elif k == "dial_refused":
            parts.append(f"{plural(n, 'refused dial')} (≈0 s each)")
        else:
            each_txt = f" of ≈{fmt_s(each, coarse and each >= 1)}" if each is not None else ""
            total = n * each if (coarse and each is not None) else secs
            total_txt = f" ({fmt_s(total, coarse and total >= 1)})" if n > 1 else ""
            parts.append(f"{plural(n, bgt['label'])}{each_txt}{total_txt}")
    end_txt = {"error": "the first error returned to the application", "recovery": "recovery (the leader back: [normal] or selected broker)", "end of the log": "the end of the log (no error, no recovery)"}[ended_by]
    root = (
        f"sarama's SendMessage on {tp_text} stalled {fmt_s(stall, coarse)} ({t_from.strftime('%H:%M:%S')} → {t_to.strftime('%H:%M:%S')} UTC, "
        f"from the last line logged before the failure chain to {end_txt}) because broker {b_text} was {KIND_TEXT[kind]}. "
        f"Where the time went: {'; '.join(parts) or 'no gaps'}."
    )
    if ended_by == "error":
        root += f" Returned error: '{safe(_first_line(stall_rows[-1]['msg']))}'."
    root += (
        f" The measured model for this kind ({model_formula(kind, int(eff['Producer.Retry.Max']))}) gives {model_now:.2f} s with the values in this log"
        + (f"; the log shows {send_observed:.{0 if coarse else 2}f} s{' (±1 s)' if coarse else ''} for the failing send." if send_observed is not None else ".")
    )
    if kind == "blackhole":
        root += f" The dominant setting is {dom_key} ({fmt_s(dom_s)} of it)."
    elif kind == "silent":
        root += f" The dominant setting is Net.ReadTimeout × (Producer.Retry.Max + 1) = {fmt_s(dom_s)}: retries grow the stall."
    else:
        root += " The failure itself was fast."
    if change:
        root += f" With {', '.join(fmt_setting(k, v) for k, v in change.items())} a failing send would take ≈{fmt_s(after)} (model)."
    if periods:
        p0 = periods[0]
        root += (
            f" The partition's circuit breaker then opened: sends failed at once with 'circuit breaker is open' from "
            f"{p0['from'].strftime('%H:%M:%S')} to {p0['to'].strftime('%H:%M:%S')} ({p0['failed_sends']} sends)"
            + (f", in {len(periods)} periods" if len(periods) > 1 else "")
            + "."
        )
    if oob.height:
        root += f" 'client has run out of available brokers' was returned {oob.height} time(s)."
    if kind == "blackhole" and longest_next and send_observed and longest_next > send_observed * 1.3:
        root += (
            f" The next error came {fmt_s(longest_next, coarse)} after the previous one: the retry-buffer flush and the next "
            f"message each repeat the metadata/dial path."
        )

    # ---- confidence
    reasons = [f"{len(stall_rows)} lines from {safe(path)}, stamped to {res}"]
    if skipped:
        reasons.append(
            f"no application line precedes the chain (the last line, {fmt_s(pre_gap)} earlier, is sarama's own): "
            "the start is estimated as the first line minus its wait"
        )
    conf = 0.6
    if fits:
        conf += 0.2
        reasons.append(f"the measured {kind} model predicts {model_now:.2f} s for the failing send, the log shows {send_observed:.{0 if coarse else 2}f} s")
    elif send_observed is not None:
        conf -= 0.1
        reasons.append(
            f"the measured single-broker model predicts {fmt_s(model_now)} but the log shows {fmt_s(send_observed, coarse)}: "
            "several brokers, a newer sarama, or a partial outage change the count of waits"
        )
    if ended_by == "error":
        conf += 0.1
        reasons.append("the stall ends at an error returned to the application")
    else:
        reasons.append(f"no error was logged by the application; the stall ends at {end_txt}")
    unexplained = by.get("other", {}).get("seconds", 0.0)
    if stall > 0 and unexplained > max(1.0 if coarse else 0.1, 0.1 * stall):
        conf -= 0.15
        reasons.append(f"{fmt_s(unexplained)} of the stall fall between lines that explain no wait")
    if coarse:
        reasons.append("log.LstdFlags stamps have 1-second resolution: each inferred value is ±1 s")

    # ---- remediation and ruled out
    rem: list[str] = []
    if change:
        already = [k for k in change if k in given and float(cfg[k]) <= float(change[k]) and abs(float(cfg[k]) - float(eff[k])) > 1e-9]
        verb = "Make " + ", ".join(fmt_setting(k, cfg[k]) for k in already) + " take effect" if already and len(already) == len(change) else "Set " + ", ".join(fmt_setting(k, v) for k, v in change.items())
        rem.append(
            f"{verb}: with the other values in this log a failing send would then take "
            f"≈{fmt_s(after)} instead of ≈{fmt_s(model_now)} ({model_formula(kind, int(after_cfg['Producer.Retry.Max']))})."
        )
    if mismatches and with_given is not None:
        rem.append(f"With the configuration you passed, were it in effect, the model gives ≈{fmt_s(with_given)} for a failing send.")
    if kind == "blackhole":
        rem.append("Producer.Retry.Max does not shorten this: when a retry's metadata refresh fails the message fails at once (Retry.Max 3 behaved like 1 in the measurements).")
        rem.append(
            "Expect the next send after a failure to wait about twice the metadata/dial path: the retry-buffer flush and that message each repeat it"
            + (f" (here the next error came {fmt_s(longest_next, coarse)} later)." if longest_next else ".")
        )
        rem.append("Find what drops the packets to the broker (security group, firewall rule, dead host behind a stable IP); a refused port would fail in under a second.")
    elif kind == "refused":
        rem.append("Nothing to tune for speed: the failure is fast. Make the application back off on 'circuit breaker is open' (it lasts 10 s, even after the broker is back) instead of counting each as a new outage.")
        rem.append("Find why the broker closed its port (restart, crash, rolling upgrade): the broker log of that time tells.")
    else:
        rem.append("Net.ReadTimeout must stay above Producer.Timeout (the broker may hold a produce request that long waiting for acks); beyond that each retry re-sends into the same silence.")
        rem.append("Look at the broker: it accepted connections and answered metadata but not produce requests (request handler threads stuck, disk full, ISR waits).")
    for m in mismatches:
        rem.append("Check the configuration: " + m + " (set before sarama.NewClient / NewSyncProducer? the same *sarama.Config?).")
    ruled = [
        "Net.WriteTimeout as the first wait: a small produce request does not block on write; the first wait is Net.ReadTimeout (the error says 'read tcp')."
        if kind != "refused" or cnt("produce_write_timeout") == 0 else "",
    ]
    if kind == "blackhole":
        ruled.append("a refused port: refused dials fail at once; these dials each waited ≈" + fmt_s(dial_t, coarse) + ".")
    elif kind == "silent":
        ruled.append("an unreachable broker: metadata requests were answered and re-dials connected at once.")
    elif kind == "refused":
        ruled.append("a black hole: no dial waited; every dial failed at once.")
    ruled = [r for r in ruled if r]

    # ---- evidence
    ev: list = []

    def add(r: dict | None, note: str) -> None:
        if r is None or any(e.line == r["line"] for e in ev):
            return
        ev.append(evidence({"path": path, "line": r["line"], "raw": r.get("raw"), "ts": r.get("ts")}, note))

    add(stall_rows[0] if pre is not None and not skipped else None, "last line before the failure chain")
    add(body[0], "the chain begins")
    add(next((w[2] for w in waits if w[0] in ("produce_read_timeout", "produce_write_timeout")), None), "produce request timed out")
    add(next((w[2] for w in waits if w[0] in ("metadata_read_timeout", "metadata_write_timeout")), None), "metadata request timed out")
    dial_rows = [w[2] for w in waits if w[0] in ("dial_timeout", "dial_refused")]
    add(dial_rows[0] if dial_rows else None, "first failed dial")
    add(next((r for r in stall_rows if _has(r, "sarama_metadata_retry")), None), "metadata back-off")
    add(dial_rows[-1] if len(dial_rows) > 1 else None, "last failed dial")
    add(stall_rows[-1], {"error": "error returned to the application", "recovery": "recovery", "end of the log": "end of the log"}[ended_by])
    if periods:
        add(next((r for r in all_rows if r["line"] == periods[0]["line"]), None), "circuit breaker open")
    if recovered:
        add(recovered[0], "first successful line after the incident")

    severity = "high" if stall >= 60 else "medium" if stall >= 5 or periods else "low"
    title = f"sarama send stalled {fmt_s(stall, coarse)} on {tp_text}: broker {b_text} {'black-holed' if kind == 'blackhole' else 'refused/closed' if kind == 'refused' else 'silent (mute)'}"
    return Finding(
        id=ID,
        severity=severity,
        title=title,
        root_cause=root,
        confidence=conf,
        confidence_reasons=reasons,
        first_seen=t_from,
        last_seen=recovered_at or all_rows[-1]["ts"],
        subjects=subjects,
        cause={
            "kind": kind,
            "broker": broker,
            "node": node,
            "error": first_error,
            "explanation": KIND_TEXT[kind],
            "dominant_setting": dom_key,
        },
        evidence=ev,
        remediation=rem,
        references=["docs/findings/sarama.retry-redial-stall.md", "sarama async_producer.go (retryMessage, updateLeader), client.go (tryRefreshMetadata)"],
        ruled_out=ruled,
        details={
            "budget": budget,
            "inferred": inferred,
            "config": {"given": given, "used_for_model": eff, "mismatches": mismatches, "notes": notes},
            "model": {
                "kind": kind,
                "formula": model_formula(kind, int(eff["Producer.Retry.Max"])),
                "seconds": round(model_now, 3),
                "observed_send_seconds": round(send_observed, 3) if send_observed is not None else None,
                "fits": fits,
                "dominant_setting": dom_key,
                "dominant_seconds": round(dom_s, 3),
            },
            "suggestion": {
                "change": change,
                "worst_case_seconds": round(after, 3),
                "now_seconds": round(model_now, 3),
                "with_given_config_seconds": round(with_given, 3) if with_given is not None else None,
            },
            "breaker_open": periods,
            "out_of_brokers": {"returned": oob.height, "first": oob["ts"][0] if oob.height else None},
            "later_failures": later[:50],
            "longest_wait_between_errors_seconds": longest_next,
            "recovered_at": recovered_at,
            "application_send_interval_seconds": cadence,
        },
    )


def run(ctx: Context) -> list[Finding]:
    ev = ctx.events
    if ev.height == 0 or "system" not in ev.columns:
        return []
    sar = ev.filter(pl.col("system") == "sarama")
    if sar.height == 0:
        return []
    paths = sar.filter(pl.col("event").is_in(list(CHAIN_EVENTS)))["path"].unique(maintain_order=True).to_list()
    findings: list[Finding] = []
    for path in paths:
        df = _lines(ctx, path, sar.filter(pl.col("path") == path))
        for seg_first, seg_last in _incidents(df):
            for first, last in _split_on_success(df, seg_first, seg_last):
                if df.slice(first, last - first + 1).filter(pl.col("chain") & pl.col("internal")).height == 0:
                    continue
                f = _analyse(ctx, path, df, first, last)
                if f is not None:
                    findings.append(f)
    return findings


DETECTOR = Detector(
    id=ID,
    title="sarama retry/re-dial stall: where a failing send's time went",
    systems=("sarama",),
    run=run,
    doc="docs/findings/sarama.retry-redial-stall.md",
)
