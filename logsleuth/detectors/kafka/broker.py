"""The Kafka broker's side of an outage: what a broker's own logs (server.log, controller.log,
state-change.log; patterns/packs/kafka-broker.toml) say about a node in a window. Shared by the
client findings (kafka.broker-unreachable, kafka.delivery-timeout, sarama's stall), which name the
cause when the broker's logs are among the inputs, and by the broker-side findings
(kafka.broker-restart, kafka.isr-shrink). See docs/findings/kafka.broker-restart.md.

  identity   the node a broker log belongs to: the id its own prefixes name most often
             ([KafkaServer id=N], [BrokerServer id=N], [Partition T-P broker=N], [ReplicaManager
             broker=N], broker.id / node.id in the config dump, Registered broker N). Its advertised
             host (Registered broker N ... with addresses) is kept to refuse a link to a client
             that names the same id on another host (another cluster).
  about      lines of other brokers' logs that name the node: the controller's 'Broker failure
             callback for N' / 'Shutting down broker N' / 'Fencing broker N', ISR shrinks that
             dropped replica N.
  story      ``explain(ctx, node, start, end)``: the node's own lines from LEAD before the client's
             window to TAIL after it, read as one of: a log directory failure (a full disk when the
             IOException says so), a controlled shutdown and restart (a rolling restart), a crash
             and restart (a start-up banner with no shutdown lines before it), a ZooKeeper session
             expiry / KRaft fencing, or a silent log (no line at all for SILENT or longer while
             the client was failing: the host or the JVM stopped); with the leader elections that
             moved partitions off it, and what the logs rule out.
Everything is Polars on the events table; the records of a node's own logs are re-read only to
find and cite a silence (``Context.records``).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field

import polars as pl

from logsleuth.detectors.base import Context, evidence, fmt_duration, plural, safe, time_of
from logsleuth.detectors.finding import Evidence
from logsleuth.detectors.verdict import Verdict
from logsleuth.detectors.words import Text, at

LEAD = dt.timedelta(minutes=3)  # a shutdown or a disk error starts before the clients notice
TAIL = dt.timedelta(minutes=1)
SILENT = dt.timedelta(seconds=45)  # no line at all for this long while clients fail: the broker stopped
SILENT_VS_USUAL = 10  # ... and this many times the log's usual (median) gap between records: an excerpt or a quiet log is not a silence
SILENCE_MIN_RECORDS = 50  # a log with fewer timed records is an excerpt: its gaps say nothing about the broker
AT_LOG_START = dt.timedelta(minutes=1)  # a start-up banner this close to its log's first record: the log begins there, no crash shown
SELF_EVENTS = (
    "broker_starting", "broker_started", "broker_shutting_down", "broker_shut_down", "broker_signal", "broker_fatal", "broker_exit",
    "broker_controlled_shutdown", "broker_controlled_shutdown_done", "broker_controlled_shutdown_failed",
    "zk_session_expired", "log_dir_failure", "log_dir_offline", "request_handler_error", "network_thread_error", "broker_lifecycle",
)
ABOUT_EVENTS = ("controller_broker_failure", "controller_broker_shutdown", "controller_broker_fenced", "controller_broker_unfenced", "isr_shrink")
LEADER_EVENTS = ("partition_leader_elected", "partition_leader_starts", "unclean_leader_election")
DISK = ("log_dir_failure", "log_dir_offline")
SHUTDOWN = ("broker_shutting_down", "broker_controlled_shutdown", "broker_shut_down", "broker_signal")
STARTUP = ("broker_starting", "broker_started")


def broker_events(ctx: Context) -> pl.DataFrame:
    ev = ctx.events
    if "component" not in ev.columns:
        return ev.clear()
    return ev.filter((pl.col("system") == "kafka") & (pl.col("component") == "broker"))


def identities(bev: pl.DataFrame) -> pl.DataFrame:
    """One row per broker log: path, node (the id its own lines name most often), host (advertised)."""
    if bev.height == 0 or "broker_id" not in bev.columns:
        return pl.DataFrame(schema={"path": pl.String, "node": pl.Int64, "host": pl.String})
    ids = (
        bev.filter(pl.col("broker_id").is_not_null())
        .group_by(["path", "broker_id"], maintain_order=True).len()
        .sort(["path", "len", "broker_id"], descending=[False, True, False])
        .group_by("path", maintain_order=True).agg(node=pl.col("broker_id").first())
    )
    hosts = (
        bev.filter(pl.col("event") == "broker_registered")
        .select("path", host=pl.col("address").str.extract(r"://\[?([^\]:/]+)", 1))
        .group_by("path", maintain_order=True).agg(pl.col("host").drop_nulls().last())
    )
    # a broker log that names no id (a start-up that failed before the id was known): node null
    unnamed = bev.select(pl.col("path").cast(pl.String)).unique(maintain_order=True).join(ids.select(pl.col("path").cast(pl.String)), on="path", how="anti")
    ids = pl.concat([ids.with_columns(pl.col("path").cast(pl.String)), unnamed.with_columns(node=pl.lit(None, pl.Int64))], how="diagonal_relaxed")
    return ids.join(hosts.with_columns(pl.col("path").cast(pl.String)), on="path", how="left")


@dataclass
class BrokerStory:
    node: int | None  # None: a broker log that names no node id (explain() given its logs)
    kind: str  # log-dir-failure | disk-full | startup-failed | controlled-restart | controlled-shutdown | crash-restart | session-expired | fenced | silent | nothing
    lead: str  # "The broker's side (LOGS): " — how a client finding introduces it
    body: Text  # one or two sentences (times typed: words.Text)
    logs: list[str]
    evidence: list[Evidence] = field(default_factory=list)
    ruled_out: list[Text] = field(default_factory=list)
    moved: list[dict] = field(default_factory=list)  # leader elections in the window: topic_partition, leader
    silence: tuple | None = None  # (from, to) of the longest silence of the node's logs in the window
    recovered: bool = True  # startup-failed: a successful start came after the last failed one
    disk_full: bool = False  # startup-failed: the start-up failed on a full disk
    zone_hint: bool = False  # not-covered: the clients' window shifted by whole hours falls inside the node's logs
    partly: bool = False  # not-covered: the node's logs reach the window but cover under COVERED_MIN of it
    first: dt.datetime | None = None
    last: dt.datetime | None = None

    @property
    def explains(self) -> bool:
        return self.kind not in ("nothing", "not-covered")

    @property
    def text(self) -> Text:
        """The story as a client finding tells it ("The broker's side (server.log): …")."""
        return Text(self.lead, self.body)

    @property
    def own_text(self) -> Text:
        """The story as the broker's own finding tells it ("From its own logs (server.log): …")."""
        return Text(self.lead.replace("The broker's side (", "From its own logs (", 1), self.body)

    def cause(self) -> dict:
        return {"kind": self.kind, "node": self.node, "logs": list(self.logs), "from": self.first, "to": self.last,
                "silence": {"from": self.silence[0], "to": self.silence[1]} if self.silence else None,
                "leaders_moved": [m["topic_partition"] for m in self.moved]}


