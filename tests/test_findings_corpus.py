"""The findings as a corpus, linted as a whole (Elastic's detection-rules, Sigma): every finding has
its doc page and its README row; every subject key a golden incident shows is named on that page;
every event name a detector reads exists in a pack; every migrated finding's verdict file reads only
names its facts declare, and its doc page carries the confidence table made from that file
(LOGSLEUTH_REGENERATE=1 rewrites the tables)."""

from __future__ import annotations

import ast
import importlib
import json
import os
import re
from pathlib import Path

import pytest

from conftest import ROOT

import logsleuth
from logsleuth.detectors import all_detectors
from logsleuth.detectors.verdict import fact_names
from logsleuth.recognise.packs import load_packs

DETECTORS = all_detectors()

IDS = [d.id for d in DETECTORS]
REGENERATE = bool(os.environ.get("LOGSLEUTH_REGENERATE"))


@pytest.mark.parametrize("det", DETECTORS, ids=IDS)
def test_every_finding_has_its_page_and_its_readme_row(det) -> None:
    page = ROOT / "docs" / "findings" / f"{det.id}.md"
    assert page.is_file(), f"{det.id}: no docs/findings/{det.id}.md"
    assert det.doc == f"docs/findings/{det.id}.md", f"{det.id}: its doc is {det.doc!r}"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"[`{det.id}`](docs/findings/{det.id}.md)" in readme, f"{det.id}: no row in the README's table of findings"


def _golden_subject_keys() -> dict[str, set[str]]:
    keys: dict[str, set[str]] = {}
    for f in (ROOT / "tests" / "golden").glob("*/*/expected.json"):
        for finding in json.loads(f.read_text(encoding="utf-8"))["findings"]:
            for s in finding["subjects"]:
                keys.setdefault(finding["id"], set()).update(s)
    return keys


# (checked for the findings moved to facts and a verdict file; each page is brought up to date then)
@pytest.mark.parametrize("det", [d for d in DETECTORS if d.verdict is not None], ids=lambda d: d.id)
def test_every_subject_key_seen_is_documented_on_the_page(det) -> None:
    page = (ROOT / "docs" / "findings" / f"{det.id}.md").read_text(encoding="utf-8")
    seen = _golden_subject_keys().get(det.id, set())
    missing = sorted(k for k in seen if f"`{k}`" not in page)
    assert not missing, f"docs/findings/{det.id}.md does not name these subject keys its findings carry: {missing}"


# ----------------------------------------------------------------------------- event names


def _pack_events() -> set[str]:
    return {p.event for p in load_packs().patterns}


