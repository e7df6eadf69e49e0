#!/usr/bin/env python3
"""Benchmark logsleuth against rg, grep and lnav on the same generated broker log.

    python benchmarks/run.py                      # 1.5M-line broker log, 3 alternating runs
    python benchmarks/run.py --size 3G --runs 1   # the big one (generated once, ~3 GB on disk)
    python benchmarks/run.py --gzip               # the same, gzipped

For each tool it prints wall time (median of the runs), lines per second and peak RSS of the
process (os.wait4's ru_maxrss), runs in rotating order, after one warm-up pass each (page cache
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
    from logsleuth.matcher import Matcher
    from logsleuth.packs import load_packs

    return Matcher(load_packs())._cs


def run_once(cmd: str) -> tuple[float, int, int]:
    """Wall seconds, peak RSS (KB) of the process tree's largest process, exit code."""
    t0 = time.perf_counter()
    # output goes to a pipe we drain (GNU grep stops early when stdout is /dev/null)
    p = subprocess.Popen(["/bin/sh", "-c", cmd + " | cat > /dev/null"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    # ru_maxrss of the shell; the measured process is its child: ask the kernel for children too
    import resource

    child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return wall, max(ru.ru_maxrss, child), code


def rss_of(cmd: str) -> int:
    """Peak RSS (KB) of one command, measured alone with /usr/bin/time when present."""
    if shutil.which("time") or Path("/usr/bin/time").exists():
        p = subprocess.run(["/usr/bin/time", "-f", "%M", "/bin/sh", "-c", cmd + " | cat > /dev/null"], capture_output=True, text=True)
        try:
            return int(p.stderr.strip().splitlines()[-1])
        except (ValueError, IndexError):
            return 0
    return 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=int, default=1_500_000)
    ap.add_argument("--size", help="generate by size instead (e.g. 3G)")
    ap.add_argument("--layout", choices=["iso", "time"], default="iso")
    ap.add_argument("--gzip", action="store_true")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--data", type=Path, default=HERE / "data")
    a = ap.parse_args()

    tag = (a.size or f"{a.lines // 1000}k") + ("-time" if a.layout == "time" else "") + "-v2"
    path = a.data / (f"broker-{tag}.log" + (".gz" if a.gzip else ""))
    if not path.exists():
        gen = [sys.executable, str(HERE / "gen_broker_log.py"), "--out", str(path), "--layout", a.layout]
        gen += ["--size", a.size] if a.size else ["--lines", str(a.lines)]
        if a.gzip:
            gen.append("--gzip")
        subprocess.run(gen, check=True)
    lits = a.data / "literals.txt"
    lits.write_text("\n".join(literals()) + "\n")
    lines = int(subprocess.run(f"{'zcat' if a.gzip else 'cat'} {path} | wc -l", shell=True, capture_output=True, text=True).stdout)
    size = path.stat().st_size

    exe = f"{sys.executable} -m logsleuth"
    cat = "zcat" if a.gzip else "cat"
    tools = {
        "logsleuth events": f"{exe} events {path} --tz UTC --format grep",
        "logsleuth analyze": f"{exe} analyze {path} --tz UTC --format json",
    }
    if shutil.which("rg"):
        tools["rg -c -F (same literals)"] = f"rg {'-z ' if a.gzip else ''}-c -F -f {lits} {path}"
    tools["grep -c -F (same literals)"] = (f"zcat {path} | grep -c -F -f {lits}" if a.gzip else f"grep -c -F -f {lits} {path}")
    if shutil.which("lnav"):
        tools["lnav -n count(*)"] = f"{cat} {path} | lnav -n -c ';SELECT count(*) FROM all_logs'" if a.gzip else f"lnav -n -c ';SELECT count(*) FROM all_logs' {path}"

    names = list(tools)
    times: dict[str, list[float]] = {n: [] for n in names}
    for n in names:  # warm-up
        run_once(tools[n])
    for r in range(a.runs):
        order = names[r % len(names):] + names[: r % len(names)]
        for n in order:
            wall, _, code = run_once(tools[n])
            if code not in (0, 1):
                print(f"warning: {n} exited {code}", file=sys.stderr)
            times[n].append(wall)
    rss = {n: rss_of(tools[n]) for n in names}
    base = statistics.median(times["logsleuth events"])
    print(f"\nfile: {path.name}: {lines:,} lines, {size / 1e6:,.0f} MB{' (gzip)' if a.gzip else ''}; "
          f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; runs: {a.runs}\n")
    print("| tool | wall (median) | lines/s | peak RSS | time vs logsleuth events |")
    print("|---|---:|---:|---:|---:|")
    for n in names:
        m = statistics.median(times[n])
        print(f"| {n} | {m:.2f} s | {lines / m / 1e6:.2f} M | {rss[n] / 1024:.0f} MB | {m / base:.2f}× |")


if __name__ == "__main__":
    main()
