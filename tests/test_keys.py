"""Experiment keys by what runs (repro/fingerprint.py): the code an experiment reaches, not
the bytes of the modules it imports. Each test edits a copy of repro/ in tmp_path and
keys the copy's chapters again."""
from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from repro import fingerprint, registry
from repro.results import ROOT

CHAPTERS = sorted(registry.chapters())


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "repro", tmp_path / "repro", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def keys(tree: Path) -> dict[str, str]:
    return {name: fingerprint.experiment(tree / "repro" / "chapters" / name, registry.get(name).scales["default"])
            for name in CHAPTERS}


def reached(tree: Path) -> dict[str, set[str]]:
    return {name: set(fingerprint.reached(tree / "repro" / "chapters" / name / "experiment.py"))
            for name in CHAPTERS}


def insert(path: Path, edits: list[tuple[int, int, bytes]]) -> None:
    """Insert bytes at (line, byte column) positions, the last first."""
    lines = path.read_bytes().splitlines(keepends=True)
    for line, col, text in sorted(edits, reverse=True):
        lines[line - 1] = lines[line - 1][:col] + text + lines[line - 1][col:]
    path.write_bytes(b"".join(lines))


def reword(path: Path) -> None:
    """Every docstring gets a sentence more and every definition a comment line above it."""
    tree = ast.parse(path.read_bytes())
    edits = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if ast.get_docstring(node, clean=False) is not None:
            doc = node.body[0].value
            quote = 3 if path.read_bytes().splitlines()[doc.end_lineno - 1][:doc.end_col_offset].endswith(b'"""') else 1
            edits.append((doc.end_lineno, doc.end_col_offset - quote, b" Reworded."))
        if not isinstance(node, ast.Module):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            edits.append((first, 0, b" " * node.col_offset + b"# a new comment\n"))
    insert(path, edits)


def add_statement(tree: Path, unit: str) -> None:
    """A statement more at the top of a definition ("repro.lab.x:f" or ":C.f")."""
    module, qual = unit.split(":")
    path = tree.joinpath(*module.split(".")).with_suffix(".py")
    node = ast.parse(path.read_bytes())
    for name in qual.split("."):
        node = next(n for n in node.body if getattr(n, "name", None) == name)
    first = node.body[0]
    insert(path, [(first.lineno, 0, b" " * first.col_offset + b"pass\n")])


def functions(found: set[str]) -> set[str]:
    """The lab's functions and methods among reached definitions (no bodies, no classes)."""
    def is_function(unit: str) -> bool:
        module, qual = unit.split(":")
        if not module.startswith("repro.lab") or not qual:
            return False
        path = ROOT.joinpath(*module.split(".")).with_suffix(".py")
        node: ast.AST = ast.parse(path.read_bytes())
        for name in qual.split("."):
            node = next(n for n in node.body if getattr(n, "name", None) == name)
        return isinstance(node, ast.FunctionDef) and node.body[0].lineno > node.lineno
    return set(filter(is_function, found))


def test_a_docstring_or_comment_edit_anywhere_in_the_lab_changes_no_key(tree: Path) -> None:
    before = keys(tree)
    edited = sorted((tree / "repro" / "lab").glob("*.py")) + sorted((tree / "repro" / "chapters").glob("*/experiment.py"))
    for path in edited:
        text = path.read_bytes()
        reword(path)
        assert path.read_bytes() != text or not text.strip(), path  # the bytes did change
    assert keys(tree) == before


def test_a_function_only_one_chapter_reaches_changes_only_that_chapters_key(tree: Path) -> None:
    found = reached(tree)
    alone = {name: sorted(functions(units) - set().union(*(found[o] for o in CHAPTERS if o != name)))
             for name, units in found.items()}
    name, units = next((n, u) for n, u in sorted(alone.items()) if u)
    before = keys(tree)
    add_statement(tree, units[0])
    after = keys(tree)
    assert {n for n in CHAPTERS if after[n] != before[n]} == {name}, units[0]


