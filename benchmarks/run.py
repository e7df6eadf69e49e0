#!/usr/bin/env python3
"""Benchmark logsleuth against rg, grep and lnav on the same generated logs.

    python benchmarks/run.py --issue16            # the speed-and-memory set: three inputs, seven tools,
                                                  # start-up, and the goals next to the measured figures
    python benchmarks/run.py --issue30            # CPU-s and peak RSS against rg (the packs' literals and a
                                                  # 33-literal list) and lnav: dense 1.5M/6M, sparse 3M; the goals
    python benchmarks/run.py --issue30 --inputs dense24m,sparse24m   # the 24M-line logs (several GB, generated once)
    python benchmarks/run.py                      # 1.5M-line broker log, 3 alternating runs
    python benchmarks/run.py --size 3G --runs 1   # the big one (generated once, ~3 GB on disk)
    python benchmarks/run.py --gzip               # the same, gzipped
    python benchmarks/run.py --all                # 1.5M lines, 3 GB, 3 GB gzipped, 50 client files
    python benchmarks/run.py --issue16 --inputs dense --tools analyze,ndjson,rg   # rerun a few rows
    python benchmarks/run.py --nights 11 --scale 40   # whole nights (benchmarks/nights): time and score

Every tool runs once as a warm-up (page cache warm), then ``--runs`` times in rotating order. Each
run is one child process tree (``/bin/sh -c CMD``) whose output this script drains from a pipe (GNU
grep stops early when stdout is /dev/null); ``os.wait4`` gives its rusage: CPU-s is user + sys of the
whole tree, peak RSS is the largest ``ru_maxrss`` in it (what ``/usr/bin/time -f %M`` reports).
Wall and CPU are medians over the runs, peak RSS is the largest seen. rg and grep count the lines
holding any of the literals logsleuth's packs prefilter on (the same literal set), which is the
fastest thing a grep user could do; lnav counts rows headless. ``--issue30`` adds rg with the 33
literals a person would grep for a producer incident (``GREP33`` below) and puts each logsleuth
row's CPU-s over each rg row's.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
EXE = f"{sys.executable} -m logsleuth"


def literals() -> list[str]:
    sys.path.insert(0, str(ROOT))
    from logsleuth.recognise.matcher import Matcher
    from logsleuth.recognise.packs import load_packs

    return Matcher(load_packs())._cs


# --- measuring -----------------------------------------------------------------------------------


@dataclass
class Run:
    wall: float  # seconds
    cpu: float  # user + sys seconds of the process tree
    rss_kb: int  # the largest peak RSS in the tree
    code: int


def run_once(cmd: str) -> Run:
    """Run one shell command, drain its stdout, and return its wall time and rusage.

    Peak RSS comes from ``/usr/bin/time`` when it is there: a child forked from this script counts
    this script's own pages in its ``ru_maxrss`` until it execs, which would hide a small tool's.
    """
    t0 = time.perf_counter()
    argv = ["/bin/sh", "-c", cmd]
    if TIME:
        argv = [TIME, "-f", "%M", "-o", str(RSS_FILE), *argv]
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    fd = p.stdout.fileno()
    while os.read(fd, 1 << 20):  # drained here, so the parent's reading is not in the child's CPU
        pass
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.stdout.close()
    p.returncode = os.waitstatus_to_exitcode(status)
    rss = ru.ru_maxrss
    if TIME:
        try:
            rss = int(RSS_FILE.read_text().split()[-1])
        except (OSError, ValueError, IndexError):
            pass
    return Run(wall, ru.ru_utime + ru.ru_stime, rss, p.returncode)


TIME = "/usr/bin/time" if Path("/usr/bin/time").exists() else None
RSS_FILE = Path(os.environ.get("TMPDIR", "/tmp")) / f"logsleuth-bench-rss-{os.getpid()}"


@dataclass
class Row:
    name: str
    runs: list[Run]

    @property
    def wall(self) -> float:
        return statistics.median(r.wall for r in self.runs)

    @property
    def cpu(self) -> float:
        return statistics.median(r.cpu for r in self.runs)

    @property
    def rss_mb(self) -> float:
        return max(r.rss_kb for r in self.runs) / 1024

    @property
    def failed(self) -> int:
        """The first exit status other than 0 or 1 (rg's and grep's "none found"), else 0."""
        return next((r.code for r in self.runs if r.code not in (0, 1)), 0)


def measure(tools: dict[str, str], runs: int, warmup: bool = True) -> dict[str, Row]:
    """Every tool once as a warm-up, then ``runs`` rounds, each starting one tool further on."""
    names = list(tools)
    rows = {n: Row(n, []) for n in names}
    if warmup:
        for n in names:
            run_once(tools[n])
    for r in range(runs):
        for n in names[r % len(names):] + names[: r % len(names)]:
            run = run_once(tools[n])
            if run.code not in (0, 1):
                print(f"warning: {n} exited {run.code}: {tools[n]}", file=sys.stderr)
            rows[n].runs.append(run)
    return rows


def table(rows: dict[str, Row], lines: int | None, base: str | None) -> list[str]:
    """Markdown: wall, lines/s (with ``lines``), CPU-s, peak RSS, wall as a multiple of ``base``'s (rg)."""
    ref = rows[base].wall if base in rows else None
    head = ["tool", "wall", *(["lines/s"] if lines else []), "CPU-s", "peak RSS", *(["× rg wall"] if ref else [])]
    out = ["| " + " | ".join(head) + " |", "|---" + "|---:" * (len(head) - 1) + "|"]
    for row in rows.values():
        cells = [row.name, f"{row.wall:.2f} s"]
        cells += [f"{lines / row.wall / 1e6:.2f} M"] if lines else []
        cells += [f"{row.cpu:.2f}", f"{row.rss_mb:.0f} MB"]
        cells += [f"{row.wall / ref:.1f}×"] if ref else []
        out.append("| " + " | ".join(cells) + " |")
    return out


