"""Code, hashed by its syntax tree and the project's functions it reaches, not by its bytes:
a finding's measure (its fingerprint, below) and a chapter's experiment (its key, at the
end). asv versions a benchmark by its code. (A measure's tree keeps its docstrings: the
registered fingerprints were made so, and a changed one is a revision.)

What a check measures is its statistic: the function of the rounds, the project's functions
it calls (its chapter's analysis, the rounds' methods such as `Rounds.ratio`), the values
it closes over (condition names, limits), and the scale its rounds are averaged on. The
fingerprint hashes each function's syntax tree (not its bytecode, not its comments or
layout), so it is the same on every Python, and changes when the computation does. The
register (repro/claims.py) keeps it beside the claim: a changed fingerprint is a revision.
"""
from __future__ import annotations

import ast
import copy
import hashlib
import inspect
import json
import textwrap
from functools import cache
from pathlib import Path
from types import FunctionType
from typing import Any

from .results import ROOT
from .stats import Rounds
from .verdict import Finding, Measure


@cache
def _module_tree(path: str) -> ast.Module:
    with open(path, encoding="utf-8") as f:
        return ast.parse(f.read())


def _node(fn: FunctionType) -> ast.AST:
    """The function's own node in its module: a def by its first line, a lambda by where its
    instructions are (several lambdas may share a line)."""
    code = fn.__code__
    tree = _module_tree(code.co_filename)
    if fn.__name__ != "<lambda>":
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == fn.__name__ \
                    and code.co_firstlineno in (node.lineno, *(d.lineno for d in node.decorator_list)):
                return node
        return ast.parse(textwrap.dedent(inspect.getsource(fn)))
    spans = [p for p in code.co_positions() if None not in p and (p[0], p[2]) < (p[1], p[3])]
    start = min((p[0], p[2]) for p in spans)
    end = max((p[1], p[3]) for p in spans)
    found = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda)
             and (n.body.lineno, n.body.col_offset) <= start and end <= (n.body.end_lineno, n.body.end_col_offset)]
    return min(found, key=lambda n: (n.end_lineno - n.lineno, n.end_col_offset - n.col_offset))


def _ours(fn: FunctionType) -> bool:
    """The project's own code (followed), not a library's (named only)."""
    path = Path(fn.__code__.co_filename).resolve()
    return path.is_relative_to(ROOT) and "site-packages" not in path.parts


def _value(value: Any, seen: set[int]) -> str:
    """A closed-over or global value as it enters the fingerprint."""
    if isinstance(value, FunctionType):
        return _function(value, seen)
    if isinstance(value, Measure):
        return measure(value, seen)
    if isinstance(value, (str, int, float, bool, type(None), tuple, frozenset)):
        return repr(value)
    return type(value).__name__  # an object: its methods are followed by name where they are ours


