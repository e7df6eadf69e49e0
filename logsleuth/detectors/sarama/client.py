"""The sarama client of one log as a whole, for sarama.retry-redial-stall and sarama.broker-refused:
every broker's and every partition's state machine, and the episodes they give (a broker that
stops answering, and the partitions it led).

**Brokers** (``Broker``, ``Brokers``): one per physical broker, its names tied together by the lines
that name two of them — ``client/brokers registered new broker #2 at kafka-2:9092``, ``Connected to
broker at kafka-2:9092 (registered as #2)``, ``close broker #2 at … due to socket error: …``, the far
end of ``producer/broker/2 … because read tcp a->10.0.0.12:9092: …`` and the ``dial tcp
10.0.0.12:9092`` of ``Failed to connect to broker kafka-2:9092`` — so a seed (id -1), its address
and its IP are one broker. A broker fails at a failure line (``producer/broker/N state change to
[closing] because E``, ``Failed to connect to broker``, ``close broker … due to socket error``, ``got
error from broker … while fetching metadata``, ``[retrying] on T/P because`` a Go net error) and is
connected again at ``Connected to broker``.

**Partitions**: each one's leader (``selected broker N``, ``producer/broker/N state change to [open]
on T/P``) and its retry state (``[retrying-N]``, ``abandoning broker N``, ``[flushing-N]``,
``[normal]``).

**An episode** (``Episode``) is one broker's failure with the partitions it led. It opens at the
broker's first failure line while none of its episodes is open, takes the partitions that abandon
it or retry on it (else the ones it led then), and takes every later line of that broker and those
partitions, the client's metadata lines meanwhile and the errors returned for them. It closes when
one of its partitions delivers again (an application line naming that partition), after
``NEW_INCIDENT_GAP_S`` without a line of its own, or at the end of the log. Another partition
delivering, or a leader selected again, does not close it: ``selected broker N`` and ``[normal]``
come on every retry while the dial to N is still pending. Its recovery is the first line after its
last failure at which each of its partitions is ``[normal]`` with a leader whose connection is up
(``Connected to broker`` after that broker's last failure, or a broker that has not failed).

Polars finds the failure lines, the windows around them and the deliveries per partition; the walk
over a window's lines (sarama's own and the errors returned) is Python, so its cost follows the
failure chains, not the log's healthy traffic.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import polars as pl

from logsleuth.detectors.sarama.appfields import error_address, with_app_fields
from logsleuth.detectors.base import Context
from logsleuth.detectors.sarama.chain import CHAIN_EVENTS, NEW_INCIDENT_GAP_S, _lines, _net_kind, _template, template_expr

if TYPE_CHECKING:  # imported where it is used: numpy costs ~0.1 s of start-up, and most runs have no sarama log
    import numpy as np

FAIL_EVENTS = ("sarama_broker_closing", "sarama_broker_socket_error", "sarama_dial_failed", "sarama_metadata_error", "sarama_broker_retrying")
LEADER_EVENTS = ("sarama_leader_retrying", "sarama_leader_abandon", "sarama_leader_selected", "sarama_leader_flushing", "sarama_leader_normal")
PARTITION_EVENTS = LEADER_EVENTS + (
    "sarama_broker_open", "sarama_broker_retrying", "sarama_broker_closed_partition", "sarama_broker_dying",
    "sarama_batch_retry", "sarama_batch_retry_failed",
)
# lines that carry a broker's id and its address (or its IP in an error) together
NAMING_EVENTS = (
    "sarama_broker_registered", "sarama_broker_deregistered", "sarama_broker_replaced", "sarama_connected",
    "sarama_broker_socket_error", "sarama_metadata_empty", "sarama_dial_failed", "sarama_broker_closing",
)
# sarama's lines about one broker's connection that are no failure themselves
BROKER_LINES = (
    "sarama_connection_closed", "sarama_broker_starting", "sarama_broker_shutdown", "sarama_broker_input_closed",
    "sarama_broker_deregistered", "sarama_close_error", "sarama_apiversions_error", "sarama_broker_stop",
    "sarama_init_producer_id_error", "sarama_sasl_error",
)
CLIENT_LINES = tuple(sorted((CHAIN_EVENTS | {"sarama_metadata_fetch"}) - set(FAIL_EVENTS) - set(PARTITION_EVENTS) - set(BROKER_LINES)))
WALK_EVENTS = tuple(sorted(set(FAIL_EVENTS) | set(PARTITION_EVENTS) | set(BROKER_LINES) | set(CLIENT_LINES) | {"sarama_connected"}))


@dataclass
class Broker:
    """One physical broker: its id (None when no line gives it), addresses and IP:ports as the log names them."""

    key: str
    node: int | None = None
    addresses: list[str] = field(default_factory=list)
    ips: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        named = [a for a in self.addresses if not re.match(r"^[\d.]+:\d+$|^\[", a)]
        if named or self.addresses:
            return (named or self.addresses)[0]
        if self.ips:
            return self.ips[0]
        return f"#{self.node}"  # read after the word "broker" in every text: "broker #1"

    def to_json(self) -> dict:
        return {"node": self.node, "addresses": list(self.addresses), "ips": list(self.ips)}


class Brokers:
    """The brokers of one log, their names tied together (union-find over id, address and IP tokens;
    two ids are never merged)."""

    def __init__(self) -> None:
        self.parent: dict[tuple, tuple] = {}
        self._brokers: dict[tuple, Broker] | None = None

    def _find(self, t: tuple) -> tuple:
        self.parent.setdefault(t, t)
        while self.parent[t] != t:
            self.parent[t] = self.parent[self.parent[t]]
            t = self.parent[t]
        return t

    def _nodes(self, root: tuple) -> set:
        return {t[1] for t in self.parent if t[0] == "n" and self._find(t) == root}

    def tie(self, *tokens: tuple | None) -> None:
        toks = [t for t in tokens if t is not None]
        for a, b in zip(toks, toks[1:]):
            ra, rb = self._find(a), self._find(b)
            if ra == rb:
                continue
            na, nb = self._nodes(ra), self._nodes(rb)
            if na and nb and na != nb:
                continue  # two broker ids: not one broker (a reused address, a replaced broker)
            self.parent[ra] = rb
            self._brokers = None

    def _build(self) -> dict[tuple, Broker]:
        if self._brokers is None:
            groups: dict[tuple, list[tuple]] = {}
            for t in list(self.parent):
                groups.setdefault(self._find(t), []).append(t)
            out = {}
            for root, toks in groups.items():
                nodes = sorted(t[1] for t in toks if t[0] == "n")
                addrs = [t[1] for t in toks if t[0] == "a"]
                ips = [t[1] for t in toks if t[0] == "i"]
                key = f"#{nodes[0]}" if nodes else (addrs[0] if addrs else ips[0])
                out[root] = Broker(key=key, node=nodes[0] if nodes else None, addresses=addrs, ips=ips)
            self._brokers = out
        return self._brokers

    def of(self, node: int | None = None, address: str | None = None, ip: str | None = None) -> Broker | None:
        """The broker a line names (an id of -1 is a seed: only its address names it)."""
        named = [("n", int(node)) if node is not None and int(node) >= 0 else None, ("a", address) if address else None, ("i", ip) if ip else None]
        toks: list[tuple] = [t for t in named if t is not None]
        if not toks:
            return None
        for t in toks:
            if t not in self.parent:
                self.parent[t] = t
                self._brokers = None
        self.tie(*toks)
        return self._build()[self._find(toks[0])]

    def named(self, b: Broker) -> bool:
        """Whether some line ties this broker's names to an id (else an address alone names it)."""
        return b.node is not None

    def alias(self, b: Broker, to: Broker) -> Broker:
        """An address no line ties to an id, met while one broker's failure is in progress, is that broker."""
        self.tie(*(("a", a) for a in b.addresses), *(("i", i) for i in b.ips), ("n", to.node) if to.node is not None else ("a", to.addresses[0]) if to.addresses else None)
        tied = self.of(node=to.node, address=to.addresses[0] if to.addresses else None, ip=to.ips[0] if to.ips else None)
        assert tied is not None, "a Broker (made by _build) has an id, an address or an IP: of() finds it by one"
        return tied


