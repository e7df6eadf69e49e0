#!/usr/bin/env python3
"""Score logsleuth on nights written by gen.py: each night's truth.json against `analyze --format json`.

    python benchmarks/nights/score.py /tmp/nights [--json] [--logsleuth 'python -m logsleuth']

A night is right when every expected finding is there (same id; a subject holding every expected
field, numbers and times within their stated tolerance; the cause's stated fields) and no finding of
severity medium or more is unexplained (its id neither expected nor allowed, or none of its subjects
matching an expectation of that id), and, where the truth gives it, the number of incidents of
severity medium or more (headlines) is the night's. Prints one line per night and the score; exit status 0 whatever
the score (the caller decides what is enough), 2 when a run fails.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shlex
import subprocess
import sys
from pathlib import Path

LOUD = {"critical", "high", "medium"}


def _time(v: str) -> float:
    return dt.datetime.fromisoformat(v.replace("Z", "+00:00")).timestamp()


def same(want, got) -> bool:
    if isinstance(want, list) and len(want) == 2 and isinstance(want[1], (int, float)):
        v, tol = want
        if got is None:
            return False
        if isinstance(v, str):
            try:
                return abs(_time(v) - _time(str(got))) <= tol
            except ValueError:
                return False
        try:
            return abs(float(got) - float(v)) <= tol
        except (TypeError, ValueError):
            return False
    if isinstance(want, str) and isinstance(got, str) and "/" not in want and want.endswith((".log", ".json")):
        return got == want or got.endswith("/" + want)  # a path given relative to the night
    return want == got


def fits(want: dict, got: dict | None) -> bool:
    return got is not None and all(same(v, got.get(k)) for k, v in want.items())


def score_night(truth: dict, out: dict) -> tuple[list[str], list[str]]:
    findings = out.get("findings", [])
    misses = []
    explained: set[int] = set()
    for e in truth["expect"]:
        hit = False
        for n, f in enumerate(findings):
            if f["id"] != e["id"]:
                continue
            if any(fits(e["subject"], s) for s in f.get("subjects", [])):
                explained.add(n)
                if fits(e.get("cause", {}), f.get("cause") or {}):
                    hit = True
        if not hit:
            near = [s for f in findings if f["id"] == e["id"] for s in f.get("subjects", [])]
            misses.append(f"{e['id']} {json.dumps(e['subject'])} cause {json.dumps(e.get('cause', {}))}"
                          + (f" (closest: {json.dumps(near[:2])[:400]})" if near else " (no such finding)"))
    allowed = set(truth.get("allow", []))
    extra = [f"{f['id']} [{f['severity']}] {f['title'][:140]}" for n, f in enumerate(findings)
             if f["severity"] in LOUD and n not in explained and f["id"] not in allowed]
    want = truth.get("incidents")
    if want is not None:  # one headline per incident: the night's incidents of severity medium or more
        loud = [i for i in out.get("incidents", []) if i.get("severity") in LOUD]
        if len(loud) != want:
            extra.append(f"{len(loud)} incidents of severity medium or more where the night has {want}: "
                         + "; ".join(i["headline"][:100] for i in loud))
    return misses, extra


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", type=Path)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--logsleuth", default=f"{shlex.quote(sys.executable)} -m logsleuth")
    a = ap.parse_args()
    rows = []
    for d in sorted(p for p in a.root.iterdir() if (p / "truth.json").is_file()):
        truth = json.loads((d / "truth.json").read_text())
        cmd = shlex.split(a.logsleuth) + ["analyze", *truth["files"], *truth.get("args", []), "--format", "json"]
        run = subprocess.run(cmd, cwd=d, capture_output=True, text=True)
        if run.returncode not in (0, 1):
            print(f"{d.name}: logsleuth failed ({run.returncode}): {run.stderr.strip()[:300]}", file=sys.stderr)
            sys.exit(2)
        misses, extra = score_night(truth, json.loads(run.stdout))
        rows.append({"night": d.name, "kind": truth["kind"], "right": not misses and not extra, "misses": misses, "extra": extra})
    right = sum(r["right"] for r in rows)
    if a.json:
        print(json.dumps({"right": right, "nights": len(rows), "rows": rows}, indent=1))
        return
    for r in rows:
        print(f"{r['night']}: {'right' if r['right'] else 'WRONG'}  {r['kind']}")
        for m in r["misses"]:
            print(f"    missed: {m}")
        for x in r["extra"]:
            print(f"    unexplained: {x}")
    print(f"{right}/{len(rows)} nights right")


if __name__ == "__main__":
    main()
