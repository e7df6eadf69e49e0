"""Reading a sarama log into failure chains and incidents, for sarama.retry-redial-stall.

``_lines`` gives every record of one input with its sarama events and a class (chain: a sarama
failure line or an error handed to the application; ok: an application line that is no error;
other) and a segment number; ``_incidents`` and ``_split_on_success`` cut the segments into
incidents. Then what a chain's lines say: which Go net error ended a wait (``_net_token``,
``_net_kind``), whether two lines tell one failure, whether the log begins inside the chain, and
what followed it (``_aftermath``: circuit-breaker periods, later errors, recovery).
"""

from __future__ import annotations

import datetime as dt
import re

import polars as pl

from logsleuth.errors import LogsleuthError

from logsleuth.detectors.base import Context, logfmt_message
from logsleuth.detectors.sarama.appfields import success_col

# error texts that reach the application (or that sarama prints instead of returning them)
ERROR_TEXT_EVENTS = {"sarama_out_of_brokers", "sarama_breaker_open", "sarama_produce_failed"}
# sarama's own lines that are part of a failure chain
CHAIN_EVENTS = {
    "sarama_broker_closing", "sarama_broker_retrying", "sarama_leader_retrying", "sarama_leader_abandon",
    "sarama_dial_failed", "sarama_metadata_error", "sarama_no_broker", "sarama_metadata_retry",
    "sarama_broker_deregistered", "sarama_seed_resurrect", "sarama_batch_retry", "sarama_batch_retry_failed",
    "sarama_metadata_refresh_failed", "sarama_broker_socket_error", "sarama_metadata_skip",
}
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
# the line that opens a failure chain: the produce request failed on the broker's connection
OPENING_EVENTS = ("sarama_broker_closing", "sarama_broker_retrying", "sarama_broker_socket_error")
# sarama's lines of a client that works (before the chain they show the log did not start inside it)
HEALTHY_EVENTS = [
    "sarama_leader_selected", "sarama_connected", "sarama_client_init", "sarama_client_ready", "sarama_broker_open",
    "sarama_broker_starting", "sarama_broker_registered",
]


def _col(df: pl.DataFrame, name: str, dtype=pl.String) -> pl.Expr:
    return pl.col(name) if name in df.columns else pl.lit(None, dtype=dtype).alias(name)