@dataclass
class Episode:
    """One broker's failure and the partitions it led, as the walk found it. ``rows``: the lines of
    the episode in order (the broker's, its partitions', the client's metadata lines meanwhile, the
    errors returned for them); ``recovery``: the line at which its partitions were back (see the
    module text); ``delivery``: the application's first delivery on one of its partitions after its
    last failure, which closed it."""

    broker: Broker
    rows: list[dict] = field(default_factory=list)
    partitions: list[str] = field(default_factory=list)
    led: list[str] = field(default_factory=list)  # partitions whose leader was the broker when it failed
    fails: list[dict] = field(default_factory=list)
    errors: list[dict] = field(default_factory=list)
    connects: list[dict] = field(default_factory=list)
    recovery: dict | None = None
    delivery: dict | None = None
    closed_by: str = "end of the log"  # "delivery", "quiet" or "end of the log"
    normal: set = field(default_factory=set)  # partitions [normal] with their leader up since the last failure
    waiting: set = field(default_factory=set)  # partitions [normal] whose leader's connection is not up yet
    broker_cause: dict | None = None  # a broker-side cause another detector may tie to this episode

    @property
    def folded(self) -> bool:
        """Its failure lines were folded into other records (a prefix the layout does not know): their
        own stamps are lost, so the episode cannot be timed."""
        return sum(bool(r.get("folded")) for r in self.fails) * 2 >= len(self.fails) > 0

    @property
    def first(self) -> dict:
        return self.fails[0]

    @property
    def last_fail(self) -> dict:
        return self.fails[-1]

    @property
    def tps(self) -> list[str]:
        return self.partitions or self.led

    def add(self, r: dict) -> None:
        if not self.rows or self.rows[-1]["idx"] != r["idx"]:
            self.rows.append(r)

    def join(self, tp: str | None) -> None:
        if tp and tp not in self.partitions:
            self.partitions.append(tp)

    def kinds(self) -> list[str]:
        """The Go net errors of its failure lines, as read | write | dial | refused | closed."""
        return [k for k in (_net_kind(r.get("error")) for r in self.fails) if k]

    def state(self) -> dict:
        """The broker's state over the episode, for the finding (and for a broker-side cause to be tied to)."""
        return {
            **self.broker.to_json(),
            "failed_from": self.first.get("ts"),
            "failure_lines": len(self.fails),
            "last_failure": self.last_fail.get("ts"),
            "connected_again": self.connects[-1].get("ts") if self.connects and self.connects[-1]["idx"] > self.last_fail["idx"] else None,
            "partitions_led": list(self.led),
            "cause": self.broker_cause,
        }


