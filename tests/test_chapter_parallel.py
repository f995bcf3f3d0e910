"""parallel: every condition ran, the data is what the generator's manifest says; the plan
summary, the CTE cut out of Q11 and the serial extrapolation; the TPC-DS cache rejects a
damaged file, and runs that want it at once generate it once; a run of one round loads SF 0.1;
F1, F3, F6 and F7 can fail, and F7 tells nothing from two cut runs (crafted runs)."""
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import chapter_result

from repro.chapters.parallel.analysis import serial_estimate
from repro.chapters.parallel.conditions import TABLES, q10, q11, year_total
from repro.chapters.parallel.experiment import cte_body, summarize_plan
from repro.chapters.parallel.findings import FINDINGS
from repro.lab import tpcds
from repro.stats import Rounds
from repro.verdict import CONTRADICTED, INCONCLUSIVE, NOT_APPLICABLE, REPRODUCED, Environment

FINDING = {f.id: f for f in FINDINGS}


def test_every_condition_ran_and_the_tables_hold_the_generated_rows() -> None:
    doc, _ = chapter_result("parallel")
    raw, params = doc["raw"], doc["scale_params"]
    names = {q10(w) for w in params["workers"]} | {year_total(w) for w in params["year_total_workers"]}
    assert set(raw["first"]) == names and set(raw["plans"]) == names
    for name, runs in raw["rounds"].items():  # repeated: those the cap did not cut
        assert not raw["first"][name]["cancelled"] and len(runs) >= params["rounds"], name
    assert set(raw["data"]["files"]) == set(TABLES) and raw["data"]["sf"] == params["sf"]
    assert all(raw["prewarmed"][t] > 0 for t in TABLES)


GATHERED_SORT = {"Execution Time": 100.0, "Plan": {
    "Node Type": "Gather Merge", "Actual Total Time": 80.0, "Workers Launched": 2, "Plans": [{
        "Node Type": "Sort", "Sort Method": "quicksort", "Sort Space Used": 10, "Sort Space Type": "Memory",
        "Workers": [{"Worker Number": 0, "Sort Method": "external merge", "Sort Space Used": 20,
                     "Sort Space Type": "Disk"}],
        "Plans": [{"Node Type": "Gather", "Actual Total Time": 70.0, "Workers Launched": 2,
                   "Plans": [{"Node Type": "Index Scan", "Filter": "(alternatives: SubPlan 1 or hashed SubPlan 2)",
                              "Actual Rows": 3, "Rows Removed by Filter": 7, "Actual Loops": 4,
                              "Plans": [{"Node Type": "Seq Scan", "Subplan Name": "SubPlan 2",
                                         "Actual Loops": 1}]}]}]}]}}


def test_a_plan_is_summarized_by_its_outermost_gathers_and_every_participants_sorts() -> None:
    s = summarize_plan(GATHERED_SORT)
    assert s["parallel_ms"] == 80.0 and s["launched"] == 2  # the nested Gather is inside the first
    assert [x["space"] for x in s["sorts"]] == ["Memory", "Disk"]
    assert s["subplans"] == {"SubPlan 2": 1}
    assert s["evaluations"] == 40  # (3 + 7) rows per loop, 4 loops


def test_the_cte_is_cut_at_the_parenthesis_that_closes_it() -> None:
    query = "with t as (\n select sum(a-b) x from s group by (c)\n )\n select * from t, t u"
    assert cte_body(query, "t") == "select sum(a-b) x from s group by (c)"
    with pytest.raises(ValueError):
        cte_body("with t as (select (1)", "t")


def _first(cancelled: bool, scans: int, time_ms: float, evaluations: int = 0) -> dict:
    return {"cancelled": cancelled, "time_ms": time_ms, "scans": {"web_sales": scans, "catalog_sales": 0},
            "evaluations": evaluations, "sorts": []}


def test_a_cut_serial_run_is_extrapolated_from_its_time_per_check() -> None:
    raw = {"rounds": {}, "first": {q10(0): _first(True, 50, 10_000), q10(2): _first(False, 1, 1_000, 5_000)}}
    assert serial_estimate(Rounds(raw)) == pytest.approx(5_000 * 10 / 50)


def _judge(fid: str, raw: dict, major: int = 13, cpus: int = 2) -> str:
    return FINDING[fid].judge(Rounds(raw), Environment(major, cpus, frozenset(), raw)).status


def _rounds(times: dict[str, list[float]]) -> dict[str, list[dict]]:
    return {c: [{"round": i, "time_ms": t, "parallel_ms": 0.0} for i, t in enumerate(v)] for c, v in times.items()}


