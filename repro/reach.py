"""The definitions a chapter's experiment reaches, by syntax: the code that keys its runs
(fingerprint.experiment). The files are read rather than live functions imported, so that
the same rule applies to the tree of any commit (scripts/migrate_keys.py).

It follows the experiment's `run` through the modules the experiment imports within the lab
and its own chapter (`closure`), a definition at a time. Where a call's target cannot be
told from the syntax it takes more, never less: an attribute `x.name` of an object reaches
every method called `name` and every class with a member `name`, a class reached brings its
header and its special methods, a module used as a value brings all of it, `getattr` with a
computed name brings everything. Every module body in the closure runs at import, so each
enters whole, without its definitions; an assignment of one name is a definition of its
own, which enters where it is used, or always where its value calls something (that runs
at import).

Names, not places. A definition enters by its name within its module ("Lab.server",
"_options", a constant's name), without the module, and import statements are left out of
every body (syntax is normalized: no docstrings, no lone strings, no imports): what a name
binds is followed by resolution instead, and each definition carries, beside its syntax,
what the names it uses resolve to (a definition by its name, a module of the closure, a
library's name). So a pure move of a definition between modules, with the imports that
follow it, changes no key, while a name that comes to mean another definition does. Where
two modules define a reached name (a function, a constant, a class and so its methods), those
definitions are told apart by module, as each module's body is: a move that makes or ends
such a pair changes the key, which is more, never less. So does a move into a module that
the experiment did not import before: that module's body runs at import now.

What only an existing server runs (`--dsn`) is left out of the key of a run on the
project's containers, which never runs it (`existing_only`): the modules repro.lab.existing
and repro.lab.local_client, and, for the trees of commits where that code lived in
repro/lab/servers.py or repro/lab/harness/, the names below. It is not entered and not followed, so what only it reaches (check_dsn, the scratch
databases, NeedsOwnServer, the client programs) stays out too. A run against an existing
server keeps all of it.

Harness code (repro/lab/harness/) is followed, not hashed (`harness`): what it reaches
elsewhere enters as any reached definition (Lab.server and its fixed settings, through
RunContext.server), its own syntax does not, so fixing it restarts no pool.
"""
from __future__ import annotations

import ast
import copy
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Callable

from .results import ROOT

Unit = tuple[str, str]  # (module, "" for its body | "f" | "CONSTANT" | "Class" for its header | "Class.f")
Link = str | Unit  # what a name resolves to: a definition, or a module's or a library's name

EXISTING_MODULES = ("repro.lab.existing", "repro.lab.local_client")  # its lab's client programs
# Served only to an existing server, wherever in the lab they are defined: the server class and
# the Lab's method that made one (ExistingLab.external since #72); `extensions` (RunContext.has
# calls it only when there is a DSN) and `_drop_database` (for each scratch database made).
EXISTING_NAMES = frozenset({"ExternalServer", "Lab.external", "extensions", "_drop_database"})


def existing_only(unit: Unit) -> bool:
    """Code that runs only against an existing server (see the module's docstring)."""
    module, qual = unit
    if module in EXISTING_MODULES:
        return qual != ""  # its body runs at import, on containers too
    return module.startswith("repro.lab.") and (qual in EXISTING_NAMES or qual.split(".")[0] == "ExternalServer")


def harness(unit: Unit) -> bool:
    """Harness code (repro/lab/harness/): followed, not hashed (see the module's docstring)."""
    return f"{unit[0]}.".startswith("repro.lab.harness.")


# -- the modules: files, imports, closure ----------------------------------------------------

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


def name_of(path: Path, roots: tuple[Path, ...]) -> str:
    return _module_name(path, next(r for r in roots if path.is_relative_to(r)))


def _imported(path: Path, roots: tuple[Path, ...]) -> set[Path]:
    """Project modules a module imports (relative and absolute)."""
    found: set[Path] = set()
    for base, name in module(name_of(path, roots), path).bound.values():
        found |= {f for f in (_module_file(base, roots), name and _module_file(f"{base}.{name}", roots)) if f}
    return found


def roots_of(experiment: Path) -> tuple[Path, ...]:
    """The tree an experiment lives in (repro/chapters/NAME/experiment.py), then this checkout."""
    return (experiment.parents[3], ROOT)


def closure(experiment: Path) -> list[Path]:
    """An experiment and the modules it imports, transitively, within what measures: the lab
    (repro/lab/) and its own chapter package. The judge, the site and the rest of the core are left
    out (changing them re-judges, it does not re-measure), and so is the chapter's `__init__.py`,
    which `from . import x` runs: it declares the chapter, and a revised claim must not stale runs."""
    roots = roots_of(experiment)
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


# -- a module's definitions, normalized ----------------------------------------------------

