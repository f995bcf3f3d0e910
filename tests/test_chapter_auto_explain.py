"""auto_explain: every condition measured every round; the originals' changes match the
publications; F4 and F5 on crafted rounds; a reading of pgbench -r at 0 ms is run again, then
stops the run."""
from pathlib import Path

import pytest
from conftest import chapter_result

from repro import registry
from repro.chapters.auto_explain import analysis, experiment
from repro.chapters.auto_explain.findings import FINDINGS
from repro.errors import ReproError
from repro.lab.pgbench import PgbenchResult, parse
from repro.stats import Rounds
from repro.verdict import CONTRADICTED, REPRODUCED, Environment

FINDING = {f.id: f for f in FINDINGS}
DATA = Path(__file__).parent / "data" / "pgbench"


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


class _Printed:
    """A server whose pgbench printed these reports, one per run, the last again and again
    (its SQL does nothing).
    pg15_auto_explain_limit_r.txt is what Debian's pgbench 15 printed on a cluster of its
    own, alone on this machine (2026-11-30). The _cpu_shared file is an edited copy of it:
    the query's time set to 0.000, the reading measured on 2026-11-29 with the cluster
    confined to a CPU hog's CPU (beside a hog on pgbench's CPU it read 0.002 on 2026-11-30);
    its latency average and tps left as they were."""

    def __init__(self, *names: str) -> None:
        self.reports = [(DATA / name).read_text() for name in names]
        self.runs = 0

    def sql(self, query: str, params: tuple = ()) -> list:
        return []

    def pgbench(self, args: list[str], files: dict[str, str]) -> PgbenchResult:
        self.runs += 1
        return parse(self.reports[min(self.runs, len(self.reports)) - 1])


ALONE, SHARED = "pg15_auto_explain_limit_r.txt", "pg15_auto_explain_limit_r_cpu_shared.txt"
QUERIES = {"limit": "SELECT * FROM tab1 LIMIT 1;"}


def test_a_run_that_read_0_ms_is_run_again_and_its_next_reading_kept() -> None:
    """pgbench -r's per-statement times read short when another process shares pgbench's
    CPU, down to 0 ms for the 1-row query; in a run of several scripts, a script that no
    transaction picked reads 0 too. Neither measured anything: the run is run again. A run
    with no 0 runs once, as every run did before (the bridge of scripts/migrate_keys.py)."""
    server = _Printed(*[SHARED] * (experiment.ATTEMPTS - 1), ALONE)
    assert experiment._mixed(server, QUERIES, "limit", {"limit/loaded": {}}, 200) == {
        "limit/loaded": {"latency_ms": 0.110}}
    assert server.runs == experiment.ATTEMPTS
    once = _Printed(ALONE)
    assert experiment._mixed(once, QUERIES, "limit", {"limit/loaded": {}}, 200) == {
        "limit/loaded": {"latency_ms": 0.110}}
    assert once.runs == 1


def test_a_script_that_no_transaction_picked_is_run_again() -> None:
    """What Debian's pgbench 15 printed for two of the 1-row query's scripts (2026-11-30, a
    cluster of its own): in the _unpicked file the second script had weight 0, so that no
    transaction picked it, as the random choice does for one of count's 8 scripts in about
    one round in 650; it reads 0.000. The run is run again and the next one's readings kept."""
    conditions = {"limit/loaded": {}, "limit/explain": experiment.CONDITIONS_000["explain"]}
    server = _Printed("pg15_auto_explain_limit_script_unpicked.txt", "pg15_auto_explain_limit_two_scripts.txt")
    assert experiment._mixed(server, QUERIES, "limit", conditions, 100) == {
        "limit/loaded": {"latency_ms": 0.051}, "limit/explain": {"latency_ms": 0.052}}
    assert server.runs == 2


def test_a_warm_up_runs_once_whatever_it_reads() -> None:
    """The warm-up's readings are thrown away: a 0 there is no reason to run it again."""
    server = _Printed(SHARED)
    experiment._tab1(10, QUERIES | {"count": "SELECT count(*) FROM tab1;"})(server)
    assert server.runs == 2  # the 1-row query's warm-up, then the count's


@pytest.mark.parametrize("broken", ["limit/not_loaded", "limit/preloaded"])
def test_a_reading_at_0_ms_in_every_attempt_stops_the_run_in_one_line(broken: str) -> None:
    """F1's pairs: a side that reads 0 in every attempt stops the run with one line that
    says so, not with a ZeroDivisionError or a change of -100 %."""
    assert experiment._alternate(_Printed(ALONE), _Printed(ALONE), QUERIES, 200, 2
                                 )["limit/preloaded"]["pair_changes_pct"] == [0, 0]
    shared = _Printed(SHARED)
    plain, loaded = (shared, _Printed(ALONE)) if broken == "limit/not_loaded" else (_Printed(ALONE), shared)
    with pytest.raises(ReproError) as raised:
        experiment._alternate(plain, loaded, QUERIES, 200, 2)
    assert shared.runs == experiment.ATTEMPTS
    assert "\n" not in str(raised.value)
    assert f"{broken} at 0 ms in each of {experiment.ATTEMPTS} runs" in str(raised.value)
    assert "quiet machine" in str(raised.value)