def test_f1_fails_when_the_serial_run_scans_web_sales_once() -> None:
    """The serial time extrapolated from one cut run is one value per run: one run cannot
    decide F1, two that agree can."""
    flip = {"rounds": _rounds({q10(2): [1000.0, 1100, 900]}),
            "first": {q10(0): _first(True, 50, 10_000), q10(2): _first(False, 1, 1000, 5_000)}}
    assert _judge("F1", flip) == INCONCLUSIVE
    again = {**flip, "first": {**flip["first"], q10(0): _first(True, 52, 10_000)}}
    env = Environment(13, 2, frozenset(), flip)
    assert FINDING["F1"].judge_runs([(Rounds(flip), env), (Rounds(again), env)]).status == REPRODUCED
    hashed = {**flip, "rounds": _rounds({q10(0): [900.0, 950, 1000], q10(2): [1000.0, 1100, 900]}),
              "first": {q10(0): _first(False, 1, 900), q10(2): _first(False, 1, 1000, 5_000)}}
    assert _judge("F1", hashed) == CONTRADICTED


def test_f3_needs_three_cpus_and_fails_when_the_second_worker_halves_the_time() -> None:
    first = {q10(1): _first(False, 1, 2000), q10(2): _first(False, 1, 2000)}
    same = {"rounds": _rounds({q10(1): [2000.0, 2010, 1990, 2005], q10(2): [2000.0] * 4}), "first": first}
    assert _judge("F3", same) == NOT_APPLICABLE
    assert _judge("F3", same, cpus=4) == REPRODUCED
    halved = {"rounds": _rounds({q10(1): [2000.0, 2010, 1990, 2005], q10(2): [1000.0, 1010, 990, 1000]}),
              "first": first}
    assert _judge("F3", halved, cpus=4) == CONTRADICTED


def test_f7_is_judged_on_the_repeated_full_q11_and_needs_it() -> None:
    first = {q11(0): _first(False, 1, 900), q11(2): _first(False, 1, 1000)}
    assert _judge("F7", {"rounds": {}, "first": {}}) == NOT_APPLICABLE  # tiny and default
    slower = {"rounds": _rounds({q11(0): [900.0, 905, 895], q11(2): [1000.0, 1000, 1000]}), "first": first}
    assert _judge("F7", slower) == REPRODUCED
    faster = {"rounds": _rounds({q11(0): [2000.0, 2010, 1990], q11(2): [1000.0, 1000, 1000]}), "first": first}
    assert _judge("F7", faster) == CONTRADICTED
    cut = {"rounds": {}, "first": {q11(0): _first(True, 1, 3600), q11(2): _first(True, 1, 3600)}}
    assert _judge("F7", cut) == INCONCLUSIVE  # two caps measure nothing


def test_f6_fails_when_a_worker_sort_spills() -> None:
    def sorts(*spaces: str) -> dict:
        return {**_first(False, 1, 1000), "sorts": [{"method": "m", "kb": 1, "space": s} for s in spaces]}
    raw = {"rounds": {}, "first": {year_total(0): sorts("Disk", "Memory"), year_total(2): sorts("Memory", "Memory")}}
    assert _judge("F6", raw) == REPRODUCED
    raw["first"][year_total(2)] = sorts("Memory", "Disk")
    assert _judge("F6", raw) == CONTRADICTED


def test_the_tpcds_cache_is_regenerated_when_a_file_is_damaged(tmp_path: Path) -> None:
    directory = tmp_path / "sf1"
    directory.mkdir()
    (directory / "date_dim.csv").write_text("1|x\n")
    files = {"date_dim": {"rows": 1, "bytes": 4, "sha256": tpcds._sha256(directory / "date_dim.csv")}}
    (directory / "manifest.json").write_text(json.dumps({"sf": 1, "files": files}))
    assert tpcds._intact(directory, ["date_dim"], 1)
    (directory / "date_dim.csv").write_text("2|x\n")  # same size, other content
    assert not tpcds._intact(directory, ["date_dim"], 1)
    (directory / "manifest.json").write_text("{not json")
    assert not tpcds._intact(directory, ["date_dim"], 1)


def test_runs_that_want_the_same_scale_factor_at_once_generate_it_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two runs that take no engine lock (the tests' block runs parallel against the tests' own
    server and on local clusters side by side): one generates, the other waits and finds the
    tables intact, rather than one removing the directory the other writes in."""
    monkeypatch.setattr(tpcds, "CACHE", tmp_path)
    generated: list[float] = []
    generate = tpcds._generate

    def counted(directory: Path, tables: list[str], sf: float) -> None:
        generated.append(sf)
        generate(directory, tables, sf)
    monkeypatch.setattr(tpcds, "_generate", counted)
    with ThreadPoolExecutor(2) as pool:
        manifests = list(pool.map(lambda _: tpcds.dataset(["customer"], 0.01), range(2)))
    assert generated == [0.01]
    assert manifests[0] == manifests[1] and tpcds._intact(tmp_path / "sf0.01", ["customer"], 0.01)


def test_a_run_of_one_round_loads_a_tenth_of_the_tables() -> None:
    """parallel's check that it runs (--one-round) needs no SF 1: its tiny scale's is there for
    Q10's plan flip, which nothing of one round judges."""
    from repro import registry
    from repro.lab.runner import quick
    chapter = registry.get("parallel")
    params = quick(chapter, chapter.scales["tiny"])
    assert params["sf"] == 0.1 and params["cap_s"] < chapter.scales["tiny"]["cap_s"]
    assert params["workers"] == chapter.scales["tiny"]["workers"] and params["max_rounds"] == 1