_CAUSED_BY = re.compile(r"^Caused by: ([\w.$]+(?:Exception|Error)(?::[^\n]*)?)$", re.MULTILINE)
_THROWN = re.compile(r"^([\w.$]+\.[\w$]*(?:Exception|Error)(?::[^\n]*)?)$", re.MULTILINE)


def _exception_of(raw: str | None) -> str | None:
    """The deepest cause of a record's stack trace (its last 'Caused by:'), else its exception line."""
    if not raw:
        return None
    causes = _CAUSED_BY.findall(raw)
    if causes:
        return causes[-1].strip()[:300]
    m = _THROWN.search(raw)
    return m.group(1).strip()[:300] if m else None


def _row(df: pl.DataFrame, i: int = 0) -> dict:
    return df.row(i, named=True)


def _host(address: str | None) -> str | None:
    if not address:
        return None
    return address.split("/")[0].split(":")[0] or None


def node_words(node: int | None) -> str:
    """'node 2', or 'the broker' for a log that names no node id."""
    return f"node {node}" if node is not None else "the broker"


def remedy_for(kind: str, node: int | None) -> str:
    """REMEDY[kind] for this node."""
    w = node_words(node)
    return REMEDY[kind].format(node=w, Node=w[:1].upper() + w[1:])


def _node_logs(ctx: Context, bev: pl.DataFrame, node: int | None, address: str | None, logs: list[str] | None) -> list[str]:
    """The broker logs of ``node`` among the inputs (``logs`` when given); another cluster's node N
    is refused when both name a host (or both an IP) and they differ."""
    ids = identities(bev)
    mine = ids.filter(pl.col("path").is_in(logs)) if logs is not None else ids.filter(pl.col("node") == node)
    host = _host(address)
    if host and mine.height:
        ip = pl.col("host").str.contains(r"^\d+\.\d+\.\d+\.\d+$")
        same_kind = ip == bool(re.fullmatch(r"\d+\.\d+\.\d+\.\d+", host))
        mine = mine.filter(pl.col("host").is_null() | (pl.col("host") == host) | ~same_kind)
    return sorted(mine.get_column("path").to_list())


