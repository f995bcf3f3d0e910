"""wait_events: every mode and client count measured every round, both profiles are samples
of pgbench's backends only, event names of every major map to one; F5-F8 on crafted data."""
from conftest import chapter_result

from repro.chapters.wait_events import analysis, experiment
from repro.chapters.wait_events.findings import FINDINGS
from repro.stats import Rounds
from repro.verdict import CONTRADICTED, INCONCLUSIVE, NOT_APPLICABLE, REPRODUCED, Environment

FINDING = {f.id: f for f in FINDINGS}


def test_every_mode_and_client_count_measured_every_round() -> None:
    doc, _ = chapter_result("wait_events")
    p, rounds = doc["scale_params"], doc["raw"]["rounds"]
    assert set(rounds) == ({f"{m}/{c}" for m in experiment.MODES for c in p["clients"]}
                           | {f"control/{name}" for name in experiment.CONTROLS})
    for condition, runs in rounds.items():
        clients = 1 if condition.startswith("control/") else int(condition.split("/")[1])
        assert len(runs) >= p["rounds"], condition
        for run in runs:
            # pgbench's first connection (reading the scale) is seen too in most runs
            assert run["tps"] > 0 and clients <= run["backends"] <= clients + 1, condition
            assert sum(run["waits_sampling"].values()) > 0 and sum(run["waits_activity"].values()) > 0
            assert abs(sum(run["cpu"].values()) - 100) < 0.5
            assert run["wal_sync_ms"] is not None and run["poll_ms"] > 0  # 14+: the server's timing
            if condition.startswith("control/"):  # where the poll and the workload ran, recorded
                cpu = experiment.CONTROLS[condition.split("/")[1]]
                assert run["placement"] == {"poll_cpu": cpu, "workload_cpu": experiment.WORKLOAD_CPU,
                                            "backends_bound": run["placement"]["backends_bound"]}
                assert run["placement"]["backends_bound"] >= 1
            else:
                assert run["placement"] is None


def test_profiles_hold_no_background_process() -> None:
    # walwriter, checkpointer etc. wait on Activity:* events; pgbench's backends never do
    doc, _ = chapter_result("wait_events")
    r = Rounds(doc["raw"])
    for condition in r.conditions():
        for method in analysis.METHODS:
            shares = analysis.waiting_shares(analysis.pooled(r.records(condition), method))
            assert not [e for e in shares if e.startswith("Activity:")], condition
            assert abs(sum(shares.values()) - 100) < 0.01


def test_wal_wait_names_of_every_major_are_one_event() -> None:
    names = ["LWLock:WALWriteLock", "LWLock:WALWrite", "IO:WALSync", "IO:WalSync", "IO:WalWrite"]
    assert {analysis.canonical(n) for n in names} == set(analysis.WAL_FLUSH)
    assert analysis.canonical("Client:ClientRead") == "Client:ClientRead"


def test_wait_shares_leave_out_samples_on_cpu() -> None:
    profile = {"CPU": 50, "Client:ClientRead": 30, "IO:WALSync": 10}
    assert analysis.waiting_shares(profile) == {"Client:ClientRead": 75.0, "IO:WALSync": 25.0}
    assert analysis.all_shares(profile)["IO:WALSync"] == 100 / 9
    assert analysis.waiting_shares({"CPU": 5}) == {}


def _control(time_ms: float | None, walsync: int, other: int, rounds: int = 3,
             others_cpu: float = 5) -> list[dict]:
    """Runs whose poll saw `walsync` of `walsync + other` samples as IO:WALSync, and whose
    server measured `time_ms` in WAL fsyncs per 1-s run, while processes outside the
    server's container used `others_cpu` % of the machine's CPU."""
    return [{"round": i, "wal_sync_ms": time_ms, "waits_activity": {"IO:WalSync": walsync, "CPU": other},
             "waits_sampling": {"IO:WalSync": walsync, "CPU": other},
             "cpu": {"us": 30, "sy": 20, "id": 50, "wa": 0, "st": 0}, "cpu_container": 50 - others_cpu}
            for i in range(rounds)]