def _function(fn: FunctionType, seen: set[int]) -> str:
    if id(fn) in seen or not _ours(fn):
        return f"{fn.__module__}.{fn.__qualname__}"
    seen.add(id(fn))
    node = _node(fn)
    parts = [ast.dump(node)]
    names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    attributes = {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    for name in sorted(names):
        if name in cells:
            try:
                parts.append(f"{name}={_value(cells[name].cell_contents, seen)}")
            except ValueError:  # an empty cell
                continue
        elif name in fn.__globals__:
            value = fn.__globals__[name]
            if isinstance(value, FunctionType) or not callable(value):
                parts.append(f"{name}={_value(value, seen)}")
    for name in sorted(attributes):  # the rounds' own methods the statistic calls
        method = getattr(Rounds, name, None)
        if isinstance(method, FunctionType):
            parts.append(f"Rounds.{name}={_function(method, seen)}")
    return "\n".join(parts)


def measure(m: Measure, seen: set[int] | None = None) -> str:
    seen = set() if seen is None else seen
    return "\n".join([f"scale={m.scale} exact={m.exact}", _function(m.statistic, seen)])


def of(finding: Finding) -> str:
    """The finding's measures, one fingerprint for all its checks (16 hex digits)."""
    text = "\n--\n".join(measure(c.measure) for c in finding.checks)
    return hashlib.sha256(text.encode()).hexdigest()[:16]



# -- an experiment's key: the code it reaches, its files, its scale's parameters ------------
#
# What decides a measurement keys the cache and the pools (repro/results.py, pooling.py). The
# code enters as the measure's does, by syntax tree without comments or docstrings, but read
# from the files rather than from live functions, so that the same rule applies to the tree of
# any commit (scripts/migrate_keys.py). It follows the experiment's `run` through the modules
# the experiment imports within the lab and its own chapter (`closure`), a definition at a
# time. Where a call's target cannot be told from the syntax it takes more, never less: an
# attribute `x.name` of an object reaches every method called `name` and every class with a
# member `name`, a class reached brings its header and its special methods, a module used
# as a value brings all of it, `getattr` with a computed name brings everything. Every module
# body in the closure runs at import, so each enters whole (without its definitions).

Unit = tuple[str, str]  # (module, "" for its body | "f" | "Class" for its header | "Class.f")


def _module_name(path: Path, root: Path) -> str:
    return ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")


def _module_file(name: str, roots: tuple[Path, ...]) -> Path | None:
    """A project module's file in the first tree that has it (a scaffolded chapter's tree
    holds its own package only: the lab then comes from this checkout)."""
    if name.split(".")[0] != "repro":
        return None
    for root in roots:
        base = root.joinpath(*name.split("."))
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            if candidate.is_file():
                return candidate
    return None


def _absolute(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The module an `from ... import` names, relative imports resolved."""
    if not node.level:
        return node.module or ""
    parts = module.split(".")[:len(module.split(".")) - node.level + is_package]
    return ".".join(parts + ([node.module] if node.module else []))


def _bindings(module: str, is_package: bool, tree: ast.Module) -> dict[str, tuple[str, str | None]]:
    """What each import binds, at the top or inside a function alike: alias -> (module, name),
    name None for a module; `import a.b` also binds "a.b", which `_imported` follows."""
    bound: dict[str, tuple[str, str | None]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                bound[a.asname or a.name.split(".")[0]] = (a.name if a.asname else a.name.split(".")[0], None)
                bound[a.name] = (a.name, None)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(module, is_package, node)
            for a in node.names:  # `*` binds what the module has: "*" + its name, looked into
                bound[f"*{base}" if a.name == "*" else a.asname or a.name] = (base, None if a.name == "*" else a.name)
    return bound


def _name(path: Path, roots: tuple[Path, ...]) -> str:
    return _module_name(path, next(r for r in roots if path.is_relative_to(r)))


def _imported(path: Path, roots: tuple[Path, ...]) -> set[Path]:
    """Project modules a module imports (relative and absolute)."""
    found: set[Path] = set()
    for base, name in _module(_name(path, roots), path).bound.values():
        found |= {f for f in (_module_file(base, roots), name and _module_file(f"{base}.{name}", roots)) if f}
    return found


def _roots(experiment: Path) -> tuple[Path, ...]:
    """The tree an experiment lives in (repro/chapters/NAME/experiment.py), then this checkout."""
    return (experiment.parents[3], ROOT)


def closure(experiment: Path) -> list[Path]:
    """An experiment and the modules it imports, transitively, within what measures: the
    lab (repro/lab/) and the experiment's own chapter package. The judge, the site and
    the rest of the core are left out: changing them re-judges, it does not re-measure. So is
    the chapter's `__init__.py`, which `from . import x` runs: it declares the chapter (its
    findings and page), and a revised claim must not make its stored runs stale."""
    roots = _roots(experiment)
    within = [r / "repro" / "lab" for r in roots] + [experiment.parent]
    declaration = experiment.parent / "__init__.py"
    seen: set[Path] = set()
    todo = [experiment]
    while todo:
        path = todo.pop()
        if path not in seen:
            seen.add(path)
            todo += {f for f in _imported(path, roots) - seen
                     if f != declaration and any(f.is_relative_to(r) for r in within)}
    return sorted(seen)


def _normal(node: ast.AST) -> str:
    """A definition's syntax without its docstrings or other lone strings (comments are
    gone already): what runs, not how it reads. Empty fields are left out, as fields that a
    newer Python adds (type_params) are empty in this code: the same text on every Python."""
    if isinstance(node, list):
        return "[" + ",".join(_normal(n) for n in node if not _lone_string(n)) + "]"
    if not isinstance(node, ast.AST):
        return repr(node)
    fields = ((f, getattr(node, f, None)) for f in node._fields)
    return type(node).__name__ + "(" + ",".join(f"{f}={_normal(v)}" for f, v in fields if v not in (None, [])) + ")"


def _lone_string(node: ast.AST) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _is_def(node: ast.AST) -> bool:
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))


def _module(name: str, path: Path) -> _Module:
    return _Module.of(name, path.name == "__init__.py", path.read_text(encoding="utf-8"))


class _Module:
    """One module of the closure: its body (without definitions), definitions and imports;
    each definition's nodes and normalized syntax, worked out once per source."""

    @staticmethod
    @cache
    def of(name: str, is_package: bool, source: str) -> _Module:
        return _Module(name, is_package, ast.parse(source))

    def __init__(self, name: str, is_package: bool, tree: ast.Module):
        self.bound = _bindings(name, is_package, tree)
        self.units: dict[str, ast.AST] = {"": ast.Module([s for s in tree.body if not _is_def(s)], [])}
        self.members: dict[str, set[str]] = {}  # class -> its methods, fields and self.attributes
        for node in filter(_is_def, tree.body):
            if not isinstance(node, ast.ClassDef):
                self.units[node.name] = node
                continue
            methods = [s for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
            header = copy.copy(node)
            header.body = [s for s in node.body if s not in methods]
            self.units[node.name] = header
            self.units.update({f"{node.name}.{m.name}": m for m in methods})
            self.members[node.name] = {m.name for m in methods} | _assigned(node)

    @cache
    def nodes(self, qual: str) -> tuple[list[ast.AST], set[int]]:
        """A definition's nodes, and the ids of those that are an attribute's object."""
        found = list(ast.walk(self.units[qual]))
        return found, {id(n.value) for n in found if isinstance(n, ast.Attribute)}

    @cache
    def normal(self, qual: str) -> str:
        return _normal(self.units[qual])


def _assigned(cls: ast.ClassDef) -> set[str]:
    """The names a class's body assigns (its fields), and the attributes its methods set on
    self."""
    names = {t.id for s in cls.body if isinstance(s, (ast.Assign, ast.AnnAssign))
             for t in (s.targets if isinstance(s, ast.Assign) else [s.target]) if isinstance(t, ast.Name)}
    return names | {n.attr for n in ast.walk(cls) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)
                    and isinstance(n.value, ast.Name) and n.value.id == "self"}


