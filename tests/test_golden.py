"""Golden outputs: every finding pinned whole, as ``analyze --format json`` gives it.

``tests/golden/<finding id>/<case>/`` holds one incident: ``case.toml`` (its inputs — bundled sample
logs or the case's own ``logs/`` — the options, and whether the evidence in it is partial) and
``expected.json`` (the run's summary counts and every finding: id, severity, confidence and its
reasons, bounds, subjects, cause, evidence ``path:line`` with its note, remediation, ruled out,
details, and the words). A change to any of it fails here, naming the case, the finding and the
keys that differ; review it as a change of output, then rewrite the files with

    LOGSLEUTH_REGENERATE=1 pytest tests/test_golden.py

and read the diff (``git diff tests/golden``) before committing it. tests/golden/README.md says how
to add a case.
"""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

import pytest

from conftest import ROOT, run

GOLDEN = ROOT / "tests" / "golden"
REGENERATE = bool(os.environ.get("LOGSLEUTH_REGENERATE"))


def cases() -> list[Path]:
    return sorted(p.parent for p in GOLDEN.glob("*/*/case.toml"))


def load_case(d: Path) -> dict:
    with open(d / "case.toml", "rb") as f:
        case = tomllib.load(f)
    inputs = []
    for i in case["inputs"]:
        p = (d / i) if not i.startswith("sample_logs/") else (ROOT / i)
        assert p.exists(), f"{d.relative_to(ROOT)}: input {i} does not exist"
        inputs.append(str(p.relative_to(ROOT)))
    case["_inputs"] = inputs
    return case


def observed(case: dict) -> dict:
    """The run's findings as the golden file keeps them (paths are relative to the repository: the
    run's working directory is its root)."""
    r = run("analyze", "--format", "json", *case.get("args", []), *case["_inputs"], cwd=ROOT)
    assert r.code in (0, 1), r
    d = r.json()
    summary = {k: d["summary"][k] for k in ("files", "lines", "records", "events", "first_ts", "last_ts", "findings", "incidents")}
    findings = []
    for f in d["findings"]:
        f = dict(f)
        # the quoted line's text is the log's own (path:line pins it)
        f["evidence"] = [{k: v for k, v in e.items() if k != "text"} for e in f["evidence"]]
        findings.append(f)
    # the incidents (findings/incidents.py): which findings share a cause, its headline and action
    return {"summary": summary, "incidents": d["incidents"], "findings": findings}


def _diff(want, got, where: str = "", out: list | None = None, limit: int = 12) -> list[str]:
    out = [] if out is None else out
    if len(out) >= limit:
        return out
    if isinstance(want, dict) and isinstance(got, dict):
        for k in sorted(set(want) | set(got), key=str):
            if k not in got:
                out.append(f"{where}.{k}: missing (expected {json.dumps(want[k])[:160]})")
            elif k not in want:
                out.append(f"{where}.{k}: new ({json.dumps(got[k])[:160]})")
            else:
                _diff(want[k], got[k], f"{where}.{k}", out, limit)
    elif isinstance(want, list) and isinstance(got, list) and len(want) == len(got):
        for i, (a, b) in enumerate(zip(want, got)):
            _diff(a, b, f"{where}[{i}]", out, limit)
    elif want != got:
        out.append(f"{where}: expected {json.dumps(want)[:300]}\n{' ' * (len(where) + 2)}got      {json.dumps(got)[:300]}")
    return out


def _label(f: dict) -> str:
    return f"{f.get('id')} ({f.get('severity')}) {str(f.get('title'))[:90]}"


