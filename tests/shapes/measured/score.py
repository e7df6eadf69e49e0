#!/usr/bin/env python3
"""Score logsleuth on the measured set (expected.toml next to this file; README.md says how it was made).

    python tests/shapes/measured/score.py                     # the logsleuth this interpreter imports
    python tests/shapes/measured/score.py --cmd 'logsleuth'   # any command line (another checkout's)
    python tests/shapes/measured/score.py --json              # per-file results as JSON

For every file it runs `logsleuth events --format ndjson FILE` and `logsleuth analyze --format json
FILE` and reports:
- core lines recognised: a core line (marked in expected.toml when the file was written, before any
  run) counts when an event starts on it, or when it lies inside an event's record and is a
  continuation line (indented, `Caused by`, an exception line) — a line that could start a record
  of its own and is only swallowed by another record does not count;
- diagnoses made: expected finding ids found, over all incident files;
- false findings: any finding on a decoy (expected []), and unexpected ids on incident files.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
CONTINUATION = re.compile(r"^(\s|Caused by|\tat |[\w$.]+(?:Exception|Error|Throwable)\b|\.\.\. \d+ more)")


def expectations(dirpath: Path = HERE) -> list[dict]:
    return tomllib.loads((dirpath / "expected.toml").read_text(encoding="utf-8"))["file"]


def expectations_hash(dirpath: Path = HERE) -> str:
    return hashlib.sha256((dirpath / "expected.toml").read_bytes()).hexdigest()


def recognised(core: list[int], events: list[dict], lines: list[str]) -> list[int]:
    starts = {e["line"] for e in events}
    spans = [(e["line"], e.get("line_end") or e["line"]) for e in events]
    out = []
    for n in core:
        if n in starts:
            out.append(n)
        elif any(a < n <= b for a, b in spans) and CONTINUATION.match(lines[n - 1] if n - 1 < len(lines) else ""):
            out.append(n)
    return out


def score_file(runner, path: Path, exp: dict) -> dict:
    """``runner(args) -> (code, stdout)``."""
    code, out = runner(["events", "--format", "ndjson", str(path)])
    if code not in (0, 1):
        return {"file": exp["name"], "error": f"events exit {code}"}
    events = [json.loads(x) for x in out.splitlines() if x.strip()]
    code, out = runner(["analyze", "--format", "json", str(path)])
    if code not in (0, 1):
        return {"file": exp["name"], "error": f"analyze exit {code}"}
    doc = json.loads(out)
    made = [(f["id"], f["severity"], f["confidence"]) for f in doc["findings"]]
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    rec = recognised(exp["core_lines"], events, lines)
    ids = {m[0] for m in made}
    expected = set(exp["findings"])
    return {"file": exp["name"], "decoy": bool(exp.get("decoy")), "core": len(exp["core_lines"]), "recognised": len(rec),
            "missed_lines": sorted(set(exp["core_lines"]) - set(rec)), "expected": sorted(expected),
            "made": sorted(made), "missed": sorted(expected - ids), "unexpected": sorted(ids - expected)}


def subprocess_runner(cmd: list[str]):
    def run(args: list[str]) -> tuple[int, str]:
        p = subprocess.run(cmd + args, capture_output=True, text=True, timeout=300)
        return p.returncode, p.stdout
    return run


def totals(rows: list[dict]) -> dict:
    ok = [r for r in rows if "error" not in r]
    core = sum(r["core"] for r in ok) + sum(0 for r in rows if "error" in r)
    rec = sum(r["recognised"] for r in ok)
    inc = [r for r in ok if not r["decoy"]]
    exp_n = sum(len(r["expected"]) for r in inc)
    made = sum(len(r["expected"]) - len(r["missed"]) for r in inc)
    return {"files": len(rows), "errors": len(rows) - len(ok), "core_lines": core, "core_recognised": rec,
            "core_rate": rec / core if core else 0.0, "diagnoses_expected": exp_n, "diagnoses_made": made,
            "diagnosis_rate": made / exp_n if exp_n else 0.0,
            "decoys": sum(1 for r in ok if r["decoy"]),
            "false_on_decoys": sum(len(r["unexpected"]) for r in ok if r["decoy"]),
            "unexpected_on_incidents": sum(len(r["unexpected"]) for r in inc)}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cmd", default=None, help="the logsleuth command line (default: this Python's -m logsleuth)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--only", default="")
    a = ap.parse_args(argv)
    runner = subprocess_runner(shlex.split(a.cmd) if a.cmd else [sys.executable, "-m", "logsleuth"])
    rows = [score_file(runner, HERE / "logs" / e["name"], e) for e in expectations() if a.only in e["name"]]
    t = totals(rows)
    if a.json:
        print(json.dumps({"rows": rows, "totals": t, "expected_sha256": expectations_hash()}, indent=1))
        return 0
    for r in rows:
        if "error" in r:
            print(f"{r['file']:<58} ERROR {r['error']}")
            continue
        made = ", ".join(f"{i}({s})" for i, s, _ in r["made"]) or "-"
        flag = "ok " if not r["missed"] and not r["unexpected"] else "BAD"
        print(f"{flag} {r['file']:<56} core {r['recognised']:>2}/{r['core']:<2} expected {', '.join(r['expected']) or '[] decoy'}; made {made}"
              + (f"; missed lines {r['missed_lines']}" if r["missed_lines"] else ""))
    print()
    print(f"expectations sha256 {expectations_hash()}")
    print(f"files {t['files']} (decoys {t['decoys']}, errors {t['errors']})  core lines recognised {t['core_recognised']}/{t['core_lines']}"
          f" = {100 * t['core_rate']:.1f}%  diagnoses {t['diagnoses_made']}/{t['diagnoses_expected']} = {100 * t['diagnosis_rate']:.1f}%"
          f"  false findings on decoys {t['false_on_decoys']}  unexpected on incidents {t['unexpected_on_incidents']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