# --- inputs --------------------------------------------------------------------------------------


def count_lines(target: str, gz: bool) -> int:
    if Path(target).is_dir():
        return sum(int(subprocess.run(["wc", "-l", str(f)], capture_output=True, text=True).stdout.split()[0]) for f in sorted(Path(target).iterdir()))
    cmd = f"{'zcat' if gz else 'cat'} {target} | wc -l"
    return int(subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout)


def size_of(target: str) -> int:
    p = Path(target)
    return sum(f.stat().st_size for f in p.iterdir()) if p.is_dir() else p.stat().st_size


class Data:
    """The generated inputs under one directory; each is made once (same seed, same bytes)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.lits = root / "literals.txt"
        self.lits.write_text("\n".join(literals()) + "\n")

    def broker(self, size: str | None, lines: int, gz: bool = False, layout: str = "iso", event_rate: float = 0.02) -> str:
        tag = (size or f"{lines // 1000}k") + ("-time" if layout == "time" else "")
        tag += f"-ev{event_rate * 100:g}" if event_rate != 0.02 else ""
        tag += "-v3" if event_rate > 0.17 else "-v2"  # v3: the generator honours event rates above 17 %
        path = self.root / (f"broker-{tag}.log" + (".gz" if gz else ""))
        plain = self.root / f"broker-{tag}.log"
        if gz and not path.exists() and plain.exists():  # the same content, compressed (gzip -1, no name/time)
            subprocess.run(f"gzip -1 -n -c {plain} > {path}", shell=True, check=True)
        if not path.exists():
            gen = [sys.executable, str(HERE / "gen_broker_log.py"), "--out", str(path), "--layout", layout, "--event-rate", str(event_rate)]
            gen += ["--size", size] if size else ["--lines", str(lines)]
            if gz:
                gen.append("--gzip")
            subprocess.run(gen, check=True)
        return str(path)

    def clients(self, n: int) -> str:
        d = self.root / f"clients-{n}"
        if not d.exists():
            subprocess.run([sys.executable, str(HERE / "gen_client_logs.py"), "--files", str(n), "--out", str(d)], check=True)
        return str(d)

    def one_line(self) -> str:
        path = self.root / "one-line.log"
        path.write_text("2024-05-02T00:00:00,001+0000 [pulsar-io-22-3] INFO  org.apache.pulsar.broker.service.ServerCnx"
                        " - New connection from /10.1.116.123:15070\n")
        return str(path)


# --- the tools -----------------------------------------------------------------------------------


def grep_tools(target: str, gz: bool, lits: Path) -> dict[str, str]:
    """rg, grep and lnav on one input: what a user without logsleuth would run."""
    files = f"{target}/*" if Path(target).is_dir() else target
    tools = {}
    if shutil.which("rg"):
        tools["rg -c -F (same literals)"] = f"rg {'-z ' if gz else ''}-c -F -f {lits} {target}"
    if gz:
        tools["zcat + grep -c -F"] = f"zcat {target} | grep -c -F -f {lits}"
    else:
        tools["grep -c -F (same literals)"] = f"grep {'-r ' if Path(target).is_dir() else ''}-c -F -f {lits} {target}"
    if shutil.which("lnav"):
        count = "lnav -n -c ';SELECT count(*) FROM all_logs'"
        tools["lnav -n count(*)"] = f"zcat {target} | {count}" if gz else f"{count} {files}"
    return tools


RG = "rg -c -F (same literals)"


def scenario(title: str, target: str, gz: bool, runs: int, lits: Path, formats: tuple[str, ...] = ("grep",)) -> list[str]:
    """Time every tool on one input (a file or a directory); return markdown lines."""
    tools = {"logsleuth analyze": f"{EXE} analyze {target} --tz UTC --format json"}
    for f in formats:
        tools[f"logsleuth events --format {f}"] = f"{EXE} events {target} --tz UTC --format {f}"
    tools |= grep_tools(target, gz, lits)
    lines = count_lines(target, gz)
    rows = measure(tools, runs)
    head = f"**{title}** — {lines:,} lines, {size_of(target) / 1e6:,.0f} MB on disk; median of {runs} run(s) after a warm-up"
    return [head, "", *table(rows, lines, RG), ""]


# --- the speed-and-memory set (issue 16) -----------------------------------------------------------

# (key, title, generator arguments)
ISSUE16_INPUTS = {
    "sparse": ("broker log, 1.5M lines, 2 % events", dict(size=None, lines=1_500_000)),
    "sparse6m": ("broker log, 6M lines, 2 % events", dict(size=None, lines=6_000_000)),
    "dense": ("reconnect storm, 1.5M lines, ~45 % of them producer/connection events", dict(size=None, lines=1_500_000, event_rate=0.5)),
    "dense6m": ("reconnect storm, 6M lines, ~45 % of them producer/connection events", dict(size=None, lines=6_000_000, event_rate=0.5)),
}
OFF = "logsleuth analyze --memory-budget off"  # the dense inputs: what the budget (default 64M) buys
EVENT_FORMATS = ("grep", "ndjson", "csv")


@dataclass
class Goal:
    what: str
    target: float
    measured: float
    unit: str
    at_least: bool  # True: measured must be >= target; False: <= target

    def verdict(self) -> str:
        ok = self.measured >= self.target if self.at_least else self.measured <= self.target
        if ok:
            return "met"
        factor = self.target / self.measured if self.at_least else self.measured / self.target
        return f"**missed by {factor:.2f}×**"

    def line(self) -> str:
        sign = "≥" if self.at_least else "≤"
        value = f"{self.measured:.0f}" if self.unit == "MB" else f"{self.measured:.2f}"
        sep = "" if self.unit == "×" else " "
        return f"| {self.what} | {sign} {self.target:g}{sep}{self.unit} | {value}{sep}{self.unit} | {self.verdict()} |"


def goals(results: dict[str, tuple[int, dict[str, Row]]], startup: dict[str, Row] | None) -> list[str]:
    """The issue's goal table next to the measured figures (for the inputs and tools that were run)."""
    out: list[Goal] = []

    def have(key: str, tool: str) -> Row | None:
        return results[key][1].get(tool) if key in results else None

    def rate(key: str, tool: str) -> float:
        return results[key][0] / results[key][1][tool].wall / 1e6

    def ratio(key: str, tool: str) -> float:
        return results[key][1][tool].wall / results[key][1][RG].wall

    if have("dense", "logsleuth analyze"):
        out.append(Goal("dense: `analyze` rate", 1.2, rate("dense", "logsleuth analyze"), "M lines/s", True))
        out.append(Goal("dense: `analyze` peak RSS", 400, have("dense", "logsleuth analyze").rss_mb, "MB", False))
    for f in EVENT_FORMATS:
        tool = f"logsleuth events --format {f}"
        if have("dense", tool):
            out.append(Goal(f"dense: `events --format {f}` rate", 1.0, rate("dense", tool), "M lines/s", True))
            out.append(Goal(f"dense: `events --format {f}` peak RSS", 400, have("dense", tool).rss_mb, "MB", False))
    if have("dense6m", "logsleuth analyze"):
        out.append(Goal("6M dense: `analyze` peak RSS", 400, have("dense6m", "logsleuth analyze").rss_mb, "MB", False))
    if have("sparse6m", "logsleuth analyze"):
        out.append(Goal("6M sparse: `analyze` rate", 2.5, rate("sparse6m", "logsleuth analyze"), "M lines/s", True))
        out.append(Goal("6M sparse: `analyze` peak RSS", 300, have("sparse6m", "logsleuth analyze").rss_mb, "MB", False))
    if startup and "logsleuth analyze (one-line file)" in startup:
        out.append(Goal("start-up: `analyze` of a one-line file, CPU", 0.2, startup["logsleuth analyze (one-line file)"].cpu, "s", False))
    for key, label in (("sparse", "1.5M sparse"), ("sparse6m", "6M sparse")):
        if have(key, "logsleuth analyze") and have(key, RG):
            out.append(Goal(f"{label}: `analyze` wall / rg's", 6, ratio(key, "logsleuth analyze"), "×", False))
    if have("dense", "logsleuth analyze") and have("dense", RG):
        out.append(Goal("dense: `analyze` wall / rg's", 10, ratio("dense", "logsleuth analyze"), "×", False))
    for f in EVENT_FORMATS:
        tool = f"logsleuth events --format {f}"
        if have("dense", tool) and have("dense", RG):
            out.append(Goal(f"dense: `events --format {f}` wall / rg's", 12, ratio("dense", tool), "×", False))
    if not out:
        return []
    return ["**Goals (issue 16) against the measured figures**", "", "| goal | target | measured | |", "|---|---:|---:|---|",
            *(g.line() for g in out), ""]


