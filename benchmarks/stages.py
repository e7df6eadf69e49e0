#!/usr/bin/env python3
"""Where the time and the memory of one ``logsleuth`` run go, by stage.

    python benchmarks/stages.py benchmarks/data/broker-1500k-ev50-v2.log            # analyze --format json
    python benchmarks/stages.py LOG --command events --format ndjson
    python benchmarks/stages.py LOG --memory                                         # the events table by column

CPU: the run is made sequential (the chunk thread and the read-ahead thread run in the caller, so no
stage overlaps another) and profiled with cProfile on the process CPU clock (``time.process_time``,
which counts Polars' own threads too), so each stage's figure is the CPU-s it costs, not wall time.
Sequential, the total is about the CPU-s of a normal run. Detectors are timed one by one.

Memory: the events table the detectors get (``estimated_size`` per column) and the process's RSS
after each stage (``/proc/self/status``: VmRSS now, VmHWM the peak so far).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
import time
from contextlib import redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# (stage, module file suffix, function name): cumulative CPU of these functions
STAGES = [
    ("start-up: imports, options, packs (before reading)", None, None),
    ("layout detection on the first lines (once per input)", "layouts/detect.py", "detect"),
    ("read: file → lines (split_chunk: an envelope's lines, for Polars to unwrap)", "ingest/sources.py", "split_chunk"),
    ("compiled core: scan of the chunks", "ingest/compiled.py", "feed"),
    ("chunk: candidates → records", "ingest/reader.py", "handle"),
    ("  of which coverage sample", "ingest/reader.py", "coverage_sample"),
    ("  of which the core's record parse (RecordParser.records)", "ingest/compiled.py", "parse"),
    ("  of which the rest of the records in Polars (records.finish)", "ingest/records.py", "finish"),
    ("  of which processed (flush: match, compact, spill)", "ingest/reader.py", "processed"),
    ("  of which matching (Matcher.match)", "recognise/matcher.py", "match"),
    ("rest of reading: unwrap, split, concat, times made final, sort", "recognise/events.py", "collect"),
    ("timeline: as_logs + correlate", "timeline/merge.py", "correlate"),
    ("detectors (all)", None, "run_all"),
    ("render (analyze: _emit_report; events: write)", None, None),
]


def sequential() -> None:
    """No thread overlaps another: each stage's CPU is its own."""
    from logsleuth.ingest import reader, sources

    def submit(self, item):  # the chunk runs now, in the caller
        self.fn(item)

    reader._OneBehind.submit = submit
    sources.prefetch = lambda it, depth=2: iter(it)


def timed_detectors(times: dict[str, float]):
    from logsleuth import analysis
    from logsleuth.detectors import _chosen, all_detectors

    def run_all(ctx, only=None):
        findings = []
        t0 = time.process_time()
        dets = all_detectors()
        times["(importing the detector modules)"] = time.process_time() - t0
        for det in dets:
            if only and not _chosen(det, only):
                continue
            t0 = time.process_time()
            findings.extend(det.run(ctx))
            times[det.id] = time.process_time() - t0
        return findings

    analysis.run_all = run_all


