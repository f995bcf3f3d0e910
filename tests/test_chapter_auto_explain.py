"""auto_explain: every condition measured every round; the originals' changes match the
publications; F4 and F5 on crafted rounds."""
from conftest import chapter_result

from repro import registry
from repro.chapters.auto_explain import analysis
from repro.chapters.auto_explain.findings import FINDINGS
from repro.stats import Rounds
from repro.verdict import CONTRADICTED, REPRODUCED, Environment

FINDING = {f.id: f for f in FINDINGS}


def test_every_condition_measured_every_round() -> None:
    doc, _ = chapter_result("auto_explain")
    rounds = doc["raw"]["rounds"]
    assert len(rounds) == 8 + 8 + 6  # limit (2 servers + 6), count (2 x 4), TPC-B (1 + 5)
    for condition, values in rounds.items():
        assert len(values) >= doc["scale_params"]["rounds"], condition
        assert all(v["latency_ms"] > 0 for v in values)
    assert all(len(v["pair_changes_pct"]) == doc["scale_params"]["alternations"]
               for v in rounds["limit/preloaded"])


def test_original_changes_match_the_publications() -> None:
    original = registry.get("auto_explain").original
    assert round(analysis.original_change(original, "tpcb/log_all")) == 26
    assert round(analysis.original_change(original, "tpcb/threshold"), 1) == 0.8
    assert round(analysis.original_change(original, "tpcb/analyze_timing"), 1) == 2.2
    assert round(analysis.original_change(original, "count_parallel/analyze")) == 70
    assert round(analysis.original_change(original, "count_serial/analyze")) == 90


def _latencies(**conditions: float) -> Rounds:
    factors = (1, 1.05, 0.97, 1.02, 0.99)  # the machine's drift, shared by each round's conditions
    return Rounds({"rounds": {c.replace("__", "/"): [{"round": i, "latency_ms": v * f}
                                                     for i, f in enumerate(factors)]
                              for c, v in conditions.items()}})


def _judge(fid: str, r: Rounds) -> str:
    return FINDING[fid].judge(r, Environment(17, 2, frozenset(), {})).status


def test_f4_compares_serial_and_parallel_overheads() -> None:
    serial_larger = _latencies(count_serial__loaded=50, count_serial__analyze=95,
                               count_parallel__loaded=22, count_parallel__analyze=38)
    parallel_larger = _latencies(count_serial__loaded=50, count_serial__analyze=60,
                                 count_parallel__loaded=22, count_parallel__analyze=38)
    assert _judge("F4", serial_larger) == REPRODUCED
    assert _judge("F4", parallel_larger) == CONTRADICTED


def test_f5_needs_timing_off_to_remove_most_of_the_overhead() -> None:
    base = dict(count_serial__loaded=50, count_serial__analyze=95, count_parallel__loaded=22,
                count_parallel__analyze=38)
    assert _judge("F5", _latencies(**base, count_serial__analyze_no_timing=56,
                                   count_parallel__analyze_no_timing=24)) == REPRODUCED
    assert _judge("F5", _latencies(**base, count_serial__analyze_no_timing=90,
                                   count_parallel__analyze_no_timing=36)) == CONTRADICTED
