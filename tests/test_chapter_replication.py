"""replication at tiny scale: expected findings hold, every configuration ran with the standbys it
names (synchronous ones as "sync"), and the page's pieces build."""
import pytest
from chapter_checks import check_pieces_build, failed_expected_findings

from repro.chapters import replication


def test_expected_findings_hold(tiny_results) -> None:
    doc, _ = tiny_results["replication"]
    failed = failed_expected_findings(doc)
    assert not failed, failed


def test_every_configuration_ran_with_its_standbys(tiny_results) -> None:
    doc, _ = tiny_results["replication"]
    measured = doc["raw"]["pgbench"]
    assert set(measured) == set(replication.CONFIGS)
    for config, runs in measured.items():
        connected, synchronous = replication.CONFIGS[config]
        assert len(runs) == doc["scale_params"]["rounds"], config
        for run in runs:
            assert run["tps"] > 0
            states = sorted(s["sync_state"] for s in run["standbys"].values())
            assert states == sorted(["sync"] * synchronous + ["async"] * (connected - synchronous))


def test_synchronous_standbys_had_every_commit(tiny_results) -> None:
    doc, _ = tiny_results["replication"]
    assert doc["raw"]["exact_commit_lsn"]  # pg_walinspect is there on the default major
    for config, runs in doc["raw"]["pgbench"].items():
        for run in runs:
            for name, standby in run["standbys"].items():
                if standby["sync_state"] == "sync":
                    assert standby["flush_margin"] >= 0, (config, name, standby)
    assert set(doc["summary"]["checksums"]) == {"primary", "s1", "s2", "s3"}
    assert doc["summary"]["checksums_match"]


def test_pages_pieces_build_from_the_result(tiny_results) -> None:
    doc, _ = tiny_results["replication"]
    check_pieces_build("replication", doc)


def test_original_ratios_match_the_report() -> None:
    # the percentages printed in the report's tables 8.8-8.10
    assert [round(replication.original_ratio(c), 1) for c in
            ("sync1", "sync2", "sync3", "async1", "async2", "async3", "sync1_async2", "sync2_async1")
            ] == [50.4, 43.4, 39.8, 91.8, 84.1, 77.9, 43.7, 41.3]


def _pattern_b(*ratios: float) -> dict:
    return {"conditions": {c: {"ratio_pct": r} for c, r in zip(replication.PATTERN_B, ratios)}}


@pytest.mark.parametrize("ratios, holds, missed", [
    ((78, 44, 41, 40), True, None),  # the original's order
    ((51, 28, 24, 30.5), False, "went up from 2 sync + 1 async (24.0 %) to 3 synchronous (30.5 %)"),
    ((50, 45, 30, 28), False, "the drop 1 sync + 2 async → 2 sync + 1 async, 15.0 points"),
])
def test_f3_says_what_missed_in_this_run(ratios, holds, missed) -> None:
    outcome = replication.f3(_pattern_b(*ratios))
    assert outcome.holds is holds
    assert (outcome.reason is None) is holds
    if missed:
        assert missed in outcome.reason.en