def _tp(r: dict) -> str | None:
    if r.get("topic") and r.get("partition") is not None:
        return f"{r['topic']}/{int(r['partition'])}"
    return None


def _remote(err: str | None) -> str | None:
    m = re.search(r"\b(?:read|write) tcp \S+?->(\S+?):?\s", (err or "") + " ")
    return m.group(1).rstrip(":") if m else None


def _dial_ip(err: str | None) -> str | None:
    m = re.search(r"\bdial tcp (\S+?):?\s", (err or "") + " ")
    return m.group(1).rstrip(":") if m else None


def _has(r: dict, *names: str) -> bool:
    evs = r.get("events") or []
    return any(n in evs for n in names)


class _Deliveries:
    """The application's deliveries per (topic or None, partition), as sorted row indexes: is there one
    on these partitions between two rows, and which is the first after one."""

    def __init__(self, frame: pl.DataFrame):
        import numpy as np

        self.by: dict[tuple, np.ndarray] = {}
        if frame.height:
            for (topic, part), g in frame.group_by(["app_topic", "app_partition"], maintain_order=True):
                self.by[(topic, int(part) if part is not None else None)] = np.sort(g["idx"].to_numpy())

    def _arrays(self, tps: list[str]) -> list[np.ndarray]:
        out = []
        for tp in tps:
            topic, _, part = tp.rpartition("/")
            p = int(part) if part.isdigit() else None
            for key in ((topic, p), (None, p), ("*", None)):
                if key in self.by:
                    out.append(self.by[key])
        return out

    def first_after(self, tps: list[str], after: int, before: int | None = None) -> int | None:
        import numpy as np

        best = None
        for a in self._arrays(tps):
            i = int(np.searchsorted(a, after, side="right"))
            if i < len(a) and (before is None or a[i] < before):
                best = int(a[i]) if best is None else min(best, int(a[i]))
        return best


