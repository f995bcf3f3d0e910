"""Experiment keys by what runs (repro/fingerprint.py, repro/reach.py): the code an
experiment reaches, by name, not the bytes of the modules it imports nor where a definition
lives; on containers, without what only an existing server runs. Each test edits a copy of
repro/ in tmp_path and keys the copy's chapters again."""
from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from repro import fingerprint, reach, registry
from repro.results import ROOT

CHAPTERS = sorted(registry.chapters())


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "repro", tmp_path / "repro", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


DSN = "dsn:host=db.example dbname=bench"


def keys(tree: Path, target: str = "container") -> dict[str, str]:
    return {name: fingerprint.experiment(tree / "repro" / "chapters" / name, registry.get(name).scales["default"],
                                         target) for name in CHAPTERS}


def reached(tree: Path, existing: bool = False) -> dict[str, set[str]]:
    """Each chapter's reached definitions as "module:qualified name"."""
    return {name: {f"{m}:{q}" for m, q in reach.walk(tree / "repro" / "chapters" / name / "experiment.py", existing).seen}
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
    """The lab's functions and methods among reached definitions, outside the harness (no
    bodies, no classes): what the key hashes."""
    def is_function(unit: str) -> bool:
        module, qual = unit.split(":")
        if not module.startswith("repro.lab") or not qual or reach.harness((module, qual)):
            return False
        path = ROOT.joinpath(*module.split(".")).with_suffix(".py")
        node: ast.AST = ast.parse(path.read_bytes())
        for name in qual.split("."):  # a constant has no node of its name: not a function
            node = next((n for n in getattr(node, "body", []) if getattr(n, "name", None) == name), None)
        return isinstance(node, ast.FunctionDef) and node.body[0].lineno > node.lineno
    return set(filter(is_function, found))


def test_a_docstring_or_comment_edit_anywhere_in_the_lab_changes_no_key(tree: Path) -> None:
    before = keys(tree)
    edited = sorted((tree / "repro" / "lab").rglob("*.py")) + sorted((tree / "repro" / "chapters").glob("*/experiment.py"))
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


def move(tree: Path, unit: str, to: str) -> None:
    """Move a top-level definition ("repro.lab.servers:f") into the lab module `to` (made if
    new), with the imports it needs there (the source's, and the source's own names it uses);
    the source imports it back, as a split module that keeps its importers does."""
    module, name = unit.split(":")
    source = tree.joinpath(*module.split(".")).with_suffix(".py")
    target = tree.joinpath(*to.split(".")).with_suffix(".py")
    text = source.read_text()
    body = ast.parse(text).body
    node = next(n for n in body if getattr(n, "name", None) == name)
    lines = text.splitlines(keepends=True)
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    moved = "".join(lines[first - 1:node.end_lineno])
    imports = "".join(ast.get_source_segment(text, n) + "\n" for n in body if isinstance(n, (ast.Import, ast.ImportFrom)))
    own = {getattr(n, "name", None) for n in body} | {t.id for n in body if isinstance(n, ast.Assign)
                                                      for t in n.targets if isinstance(t, ast.Name)}
    used = sorted({n.id for n in ast.walk(node) if isinstance(n, ast.Name)} & own - {name})
    back = f"from .{module.rsplit('.', 1)[1]} import {', '.join(used)}\n" if used else ""
    old = target.read_text() if target.exists() else ""
    target.write_text(imports + back + old + "\n\n" + moved)
    kept = lines[:first - 1] + lines[node.end_lineno:]
    at = max(n.end_lineno for n in body if isinstance(n, (ast.Import, ast.ImportFrom)))
    kept.insert(at, f"from .{to.rsplit('.', 1)[1]} import {name}\n")
    source.write_text("".join(kept))


def test_a_move_of_lab_definitions_between_modules_changes_no_key(tree: Path) -> None:
    """A function and a class every chapter reaches, each into a new module with the imports
    that follow them: the bytes change, what runs does not. (A module new to an experiment's
    imports brings the body it runs at import, as any module does.)"""
    before, reached_before = keys(tree), reached(tree)
    assert all("repro.lab.servers:fixed_settings" in u and "repro.lab.servers:ContainerServer._client_exec" in u
               for u in reached_before.values())
    servers = (tree / "repro" / "lab" / "servers.py").read_bytes()
    move(tree, "repro.lab.servers:fixed_settings", "repro.lab.settings")
    move(tree, "repro.lab.servers:ContainerServer", "repro.lab.containers")
    assert (tree / "repro" / "lab" / "servers.py").read_bytes() != servers
    after = reached(tree)
    assert all("repro.lab.settings:fixed_settings" in u and "repro.lab.containers:ContainerServer._client_exec" in u
               for u in after.values())
    assert keys(tree) == before


def test_imports_for_annotations_only_change_no_key(tree: Path) -> None:
    """`if TYPE_CHECKING:` with imports in it never runs: adding one to a module every chapter
    imports changes no key (any other statement there would: see the next test)."""
    before = keys(tree)
    path = tree / "repro" / "lab" / "servers.py"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("\nfrom ..text import Text\n", "\nfrom ..text import Text\nfrom typing import TYPE_CHECKING\n"
                                 "if TYPE_CHECKING:\n    from .existing import ExternalServer\n", 1), encoding="utf-8")
    assert path.read_text(encoding="utf-8") != text
    assert keys(tree) == before
    path.write_text(path.read_text(encoding="utf-8").replace("    from .existing import ExternalServer\n",
                                                             "    from .existing import ExternalServer\n    x = 1\n"),
                    encoding="utf-8")
    assert all(keys(tree)[name] != key for name, key in before.items())