def _lines(ctx: Context, path: str, ev: pl.DataFrame) -> pl.DataFrame:
    """Every record of one input, with its sarama events (if any) and a class:
    chain (a sarama failure line or an error handed to the application), ok (an application line
    that is not an error: a delivery, or a neutral line such as another goroutine's status line;
    client.prepare tells them apart, appfields.py), or other (sarama's other lines). A line is
    (file, line): the segments of a rotated log follow each other, oldest first."""
    file = pl.col("file").cast(pl.String)
    per_line = ev.with_columns(file=file).group_by("file", "line", maintain_order=True).agg(
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
        recs = ctx.records(path).select("line", "ts", "msg", "raw", "logger", file=file)  # in file order, oldest segment first
    except (ValueError, OSError, LogsleuthError):  # stdin, or an events directory without its logs: the sarama lines alone
        recs = ctx.with_raw(ev.sort("file", "line")).select("line", "ts", "msg", "raw", "logger", file=file).unique(["file", "line"], keep="first", maintain_order=True)
    recs = recs.with_columns(msg=logfmt_message(pl.col("msg")))  # logrus' msg="..." k=v: the message itself
    df = recs.with_row_index("_o").join(per_line, on=["file", "line"], how="left").sort("_o").drop("_o")
    internal = pl.col("events").list.eval(pl.element().is_in(list(ERROR_TEXT_EVENTS)).not_()).list.any().fill_null(False)
    chain_ev = pl.col("events").list.eval(pl.element().is_in(list(CHAIN_EVENTS))).list.any().fill_null(False)
    app_error = internal.not_() & pl.col("msg").fill_null("").str.contains(APP_ERROR_RE)
    looks_sarama = (
        internal
        | pl.col("logger").cast(pl.String).fill_null("").str.to_lowercase().eq("sarama")
        | pl.col("msg").fill_null("").str.contains(SARAMA_LINE_RE)
    )
    df = df.with_columns(internal=internal, app_error=app_error, chain=chain_ev | app_error, sarama_line=looks_sarama)
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


def rotated(df: pl.DataFrame) -> bool:
    """Are the lines of ``_lines`` from several files (the segments of a rotated log)? Then the line
    numbers it gives out name their file."""
    return "file" in df.columns and df["file"].n_unique() > 1


def _incidents(df: pl.DataFrame, unseen: bool = False) -> list[tuple[int, int]]:
    """(first, last) row indexes of the segments that hold a failure chain with sarama's own lines (with
    ``unseen``, sarama's Logger off, any segment with an error sarama handed to the application)."""
    segs = (
        df.group_by("seg", maintain_order=True)
        .agg(
            first=pl.col("idx").min(),
            last=pl.col("idx").max(),
            chain=pl.col("chain").any(),
            sarama_chain=(pl.col("chain") & pl.col("internal")).any(),
        )
        .filter(pl.col("chain") & (pl.col("sarama_chain") | unseen))
        .sort("first")
    )
    return [(r["first"], r["last"]) for r in segs.iter_rows(named=True)]


# a Go duration in an application's line ('in 7.279ms', 'in 1m28.1204s'): one token in a line's template
DURATION_TOKEN_RE = r"\b\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h)(?:\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h))*\b"


def _template(msg: str | None) -> str:
    """A line's shape: its Go durations and numbers as '#' (a slow send's 'in 1m28.1204s' is the
    shape of a fast one's 'in 7.279ms')."""
    return re.sub(r"\d+", "#", re.sub(DURATION_TOKEN_RE, "#", msg or ""))


def template_expr(col: pl.Expr) -> pl.Expr:
    """``_template`` as a Polars expression."""
    return col.fill_null("").str.replace_all(DURATION_TOKEN_RE, "#").str.replace_all(r"\d+", "#")


def _split_on_success(df: pl.DataFrame, first: int, last: int) -> list[tuple[int, int]]:
    """Cut an incident where the application logs, after an error, a line of the same shape as its
    last success before the chain (e.g. 'message # delivered to partition # at offset #'; its
    deliveries, appfields.success_col) while sarama logged no state line in between."""
    seg = df.slice(first, last - first + 1).select("idx", "msg", "chain", "app_error", ok=success_col(df))
    chain_at = seg.filter(pl.col("chain"))["idx"]
    if chain_at.len() == 0:
        return [(first, last)]
    pre = df.filter((pl.col("idx") < chain_at[0]) & success_col(df)).tail(1)
    err_at = seg.filter(pl.col("app_error"))["idx"]
    if pre.height == 0 or err_at.len() == 0:
        return [(first, last)]
    tpl = _template(pre["msg"][0])
    later = seg.filter((pl.col("idx") > err_at[0]) & pl.col("ok"))
    hits = later.filter(template_expr(pl.col("msg")) == tpl)["idx"]
    if hits.len() == 0:
        return [(first, last)]
    return [(first, hits[0] - 1)] + _split_on_success(df, hits[0], last)


def _has(row: dict, *names: str) -> bool:
    evs = row.get("events") or []
    return any(n in evs for n in names)


def _net_kind(err: str | None) -> str | None:
    """read | write | dial timeout, refused, closed (EOF/reset), or None."""
    tok = _net_token(err)
    if tok is None:
        return "read" if "i/o timeout" in (err or "") else None
    return {"dial tcp": "dial", "read tcp": "read", "write tcp": "write", "connection refused": "refused"}.get(tok, "closed")


def _same_failure(prev: dict, cur: dict) -> bool:
    """Newer sarama logs one socket error twice: the producer's '[closing] because E' (or the metadata
    'got error … E') and the client's 'close broker … due to socket error: E'. The second line ends no wait."""
    pair = ("sarama_broker_closing", "sarama_broker_socket_error", "sarama_metadata_error")
    if not (_has(cur, *pair) and _has(prev, *pair) and (_has(cur, "sarama_broker_socket_error") or _has(prev, "sarama_broker_socket_error"))):
        return False
    tok = _net_token(cur.get("error"))
    return tok is not None and tok == _net_token(prev.get("error"))



def _first_line(text: str | None) -> str:
    return (text or "").split("\n", 1)[0]


def _seconds(a: dt.datetime, b: dt.datetime) -> float:
    return (b - a).total_seconds()



def _net_token(err: str | None) -> str | None:
    """The words of a Go net error that tell which wait ended: 'read tcp', 'write tcp', 'dial tcp' (an i/o
    timeout of that operation), 'connection refused', 'EOF', 'connection reset', 'broken pipe'."""
    e = err or ""
    if "i/o timeout" in e:
        for tok in ("dial tcp", "read tcp", "write tcp"):
            if re.search(rf"\b{tok}\b", e):
                return tok
    for tok in ("connection refused", "connection reset", "broken pipe"):
        if tok in e:
            return tok
    return "EOF" if re.search(r"\bEOF\b", e) else None


def _aftermath(df: pl.DataFrame, seg: pl.DataFrame, all_rows: list[dict], last: int, recovered_row: dict | None = None) -> dict:
    """Over the whole incident: the circuit-breaker periods, the out-of-brokers errors, the later
    failures (and the longest wait between two errors that are not the breaker's instant ones), and
    the first successful line after it (``recovered_row`` when the caller knows it: the delivery on
    the incident's partitions that closed it)."""
    rot = rotated(df)  # once: it reads the whole log's file column
    inc = seg.filter(pl.col("ts").is_not_null())
    is_breaker = pl.col("events").list.contains("sarama_breaker_open").fill_null(False) | pl.col("msg").fill_null("").str.contains("circuit breaker is open")
    breaker = inc.filter(is_breaker)
    periods: list[dict] = []
    if breaker.height:
        b = breaker.select("ts", "line", "file", "idx").with_columns(
            p=((pl.col("ts").diff().dt.total_microseconds() / 1e6).fill_null(0) > BREAKER_TIMEOUT_S + 1).cast(pl.Int32).cum_sum()
        )
        agg = b.group_by("p", maintain_order=True).agg(start=pl.col("ts").min(), end=pl.col("ts").max(), n=pl.len(), first=pl.struct("idx", "line", "file").sort_by("idx").first())
        for r in agg.sort("start").iter_rows(named=True):
            periods.append({"from": r["start"], "to": r["end"], "seconds": round(_seconds(r["start"], r["end"]), 3), "failed_sends": r["n"],
                            "line": r["first"]["line"]} | ({"file": r["first"]["file"]} if rot else {}))
    oob = inc.filter(pl.col("app_error") & pl.col("msg").str.contains("run out of available brokers"))
    returned = [r for r in all_rows if r["app_error"]]
    later = []
    for a, b2 in zip(returned, returned[1:]):
        later.append({
            "at": b2["ts"], "line": b2["line"], **({"file": b2["file"]} if rot else {}), "after_seconds": round(_seconds(a["ts"], b2["ts"]), 3), "error": _first_line(b2["msg"]),
            "breaker_open": "circuit breaker is open" in (b2["msg"] or ""),
        })
    longest_next = max((x["after_seconds"] for x in later if not x["breaker_open"]), default=None)
    recovered = [recovered_row] if recovered_row is not None else df.filter((pl.col("idx") > last) & pl.col("delivery")).head(1).to_dicts()
    return {
        "periods": periods,
        "oob": oob,
        "later": [{k: v for k, v in x.items() if k != "breaker_open"} for x in later],
        "longest_next": longest_next,
        "recovered": recovered,
        "recovered_at": recovered[0]["ts"] if recovered else None,
    }


def _log_starts_inside(df: pl.DataFrame, first_chain: dict) -> bool:
    """Whether the log begins inside the failure chain: its first chain line is not one that opens a chain
    (the produce request failing on the broker's connection), and nothing before it shows a working
    client (a delivery of the application's, or sarama's start-up / selected-broker lines)."""
    if _has(first_chain, *OPENING_EVENTS):
        return False
    healthy = pl.col("events").list.eval(pl.element().is_in(HEALTHY_EVENTS)).list.any().fill_null(False)
    return df.filter((pl.col("idx") < first_chain["idx"]) & (pl.col("delivery") | healthy)).height == 0



def _brokers_seen(rows: list[dict]) -> dict:
    """The brokers a chain's lines name: node ids (``producer/broker/N``, ``selected broker N``,
    ``close broker #N``; -1 is a seed whose id is not known yet, so it is left out) and addresses
    (``fetching metadata … from broker B``, ``Failed to connect to broker B``, ``close broker … at B``).
    The measured timing model is for one broker that is also the seed: more than one node id or
    address here means it does not apply."""
    nodes = sorted({int(r["node"]) for r in rows if r.get("node") is not None and int(r["node"]) >= 0})
    addresses = list(dict.fromkeys(r["address"] for r in rows if r.get("address")))
    return {"nodes": nodes, "addresses": addresses, "several": len(nodes) > 1 or len(addresses) > 1}


def _delivering_retry(body: list[dict], end_j: int) -> dict | None:
    """When a chain ends in recovery (no error reached the application): the retry that got the message
    through, i.e. the last ``[retrying-N]`` before the recovery line, and the broker then selected."""
    levels = [r for r in body[: end_j + 1] if _has(r, "sarama_leader_retrying") and r.get("retry") is not None]
    if not levels:
        return None
    last = levels[-1]
    sel = next((r for r in body if r["idx"] > last["idx"] and _has(r, "sarama_leader_selected") and r.get("node") is not None), None)
    return {"retry": int(last["retry"]), "row": last, "node": int(sel["node"]) if sel else None, "selected_row": sel}
