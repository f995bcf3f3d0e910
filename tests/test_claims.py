"""The register of claims (repro/claims.py): every finding's declaration is registered as it
stands, a change needs a revision entry, and the history counts only later runs."""
from __future__ import annotations

import dataclasses
import json
import re
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest

from repro import claims, fingerprint, registry, results
from repro.errors import ReproError
from repro.text import Text
from repro.verdict import Above, Check, Cite, Finding, KINDS, Measure

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = sorted(registry.chapters())


@pytest.mark.parametrize("name", CHAPTERS)
def test_every_finding_is_registered_as_declared(name: str) -> None:
    """A claim, threshold, requirement, kind or expected flag changed in findings.py without
    `python -m repro register NAME --why ...` fails here."""
    changed = claims.differences(registry.get(name))
    assert not changed, (f"{name}: findings changed without a revision entry (run `python -m repro "
                         f"register {name} --why \"...\"`): "
                         + "; ".join(f"{fid}: {', '.join(fields)}" for fid, fields in changed.items()))


DECLARED_BY_REVISIONS = ("expected", "holds_if", "requires")


def latest(entry: dict) -> dict:
    """A finding's declaration as its revisions, replayed in date order, leave it."""
    state: dict = {}
    for r in sorted(entry["revisions"], key=lambda r: r["date"]):
        state.update(r.get("new") or {})
    return state


@pytest.mark.parametrize("name", CHAPTERS)
def test_every_expected_flag_threshold_and_requirement_is_its_latest_revision(name: str) -> None:
    """The expected flag, thresholds and requirements a finding has are those its latest
    revision setting them recorded: not only the register's summary of the entry."""
    chapter = registry.get(name)
    register = claims.load(chapter)
    for f in chapter.findings:
        now, replayed = claims.declaration(f), latest(register[f.id])
        for key in DECLARED_BY_REVISIONS:
            assert replayed.get(key) == now[key], f"{name} {f.id}: {key} is {now[key]!r}, its latest revision says {replayed.get(key)!r}"


def flag_changes(entry: dict) -> list[tuple[bool | None, dict]]:
    """Each revision that set the expected flag, with the flag before it (as the revisions
    before it, or its own `old`, say; None: none yet)."""
    found, value = [], None
    for r in sorted(entry["revisions"], key=lambda r: r["date"]):
        new, before = r.get("new") or {}, value if value is not None else (r.get("old") or {}).get("expected")
        if "expected" in new and new["expected"] != before:
            found.append((before, r))
            value = new["expected"]
    return found


@pytest.mark.parametrize("name", CHAPTERS)
def test_a_revision_to_not_expected_names_the_runs_before_it(name: str) -> None:
    """Turning "expected to hold" into "not expected" is a change of mind after runs: its
    revision names them (`after`: the stored files, or a sentence naming the commit that
    reports runs not stored). Declaring a finding not expected before any run needs none."""
    for fid, entry in claims.load(registry.get(name)).items():
        for before, r in flag_changes(entry):
            if before is True and r["new"]["expected"] is False:
                assert r.get("after"), f"{name} {fid} {r['date']}: expected → not expected, naming no runs (after)"


@pytest.mark.parametrize("name", CHAPTERS)
def test_every_finding_not_expected_says_when_and_after_what(name: str) -> None:
    """The pages say of each finding not expected to hold here whether it was predicted
    before any run or declared after runs: the register must know which."""
    chapter = registry.get(name)
    for f in chapter.findings:
        e = claims.expectation(claims.load(chapter), f.id, f.expected)
        if not f.expected:
            assert e.since is not None and e.before_runs is not None, f"{name} {f.id}: {e}"


def test_a_revision_names_the_runs_stored_before_it(scratch_chapter) -> None:
    """`repro register` records in `after` the chapter's stored result files."""
    f = scratch_chapter.findings[0]
    chapter = dataclasses.replace(scratch_chapter, findings=[dataclasses.replace(f, expected=not f.expected),
                                                             *scratch_chapter.findings[1:]])
    claims.register(chapter, "a test", datetime(2030, 1, 1, tzinfo=timezone.utc), why_ja="試験")
    revision = claims.revisions(chapter, f.id)[-1]
    after = revision["after"]
    assert after == claims.runs_before(chapter, datetime(2030, 1, 1, tzinfo=timezone.utc)) and after
    assert all(p.startswith("results/auto_explain/") and p.endswith(".json") for p in after)
    statuses = [json.loads((results.ROOT / p).read_text())["verdicts"] for p in after]
    assert revision["contradicted"] == sum(v["status"] == "contradicted" for vs in statuses for v in vs
                                           if v["id"] == f.id)