def _normal(node: ast.AST | list) -> str:
    """A definition's syntax without its docstrings or other lone strings (comments are gone
    already) and without imports: what runs, not how it reads nor where its names come from. Empty
    fields are left out, as fields a newer Python adds (type_params) are empty in this code."""
    if isinstance(node, list):
        return "[" + ",".join(_normal(n) for n in node if not _lone_string(n) and not _is_import(n)) + "]"
    if not isinstance(node, ast.AST):
        return repr(node)
    fields = ((f, getattr(node, f, None)) for f in node._fields)
    return type(node).__name__ + "(" + ",".join(f"{f}={_normal(v)}" for f, v in fields if v not in (None, [])) + ")"


def _lone_string(node: ast.AST) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _is_import(node: ast.AST) -> bool:
    """An import, or an `if TYPE_CHECKING:` of imports only (for annotations: it never runs)."""
    if isinstance(node, ast.If) and not node.orelse and all(_is_import(n) for n in node.body):
        test = node.test
        return (test.id if isinstance(test, ast.Name) else getattr(test, "attr", None)) == "TYPE_CHECKING"
    return isinstance(node, (ast.Import, ast.ImportFrom))


def _is_def(node: ast.AST) -> bool:
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))


def _assignments(body: list[ast.stmt]) -> dict[str, ast.stmt]:
    """A module body's assignments of one name, assigned once: each a definition of its own."""
    found: dict[str, ast.stmt] = {}
    assigned: Counter = Counter()
    for s in body:
        targets = s.targets if isinstance(s, ast.Assign) else [s.target] if isinstance(s, ast.AnnAssign) else []
        names = [t.id for t in targets if isinstance(t, ast.Name)]
        assigned.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
        if len(names) == len(targets) == 1 and s.value is not None:
            found[names[0]] = s
    defined = {s.name for s in body if _is_def(s)}
    return {n: s for n, s in found.items() if assigned[n] == 1 and n not in defined}


def _calls(node: ast.AST) -> bool:
    """Whether evaluating it may run code (a call): then it runs at import, used or not."""
    return any(isinstance(n, (ast.Call, ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr)) for n in ast.walk(node))


def module(name: str, path: Path) -> Module:
    return Module.of(name, path.name == "__init__.py", path.read_text(encoding="utf-8"))


class Module:
    """One module of the closure: its body (without definitions, imports and assignments),
    definitions (an assignment of one name is one) and imports; each definition's nodes and
    normalized syntax, worked out once per source. What runs at import whether used or not
    (the body, an assignment that calls) is an entry."""

    @staticmethod
    @cache
    def of(name: str, is_package: bool, source: str) -> Module:
        return Module(name, is_package, ast.parse(source))

    def __init__(self, name: str, is_package: bool, tree: ast.Module):
        self.bound = _bindings(name, is_package, tree)
        assigned = _assignments(tree.body)
        rest = [s for s in tree.body if not _is_def(s) and not _is_import(s) and s not in assigned.values()]
        self.units: dict[str, ast.AST] = {"": ast.Module(rest, []), **assigned}
        self.entries = ["", *(n for n, s in assigned.items() if _calls(s))]
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
    """The names a class's body assigns (its fields), and the attributes its methods set on self."""
    names = {t.id for s in cls.body if isinstance(s, (ast.Assign, ast.AnnAssign))
             for t in (s.targets if isinstance(s, ast.Assign) else [s.target]) if isinstance(t, ast.Name)}
    return names | {n.attr for n in ast.walk(cls) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)
                    and isinstance(n.value, ast.Name) and n.value.id == "self"}


def _text(node: ast.Name | ast.Attribute) -> str:
    return node.id if isinstance(node, ast.Name) else f"{_text(node.value) if isinstance(node.value, (ast.Name, ast.Attribute)) else '?'}.{node.attr}"


def _dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


# -- the reach ---------------------------------------------------------------------------

