"""A matrix cell shows one check: its value and its size mark come from the same check of a
finding with several (repro/site/matrix.py), and a row shows the same check on every major
(pooling.row_checks), the one the finding is shown by on the site's major."""
from __future__ import annotations

import re
from types import SimpleNamespace

import pytest
from docutils import nodes

from repro import pooling, sizes
from repro.site import store
from repro.site.matrix import _matrix_cell
from repro.stats import Rounds, median
from repro.text import Text
from repro.verdict import CONTRADICTED, REPRODUCED, Above, Check, Environment, Finding, Measure, Verdict

ENV = Environment(17, 2, frozenset(), {})
SPAN = re.compile(r'<span class="([^"]+)"[^>]* title="([^"]*)">([^<]*)</span>')


def _finding(first_above: float) -> Finding:
    """Two checks, like auto_explain F6: the 1-row cost (1) and the TPC-B cost (2)."""
    def measure(key: str, label: str) -> Measure:
        return Measure(Text(label, label), lambda r: median(r.values("a", key)), "%", 1, signed=True)
    return Finding("F6", Text("x", "x"), [Check(measure("v", "1 row"), Above(first_above)),
                                          Check(measure("w", "TPC-B"), Above(10))])


def _verdict(f: Finding) -> Verdict:
    rounds = Rounds({"rounds": {"a": [{"round": i, "v": v, "w": w} for i, (v, w) in enumerate(
        zip([20.0, 21.0, 20.5, 19.5, 20.8, 20.2], [47.0, 49.5, 48.0, 48.8, 48.3, 48.1]))]}})
    return f.judge(rounds, ENV)


def _cell(v: Verdict) -> tuple[dict[str, tuple[str, str]], sizes.Size]:
    """The cell's spans (class: (title, text)) and the finding's size, from a pool of one run
    whose sizes are those of the original's +20.5 % (1 row: the same size) and +25.8 % (TPC-B:
    larger now)."""
    declared = sizes._numbers("demo F6", v.finding, ["+20.5 %", "+25.8 %"])
    pool = pooling.Pool(None, 17, "default", [], [])
    pool.__dict__.update(verdicts=[v], check_sizes={"F6": sizes.each_check(declared, v, 1)})
    shown = store.Shown(SimpleNamespace(doc={}, pool=pool, chapter=None), None)  # an expected finding: no mark
    cell = _matrix_cell(shown, "F6", "en")
    html = "".join(n.astext() for n in cell.findall(nodes.raw) if n["format"] == "html")
    return {m.group(1).split()[0]: (m.group(2), m.group(3)) for m in SPAN.finditer(html)}, pool.sizes["F6"]


@pytest.mark.parametrize("first_above, status, shown", [
    (10, REPRODUCED, 1),  # every check held: the one furthest from the original's size (TPC-B, larger)
    (30, CONTRADICTED, 0),  # the 1-row check failed: it gave the verdict, whatever TPC-B's size
])
def test_a_cells_value_and_size_mark_come_from_one_check(first_above: float, status: str, shown: int) -> None:
    v = _verdict(_finding(first_above))
    assert v.status == status and len(v.checks) == 2
    spans, size = _cell(v)
    check = v.checks[shown]
    label, value = spans["repro-key-value"]
    assert value == check.number().format('en', interval=False)
    assert label == check.check.measure.label.en
    title, mark = spans["repro-size-mark"]
    assert size.check == shown and mark == sizes.MARK[size.outcome]
    assert mark == (sizes.MARK[sizes.LARGER] if shown else sizes.MARK[sizes.SAME])
    assert title == size.text().en and f"(check {shown + 1})" in title
    assert f"ours {check.number().format('en', interval=False)} vs" in title  # the cell's own value


def _shown(v: Verdict, originals: list[str]) -> store.Shown:
    pool = pooling.Pool(None, 17, "default", [], [])
    declared = sizes._numbers("demo F6", v.finding, originals)
    pool.__dict__.update(verdicts=[v], check_sizes={"F6": sizes.each_check(declared, v, 1)})
    return store.Shown(SimpleNamespace(doc={}, pool=pool, chapter=None), None)


def test_the_pdf_cell_prints_the_symbol_the_legend_explains_and_the_size_mark() -> None:
    v = _verdict(_finding(10))
    cell = _matrix_cell(_shown(v, ["+20.5 %", "+25.8 %"]), "F6", "en")
    latex = "".join(n.astext() for n in cell.findall(nodes.raw) if n["format"] == "latex")
    assert "✓ reproduced" in latex and sizes.MARK[sizes.LARGER] in latex


def _pool(major: float, v: Verdict) -> pooling.Pool:
    pool = pooling.Pool(None, major, "default", [], [])
    declared = sizes._numbers("demo F6", v.finding, ["+20.5 %", "+25.8 %"])
    pool.__dict__.update(verdicts=[v], check_sizes={"F6": sizes.each_check(declared, v, 1)})
    return pool


def test_a_row_shows_the_check_of_the_sites_major_on_every_major() -> None:
    """Shown by its 1-row check on 17 (contradicted there) and by its TPC-B check on 11 (all
    held): the row shows the 1-row check on both, so a value read along the row is one
    quantity; on a major without a result on the site's, the newest major's check."""
    on_17, on_11 = _verdict(_finding(30)), _verdict(_finding(10))
    pools = {17: _pool(17, on_17), 11: _pool(11, on_11)}
    assert pools[11].shown_check(on_11) is on_11.checks[1]  # alone, 11 would show TPC-B
    assert pooling.row_checks(pools, 17) == {"F6": 0}
    assert pooling.row_checks({11: pools[11]}, 17) == {"F6": 1}
    cell = _matrix_cell(store.Shown(SimpleNamespace(doc={}, pool=pools[11], chapter=None), None), "F6", "en", 0)
    html = "".join(n.astext() for n in cell.findall(nodes.raw) if n["format"] == "html")
    spans = {m.group(1).split()[0]: (m.group(2), m.group(3)) for m in SPAN.finditer(html)}
    assert spans["repro-key-value"] == ("1 row", on_11.checks[0].number().format("en", interval=False))
    assert "(check 1)" in spans["repro-size-mark"][0]  # the size mark is the same check's
    check, size = pooling.row_check(pools[11], on_11, 0)  # what `repro matrix --json` reports
    assert check is on_11.checks[0] and size.check == 0