def test_a_revision_to_not_expected_without_runs_fails_the_check() -> None:
    declared = {"date": "2026-11-22T00:00+00:00", "what": "declared", "new": {"expected": True}, "after": []}
    turned = {"date": "2026-11-25T00:00+00:00", "what": "revised", "new": {"expected": False}, "after": []}
    assert [(before, r["new"]["expected"]) for before, r in flag_changes({"revisions": [declared, turned]})] == \
        [(None, True), (True, False)]
    predicted = {**declared, "new": {"expected": False}}
    assert [before for before, _ in flag_changes({"revisions": [predicted]})] == [None]  # a prediction: fine


@pytest.mark.parametrize("name", CHAPTERS)
def test_every_size_is_registered_as_declared(name: str) -> None:
    """An original's size declared or changed in sizes.toml without `python -m repro register
    NAME` fails here: like a threshold, it is fixed before the runs that judge it."""
    changed = claims.size_differences(registry.get(name))
    assert not changed, f"{name}: sizes changed without registering them: {', '.join(changed)}"


@pytest.mark.parametrize("name", CHAPTERS)
def test_every_revision_says_when_and_why(name: str) -> None:
    for fid, entry in claims.load(registry.get(name)).items():
        assert entry["kind"] in KINDS, fid
        dates = [r["date"] for r in entry["revisions"]]
        assert dates == sorted(dates), f"{fid}: revisions out of order"
        for r in entry["revisions"]:
            datetime.fromisoformat(r["date"])
            assert r["why"].strip(), f"{fid}: a revision without a reason"
            assert r["what"] in ("declared", "registered", "revised", "withdrawn")
            after = r.get("after")
            assert after is None or isinstance(after, str) and after.strip() or \
                isinstance(after, list) and all(isinstance(p, str) for p in after), f"{fid}: after {after!r}"
            assert "why_ja" not in r or r["why_ja"].strip(), f"{fid}: an empty reason in Japanese"
            for side in ("old", "new"):  # the Japanese, where kept, names the same fields
                if f"{side}_ja" in r:
                    fields = {"claim" if k == "claim_ja" else k for k in r[side] or {}}
                    assert set(r[f"{side}_ja"] or {}) == fields, f"{fid}: {side}_ja names other fields than {side}"
        for key in ("holds_if", "requires"):  # the Japanese kept beside the texts, one for one
            if f"{key}_ja" in entry:
                assert len(entry[f"{key}_ja"]) == len(entry[key]), f"{fid}: {key}_ja"


@pytest.mark.parametrize("name", CHAPTERS)
def test_every_shown_revision_says_it_in_japanese(name: str) -> None:
    """The chapter pages show the revisions in the page's language: the Japanese page needs
    the reason and the change in Japanese (`register(..., why_ja=...)`)."""
    for fid, entry in claims.load(registry.get(name)).items():
        for r in entry["revisions"]:
            if r["what"] == "registered":
                continue
            assert r.get("why_ja", "").strip(), f"{fid} {r['date']}: no reason in Japanese (why_ja)"
            if r["new"] is not None:
                assert r.get("new_ja") is not None, f"{fid} {r['date']}: the change has no Japanese (new_ja)"


@pytest.mark.parametrize("name", CHAPTERS)
def test_every_original_number_says_where_in_its_source_it_is(name: str) -> None:
    """A finding that carries the original's number (`original`) names where it is (`cite`, and
    `also` for other places): a source of the chapter's original.toml, and the table, figure
    or section in both languages (the English without Japanese, which the English pages may
    not show); another source is cited, not named by its number inside the words."""
    chapter = registry.get(name)
    sources = {s["id"] for s in chapter.original["sources"]}
    for f in chapter.findings:
        if f.original is None:
            continue
        assert isinstance(f.cite, Cite), f"{name} {f.id}: the original's number without a cite"
        for cite in f.cites():
            assert cite.source in sources, f"{name} {f.id}: source {cite.source!r} is not in original.toml {sorted(sources)}"
            assert cite.where.ja.strip() and cite.where.en.strip(), f"{name} {f.id}: where, in one language, is empty"
            assert not re.search(r"[\u3040-\u30ff\u3400-\u9fff]", cite.where.en), f"{name} {f.id}: Japanese in the English"
            assert not re.search(r"(source|原典) ?\d{3}", cite.where.ja + cite.where.en), \
                f"{name} {f.id}: where names a source by its number: cite it in `also` instead"


@pytest.fixture
def scratch_chapter(tmp_path: Path):
    """A copy of a chapter whose package (and so its register) lives in a scratch folder."""
    chapter = registry.get("auto_explain")
    shutil.copy(claims.path(chapter), tmp_path / claims.FILE)
    return dataclasses.replace(chapter, package=tmp_path)


