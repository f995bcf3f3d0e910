"""replication: every configuration ran with the standbys it names (synchronous ones as "sync"),
synchronous standbys had every commit; the originals' ratios; F2 and F3 on crafted rounds."""
import pytest
from conftest import chapter_result

from repro import registry
from repro.chapters.replication import experiment
from repro.chapters.replication.findings import FINDINGS, PATTERN_B
from repro.chapters.replication.page import original_ratio
from repro.chapter import Run
from repro.stats import Rounds
from repro.verdict import CONTRADICTED, REPRODUCED, Environment

FINDING = {f.id: f for f in FINDINGS}


def test_every_configuration_ran_with_its_standbys() -> None:
    doc, _ = chapter_result("replication")
    rounds = doc["raw"]["rounds"]
    assert set(rounds) == set(experiment.CONFIGS)
    for config, runs in rounds.items():
        connected, synchronous = experiment.CONFIGS[config]
        assert len(runs) >= doc["scale_params"]["rounds"], config
        for run in runs:
            assert run["tps"] > 0
            states = sorted(s["sync_state"] for s in run["standbys"].values())
            assert states == sorted(["sync"] * synchronous + ["async"] * (connected - synchronous))


def test_synchronous_standbys_had_every_commit() -> None:
    doc, _ = chapter_result("replication")
    assert doc["raw"]["exact_commit_lsn"]  # pg_walinspect is there on the default major
    for config, runs in doc["raw"]["rounds"].items():
        for run in runs:
            for name, standby in run["standbys"].items():
                if standby["sync_state"] == "sync":
                    assert standby["flush_margin"] >= 0, (config, name, standby)
    assert set(doc["raw"]["checksums"]) == {"primary", "s1", "s2", "s3"}
    assert len(set(doc["raw"]["checksums"].values())) == 1


def test_original_ratios_match_the_report() -> None:
    # the percentages printed in the report's tables 8.8-8.10
    run = Run(registry.get("replication"), {"raw": {}})
    assert [round(original_ratio(run, c), 1) for c in
            ("sync1", "sync2", "sync3", "async1", "async2", "async3", "sync1_async2", "sync2_async1")
            ] == [50.4, 43.4, 39.8, 91.8, 84.1, 77.9, 43.7, 41.3]


def _rounds(tps: dict[str, list[float]]) -> Rounds:
    return Rounds({"rounds": {c: [{"round": i, "tps": v} for i, v in enumerate(values)]
                              for c, values in tps.items()}})


def _judge(fid: str, tps: dict[str, list[float]]) -> str:
    return FINDING[fid].judge(_rounds(tps), Environment(17, 2, frozenset(), {})).status


@pytest.mark.parametrize("steps, status", [
    ((1000, 900, 800, 700), REPRODUCED),  # every standby lowers TPS, in every round
    ((1000, 900, 950, 700), CONTRADICTED),  # the second async standby raises it, in every round
])
def test_f2_needs_every_step_down(steps: tuple, status: str) -> None:
    tps = {c: [v * f for f in (1, 0.9, 1.1, 1.0, 0.95)] for c, v in
           zip(("none", "async1", "async2", "async3"), steps)}
    tps |= {c: [v * f for f in (1, 0.9, 1.1, 1.0, 0.95)] for c, v in
            zip(("sync1", "sync2", "sync3"), (500, 450, 400))}
    assert _judge("F2", tps) == status


def test_f3_needs_the_first_drop_to_be_the_largest() -> None:
    factors = (1, 0.9, 1.1, 1.0, 0.95)
    original_order = dict(zip(PATTERN_B, (780, 440, 410, 400)))
    late_big_drop = dict(zip(PATTERN_B, (780, 700, 600, 300)))
    assert _judge("F3", {c: [v * f for f in factors] for c, v in original_order.items()}) == REPRODUCED
    assert _judge("F3", {c: [v * f for f in factors] for c, v in late_big_drop.items()}) == CONTRADICTED
