"""The facts of one pulsar.dangling-producer-future finding, and its verdict
(pulsar.dangling-producer-future.toml beside this file: thresholds, severity, confidence with its
reasons, every sentence). Both ways of making the finding fill the same facts type: the brokers'
rejections (dangling.py) and, when only client logs show them, the clients' (client_only.py;
``client_only`` is true and the broker-side fields keep their defaults).

The filters registered here make labels from subjects (a producer as the log names it, the clients
to restart, the stuck durations): plain strings, never a time.
"""

from __future__ import annotations

from logsleuth.detectors.words import Prose

import datetime as dt
from dataclasses import dataclass, field

from logsleuth.detectors.base import fmt_duration, safe
from logsleuth.detectors.verdict import Verdict

FINDING_ID = "pulsar.dangling-producer-future"
VERDICT = Verdict.load(__file__, FINDING_ID)
TH = VERDICT.thresholds
# a finding names at most this many clients or producers in a sentence (20,000 stuck producers
# made a 2 MB remediation line); the subjects table and --format json list every one
NAMED_MAX = int(TH["named_max_count"])
WHO_NAMED = int(TH["who_named_count"])  # producers named in the root cause (the rest counted)


@dataclass
class DanglingFacts:
    """One finding: the producers one unload stranded (or, with no unload found, one broker log's),
    or the producers one client log shows rejected (``client_only``)."""

    client_only: bool
    subjects: list[dict]  # the finding's subjects (docs/findings/pulsar.dangling-producer-future.md names the keys)
    first: dt.datetime | None  # first rejection
    last: dt.datetime | None  # last rejection
    longest_s: float | None  # the longest a producer stayed stuck (to its recovery, or the end of its log)
    # --- broker side
    where: list[str] = field(default_factory=list)  # the broker logs rejecting them
    have_creating: int = 0  # producers with a dangling (never answered) 'Creating producer'
    have_owner: int = 0  # ... with the ownership check ('not served by this instance') next to it
    answered_count: int = 0  # producers whose last creation before the rejections was answered
    answered_creation_ref: str | None = None  # 'line N' of the first such creation
    answer_ref: str | None = None  # 'line N' of its answer
    answer_event: str | None = None  # producer_created / producer_add_failed / connection_closed
    inferred: bool = False  # a rejection named no producer: taken from the only unanswered creation
    unload_bundle: str | None = None  # the unload found around the creation (its bundle, else namespace)
    unload_at: dt.datetime | None = None
    shed: bool = False  # the load shedder ordered the unload
    shed_detail: str | None = None  # the shedder's words ('Overload shedder', a strategy)
    shed_broker: str | None = None  # the broker it shed load from
    other_unloads: list[dict] = field(default_factory=list)  # bundle, path, line, at, why (other-broker, after, earlier, further): not taken
    unseen_why: "Prose | None" = None  # no unload found: why the brokers' logs could not show one (None: they could)
    log_starts_at_rejection: bool = False  # no unload found: every broker log starts at the first rejection
    recovered_others: int = 0  # other producers of the same unload created normally
    era_facts: list[str] = field(default_factory=list)  # what puts the brokers after 2.5.1: iso-layout, slog, add-failed-id, creating-name
    era_hint: str | None = None  # no such fact: 'pre-2.4' text or '2.x' layout (an affected version)
    no_info_paths: list[str] = field(default_factory=list)  # broker logs without INFO lines
    client_gaps: list[dict] = field(default_factory=list)  # what of a stuck period a client log does not cover: log, kind, a, b (dangling._uncovered)
    transient: list[dict] = field(default_factory=list)  # up to 3 cleared clashes: path, attempts, producer_id, topic, connection, span_s, recovered_at
    created_during: int = 0  # other producers the rejecting brokers created meanwhile
    name_conflict_logged: bool = False  # 'Producer with name … is already connected to topic' in the logs
    clients: list[str] = field(default_factory=list)  # the client logs linked to the producers
    transient_count: int = 0  # cleared clashes in the brokers' logs
    cause: dict | None = field(default=None, repr=False)  # the unload as the JSON's cause (with its lines, '_rows')
    members: list[dict] = field(default_factory=list, repr=False)  # the stuck stretches, with the lines quoted
    # --- client side
    path: str | None = None  # the client log
    brokers_given: list[str] = field(default_factory=list)  # broker logs given that cover the window
    near_file: str | None = None  # a broker line with the rejection's words no pattern matched
    near_line: int | None = None
    broker_closed: bool = False  # 'Broker notification of Closed producer' just before
    closed_at: dt.datetime | None = None
    send_timeouts: int = 0  # sends on the producers that timed out meanwhile
    attempts: list[int] = field(default_factory=list)  # rejections per producer
    broker_addresses: list[str] = field(default_factory=list)  # the brokers of the last 'Created producer on cnx'
    near: list = field(default_factory=list, repr=False)  # facts.NearMiss: broker lines with the rejection's words no pattern matched

    @property
    def producers(self) -> int:
        return len(self.subjects)

    @property
    def still(self) -> int:
        """Producers still rejected when the log ends."""
        return sum(1 for x in self.subjects if x["still_stuck"])

    @property
    def stuck_now(self) -> list[dict]:
        return [x for x in self.subjects if x["still_stuck"]]

    @property
    def restart_count(self) -> int:
        """Clients to restart: one per client log and connection still stuck."""
        return len(_restart_groups(self.stuck_now))

    @property
    def fixed(self) -> bool:
        """The logs put the brokers after 2.5.1 (the 2.5.2 fix is in)."""
        return bool(self.era_facts)

    @property
    def broker_log(self) -> str | None:
        return self.where[0] if self.where else None

    @property
    def lone(self) -> dict | None:
        """The subject, when there is one."""
        return self.subjects[0] if len(self.subjects) == 1 else None

    @property
    def named_subjects(self) -> list[dict]:
        return self.subjects[:NAMED_MAX]

    @property
    def unnamed_producers(self) -> int:
        return max(0, len(self.subjects) - NAMED_MAX)

    @property
    def named_other_unloads(self) -> list[dict]:
        return self.other_unloads[: int(TH["other_unloads_named_count"])]

    @property
    def more_unloads(self) -> int:
        return max(0, len(self.other_unloads) - int(TH["other_unloads_named_count"]))

    @property
    def first_given(self) -> str | None:
        return self.brokers_given[0] if self.brokers_given else None