def test_a_lab_function_no_chapter_reaches_enters_no_key(tree: Path) -> None:
    with (tree / "repro" / "lab" / "servers.py").open("a") as f:
        f.write("\n\ndef never_called():\n    return 1\n")
    before = keys(tree)
    add_statement(tree, "repro.lab.servers:never_called")
    assert keys(tree) == before


def test_a_function_every_chapter_reaches_changes_every_key(tree: Path) -> None:
    found = reached(tree)
    everyone = sorted(functions(set.intersection(*found.values())))
    assert "repro.lab.context:RunContext.rounds" in everyone
    before = keys(tree)
    add_statement(tree, everyone[0])
    after = keys(tree)
    assert all(after[n] != before[n] for n in CHAPTERS)


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_an_attribute_of_an_object_reaches_every_method_of_its_name(tmp_path: Path) -> None:
    """What the syntax cannot tell takes more, never less: `ctx.m()` reaches each class's
    `m` (and that class's header and special methods), a module's attribute only that
    definition, and `getattr` with a computed name everything."""
    write(tmp_path / "repro" / "lab" / "util.py",
          "class A:\n    def __init__(self): pass\n    def m(self): return 1\n    def other(self): return 2\n"
          "class B:\n    def m(self): return 3\n"
          "def used(): return 4\n"
          "def unused(): return 5\n")
    experiment = tmp_path / "repro" / "chapters" / "c" / "experiment.py"
    write(experiment, "from ...lab import util\n\ndef run(ctx):\n    util.used()\n    ctx.m()\n")
    found = set(fingerprint.reached(experiment))
    assert {"repro.lab.util:used", "repro.lab.util:A", "repro.lab.util:A.__init__", "repro.lab.util:A.m",
            "repro.lab.util:B.m"} <= found
    assert not {"repro.lab.util:unused", "repro.lab.util:A.other"} & found
    write(experiment, "from ...lab import util\n\ndef run(ctx, name):\n    getattr(ctx, name)()\n")
    assert {"repro.lab.util:unused", "repro.lab.util:A.other"} <= set(fingerprint.reached(experiment))


def test_the_list_shows_each_chapters_key() -> None:
    out = subprocess.run([sys.executable, "-m", "repro", "list"], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    for name in CHAPTERS:
        assert f"{name:16} {registry.get(name).experiment_hash('default')} " in out


def test_the_migration_gives_a_stored_run_the_key_of_its_commits_code(tmp_path: Path) -> None:
    """scripts/migrate_keys.py, on a run as it was before it: the key of the code at the run's
    commit, by today's rule; a run under today's rule already is left as it is."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("migrate_keys", ROOT / "scripts" / "migrate_keys.py")
    migrate = sys.modules["migrate_keys"] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(migrate)
    path = max((ROOT / "results" / "semaphores").glob("pg17-default-*.json"))
    doc = json.loads(path.read_text())
    commit = doc["provenance"]["git"]["commit"]
    if subprocess.run(["git", "cat-file", "-e", commit], cwd=ROOT).returncode:
        pytest.skip(f"the run's commit {commit} is not in this clone")
    trees = migrate.Trees(tmp_path)
    assert migrate.rekey(path, doc, trees, write=False)[:2] == (doc["key"]["experiment"], "already by today's rule")
    old = {**doc, "key": {k: v for k, v in doc["key"].items() if k != "rekeyed_from"} | {"experiment": doc["key"]["rekeyed_from"]}}
    assert migrate.rekey(path, old, trees, write=False)[:2] == (doc["key"]["experiment"], "its key is its commit's")


def test_a_name_a_module_takes_with_a_star_import_is_followed(tmp_path: Path) -> None:
    write(tmp_path / "repro" / "lab" / "inner.py", "def helper(): return 1\n")
    write(tmp_path / "repro" / "lab" / "outer.py", "from .inner import *\n")
    experiment = tmp_path / "repro" / "chapters" / "c" / "experiment.py"
    write(experiment, "from ...lab.outer import helper\n\ndef run(ctx):\n    helper()\n")
    assert "repro.lab.inner:helper" in fingerprint.reached(experiment)
