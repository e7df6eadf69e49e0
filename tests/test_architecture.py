"""The tree is the pipeline: each stage is a folder (or one module), and imports only go down it.

Reads every module's imports (also those inside functions, which the CLI uses to stay fast) and
fails when a module imports one of a later stage, or when modules import each other in a loop.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "logsleuth"

# lowest first: a module may import its own stage and the stages before it
STAGES = [
    ("ground", ["logsleuth", "logsleuth.errors", "logsleuth.resources", "logsleuth.cache", "logsleuth.safe", "logsleuth.atomic"]),
    ("ingest", ["logsleuth.ingest"]),
    ("recognise", ["logsleuth.recognise"]),
    ("timeline", ["logsleuth.timeline"]),
    ("detectors", ["logsleuth.detectors"]),
    ("findings", ["logsleuth.findings"]),
    ("render", ["logsleuth.render"]),
    ("analysis", ["logsleuth.analysis"]),
    ("cli", ["logsleuth.cli", "logsleuth.__main__"]),
]


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _stage(module: str) -> int:
    best, rank = -1, None
    for i, (_, prefixes) in enumerate(STAGES):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best:
                best, rank = len(p), i
    assert rank is not None, f"{module} is in no stage: add its folder to STAGES and to docs/architecture.md"
    return rank


def _imports(module: str, path: Path, known: set[str]) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_pkg = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".") if is_pkg else module.split(".")[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            names = [f"{base}.{a.name}" for a in node.names] + [base]
        else:
            continue
        for name in names:
            while name and name not in known:  # `from pkg import name` names a module or a symbol
                name = name.rpartition(".")[0]
            if name and name != module and name.startswith("logsleuth"):
                found.add(name)
    return found


def _graph() -> dict[str, set[str]]:
    mods = _modules()
    known = set(mods)
    return {m: _imports(m, p, known) - {"logsleuth"} for m, p in mods.items()}


def test_every_module_belongs_to_a_stage_and_imports_only_earlier_stages():
    wrong = []
    for mod, deps in sorted(_graph().items()):
        for dep in sorted(deps):
            if _stage(dep) > _stage(mod):
                wrong.append(f"{mod} ({STAGES[_stage(mod)][0]}) imports {dep} ({STAGES[_stage(dep)][0]})")
    assert not wrong, "imports that go up the pipeline:\n" + "\n".join(wrong)


def test_no_import_loops():
    graph = _graph()
    # a package's __init__ that re-exports its own modules is not a loop with them
    edges = {m: {d for d in deps if not m.startswith(d + ".")} for m, deps in graph.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    loops: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                loops.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    assert not loops, "modules that import each other in a loop: " + "; ".join(" <-> ".join(c) for c in loops)


def test_the_stage_list_in_the_docs_is_the_folder_list():
    doc = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    folders = sorted(p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists())
    staged = sorted(prefix.split(".")[1] for _, prefixes in STAGES for prefix in prefixes
                    if prefix.count(".") == 1 and (PACKAGE / prefix.split(".")[1]).is_dir())
    assert folders == staged, f"folders {folders} but stages {staged}"
    for name in folders:
        assert f"`logsleuth/{name}/`" in doc, f"docs/architecture.md does not name the stage folder logsleuth/{name}/"
