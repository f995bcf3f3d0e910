"""fdw: every condition ran without failed transactions, local conditions reach no external
server and foreign ones reach the right one; the plan and statement parsers; F1, F7 and F9
can fail (crafted rounds)."""
from conftest import chapter_result

from repro.chapters.fdw.analysis import client_gain, per_transaction, pushed_down
from repro.chapters.fdw.conditions import conditions, select_name
from repro.chapters.fdw.findings import FINDINGS
from repro.stats import Rounds
from repro.verdict import CONTRADICTED, REPRODUCED, Environment

FINDING = {f.id: f for f in FINDINGS}


def test_every_condition_ran_every_round_without_failures() -> None:
    doc, _ = chapter_result("fdw")
    rounds = doc["raw"]["rounds"]
    assert set(rounds) == set(conditions(17, doc["scale_params"]["clients"]))
    for condition, runs in rounds.items():
        assert len(runs) >= doc["scale_params"]["rounds"], condition
        assert all(run["tps"] > 0 and not run["failed"] for run in runs), condition


def test_local_conditions_reach_no_external_server_and_foreign_ones_the_right_one() -> None:
    doc, _ = chapter_result("fdw")
    remote = {c: {server for server, statements in v["statements"].items()
                  if per_transaction({"transactions": v["transactions"], "statements": {server: statements}})}
              for c, v in doc["raw"]["remote"].items()}
    assert remote[select_name("p1", 1)] == remote["update_local"] == remote["insert_local"] == set()
    assert remote[select_name("p2", 1)] == {"ext2"} and remote[select_name("p3", 1)] == {"ext1"}
    assert remote[select_name("p4", 1)] == {"ext1", "ext2"}
    assert remote[select_name("one_server", 1)] == {"ext2"}


P4_PLAN = ["Nested Loop", "  ->  Foreign Scan on b_remote.pgbench_accounts ac",
           "        Remote SQL: SELECT aid, abalance FROM public.pgbench_accounts WHERE ((aid = 42))",
           "  ->  Foreign Scan on a_remote.addrbook ad",
           "        Remote SQL: SELECT id, name, age FROM public.addrbook WHERE ((id = 42))"]
JOINED_PLAN = ["Foreign Scan", "  Relations: (one_server.addrbook ad) INNER JOIN (one_server.pgbench_accounts ac)",
               "  Remote SQL: SELECT r1.name FROM (public.addrbook r1 INNER JOIN public.pgbench_accounts r2 "
               "ON (((r2.aid = 42)) AND ((r1.id = 42))))"]


def test_a_join_is_pushed_down_only_as_one_foreign_scan_joining_remotely() -> None:
    assert pushed_down(JOINED_PLAN)
    assert not pushed_down(P4_PLAN)


def test_statements_are_counted_by_shape_as_before_16_every_constant_is_its_own_entry() -> None:
    declare = "DECLARE c1 CURSOR FOR SELECT aid FROM public.pgbench_accounts WHERE ((aid = {}))"
    remote = {"transactions": 2, "statements": {"ext2": {declare.format(7): 1, declare.format(42): 1,
                                                         "FETCH 100 FROM c1": 2}}}
    assert per_transaction(remote) == {f"ext2: {declare.format('?')}": 1.0, "ext2: FETCH 100 FROM c1": 1.0}


def test_statements_of_a_new_remote_session_are_left_out() -> None:
    remote = {"transactions": 200, "statements": {"ext2": {"SET timezone = 'UTC'": 1, "FETCH 100 FROM c1": 200,
                                                           "START TRANSACTION ISOLATION LEVEL REPEATABLE READ": 200}}}
    assert per_transaction(remote) == {"ext2: FETCH 100 FROM c1": 1.0,
                                       "ext2: START TRANSACTION ISOLATION LEVEL REPEATABLE READ": 1.0}


def _rounds(tps: dict[str, list[float]], **raw: object) -> Rounds:
    return Rounds({"rounds": {c: [{"round": i, "tps": v, "latency_ms": 1000 / v} for i, v in enumerate(values)]
                              for c, values in tps.items()}, **raw})


def _judge(fid: str, rounds: Rounds) -> str:
    return FINDING[fid].judge(rounds, Environment(17, 2, frozenset(), {})).status


def test_client_gain_compares_the_pattern_with_the_baseline_round_by_round() -> None:
    r = _rounds({select_name("p1", 1): [100, 200], select_name("p1", 10): [200, 400],
                 select_name("p4", 1): [10, 10], select_name("p4", 10): [60, 60]})
    assert client_gain(r, "p4", "p1", 10) == 3.0


def test_f1_holds_only_when_a_foreign_table_costs_most_of_the_throughput() -> None:
    def tps(p2_share: float) -> dict[str, list[float]]:
        p1 = [1000.0, 1100, 900, 1050, 950]
        return {select_name("p1", 1): p1, select_name("p2", 1): [v * p2_share for v in p1],
                select_name("p3", 1): [v * p2_share for v in p1]}
    assert _judge("F1", _rounds(tps(0.1))) == REPRODUCED
    assert _judge("F1", _rounds(tps(0.8))) == CONTRADICTED


def test_f7_fails_when_the_foreign_update_succeeds_or_the_local_one_fails() -> None:
    serialization = {"sqlstate": "40001", "message": "could not serialize"}
    lock_timeout = {"sqlstate": "55P03", "message": "canceling statement due to lock timeout"}
    ok = {"sqlstate": None}
    assert _judge("F7", _rounds({}, concurrent_update={"local": ok, "remote": serialization})) == REPRODUCED
    assert _judge("F7", _rounds({}, concurrent_update={"local": ok, "remote": ok})) == CONTRADICTED
    assert _judge("F7", _rounds({}, concurrent_update={"local": lock_timeout, "remote": serialization})) == CONTRADICTED


def test_f9_fails_when_the_join_stays_local() -> None:
    tps = {select_name("one_server", 1): [200.0, 210, 190], select_name("p4", 1): [100.0, 105, 95]}
    assert _judge("F9", _rounds(tps, plans={select_name("one_server", 1): JOINED_PLAN})) == REPRODUCED
    assert _judge("F9", _rounds(tps, plans={select_name("one_server", 1): P4_PLAN})) == CONTRADICTED
