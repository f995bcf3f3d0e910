"""Conditions the register recorded as code: the revisions reconstructed from the history
(scripts/audit_revisions.py) kept each condition as the Python expression of its commit
("f5: without < with_timing / 2", with its constants' values in brackets). A revision row
says in words what changed, and shows the expressions as code, never as prose."""
from __future__ import annotations

import re
from typing import Any

from docutils import nodes

from ..text import Text

CODE = re.compile(r"^(?P<fid>f\d+): (?P<expr>.*?)(?: \[(?P<consts>[^\]]*)\])?$")
NUMBER = re.compile(r"-?\d+(?:\.\d+)?")

DECLARED = Text("宣言 (成立の期待: {expected})。判定条件はその時点のコードの式です:",
                "declared (expected to hold: {expected}); its condition is the code's expression at the time:")
BOUND = Text("閾値を {old} から {new} に変えました", "the bound went from {old} to {new}")
COMPUTED = Text("判定する値の計算を変えました (閾値 {new} は同じ)", "how the judged value is computed changed (the bound, {new}, did not)")
BOTH = Text("判定する値の計算と閾値 ({old} → {new}) を変えました", "how the judged value is computed changed, and the bound ({old} → {new})")
SAME = Text("式の書き方だけを変えました (値と閾値は同じ)", "only how the expression is written changed (the value and the bound did not)")
COUNT = Text("条件の数を {old} 個から {new} 個にしました", "the number of conditions went from {old} to {new}")
HEAD = Text("判定条件 (コードの式、旧 → 新): ", "holds if (the code's expressions, old → new): ")
YES_NO = {True: Text("期待する", "yes"), False: Text("期待しない", "no")}


def _parts(line: str) -> tuple[str, str]:
    """An expression with its constants' values put in, as (shape, bound): the shape with
    every number masked, and the numbers it compares with."""
    m = CODE.match(line)
    expr = m["expr"]
    for name, value in (c.split(" = ") for c in (m["consts"] or "").split(", ") if " = " in c):
        expr = re.sub(rf"\b{re.escape(name)}\b", value, expr)
    return NUMBER.sub("#", expr), " ".join(NUMBER.findall(expr))


def words(old: list[str], new: list[str]) -> Text:
    """What changed between two lists of code conditions, in words."""
    if len(old) != len(new):
        return COUNT.format(old=len(old), new=len(new))
    said = []
    for a, b in zip(old, new):
        (shape_a, bound_a), (shape_b, bound_b) = _parts(a), _parts(b)
        if shape_a == shape_b and bound_a != bound_b:
            said.append(BOUND.format(old=bound_a, new=bound_b))
        elif shape_a != shape_b:
            said.append(COMPUTED.format(new=bound_b) if bound_a == bound_b else BOTH.format(old=bound_a, new=bound_b))
    return Text.join(said, "。", "; ") if said else SAME


def is_code(condition: dict[str, Any] | None) -> bool:
    return any(CODE.match(line) for line in (condition or {}).get("holds_if") or [])


def code_cell(r: dict[str, Any], lang: str) -> nodes.Node | None:
    """A revision row's change cell when its conditions are code: what changed, in words, then
    the old and the new expressions as code (None for a revision recorded in words)."""
    new, old = r.get("new") or {}, r.get("old")
    if not (is_code(new) or is_code(old)):
        return None
    box = nodes.container()
    if old is None:
        box += nodes.paragraph(text=DECLARED(lang).format(expected=YES_NO[new.get("expected", True)](lang)))
    else:
        box += nodes.paragraph(text=words(old.get("holds_if") or [], new.get("holds_if") or [])(lang)
                               + ("。" if lang == "ja" else "."))
    shown = [*old["holds_if"], "→", *new["holds_if"]] if old is not None else new["holds_if"]
    code = nodes.paragraph(text=HEAD(lang) if old is not None else "")
    for i, line in enumerate(shown):
        if i:
            code += nodes.Text(" " if "→" in (line, shown[i - 1]) else " / ")
        code += nodes.Text(line) if line == "→" else nodes.literal(text=line)
    box += code
    return box