@pytest.mark.parametrize("case_dir", cases(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_golden(case_dir: Path) -> None:
    case = load_case(case_dir)
    got = observed(case)
    expected_file = case_dir / "expected.json"
    if REGENERATE or not expected_file.exists():
        expected_file.write_text(json.dumps(got, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        if not REGENERATE:
            pytest.fail(f"{expected_file.relative_to(ROOT)} was missing: written now, review it and commit it")
        return
    want = json.loads(expected_file.read_text(encoding="utf-8"))
    if want == got:
        return
    lines = [f"{case_dir.relative_to(ROOT)}: the findings changed (LOGSLEUTH_REGENERATE=1 rewrites expected.json; review the diff)"]
    lines += _diff(want["summary"], got["summary"], "summary")
    lines += _diff(want.get("incidents"), got["incidents"], "incidents")
    wf, gf = want["findings"], got["findings"]
    if [f["id"] for f in wf] != [f["id"] for f in gf] or len(wf) != len(gf):
        lines.append("findings expected: " + "; ".join(_label(f) for f in wf))
        lines.append("findings got:      " + "; ".join(_label(f) for f in gf))
    else:
        for i, (a, b) in enumerate(zip(wf, gf)):
            d = _diff(a, b, f"finding {i + 1} {a['id']}")
            lines += d
    pytest.fail("\n".join(lines), pytrace=False)


# ----------------------------------------------------------------------------- the corpus itself


def _finding_ids() -> list[str]:
    from logsleuth.detectors import all_detectors

    return sorted({d.id for d in all_detectors()})


def test_every_finding_has_two_golden_incidents_one_of_them_partial() -> None:
    seen: dict[str, list[tuple[str, bool]]] = {}
    for d in cases():
        case = load_case(d)
        expected = d / "expected.json"
        if not expected.exists():
            continue
        ids = {f["id"] for f in json.loads(expected.read_text(encoding="utf-8"))["findings"]}
        for i in ids:
            seen.setdefault(i, []).append((f"{d.parent.name}/{d.name}", bool(case.get("partial"))))
    problems = []
    for fid in _finding_ids():
        got = seen.get(fid, [])
        if len(got) < 2 or not any(p for _, p in got):
            problems.append(f"{fid}: {len(got)} golden incident(s), {sum(p for _, p in got)} partial: {[c for c, _ in got]}")
    assert not problems, "\n".join(problems)
    folders = {p.name for p in GOLDEN.iterdir() if p.is_dir()}
    assert folders <= set(_finding_ids()), f"golden folders that name no finding: {sorted(folders - set(_finding_ids()))}"


def test_every_case_says_what_it_is() -> None:
    for d in cases():
        case = load_case(d)
        assert case.get("description"), f"{d.relative_to(ROOT)}/case.toml: no description"
        assert d.parent.name in {f["id"] for f in json.loads((d / "expected.json").read_text(encoding="utf-8"))["findings"]} or case.get("silent"), (
            f"{d.relative_to(ROOT)}: filed under {d.parent.name}, which its findings do not include"
        )


def test_every_finding_has_a_minimal_excerpt_and_a_near_miss() -> None:
    """Issue 28: per finding, the smallest excerpt that makes it (``minimal = true``: the golden pins
    its graded severity and confidence) and a near miss just below the page's minimum evidence
    (``near_miss = true``) on which logsleuth stays silent."""
    problems = []
    for fid in _finding_ids():
        mine = [(d, load_case(d)) for d in cases() if d.parent.name == fid]
        minimal = [(d, c) for d, c in mine if c.get("minimal")]
        near = [(d, c) for d, c in mine if c.get("near_miss")]
        if not minimal or not near:
            problems.append(f"{fid}: {len(minimal)} minimal excerpt(s), {len(near)} near miss(es)")
            continue
        for d, c in minimal + near:
            lines = sum(len((ROOT / i).read_text(encoding="utf-8").splitlines()) for i in c["_inputs"])
            if lines > 12 or not c.get("partial"):
                problems.append(f"{d.relative_to(ROOT)}: {lines} lines (an excerpt of 12 at most, marked partial)")
        for d, _ in minimal:
            got = [f["id"] for f in json.loads((d / "expected.json").read_text(encoding="utf-8"))["findings"]]
            if got != [fid]:
                problems.append(f"{d.relative_to(ROOT)}: findings {got}, expected only {fid}")
        for d, _ in near:
            got = [f["id"] for f in json.loads((d / "expected.json").read_text(encoding="utf-8"))["findings"]]
            if got:
                problems.append(f"{d.relative_to(ROOT)}: a near miss made findings {got}")
    assert not problems, "\n".join(problems)