class Reach:
    """The definitions an experiment's code reaches (see above), and what each one's names
    resolve to; `leave_out` are never entered nor followed."""

    def __init__(self, modules: dict[str, Module], leave_out: Callable[[Unit], bool] = lambda u: False):
        self.modules = modules
        self.leave_out = leave_out
        self.seen: set[Unit] = set()
        self.todo: list[Unit] = []
        self.links: dict[Unit, set[tuple[str, Link]]] = {}
        self.having: dict[str, list[tuple[str, str]]] = {}  # member -> (module, class) that have it
        for name, m in modules.items():
            for cls, members in m.members.items():
                for member in members:
                    self.having.setdefault(member, []).append((name, cls))

    def add(self, unit: Unit) -> None:
        if unit not in self.seen and unit[1] in self.modules[unit[0]].units and not self.leave_out(unit):
            self.seen.add(unit)
            self.todo.append(unit)

    def everything(self, name: str) -> None:
        for qual in self.modules[name].units:
            self.add((name, qual))

    def resolve(self, name: str, what: str, depth: int = 0) -> Unit | str | None:
        """What a name means in a module: a definition, a module of the closure (its name),
        or None (a library's, a builtin, a variable of the body, a local)."""
        m = self.modules.get(name)
        if m is None or depth > 20:
            return None
        if what in m.units and "." not in what:
            return (name, what)
        if what not in m.bound:
            stars = (self.resolve(base, what, depth + 1) for key, (base, _) in m.bound.items() if key[0] == "*")
            return next((found for found in stars if found is not None), None)
        base, imported = m.bound[what]
        if imported is None or f"{base}.{imported}" in self.modules:
            target = base if imported is None else f"{base}.{imported}"
            return target if target in self.modules else None
        return self.resolve(base, imported, depth + 1)

    def target(self, name: str, expr: ast.expr) -> Unit | str | None:
        """What a name or a module's attribute means; None for an object's attribute."""
        if isinstance(expr, ast.Name):
            return self.resolve(name, expr.id)
        if isinstance(expr, ast.Attribute) and isinstance(within := self.target(name, expr.value), str):
            return self.resolve(within, expr.attr)
        return None

    def library(self, name: str, expr: ast.expr) -> str | None:
        """The library's (or the core's) name an imported name binds, as "module.name"."""
        if isinstance(expr, ast.Name) and expr.id in self.modules[name].bound:
            base, imported = self.modules[name].bound[expr.id]
            return base if imported is None else f"{base}.{imported}"
        return None

    def attribute(self, name: str) -> None:
        """`x.name` of an object whose class the syntax does not tell: every candidate."""
        if not _dunder(name):  # a special method comes with its class
            for module_name, cls in self.having.get(name, []):
                self.add((module_name, cls))
                self.add((module_name, f"{cls}.{name}"))

    def visit(self, unit: Unit) -> None:
        name, qual = unit
        m = self.modules[name]
        links = self.links.setdefault(unit, set())
        cls = qual.split(".")[0] if "." in qual else (qual if qual in m.members else None)
        if cls is not None:  # a method brings its class's header; a header its special methods
            self.add((name, cls))
            for member in filter(_dunder, m.members[cls]):
                self.add((name, f"{cls}.{member}"))
        found_nodes, values = m.nodes(qual)
        for n in found_nodes:
            if isinstance(n, (ast.Name, ast.Attribute)):
                found = self.target(name, n)
                if found is not None:
                    links.add((_text(n), found))
                elif (lib := self.library(name, n)) is not None:
                    links.add((_text(n), lib))
                if isinstance(found, str) and id(n) in values:
                    continue  # a module, whose attribute is followed
                if isinstance(found, str):
                    self.everything(found)  # a module used as a value: all of it
                elif found is not None:
                    self.add(found)
                elif isinstance(n, ast.Attribute) and not isinstance(self.target(name, n.value), str):
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

    def texts(self) -> dict[str, str]:
        """Each reached definition but the harness's, by its name (its module's too where two
        modules define that name, or a class of that name, and for a body) with its normalized
        syntax and what its names resolve to; bodies of only definitions and imports left out."""
        linked = {t for links in self.links.values() for _, t in links if isinstance(t, tuple)}
        owners: dict[str, set[str]] = {}  # a top-level name -> the modules that define it
        for m, q in self.seen | linked:
            owners.setdefault(q.split(".")[0], set()).add(m)

        def label(link: Link) -> str:
            if isinstance(link, str):
                return link
            return f"{link[0]}:{link[1]}" if len(owners[link[1].split(".")[0]]) > 1 or not link[1] else link[1]

        found = {}
        for unit in filter(lambda u: not harness(u), self.seen):
            syntax = self.modules[unit[0]].normal(unit[1])
            if unit[1] or syntax not in ("Module()", "Module(body=[])"):
                names = sorted({f"{text}={label(t)}" for text, t in self.links.get(unit, ())})
                found[label(unit)] = "\n".join([syntax, *names])
        return dict(sorted(found.items()))


def reached(experiment: Path, existing: bool = False) -> dict[str, str]:
    """The code an experiment runs on containers (or an existing server: `existing`), as `Reach.texts` gives it."""
    return walk(experiment, existing).texts()


def walk(experiment: Path, existing: bool = False) -> Reach:
    """An experiment's reach, done (`seen`: the definitions by module)."""
    roots, paths = roots_of(experiment), closure(experiment)
    names = {p: name_of(p, roots) for p in paths}
    modules = {name: module(name, p) for p, name in names.items()}
    entries = [(m, q) for m in modules for q in modules[m].entries] + [(names[experiment], "run")]
    found = Reach(modules, (lambda u: False) if existing else existing_only)
    found.run(entries)
    return found
