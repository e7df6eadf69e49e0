"""Clock skew: how far each client host's clock is from its broker's, estimated from events that are
two sides of the same action, and (when the evidence is strong) corrected.

Pairs (client event ↔ broker event, same keys, within ±PAIR_WINDOW):
  * Pulsar ``Created producer on cnx [… L:<conn> …]`` ↔ broker ``Created new producer`` on <conn>, same topic
  * ``Failed to create producer: Producer is already present on the connection`` ↔ the broker's
    "already present" rejection of the same topic on a connection of that client
  * ``Failed to create producer: Namespace bundle … not served`` ↔ the broker's ownership warning
  * ``Broker notification of Closed producer: N`` ↔ ``Disconnecting producer: … producerId=N`` on a
    connection of that client
The offset is the densest cluster of paired differences (client minus broker): every difference
that lies within ±CLUSTER of the most crowded spot, their median is the estimate and their median
absolute deviation the spread. Kafka and sarama clients have no broker-side log in the packs, so
they get "no counterpart".

Several broker logs: a client paired with two of them ties their clocks together, so every log
of a connected group gets an offset against one reference broker (``_solve``) and broker logs are
corrected too. Broker logs no client ties together are checked by cause and effect
(``broker_order``: an unload logged before the shedding decision that caused it).
"""

from __future__ import annotations

import datetime as dt
import statistics
from dataclasses import dataclass

import polars as pl

from logsleuth.recognise.events import in_time_order
from logsleuth.timeline.links import Links

PAIR_WINDOW = 300.0  # seconds
ZONE_WINDOW = 14 * 3600.0  # seconds: a whole-hours offset this large means a wrong zone, not a clock
CLUSTER = 0.5  # seconds either side of the densest spot
MIN_PAIRS = 5
MAX_SPREAD = 0.25  # seconds: above this the evidence is not strong enough to apply
MIN_APPLY = 0.5  # seconds: smaller offsets are reported, not worth shifting
UNLOAD_WINDOW = 120.0  # seconds: a shedding decision and the unload it causes, on two broker logs


@dataclass(frozen=True)
class Rule:
    client_event: str
    broker_event: str
    keys: tuple[tuple[str, str], ...]  # (client column, broker column)
    error_contains: str | None = None
    linked: bool = False  # the broker event's connection must belong to the client file


RULES = (
    Rule("client_producer_created", "producer_created", (("local_address", "connection"), ("topic", "topic"))),
    Rule("client_producer_create_failed", "producer_already_present", (("topic", "topic"),), "already present on the connection", linked=True),
    Rule("client_producer_create_failed", "bundle_not_served", (("topic", "topic"),), "not served by this instance"),
    Rule("client_broker_closed_producer", "producer_disconnecting", (("producer_id", "producer_id"),), linked=True),
)


