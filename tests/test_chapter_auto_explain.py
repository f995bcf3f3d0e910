"""auto_explain at tiny scale: every expected finding must hold; the page's pieces must build."""
from chapter_checks import check_pieces_build, failed_expected_findings

from repro import registry
from repro.chapters import auto_explain


def test_expected_findings_hold(tiny_results) -> None:
    doc, _ = tiny_results["auto_explain"]
    failed = failed_expected_findings(doc)
    assert not failed, failed


def test_every_condition_measured_every_round(tiny_results) -> None:
    doc, _ = tiny_results["auto_explain"]
    rounds = {"limit": doc["scale_params"]["rounds"], "count": doc["scale_params"]["rounds"],
              "tpcb": doc["scale_params"]["tpcb_rounds"]}
    measured = doc["raw"]["pgbench"]
    assert set(measured) == set(doc["summary"]["conditions"])
    assert len(measured) == 7 + 1 + 8 + 6
    for condition, values in measured.items():
        assert len(values) == rounds[condition.split("/")[0].split("_")[0]], condition
        assert all(v["latency_ms"] > 0 for v in values)


def test_pages_pieces_build_from_the_result(tiny_results) -> None:
    doc, _ = tiny_results["auto_explain"]
    check_pieces_build("auto_explain", doc)
    assert set(registry.get("auto_explain").numbers(doc["summary"])) >= {"timing.per_loop", "timing.under_1us"}


def test_original_changes_match_the_publications() -> None:
    # spot checks against the percentages the publications state
    assert round(auto_explain.original_change("tpcb/log_all")) == 26
    assert round(auto_explain.original_change("tpcb/threshold"), 1) == 0.8
    assert round(auto_explain.original_change("tpcb/analyze_timing"), 1) == 2.2
    assert round(auto_explain.original_change("count_parallel/analyze")) == 70
    assert round(auto_explain.original_change("count_serial/analyze")) == 90
