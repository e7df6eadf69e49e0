#!/usr/bin/env python3
"""Score logsleuth on the real-shapes corpus (manifest.toml next to this file).

    python tests/shapes/real/score.py                      # the logsleuth this interpreter imports
    python tests/shapes/real/score.py --cmd 'logsleuth'    # any command line (e.g. another checkout's)
    python tests/shapes/real/score.py --twins DIR          # the clean twins written by make_corpus.py --twins DIR
    python tests/shapes/real/score.py --json               # the numbers as JSON

For every file it runs `logsleuth events --format ndjson --tz UTC FILE` and
`logsleuth analyze --format json --tz UTC FILE` and prints: the lines that carry a message the packs
know (`known`, marked by hand in the manifest), how many of them start a recognised event
(`recog`), the share, and the findings expected vs made. Totals: the share of known-message lines
recognised, the diagnoses made out of those expected, findings made that were not expected (on
incident files and on the healthy decoys, whose expected findings are []).

With --twins the same is done on each file's clean twin (same records, a built-in layout, no
wrapper): that checks the corpus itself, so every twin should score 100 % and make exactly its
expected findings.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent


def run(cmd: list[str], args: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(cmd + args, capture_output=True, text=True, timeout=300)


def score_file(cmd: list[str], path: Path, known_lines: list[int]) -> dict:
    ev = run(cmd, ["events", "--format", "ndjson", "--tz", "UTC", str(path)])
    if ev.returncode not in (0, 1):
        return {"error": (ev.stderr.strip().splitlines() or ["exit %d" % ev.returncode])[-1]}
    lines = {json.loads(x)["line"] for x in ev.stdout.splitlines() if x.strip()}
    an = run(cmd, ["analyze", "--format", "json", "--tz", "UTC", str(path)])
    if an.returncode not in (0, 1):
        return {"error": (an.stderr.strip().splitlines() or ["exit %d" % an.returncode])[-1]}
    made = [f["id"] for f in json.loads(an.stdout)["findings"]]
    hit = sorted(set(known_lines) & lines)
    return {"recognised": len(hit), "missed_lines": sorted(set(known_lines) - lines), "made": made,
            "events": len(lines)}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cmd", default=None, help="the logsleuth command line (default: this Python's -m logsleuth)")
    ap.add_argument("--dir", type=Path, default=HERE, help="where the corpus and manifest.toml are")
    ap.add_argument("--twins", type=Path, default=None, help="score the clean twins in this directory instead")
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    ap.add_argument("--only", default="", help="score only files whose name contains this")
    a = ap.parse_args(argv)
    cmd = shlex.split(a.cmd) if a.cmd else [sys.executable, "-m", "logsleuth"]
    manifest = tomllib.loads((a.dir / "manifest.toml").read_text(encoding="utf-8"))
    rows = []
    for f in manifest["file"]:
        if a.only and a.only not in f["name"]:
            continue
        if a.twins:
            path = a.twins / f["name"]
            known_lines = [int(x) for x in (a.twins / (Path(f["name"]).stem + ".known")).read_text().split()]
        else:
            path = a.dir / f["name"]
            known_lines = f["known_lines"]
            assert len(known_lines) == f["known"], f"{f['name']}: known != len(known_lines)"
        res = score_file(cmd, path, known_lines)
        rows.append({"file": f["name"], "known": len(known_lines), "expected": f["findings"], **res})

    if a.json:
        print(json.dumps(rows, indent=1))
        return 0

    known = recog = exp_n = exp_made = 0
    false_decoy = extra = 0
    print(f"{'file':<46} {'known':>5} {'recog':>5} {'share':>6}  {'findings expected':<48} made")
    for r in rows:
        if "error" in r:
            print(f"{r['file']:<46} {r['known']:>5}  ERROR {r['error']}")
            known += r["known"]
            exp_n += len(set(r["expected"]))
            continue
        share = f"{100 * r['recognised'] / r['known']:.0f}%" if r["known"] else "-"
        exp, made = set(r["expected"]), set(r["made"])
        known += r["known"]
        recog += r["recognised"]
        exp_n += len(exp)
        exp_made += len(exp & made)
        unexpected = made - exp
        if not exp:
            false_decoy += len(unexpected)
        else:
            extra += len(unexpected)
        e = ", ".join(sorted(x.split(".", 1)[1] for x in exp)) or "[] (decoy)"
        m = ", ".join(sorted(("" if x in exp else "+") + x.split(".", 1)[1] for x in made)) or "-"
        missing = exp - made
        if missing:
            m += "  (missed: " + ", ".join(sorted(x.split(".", 1)[1] for x in missing)) + ")"
        print(f"{r['file']:<46} {r['known']:>5} {r['recognised']:>5} {share:>6}  {e:<48} {m}")
    print()
    shares = [r["recognised"] / r["known"] for r in rows if "error" not in r and r["known"]]
    print(f"files: {len(rows)}  known-message lines recognised: {recog}/{known} = {100 * recog / max(known, 1):.1f}%"
          f"  (mean share per file {100 * sum(shares) / max(len(shares), 1):.1f}%)")
    print(f"diagnoses made: {exp_made}/{exp_n}   unexpected findings on incident files: {extra}   "
          f"false findings on decoys: {false_decoy} (decoys: {sum(1 for r in rows if not r['expected'])})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