class _Reading:
    """The node's own lines and the others' lines about it in the window, read once; what the
    story cites goes to ``evidence``, what it says to ``parts``."""

    def __init__(self, ctx: Context, bev: pl.DataFrame, node: int | None, logs: list[str], start: dt.datetime, end: dt.datetime):
        self.node, self.logs = node, logs
        self.w0, self.w1 = start - LEAD, end + TAIL
        inw = pl.col("ts").is_between(self.w0, self.w1)
        self.own = bev.filter(pl.col("path").is_in(logs) & inw & pl.col("event").is_in(list(SELF_EVENTS))).sort(["ts", "file", "line"])
        self.about = bev.filter(~pl.col("path").is_in(logs) & inw & pl.col("event").is_in(list(ABOUT_EVENTS)) & (pl.col("node") == node)).sort("ts")
        self.moved = bev.filter(inw & pl.col("event").is_in(list(LEADER_EVENTS)) & (pl.col("leader").is_null() | (pl.col("leader") != node))
                                & ~((pl.col("event") == "partition_leader_starts") & (pl.col("broker_id") == node))).sort("ts")
        self.who = f"broker node {node}" if node is not None else "the broker (its log names no node id)"
        self.evidence: list[Evidence] = []
        self.parts: list[Text] = []
        self.down = self.has(*SHUTDOWN)
        self.up = self.has(*STARTUP)
        self.up_after = self.up.filter(pl.col("ts") >= (self.down["ts"].min() if self.down.height else self.w0))
        # a banner at its log's very beginning shows where the log starts, not a crash before it
        begins = pl.DataFrame({"path": logs, "_begin": [r.first_ts if (r := ctx.input(p)) is not None else None for p in logs]},
                              schema={"path": pl.String, "_begin": pl.Datetime("us", "UTC")})
        self.up_late = (self.up.with_columns(pl.col("path").cast(pl.String).alias("_p")).join(begins, left_on="_p", right_on="path", how="left")
                        .filter(pl.col("_begin").is_null() | (pl.col("ts") - pl.col("_begin") > AT_LOG_START)).drop("_p", "_begin"))
        self.silence = _silence(ctx, logs, start - SILENT, end, bev)

    def has(self, *evs: str) -> pl.DataFrame:
        return self.own.filter(pl.col("event").is_in(list(evs)))

    def cite(self, df: pl.DataFrame, note: str, last: bool = False) -> dict:
        """Quote the first (``last``: the last) row of ``df``, which has one, and return it."""
        if df.height == 0:
            raise ValueError(f"nothing to cite for {note!r}")
        r = _row(df, -1 if last else 0)
        self.evidence.append(evidence(r, note))
        return r

    def cite_any(self, df: pl.DataFrame, note: str) -> None:
        """Quote the first row of ``df`` if it has one."""
        if df.height:
            self.cite(df, note)

    def say(self, *parts) -> None:
        self.parts.append(Text(*parts))


def _disk(r: _Reading, story: BrokerStory) -> bool:
    disk = r.has(*DISK, "broker_fatal")
    if not disk.filter(pl.col("event").is_in(list(DISK))).height:
        return False
    full = disk.filter(pl.col("error").is_not_null())
    row = r.cite(full if full.height else disk, "the disk error that took the log directory offline")
    d = safe(row.get("log_dir") or "a log directory")
    err = full["error"][0] if full.height else None
    story.kind = "disk-full" if err in ("No space left on device", "Disk quota exceeded") else "log-dir-failure"
    r.say(f"{r.who}'s own log shows log directory {d} failing at ", at(row["ts"]),
          f" ({safe(err)}: the disk was full)" if story.kind == "disk-full" else f" ({safe(err or 'an I/O error')})")
    fatal = r.has("broker_fatal")
    if fatal.height:
        f = r.cite(fatal, "the broker shut itself down")
        r.say(f"the broker then stopped itself ({safe(f.get('detail') or 'fatal error')}, ", at(f["ts"]), ")")
    else:
        r.cite_any(r.has("log_dir_offline"), "the replicas in that directory went offline")
    if r.up_after.height:
        u = r.cite(r.up_after, "it started again", last=True)
        r.say("and started again at ", at(u["ts"]))
    return True


