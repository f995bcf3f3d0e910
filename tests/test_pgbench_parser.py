"""The pgbench parser on outputs captured from real pgbench runs of majors 13, 15, 17, 18."""
from pathlib import Path

import pytest

from repro.errors import ReproError
from repro.lab.pgbench import parse

DATA = Path(__file__).parent / "data" / "pgbench"


@pytest.mark.parametrize("major", [13, 15, 17, 18])
def test_tpcb_with_progress_and_statement_latencies(major: int) -> None:
    r = parse((DATA / f"pg{major}_tpcb_progress_r.txt").read_text())
    assert r.clients == 2 and r.threads == 2
    assert r.transactions > 100
    assert r.latency_avg_ms > 0 and r.latency_stddev_ms is not None
    # the summary agrees with itself: tps * latency ~ clients (2 s-ish runs, 1 ms-ish latency)
    assert 1.5 < r.tps * r.latency_avg_ms / 1000 < 2.5
    assert [round(p.elapsed_s) for p in r.progress] == [1, 2, 3]
    assert all(p.tps > 0 and p.latency_ms > 0 for p in r.progress)
    sql = [s.sql for s in r.statements]
    assert sql[4] == "BEGIN;" and sql[-1] == "END;" and len(sql) == 11
    assert sql[5].startswith("UPDATE pgbench_accounts")
    assert all(s.latency_ms >= 0 for s in r.statements)
    if major >= 15:
        assert r.failed == 0 and all(s.failures == 0 for s in r.statements)
    else:
        assert r.failed is None and all(s.failures is None for s in r.statements)


def test_13_keeps_tps_excluding_connections() -> None:
    r = parse((DATA / "pg13_custom_t.txt").read_text())
    assert r.tps == pytest.approx(7011.747359)
    assert r.transactions == 2000 and r.latency_avg_ms == pytest.approx(0.145)


def test_17_custom_script_fixed_transactions() -> None:
    r = parse((DATA / "pg17_custom_t.txt").read_text())
    assert (r.transactions, r.latency_avg_ms, r.tps) == (2000, 0.299, pytest.approx(3347.185101))
    assert r.initial_connection_ms == pytest.approx(4.112)
    assert r.progress == [] and r.statements == []


@pytest.mark.parametrize("major", [15, 17])
def test_weighted_scripts_keep_their_own_statement_latencies(major: int) -> None:
    r = parse((DATA / f"pg{major}_weighted_scripts_r.txt").read_text())
    assert list(r.scripts) == ["/tmp/two.sql", "<builtin: select only>"]
    two = r.scripts["/tmp/two.sql"]
    assert [s.sql for s in two] == ["\\set aid random(1, 100000)",
                                    "SELECT abalance FROM pgbench_accounts WHERE aid = :aid;"]
    assert r.statements == []  # the global section has no per-statement table here
    assert r.failed == 0  # the top-level line, not a script's


def test_output_without_summary_is_one_line() -> None:
    with pytest.raises(ReproError, match="no summary .*: pgbench: error: connection to server failed$"):
        parse("pgbench: error: connection to server failed\n")


def test_a_run_that_completed_no_transaction_says_so_in_one_line() -> None:
    """What Debian's pgbench 15 printed for a -T run whose only client never began a
    transaction (a rate so low that the first was due after the end: as a starved client)."""
    with pytest.raises(ReproError, match="^pgbench completed no transaction: .*quiet machine$"):
        parse((DATA / "pg15_no_transaction.txt").read_text())