def _methods(tree: Path, module: str, cls: str) -> set[str]:
    node = ast.parse(tree.joinpath(*module.split(".")).with_suffix(".py").read_bytes())
    found = next(n for n in node.body if isinstance(n, ast.ClassDef) and n.name == cls)
    return {n.name for n in found.body if isinstance(n, ast.FunctionDef)}


def test_the_existing_server_code_enters_no_container_key_and_every_dsn_key(tree: Path) -> None:
    """Against an existing server (--dsn) the lab runs lab/existing.py's code (ExistingLab);
    on containers, never: editing them changes no container key and every DSN key, and so
    does a new class there with a method of a name the chapters call (`run`). A run on
    containers still reaches every method of Server and ContainerServer, and every Lab method,
    that a DSN run reaches."""
    containers, dsn = reached(tree), reached(tree, existing=True)
    # a Server method ExternalServer calls on (super()) may be reached through it alone
    overridden = {f"repro.lab.servers:Server.{m}" for m in _methods(tree, "repro.lab.existing", "ExternalServer")}
    for name in CHAPTERS:
        assert containers[name] < dsn[name]
        shared = {u for u in dsn[name] if u.split(":")[1].split(".")[0] in ("Server", "ContainerServer", "Lab")}
        assert shared - containers[name] - overridden == set(), name
        only = dsn[name] - containers[name]
        assert {f"repro.lab.existing:{u}" for u in ("ExternalServer.__init__", "check_dsn", "_scratch_database",
                                                    "_drop_database", "ExistingLab.external")} <= only, name
        assert {u for u in only if not u.startswith(("repro.lab.existing:", "repro.lab.local_client:"))} - overridden <= {
            "repro.lab.servers:_options"}, name  # _options: also pgbench's
    before, before_dsn = keys(tree), keys(tree, DSN)
    for unit in ("existing:ExternalServer.run", "existing:ExternalServer.__init__", "existing:ExistingLab.external",
                 "existing:check_dsn", "existing:extensions", "existing:_drop_database"):
        add_statement(tree, f"repro.lab.{unit}")
    assert keys(tree) == before
    edited = keys(tree, DSN)
    assert all(edited[n] != before_dsn[n] for n in CHAPTERS)
    with (tree / "repro" / "lab" / "existing.py").open("a") as f:
        f.write("\n\nclass AnotherClient:\n    def run(self, cmd):\n        return cmd\n")
    add_statement(tree, "repro.lab.existing:ExternalServer._client_exec")
    assert keys(tree) == before
    assert all(keys(tree, DSN)[n] != edited[n] for n in CHAPTERS)


