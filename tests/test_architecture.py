"""ARCHITECTURE.md is the map of the code: it names every module of repro/, so a module
that is added or moved without its line fails here (the templates' are the scaffold's). And
the code keeps the shape the map promises: small modules, and imports in one direction."""
from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAP = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
MAX_LINES = 400


def test_the_architecture_names_every_module() -> None:
    named = set(re.findall(r"[\w]+\.py\b", MAP))
    modules = {p.name for p in (ROOT / "repro").rglob("*.py") if "templates" not in p.parts}
    assert modules - named == set()


def _modules() -> dict[str, Path]:
    """Each module of repro/ by its dotted name (a package by its own)."""
    found = {}
    for path in (ROOT / "repro").rglob("*.py"):
        if "templates" not in path.parts:
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imports(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Which modules of repro/ each one imports: every import statement, at the top, in a
    function or for annotations only (TYPE_CHECKING), as a reader follows them."""
    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join(up + ([node.module] if node.module else []))
                found |= {base} | {f"{base}.{a.name}" for a in node.names}
        graph[name] = {m for m in found if m in modules and m != name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles: each group of modules that reach one another (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while (w := stack.pop()) != v:
                group.append(w)
            if group:
                found.append(sorted([v, *group]))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_module_imports_itself_through_others() -> None:
    assert circles(imports(_modules())) == []


def test_the_circle_check_finds_a_circle_through_annotations() -> None:
    graph = imports(_modules())
    graph["repro.requirements"] = graph["repro.requirements"] | {"repro.verdict"}  # as before #72
    assert ["repro.requirements", "repro.verdict"] in circles(graph)


def test_no_module_is_over_400_lines() -> None:
    long = {str(p.relative_to(ROOT)): n for p in _modules().values()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}