def issue16(data: Data, runs: int, inputs: list[str], only: list[str] | None, startup_runs: int) -> None:
    def keep(tools: dict[str, str]) -> dict[str, str]:
        return {n: c for n, c in tools.items() if not only or any(o in n for o in only)}

    results: dict[str, tuple[int, dict[str, Row]]] = {}
    for key in inputs:
        title, gen = ISSUE16_INPUTS[key]
        target = data.broker(**gen)
        tools = {"logsleuth analyze": f"{EXE} analyze {target} --tz UTC --format json"}
        if key.startswith("dense"):
            tools[OFF] = f"{EXE} analyze {target} --tz UTC --format json --memory-budget off"
        for f in EVENT_FORMATS:
            tools[f"logsleuth events --format {f}"] = f"{EXE} events {target} --tz UTC --format {f}"
        tools |= grep_tools(target, False, data.lits)
        tools = keep(tools) | ({RG: tools[RG]} if RG in tools else {})  # rg always: the ratios need it
        lines = count_lines(target, False)
        rows = measure(tools, runs)
        results[key] = (lines, rows)
        print(f"**{title}** (`{Path(target).name}`) — {lines:,} lines, {size_of(target) / 1e6:,.0f} MB; "
              f"median of {runs} run(s) after a warm-up, load average now {_load()}", "", *table(rows, lines, RG), "", sep="\n", flush=True)

    startup = None
    if not only or "start-up" in only:
        one = data.one_line()
        tools = {
            "logsleuth analyze (one-line file)": f"{EXE} analyze {one} --tz UTC --format json",
            "logsleuth --help": f"{EXE} --help",
            "python -c 'import polars' (floor)": f"{sys.executable} -c 'import polars'",
            "python -c pass (interpreter)": f"{sys.executable} -c pass",
        }
        startup = measure(tools, startup_runs)
        print(f"**start-up** — median of {startup_runs} runs after a warm-up", "", *table(startup, None, None), "", sep="\n", flush=True)
    for line in goals(results, startup):
        print(line)