def who(s: dict, short: bool = False) -> str:
    """A producer as the broker's log names it (some rejection texts carry no id, topic or connection)."""
    pid, topic, conn = s.get("producer_id"), s.get("topic"), s.get("connection")
    if pid is None and not topic and not conn:
        return "a producer the log does not name"
    out = f"producer {pid}" if pid is not None else "a producer"
    if topic and not short:
        out += f" ({safe(topic)})"
    if conn:
        out += f" on {safe(conn)}"
    return out


def client_name(s: dict) -> str:
    """A producer as the client's log names it."""
    out = f"producer {safe(s['producer_name'])}" if s.get("producer_name") else "a producer"
    return f"{out} of {safe(s['topic'])}"


def _names(subjects: list[dict], name) -> str:
    """The first WHO_NAMED producers named, the rest counted."""
    n = len(subjects)
    return ", ".join(name(s) for s in subjects[:WHO_NAMED]) + (f" and {n - WHO_NAMED} more" if n > WHO_NAMED else "")


def some(items: list[str], noun: str) -> str:
    """'a; b; c' for a few items, 'a; b; …; and N more <noun>s (every one in the subjects)' for many."""
    if len(items) <= NAMED_MAX:
        return "; ".join(items)
    return "; ".join(items[:NAMED_MAX]) + f"; and {len(items) - NAMED_MAX:,} more {noun}s (every one is in the subjects)"


def durations(subjects: list[dict]) -> str:
    """How long the producers were stuck: each value, or the range when there are many."""
    values = sorted({x["stuck_for"] for x in subjects})
    if len(values) <= NAMED_MAX:
        return ", ".join(values)
    secs = [x["stuck_seconds"] for x in subjects if x["stuck_seconds"] is not None]
    return f"{fmt_duration(min(secs))} to {fmt_duration(max(secs))}" if secs else ", ".join(values[:NAMED_MAX]) + ", …"


def _restart_groups(stuck: list[dict]) -> list[list[dict]]:
    """The stuck producers by client log and connection (two producers of one client are one restart)."""
    groups: dict = {}
    for x in stuck:
        groups.setdefault((x["client"], x["connection"]) if x["client"] or x["connection"] else id(x), []).append(x)
    return list(groups.values())


def restart_targets(stuck: list[dict]) -> list[str]:
    """One target per client log and connection:
    'the client writing client-orders.log (producers 3 and 7 on /10.1.116.123:10837: <topic>, <topic>)'."""
    out = []
    for members in _restart_groups(stuck):
        x = members[0]
        ids = [str(m["producer_id"]) for m in members if m["producer_id"] is not None]
        what = ("producer " + ids[0] if len(ids) == 1 else "producers " + ", ".join(ids[:-1]) + " and " + ids[-1]) if ids else (
            "a producer" if len(members) == 1 else f"{len(members)} producers")
        topics = ", ".join(safe(m["topic"]) for m in members if m["topic"])
        what += (f" on {safe(x['connection'])}" if x["connection"] else "") + (f": {topics}" if topics else "")
        if x["client"]:
            out.append(f"the client writing {safe(x['client'])} ({what})")
        elif x["connection"]:
            out.append(f"the client at {safe(x['connection'])} ({what})")
        else:
            out.append("the client whose producer is rejected (the broker's text names no connection: look for 'Producer is already present' in the client logs)")
    return out


VERDICT.filters.update({
    "restart_targets": restart_targets,
    "who": who,
    "who_short": lambda s: who(s, short=True),
    "producers_named": lambda subjects: _names(subjects, who),
    "client_name": client_name,
    "clients_named": lambda subjects: _names(subjects, client_name),
    "some": some,
    "durations": durations,
    "thousands": lambda n: None if n is None else f"{int(n):,}",
})
