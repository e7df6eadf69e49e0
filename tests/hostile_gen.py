"""Generators for the hostile-input tests (issue 21): Pulsar broker logs with many distinct topics,
or many producers stuck behind 'already present on the connection', in the shapes Pulsar 2.x's
ServerCnx prints (sample_logs/pulsar-incident is the reference)."""

from __future__ import annotations

import datetime as dt

HEAD = "{t} [pulsar-io-22-{w}] INFO  org.apache.pulsar.broker.service.ServerCnx - "
WARN = "{t} [pulsar-io-22-{w}] WARN  org.apache.pulsar.broker.service.ServerCnx - "


def _t(base: dt.datetime, ms: int) -> str:
    x = base + dt.timedelta(milliseconds=ms)
    return x.strftime("%H:%M:%S.") + f"{x.microsecond // 1000:03d}"


def many_topics(topics: int, clients: int) -> str:
    """Each client connects, and creates one producer per topic it owns (topics spread over the
    clients): every topic distinct, no incident."""
    base = dt.datetime(2020, 6, 1, 1, 0, 0)
    out = []
    ms = 0
    per = max(1, topics // clients)
    n = 0
    for c in range(clients):
        cnx = f"/10.{c // 250}.{c % 250}.7:{20000 + c}"
        out.append(HEAD.format(t=_t(base, ms), w=c % 8) + f"New connection from {cnx}")
        for p in range(per):
            if n >= topics:
                break
            topic = f"persistent://tenant-{c % 50}/ns-{c % 7}/topic-{n}"
            ms += 1
            out.append(HEAD.format(t=_t(base, ms), w=p % 8) + f"[{cnx}][{topic}] Creating producer. producerId={p}")
            out.append(HEAD.format(t=_t(base, ms), w=p % 8) + f"[{cnx}] Created new producer: Producer{{topic=PersistentTopic{{topic={topic}}}, client={cnx}, producerName=c{c}-{p}, producerId={p}}}")
            n += 1
    return "\n".join(out) + "\n"


def stuck_producers(n: int, attempts: int = 3, span_s: int = 60) -> str:
    """``n`` producers on their own connections, each with a creation never answered and then
    ``attempts`` rejections 'already present on the connection' over ``span_s`` seconds."""
    base = dt.datetime(2020, 6, 1, 1, 0, 0)
    lines: list[tuple[int, str]] = []
    for i in range(n):
        cnx = f"/10.{i // 60000}.{(i // 250) % 240}.{i % 250}:{30000 + i % 30000}"
        topic = f"persistent://public/default/t-{i}"
        start = i * 3  # ms
        lines.append((start, HEAD.format(t="{t}", w=i % 8) + f"[{cnx}][{topic}] Creating producer. producerId=1"))
        for a in range(attempts):
            at = start + 1000 + a * (span_s * 1000 // max(1, attempts - 1))
            lines.append((at, WARN.format(t="{t}", w=i % 8) + f"[{cnx}][1] Producer with id {topic} is already present on the connection"))
    lines.sort(key=lambda x: x[0])
    return "\n".join(text.replace("{t}", _t(base, ms), 1) for ms, text in lines) + "\n"