def test_a_changed_threshold_needs_a_revision(scratch_chapter) -> None:
    f = scratch_chapter.findings[2]
    moved = dataclasses.replace(f, checks=[Check(f.checks[1].measure, Above(40.0)), *f.checks[1:]])
    chapter = dataclasses.replace(scratch_chapter,
                                  findings=[moved if x is f else x for x in scratch_chapter.findings])
    assert set(claims.differences(chapter)) == {f.id}
    with pytest.raises(ReproError):
        claims.register(chapter, "")
    later = datetime(2030, 1, 1, tzinfo=timezone.utc)
    with pytest.raises(ReproError):
        claims.register(chapter, "a reason", later, why_ja=" ")
    assert claims.register(chapter, "a wider margin, chosen from the original's numbers", later,
                           why_ja="原典の数値から選んだ、より広い余裕") == [f.id]
    assert not claims.differences(chapter)
    revision = claims.revisions(chapter, f.id)[-1]
    assert revision["what"] == "revised" and revision["date"].startswith("2030-01-01")
    assert "holds_if" in revision["old"] and "holds_if" in revision["new"]
    assert revision["why_ja"] == "原典の数値から選んだ、より広い余裕"
    assert revision["new_ja"]["holds_if"] == [c.text().ja for c in moved.checks]
    assert revision["old_ja"]["holds_if"] == [c.text().ja for c in f.checks]
    assert claims.counted_since(chapter, f.id).startswith("2030-01-01")
    stored = sorted(str(path.relative_to(ROOT)) for path in (ROOT / "results" / "auto_explain").glob("pg*.json"))
    assert revision["after"] == stored and stored  # every stored run of it had been seen


def test_when_a_finding_stopped_being_expected() -> None:
    """claims.expectation: the entry that last set the expected flag to its value now, and
    whether runs had been seen by then."""
    def entry(date: str, what: str, expected: bool | None, after: object) -> dict:
        return {"date": date, "what": what, "new": {} if expected is None else {"expected": expected},
                "after": after}
    register = {"F1": {"revisions": [entry("2026-11-22T10:00+00:00", "declared", True, []),
                                     entry("2026-11-25T02:42+00:00", "registered", True, ["a.json"]),
                                     entry("2026-11-26T08:00+00:00", "revised", False, ["a.json", "b.json"]),
                                     entry("2026-11-27T08:00+00:00", "revised", None, ["c.json"])]},
                "F2": {"revisions": [entry("2026-11-22T10:00+00:00", "declared", False, [])]},
                "F3": {"revisions": [entry("2026-11-22T10:00+00:00", "declared", False,
                                           "runs not stored, as commit abc1234 says")]}}
    f1 = claims.expectation(register, "F1", False)
    assert (f1.since, f1.before_runs, f1.runs_before, f1.revision) == ("2026-11-26T08:00+00:00", False, 2, 2)
    f2 = claims.expectation(register, "F2", False)
    assert (f2.since, f2.before_runs, f2.runs_before) == ("2026-11-22T10:00+00:00", True, 0)
    f3 = claims.expectation(register, "F3", False)
    assert f3.before_runs is False and f3.runs_before is None
    unknown = claims.expectation(register, "F2", True)  # the register does not know the flag now
    assert unknown.since is None and unknown.before_runs is None


def test_a_changed_measure_needs_a_revision(scratch_chapter) -> None:
    """Changing the code that computes a finding's measure is a revision, like a threshold."""
    f = scratch_chapter.findings[0]
    m = f.checks[0].measure
    doubled = dataclasses.replace(m, statistic=lambda r: 2 * m.statistic(r))
    moved = dataclasses.replace(f, checks=[dataclasses.replace(f.checks[0], measure=doubled)])
    chapter = dataclasses.replace(scratch_chapter,
                                  findings=[moved if x is f else x for x in scratch_chapter.findings])
    assert claims.differences(chapter) == {f.id: {"measure": (fingerprint.of(f), fingerprint.of(moved))}}


def _half(r):
    return r / 2  # a comment


def _half_again(r):

    # the same computation, laid out otherwise
    return (r /
            2)


def _third(r):
    return r / 3


def _uses(helper):
    return Measure(Text("", ""), lambda r: helper(r.ratio("a", "b", "tps")))


def test_the_fingerprint_follows_the_computation_not_its_layout() -> None:
    def of(m: Measure) -> str:
        return fingerprint.of(Finding("F", Text("", ""), [Check(m, Above(0))]))
    assert of(_uses(_half)) != of(_uses(_third))  # a helper the statistic calls
    # comments and layout are not the computation (only the names differ here)
    assert fingerprint._function(_half, set()).replace("'_half'", "") == \
        fingerprint._function(_half_again, set()).replace("'_half_again'", "")
    log = Measure(Text("", ""), lambda r: r.ratio("a", "b", "tps"), "×")
    assert of(log) != of(dataclasses.replace(log, unit=""))  # averaged on another scale
    assert "Rounds.ratio=" in fingerprint.measure(log)  # the rounds' own method is followed


