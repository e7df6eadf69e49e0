"""The layout zoo: the three sample incidents written again in many shapes.

Each record of a clean sample incident (sample_logs/pulsar-incident, kafka-outage,
sarama-blackhole) is read once, then written back in another layout (log4j, logback, pipes,
brackets, level first, dotted dates, offsets, Logstash JSON, Kafka's own; for Go: std log,
logrus, zap JSON and console, klog), with or without its stack-trace lines, inside another wrapper
(docker compose, kubectl --prefix, stern, --timestamps, CRI, docker json-file, journald, RFC 5424,
a Markdown quote, an indented block, grep -n output), or several of them around each other. The
same records in any shape must give the same findings (tests/test_zoo.py).

    python tests/zoo.py OUT_DIR     # write every shape to OUT_DIR/<incident>/<shape>/
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_logs"
INCIDENTS = {"pulsar": "pulsar-incident", "kafka": "kafka-outage", "sarama": "sarama-blackhole"}


@dataclass
class Rec:
    ts: dt.datetime  # UTC, as the file's clock wrote it (skew kept)
    level: str
    logger: str
    thread: str
    msg: str
    cont: list[str]  # continuation lines (stack traces)
    line: int = 0  # where it is in the clean file
    line_end: int = 0


def read(path: Path) -> list[Rec]:
    """Every record of a clean sample file, read by logsleuth itself (the samples are known good)."""
    from logsleuth.ingest.inputs import ReadOptions
    from logsleuth.ingest.reader import read_all

    (rep, recs), = read_all([str(path)], ReadOptions(tz="UTC"))
    out = []
    for r in recs.iter_rows(named=True):
        first, *rest = (r["msg"] or "").split("\n")
        out.append(Rec(r["ts"], (r["level"] or "INFO").upper(), r["logger"] or "main", r["thread"] or "main", first, rest, r["line"], r["line_end"]))
    return out


# ----------------------------------------------------------------------------- layouts (one record -> its first line)

def _ms(t: dt.datetime, sep: str = ",") -> str:
    return t.strftime("%Y-%m-%d %H:%M:%S") + f"{sep}{t.microsecond // 1000:03d}"


def _short(logger: str, width: int = 36) -> str:
    """logback's %logger{36}: package segments cut to their first letter from the left."""
    segs = logger.split(".")
    i = 0
    while len(".".join(segs)) > width and i < len(segs) - 1:
        segs[i] = segs[i][:1]
        i += 1
    return ".".join(segs)


JAVA = {
    "log4j-iso": lambda r: f"{_ms(r.ts)} {r.level:<5} [{r.thread}] {r.logger} - {r.msg}",
    "logback-time": lambda r: f"{r.ts:%H:%M:%S}.{r.ts.microsecond // 1000:03d} [{r.thread}] {r.level:<5} {_short(r.logger)} - {r.msg}",
    "level-first": lambda r: f"{r.level:<5} {_ms(r.ts)} [{r.thread}] {r.logger}: {r.msg}",
    "pipes": lambda r: f"{_ms(r.ts, '.')} | {r.level:<5} | {r.thread} | {r.logger} | {r.msg}",
    "brackets": lambda r: f"[{_ms(r.ts, '.')}] [{r.level}] [{r.thread}] {r.logger} - {r.msg}",
    "dotted-date": lambda r: f"{r.ts:%d.%m.%Y %H:%M:%S}.{r.ts.microsecond // 1000:03d} {r.level:<5} [{r.thread}] {r.logger} {r.msg}",
    "offset-iso": lambda r: f"{(r.ts + dt.timedelta(hours=2)):%Y-%m-%dT%H:%M:%S}.{r.ts.microsecond // 1000:03d}+02:00 {r.level} {r.logger} [{r.thread}] {r.msg}",
    "kafka-style": lambda r: f"[{_ms(r.ts)}] {r.level} {r.msg} ({r.logger})",
}
GO = {
    "go-std": lambda r: f"[sarama] {r.ts:%Y/%m/%d %H:%M:%S}.{r.ts.microsecond:06d} {r.msg}",
    "go-micro": lambda r: f"{r.ts:%Y/%m/%d %H:%M:%S}.{r.ts.microsecond:06d} {r.msg}",
    "logrus": lambda r: f'time="{r.ts:%Y-%m-%dT%H:%M:%S}.{r.ts.microsecond:06d}Z" level={r.level.lower()} msg={json.dumps(r.msg)}',
    "zap-console": lambda r: f"{r.ts:%Y-%m-%dT%H:%M:%S}.{r.ts.microsecond // 1000:03d}Z\t{r.level.lower()}\tsarama\t{r.msg}",
    "klog": lambda r: f"{r.level[:1]}{r.ts:%m%d %H:%M:%S}.{r.ts.microsecond:06d}   12345 sarama.go:42] {r.msg}",
}
# layouts that are one JSON object per record (the stack trace inside)
JSON_LAYOUTS = {
    "logstash-json": lambda r: json.dumps({
        "@timestamp": r.ts.strftime("%Y-%m-%dT%H:%M:%S.") + f"{r.ts.microsecond // 1000:03d}Z", "level": r.level,
        "logger_name": r.logger, "thread_name": r.thread, "message": r.msg,
        **({"stack_trace": "\n".join(r.cont)} if r.cont else {}),
    }),
    "zap-json": lambda r: json.dumps({"level": r.level.lower(), "ts": round(r.ts.timestamp(), 6), "logger": "sarama", "msg": r.msg}),
}


