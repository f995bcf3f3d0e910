"""repro-api: a class of the harness as an experiment uses it (the contributors' guide shows
`ctx`, the lab and a server), each public member with its signature and the first paragraph
of its docstring, read from the source file (the site imports no lab). A public member
without a docstring (or, for an attribute, a comment on its line) fails the build: the guide
cannot drift from the code."""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from docutils import nodes

from ..chapter import Table
from ..errors import ReproError
from ..results import ROOT
from ..text import Text
from .nodes import Directive, para, table_node


@dataclass
class Member:
    name: str  # "rounds(runs, plan=None)", "password"
    doc: str  # its docstring's first paragraph, or an attribute's comment


def _first_paragraph(doc: str | None) -> str:
    return " ".join((doc or "").strip().split("\n\n")[0].split())


def _signature(fn: ast.FunctionDef) -> str:
    args = fn.args
    names = [a.arg for a in args.args if a.arg != "self"]
    defaults = [None] * (len(names) - len(args.defaults)) + [ast.unparse(d) for d in args.defaults]
    shown = [n if d is None else f"{n}={d}" for n, d in zip(names, defaults)]
    shown += ["*" + args.vararg.arg] if args.vararg else []
    shown += [f"{a.arg}=..." for a in args.kwonlyargs] + (["**" + args.kwarg.arg] if args.kwarg else [])
    return f"{fn.name}({', '.join(shown)})"


def _comment(lines: list[str], node: ast.stmt) -> str:
    """An attribute's comment: the text after '#' on the line its assignment ends."""
    line = lines[node.end_lineno - 1]
    return line.split("#", 1)[1].strip() if "#" in line else ""


def find_class(module: str, name: str) -> tuple[ast.ClassDef, list[str]]:
    """The class `name` in the module's source file (a dotted name of this project), and the
    file's lines."""
    path = Path(ROOT, *module.split(".")).with_suffix(".py")
    source = path.read_text(encoding="utf-8")
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node, source.splitlines()
    raise ReproError(f"no class {name} in {path.relative_to(ROOT)}")


def imported_bases(module: str, name: str) -> list[tuple[str, str]]:
    """The class's base classes that the module imports from the project (`from .x import
    Base`), as (module, name)."""
    cls, lines = find_class(module, name)
    found = []
    for node in ast.parse("\n".join(lines)).body:
        if isinstance(node, ast.ImportFrom) and node.module:
            where = ".".join((module.split(".")[:-node.level] if node.level else []) + [node.module])
            found += [(where, a.name) for a in node.names if where.startswith("repro.")
                      and any(isinstance(b, ast.Name) and b.id == (a.asname or a.name) for b in cls.bases)]
    return found


def members(module: str, name: str) -> tuple[str, list[Member]]:
    """The class's docstring's first paragraph and its public members: first those of its
    base classes from other modules of the project (the harness's, repro/lab/harness/), then
    its own in source order: methods and properties (their docstrings), attributes set in
    `__init__` or annotated in the class body (their comments); less those a base class in
    the module has. Raises on a public member with nothing to show."""
    cls, lines = find_class(module, name)
    found: dict[str, Member] = {}
    for where, base in imported_bases(module, name):  # the harness's part of a class is shown with it
        found |= {m.name.split("(")[0]: m for m in members(where, base)[1]}
    for node in cls.body:
        if isinstance(node, ast.FunctionDef) and node.name == "__init__":
            for stmt in ast.walk(node):
                if isinstance(stmt, ast.Assign | ast.AnnAssign):
                    for target in stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]:
                        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                                and target.value.id == "self" and not target.attr.startswith("_"):
                            found.setdefault(target.attr, Member(target.attr, _comment(lines, stmt)))
        elif isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            prop = any(isinstance(d, ast.Name) and d.id == "property" for d in node.decorator_list)
            found[node.name] = Member(node.name if prop else _signature(node),
                                      _first_paragraph(ast.get_docstring(node)))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) \
                and not node.target.id.startswith("_"):
            found.setdefault(node.target.id, Member(node.target.id, _comment(lines, node)))
    local = {n.name for n in ast.parse("\n".join(lines)).body if isinstance(n, ast.ClassDef)}
    for base in cls.bases:  # what a base class of the same module has is shown with it
        if isinstance(base, ast.Name) and base.id in local:
            for inherited in members(module, base.id)[1]:
                found.pop(inherited.name.split("(")[0], None)
    silent = [m.name for m in found.values() if not m.doc]
    if silent:
        raise ReproError(f"{module}.{name}: public members without a docstring or comment: {', '.join(silent)}")
    return _first_paragraph(ast.get_docstring(cls)), list(found.values())


class ApiDirective(Directive):
    """```{repro-api} repro.lab.context RunContext ctx```: the class's members, each shown as
    used (`ctx.rounds(runs, plan=None)`), in a table with the class's docstring above it."""

    required_arguments = 3

    def build(self) -> list[nodes.Node]:
        module, name, shown_as = self.arguments
        for source in [module, *(where for where, _ in imported_bases(module, name))]:
            self.env.note_dependency(str(Path(ROOT, *source.split(".")).with_suffix(".py")))
        doc, found = members(module, name)
        caption = Text(f"{shown_as} ({name}, {module})", f"{shown_as} ({name}, {module})")
        english = ["repro-english"]  # the code's own words, in English on both pages (the guide says so)
        rows: list[list[nodes.Node | str]] = [[para(f"`{shown_as}.{m.name}`"), para(m.doc, english)] for m in found]
        table = Table(caption, [Text("メンバー", "Member"), Text("docstring", "Docstring")], rows)
        return [para(doc, english), *table_node(table, self.lang, widths=[2, 5])]