# --- CPU and memory against rg and lnav (issue 30) ---------------------------------------------------

# (key, title, generator arguments); the dense ones are the --issue16 files (same names, same bytes)
ISSUE30_INPUTS = {
    "dense": ("reconnect storm, 1.5M lines, ~45 % of them producer/connection events", dict(size=None, lines=1_500_000, event_rate=0.5)),
    "dense6m": ("reconnect storm, 6M lines, ~45 % of them producer/connection events", dict(size=None, lines=6_000_000, event_rate=0.5)),
    "dense24m": ("reconnect storm, 24M lines, ~45 % of them producer/connection events", dict(size=None, lines=24_000_000, event_rate=0.5)),
    "sparse3m": ("broker log, 3M lines, 2 % events", dict(size=None, lines=3_000_000)),
    "sparse24m": ("broker log, 24M lines, 2 % events", dict(size=None, lines=24_000_000)),
}
ISSUE30_DEFAULT = "dense,dense6m,sparse3m"  # the 24M ones (~5 GB each, many minutes to generate) only when named

# What a person grepping a Pulsar or Kafka producer incident would search for, taken verbatim from
# the packs' literals (run.py checks each is one): the literals of the patterns the detectors chain
# on (their events are named in logsleuth/detectors/*) for producer creation, close and rejection,
# connections, ownership and bundle unloads, load shedding, send timeouts and batch expiry, buffer
# exhaustion, metadata waits and node connection failures. Where one literal is inside another
# (" is already present on the connection" in the three other rejection texts, ", which has max
# resource usage " in the shedders' longer ones, " not present in metadata after " in the
# partition's) only the shorter is listed, as a person would grep it. Left out: the Kafka broker's
# and sarama's lines (other incidents), the shedders' skip and plan lines, lines no detector reads,
# and, to keep to 33, the Kafka producer's rarer errors (callback, invalid metadata, authentication,
# authorisation) and the Pulsar clients' generic "Received error from server".
GREP33 = [
    # Pulsar broker: producer lifecycle and rejection
    "] Creating producer. producerId=",
    "] Created new producer: Producer{topic=",
    " is already present on the connection",
    "] Failed to add producer to topic ",
    "] Closed producer on cnx ",
    "Disconnecting producer: Producer{topic=",
    # Pulsar broker: connections
    "New connection from ",
    "Closed connection from ",
    # Pulsar broker: ownership and unloads
    ") not served by this instance. Please redo the lookup. Request is denied: namespace=",
    ") not served by this instance:",
    "] Unloading topic",
    "Disabling ownership: ",
    " namespace-bundle with ",
    "] Unloading bundle: ",
    # Pulsar broker: load shedding
    "Attempting to shed load on ",
    ", which has max resource usage ",
    # Pulsar clients (Java, C++, Go): creation, rejection, connection, send timeout
    "] Failed to create producer: ",
    "] Temporary error in creating producer: ",
    "] Created producer on cnx [id: ",
    "] Broker notification of ",
    "] Could not get connection to broker: ",
    " can not send message to the topic ",
    'msg="Failed to create producer',
    # Kafka Java producer: expiry, buffer exhausted, metadata waits, retries, connections
    " ms has passed since ",
    "Failed to allocate memory within the configured max blocking time ",
    " bytes within the configured max blocking time ",
    " not present in metadata after ",
    "Got error produce response with correlation id ",
    "could not be established. ",
    "Disconnecting from node ",
    "Error connecting to node ",
    "Bootstrap broker ",
    "Disconnected from node ",
]