def render(recs: list[Rec], layout: str, traces: bool = True) -> list[tuple[dt.datetime, str]]:
    """(time, physical line) of every line of the file in ``layout``."""
    out = []
    if layout in JSON_LAYOUTS:
        return [(r.ts, JSON_LAYOUTS[layout](r)) for r in recs]
    fmt = {**JAVA, **GO}[layout]
    for r in recs:
        out.append((r.ts, fmt(r)))
        if traces:
            out += [(r.ts, c) for c in r.cont]
    return out


# ----------------------------------------------------------------------------- wrappers (one physical line -> the wrapped line)

def _rfc3339(t: dt.datetime, digits: int = 9) -> str:
    frac = f"{t.microsecond:06d}" + "000"
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + frac[:digits] + "Z"


WRAPPERS = {
    "compose": lambda t, line, svc, n: f"{svc + '-1':<22}| {line}",
    "kubectl-prefix": lambda t, line, svc, n: f"[pod/{svc}-7d9f8b6c4-x2x9z/app] {line}",
    "stern": lambda t, line, svc, n: f"{svc}-7d9f8b6c4-x2x9z app {line}",
    "docker-ts": lambda t, line, svc, n: f"{_rfc3339(t)} {line}",
    "cri": lambda t, line, svc, n: f"{_rfc3339(t)} stdout F {line}",
    "docker-json": lambda t, line, svc, n: json.dumps({"log": line + "\n", "stream": "stdout", "time": _rfc3339(t)}),
    "journald-iso": lambda t, line, svc, n: f"{t:%Y-%m-%dT%H:%M:%S}+0000 node-3 {svc}[812]: {line}",
    "rfc5424": lambda t, line, svc, n: f"<134>1 {_rfc3339(t, 3)} node-3 {svc} 812 - - {line}",
    "markdown-quote": lambda t, line, svc, n: f"> {line}",
    "indented": lambda t, line, svc, n: f"    {line}",
    "grep-n": lambda t, line, svc, n: f"logs/{svc}.log:{n}:{line}",
}


@dataclass(frozen=True)
class Shape:
    name: str
    layout: str | None  # None: the file's own layout, as it is
    wrappers: tuple[str, ...] = ()  # outermost last
    traces: bool = True


def shapes(incident: str) -> list[Shape]:
    """The shapes each incident is written in (at least 40 over the three)."""
    if incident == "sarama":
        out = [Shape(f"{lay}", lay) for lay in (*GO, "zap-json")]
        out += [Shape(f"go-std+{w}", "go-std", (w,)) for w in ("compose", "kubectl-prefix", "stern", "docker-ts", "cri", "docker-json", "journald-iso", "markdown-quote", "grep-n")]
        out += [Shape("zap-json+cri", "zap-json", ("cri",)), Shape("logrus+compose", "logrus", ("compose",)), Shape("klog+docker-json", "klog", ("docker-json",))]
        out += [Shape("go-micro+docker-ts+compose", "go-micro", ("docker-ts", "compose"))]
        return out
    out = [Shape(lay, lay) for lay in (*JAVA, "logstash-json")]
    # without their stack-trace lines (compared with the clean incident without them: NO_TRACES)
    out += [Shape(f"{lay}-no-traces", lay, (), False) for lay in ("log4j-iso", "pipes")]
    out += [Shape(f"as-is+{w}", None, (w,)) for w in WRAPPERS]
    out += [
        Shape("log4j-iso+docker-ts+compose", "log4j-iso", ("docker-ts", "compose")),
        Shape("pipes+markdown-quote", "pipes", ("markdown-quote",)),
        Shape("brackets+kubectl-prefix", "brackets", ("kubectl-prefix",)),
        Shape("logstash-json+cri", "logstash-json", ("cri",)),
        Shape("kafka-style+rfc5424", "kafka-style", ("rfc5424",)),
        Shape("level-first+markdown-quote+indented", "level-first", ("markdown-quote", "indented")),
    ]
    return out


NO_TRACES = Shape("as-is-no-traces", None, (), False)