@dataclass
class Skew:
    path: str
    status: str  # "estimated" | "not enough evidence" | "no counterpart" | "zone mismatch"
    offset_s: float | None = None  # client clock minus broker clock
    pairs: int = 0
    spread_s: float | None = None
    reference: tuple[str, ...] = ()
    applied: bool = False
    via: tuple[str, ...] = ()  # the logs whose pairs tie this one to the reference (a client paired with two brokers)

    def describe(self) -> str:
        if self.status == "no counterpart":
            return "no paired broker events (skew not estimated)"
        if self.status == "zone mismatch":
            return (
                f"{(self.offset_s or 0) / 3600:+.1f} h from {', '.join(self.reference) or 'the broker'} ({self.pairs} pairs): "
                "whole hours, so most likely a wrong zone; check --tz for this file"
            )
        if self.status == "inconsistent":
            return (
                f"{_side(self.offset_s or 0)} {', '.join(self.reference)} by one chain of paired events, but the pairs of "
                "these logs do not agree on one set of clock offsets (by more than 1 s): not corrected"
            )
        if self.status == "behind another broker":
            return (
                f"at least {abs(self.offset_s or 0):.2f} s behind {', '.join(self.reference)}: {self.pairs} bundle unload(s) here "
                "are logged before the load-shedding decision there that caused them; not corrected (only a bound is known), "
                "so times between these logs are off by at least that much"
            )
        if self.status != "estimated":
            return f"not enough evidence ({self.pairs} paired event(s); {MIN_PAIRS} with one broker log are needed)"
        ref = ", ".join(self.reference) or "the broker"
        if abs(self.offset_s or 0) < MIN_APPLY:
            return f"in step with {ref} (within {abs(self.offset_s or 0):.2f} s; {self.pairs} pairs, spread {self.spread_s:.2f} s)"
        through = f"; tied to it through {', '.join(self.via)}" if self.via else ""
        s = f"{_side(self.offset_s or 0)} {ref} ({self.pairs} pairs, spread {self.spread_s:.2f} s{through})"
        return s + ("; corrected" if self.applied else "; not corrected")

    def to_json(self) -> dict:
        return {
            "status": self.status,
            "clock_skew_s": None if self.offset_s is None else round(self.offset_s, 3),
            "pairs": self.pairs,
            "spread_s": None if self.spread_s is None else round(self.spread_s, 3),
            "reference": list(self.reference),
            "applied": self.applied,
            "via": list(self.via),
        }


def _side(offset: float) -> str:
    return f"{abs(offset):.2f} s {'ahead of' if offset > 0 else 'behind'}"


def _pairs(events: pl.DataFrame, links: Links, window: float = PAIR_WINDOW) -> pl.DataFrame:
    """(client path, client row id, broker path, difference in seconds) for every candidate pair."""
    ev = events.with_row_index("_id")
    out = []
    for rule in RULES:
        c = ev.filter(pl.col("event") == rule.client_event)
        if rule.error_contains:
            c = c.filter(pl.col("error").str.contains(rule.error_contains, literal=True))
        b = ev.filter(pl.col("event") == rule.broker_event)
        if c.height == 0 or b.height == 0:
            continue
        cc = c.select(cpath="path", cid="_id", cts="ts", **{f"k{i}": pl.col(k[0]) for i, k in enumerate(rule.keys)})
        bb = b.select(bpath="path", bts="ts", bconn="connection", **{f"k{i}": pl.col(k[1]) for i, k in enumerate(rule.keys)})
        keys = [f"k{i}" for i in range(len(rule.keys))]
        j = cc.join(bb, on=keys, how="inner").with_columns(d=(pl.col("cts") - pl.col("bts")).dt.total_microseconds() / 1e6)
        j = j.filter(pl.col("d").abs() <= window)
        if rule.linked and j.height:
            ok = [
                (links.client_of(conn).client_path == cpath) if links.client_of(conn) else False
                for cpath, conn in j.select("cpath", "bconn").iter_rows()
            ]
            j = j.filter(pl.Series(ok, dtype=pl.Boolean))
        out.append(j.select("cpath", "cid", "bpath", "d"))
    if not out:
        return pl.DataFrame(schema={"cpath": pl.String, "cid": pl.UInt32, "bpath": pl.String, "d": pl.Float64})
    return pl.concat(out)


def _densest(diffs: list[float]) -> tuple[float, list[float]]:
    xs = sorted(diffs)
    best, lo = (0, 0, 0), 0
    for hi in range(len(xs)):
        while xs[hi] - xs[lo] > 2 * CLUSTER:
            lo += 1
        if hi - lo + 1 > best[0]:
            best = (hi - lo + 1, lo, hi)
    _, lo, hi = best
    window = xs[lo : hi + 1]
    return statistics.median(window), window