def view(ctx: Context, path: str, ev: pl.DataFrame) -> tuple[pl.DataFrame, list[Episode]]:
    """One log's records (``_lines`` with the application's fields) and its episodes, once per run."""

    def make():
        df = prepare(_lines(ctx, path, ev))
        return df, ([] if not df["sarama_line"].any() else episodes(df))

    return ctx.memo(("sarama.client", path), make)


# a continuation line that is a Go log record of its own (its date after at most a short prefix): the
# layout did not see it as a record (a prefix it does not know), so its line was folded into the record before
FOLDED_RE = r"\n[^\n]{0,40}?\d{4}[/-]\d{2}[/-]\d{2}[ T]\d{2}:\d{2}:\d{2}"


def prepare(df: pl.DataFrame) -> pl.DataFrame:
    """The records of ``_lines`` with the application's fields (``app_partition``, ``app_topic``) and
    ``folded``: a record of sarama's that holds other records' lines (their own stamps lost)."""
    topics = df.filter(pl.col("topic").is_not_null())["topic"].unique(maintain_order=True).to_list() if "topic" in df.columns else []
    df = with_app_fields(df, [t for t in topics if t])
    return df.with_columns(folded=pl.col("internal") & pl.col("msg").fill_null("").str.contains(FOLDED_RE))


def _brokers(df: pl.DataFrame) -> Brokers:
    """Every pair of names one line gives a broker, over the distinct (event, id, address, error) sets."""
    b = Brokers()
    naming = df.filter(pl.col("events").list.eval(pl.element().is_in(list(NAMING_EVENTS))).list.any().fill_null(False))
    for r in naming.select("events", "node", "address", "error").unique(maintain_order=True).iter_rows(named=True):
        node = r["node"] if r["node"] is not None and r["node"] >= 0 else None
        ip = _remote(r["error"]) or (_dial_ip(r["error"]) if "sarama_dial_failed" in r["events"] else None)
        b.of(node=node, address=r["address"], ip=ip)
    return b


def _windows(df: pl.DataFrame) -> list[tuple[int, int]]:
    """(first, last) row indexes of the stretches with failure lines: from a stretch's first failure
    line to NEW_INCIDENT_GAP_S after its last (failure lines closer than that are one stretch)."""
    import numpy as np

    fails = df.filter(pl.col("events").list.eval(pl.element().is_in(list(FAIL_EVENTS))).list.any().fill_null(False) & pl.col("ts").is_not_null())
    if fails.height == 0:
        return []
    gap = (pl.col("ts").diff().dt.total_microseconds() / 1e6).fill_null(0) > NEW_INCIDENT_GAP_S
    groups = (
        fails.select("idx", "ts").with_columns(g=gap.cum_sum())
        .group_by("g", maintain_order=True).agg(first=pl.col("idx").min(), until=pl.col("ts").max() + dt.timedelta(seconds=NEW_INCIDENT_GAP_S))
        .sort("first")
    )
    stamped = df.filter(pl.col("ts").is_not_null()).select("idx", "ts").sort("ts")
    ends = groups.sort("until").join_asof(stamped.rename({"idx": "last"}), left_on="until", right_on="ts", strategy="backward").sort("first")
    # a window also takes the run of sarama's failure-chain lines right before its first failure (a log
    # that begins inside the chain: 'no available broker', 'retrying after …' before the first dial)
    chainish = pl.col("events").list.eval(pl.element().is_in(list(CLIENT_LINES))).list.any().fill_null(False)
    breaks = df.filter(~chainish).select("idx")["idx"]
    firsts = []
    for a in ends["first"].to_list():
        i = int(np.searchsorted(breaks.to_numpy(), a, side="left")) - 1 if breaks.len() else -1
        firsts.append(int(breaks[i]) + 1 if i >= 0 else 0)
    merged: list[tuple[int, int]] = []
    for a, b in zip(firsts, ends["last"].to_list()):
        b = max(a, b if b is not None else a)
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
        else:
            merged.append((a, b))
    return merged