A30, N30 = "logsleuth analyze", "logsleuth events --format ndjson"
RGP, RG33 = "rg -c -F (the packs' literals)", "rg -c -F (33 literals)"
RGS30 = {RGP: "rg, packs' literals", RG33: "rg, 33 literals"}  # the ratio columns' names
LNAV = "lnav -n count(*)"


def grep33(data: Data) -> Path:
    """GREP33 written next to literals.txt, after checking it is 33 of the packs' literals."""
    packs = set(literals())
    strays = [x for x in GREP33 if x not in packs]
    if len(GREP33) != 33 or len(set(GREP33)) != 33 or strays:
        sys.exit(f"GREP33 must be 33 distinct literals of the packs; it has {len(set(GREP33))}, not in the packs: {strays}")
    path = data.root / "literals-33.txt"
    path.write_text("\n".join(GREP33) + "\n")
    return path


def _ok(row: Row | None) -> Row | None:
    """The row if it has runs and none failed."""
    return row if row is not None and row.runs and not row.failed else None


def _status(row: Row) -> str | None:
    """What a row without figures says instead of them."""
    return "not installed" if not row.runs else f"failed (exit {row.failed})" if row.failed else None


def _ratios(row: Row, rows: dict[str, Row]) -> list[str]:
    """A logsleuth row's CPU-s over each rg row's (blank for the other rows and a missing rg)."""
    return [f"{row.cpu / max(rows[r].cpu, 0.01):.1f}×" if row.name.startswith("logsleuth") and _ok(rows.get(r)) else "" for r in RGS30]


