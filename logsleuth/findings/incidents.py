"""Incidents: the findings that share a root cause, under one headline.

A Kafka node outage is seen as expired batches, an unreachable broker and an exhausted buffer in each
client that used the node, and as the broker's own restart; a Pulsar bundle unload as stuck producers
and as the shedder's decision. Each is a finding of its own (its evidence, its confidence), and
together they are one incident: one headline naming the cause, its window, every log and client it
hit, and the action that ends it.

Which findings belong together is declared data (``incidents.toml`` beside this module): the keys a
finding's cause names (a Kafka node, a broker address, a Pulsar bundle) and the window it names them
for; findings sharing a key in overlapping windows (give or take ``slack_s``) are one incident. The
headline and the action are that file's words, rendered from the facts of the member that states
the cause best. A finding that shares nothing is an incident of its own, worded as the finding is.
"""

from __future__ import annotations

import datetime as dt
import functools
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from logsleuth.detectors.finding import SEVERITY_RANK, Finding
from logsleuth.detectors.verdict import Verdict, holds, lookup, Scope
from logsleuth.detectors.words import Text

RULES_FILE = Path(__file__).with_name("incidents.toml")


@dataclass
class Incident:
    number: int
    members: list[int]  # the findings' positions in the ranked list (0-based)
    cause_member: int  # the member whose facts word the headline
    headline: Text
    now: Text
    first: dt.datetime | None
    last: dt.datetime | None
    hit: list[str] = field(default_factory=list)  # the logs (and clients) it hit
    keys: list[tuple] = field(default_factory=list)  # what its members share (kind, value)
    first_estimated: bool = False  # its start is a member's estimated start (Finding.start_estimated)

    def severity(self, findings: list[Finding]) -> str:
        return min((findings[k].severity for k in self.members), key=SEVERITY_RANK.__getitem__)

    def confidence(self, findings: list[Finding]) -> float:
        return findings[self.cause_member].confidence

    def to_json(self, findings: list[Finding]) -> dict:
        from logsleuth.detectors.words import render
        from logsleuth.ingest.timeparse import iso_utc

        return {
            "number": self.number,
            "severity": self.severity(findings),
            "confidence": self.confidence(findings),
            "headline": render(self.headline),
            "now": render(self.now),
            "first_seen": iso_utc(self.first),
            "last_seen": iso_utc(self.last),
            **({"first_seen_estimated": True} if self.first_estimated else {}),
            "hit": self.hit,
            "shares": [{"kind": k, "value": v} for k, v in self.keys],
            "findings": [k + 1 for k in self.members],  # as the report numbers them
            "finding_ids": [findings[k].id for k in self.members],
            "cause_finding": self.cause_member + 1,
        }


@dataclass
class Rules:
    slack: dt.timedelta
    findings: dict[str, dict]
    rules: list[dict]
    words: Verdict


@functools.lru_cache(maxsize=1)
def rules() -> Rules:
    with open(RULES_FILE, "rb") as f:
        d = tomllib.load(f)
    words: dict[str, Any] = dict(d.get("words", {}))
    rs = list(d.get("rule", []))
    for k, r in enumerate(rs):
        words[f"rule{k}.headline"] = r["headline"]
        words[f"rule{k}.now"] = r["now"]
    v = Verdict(id="incidents", title="incidents", doc="docs/incidents.md", thresholds={}, severity_rules=[{"is": "info"}],
                confidence_spec={}, words_spec=words, items={}, evidence_notes={}, source=RULES_FILE)
    return Rules(dt.timedelta(seconds=float(d.get("slack_s", 300))), {f["id"]: f for f in d.get("finding", [])}, rs, v)


def _facts(f: Finding) -> dict:
    return {"cause": f.cause, "subjects": f.subjects, "first": f.first_seen, "last": f.last_seen, "title": f.title,
            "id": f.id, "severity": f.severity}


def _as_time(v: Any) -> dt.datetime | None:
    if isinstance(v, dt.datetime):
        return v
    if isinstance(v, str):
        try:
            return dt.datetime.fromisoformat(v.replace("Z", "+00:00"))
        except ValueError:
            return None
    return None


def _keys(f: Finding, spec: dict, v: Verdict) -> list[tuple[tuple, dt.datetime | None, dt.datetime | None]]:
    """(key, from, to) of every key the finding's facts name."""
    facts = _facts(f)
    scope = Scope(v, facts)
    items = [None]
    if spec.get("each"):
        items = list(lookup(scope, spec["each"]) or [])
    out = []
    for item in items:
        s = scope.with_item(item) if item is not None else scope
        start = _as_time(lookup(s, spec.get("from", "first"))) or f.first_seen
        end = _as_time(lookup(s, spec.get("to", "last"))) or f.last_seen or start
        for kind, name, *when in spec.get("keys", []):
            if when and not holds(when[0], s):  # a key that holds only when its condition does
                continue
            value = lookup(s, name)
            if value is None or value == "":
                continue
            out.append(((kind, str(value)), start, end))
    return out


def _hit(f: Finding) -> list[str]:
    """The logs a finding's subjects are in, each with the client named in it: a subject's client
    log (``client``) before the log its lines are in (``path``), and its client id or connection."""
    out: list[str] = []
    for s in f.subjects:
        if not isinstance(s, dict):
            continue
        log = s.get("client") if isinstance(s.get("client"), str) else s.get("path")
        who = s.get("client_id") or s.get("connection")
        if isinstance(log, str):
            out.append(f"{log} ({who})" if who else log)
    return out


