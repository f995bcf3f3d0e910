"""When a finding stopped being expected to hold here, as the pages and `repro matrix --json`
say it (repro/site/expectations.py, claims.expectation): on synthetic registers."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from docutils import nodes
from sphinx import addnodes

from repro import claims, pooling, registry
from repro.site import expectations, revisions

DECLARED = {"date": "2026-11-22T10:00+00:00", "what": "declared", "reconstructed": "abc1234",
            "old": None, "why": "first written", "why_ja": "最初に書いた"}


@pytest.fixture
def chapter(tmp_path: Path):
    """eic, whose F5 is not expected to hold here, with its register in a scratch folder."""
    return dataclasses.replace(registry.get("eic"), package=tmp_path)


def _f5(chapter):
    f = next(f for f in chapter.findings if f.id == "F5")
    assert not f.expected
    return f


def _register(chapter, *revisions_: dict) -> None:
    claims._write(claims.path(chapter), {"F5": {"expected": False, "revisions": list(revisions_)}})


def _revised(after, contradicted: int | None = None) -> dict:
    return {"date": "2026-11-25T02:42+00:00", "what": "revised", "old": {"expected": True},
            "new": {"expected": False}, "why": "after the runs", "why_ja": "実行の後", "after": after,
            **({} if contradicted is None else {"contradicted": contradicted})}


RUNS = ["results/eic/pg17-default-20261123T193916.json", "results/eic/pg17-default-20261123T194027.json"]


def _note(chapter, lang: str) -> tuple[str, addnodes.pending_xref]:
    note = expectations.expectation_note(chapter, _f5(chapter), lang)
    return note.astext(), next(iter(note.findall(addnodes.pending_xref)))


def test_a_flag_set_before_any_run_is_a_prediction(chapter) -> None:
    _register(chapter, {**DECLARED, "new": {"expected": False}, "after": []})
    text, link = _note(chapter, "en")
    assert text == " (not expected to hold here: predicted on 2026-11-22, before any run)"
    assert link["reftarget"] == "eic-f5-rev-0"
    assert _note(chapter, "ja")[0] == " (この環境では成立を期待しない: 2026-11-22 に、実行の前に予測)"
    assert expectations.mark(chapter, _f5(chapter))[0] == expectations.PREDICTED
    assert pooling.expected_since(chapter, _f5(chapter)) == {"expected_since": "2026-11-22",
                                                             "expected_before_runs": True}


def test_a_flag_set_after_runs_says_how_many_and_whether_they_contradicted_it(chapter) -> None:
    """The count of contradicting runs is the register's (`contradicted`): the pages read no
    result file and no git history for it, so a build from an archive says the same."""
    _register(chapter, {**DECLARED, "new": {"expected": True}, "after": []}, _revised(RUNS, 2))
    text, link = _note(chapter, "en")
    assert text == " (not expected to hold here: declared on 2026-11-25, after 2 runs contradicted it)"
    assert link["reftarget"] == "eic-f5-rev-1"  # the revision that set it, not the declaration
    assert "2026-11-25 に、成り立たなかった 2 回の実行の後で宣言" in _note(chapter, "ja")[0]
    assert expectations.mark(chapter, _f5(chapter))[0] == expectations.DECLARED_AFTER
    assert pooling.expected_since(chapter, _f5(chapter)) == {"expected_since": "2026-11-25",
                                                             "expected_before_runs": False}
    _register(chapter, {**DECLARED, "new": {"expected": True}, "after": []}, _revised(RUNS, 1))
    assert "after 2 runs, 1 of which contradicted it" in _note(chapter, "en")[0]
    _register(chapter, {**DECLARED, "new": {"expected": True}, "after": []}, _revised(RUNS[:1], 0))
    assert _note(chapter, "en")[0].endswith("declared on 2026-11-25, after 1 run)")
    _register(chapter, {**DECLARED, "new": {"expected": True}, "after": []}, _revised(RUNS))
    assert "the register does not say how many contradicted it" in _note(chapter, "en")[0]


def test_a_run_not_stored_that_contradicted_it_is_counted_too(chapter) -> None:
    """A CI run that contradicted the finding and was not stored (its reason names it) is on
    the note beside the stored runs, so "after N runs" never hides it."""
    _register(chapter, {**DECLARED, "new": {"expected": True}, "after": []},
              {**_revised(RUNS, 0), "unstored_contradicted": 1})
    assert ("declared on 2026-11-25, after 2 runs stored (0 of which contradicted it) and 1 run not stored "
            "that contradicted it") in _note(chapter, "en")[0]
    assert "保存されていない 1 回の実行 (いずれも成り立たず) の後で宣言" in _note(chapter, "ja")[0]


def test_runs_not_stored_are_named_by_the_commit_that_says_so(chapter) -> None:
    _register(chapter, {**DECLARED, "new": {"expected": True}, "after": []},
              _revised("runs not stored, as commit 8606d94 says"))
    assert "declared on 2026-11-25, after runs that were not stored (commit 8606d94)" in _note(chapter, "en")[0]
    ja = _note(chapter, "ja")[0]
    assert "保存されていない実行の後で宣言 (コミット 8606d94)" in ja and "runs" not in ja
    assert pooling.expected_since(chapter, _f5(chapter))["expected_before_runs"] is False


def test_a_register_that_does_not_say_when_is_not_a_prediction(chapter) -> None:
    """No `after` (a register from before it): the note does not claim a prediction."""
    _register(chapter, {**DECLARED, "new": {"expected": False}})
    assert "register does not say" in _note(chapter, "en")[0]
    assert expectations.mark(chapter, _f5(chapter))[0] == expectations.DECLARED_AFTER
    assert pooling.expected_since(chapter, _f5(chapter))["expected_before_runs"] is None


def _rows(chapter, lang: str) -> dict[str, str]:
    """The revisions table's rows by their id, as text."""
    found = revisions.revisions_block(chapter, lang)
    return {row["ids"][0]: row.astext() for node in found for row in node.findall(nodes.row) if row["ids"]}