def _startup_failed(r: _Reading, story: BrokerStory) -> bool:
    """'Fatal error during KafkaServer startup': the start itself failed, however many times."""
    failed = r.has("broker_fatal").filter(pl.col("detail").fill_null("").str.contains("startup"))
    if not failed.height:
        return False
    story.kind = "startup-failed"
    n = failed.height
    f0 = r.cite(failed, "start-up failed")
    if n > 1:
        r.cite(failed, f"start-up failed again ({plural(n, 'attempt')} in the window)", last=True)
    why = _exception_of(failed["msg"][n - 1] if "msg" in failed.columns else None)  # the record's message: its trace too
    t0, t1 = f0["ts"], time_of(failed["ts"].max())
    tries = (Text(f"failed to start {plural(n, 'time')} from ", at(t0), " to ", at(t1)) if n > 1 else Text("failed to start at ", at(t0)))
    r.say(f"{r.who} ", tries, " (Fatal error during start-up" + (f": {safe(why)}" if why else "") + ")")
    ok = r.has("broker_started").filter(pl.col("ts") > t1)
    if ok.height:
        u = r.cite(ok, "started at last")
        r.say("it started at last at ", at(u["ts"]))
    else:
        gone = r.has("broker_exit").filter(pl.col("ts") >= t1)
        if gone.height:
            r.cite(gone, "the broker's JVM exits")
        r.say("its log shows no successful start after that (no 'started' line)"
              + (" and the process exited ('Exiting Kafka')" if gone.height else "") + ": the broker stayed down")
    story.recovered = bool(ok.height)
    if why and ("No space left on device" in why or "Disk quota exceeded" in why):
        story.disk_full = True
    return True


def _shutdown(r: _Reading, story: BrokerStory) -> bool:
    down = r.down
    if not down.height:
        return False
    controlled = r.has("broker_controlled_shutdown", "broker_controlled_shutdown_done")
    sigterm = down["event"][0] == "broker_signal" and down["detail"][0] == "SIGTERM"
    d0 = r.cite(down, "the shutdown begins" + (" (SIGTERM: someone or something stopped it)" if sigterm else ""))
    if controlled.height:
        r.cite(controlled, "controlled shutdown: leadership handed to other brokers first", last=True)
    r.cite_any(r.has("broker_shut_down"), "shut down completed")
    how = "in a controlled shutdown " if controlled.height else ""
    if r.up_after.height:
        u = r.cite(r.up_after, "started again", last=True)
        story.kind = "controlled-restart" if controlled.height else "restart"
        r.say(f"{r.who} was shut down {how}at ", at(d0["ts"]), " and started again at ", at(u["ts"]),
              f" ({fmt_duration((u['ts'] - d0['ts']).total_seconds())} down)"
              + (": a planned restart, what a rolling restart does one broker at a time" if controlled.height else ""))
    else:
        story.kind = "controlled-shutdown" if controlled.height else "shutdown"
        r.say(f"{r.who} was shut down {how}at ", at(d0["ts"]), " and its log shows no start-up after it in the window")
    return True


def _crash(r: _Reading, story: BrokerStory) -> bool:
    if not r.up_late.height:
        return False
    u = r.cite(r.up_late, "start-up banner with no shutdown lines before it")
    story.kind = "crash-restart"
    before = r.silence[0] if r.silence else None
    r.say(f"{r.who} started again at ", at(u["ts"]), " with no shutdown lines before it",
          Text(" (its log is silent from ", at(before), ")") if before else None,
          ": it crashed or was killed (OOM killer, kill -9, host reboot) and was restarted")
    return True


def _silent(r: _Reading, story: BrokerStory) -> None:
    """A stopped broker's log is silent anyway: a silence is told only of a log with no other story
    (or of a crash, before its banner)."""
    silence = r.silence
    if silence is None or story.kind not in ("nothing", "crash-restart"):
        return
    story.silence = (silence[0], silence[1])
    a, b = silence[2], silence[3]
    if a is not None:
        r.evidence.append(Evidence(path=a["file"], line=int(a["line"]), text=a["raw"], ts=silence[0], note=f"{node_words(r.node)}'s last line before its silence"))
    if b is not None:
        r.evidence.append(Evidence(path=b["file"], line=int(b["line"]), text=b["raw"], ts=silence[1], note=f"{node_words(r.node)}'s first line after its silence"))
    to = Text("to ", at(silence[1]), f" ({fmt_duration((silence[1] - silence[0]).total_seconds())})") if silence[1] else Text("to the end of its log")
    said = Text(f"{r.who} logged nothing from ", at(silence[0]), " ", to)
    if story.kind == "nothing":
        story.kind = "silent"
        r.say(said, ": no shutdown, no error, no restart banner — the host or the JVM stopped (a long GC pause, a hung or paused VM, the host down)")
    else:
        r.say(said)


def _session(r: _Reading, story: BrokerStory) -> None:
    expired = r.has("zk_session_expired")
    fenced = r.about.filter(pl.col("event") == "controller_broker_fenced")
    if expired.height:
        row = r.cite(expired, "the broker's ZooKeeper session expired")
        r.say(f"{r.who}'s ZooKeeper session expired at ", at(row["ts"]), " (a long GC pause or a network partition to ZooKeeper): "
              "it was out of the cluster until it re-registered")
    elif fenced.height:
        row = r.cite(fenced, "the controller fenced the broker: its heartbeats stopped")
        r.say(f"the KRaft controller fenced {r.who} at ", at(row["ts"]), ": its heartbeats had stopped")
    else:
        return
    if story.kind == "nothing":
        story.kind = "session-expired" if expired.height else "fenced"