def test_the_local_clusters_code_enters_no_container_or_dsn_key_and_every_local_key(tree: Path) -> None:
    """On local clusters (--server local) the lab runs lab/local.py, lab/local_context.py and
    lab/binaries.py, which no experiment imports: editing any of them changes no key of the
    containers or of an existing server, and every local key; a local key is neither of those."""
    local = "local:AMD EPYC x2"
    before, before_dsn, before_local = keys(tree), keys(tree, DSN), keys(tree, local)
    assert all(before_local[n] not in (before[n], before_dsn[n]) for n in CHAPTERS)
    for unit in ("local:LocalServer.restart", "binaries:binaries", "local_context:LocalRunContext.engine_cpus"):
        add_statement(tree, f"repro.lab.{unit}")
        assert keys(tree) == before and keys(tree, DSN) == before_dsn, unit
        edited = keys(tree, local)
        assert all(edited[n] != before_local[n] for n in CHAPTERS), unit
        before_local = edited


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
    assert {"used", "A", "A.__init__", "A.m", "B.m"} <= found
    assert not {"unused", "A.other"} & found
    write(experiment, "from ...lab import util\n\ndef run(ctx, name):\n    getattr(ctx, name)()\n")
    assert {"unused", "A.other"} <= set(fingerprint.reached(experiment))