def test_the_revisions_table_shows_the_entry_that_set_the_flag_with_the_runs_before_it(chapter) -> None:
    """A revision's row has the id the note links to and says what had been run; a first
    declaration before any run, that set no flag the finding still has, has no row."""
    _register(chapter, {**DECLARED, "new": {"expected": True}, "new_ja": {"expected": True}, "after": []},
              {**_revised(RUNS[:1], 1), "new_ja": {"expected": False}, "old_ja": {"expected": True}})
    rows = _rows(chapter, "en")
    assert list(rows) == ["eic-f5-rev-1"]
    assert "after 1 run, 1 of which contradicted it" in rows["eic-f5-rev-1"] and "expected to hold: yes → no" in rows["eic-f5-rev-1"]
    assert "1 回の実行 (うち 1 回で成り立たず) の後" in _rows(chapter, "ja")["eic-f5-rev-1"]
    _register(chapter, {**DECLARED, "new": {"expected": False}, "new_ja": {"expected": False}, "after": []})
    rows = _rows(chapter, "en")
    assert list(rows) == ["eic-f5-rev-0"] and "before any run" in rows["eic-f5-rev-0"]
    assert "declared: expected to hold: no" in rows["eic-f5-rev-0"]


def test_the_ids_of_revision_rows_are_link_targets(chapter) -> None:
    """The rows are registered as explicit targets, so that a note on another page resolves."""
    from docutils.frontend import get_default_settings
    from docutils.parsers.rst import Parser
    from docutils.utils import new_document

    _register(chapter, {**DECLARED, "new": {"expected": False}, "new_ja": {"expected": False}, "after": []})
    document = new_document("test", get_default_settings(Parser))
    found = revisions.revisions_block(chapter, "en")
    revisions.targets(found, document)
    assert document.nameids == {"eic-f5-rev-0": "eic-f5-rev-0"}


def test_repro_matrix_json_says_since_when_and_whether_before_any_run() -> None:
    """`repro matrix --json` (pooling.row) gives each finding `expected_since` (a date) and
    `expected_before_runs` (as the register says): the real register of eic."""
    chapter = registry.get("eic")
    pool = pooling.gather(chapter, 17, "default")
    rows = {r["finding"]: r for r in (pooling.row(pool, v) for v in pool.verdicts)}
    assert set(rows) == {f.id for f in chapter.findings}
    for f in chapter.findings:
        e = claims.expectation(claims.load(chapter), f.id, f.expected)
        assert rows[f.id]["expected_since"] == e.since[:10] and len(rows[f.id]["expected_since"]) == 10
        assert rows[f.id]["expected_before_runs"] is e.before_runs
    assert rows["F6"]["expected"] is False and rows["F6"]["expected_before_runs"] is False  # a yes → no revision


@pytest.mark.parametrize("old, new, said", [
    (["f1: abs(v) < NEGLIGIBLE_PCT [NEGLIGIBLE_PCT = 5.0]"],
     ["f1: abs(v) < ACROSS_SERVERS_PCT [ACROSS_SERVERS_PCT = 20.0]"], "the bound went from 5.0 to 20.0"),
    (["f5: without < with_timing / 2"], ["f5: _change(s, 'a') < _change(s, 'b') / 2"],
     "how the judged value is computed changed (the bound, 2, did not)"),
    (["f2: abs(v) < N [N = 5.0]"], ["f2: abs(_change(s, c)) < N [N = 10.0]"],
     "how the judged value is computed changed, and the bound (5.0 → 10.0)"),
    (["f7: a < T [T = 10.0]", "f7: b < T [T = 10.0]"], ["f7: c < T [T = 15.0]"],
     "the number of conditions went from 2 to 1"),
    (["f3: x < A [A = 1.0]"], ["f3: x < B [B = 1.0]"], "only how the expression is written changed"),
])
def test_a_condition_recorded_as_code_is_said_in_words(old: list[str], new: list[str], said: str) -> None:
    from repro.site.code_conditions import words
    assert words(old, new)("en").startswith(said)
    assert words(old, new)("ja") and not words(old, new)("ja").startswith(said)  # its own Japanese


def test_a_revision_row_shows_code_as_code_and_one_in_words_as_before() -> None:
    """The old and new expressions are literals under the words; a condition recorded in
    words gets no such cell (the row's text says it, as before)."""
    from repro.site.code_conditions import code_cell
    revised = {"what": "revised", "old": {"holds_if": ["f1: abs(v) < N [N = 5.0]"]},
               "new": {"holds_if": ["f1: abs(v) < N [N = 20.0]"]}}
    cell = code_cell(revised, "ja")
    assert [n.astext() for n in cell.findall(nodes.literal)] == ["f1: abs(v) < N [N = 5.0]", "f1: abs(v) < N [N = 20.0]"]
    assert cell.astext().startswith("閾値を 5.0 から 20.0 に変えました。")
    assert code_cell({"what": "revised", "old": {"holds_if": ["ratio < 0.9 ×"]},
                      "new": {"holds_if": ["ratio < 0.95 ×"]}}, "en") is None