def _leaders(r: _Reading, story: BrokerStory) -> None:
    """The controller's view and the leadership moves."""
    for e, note in (("controller_broker_failure", "the controller saw the broker leave the cluster"),
                    ("controller_broker_shutdown", "the controller moved leaders off the broker")):
        r.cite_any(r.about.filter(pl.col("event") == e), note)
    moved = r.moved
    if moved.height:
        tps = moved.filter(pl.col("topic_partition").is_not_null()).unique("topic_partition", keep="first", maintain_order=True)
        story.moved = [{"topic_partition": x["topic_partition"], "leader": x["leader"] if x["leader"] is not None else x["broker_id"], "ts": x["ts"]}
                       for x in tps.iter_rows(named=True)]
        if story.moved:
            r.cite(moved, f"leadership moved off {node_words(r.node)}")
            shown = ", ".join(f"{safe(m['topic_partition'])} → broker {m['leader']}" for m in story.moved[:5])
            r.say(f"the controller moved {plural(len(story.moved), 'partition leader')} away ({shown}"
                  + (f" and {len(story.moved) - 5} more" if len(story.moved) > 5 else "") + ")")
    unclean = moved.filter(pl.col("event") == "unclean_leader_election")
    if unclean.height:
        r.cite(unclean, "unclean leader election: records not yet replicated are lost")
        r.say(f"{plural(unclean.height, 'unclean leader election')} made an out-of-sync replica leader (records can be lost)")


def explain(ctx: Context, node: int | None, start: dt.datetime | None, end: dt.datetime | None, address: str | None = None,
            logs: list[str] | None = None) -> BrokerStory | None:
    """What the node's own logs (and the controller's lines about it) say from LEAD before ``start``
    to TAIL after ``end``; None when no broker log of that node is among the inputs. ``logs``: the
    broker logs to read when the node is not known (a log that names no node id)."""
    if (logs is None and (node is None or node < 0)) or start is None or end is None:
        return None
    bev = broker_events(ctx)
    if bev.height == 0:
        return None
    logs = _node_logs(ctx, bev, node, address, logs)
    if not logs:
        return None
    uncovered = _not_covering(ctx, node, logs, start, end)
    if uncovered is not None:
        return uncovered
    r = _Reading(ctx, bev, node, logs, start, end)
    names = ", ".join(safe(p) for p in logs)
    story = BrokerStory(node=node, kind="nothing", lead=f"The broker's side ({names}): ", body=Text(), logs=logs)
    _disk(r, story) or _startup_failed(r, story) or _shutdown(r, story) or _crash(r, story)
    _silent(r, story)
    _session(r, story)
    _leaders(r, story)
    story.evidence = r.evidence
    times = [e.ts for e in r.evidence if e.ts is not None]
    story.first, story.last = (min(times), max(times)) if times else (None, None)
    c0, c1 = _covered(ctx, logs, r.w0, r.w1)
    if r.parts:
        story.body = Text(Text.join("; ", r.parts), ".")
    elif c1 - c0 < COVERED_MIN:  # a few lines of the window: that they show nothing says nothing
        story.kind, story.partly = "not-covered", True
        story.body = Text(f"{r.who}'s own log covers only ", at(c0), " to ", at(c1), " of the clients' window (", at(r.w0), " → ", at(r.w1),
                          "), so it cannot tell whether the broker shut down, restarted or kept running then.")
    else:
        clipped = (c0, c1) != (r.w0, r.w1)
        story.body = Text(f"{r.who}'s own logs show no shutdown, restart, disk error, session expiry or silence from ", at(c0), " to ",
                          at(c1), " (the part of the window they cover)" if clipped else "", ": the broker process kept running",
                          " then" if clipped else "", ", so look at the network path between the clients and it, or at its request queues.")
    story.ruled_out = _ruled_out(ctx, story, node, r.w0, r.w1, r.has, logs)
    return story


ZONE_SHIFTS_H = range(1, 15)  # whole hours a log read in the wrong zone is off by