def _dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


class _Reach:
    """The definitions an experiment's code reaches (see above)."""

    def __init__(self, modules: dict[str, _Module]):
        self.modules = modules
        self.seen: set[Unit] = set()
        self.todo: list[Unit] = []
        self.having: dict[str, list[tuple[str, str]]] = {}  # member -> (module, class) that have it
        for module, m in modules.items():
            for cls, members in m.members.items():
                for member in members:
                    self.having.setdefault(member, []).append((module, cls))

    def add(self, unit: Unit) -> None:
        if unit not in self.seen and unit[1] in self.modules[unit[0]].units:
            self.seen.add(unit)
            self.todo.append(unit)

    def everything(self, module: str) -> None:
        for qual in self.modules[module].units:
            self.add((module, qual))

    def resolve(self, module: str, name: str, depth: int = 0) -> Unit | str | None:
        """What a name means in a module: a definition, a module of the closure (its name),
        or None (a library's, a builtin, a variable of the body, a local)."""
        m = self.modules.get(module)
        if m is None or depth > 20:
            return None
        if name in m.units and "." not in name:
            return (module, name)
        if name not in m.bound:
            stars = (self.resolve(base, name, depth + 1) for key, (base, _) in m.bound.items() if key[0] == "*")
            return next((found for found in stars if found is not None), None)
        base, imported = m.bound[name]
        if imported is None or f"{base}.{imported}" in self.modules:
            target = base if imported is None else f"{base}.{imported}"
            return target if target in self.modules else None
        return self.resolve(base, imported, depth + 1)

    def target(self, module: str, expr: ast.expr) -> Unit | str | None:
        """What a name or a module's attribute means; None for an object's attribute."""
        if isinstance(expr, ast.Name):
            return self.resolve(module, expr.id)
        if isinstance(expr, ast.Attribute) and isinstance(within := self.target(module, expr.value), str):
            return self.resolve(within, expr.attr)
        return None

    def attribute(self, name: str) -> None:
        """`x.name` of an object whose class the syntax does not tell: every candidate."""
        if not _dunder(name):  # a special method comes with its class
            for module, cls in self.having.get(name, []):
                self.add((module, cls))
                self.add((module, f"{cls}.{name}"))

    def visit(self, unit: Unit) -> None:
        module, qual = unit
        m = self.modules[module]
        cls = qual.split(".")[0] if "." in qual else (qual if qual in m.members else None)
        if cls is not None:  # a method brings its class's header; a header its special methods
            self.add((module, cls))
            for member in filter(_dunder, m.members[cls]):
                self.add((module, f"{cls}.{member}"))
        found_nodes, values = m.nodes(qual)
        for n in found_nodes:
            if isinstance(n, (ast.Name, ast.Attribute)):
                found = self.target(module, n)
                if isinstance(found, str) and id(n) in values:
                    continue  # a module, whose attribute is followed
                if isinstance(found, str):
                    self.everything(found)  # a module used as a value: all of it
                elif found is not None:
                    self.add(found)
                elif isinstance(n, ast.Attribute) and not isinstance(self.target(module, n.value), str):
                    self.attribute(n.attr)
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "getattr" \
                    and not (len(n.args) > 1 and isinstance(n.args[1], ast.Constant)):
                for other in self.modules:
                    self.everything(other)

    def run(self, entries: list[Unit]) -> set[Unit]:
        for unit in entries:
            self.add(unit)
        while self.todo:
            self.visit(self.todo.pop())
        return self.seen


def reached(experiment: Path) -> dict[str, str]:
    """The code an experiment runs: each definition it reaches, by its qualified name
    ("repro.lab.servers:Lab.server"), as normalized syntax."""
    roots = _roots(experiment)
    paths = closure(experiment)
    names = {p: _name(p, roots) for p in paths}
    modules = {name: _module(name, p) for p, name in names.items()}
    start = names[experiment]
    entries = [(m, "") for m in modules] + [(start, "run")]
    return {f"{m}:{q}": modules[m].normal(q) for m, q in sorted(_Reach(modules).run(entries))}


def experiment(package: Path, params: dict[str, Any] | None) -> str:
    """A chapter's experiment key at one scale (16 hex digits): the code its experiment
    reaches, its plain files (files/) and that scale's parameters (editing another scale
    changes nothing). The image keys the cache apart (results.cache_key)."""
    digest = hashlib.sha256()
    for name, syntax in reached(package / "experiment.py").items():
        digest.update(f"{name}\0{syntax}\0".encode())
    for path in sorted(p for p in (package / "files").rglob("*") if p.is_file()):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    digest.update(json.dumps(params, sort_keys=True).encode())
    return digest.hexdigest()[:16]