def _leaders_before(df: pl.DataFrame, first: int) -> dict[str, int]:
    """Each partition's leader as the lines before row ``first`` leave it."""
    sel = df.filter(
        (pl.col("idx") < first) & pl.col("node").is_not_null() & pl.col("topic").is_not_null() & pl.col("partition").is_not_null()
        & pl.col("events").list.eval(pl.element().is_in(["sarama_leader_selected", "sarama_broker_open"])).list.any().fill_null(False)
    )
    if sel.height == 0:
        return {}
    last = sel.group_by("topic", "partition", maintain_order=True).agg(pl.col("node").sort_by("idx").last())
    return {f"{r['topic']}/{int(r['partition'])}": int(r["node"]) for r in last.iter_rows(named=True)}


def _deliveries(df: pl.DataFrame, windows: list[tuple[int, int]]) -> _Deliveries:
    """The application's deliveries that can close an episode: its lines naming a partition; when
    none of its lines names one and sarama's lines name one partition only, its deliveries shaped like
    its last delivery before each window (digits aside). Its neutral lines (a status line, an access
    line of another goroutine: not worded as a delivery, see appfields.py) close nothing."""
    named = df.filter(pl.col("delivery") & pl.col("app_partition").is_not_null()).select("idx", "app_topic", "app_partition")
    if named.height or df.filter(pl.col("topic").is_not_null() & pl.col("partition").is_not_null()).select("topic", "partition").unique().height > 1:
        return _Deliveries(named)
    frames = []
    for first, last in windows:
        pre = df.filter((pl.col("idx") < first) & pl.col("delivery")).tail(1)
        if pre.height == 0:
            continue
        same = df.filter((pl.col("idx") > first) & pl.col("delivery") & (template_expr(pl.col("msg")) == _template(pre["msg"][0])))
        if same.height:
            frames.append(same.select(pl.col("idx").cast(pl.Int64), app_topic=pl.lit("*"), app_partition=pl.lit(None, dtype=pl.Int64)))
    return _Deliveries(pl.concat(frames) if frames else named.head(0))


def episodes(df: pl.DataFrame) -> list[Episode]:
    """Every broker failure of one log (``prepare``d ``_lines``), with the partitions it led, in order."""
    windows = _windows(df)
    if not windows:
        return []
    brokers = _brokers(df)
    deliveries = _deliveries(df, windows)
    out: list[Episode] = []
    walk = (pl.col("events").list.eval(pl.element().is_in(list(WALK_EVENTS))).list.any().fill_null(False)) | pl.col("app_error")
    for first, last in windows:
        rows = df.filter((pl.col("idx") >= first) & (pl.col("idx") <= last) & walk).to_dicts()
        out += _walk(rows, _leaders_before(df, first), deliveries, brokers)
    return out


def _walk(rows: list[dict], leader: dict[str, int], deliveries: _Deliveries, brokers: Brokers) -> list[Episode]:
    """The state machines over one window's lines (see the module text)."""
    w = _Walk(leader, deliveries, brokers)
    for r in rows:
        w.step(r)
    return w.finish()