def _not_covering(ctx: Context, node: int | None, logs: list[str], start: dt.datetime, end: dt.datetime) -> BrokerStory | None:
    """The node's logs given, when none of them reaches the clients' window: a story that says so
    (whether the broker stopped or kept running is then not known), with the zone hint when the
    window shifted by whole hours would fall inside them; None when they cover some of it."""
    spans = [(r.first_ts, r.last_ts) for r in ctx.log_inputs() if r.name in logs and r.first_ts is not None and r.last_ts is not None]
    if not spans:
        return None
    a, b = min(x for x, _ in spans), max(y for _, y in spans)
    if a <= end + TAIL and b >= start - LEAD:  # a broker that died has a log ending just before the clients fail
        return None
    names = ", ".join(safe(p) for p in logs)
    side = Text("ends at ", at(b), ", well before") if b < start else Text("starts at ", at(a), ", after")
    shifts = [k * sign for k in ZONE_SHIFTS_H for sign in (1, -1) if a <= start - dt.timedelta(hours=k * sign) <= b]
    hint = ""
    if shifts:
        k = min(shifts, key=abs)
        hint = (f" Moved {abs(k)} h {'earlier' if k > 0 else 'later'}, the clients' window would fall inside it: if one of these logs' "
                "zone-less stamps was read in the wrong zone, give --tz 'GLOB=ZONE' for it ('logsleuth inspect' shows the zone "
                "each input was read in).")
    body = Text(f"node {node}'s log given ({names}) ", side, " the clients' window (", at(start), " → ", at(end), "), "
                f"so it cannot tell whether the broker shut down, restarted or kept running then.{hint}")
    return BrokerStory(node=node, kind="not-covered", lead="The broker's side: ", body=body, logs=logs, zone_hint=bool(shifts))


COVERED_MIN = dt.timedelta(seconds=30)  # a broker log covering less of the window than this rules nothing out by absence


def _covered(ctx: Context, logs: list[str], w0: dt.datetime, w1: dt.datetime) -> tuple[dt.datetime, dt.datetime]:
    """The part of [w0, w1] the node's logs span (the whole window when none has times)."""
    spans = [(r.first_ts, r.last_ts) for r in ctx.log_inputs() if r.name in logs and r.first_ts is not None and r.last_ts is not None]
    c0 = max([w0, *[a for a, _ in spans]]) if spans else w0
    c1 = min([w1, *[b for _, b in spans]]) if spans else w1
    return c0, c1


def _ruled_out(ctx: Context, story: BrokerStory, node: int | None, w0, w1, has, logs: list[str]) -> list[Text]:
    # an absence is stated for the part of the window the node's logs cover, and not at all when
    # they cover (almost) none of it: a one-line excerpt shows no banner because it holds one line
    c0, c1 = _covered(ctx, logs, w0, w1)
    out: list[Text] = []
    silent = [Text(f"A broker that was up but refusing clients: {node_words(node)} logged nothing at all while the clients failed")] if story.kind == "silent" else []
    if c1 - c0 < COVERED_MIN:
        return silent
    span = Text("from ", at(c0), " to ", at(c1), "" if (c0, c1) == (w0, w1) else " (the part of the window it covers)")
    if story.kind not in ("controlled-restart", "controlled-shutdown", "restart", "shutdown") and not has(*SHUTDOWN).height:
        out.append(Text(f"A controlled shutdown or rolling restart of {node_words(node)}: its log has no shutdown lines ", span))
    if story.kind not in ("disk-full", "log-dir-failure") and not story.disk_full:
        out.append(Text(f"A full disk or failed log directory on {node_words(node)}: no log directory failure in its log ", span))
    if story.kind not in ("crash-restart",) and not has(*STARTUP).height:
        out.append(Text(f"A crash and restart of {node_words(node)}: no start-up banner in its log ", span))
    return out + silent


def _silence(ctx: Context, logs: list[str], t0: dt.datetime, t1: dt.datetime, bev: pl.DataFrame):
    """The longest stretch with no record at all in the node's logs that overlaps [t0, t1]:
    (from, to or None when the log ends in it, last row before, first row after), or None. Read
    from the logs' records, on the events' clock (the offset of a corrected log is taken from its
    events)."""
    best = None
    for path in logs:
        try:
            recs = ctx.records(path)
        except (ValueError, OSError):
            continue
        recs = recs.filter(pl.col("ts").is_not_null()).sort(["ts", "line"])
        if recs.height < SILENCE_MIN_RECORDS:
            continue
        own = bev.filter(pl.col("path") == path).select("file", "line", ev_ts="ts")
        off = recs.join(own.with_columns(pl.col("file").cast(pl.String)), left_on=[pl.col("file").cast(pl.String), "line"], right_on=["file", "line"], how="inner")
        shift = (off["ev_ts"] - off["ts"]).median() if off.height else None
        if shift is not None:
            recs = recs.with_columns(pl.col("ts") + shift)
        usual = recs.select(pl.col("ts").diff().median()).item()
        silent = max(SILENT, usual * SILENT_VS_USUAL) if usual is not None else SILENT
        g = recs.select(
            "ts", prev_ts=pl.col("ts").shift(1), prev=pl.struct("file", "line", "raw").shift(1), cur=pl.struct("file", "line", "raw"),
        ).filter(pl.col("prev_ts").is_not_null() & ((pl.col("ts") - pl.col("prev_ts")) >= silent)
                 & (pl.col("prev_ts") <= t1) & (pl.col("ts") >= t0))
        last = recs.row(-1, named=True)
        cands = [(r["prev_ts"], r["ts"], r["prev"], r["cur"]) for r in g.iter_rows(named=True)]
        end_log = ctx.input(path)
        if last["ts"] < t1 - silent and last["ts"] >= t0 - silent:  # the log stops inside the window
            cands.append((last["ts"], None, {"file": str(last["file"]), "line": last["line"], "raw": last["raw"]}, None))
        for c in cands:
            length = ((c[1] or (end_log.last_ts if end_log and end_log.last_ts else t1)) - c[0]).total_seconds()
            if best is None or length > best[0]:
                best = (length, c)
    if best is None:
        return None
    a, b, pa, pb = best[1]
    for p in (pa, pb):
        if p is not None:
            p["file"] = str(p["file"])
    return a, b, pa, pb


