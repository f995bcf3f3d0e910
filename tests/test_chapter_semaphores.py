"""semaphores: every server ran every condition every round, each server's semaphores are
what its build says, strace -k output is parsed into calls, errors and the lock's asker,
and the findings can fail on crafted data (the contract's generic checks run in
test_chapters.py)."""
from conftest import chapter_result

from repro.chapters.semaphores.conditions import CONTROL, CONTROL_MAJOR, POSIX, READ, REFERENCE, SYSV, THIS, UPDATE, cond
from repro.chapters.semaphores.findings import FINDINGS
from repro.lab.semaphore_calls import parse
from repro.stats import Rounds
from repro.verdict import CONTRADICTED, NOT_APPLICABLE, REPRODUCED, Environment

FINDING = {f.id: f for f in FINDINGS}


def test_every_server_ran_every_condition_every_round() -> None:
    doc, _ = chapter_result("semaphores")
    p, rounds = doc["scale_params"], doc["raw"]["rounds"]
    expected = ({cond(w, s, c) for w in (READ, UPDATE) for s in (THIS, REFERENCE) for c in p["clients"]}
                | {cond(UPDATE, s, c) for s in CONTROL for c in p["control_clients"]})
    assert set(rounds) == expected
    for condition in expected:
        assert len(rounds[condition]) >= p["rounds"] and all(r["tps"] > 0 for r in rounds[condition]), condition


def test_each_server_runs_the_semaphores_its_build_says() -> None:
    raw = chapter_result("semaphores")[0]["raw"]
    assert raw["versions"][SYSV] == raw["versions"][POSIX]
    assert raw["versions"][SYSV].startswith(f"{CONTROL_MAJOR}.")
    assert raw["control_source"].startswith(f"postgresql-{CONTROL_MAJOR} "), raw["control_source"]
    assert raw["versions"][REFERENCE].startswith("9.6.")
    sets = {s: raw["semaphore_sets"][s]["sets"] for s in raw["versions"]}
    assert sets[SYSV] > 0 and sets[REFERENCE] > 0 and sets[POSIX] == 0 and sets[THIS] == 0
    traced = raw["semaphore_calls"]
    assert traced[SYSV]["via_semaphore"].get("semtimedop", 0) + traced[SYSV]["via_semaphore"].get("semop", 0) > 0
    assert traced[POSIX]["via_semaphore"].get("futex", 0) > 0
    assert set(raw["wait_samples"]) == {str(c) for c in chapter_result("semaphores")[0]["scale_params"]["sample_clients"]}


TRACE = """\
futex(0x7f3a2c0e5038, FUTEX_WAIT_BITSET|FUTEX_CLOCK_REALTIME, 0, NULL, FUTEX_BITSET_MATCH_ANY) = -1 EAGAIN (Resource temporarily unavailable)
 > /usr/lib/x86_64-linux-gnu/libc.so.6(__futex_abstimed_wait_common+0x7d) [0x8b12d]
 > /usr/lib/x86_64-linux-gnu/libc.so.6(__new_sem_wait_slow64.constprop.0+0x8f) [0x9a6af]
 > /usr/lib/postgresql/17/bin/postgres(PGSemaphoreLock+0x2d) [0x3d2e1d]
 > /usr/lib/postgresql/17/bin/postgres(LWLockAcquireOrWait+0x158) [0x3f4b88]
 > /usr/lib/postgresql/17/bin/postgres(XLogFlush+0x19a) [0x1ecd4a]
 > /usr/lib/postgresql/17/bin/postgres(RecordTransactionCommit+0x1d5) [0x1e1a35]
futex(0x7f3a2c0e5038, FUTEX_WAKE, 1) = 1
 > /usr/lib/x86_64-linux-gnu/libc.so.6(__new_sem_post+0x2c) [0x9a80c]
 > /usr/lib/postgresql/17/bin/postgres(PGSemaphoreUnlock+0x19) [0x3d2ec9]
 > /usr/lib/postgresql/17/bin/postgres(LWLockWakeup+0x1a2) [0x3f3e52]
 > /usr/lib/postgresql/17/bin/postgres(LWLockRelease+0x8c) [0x3f4c1c]
 > /usr/lib/postgresql/17/bin/postgres(LockAcquireExtended+0x3a1) [0x3ee2c1]
futex(0x7f3a2c0e6000, FUTEX_WAIT_PRIVATE, 2, NULL) = -1 ETIMEDOUT (Connection timed out)
 > /usr/lib/x86_64-linux-gnu/libc.so.6(__lll_lock_wait+0x30) [0x8f2b0]
semtimedop(32771, [{sem_num=3, sem_op=-1, sem_flg=0}], 1, NULL) = 0
 > /usr/lib/x86_64-linux-gnu/libc.so.6(semtimedop+0xa) [0x107d0a]
 > /opt/pg/bin/postgres(PGSemaphoreLock+0x3d) [0x2f1a7d]
 > /opt/pg/bin/postgres() [0x31c2a1]
 > /opt/pg/bin/postgres(XLogFlush+0x201) [0x1b4e71]
epoll_wait(4, [], 1, 1000) = 0
"""