def baseline(shape: Shape) -> Shape | None:
    """The shape whose findings ``shape`` must give: the clean incident (None), or the clean
    incident without its stack-trace lines for a shape without them."""
    return None if shape.traces else NO_TRACES


def _service(name: str) -> str:
    return name.split(".")[0].removesuffix(".log")


def write(incident: str, shape: Shape, out: Path) -> Path:
    """The incident's files in ``shape`` under ``out`` (one directory); returns it."""
    src = SAMPLES / INCIDENTS[incident]
    out.mkdir(parents=True, exist_ok=True)
    for f in sorted(src.iterdir()):
        name = f.name.removesuffix(".gz")
        svc = _service(name)
        recs = read(f)
        if shape.layout is None:  # the file as it is; each physical line with its record's time
            import gzip

            data = f.read_bytes()
            lines = (gzip.decompress(data) if f.suffix == ".gz" else data).decode("utf-8").splitlines()
            when = [recs[0].ts] * len(lines)
            for r in recs:
                for k in range(r.line - 1, min(r.line_end, len(lines))):
                    when[k] = r.ts
            phys = list(zip(when, lines))
            if not shape.traces:
                firsts = {r.line - 1 for r in recs}
                phys = [x for k, x in enumerate(phys) if k in firsts]
        else:
            phys = render(recs, shape.layout, shape.traces)
        for w in shape.wrappers:
            phys = [(t, WRAPPERS[w](t, line, svc, n)) for n, (t, line) in enumerate(phys, 1)]
        date = recs[0].ts.date().isoformat() if recs else "2024-01-01"
        # a time-only layout takes its date from the file name (as Pulsar's 2.x broker logs do)
        target = out / (name if date in name or shape.layout not in ("logback-time",) else f"{svc}.{date}.log")
        target.write_text("".join(line + "\n" for _, line in phys), encoding="utf-8")
    return out


if __name__ == "__main__":
    dest = Path(sys.argv[1])
    sys.path.insert(0, str(ROOT))
    for inc in INCIDENTS:
        for sh in shapes(inc):
            write(inc, sh, dest / inc / sh.name)
    print(f"wrote {sum(len(shapes(i)) for i in INCIDENTS)} shapes to {dest}")


# ----------------------------------------------------------------------------- comparing findings

WHERE = {"path", "client", "client_link", "via"}  # keys that name files (they differ per shape by design)


def _when(v):
    if isinstance(v, str) and len(v) >= 19 and v[4] == "-" and v[10] == "T":
        try:
            return dt.datetime.fromisoformat(v.replace("Z", "+00:00"))
        except ValueError:
            return None
    return None


def same_value(a, b) -> bool:
    """Equal, numbers within 1 (seconds, counts of a whole-second log), times within 1 s."""
    ta, tb = _when(a), _when(b)
    if ta is not None and tb is not None:
        return abs((ta - tb).total_seconds()) <= 1.0
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) and not isinstance(b, bool):
        return abs(a - b) <= 1.0
    return a == b


def subject_view(s: dict) -> dict:
    return {k: v for k, v in s.items() if k not in WHERE and not k.endswith("_line") and not isinstance(v, (dict, list))}


def differences(clean: dict, shaped: dict) -> list[str]:
    """What the shaped analysis got wrong against the clean one (empty: the same findings)."""
    problems = []
    got = list(shaped["findings"])
    for f in clean["findings"]:
        want_subjects = sorted((subject_view(s) for s in f["subjects"]), key=lambda d: json.dumps(d, sort_keys=True, default=str))
        match = None
        for g in got:
            if g["id"] != f["id"] or g["severity"] != f["severity"] or len(g["subjects"]) != len(f["subjects"]):
                continue
            have = sorted((subject_view(s) for s in g["subjects"]), key=lambda d: json.dumps(d, sort_keys=True, default=str))
            if all(w.keys() == h.keys() and all(same_value(w[k], h[k]) for k in w) for w, h in zip(want_subjects, have)):
                match = g
                break
        if match is None:
            near = [g for g in got if g["id"] == f["id"]]
            detail = ""
            if near:
                g = near[0]
                have = sorted((subject_view(s) for s in g["subjects"]), key=lambda d: json.dumps(d, sort_keys=True, default=str))
                diffs = [f"{k}: {w.get(k)!r} != {h.get(k)!r}" for w, h in zip(want_subjects, have) for k in w.keys() | h.keys() if not same_value(w.get(k), h.get(k))]
                detail = f" (nearest: {g['severity']}, {len(g['subjects'])} subjects; {'; '.join(diffs[:4])})"
            problems.append(f"missing {f['id']} {f['severity']} {f['title'][:90]!r}{detail}")
        else:
            got.remove(match)
    problems += [f"extra {g['id']} {g['severity']} {g['title'][:90]!r}" for g in got]
    return problems