def impact_by_node(ctx: Context) -> pl.DataFrame:
    """Client-side episodes (kafka.broker-unreachable's model) per node: node, from, to, path, client,
    and lost (records expired or send() calls failed in that episode: the same sums as the client findings)."""
    from logsleuth.detectors.kafka.model import build, loss_of

    schema = pl.Schema({"node": pl.Int64(), "from": pl.Datetime("us", "UTC"), "to": pl.Datetime("us", "UTC"), "path": pl.String(), "client": pl.String(),
                        "lost": pl.Boolean(), "system": pl.String()})
    frames = [_sarama_impact(ctx, schema)]
    m = build(ctx)
    if m is not None and m.episodes.height:
        eps = m.episodes.filter(pl.col("node").is_not_null())
        lost = []
        for path, ep in eps.select("path", "ep").iter_rows():  # one per episode, not per event
            d = loss_of(m, path, ep)
            lost.append(bool(d["expired_records"] or d["failed_sends"] or d["metadata_timeouts"]))
        frames.insert(0, eps.select("node", "from", "to", "path", "client").with_columns(lost=pl.Series(lost, dtype=pl.Boolean), system=pl.lit("kafka")))
    return pl.concat([f.cast(schema) for f in frames if f.height], how="vertical") if any(f.height for f in frames) else pl.DataFrame(schema=schema)


def _sarama_impact(ctx: Context, schema: pl.Schema) -> pl.DataFrame:
    """sarama clients' broker episodes (the sarama client model: detectors/sarama/client.py) per node:
    from the first failure to the delivery or recovery that closed it (or the episode's last line);
    lost: errors were handed back to the application in it."""
    from logsleuth.detectors.sarama.chain import CHAIN_EVENTS
    from logsleuth.detectors.sarama.client import view

    ev = ctx.events
    if ev.height == 0 or "system" not in ev.columns:
        return pl.DataFrame(schema=schema)
    sar = ev.filter(pl.col("system") == "sarama")
    rows = []
    for path in sar.filter(pl.col("event").is_in(list(CHAIN_EVENTS)))["path"].unique(maintain_order=True).to_list():
        _, eps = view(ctx, path, sar.filter(pl.col("path") == path))
        for e in eps:
            if e.broker.node is None or not e.fails or e.folded:
                continue
            ends = [r.get("ts") for r in (e.delivery, e.recovery, *reversed(e.rows)) if r]
            t0, t1 = e.first.get("ts"), next((t for t in ends if t is not None), None)
            if t0 is None or t1 is None:
                continue
            rows.append({"node": e.broker.node, "from": t0, "to": t1, "path": path, "client": None, "lost": bool(e.errors), "system": "sarama"})
    return pl.DataFrame(rows, schema=schema) if rows else pl.DataFrame(schema=schema)


LABEL = {
    "disk-full": "disk full", "log-dir-failure": "log directory failed", "controlled-restart": "controlled restart",
    "restart": "restarted", "controlled-shutdown": "controlled shutdown", "shutdown": "shut down",
    "crash-restart": "crashed and restarted", "session-expired": "ZooKeeper session expired", "fenced": "fenced by the controller",
    "silent": "silent, host or JVM stopped", "startup-failed": "failed to start",
}

