#!/usr/bin/env python3
"""Benchmark logsleuth against rg, grep and lnav on the same generated broker log.

    python benchmarks/run.py                      # 1.5M-line broker log, 3 alternating runs
    python benchmarks/run.py --size 3G --runs 1   # the big one (generated once, ~3 GB on disk)
    python benchmarks/run.py --gzip               # the same, gzipped

For each tool it prints wall time (median of the runs), lines per second and peak RSS of the
process (``/usr/bin/time -f %M``, one separate run each), runs in rotating order, after one warm-up pass each (page cache
warm). rg and grep count lines holding any of the literals logsleuth's packs prefilter on (the same
literal set), which is the fastest thing a grep user could do; lnav counts rows headless.
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
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def literals() -> list[str]:
    sys.path.insert(0, str(ROOT))
    from logsleuth.recognise.matcher import Matcher
    from logsleuth.recognise.packs import load_packs

    return Matcher(load_packs())._cs


def run_once(cmd: str) -> tuple[float, int]:
    """Wall seconds and exit code of one command."""
    t0 = time.perf_counter()
    # output goes to a pipe we drain (GNU grep stops early when stdout is /dev/null)
    p = subprocess.Popen(["/bin/sh", "-c", cmd + " | cat > /dev/null"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, _ = os.wait4(p.pid, 0)
    return time.perf_counter() - t0, os.waitstatus_to_exitcode(status)


def mb(kb: int | None) -> str:
    return f"{kb / 1024:.0f} MB" if kb is not None else "n/a"


def rss_of(cmd: str) -> int | None:
    """Peak RSS (KB) of one command, measured alone with /usr/bin/time (None without it)."""
    if not Path("/usr/bin/time").exists():
        return None
    p = subprocess.run(["/usr/bin/time", "-f", "%M", "/bin/sh", "-c", cmd + " | cat > /dev/null"], capture_output=True, text=True)
    try:
        return int(p.stderr.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None


def scenario(title: str, target: str, lines: int, size: int, gz: bool, runs: int, lits: Path, warmup: bool = True) -> list[str]:
    """Time every tool on one input (a file or a directory); return markdown lines."""
    exe = f"{sys.executable} -m logsleuth"
    is_dir = Path(target).is_dir()
    files = f"{target}/*" if is_dir else target
    tools = {
        "logsleuth analyze": f"{exe} analyze {target} --tz UTC --format json",
        "logsleuth events": f"{exe} events {target} --tz UTC --format grep",
    }
    if shutil.which("rg"):
        tools["rg -c -F (same literals)"] = f"rg {'-z ' if gz else ''}-c -F -f {lits} {target}"
    if gz:
        tools["zcat + grep -c -F"] = f"zcat {target} | grep -c -F -f {lits}"
    else:
        tools["grep -c -F (same literals)"] = f"grep {'-r ' if is_dir else ''}-c -F -f {lits} {target}"
    if shutil.which("lnav"):
        tools["lnav -n count(*)"] = (f"zcat {target} | lnav -n -c ';SELECT count(*) FROM all_logs'" if gz else f"lnav -n -c ';SELECT count(*) FROM all_logs' {files}")
    names = list(tools)
    times: dict[str, list[float]] = {n: [] for n in names}
    if warmup:
        for n in names:
            run_once(tools[n])
    for r in range(runs):
        order = names[r % len(names):] + names[: r % len(names)]
        for n in order:
            wall, code = run_once(tools[n])
            if code not in (0, 1):
                print(f"warning: {n} exited {code}", file=sys.stderr)
            times[n].append(wall)
    rss = {n: rss_of(tools[n]) for n in names}
    base = statistics.median(times["logsleuth analyze"])
    out = [f"**{title}** — {lines:,} lines, {size / 1e6:,.0f} MB on disk; median of {runs} run(s) after a warm-up", ""]
    out.append("| tool | wall | lines/s | peak RSS | wall vs logsleuth analyze |")
    out.append("|---|---:|---:|---:|---:|")
    for n in names:
        m = statistics.median(times[n])
        out.append(f"| {n} | {m:.2f} s | {lines / m / 1e6:.2f} M | {mb(rss[n])} | {m / base:.2f}× |")
    return out + [""]


def count_lines(target: str, gz: bool) -> int:
    if Path(target).is_dir():
        return sum(int(subprocess.run(["wc", "-l", str(f)], capture_output=True, text=True).stdout.split()[0]) for f in sorted(Path(target).iterdir()))
    cmd = f"{'zcat' if gz else 'cat'} {target} | wc -l"
    return int(subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout)


def size_of(target: str) -> int:
    p = Path(target)
    return sum(f.stat().st_size for f in p.iterdir()) if p.is_dir() else p.stat().st_size


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=int, default=1_500_000)
    ap.add_argument("--size", help="generate by size instead (e.g. 3G)")
    ap.add_argument("--layout", choices=["iso", "time"], default="iso")
    ap.add_argument("--gzip", action="store_true")
    ap.add_argument("--clients", type=int, help="instead: this many client log files (60k lines each)")
    ap.add_argument("--all", action="store_true", help="the published set: 1.5M lines, 3 GB, 3 GB gzipped, 50 client files")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--data", type=Path, default=HERE / "data")
    a = ap.parse_args()
    a.data.mkdir(parents=True, exist_ok=True)
    lits = a.data / "literals.txt"
    lits.write_text("\n".join(literals()) + "\n")

    def broker(size: str | None, lines: int, gz: bool, layout: str = "iso") -> str:
        tag = (size or f"{lines // 1000}k") + ("-time" if layout == "time" else "") + "-v2"
        path = a.data / (f"broker-{tag}.log" + (".gz" if gz else ""))
        plain = a.data / f"broker-{tag}.log"
        if gz and not path.exists() and plain.exists():  # the same content, compressed (gzip -1, no name/time)
            subprocess.run(f"gzip -1 -n -c {plain} > {path}", shell=True, check=True)
        if not path.exists():
            gen = [sys.executable, str(HERE / "gen_broker_log.py"), "--out", str(path), "--layout", layout]
            gen += ["--size", size] if size else ["--lines", str(lines)]
            if gz:
                gen.append("--gzip")
            subprocess.run(gen, check=True)
        return str(path)

    def clients(n: int) -> str:
        d = a.data / f"clients-{n}"
        if not d.exists():
            subprocess.run([sys.executable, str(HERE / "gen_client_logs.py"), "--files", str(n), "--out", str(d)], check=True)
        return str(d)

    plan = []
    if a.all:
        plan = [
            ("(1) broker log, 1.5M lines", broker(None, 1_500_000, False), False, a.runs),
            ("(a) broker log, 3 GB, incident buried in the middle", broker("3G", 0, False), False, max(1, a.runs // 2)),
            ("(b) the same, gzipped", broker("3G", 0, True), True, 1),
            ("(c) 50 client logs (Kafka producer, Spring Boot layout)", clients(50), False, a.runs),
        ]
    elif a.clients:
        plan = [(f"{a.clients} client logs", clients(a.clients), False, a.runs)]
    else:
        plan = [(f"broker log ({a.size or a.lines})", broker(a.size, a.lines, a.gzip, a.layout), a.gzip, a.runs)]
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"{platform.system()} {platform.release()}; rg {_version('rg')}, grep {_version('grep')}, lnav {_version('lnav')}\n")
    for title, target, gz, runs in plan:
        for line in scenario(title, target, count_lines(target, gz), size_of(target), gz, runs, lits):
            print(line, flush=True)


def _version(tool: str) -> str:
    if not shutil.which(tool):
        return "not installed"
    flag = "-V" if tool == "lnav" else "--version"
    try:
        out = subprocess.run([tool, flag], capture_output=True, text=True, timeout=10).stdout.split("\n")[0]
    except (OSError, subprocess.SubprocessError):
        return "?"
    return out.split()[-1] if out else "?"


if __name__ == "__main__":
    main()
