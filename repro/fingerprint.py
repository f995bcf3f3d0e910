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
# code enters as the measure's does, by syntax tree without comments or docstrings, each
# definition the experiment reaches by its name, the harness's (repro/lab/harness/) followed
# but not hashed (repro/reach.py, imported where it is used: scripts/audit_revisions.py runs
# this file in older trees, which have no reach module).


def reached(experiment: Path, existing: bool = False) -> dict[str, str]:
    """The code an experiment runs, each definition by its name (see repro/reach.py); on the
    project's containers, or against an existing server (`existing`)."""
    from . import reach
    return reach.reached(experiment, existing)


LOCAL_LAB = ("local.py", "local_context.py", "binaries.py",  # repro/lab/: the local clusters' servers (--server local)
             "local_tracing.py", "local_files.py", "local_client.py")


def experiment(package: Path, params: dict[str, Any] | None, target: str = "container") -> str:
    """A chapter's experiment key at one scale (16 hex digits): the code its experiment
    reaches, its plain files (files/) and that scale's parameters (editing another scale
    changes nothing). The target tells which code runs: a run against an existing server
    ("dsn:...") runs the lab's code for one, a run on containers never does; a run on local
    clusters ("local:...") adds their lab's modules whole (LOCAL_LAB, normalized as reached
    code is), which no experiment imports. The image keys the cache apart (results.cache_key)."""
    digest = hashlib.sha256()
    for name, syntax in reached(package / "experiment.py", target != "container").items():
        digest.update(f"{name}\0{syntax}\0".encode())
    if target.startswith("local:"):
        from . import reach
        for name in LOCAL_LAB:
            path = package.parent.parent / "lab" / name
            if not path.exists():  # an older commit's tree (scripts/migrate_keys.py)
                continue
            found = reach.module(f"repro.lab.{name.removesuffix('.py')}", path)
            digest.update("".join(f"{name}:{q}\0{found.normal(q)}\0" for q in sorted(found.units)).encode())
    for path in sorted(p for p in (package / "files").rglob("*") if p.is_file()):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    digest.update(json.dumps(params, sort_keys=True).encode())
    return digest.hexdigest()[:16]