def table30(rows: dict[str, Row], lines: int) -> list[str]:
    """Markdown: wall, lines/s, CPU-s, peak RSS, and each logsleuth row's CPU-s over each rg row's."""
    head = ["tool", "wall", "lines/s", "CPU-s", "peak RSS", *(f"CPU ÷ {n}" for n in RGS30.values())]
    out = ["| " + " | ".join(head) + " |", "|---" + "|---:" * (len(head) - 1) + "|"]
    for row in rows.values():
        if status := _status(row):
            out.append("| " + " | ".join([row.name, status, *[""] * (len(head) - 2)]) + " |")
            continue
        cells = [row.name, f"{row.wall:.2f} s", f"{lines / row.wall / 1e6:.2f} M", f"{row.cpu:.2f}", f"{row.rss_mb:.0f} MB"]
        out.append("| " + " | ".join(cells + _ratios(row, rows)) + " |")
    return out


def goals30(results: dict[str, tuple[int, dict[str, Row]]]) -> list[str]:
    """Issue 30's "done when", for the inputs and tools that were run: CPU ratios to rg with the
    packs' literals, and peak RSS."""
    out: list[str] = []

    def get(key: str, tool: str) -> Row | None:
        return results[key][1].get(tool) if key in results else None

    def unmeasured(what: str, target: str, *rows: Row | None) -> bool:
        """A goal row saying why there is no figure, when a row it needs failed or is not installed."""
        bad = next((r for r in rows if r is not None and not _ok(r)), None)
        if bad:
            out.append(f"| {what} | {target} | {bad.name}: {_status(bad)} | **not measured** |")
        return bad is not None

    for key, tool, target, label in (("dense", A30, 12, "dense 1.5M: `analyze`"), ("dense", N30, 15, "dense 1.5M: `events --format ndjson`"),
                                     ("sparse3m", A30, 6, "sparse 3M: `analyze`")):
        what = f"{label} CPU-s / rg's (the packs' literals)"
        row, rg = get(key, tool), get(key, RGP)
        if row and rg and not unmeasured(what, f"≤ {target}×", row, rg):
            out.append(Goal(what, target, row.cpu / max(rg.cpu, 0.01), "×", False).line())
    for key, label in (("dense", "dense 1.5M"), ("dense6m", "dense 6M"), ("dense24m", "dense 24M"), ("sparse24m", "sparse 24M")):
        for tool, what in ((A30, "`analyze`"), (N30, "`events --format ndjson`")):
            row = get(key, tool)
            if row and not unmeasured(f"{label}: {what} peak RSS", "≤ 400 MB", row):
                out.append(Goal(f"{label}: {what} peak RSS", 400, row.rss_mb, "MB", False).line())
    if not out:
        return []
    return ["**Goals (issue 30) against the measured figures**", "", "| goal | target | measured | |", "|---|---:|---:|---|", *out, ""]