class _Walk:
    """The state of one window's walk: the open episodes (by broker, and by partition), the brokers
    failed and not connected again, the last broker a metadata fetch went to, and the client's chain
    lines before the first failure."""

    def __init__(self, leader: dict[str, int], deliveries: _Deliveries, brokers: Brokers) -> None:
        self.leader, self.deliveries, self.brokers = leader, deliveries, brokers
        self.done: list[Episode] = []
        self.active: dict[str, Episode] = {}
        self.tp_ep: dict[str, Episode] = {}
        self.failed: dict[str, int] = {}  # broker key -> idx of its last failure line (removed when connected again)
        self.last_fetch: str | None = None
        self.before: list[dict] = []  # the client's chain lines before the window's first failure: the first episode's

    # --- the episodes' lives

    def alive(self, e: Episode, r: dict) -> bool:
        """Still open at row r: no line of its own for NEW_INCIDENT_GAP_S, and none of its partitions delivered."""
        prev = e.rows[-1]
        d = self.deliveries.first_after(e.tps, prev["idx"], r["idx"])
        if d is not None:
            e.closed_by, e.delivery = "delivery", {"idx": d}
            return False
        if prev.get("ts") is not None and r.get("ts") is not None and (r["ts"] - prev["ts"]).total_seconds() > NEW_INCIDENT_GAP_S:
            e.closed_by = "quiet"
            return False
        return True

    def close(self, e: Episode) -> None:
        self.active.pop(e.broker.key, None)
        for tp in e.tps:
            if self.tp_ep.get(tp) is e:
                self.tp_ep.pop(tp)
        self.done.append(e)

    def live(self, e: Episode | None, r: dict) -> Episode | None:
        if e is None or e not in self.active.values():
            return None
        if self.alive(e, r):
            return e
        self.close(e)
        return None

    def leader_up(self, tp: str) -> bool:
        node = self.leader.get(tp)
        return node is None or f"#{node}" not in self.failed

    @staticmethod
    def check_recovered(e: Episode, r: dict) -> None:
        if e.recovery is None and e.tps and all(tp in e.normal for tp in e.tps):
            e.recovery = r

    # --- one line

    def step(self, r: dict) -> None:
        evs = r.get("events") or []
        tp = _tp(r)
        if r.get("app_error"):
            e = self.live(_owner(r, self.active, self.tp_ep, self.brokers), r)
            if e is not None:
                e.add(r)
                e.errors.append(r)
            return
        if "sarama_metadata_fetch" in evs and r.get("address"):
            self.last_fetch = r["address"]
        fail = any(x in evs for x in FAIL_EVENTS)
        if "sarama_broker_retrying" in evs and _net_kind(r.get("error")) is None:
            fail = False  # the broker answered with a retriable error (not leader …): no outage of it
        if fail:
            self.on_failure(r, tp)
        elif "sarama_connected" in evs:
            self.on_connected(r)
        elif tp and any(x in evs for x in PARTITION_EVENTS):
            self.on_partition(r, tp, evs)
        else:
            self.on_other(r, evs)

    def on_failure(self, r: dict, tp: str | None) -> None:
        b = _failing_broker(r, self.brokers, self.last_fetch)
        if b is None:
            return
        active = self.active
        e = self.live(active.get(b.key), r)
        if e is None and not self.brokers.named(b) and len(active) == 1:
            only = self.live(next(iter(active.values())), r)
            if only is not None:
                b = self.brokers.alias(b, only.broker)
                e = only
        if e is None:
            e = Episode(broker=b, led=[t for t, n in self.leader.items() if b.node is not None and n == b.node])
            active[b.key] = e
            for x in self.before:
                e.add(x)
            self.before = []
        e.add(r)
        e.fails.append(r)
        self.failed[b.key] = r["idx"]
        e.normal.clear()
        e.waiting.clear()
        e.recovery = None
        if tp:
            e.join(tp)
            self.tp_ep[tp] = e

    def on_connected(self, r: dict) -> None:
        b = self.brokers.of(node=r.get("node"), address=r.get("address"))
        if b is None:
            return
        self.failed.pop(b.key, None)
        e = self.live(self.active.get(b.key), r)
        if e is not None:
            e.add(r)
            e.connects.append(r)
        for e2 in list(self.active.values()):
            if self.live(e2, r) is None:
                continue
            for t in e2.tps:
                if self.leader.get(t) == b.node and t in e2.waiting:
                    e2.normal.add(t)
            self.check_recovered(e2, r)

    def _partition_episode(self, r: dict, tp: str, evs: list, lead) -> Episode | None:
        """The open episode a partition's line belongs to: the partition's, else its (former) leader's."""
        active = self.active
        e = self.live(self.tp_ep.get(tp), r)
        if e is None and lead is not None and any(x in evs for x in ("sarama_leader_abandon", "sarama_broker_retrying", "sarama_broker_dying")):
            e = self.live(active.get(f"#{int(lead)}"), r)
        if e is None and "sarama_leader_retrying" in evs:
            if tp in self.leader:
                e = self.live(active.get(f"#{self.leader[tp]}"), r)
            elif len(active) == 1:  # no line told its leader: the one broker failing now
                e = self.live(next(iter(active.values())), r)
        return e

    def on_partition(self, r: dict, tp: str, evs: list) -> None:
        lead = r.get("node")
        if lead is not None and any(x in evs for x in ("sarama_leader_selected", "sarama_broker_open")):
            self.leader[tp] = int(lead)
        e = self._partition_episode(r, tp, evs, lead)
        if e is None:
            return
        if tp not in e.partitions and not any(x in evs for x in ("sarama_broker_open", "sarama_leader_selected")):
            e.join(tp)
        if tp in e.partitions:
            self.tp_ep[tp] = e
        e.add(r)
        if any(x in evs for x in ("sarama_leader_retrying", "sarama_leader_abandon")):
            e.normal.discard(tp)
            e.waiting.discard(tp)
            e.recovery = None
        if "sarama_leader_normal" in evs and tp in e.partitions:
            if self.leader_up(tp):
                e.normal.add(tp)
            else:
                e.waiting.add(tp)
            self.check_recovered(e, r)

    def on_other(self, r: dict, evs: list) -> None:
        """sarama's other lines: about one broker, or the client's (metadata refreshes and retries)."""
        active = self.active
        b = self.brokers.of(node=r.get("node") if any(x in evs for x in BROKER_LINES) else None, address=r.get("address")) if any(x in evs for x in BROKER_LINES) else None
        targets = [active[b.key]] if b is not None and b.key in active else list(active.values()) if any(x in evs for x in CLIENT_LINES) else []
        if not active and not self.done and any(x in evs for x in CLIENT_LINES):
            self.before.append(r)
        for e in targets:
            kept = self.live(e, r)
            if kept is not None:
                kept.add(r)

    def finish(self) -> list[Episode]:
        for e in list(self.active.values()):
            if e.delivery is None:
                d = self.deliveries.first_after(e.tps, e.rows[-1]["idx"])
                if d is not None:
                    e.closed_by, e.delivery = "delivery", {"idx": d}
            self.close(e)
        return sorted(self.done, key=lambda e: e.first["idx"])