def estimate(events: pl.DataFrame, links: Links) -> dict[str, Skew]:
    """A Skew for every input that has client-side events, and for every broker log whose clock the
    clients tie to the reference broker's (or that cause and effect show to run behind another)."""
    out: dict[str, Skew] = {}
    clients = events.filter(pl.col("component") == "client")["path"].unique().sort().to_list() if events.height else []
    pairs = _pairs(events, links) if clients else None
    edges: list[tuple[str, str, float, int, float]] = []
    by_client = {k[0]: g for k, g in pairs.group_by("cpath")} if pairs is not None and pairs.height else {}
    wide: list = []  # the pairs within ZONE_WINDOW, made once for every client that needs them
    for path in clients:
        p = by_client.get(path)
        if p is None or p.height == 0:
            if not wide:
                w = _pairs(events, links, ZONE_WINDOW)
                wide.append({k[0]: g for k, g in w.group_by("cpath")} if w.height else {})
            out[path] = _zone_check(path, wide[0].get(path))
            continue
        each = _per_broker(p)
        if not each:
            center, _ = _densest(p["d"].to_list())
            n = p.filter((pl.col("d") - center).abs() <= CLUSTER)["cid"].n_unique()
            out[path] = Skew(path, "not enough evidence", None, int(n), None, tuple(sorted(p["bpath"].unique().to_list())))
            continue
        edges += [(path, b, o, n, sp) for b, o, n, sp in each]
    out.update(_solve(edges))
    for b, sk in broker_order(events).items():
        out.setdefault(b, sk)
    return out


def _per_broker(p: pl.DataFrame) -> list[tuple[str, float, int, float]]:
    """(broker, offset, pairs, spread) for each broker log this client has at least MIN_PAIRS pairs with."""
    out = []
    for b in sorted(p["bpath"].unique().to_list()):
        q = p.filter(pl.col("bpath") == b)
        center, window = _densest(q["d"].to_list())
        n = q.filter((pl.col("d") - center).abs() <= CLUSTER)["cid"].n_unique()
        if n >= MIN_PAIRS:
            off = statistics.median(window)
            out.append((b, off, int(n), statistics.median([abs(x - off) for x in window])))
    return out


def _solve(edges: list[tuple[str, str, float, int, float]]) -> dict[str, Skew]:
    """Every log's clock against one reference broker log per connected group of logs.

    Each edge says "client clock − broker clock = offset" (measured from ``pairs`` pairs). The
    reference is the broker log with the most pairs; the offsets are laid along the edges with the
    most pairs first (a maximum spanning tree), so a client paired with two brokers ties their clocks
    together and a client paired only with the second broker is put on the first one's clock too.
    Edges off the tree check it: if one disagrees by more than 2 × CLUSTER the group is
    "inconsistent" and nothing in it is corrected."""
    out: dict[str, Skew] = {}
    if not edges:
        return out
    adj: dict[str, list[tuple[str, str, float, int, float]]] = {}
    for e in edges:
        adj.setdefault(e[0], []).append(e)
        adj.setdefault(e[1], []).append(e)
    brokers = {e[1] for e in edges}
    pairs_at = {n: sum(e[3] for e in adj[n]) for n in adj}
    seen: set[str] = set()
    for start in sorted(brokers, key=lambda b: (-pairs_at[b], b)):
        if start in seen:
            continue
        off, spread, hops = {start: 0.0}, {start: 0.0}, {start: ()}
        while True:
            frontier = [e for n in off for e in adj[n] if (e[0] in off) != (e[1] in off)]
            if not frontier:
                break
            c, b, o, n, sp = max(frontier, key=lambda e: (e[3], e[0], e[1]))
            new, old = (b, c) if c in off else (c, b)
            off[new] = off[c] - o if new == b else off[b] + o
            spread[new] = max(spread[old], sp)
            hops[new] = hops[old] + ((old,) if old != start else ())
        seen.update(off)
        group = [e for e in edges if e[0] in off]
        bad = [e for e in group if abs(off[e[0]] - off[e[1]] - e[2]) > 2 * CLUSTER]
        direct = {e[0] for e in adj[start]}  # clients paired with the reference itself
        for node in off:
            if node == start:
                continue
            status = "inconsistent" if bad else "estimated"
            out[node] = Skew(node, status, off[node], pairs_at[node], spread[node], (start,), via=() if node in direct else hops[node])
    return out