def issue30(data: Data, runs: int, inputs: list[str], only: list[str] | None) -> None:
    lits33 = grep33(data)
    results: dict[str, tuple[int, dict[str, Row]]] = {}
    for key in inputs:
        title, gen = ISSUE30_INPUTS[key]
        target = data.broker(**gen)
        tools: dict[str, str | None] = {
            A30: f"{EXE} analyze {target} --tz UTC --format json",
            N30: f"{EXE} events {target} --tz UTC --format ndjson",
            RGP: f"rg -c -F -f {data.lits} {target}" if shutil.which("rg") else None,
            RG33: f"rg -c -F -f {lits33} {target}" if shutil.which("rg") else None,
            LNAV: f"lnav -n -c ';SELECT count(*) FROM all_logs' {target}" if shutil.which("lnav") else None,
        }
        # rg with the packs' literals always runs: the ratios and the goals need it
        tools = {n: c for n, c in tools.items() if not only or n == RGP or any(o in n for o in only)}
        lines = count_lines(target, False)
        rows = measure({n: c for n, c in tools.items() if c}, runs)
        rows = {n: rows.get(n, Row(n, [])) for n in tools}  # the order above; a tool not installed: no runs
        results[key] = (lines, rows)
        print(f"**{title}** (`{Path(target).name}`) — {lines:,} lines, {size_of(target) / 1e6:,.0f} MB; "
              f"median of {runs} run(s) after a warm-up, alternating; load average now {_load()}", "",
              *table30(rows, lines), "", sep="\n", flush=True)
    if len(results) > 1:
        head = ["input", "tool", "CPU-s", "peak RSS", *(f"CPU ÷ {n}" for n in RGS30.values())]
        print("**CPU-s and peak RSS, all inputs**", "", "| " + " | ".join(head) + " |", "|---|---" + "|---:" * (len(head) - 2) + "|", sep="\n")
        for key, (_, rows) in results.items():
            for row in rows.values():
                status = _status(row)
                cells = [key, row.name, *([status, ""] if status else [f"{row.cpu:.2f}", f"{row.rss_mb:.0f} MB"])]
                print("| " + " | ".join(cells + (["" for _ in RGS30] if status else _ratios(row, rows))) + " |")
        print()
    for line in goals30(results):
        print(line)


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def _version(tool: str) -> str:
    if not shutil.which(tool):
        return "not installed"
    flag = "-V" if tool == "lnav" else "--version"
    try:
        out = subprocess.run([tool, flag], capture_output=True, text=True, timeout=10).stdout.split("\n")[0]
    except (OSError, subprocess.SubprocessError):
        return "?"
    return out.split()[-1] if out else "?"


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def _commit() -> str:
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "?"
    return out.stdout.strip() or "?"


def _polars() -> str:
    try:
        import polars

        return polars.__version__
    except ImportError:
        return "not installed"