def _failing_broker(r: dict, brokers: Brokers, last_fetch: str | None) -> Broker | None:
    evs = r.get("events") or []
    err = r.get("error")
    node = r.get("node")
    if "sarama_dial_failed" in evs:
        return brokers.of(address=r.get("address"), ip=_dial_ip(err))
    if "sarama_metadata_error" in evs and not any(x in evs for x in ("sarama_broker_closing", "sarama_broker_socket_error")):
        if node is not None and node >= 0:
            return brokers.of(node=node)
        return brokers.of(address=last_fetch) if last_fetch else None  # the seed it was asking (-1, or no id before v1.20)
    return brokers.of(node=node, address=r.get("address"), ip=_remote(err))


def _owner(r: dict, active: dict[str, Episode], tp_ep: dict[str, Episode], brokers: Brokers) -> Episode | None:
    """The open episode an error returned to the application belongs to: the one of the partition it
    names, else of the broker its net error names, else of the topic it names, else the only open one."""
    part, topic = r.get("app_partition"), r.get("app_topic")
    if part is not None:
        for tp, e in tp_ep.items():
            t, _, p = tp.rpartition("/")
            if p == str(part) and (topic is None or topic == t):
                return e
    addr = error_address(r.get("msg"))
    if addr:
        b = brokers.of(ip=addr) if re.match(r"^[\d.]+:\d+$|^\[", addr) else brokers.of(address=addr)
        if b is not None and b.key in active:
            return active[b.key]
    if topic:
        hits = [e for e in active.values() if any(tp.rpartition("/")[0] == topic for tp in e.tps)]
        if len(hits) == 1:
            return hits[0]
    if len(active) == 1:
        return next(iter(active.values()))
    return None