def _event_literals(path: Path) -> set[tuple[str, int]]:
    """String constants a module compares with the ``event`` column or keeps in a constant named
    *EVENTS / *LINES / PAIRED / MARKERS / CAUSES (the event kinds it reads)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[tuple[str, int]] = set()

    def strings(node) -> list[tuple[str, int]]:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [(node.value, node.lineno)]
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return [x for e in node.elts for x in strings(e)]
        if isinstance(node, ast.Dict):
            return [x for k in node.keys if k is not None for x in strings(k)]
        if isinstance(node, ast.BinOp):
            return strings(node.left) + strings(node.right)
        return []

    def is_event_col(node) -> bool:
        return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "col"
                and len(node.args) == 1 and isinstance(node.args[0], ast.Constant) and node.args[0].value == "event")

    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and re.search(r"EVENTS?$|_LINES$|^PAIRED$|^MARKERS$|^CAUSES$", t.id) for t in node.targets):
            if not any(isinstance(t, ast.Name) and t.id in ("SAMPLE_LINES", "POSITION_WINDOW_LINES") for t in node.targets):
                out.update(strings(node.value))
        elif isinstance(node, ast.Compare) and (is_event_col(node.left) or any(is_event_col(c) for c in node.comparators)):
            for c in [node.left, *node.comparators]:
                out.update(strings(c))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "is_in" and is_event_col(node.func.value):
            for a in node.args:
                out.update(strings(a))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "of" and isinstance(node.func.value, ast.Name) and node.func.value.id == "ctx":
            for a in node.args:
                out.update(strings(a))
        elif isinstance(node, ast.keyword) and node.arg == "events":
            out.update(strings(node.value))
    return out


def test_every_event_a_detector_reads_exists_in_a_pack() -> None:
    known = _pack_events()
    files = [*(ROOT / "logsleuth" / "detectors").rglob("*.py"), ROOT / "logsleuth" / "timeline" / "histogram.py", ROOT / "logsleuth" / "render" / "chart.py"]
    unknown = []
    for f in files:
        for name, line in sorted(_event_literals(f)):
            if name not in known:
                unknown.append(f"{f.relative_to(ROOT)}:{line}: {name!r}")
    assert not unknown, "event names no pack emits (a typo, or a pattern renamed):\n" + "\n".join(unknown)


def test_the_event_lint_sees_what_detectors_read() -> None:
    # the lint itself: it must find the events of a detector that reads them in each of its ways
    found = {n for n, _ in _event_literals(ROOT / "logsleuth" / "detectors" / "pulsar" / "dangling.py")}
    assert {"producer_already_present", "bundle_disabling", "producer_created"} <= found
    found = {n for n, _ in _event_literals(ROOT / "logsleuth" / "detectors" / "kafka" / "model.py")}
    assert {"produce_retry", "batch_expired", "buffer_exhausted"} <= found


# ----------------------------------------------------------------------------- verdict files

MIGRATED = [d for d in DETECTORS if d.verdict is not None]
# where the installed package lives (the repo in an editable install, site-packages in CI): the page names the
# verdict file by its path in the repo, logsleuth/detectors/…
PACKAGE_HOME = Path(logsleuth.__file__).resolve().parent.parent


def test_some_findings_are_declared_as_data() -> None:
    assert MIGRATED, "no finding has its verdict in a TOML file"


VERDICT_FILES = sorted((Path(logsleuth.__file__).parent / "detectors").glob("*/*.toml"))


@pytest.mark.parametrize("path", VERDICT_FILES, ids=[p.name for p in VERDICT_FILES])
def test_every_condition_and_template_of_a_verdict_file_parses(path) -> None:
    """A run parses a condition when it first evaluates it (Verdict.load checks only the shape):
    every condition and template of every verdict file, overlays too, is parsed here."""
    from logsleuth.detectors.verdict import Verdict

    Verdict.load(str(path), path.stem).check(parse=True)


@pytest.mark.parametrize("det", MIGRATED, ids=[d.id for d in MIGRATED])
def test_a_verdict_reads_only_what_its_facts_declare(det) -> None:
    assert det.facts is not None, f"{det.id}: a verdict without a facts type"
    unknown = det.verdict.names() - fact_names(det.facts)
    assert not unknown, f"{det.verdict.source.name} reads names its facts ({det.facts.__name__}) do not have: {sorted(unknown)}"


@pytest.mark.parametrize("det", MIGRATED, ids=[d.id for d in MIGRATED])
def test_the_doc_page_has_the_confidence_table_of_its_verdict(det) -> None:
    page = ROOT / "docs" / "findings" / f"{det.id}.md"
    text = page.read_text(encoding="utf-8")
    start = f"<!-- confidence table: made from {det.verdict.source.relative_to(PACKAGE_HOME).as_posix()} (LOGSLEUTH_REGENERATE=1 pytest tests/test_findings_corpus.py) -->"
    end = "<!-- end of the confidence table -->"
    table = det.verdict.confidence_table()
    block = f"{start}\n{table}\n{end}"
    if start in text and end in text:
        current = text[text.index(start): text.index(end) + len(end)]
    else:
        current = None
    if current == block:
        return
    if REGENERATE:
        if current is None:
            text = text.rstrip("\n") + "\n\n## Why this confidence\n\n" + block + "\n"
        else:
            text = text.replace(current, block)
        page.write_text(text, encoding="utf-8")
        return
    pytest.fail(f"docs/findings/{det.id}.md: the confidence table differs from {det.verdict.source.name} (LOGSLEUTH_REGENERATE=1 rewrites it)")


def test_no_detector_module_keeps_confidence_arithmetic_once_migrated() -> None:
    for det in MIGRATED:
        mod = importlib.import_module(det.run.__module__)
        src = Path(mod.__file__).read_text(encoding="utf-8")
        assert not re.search(r"\bconf(idence)?\s*[+-]=", src), f"{mod.__name__}: confidence arithmetic (it belongs in {det.verdict.source.name})"
        assert "fmt_time(" not in src, f"{mod.__name__}: a time formatted into prose (words keep times as times: detectors/words.py)"


def test_every_finding_is_declared_as_data() -> None:
    """Issue 27: every finding is made from facts and its verdict file, none grades in its module."""
    assert {d.id for d in MIGRATED} == {d.id for d in all_detectors()}


def test_no_detector_module_grades_formats_times_or_runs_long() -> None:
    """Issue 27, corpus-wide: in no module under detectors/ is confidence added up, a time formatted
    into words (strftime, a fmt_time), or a function longer than 80 lines (a mechanism that long
    hides decisions a verdict file should declare)."""
    import ast

    bad = []
    for f in sorted((ROOT / "logsleuth" / "detectors").rglob("*.py")):
        src = f.read_text(encoding="utf-8")
        rel = f.relative_to(ROOT)
        if re.search(r"\bconf(idence)?\s*[+-]=", src):
            bad.append(f"{rel}: confidence arithmetic")
        if rel.name != "words.py" and re.search(r"strftime\(|fmt_time\(", src):
            bad.append(f"{rel}: a time formatted (words.Time keeps it typed until a renderer shows it)")
        for n in ast.walk(ast.parse(src)):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.end_lineno - n.lineno + 1 > 80:
                bad.append(f"{rel}:{n.lineno}: {n.name} is {n.end_lineno - n.lineno + 1} lines")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("det", all_detectors(), ids=[d.id for d in all_detectors()])
def test_every_finding_page_states_its_minimum_evidence(det) -> None:
    """Issue 28: the smallest set of facts a finding is stated from is said on its page."""
    page = (ROOT / "docs" / "findings" / f"{det.id}.md").read_text(encoding="utf-8")
    assert "**Minimum evidence**" in page, f"docs/findings/{det.id}.md does not state its minimum evidence"