def nights(seed: int, count: int, scale: int, runs: int, data: Path, lits: Path) -> None:
    """Whole nights of benchmarks/nights/gen.py at a large scale: logsleuth analyze on each night next
    to rg counting the same literals in the same files, then the score (benchmarks/nights/score.py)."""
    out = data / f"nights-{seed}-{count}-x{scale}"
    if not (out / f"n{count - 1:02d}" / "truth.json").exists():
        subprocess.run([sys.executable, str(HERE / "nights" / "gen.py"), "--seed", str(seed), "--nights", str(count),
                        "--scale", str(scale), "--out", str(out)], check=True)
    print(f"**whole nights** — seed {seed}, {count} nights, scale {scale}; median of {runs} run(s) after a warm-up\n")
    print("| night | kind | files | lines | logsleuth analyze CPU-s | peak RSS | rg CPU-s | × rg |")
    print("|---|---|---|---|---|---|---|---|")
    for d in sorted(p for p in out.iterdir() if (p / "truth.json").is_file()):
        import json

        truth = json.loads((d / "truth.json").read_text())
        files = " ".join(str(d / f) for f in truth["files"])
        args = " ".join(truth.get("args", []))
        lines = sum(count_lines(str(d / f), f.endswith(".gz")) for f in truth["files"])
        rows = measure({"analyze": f"cd {d} && {EXE} analyze {' '.join(truth['files'])} {args} --format json",
                        "rg": f"rg -z -c -F -f {lits} {files}"}, runs)
        a, r = rows["analyze"], rows["rg"]
        print(f"| {d.name} | {truth['kind']} | {len(truth['files'])} | {lines:,} | {a.cpu:.2f} | {a.rss_mb:.0f} MB | {r.cpu:.2f} | "
              f"{a.cpu / max(r.cpu, 0.01):.0f}× |", flush=True)
    score = subprocess.run([sys.executable, str(HERE / "nights" / "score.py"), str(out)], capture_output=True, text=True)
    print("\n```\n" + score.stdout.strip() + "\n```")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=int, default=1_500_000)
    ap.add_argument("--size", help="generate by size instead (e.g. 3G)")
    ap.add_argument("--layout", choices=["iso", "time"], default="iso")
    ap.add_argument("--gzip", action="store_true")
    ap.add_argument("--event-rate", type=float, default=0.02, help="share of lines that are events (gen_broker_log.py)")
    ap.add_argument("--clients", type=int, help="instead: this many client log files (60k lines each)")
    ap.add_argument("--all", action="store_true", help="the published set: 1.5M lines, 3 GB, 3 GB gzipped, 50 client files")
    ap.add_argument("--issue16", action="store_true", help="the speed-and-memory set: sparse 1.5M, sparse 6M, dense 1.5M; every events format; start-up; the goals")
    ap.add_argument("--issue30", action="store_true", help="CPU-s and peak RSS of analyze and events --format ndjson next to rg (the packs' "
                    "literals, and 33 of them) and lnav, alternating; the ratios to rg; the goals")
    ap.add_argument("--inputs", help=f"with --issue16: which inputs ({', '.join(ISSUE16_INPUTS)}; default sparse,sparse6m,dense). "
                    f"With --issue30: {', '.join(ISSUE30_INPUTS)} (default {ISSUE30_DEFAULT}; the 24M-line ones, ~5 GB each and "
                    "many minutes to generate the first time, only when named)")
    ap.add_argument("--tools", help="with --issue16 or --issue30: only the tools whose name holds one of these comma-separated words "
                    "(rg with the packs' literals is always run; 'start-up' for --issue16's start-up rows)")
    ap.add_argument("--startup-runs", type=int, default=10)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--data", type=Path, default=HERE / "data")
    ap.add_argument("--nights", type=int, metavar="SEED", help="whole nights of benchmarks/nights/gen.py with this seed: time and score")
    ap.add_argument("--count", type=int, default=7, help="with --nights: how many nights")
    ap.add_argument("--scale", type=int, default=40, help="with --nights: chatter per file, in units of ~1,500 lines")
    a = ap.parse_args()
    if a.issue16 and a.issue30:
        ap.error("--issue16 and --issue30 are separate sets: run one at a time")
    data = Data(a.data)
    print(f"machine: {_cpu()}, {platform.machine()}, {os.cpu_count()} cores, {platform.system()} {platform.release()}; "
          f"Python {platform.python_version()}, Polars {_polars()}, logsleuth {_commit()}; rg {_version('rg')}, grep {_version('grep')}, "
          f"lnav {_version('lnav')}; load average at start {_load()}\n", flush=True)
    if a.nights is not None:
        nights(a.nights, a.count, a.scale, a.runs, a.data, data.lits)
        return
    if a.issue16 or a.issue30:
        known = ISSUE30_INPUTS if a.issue30 else ISSUE16_INPUTS
        default = ISSUE30_DEFAULT if a.issue30 else "sparse,sparse6m,dense"
        inputs = [k.strip() for k in (default if a.inputs is None else a.inputs).split(",") if k.strip()]
        unknown = [k for k in inputs if k not in known]
        if unknown:
            ap.error(f"unknown input(s) {', '.join(unknown)}; choose from {', '.join(known)}")
        only = [t.strip() for t in a.tools.split(",")] if a.tools else None
        if a.issue30:
            issue30(data, a.runs, inputs, only)
        else:
            issue16(data, a.runs, inputs, only, a.startup_runs)
        print(f"\nload average at the end {_load()}")
        return
    if a.all:
        plan = [
            ("(1) broker log, 1.5M lines", data.broker(None, 1_500_000), False, a.runs),
            ("(a) broker log, 3 GB, incident buried in the middle", data.broker("3G", 0), False, max(1, a.runs // 2)),
            ("(b) the same, gzipped", data.broker("3G", 0, gz=True), True, 1),
            ("(c) 50 client logs (Kafka producer, Spring Boot layout)", data.clients(50), False, a.runs),
        ]
    elif a.clients:
        plan = [(f"{a.clients} client logs", data.clients(a.clients), False, a.runs)]
    else:
        target = data.broker(a.size, a.lines, a.gzip, a.layout, a.event_rate)
        plan = [(f"broker log ({a.size or a.lines}, {a.event_rate:.0%} events)", target, a.gzip, a.runs)]
    for title, target, gz, runs in plan:
        for line in scenario(title, target, gz, runs, data.lits):
            print(line, flush=True)


if __name__ == "__main__":
    main()