def test_a_pool_counts_only_runs_after_the_latest_revision(scratch_chapter) -> None:
    """A pooled verdict rests on the runs that started after the finding's latest revision;
    the others still count for the findings that were not revised."""
    from repro import pooling, results
    from repro.chapter import Run

    stored = sorted((results.ROOT / "results" / "auto_explain").glob("pg17-default-*.json"))[-1]
    doc = results.load(stored, "auto_explain")
    def at(started: str) -> Run:
        return Run(scratch_chapter, {**doc, "provenance": {**doc["provenance"], "started": started}})
    early, late = at("2030-01-01T10:00:00+00:00"), at("2031-01-01T10:00:00+00:00")
    pool = pooling.Pool(scratch_chapter, 17, "default", [late, early], [])
    f, other = scratch_chapter.findings[:2]
    register = claims.load(scratch_chapter)
    register[f.id]["revisions"].append({"date": "2030-06-01T00:00+00:00", "what": "revised",
                                        "old": {}, "new": {}, "why": "test"})
    claims._write(claims.path(scratch_chapter), register)
    assert pool.runs == [early, late] and pool.counted(f.id) == [late]
    assert pool.verdict(f.id).runs == 1 and pool.verdict(other.id).runs == 2


def test_a_finding_revised_after_every_run_is_still_not_applicable_where_it_does_not_apply(
        scratch_chapter) -> None:
    """With no run since its revision, a finding is not applicable on the majors it is not
    scoped to, as before the revision, and undecided elsewhere: also where an older run lacked
    something of the machine, which the next run's machine may have."""
    from repro import pooling, results
    from repro.chapter import Run
    from repro.requirements import majors, min_cpus
    from repro.verdict import INCONCLUSIVE, NOT_APPLICABLE

    stored = sorted((results.ROOT / "results" / "auto_explain").glob("pg17-default-*.json"))[-1]
    doc = results.load(stored, "auto_explain")
    run = Run(scratch_chapter, {**doc, "provenance": {**doc["provenance"], "started": "2030-01-01T10:00:00+00:00"}})
    f, other, big = scratch_chapter.findings[:3]
    chapter = dataclasses.replace(scratch_chapter, findings=[
        dataclasses.replace(f, requires=[majors(18)]), other, dataclasses.replace(big, requires=[min_cpus(64)]),
        *scratch_chapter.findings[3:]])
    register = claims.load(chapter)
    for fid in (f.id, other.id, big.id):
        register[fid]["revisions"].append({"date": "2030-06-01T00:00+00:00", "what": "revised",
                                           "old": {}, "new": {}, "why": "test"})
    claims._write(claims.path(chapter), register)
    pool = pooling.Pool(chapter, 17, "default", [run], [])
    assert pool.verdict(f.id).status == NOT_APPLICABLE
    for fid in (other.id, big.id):
        assert pool.verdict(fid).status == INCONCLUSIVE and "since the claim's revision" in pool.verdict(fid).reason.en


def test_a_verdict_judged_by_a_claim_revised_after_its_run_says_so(scratch_chapter) -> None:
    """The matrix and the findings table show a stored run's verdict under the claim as it
    stands; if the claim was revised after the run, the cell says so (it never counts)."""
    from repro import results
    from repro.chapter import Run
    from repro.site import matrix, store

    stored = sorted((results.ROOT / "results" / "auto_explain").glob("pg17-default-*.json"))[-1]
    doc = results.load(stored, "auto_explain")
    run = Run(scratch_chapter, {**doc, "provenance": {**doc["provenance"], "started": "2030-01-01T10:00:00+00:00"}})
    f, other = scratch_chapter.findings[:2]
    note = "The claim was revised after this run (2030-06-01)"
    assert note not in matrix._matrix_cell(store.Shown(run, None), f.id, "en").astext()
    register = claims.load(scratch_chapter)
    register[f.id]["revisions"].append({"date": "2030-06-01T00:00+00:00", "what": "revised",
                                        "old": {}, "new": {}, "why": "test"})
    claims._write(claims.path(scratch_chapter), register)
    assert store.revised_after(run, f.id) == "2030-06-01T00:00+00:00"
    assert note in matrix._matrix_cell(store.Shown(run, None), f.id, "en").astext()
    assert "この実行の後で主張を改訂 (2030-06-01)" in matrix._matrix_cell(store.Shown(run, None), f.id, "ja").astext()
    assert store.revised_after(run, other.id) is None
    assert note not in matrix._matrix_cell(store.Shown(run, None), other.id, "en").astext()