def test_the_list_shows_each_chapters_key() -> None:
    out = subprocess.run([sys.executable, "-m", "repro", "list"], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    for name in CHAPTERS:
        assert f"{name:16} {registry.get(name).experiment_hash('default')} " in out


def _migration() -> Any:
    """scripts/migrate_keys.py as a module."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("migrate_keys", ROOT / "scripts" / "migrate_keys.py")
    migrate = sys.modules["migrate_keys"] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(migrate)
    return migrate


def test_a_run_of_a_dirty_tree_keyed_as_the_code_before_a_reviewed_refactor_is_carried(tmp_path: Path) -> None:
    """A run whose tree had uncommitted changes has no commit's code to compare; its key, by
    today's rule, is its code's all the same. Where that key is the code's before a reviewed
    refactor (BRIDGES) whose code after is today's, it gets today's key (its first kept); any
    other key of such a run is left as it is."""
    migrate = _migration()
    trees = migrate.Trees(tmp_path / "trees", tmp_path / "cache")
    today = registry.get("eic").experiment_hash("default")
    befores = [trees.keys(before, "eic", "default", "container") for before, _ in migrate.BRIDGES]
    moved = [k["new"] for k in befores if k and k["new"] != today
             and trees.bridged(k["new"], "eic", "default", "container") == today]
    if not moved:
        pytest.skip("no reviewed refactor carries eic's code to today's")

    def run(key: str) -> dict[str, Any]:
        return {"chapter": "eic", "scale": "default", "key": {"experiment": key, "target": "container"},
                "provenance": {"git": {"commit": "0" * 40, "dirty": True}}}
    carried = run(moved[-1])
    assert migrate.rekey(tmp_path / "run.json", carried, trees, write=True) == (
        True, "kept: its key was today's before a reviewed refactor")
    assert carried["key"]["experiment"] == today and carried["key"]["rekeyed_from"] == moved[-1]
    assert migrate.rekey(tmp_path / "other.json", run("0" * 16), trees, write=True) == (
        False, "left out: its tree had uncommitted changes that its key does not match")


def test_the_migration_gives_a_stored_run_todays_key_where_its_commits_code_is_todays(tmp_path: Path) -> None:
    """scripts/migrate_keys.py, on a run as it was before it and once more after: today's
    key where the code at the run's commit is today's by today's rule (or the code before a
    reviewed refactor, BRIDGES, whose code after is today's), its first key kept; a run whose
    commit's code differs keeps the key it has, and so does a run of other parameters than its
    scale's (one round). A second pass reads the cache."""
    migrate = _migration()
    path = max((ROOT / "results" / "partitions").glob("pg17-default-*.json"))
    doc = json.loads(path.read_text())
    commit = doc["provenance"]["git"]["commit"]
    if subprocess.run(["git", "cat-file", "-e", commit], cwd=ROOT).returncode:
        pytest.skip(f"the run's commit {commit} is not in this clone")
    trees = migrate.Trees(tmp_path / "trees", tmp_path / "cache")
    today = registry.get("partitions").experiment_hash("default")
    first = doc["provenance"]["experiment"]
    old = {**doc, "key": {k: v for k, v in doc["key"].items() if k != "rekeyed_from"} | {"experiment": first}}
    then = trees.keys(commit, "partitions", "default", "container")
    # the same run of one round (repro run --one-round) from the same clean commit keeps its own key
    one_round = {**old, "scale_params": old["scale_params"] | {"rounds": 1, "max_rounds": 1},
                 "key": old["key"] | {"experiment": "1" * 16}}
    assert migrate.rekey(tmp_path / "one.json", one_round, trees, write=True) == (
        False, "left out: it ran other parameters than its scale's in its commit")
    across = trees.bridged(then["new"], "partitions", "default", "container")
    assert migrate.rekey(tmp_path / "run.json", old, trees, write=True)[0] == (across == today)
    if across == today:
        assert old["key"]["experiment"] == today and old["key"]["rekeyed_from"] == first
        assert migrate.rekey(tmp_path / "run.json", old, trees, write=True) == (True, "kept: its key is today's already")
    bridges = {c for pair in migrate.BRIDGES for c in pair}
    assert {p.name for p in (tmp_path / "cache").iterdir()} == {f"{c}.json" for c in {commit, *bridges}}
    again = migrate.Trees(tmp_path / "none", tmp_path / "cache")
    assert again.keys(commit, "partitions", "default", "container") == then and not (tmp_path / "none").exists()
    # an existing server's key and local clusters' (which hash their lab's modules too) are
    # each their own, also once cached (HEAD: a commit with local clusters)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    for base in ("trees2", "none"):  # from the commit's tree, then from the cache alone
        trees = migrate.Trees(tmp_path / base, tmp_path / "cache2")
        dsn, local = (trees.keys(head, "fulltext", "tiny", target)["new"] for target in (DSN, "local:x"))
        assert dsn != local and dsn == trees.keys(head, "fulltext", "tiny", "dsn:other")["new"]


def test_a_name_a_module_takes_with_a_star_import_is_followed(tmp_path: Path) -> None:
    write(tmp_path / "repro" / "lab" / "inner.py", "def helper(): return 1\n")
    write(tmp_path / "repro" / "lab" / "outer.py", "from .inner import *\n")
    experiment = tmp_path / "repro" / "chapters" / "c" / "experiment.py"
    write(experiment, "from ...lab.outer import helper\n\ndef run(ctx):\n    helper()\n")
    assert "helper" in fingerprint.reached(experiment)


def test_names_not_places_yet_what_a_name_means(tmp_path: Path) -> None:
    """A definition enters by its name, with what its names resolve to: a move keeps the
    key, a call that comes to mean another definition of the same syntax does not; two
    reached definitions of one name are told apart by module; a constant enters where it
    is used, an assignment that calls always."""
    write(tmp_path / "repro" / "lab" / "a.py", "LIMIT = 3\nUNUSED = 4\nPATTERN = compile('x')\n"
          "def helper(): return LIMIT\n")
    write(tmp_path / "repro" / "lab" / "b.py", "def helper(): return 2\n")
    experiment = tmp_path / "repro" / "chapters" / "c" / "experiment.py"
    write(experiment, "from ...lab.a import helper\nfrom ...lab import b\n\ndef run(ctx):\n    helper()\n")
    found = fingerprint.reached(experiment)
    assert {"helper", "LIMIT", "PATTERN"} <= set(found) and "UNUSED" not in found
    assert "helper=helper" in found["run"]
    write(experiment, "from ...lab.b import helper\nfrom ...lab import a\n\ndef run(ctx):\n    helper()\n"
          "    a.helper()\n")
    found = fingerprint.reached(experiment)
    assert {"repro.lab.a:helper", "repro.lab.b:helper"} <= set(found)
    assert "helper=repro.lab.b:helper" in found["run"]


def test_a_run_of_one_round_has_a_key_of_its_own_on_every_target() -> None:
    """`repro run --one-round` changes the rounds, so neither its cached result nor its pool
    is the scale's; the scale's other parameters are those of its own scale, but for what the
    chapter's [one_round] sets (the least data that runs every step), which it has too."""
    from repro.lab.runner import quick
    for name, chapter in registry.chapters().items():
        params = chapter.scales["tiny"]
        assert quick(chapter, params) == {**params, **chapter.one_round, "rounds": 1, "max_rounds": 1}
        assert set(chapter.one_round) <= set(params), f"{name}'s [one_round] sets a parameter no scale has"
        for target in ("container", DSN, "local:x"):
            assert chapter.experiment_hash("tiny", target, quick(chapter, params)) != chapter.experiment_hash("tiny", target), name