def test_strace_k_output_gives_calls_errors_and_the_locks_asker() -> None:
    found = parse(TRACE)
    assert found.calls == {"futex": 3, "semtimedop": 1}
    assert found.errors == {"futex EAGAIN": 1, "futex ETIMEDOUT": 1}
    # the glibc lock's futex is not a semaphore call; an unnamed frame is skipped
    assert found.via_semaphore == {"futex": 2, "semtimedop": 1}
    assert found.lock_users == {"XLogFlush": 2, "LockAcquireExtended": 1}


def _traced(semop: int, futex: int, errors: dict[str, int] | None = None, users: dict[str, int] | None = None
            ) -> dict:
    calls = {k: v for k, v in {"semtimedop": semop, "futex": futex}.items() if v}
    return {"calls": calls, "errors": errors or {}, "via_semaphore": calls, "lock_users": users or {"XLogFlush": 10}}


def _raw(this: dict, reference: dict, sysv: dict | None = None, posix: dict | None = None,
         sets: dict[str, int] | None = None, **extra: object) -> dict:
    sets = sets or {THIS: 0, REFERENCE: 33, SYSV: 33, POSIX: 0}
    return {"rounds": {}, "engine_cpus": 2,
            "semaphore_calls": {THIS: this, REFERENCE: reference, SYSV: sysv or reference, POSIX: posix or this},
            "semaphore_sets": {k: {"sets": v, "semaphores": 17 * v} for k, v in sets.items()}, **extra}


def _judge(fid: str, raw: dict, major: int = 17, runs: int = 1) -> str:
    """The verdict over `runs` runs that measured the same (F6-F8 take one value per run: one
    run gives no interval)."""
    env = Environment(major, raw.get("engine_cpus"), frozenset(), raw)
    return FINDING[fid].judge_runs([(Rounds(raw), env)] * runs).status


def test_a_share_from_one_window_decides_nothing_alone() -> None:
    raw = _raw(_traced(0, 500, {"futex EAGAIN": 9}), _traced(900, 0))
    for fid in ("F6", "F7"):
        assert _judge(fid, raw) == "inconclusive" and _judge(fid, raw, runs=2) == REPRODUCED, fid


def test_f5_fails_when_10_still_uses_system_v() -> None:
    posix, sysv = _traced(0, 500, {"futex EAGAIN": 9}), _traced(900, 0)
    assert _judge("F5", _raw(posix, sysv)) == REPRODUCED
    assert _judge("F5", _raw(sysv, sysv, sets={THIS: 33, REFERENCE: 33, SYSV: 33, POSIX: 0})) == CONTRADICTED
    assert _judge("F5", _raw(posix, sysv), major=9.6) == NOT_APPLICABLE


def test_f6_fails_when_futex_fails_for_other_reasons_or_semop_fails() -> None:
    sysv = _traced(900, 0)
    assert _judge("F6", _raw(_traced(0, 500, {"futex EAGAIN": 9}), sysv), runs=2) == REPRODUCED
    assert _judge("F6", _raw(_traced(0, 500, {"futex EAGAIN": 5, "futex ETIMEDOUT": 5}), sysv), runs=2) == CONTRADICTED
    assert _judge("F6", _raw(_traced(0, 500, {"futex EAGAIN": 9}), _traced(900, 0, {"semtimedop EINTR": 1})), runs=2) == REPRODUCED
    assert _judge("F6", _raw(_traced(0, 500, {"futex EAGAIN": 9}), _traced(900, 0, {"semtimedop EINTR": 20})), runs=2) == CONTRADICTED


def test_f7_fails_when_the_semaphores_wait_for_other_locks() -> None:
    posix, sysv = _traced(0, 500), _traced(900, 0)
    assert _judge("F7", _raw(posix, sysv), runs=2) == REPRODUCED
    elsewhere = _traced(0, 500, users={"XLogFlush": 10, "LockAcquireExtended": 90})
    assert _judge("F7", _raw(elsewhere, sysv), runs=2) == CONTRADICTED


def test_a_trace_that_followed_no_backend_is_no_evidence() -> None:
    """strace once caught a single futex call on a server whose backends waited on WALWrite
    throughout (16, 2026-11-25): zero counts from such a trace must not contradict F5-F7,
    while a real trace with no futex still does."""
    lost, sysv = _traced(0, 1), _traced(900, 0)
    for fid in ("F5", "F6", "F7"):
        assert _judge(fid, _raw(lost, sysv)) not in (CONTRADICTED, REPRODUCED), fid
    no_semaphore = {"calls": {"futex": 40}, "errors": {}, "via_semaphore": {}, "lock_users": {}}
    assert _judge("F5", _raw(no_semaphore, sysv)) == CONTRADICTED


def test_a_trace_whose_tracer_died_is_no_evidence() -> None:
    """strace gone before the workload ended (its tracer found none to interrupt): its
    partial counts, however many, decide nothing."""
    died, sysv = {**_traced(0, 500), "tracer_died": True}, _traced(900, 0)
    for fid in ("F5", "F6", "F7"):
        assert _judge(fid, _raw(died, sysv), runs=2) not in (CONTRADICTED, REPRODUCED), fid


