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
    assert set(measured) == {f"{m}/{c}" for m in wait_events.MODES for c in p["clients"]}
    for condition, runs in measured.items():
        clients = int(condition.split("/")[1])
        assert len(runs) == p["rounds"], condition
        for run in runs:
            # pgbench's first connection (reading the scale) is seen too in most runs
            assert run["tps"] > 0 and clients <= run["backends"] <= clients + 1, condition
            assert sum(run["waits_sampling"].values()) > 0 and sum(run["waits_activity"].values()) > 0
            assert abs(sum(run["cpu"].values()) - 100) < 0.5


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
