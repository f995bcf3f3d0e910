"""wait_events at tiny scale: expected findings hold, both profiles are real samples of pgbench's
backends only, and the page's pieces build."""
from chapter_checks import check_pieces_build, failed_expected_findings

from repro import registry
from repro.chapters import wait_events


def test_expected_findings_hold(tiny_results) -> None:
    doc, _ = tiny_results["wait_events"]
    failed = failed_expected_findings(doc)
    assert not failed, failed


def test_every_mode_and_client_count_measured_every_round(tiny_results) -> None:
    doc, _ = tiny_results["wait_events"]
    p = doc["scale_params"]
    measured = doc["raw"]["pgbench"]
    assert set(measured) == ({f"{m}/{c}" for m in wait_events.MODES for c in p["clients"]}
                             | {f"control/{name}" for name in wait_events.CONTROLS})
    for condition, runs in measured.items():
        clients = 1 if condition.startswith("control/") else int(condition.split("/")[1])
        assert len(runs) == p["rounds"], condition
        for run in runs:
            # pgbench's first connection (reading the scale) is seen too in most runs
            assert run["tps"] > 0 and clients <= run["backends"] <= clients + 1, condition
            assert sum(run["waits_sampling"].values()) > 0 and sum(run["waits_activity"].values()) > 0
            assert abs(sum(run["cpu"].values()) - 100) < 0.5
            assert run["wal_sync_ms"] is not None and run["poll_ms"] > 0  # 14+: the server's timing


def test_profiles_hold_no_background_process(tiny_results) -> None:
    # walwriter, checkpointer etc. wait on Activity:* events; pgbench's backends never do
    doc, _ = tiny_results["wait_events"]
    for condition in doc["summary"]["conditions"].values():
        for method in ("shares_sampling", "shares_activity"):
            assert not [e for e in condition[method] if e.startswith("Activity:")], condition
            assert abs(sum(condition[method].values()) - 100) < 0.01


def test_pages_pieces_build_from_the_result(tiny_results) -> None:
    doc, _ = tiny_results["wait_events"]
    check_pieces_build("wait_events", doc)
    assert registry.get("wait_events").numbers(doc["summary"])["fdatasync_us"].value > 0


def test_wal_wait_names_of_every_major_are_one_event() -> None:
    names = ["LWLock:WALWriteLock", "LWLock:WALWrite", "IO:WALSync", "IO:WalSync", "IO:WalWrite"]
    assert {wait_events.canonical(n) for n in names} == set(wait_events.WAL_FLUSH)
    assert wait_events.canonical("Client:ClientRead") == "Client:ClientRead"


def _summary(counts_cpu: bool = True, **conditions: dict) -> dict:
    """A summary with only what F6 and F7 read."""
    return {"conditions": conditions, "sampling_counts_cpu": counts_cpu}


def _run(time_pct: float, walsync_activity: float, walsync_sampling: float) -> dict:
    return {"wal_sync_time_pct": time_pct, "of_all_activity": {"IO:WALSync": walsync_activity},
            "of_all_sampling": {"IO:WALSync": walsync_sampling}}


def test_f6_fails_when_the_poll_sees_the_same_on_either_cpu() -> None:
    holds = _summary(**{"control/same_cpu": _run(16, 1.5, 16), "control/own_cpu": _run(16, 17, 16)})
    same = _summary(**{"control/same_cpu": _run(16, 15, 16), "control/own_cpu": _run(16, 17, 16)})
    blind = _summary(**{"control/same_cpu": _run(16, 1.5, 16), "control/own_cpu": _run(16, 4, 16)})
    assert wait_events.f6(holds).holds is True
    assert wait_events.f6(same).holds is False
    assert wait_events.f6(blind).holds is False
    assert wait_events.f6(_summary()).holds is None  # no control runs: not applicable
    on_13 = _summary(**{"control/same_cpu": _run(None, 1.5, 16), "control/own_cpu": _run(None, 17, 16)})
    assert wait_events.f6(on_13).holds is None  # 13 does not time WAL fsyncs


def test_f7_compares_pg_wait_sampling_with_the_measured_time() -> None:
    assert wait_events.f7(_summary(**{"normal/1": _run(16, 3, 15)})).holds is True
    assert wait_events.f7(_summary(**{"normal/1": _run(16, 3, 5)})).holds is False
    assert wait_events.f7(_summary(**{"normal/1": _run(None, 3, 5)})).holds is None  # PG 13
    # pg_wait_sampling without sample_cpu (1.1.3, 1.1.4) gives no share of time
    assert wait_events.f7(_summary(False, **{"normal/1": _run(16, 3, 15)})).holds is None