def test_a_run_that_measured_nothing_leaves_an_exact_checks_pool() -> None:
    """The rule registered on 2026-11-29 (semaphores F5 on 16): pooled with runs that traced
    the backends, a run whose trace followed none (or whose tracer died) neither decides nor
    blocks the exact check; the pool's count says how many runs measured it."""
    env = Environment(17, 2, frozenset(), {})
    measured = _raw(_traced(0, 500, {"futex EAGAIN": 9}), _traced(900, 0))
    lost = _raw(_traced(0, 1), _traced(900, 0))
    verdict = FINDING["F5"].judge_runs([(Rounds(lost), env), (Rounds(measured), env), (Rounds(lost), env)])
    assert verdict.status == REPRODUCED
    runs = {c.check.text().en: c.estimate.runs for c in verdict.checks}
    assert runs["this major: futex from PGSemaphoreLock/Unlock > 0"] == 1  # the run that traced
    assert runs["9.6: System V semaphore sets (ipcs -s) > 0"] == 3  # every run counted the sets
    assert FINDING["F5"].judge_runs([(Rounds(lost), env)] * 2).status not in (CONTRADICTED, REPRODUCED)


def test_f8_fails_when_walwrite_waits_do_not_grow() -> None:
    grows = {"2": {"LWLock:WALWrite": 25, "CPU": 75}, "64": {"LWLock:WALWrite": 65, "CPU": 35}}
    flat = {"2": {"LWLock:WALWrite": 25, "CPU": 75}, "64": {"LWLockNamed:WALWriteLock": 1, "LWLock:WALWrite": 26, "CPU": 74}}
    traced = _traced(0, 500), _traced(900, 0)
    assert _judge("F8", _raw(*traced, wait_samples=grows), runs=2) == REPRODUCED
    assert _judge("F8", _raw(*traced, wait_samples=flat), runs=2) == CONTRADICTED


def _rounds_raw(tps: dict[str, list[float]], **raw: object) -> dict:
    base = _raw(_traced(0, 500, {"futex EAGAIN": 9}), _traced(900, 0), **raw)
    base["rounds"] = {c: [{"round": i, "tps": v} for i, v in enumerate(values)] for c, values in tps.items()}
    return base


def test_f2_and_f1_fail_on_crafted_curves() -> None:
    base = [1000.0, 1100, 950]

    def read(this_share: float, flat: float) -> dict[str, list[float]]:
        out = {}
        for server, share in ((THIS, this_share), (REFERENCE, 1.0)):
            for c, factor in ((1, 1.0), (2, 2.0), (8, 2.0 * flat)):
                out[cond(READ, server, c)] = [v * factor * share for v in base]
        return out
    assert _judge("F2", _rounds_raw(read(0.97, 1.0))) == REPRODUCED
    assert _judge("F2", _rounds_raw(read(0.6, 1.0))) == CONTRADICTED
    assert _judge("F1", _rounds_raw(read(1.0, 0.97))) == REPRODUCED
    assert _judge("F1", _rounds_raw(read(1.0, 0.5))) == CONTRADICTED


def test_f9_fails_when_one_semaphore_api_is_much_slower() -> None:
    base = [7000.0, 7400, 6900]

    def control(share: float) -> dict[str, list[float]]:
        return {**{cond(UPDATE, SYSV, c): base for c in (2, 8)},
                **{cond(UPDATE, POSIX, c): [v * share for v in base] for c in (2, 8)}}
    assert _judge("F9", _rounds_raw(control(0.98))) == REPRODUCED
    assert _judge("F9", _rounds_raw(control(0.5))) == CONTRADICTED


def test_a_local_run_without_9_6_beside_leaves_out_what_compares_with_it() -> None:
    """On local clusters with no binaries of 9.6 the run goes on without it (local_context.beside
    records "beside_missing"): every finding that compares with 9.6 is not applicable and names
    the binaries it needs, not judged on a server that never ran; one of the major under test
    alone (F8) is judged as ever."""
    raw = {"rounds": {}, "engine_cpus": 2, "beside_missing": ["9.6"],
           "semaphore_calls": {THIS: _traced(0, 500, {"futex EAGAIN": 9})},
           "semaphore_sets": {THIS: {"sets": 0, "semaphores": 0}}}
    env = Environment(17, 2, frozenset({"procps", "strace"}), raw, local=True)
    needing = [f for f in FINDINGS if any(q.label.en == "a 9.6 server run beside it" for q in f.requires)]
    assert needing and all(f.beside == REFERENCE for f in needing)
    for finding in needing:
        verdict = finding.judge(Rounds(raw), env)
        assert verdict.status == NOT_APPLICABLE and "needs the binaries of 9.6" in verdict.reason.en, finding.id
    assert FINDING["F8"].judge(Rounds(raw), env).status != NOT_APPLICABLE
