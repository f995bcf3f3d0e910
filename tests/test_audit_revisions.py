"""The reconstructed record (scripts/audit_revisions.py) on the committed registers: every
entry says which runs it came after, the entries are in order, every "not expected to hold
here" is dated with what had been run by then, and the register explains the flag every
stored run judged its findings with.

The full check, that the script proposes no new entry on the current history, reads every
commit's findings (about 10 minutes the first time, cached in _build/audit_revisions/ after):
`python scripts/audit_revisions.py` must end with "0 entries and 0 'after' fields would be
added". Here, the cheaper invariants that a missing entry would break: a run's own flag that
no entry in force explains, or a finding judged by runs before its registration without a
"declared" entry.
"""
from __future__ import annotations

import importlib.util
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from repro import claims, registry

CHAPTERS = sorted(registry.chapters())
SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "audit_revisions.py"


def _audit():
    spec = importlib.util.spec_from_file_location("audit_revisions", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def audit():
    return _audit()


def _register(name: str) -> dict[str, Any]:
    return claims.load(registry.get(name))


@pytest.mark.parametrize("name", CHAPTERS)
def test_every_entry_says_which_runs_it_came_after(name: str) -> None:
    for fid, entry in _register(name).items():
        for r in entry["revisions"]:
            assert "after" in r, f"{fid} {r['date']} {r['what']}: no 'after'"
            after = r["after"]
            assert isinstance(after, str) and after.startswith("runs not stored") or \
                isinstance(after, list) and all(p.startswith(f"results/{name}/") for p in after), \
                f"{fid} {r['date']}: 'after' is neither stored runs of the chapter nor a sentence: {after!r}"


@pytest.mark.parametrize("name", CHAPTERS)
def test_every_entry_after_stored_runs_says_how_many_contradicted_the_finding(audit, name: str) -> None:
    """`contradicted` is what the runs it names had judged, by their own verdicts (read from the
    history where a file was removed since): the pages show it without reading git."""
    for fid, entry in _register(name).items():
        for r in entry["revisions"]:
            if isinstance(r["after"], list):
                assert "contradicted" in r, f"{fid} {r['date']}: after stored runs, but no 'contradicted'"
                assert r["contradicted"] == audit.contradicted(audit._named(name, r["after"]), fid), \
                    f"{fid} {r['date']}: 'contradicted' is not what its runs judged"


@pytest.mark.parametrize("name", CHAPTERS)
def test_every_finding_s_entries_are_in_date_order(name: str) -> None:
    for fid, entry in _register(name).items():
        dates = [datetime.fromisoformat(r["date"]) for r in entry["revisions"]]
        assert dates == sorted(dates), f"{fid}: revisions out of date order"


@pytest.mark.parametrize("name", CHAPTERS)
def test_every_not_expected_finding_says_when_and_after_what(name: str) -> None:
    register = _register(name)
    for f in registry.get(name).findings:
        if f.expected:
            continue
        e = claims.expectation(register, f.id, False)
        assert e.since is not None, f"{f.id}: no entry sets expected to false"
        assert e.after is not None, f"{f.id}: the entry that set expected to false names no runs"


@pytest.mark.parametrize("name", CHAPTERS)
def test_the_register_explains_the_flag_every_stored_run_judged_with(audit, name: str) -> None:
    """A run judged a finding with the expected flag the register says was in force when it
    started, or with the one an entry set by the time the run was committed (the change was
    made in the working tree before the commit that stored both). A flag changed without an
    entry shows here; so does a finding judged before any entry whose first entry does not
    carry that run's flag."""
    register = _register(name)
    for run in audit.stored_runs().get(name, []):
        committed = datetime.fromisoformat(audit.history()[run.added].date)
        for fid, verdict in run.verdicts.items():
            if fid not in register or "expected" not in verdict:
                continue
            setting = [(datetime.fromisoformat(r["date"]), r["new"]["expected"]) for r in register[fid]["revisions"]
                       if "expected" in (r.get("new") or {})]
            before = [flag for when, flag in setting if when <= run.start]
            allowed = {before[-1] if before else setting[0][1]}
            allowed |= {flag for when, flag in setting if run.start < when <= committed}
            assert verdict["expected"] in allowed, \
                f"{run.path} judged {fid} with expected={verdict['expected']}, the register allows {allowed}"


@pytest.mark.parametrize("name", CHAPTERS)
def test_a_finding_judged_before_its_registration_has_its_declaration(audit, name: str) -> None:
    """Runs that judged a finding before the register began mean it was declared before: the
    register must say when, and after what ("declared")."""
    for fid, entry in _register(name).items():
        registered = min((datetime.fromisoformat(r["date"]) for r in entry["revisions"] if r["what"] == "registered"),
                         default=None)
        earlier = [run.path for run in audit.stored_runs().get(name, [])
                   if fid in run.verdicts and registered is not None and run.start < registered]
        if earlier:
            assert any(r["what"] == "declared" for r in entry["revisions"]), \
                f"{fid}: judged by {len(earlier)} run(s) before its registration ({earlier[0]}, ...), no 'declared' entry"