def cum(stats: pstats.Stats, suffix: str | None, name: str) -> float:
    total = 0.0
    for (file, _line, func), (_cc, _nc, _tt, ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        if func == name and (suffix is None or file.endswith(suffix)):
            total += ct
    return total


def cpu(argv: list[str], top: int) -> None:
    t_start = time.process_time()  # the interpreter itself and this script's imports before this
    sequential()
    det_times: dict[str, float] = {}
    timed_detectors(det_times)
    from logsleuth.cli.app import main

    prof = cProfile.Profile(time.process_time, builtins=False)  # fewer timer calls: less overhead
    sink = io.StringIO()  # the report itself is not wanted here
    prof.enable()
    try:
        with redirect_stdout(sink):
            main(argv)
    except SystemExit:
        pass
    prof.disable()
    total = time.process_time() - t_start
    stats = pstats.Stats(prof)
    command = argv[0]
    first = {"analyze": ("cli/analyze.py", "analyze"), "events": ("cli/events.py", "events")}[command]
    in_command = cum(stats, *first)
    reading = cum(stats, "recognise/events.py", "collect")
    render = cum(stats, "cli/analyze.py", "_emit_report") if command == "analyze" else in_command - reading
    print(f"`logsleuth {' '.join(argv)}`, sequential, process CPU: {total:.2f} s in all "
          f"(of which {t_start:.2f} s this script's own imports)\n")
    print("| stage | CPU-s |\n|---|---:|")
    for title, suffix, name in STAGES:
        if title.startswith("start-up"):
            value = total - in_command
        elif title.startswith("render"):
            value = render
        elif name == "run_all":
            value = sum(det_times.values())
        elif name == "collect":
            inner = sum(cum(stats, s, n) for _, s, n in STAGES[1:8] if not _.startswith("  "))
            value = reading - inner
        else:
            value = cum(stats, suffix, name)
        print(f"| {title} | {value:.2f} |")
    if det_times:
        print("\n| detector | CPU-s |\n|---|---:|")
        for name, t in sorted(det_times.items(), key=lambda kv: -kv[1]):
            if t >= 0.005:
                print(f"| {name} | {t:.2f} |")
    print(f"\nlogsleuth's functions by cumulative CPU-s (top {top}):\n\n| function | calls | CPU-s |\n|---|---:|---:|")
    ours = [(k, v) for k, v in stats.stats.items() if "/logsleuth/" in k[0]]  # type: ignore[attr-defined]
    for (file, line, func), (_cc, nc, _tt, ct, _callers) in sorted(ours, key=lambda kv: -kv[1][3])[:top]:
        where = file.split("/logsleuth/", 1)[1]
        print(f"| {where}:{line} {func} | {nc} | {ct:.2f} |")


def rss() -> str:
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    now, peak = (int(fields[k].split()[0]) / 1024 for k in ("VmRSS", "VmHWM"))
    return f"{now:.0f} MB now, {peak:.0f} MB peak"


def memory(path: str) -> None:
    from logsleuth.cli.options import read_options
    from logsleuth.detectors.base import Context
    from logsleuth.recognise import events as ev
    from logsleuth.recognise.packs import load_packs
    from logsleuth.timeline.merge import as_logs, correlate

    print(f"imports done: {rss()}")
    opts = read_options(["UTC"], None, None, None)
    packs = load_packs(None)
    result = ev.collect([path], opts, packs, ev.EventFilter())
    print(f"events read ({result.events.height:,} rows): {rss()}")
    logs = as_logs(result)
    events, links = correlate(result, "auto", logs)
    print(f"timeline: {rss()}")
    from logsleuth.detectors import all_detectors

    ctx = Context(events, result.inputs, {}, read_options=opts, links=links, logs=logs)
    findings = []
    for det in all_detectors():
        findings += det.run(ctx)
        print(f"  after {getattr(det, 'id', type(det).__name__)}: {rss()}")
    print(f"detectors ({len(findings)} findings): {rss()}\n")
    sizes = {c: events[c].estimated_size() for c in events.columns}
    whole = events.estimated_size()
    print(f"events table: {events.height:,} rows × {events.width} columns, {whole / 2**20:.0f} MB "
          f"({whole / max(events.height, 1):.0f} B per event)\n")
    print("| column | dtype | MB | B/event |\n|---|---|---:|---:|")
    for c, s in sorted(sizes.items(), key=lambda kv: -kv[1]):
        if s >= 2**20 / 10:
            print(f"| {c} | {events.schema[c]} | {s / 2**20:.1f} | {s / max(events.height, 1):.0f} |")
    rest = sum(s for s in sizes.values() if s < 2**20 / 10)
    print(f"| {sum(1 for s in sizes.values() if s < 2**20 / 10)} other columns | | {rest / 2**20:.1f} | |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("log")
    ap.add_argument("--command", choices=["analyze", "events"], default="analyze")
    ap.add_argument("--format", default=None, help="default: json for analyze, grep for events")
    ap.add_argument("--memory", action="store_true", help="the events table by column and RSS by stage instead")
    ap.add_argument("--top", type=int, default=20, help="functions by own CPU to list")
    a = ap.parse_args()
    if a.memory:
        memory(a.log)
        return
    fmt = a.format or ("json" if a.command == "analyze" else "grep")
    cpu([a.command, a.log, "--tz", "UTC", "--format", fmt], a.top)


if __name__ == "__main__":
    main()