def group(findings: list[Finding]) -> list[Incident]:
    """The incidents of ranked findings, worst first (each finding in exactly one)."""
    r = rules()
    keyed = [(_keys(f, r.findings[f.id], r.words) if f.id in r.findings else []) for f in findings]
    parent = list(range(len(findings)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    shared: dict[int, set] = {}
    spans: dict[int, list] = {}  # the windows of the keys a finding shares: the incident's window
    by_key: dict[tuple, list] = {}
    # a finding declared `bridge = false` (the shedder's summary of many unloads) joins an incident
    # it shares a key with but does not tie two incidents together: it is attached afterwards
    joins = {i for i, f in enumerate(findings) if r.findings.get(f.id, {}).get("bridge", True) is False}
    for i, ks in enumerate(keyed):
        if i in joins:
            continue
        for k, a0, a1 in ks:
            if a0 is not None and a1 is not None:  # an untimed finding is not tied to another by time
                by_key.setdefault(k, []).append((a0, a1, i))
    for k, items in by_key.items():  # a sweep per key: O(n log n), not every pair of findings
        items.sort(key=lambda x: (x[0], x[2]))
        run_end, run_first = None, -1  # run_first: the run's first finding, set with run_end
        for a0, a1, i in items:
            if run_end is not None and a0 - r.slack <= run_end:
                ri, rj = find(run_first), find(i)
                if ri != rj:
                    parent[max(ri, rj)] = min(ri, rj)
                for x in (run_first, i):
                    shared.setdefault(x, set()).add(k)
                spans.setdefault(i, []).append((a0, a1))
                if run_first not in spans or (run_first_span not in spans[run_first]):
                    spans.setdefault(run_first, []).append(run_first_span)
                run_end = max(run_end, a1)
            else:
                run_end, run_first, run_first_span = a1, i, (a0, a1)
    for i in sorted(joins):  # the worst incident (lowest finding) it shares a key with, in time
        best = None
        for k, a0, a1 in keyed[i]:
            if a0 is None or a1 is None:
                continue
            for b0, b1, j in by_key.get(k, []):
                if a0 - r.slack <= b1 and b0 - r.slack <= a1 and (best is None or find(j) < find(best[0])):
                    best = (j, k, a0, a1)
        if best is not None:
            j, k, a0, a1 = best
            parent[i] = find(j)
            shared.setdefault(i, set()).add(k)
            shared.setdefault(j, set()).add(k)
            spans.setdefault(i, []).append((a0, a1))
    groups: dict[int, list[int]] = {}
    for i in range(len(findings)):
        groups.setdefault(find(i), []).append(i)
    out = []
    for n, members in enumerate(sorted(groups.values(), key=lambda m: m[0]), start=1):
        out.append(_incident(n, members, findings, r, sorted({k for i in members for k in shared.get(i, ())}), spans))
    return out


def _window(i: int, f: Finding, spans: dict[int, list], r: Rules) -> tuple:
    """A member's part of the incident's window: its finding's own window, or, when the finding
    tells of several things (a shedder's unloads of many bundles), the times of the ones shared."""
    own = (f.first_seen, f.last_seen or f.first_seen)
    if r.findings.get(f.id, {}).get("each") and spans.get(i):
        return (min(a for a, _ in spans[i]), max(b for _, b in spans[i]))
    return own


def _incident(n: int, members: list[int], findings: list[Finding], r: Rules, keys: list[tuple], spans: dict[int, list]) -> Incident:
    def rank(i: int) -> tuple:
        spec = r.findings.get(findings[i].id, {})
        return (spec.get("cause_rank", 99), i)

    cause = min(members, key=rank) if len(members) > 1 else members[0]
    f = findings[cause]
    wins = [_window(i, findings[i], spans, r) for i in members]
    firsts = [a for a, _ in wins if a is not None]
    # the window starts at an estimated start: every member that starts it has one (its own window's,
    # not the times of the keys it shares)
    starters = [(i, w) for i, w in zip(members, wins) if firsts and w[0] == min(firsts)]
    first_estimated = bool(starters) and all(findings[i].start_estimated and w[0] == findings[i].first_seen for i, w in starters)
    lasts = [b for _, b in wins if b is not None]
    seen: dict[str, None] = {}  # in order, each once (a dict: 10^5 subjects stay linear)
    for i in members:
        if not r.findings.get(findings[i].id, {}).get("hit", True):
            continue  # the broker's own side (its restart, its shedder): not what the incident hit
        seen.update(dict.fromkeys(_hit(findings[i])))
    hit = list(seen)
    worst = findings[members[0]]
    facts = _facts(f)
    facts.update(
        hit=hit,
        members=[findings[i].id for i in members],
        window={"first": min(firsts) if firsts else None, "last": max(lasts) if lasts else None},
        first_action=_action(f) or _action(worst),
        worst_action=_action(worst),
    )
    scope = Scope(r.words, facts)
    for k, rule in enumerate(r.rules):
        if rule.get("finding") not in (None, f.id) or not holds(rule.get("when"), scope):
            continue
        headline = r.words.phrase(f"rule{k}.headline", facts)
        now = r.words.phrase(f"rule{k}.now", facts)
        break
    else:  # the file's last rule has no finding and no condition: never reached
        headline, now = Text(f.title), _action(f)
    return Incident(n, members, cause, headline, now, facts["window"]["first"], facts["window"]["last"], hit, keys, first_estimated)


def _action(f: Finding) -> Text:
    """A finding's first remediation as the action to take now ('Now: restart …' loses its 'Now: ')."""
    if not f.remediation:
        return Text()
    a = Text(f.remediation[0])
    if a.parts and isinstance(a.parts[0], str) and a.parts[0].lower().startswith("now: "):
        head = a.parts[0][5:].lstrip()
        a = Text(head[:1].upper() + head[1:], *a.parts[1:])
    return a
