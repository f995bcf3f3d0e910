"""partitions: what is particular to this chapter (the contract's checks run for every
chapter in test_chapters.py)."""
import pytest
from conftest import chapter_result

from repro.chapters.partitions.conditions import REFERENCE, THIS
from repro.chapters.partitions.findings import FINDINGS
from repro.stats import Rounds
from repro.verdict import NOT_APPLICABLE, REPRODUCED, Environment, Verdict


def test_both_servers_measured_every_round_and_the_locks_counted() -> None:
    doc, _ = chapter_result("partitions")
    if "unavailable" in doc:
        pytest.skip("no hash partitioning before 11")
    rounds = doc["raw"]["rounds"]
    servers = {THIS} if doc["major"] == 11 else {THIS, REFERENCE}
    assert set(rounds) == servers
    assert all(len(v) >= doc["scale_params"]["rounds"] for v in rounds.values())
    locked = doc["raw"]["locked"]
    assert set(locked) == servers and all(1 <= n <= doc["scale_params"]["partitions"] for n in locked.values())


def _judged(raw: dict) -> dict[str, Verdict]:
    env = Environment(15, 2, frozenset(), raw, local=True)
    return {f.id: f.judge(Rounds(raw), env) for f in FINDINGS}


def test_a_local_run_without_11_beside_judges_f3_not_applicable_and_the_locks_still() -> None:
    """On local clusters with no binaries of 11 the run goes on with the major under test
    alone (local_context.beside records "beside_missing"): F3, which compares with 11, is not
    applicable and names the binaries it needs; F2 is judged on the locks counted. With 11
    beside, F3 is judged."""
    alone = {"rounds": {THIS: [{"round": r, "tps": 100.0 + r, "latency_ms": 1.0} for r in range(5)]},
             "locked": {THIS: 1}, "beside_missing": ["11"]}
    verdicts = _judged(alone)
    assert verdicts["F3"].status == NOT_APPLICABLE, verdicts["F3"]
    assert verdicts["F3"].reason.en == "Not applicable here: needs the binaries of 11 (make binaries MAJORS=11)."
    assert verdicts["F2"].status == REPRODUCED
    both = {"rounds": {THIS: alone["rounds"][THIS],
                       REFERENCE: [{"round": r, "tps": 50.0, "latency_ms": 2.0} for r in range(5)]},
            "locked": {THIS: 1, REFERENCE: 256}}
    assert _judged(both)["F3"].status == REPRODUCED