REMEDY = {
    "disk-full": "Free or grow the disk of {node}'s log directory (retention.bytes / retention.ms, delete stale topics, add a volume) "
                 "and alert on free space per log.dirs entry; a broker whose every log directory failed stops itself, and one with "
                 "several directories keeps serving the others (KIP-112).",
    "log-dir-failure": "Replace or repair the failing disk behind {node}'s log directory; the broker took it offline (KIP-112) and "
                       "stops when all of them are offline. Check the kernel log (dmesg) for I/O errors.",
    "controlled-restart": "This was a planned restart of {node}: producers ride it out when the partitions it led have another "
                          "in-sync replica (replication.factor >= 3, min.insync.replicas = 2) and delivery.timeout.ms is longer than "
                          "one broker's restart; restart the next broker only once under-replicated partitions are back to 0.",
    "restart": "{Node} was shut down and started again: find who stopped it (deployment, operator, systemd) and make restarts "
               "controlled (controlled.shutdown.enable=true) and one broker at a time.",
    "controlled-shutdown": "{Node} was shut down and not started again in the window: bring it back, or move its partitions (kafka-reassign-partitions).",
    "shutdown": "{Node} was shut down and not started again in the window: bring it back and find out who stopped it.",
    "crash-restart": "{Node} died without shutting down and was restarted: look for the OOM killer (dmesg, the container's exit "
                     "code 137), a JVM crash file (hs_err_pid*.log) or a host reboot at that time.",
    "session-expired": "{Node}'s ZooKeeper session expired: look for a long GC pause in its GC log and for network trouble to "
                       "ZooKeeper; zookeeper.session.timeout.ms (18000 ms since 2.5) is how long it may be silent.",
    "fenced": "The controller fenced {node} after its heartbeats stopped: look for a long GC pause or a stalled host; "
              "broker.session.timeout.ms (9000 ms) is how long it may miss heartbeats.",
    "startup-failed": "{Node} cannot start: the exception after 'Fatal error during KafkaServer startup' in its log says why "
                      "(a full or failed log directory, a bad config, a port in use, a corrupted index); fix that before the next "
                      "attempt, and until it is up keep its partitions' other replicas in sync (kafka-topics --describe "
                      "--under-replicated-partitions).",
    "silent": "{Node} wrote nothing while the clients failed: look at the host (reboot, paused or migrated VM, disk hang), "
              "the JVM (GC log: a stop-the-world pause) and its process supervisor for that window.",
}


def remedy(story: BrokerStory) -> str | None:
    return remedy_for(story.kind, story.node) if story.kind in REMEDY else None


def moved_named(story: BrokerStory, named_tps: list) -> list[str]:
    """The partitions a client's retries named whose leadership the broker logs show moving."""
    have = {m["topic_partition"] for m in story.moved}
    return [t for t in (named_tps or []) if t in have]


SIDE = Verdict.load(__file__, "kafka.broker-side")


@dataclass
class BrokerSideFacts:
    """What a client finding takes from the node's story (kafka.broker-side.toml words it)."""

    node: int | None
    kind: str
    explains: bool
    label: str
    logs: list[str]
    story: Text
    zone_hint: bool
    partly: bool
    remedy: str | None
    leader_retries: int | None
    leaders_moved: bool
    window_from: dt.datetime | None
    window_to: dt.datetime | None


def link_episode(ctx: Context, ep: dict, finding) -> BrokerStory | None:
    """The broker's side of a client episode written into a client finding (root cause, evidence,
    ruled out, remediation, cause, confidence — as kafka.broker-side.toml declares): the one hook
    the client detectors call."""
    story = explain(ctx, ep.get("node"), ep.get("from"), ep.get("to"), ep.get("address"))
    if story is None:
        return None
    facts = BrokerSideFacts(
        node=story.node, kind=story.kind, explains=story.explains, label=LABEL.get(story.kind, story.kind), logs=list(story.logs),
        story=story.text, zone_hint=story.zone_hint, partly=story.partly, remedy=remedy(story) if story.explains else None,
        leader_retries=ep.get("not_leader_retries"), leaders_moved=bool(story.moved), window_from=ep.get("from"), window_to=ep.get("to"),
    )
    finding.root_cause = Text(finding.root_cause, SIDE.phrase("root_cause", facts))
    finding.title = Text(finding.title, SIDE.phrase("title", facts))
    finding.evidence = sorted(finding.evidence + story.evidence, key=lambda e: (e.ts is None, e.ts, e.path, e.line))
    finding.ruled_out += story.ruled_out
    finding.confidence, reasons = SIDE.adjust(finding.confidence, facts)
    finding.confidence_reasons += reasons
    first, last = SIDE.phrase("remedy_first", facts), SIDE.phrase("remedy_last", facts)
    if first:
        finding.remediation.insert(0, first)
    if last:
        finding.remediation.append(last)
    moved = moved_named(story, list(ep.get("named_tps") or []))
    if isinstance(finding.cause, dict):
        finding.cause["broker_side"] = story.cause()
    finding.details["broker_side"] = {**story.cause(), "leaders_moved_named_by_retries": moved}
    return story