def _judge(fid: str, raw: dict, major: int = 17, features: frozenset[str] = frozenset({"pg_wait_sampling"})
           ) -> str:
    raw = {"seconds": 1, "control_seconds": 1, "sampling_counts_cpu": True, **raw}
    return FINDING[fid].judge(Rounds(raw), Environment(major, 2, features, raw)).status


def test_f6_needs_the_poll_to_miss_on_the_same_cpu_and_match_on_its_own() -> None:
    # 200 ms of each 1-s run in WAL fsyncs: 20 % of the time
    holds = {"control/same_cpu": _control(200, 5, 95), "control/own_cpu": _control(200, 20, 80)}
    blind = {"control/same_cpu": _control(200, 5, 95), "control/own_cpu": _control(200, 5, 95)}
    same = {"control/same_cpu": _control(200, 20, 80), "control/own_cpu": _control(200, 20, 80)}
    assert _judge("F6", {"rounds": holds}) == REPRODUCED
    assert _judge("F6", {"rounds": blind}) == CONTRADICTED
    assert _judge("F6", {"rounds": same}) == CONTRADICTED
    assert _judge("F6", {"rounds": holds}, major=13) == NOT_APPLICABLE  # 13 does not time WAL fsyncs
    # another process busy on the poll's "own" CPU: the comparison is not made
    taken = {"control/same_cpu": _control(200, 5, 95, others_cpu=45),
             "control/own_cpu": _control(200, 5, 95, others_cpu=45)}
    assert _judge("F6", {"rounds": taken}) == INCONCLUSIVE


def test_f7_compares_pg_wait_sampling_with_the_measured_time() -> None:
    good = {"control/same_cpu": _control(200, 20, 80), "control/own_cpu": _control(200, 21, 79)}
    off = {"control/same_cpu": _control(200, 20, 80), "control/own_cpu": _control(200, 5, 95)}
    assert _judge("F7", {"rounds": good}) == REPRODUCED
    assert _judge("F7", {"rounds": off}) == CONTRADICTED
    # pg_wait_sampling without sample_cpu (1.1.3, 1.1.4) gives no share of time
    assert _judge("F7", {"rounds": good, "sampling_counts_cpu": False}) == NOT_APPLICABLE
    # an image without pg_wait_sampling: F7 cannot run, F6 (pg_stat_activity only) still can
    assert _judge("F7", {"rounds": good}, features=frozenset()) == NOT_APPLICABLE
    assert _judge("F6", {"rounds": good}, features=frozenset()) != NOT_APPLICABLE


def _cpu(idle: float, container: float, rounds: int = 3) -> list[dict]:
    """Runs whose machine was `idle` % idle while the server's container used `container` %."""
    busy = 100 - idle
    return [{"round": i, "cpu": {"us": busy * 0.6, "sy": busy * 0.4, "id": idle, "wa": 0, "st": 0},
             "cpu_container": container} for i in range(rounds)]


def test_f8_is_not_judged_when_other_processes_took_the_idle_cpu() -> None:
    quiet = {"normal/2": _cpu(33, 63), "unlogged/2": _cpu(8, 88), "async/2": _cpu(9, 87)}
    flat = {"normal/2": _cpu(10, 86), "unlogged/2": _cpu(8, 88), "async/2": _cpu(9, 87)}
    taken = {"normal/2": _cpu(3, 50), "unlogged/2": _cpu(1, 52), "async/2": _cpu(1, 52)}
    assert _judge("F8", {"rounds": quiet, "engine_cpus": 2}) == REPRODUCED
    assert _judge("F8", {"rounds": flat, "engine_cpus": 2}) == CONTRADICTED
    raw = {"rounds": taken, "engine_cpus": 2, "seconds": 1}
    verdict = FINDING["F8"].judge(Rounds(raw), Environment(17, 2, frozenset(), raw))
    assert verdict.status == INCONCLUSIVE and "47 %" in verdict.reason.en