def broker_order(events: pl.DataFrame) -> dict[str, Skew]:
    """Brokers whose clock runs behind another's, from cause and effect: the load manager's
    '[… shedder] Unloading bundle: B' on one broker comes before 'Disabling ownership: B' on the
    broker that owns B. An unload logged earlier than its decision bounds how far behind that
    broker's clock is (by at least the largest such lead)."""
    if events.height == 0:
        return {}
    dec = events.filter(pl.col("event") == "shedder_unloading").select("bundle", lpath="path", lts="ts")
    dis = events.filter(pl.col("event") == "bundle_disabling").select("bundle", bpath="path", bts="ts")
    if dec.height == 0 or dis.height == 0:
        return {}
    j = (
        dec.join(dis, on="bundle", how="inner")
        .filter(pl.col("lpath") != pl.col("bpath"))
        .with_columns(d=(pl.col("bts") - pl.col("lts")).dt.total_microseconds() / 1e6)
        .filter(pl.col("d").abs() <= UNLOAD_WINDOW)
        # each decision with the nearest unload of that bundle on each other broker
        .sort(pl.col("d").abs())
        .unique(["lpath", "lts", "bpath"], keep="first")
    )
    early = j.filter(pl.col("d") < -MIN_APPLY)
    out: dict[str, Skew] = {}
    for (b,), g in early.group_by(["bpath"], maintain_order=True):
        out[b] = Skew(b, "behind another broker", float(g["d"].min()), g.height, None, tuple(sorted(g["lpath"].unique().to_list())))
    return out


def _zone_check(path: str, wide: pl.DataFrame | None) -> Skew:
    """No pair within minutes: are the same actions a whole number of half-hours apart? (``wide``:
    this client's pairs within ZONE_WINDOW)"""
    if wide is None or wide.height == 0:
        return Skew(path, "no counterpart")
    center, window = _densest(wide["d"].to_list())
    n = wide.filter((pl.col("d") - center).abs() <= CLUSTER)["cid"].n_unique()
    half_hours = round(center / 1800)
    if n >= 3 and half_hours != 0 and abs(center - half_hours * 1800) <= 120:
        ref = tuple(sorted(wide["bpath"].unique().to_list()))
        return Skew(path, "zone mismatch", statistics.median(window), int(n), None, ref)
    return Skew(path, "no counterpart")


def strong(s: Skew) -> bool:
    return s.status == "estimated" and (s.spread_s or 0) <= MAX_SPREAD and abs(s.offset_s or 0) >= MIN_APPLY


def apply(held: list[pl.DataFrame], skews: dict[str, Skew], inputs: list) -> pl.DataFrame:
    """Shift the events (and the inputs' spans and coverage) of files whose skew is strong onto the
    reference broker's clock. Returns the re-ordered events, taken out of ``held`` (a one-item
    list: the caller keeps no reference to the old table, so it is let go as the new one is made)."""
    events = held.pop()
    shift = {p: round(s.offset_s, 3) for p, s in skews.items() if strong(s) and s.offset_s is not None}
    if not shift:
        return events
    for p, s in skews.items():
        s.applied = p in shift
    delta = pl.col("path").replace_strict(shift, default=0.0, return_dtype=pl.Float64)
    held = [events.with_columns(ts=pl.col("ts") - pl.duration(microseconds=(delta * 1e6).round(0).cast(pl.Int64)))]
    events = None
    for rep in inputs:
        if rep.name in shift:
            d = dt.timedelta(seconds=shift[rep.name])
            rep.first_ts = rep.first_ts - d if rep.first_ts else None
            rep.last_ts = rep.last_ts - d if rep.last_ts else None
            if rep.coverage is not None:
                rep.coverage = rep.coverage.with_columns(ts=pl.col("ts") - d)
    return in_time_order(held)
