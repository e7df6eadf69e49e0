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
"""

from __future__ import annotations

import datetime as dt
import statistics
from dataclasses import dataclass

import polars as pl

from logsleuth.links import Links

PAIR_WINDOW = 300.0  # seconds
ZONE_WINDOW = 14 * 3600.0  # seconds: a whole-hours offset this large means a wrong zone, not a clock
CLUSTER = 0.5  # seconds either side of the densest spot
MIN_PAIRS = 5
MAX_SPREAD = 0.25  # seconds: above this the evidence is not strong enough to apply
MIN_APPLY = 0.5  # seconds: smaller offsets are reported, not worth shifting


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

    def describe(self) -> str:
        if self.status == "no counterpart":
            return "no paired broker events (skew not estimated)"
        if self.status == "zone mismatch":
            return (
                f"{(self.offset_s or 0) / 3600:+.1f} h from {', '.join(self.reference) or 'the broker'} ({self.pairs} pairs): "
                "whole hours, so most likely a wrong zone; check --tz for this file"
            )
        if self.status != "estimated":
            return f"not enough evidence ({self.pairs} paired event(s), need {MIN_PAIRS})"
        ref = ", ".join(self.reference) or "the broker"
        if abs(self.offset_s or 0) < MIN_APPLY:
            return f"in step with {ref} (within {abs(self.offset_s or 0):.2f} s; {self.pairs} pairs, spread {self.spread_s:.2f} s)"
        side = "ahead of" if (self.offset_s or 0) > 0 else "behind"
        s = f"{abs(self.offset_s or 0):.2f} s {side} {ref} ({self.pairs} pairs, spread {self.spread_s:.2f} s)"
        return s + ("; corrected" if self.applied else "; not corrected")

    def to_json(self) -> dict:
        return {
            "status": self.status,
            "clock_skew_s": None if self.offset_s is None else round(self.offset_s, 3),
            "pairs": self.pairs,
            "spread_s": None if self.spread_s is None else round(self.spread_s, 3),
            "reference": list(self.reference),
            "applied": self.applied,
        }


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
    """A Skew for every input that has client-side events."""
    out: dict[str, Skew] = {}
    clients = events.filter(pl.col("component") == "client")["path"].unique().to_list() if events.height else []
    pairs = _pairs(events, links) if clients else None
    for path in clients:
        p = pairs.filter(pl.col("cpath") == path) if pairs is not None else None
        if p is None or p.height == 0:
            out[path] = _zone_check(path, events, links)
            continue
        center, window = _densest(p["d"].to_list())
        inside = p.filter((pl.col("d") - center).abs() <= CLUSTER)
        n = inside["cid"].n_unique()
        offset = statistics.median(window)
        spread = statistics.median([abs(x - offset) for x in window])
        ref = tuple(sorted(inside["bpath"].unique().to_list()))
        status = "estimated" if n >= MIN_PAIRS else "not enough evidence"
        out[path] = Skew(path, status, offset if status == "estimated" else None, int(n), spread if status == "estimated" else None, ref)
    return out


def _zone_check(path: str, events: pl.DataFrame, links: Links) -> Skew:
    """No pair within minutes: are the same actions a whole number of half-hours apart?"""
    wide = _pairs(events, links, ZONE_WINDOW)
    wide = wide.filter(pl.col("cpath") == path)
    if wide.height == 0:
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


def apply(events: pl.DataFrame, skews: dict[str, Skew], inputs: list) -> pl.DataFrame:
    """Shift the events (and the inputs' spans and coverage) of files whose skew is strong onto their
    broker's clock. Returns the re-ordered events."""
    shift = {p: round(s.offset_s, 3) for p, s in skews.items() if strong(s) and s.offset_s is not None}
    if not shift:
        return events
    for p, s in skews.items():
        s.applied = p in shift
    delta = pl.col("path").replace_strict(shift, default=0.0, return_dtype=pl.Float64)
    events = events.with_columns(ts=pl.col("ts") - pl.duration(microseconds=(delta * 1e6).round(0).cast(pl.Int64)))
    for rep in inputs:
        if rep.name in shift:
            d = dt.timedelta(seconds=shift[rep.name])
            rep.first_ts = rep.first_ts - d if rep.first_ts else None
            rep.last_ts = rep.last_ts - d if rep.last_ts else None
            if rep.coverage is not None:
                rep.coverage = rep.coverage.with_columns(ts=pl.col("ts") - d)
    return events.sort(["ts", "file", "line"], nulls_last=True, maintain_order=True)
