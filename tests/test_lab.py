"""The lab against real containers: one server, a two-node network, cleanup on every exit path,
and nothing open to the network: ports on loopback only, a fresh password per run."""
from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from contextlib import ExitStack
from pathlib import Path

import psycopg
import pytest

from conftest import Watcher
from repro.errors import ReproError
from repro import majors
from repro.lab import engine, strace
from repro.lab.pgtools import parse_test_timing
from repro.lab.beside import lab_for, named_image
from repro.lab.existing import ExistingLab, without_password
from repro.lab.harness.connections import use_of
from repro.lab.harness.containers import leftovers
from repro.lab.lag import LagPoller
from repro.lab.provenance import redacted
from repro.lab.servers import Lab
from repro.lab.strace import traced
from repro.lab.waits import wait_until_gone

ROOT = Path(__file__).resolve().parent.parent


EARLIER: set[str] = set()  # leftovers of runs killed before this test (a reboot, SIGKILL)


def ours() -> list[str]:
    """What this test's runs left: containers and networks that were not there before it."""
    return [x for x in leftovers() if x not in EARLIER]


@pytest.fixture(autouse=True)
def nothing_left_behind():
    """Judge each test by what it adds, so that a run killed earlier on this machine (whose
    leftovers `python -m repro clean` removes) cannot fail every test after it."""
    EARLIER.clear()
    EARLIER.update(leftovers())
    yield
    assert ours() == [], "this test left containers or networks behind"


def test_single_server_settings_restart_pgbench_and_tools() -> None:
    with Lab() as lab:
        s = lab.server("one", {"shared_buffers": "64MB", "work_mem": "5242kB"})
        assert s.sql("SHOW work_mem") == [("5242kB",)]
        assert s.sql("SELECT current_setting('server_encoding'), datctype FROM pg_database "
                     "WHERE datname = current_database()") \
            == [("UTF8", "C.UTF-8")]
        assert s.sql("SELECT version()")[0][0].startswith(f"PostgreSQL {s.major}.")
        assert s.sql("SHOW jit") == [("off",)]  # fixed on every major: 9.6 and 10 have none
        s.restart({"shared_preload_libraries": "auto_explain"})
        assert s.sql("SHOW shared_preload_libraries") == [("auto_explain",)]
        assert s.sql("SHOW work_mem") == [("5242kB",)]  # command-line settings survive
        s.restart({})
        assert s.sql("SHOW shared_preload_libraries") == [("",)]
        r = s.pgbench(["-n", "-t", "50", "-f", "/tmp/one.sql", "-r"], {"one.sql": "SELECT 1;\n"},
                      options={"work_mem": "1MB"})
        assert r.transactions == 50 and r.statements[0].sql == "SELECT 1;"
        timing = parse_test_timing(s.run(["pg_test_timing", "-d", "1"]))
        assert timing["per_loop_ns"] > 0
        assert "pg_wait_sampling" in {row[0] for row in
                                      s.sql("SELECT name FROM pg_available_extensions")}
        s.set_by_reload({"application_name": "it's quoted"})  # ALTER SYSTEM with a quoted literal
        assert s.sql("SHOW application_name") == [("it's quoted",)]  # applied when set returns
        s.set_by_reload({"maintenance_work_mem": "8MB", "work_mem": "8MB"})
        assert s.sql("SHOW maintenance_work_mem") == [("8MB",)]
        assert s.sql("SHOW work_mem") == [("5242kB",)]  # the command line wins over ALTER SYSTEM
        used = use_of(s, redacted)  # what the pool's guard reads: each start's settings, each client's run
        assert [u["settings"].get("shared_preload_libraries") for u in used["starts"]] == [None, "auto_explain"]
        assert [u["starts"] for u in used["starts"]] == [2, 1]  # the third start is the first one again
        assert all(u["settings"]["work_mem"] == "5242kB" for u in used["starts"])
        assert used["reloads"] == [{"settings": {"application_name": "it's quoted"}, "reloads": 1},  # what took effect
                                   {"settings": {"maintenance_work_mem": "8MB", "work_mem": "5242kB"}, "reloads": 1}]
        assert {(c["program"], c["host"], c["session_settings"], c["runs"]) for c in used["client_runs"]} == {
            ("pgbench", "/var/run/postgresql", "-c work_mem=1MB", 1), ("pg_test_timing", "", "", 1)}


def test_two_nodes_on_a_private_network() -> None:
    with Lab() as lab:
        net = lab.network()
        alpha = lab.server("alpha", network=net, alias="alpha")
        beta = lab.server("beta", network=net, alias="beta")
        env = {"PGPASSWORD": lab.password}
        beta.run(["pgbench", "-i", "-s", "1", "-q", "-h", "alpha", "-U", "postgres", "bench"], env)
        out = beta.run(["psql", "-h", "alpha", "-U", "postgres", "-d", "bench", "-Atc",
                        "SELECT count(*) FROM pgbench_accounts"], env)
        assert out.strip() == "100000"
        assert alpha.sql("SELECT count(*) FROM pgbench_branches") == [(1,)]
        assert beta.sql("SELECT to_regclass('pgbench_branches')") == [(None,)]


def test_a_tracer_that_dies_mid_run_is_noticed() -> None:
    """strace killed inside the traced block: the trace says its tracer died (the checks it
    feeds take no value from it), where one stopped at the block's end does not."""
    with Lab(majors.DEFAULT_MAJOR) as lab:
        server = lab.server("traced", ptrace=True)
        with psycopg.connect(server.conninfo(), autocommit=True) as conn:
            pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
            with traced(server, [pid]) as whole:
                conn.execute("SELECT count(*) FROM pg_class")
            with traced(server, [pid]) as killed:
                assert server.docker.exec_run(["pkill", "-KILL", "-x", "strace"], user="root").exit_code == 0
                conn.execute("SELECT count(*) FROM pg_class")
    assert not whole.tracer_died and killed.tracer_died


def test_strace_that_cannot_attach_fails_in_one_line_and_leaves_no_tracer(monkeypatch: pytest.MonkeyPatch) -> None:
    """A server started without ptrace: the attach wait ends at its deadline with the reason,
    and the strace it started is gone."""
    monkeypatch.setattr(strace, "ATTACH_TIMEOUT_S", 0.5)  # the deadline itself is not what is tested
    with Lab(majors.DEFAULT_MAJOR) as lab:
        server = lab.server("untraced")
        with psycopg.connect(server.conninfo(), autocommit=True) as conn:
            pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
            with pytest.raises(ReproError, match=r"could not attach .* not started with ptrace=True"):
                with traced(server, [pid]):
                    pass
        assert server.docker.exec_run(["pgrep", "-x", "strace"]).exit_code == 1  # none left


def test_lag_counts_only_while_the_workloads_clients_are_connected() -> None:
    """The lab's one lag poller (replication, fulltext): no sample counts while no client of
    the workload is connected; during a pgbench run, the named standby's last and largest lag."""
    with Lab() as lab:
        net = lab.network()
        primary = lab.server("primary", network=net, alias="primary")
        primary.pgbench_init(1)
        lab.standby(primary, net, "s1")
        with LagPoller(primary, ["s1"]) as idle:
            time.sleep(0.5)
        assert idle.polls > 0 and idle.last == {} and idle.most_bytes == {}
        with LagPoller(primary, ["s1", "not-there"]) as lag:
            primary.pgbench(["-n", "-c", "2", "-T", "2"])
        assert set(lag.last) == {"s1"} and lag.most_bytes["s1"] >= lag.last["s1"][0] >= 0


def test_a_backend_that_stays_fails_the_wait_for_it_in_one_line() -> None:
    """wait_until_gone (a backend flushes its statistics as it exits) returns once the
    application's backends have gone, and fails at its deadline, naming them, while one stays:
    never a silent give-up that would read statistics with a backend's missing."""
    with Lab(majors.DEFAULT_MAJOR) as lab:
        server = lab.server("waits")
        wait_until_gone(server, timeout_s=1)  # none there
        with psycopg.connect(server.conninfo(), application_name="pgbench"):
            with pytest.raises(ReproError, match="pgbench's backends were still connected 0.5 s after"):
                wait_until_gone(server, timeout_s=0.5)
        wait_until_gone(server, timeout_s=5)  # gone once the connection closed


def test_standby_made_by_pg_basebackup_streams_from_its_primary() -> None:
    with Lab() as lab:
        net = lab.network()
        primary = lab.server("primary", network=net, alias="primary")
        primary.sql("CREATE TABLE t AS SELECT 1 AS x")
        standby = lab.standby(primary, net, "s1")
        assert standby.sql("SELECT pg_is_in_recovery(), count(*) FROM t") == [(True, 1)]
        assert primary.sql("SELECT application_name, state FROM pg_stat_replication") == [
            ("s1", "streaming")]
        assert primary.sql("SELECT slot_name, active FROM pg_replication_slots") == [("s1", True)]
        primary.sql("INSERT INTO t VALUES (2)")
        lsn = primary.sql("SELECT pg_current_wal_lsn()")[0][0]
        for _ in range(100):
            if standby.sql("SELECT pg_last_wal_replay_lsn() >= %s", (lsn,))[0][0]:
                break
            time.sleep(0.05)
        assert standby.sql("SELECT count(*) FROM t") == [(2,)]


def test_cleanup_after_an_exception() -> None:
    with pytest.raises(RuntimeError):
        with Lab() as lab:
            lab.server("one")
            lab.network()
            assert len(ours()) == 2
            raise RuntimeError("boom")


def test_servers_of_another_major_beside_go_with_the_run_also_after_an_exception() -> None:
    with pytest.raises(RuntimeError):
        with Lab() as lab, ExitStack() as stack:
            lab.server("one")
            old = lab_for(stack, 9.6).server("beside")
            assert old.sql("SHOW server_version")[0][0].startswith("9.6.")
            assert len(ours()) == 2
            raise RuntimeError("boom")


def test_a_missing_image_beside_is_a_clear_error() -> None:
    with pytest.raises(ReproError, match="no image repro-semaphores:none: run `make images`"):
        named_image("repro-semaphores:none")


def test_unreachable_dsn_is_a_clear_error() -> None:
    with ExistingLab(majors.DEFAULT_MAJOR, None) as lab:
        with pytest.raises(ReproError, match="cannot connect to the DSN"):
            lab.external("host=127.0.0.1 port=1 user=postgres dbname=postgres connect_timeout=3", "x")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupted_run_leaves_nothing(tmp_path: Path, sig: signal.Signals) -> None:
    """Start a real chapter run, interrupt it once its servers are up, then count."""
    env = {**os.environ, "REPRO_RESULTS": str(tmp_path)}
    proc = subprocess.Popen([sys.executable, "-m", "repro", "run", "auto_explain", "--scale", "tiny"],
                            cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    lines: list[str] = []
    for line in proc.stderr:  # progress lines
        lines.append(line)
        if "round 1 ·" in line or time.monotonic() > deadline:
            break
    assert len(ours()) >= 2, "the run should have its servers up by now"
    reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)
    reader.start()  # the pipe never fills while the run cleans up
    proc.send_signal(sig)
    try:
        code = proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        reader.join(5)
        pytest.fail("the run did not stop within 60 s of the signal; its last lines:\n" + "".join(lines[-15:]))
    assert code == 130, "".join(lines[-15:])
    assert not list(tmp_path.rglob("*.json"))


def _start_run(name: str, env: dict[str, str], *extra: str) -> tuple[subprocess.Popen, list[str]]:
    """A real chapter run in the background, its progress lines collected as they come."""
    proc = subprocess.Popen([sys.executable, "-m", "repro", "run", name, "--scale", "tiny", *extra],
                            cwd=ROOT, env={**env, "PYTHONUNBUFFERED": "1"}, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True).start()
    return proc, lines


def _until(lines: list[str], text: str, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not any(text in line for line in lines):
        assert time.monotonic() < deadline, f"no {text!r} in:\n" + "".join(lines[-15:])
        time.sleep(0.2)


def test_one_run_per_engine_a_second_refuses_or_waits_and_clean_spares_the_live_one(tmp_path: Path) -> None:
    env = {**os.environ, "REPRO_RESULTS": str(tmp_path)}
    pg = f"PostgreSQL {majors.name(majors.DEFAULT_MAJOR)}"
    first, first_lines = _start_run("auto_explain", env)
    try:
        _until(first_lines, "round 1 ·")
        owned = sorted(ours())
        second = subprocess.run([sys.executable, "-m", "repro", "run", "eic", "--scale", "tiny"],
                                cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
        assert second.returncode == 2 and len(second.stderr.strip().splitlines()) == 1, second.stderr
        assert f"auto_explain on {pg}" in second.stderr, second.stderr
        clean = subprocess.run([sys.executable, "-m", "repro", "clean"], cwd=ROOT, env=env,
                               capture_output=True, text=True, timeout=60)
        assert clean.returncode == 2 and "auto_explain" in clean.stderr, clean.stderr
        assert sorted(ours()) == owned, "clean removed containers of a live run"
        waiting, waiting_lines = _start_run("eic", env, "--wait")
        try:
            _until(waiting_lines, "waiting for the run or the work aside going on this Docker engine "
                                  "(the last run: auto_explain")
            assert not any(f"{pg}, scale" in x for x in waiting_lines)
            first.send_signal(signal.SIGINT)
            assert first.wait(timeout=60) == 130
            _until(waiting_lines, f"{pg}, scale tiny")  # it runs once the first has ended
        finally:
            waiting.send_signal(signal.SIGINT)
            waiting.wait(timeout=60)
    finally:
        if first.poll() is None:
            first.send_signal(signal.SIGINT)
            first.wait(timeout=60)


def test_work_aside_waits_for_a_measuring_run_and_holds_runs_off() -> None:
    """scripts/aside.sh (site and image builds, checks) holds the run lock shared: it starts
    only once a measuring run has ended, and a run started meanwhile refuses (or waits)."""
    from repro.lab.runlock import engine_lock
    aside = str(ROOT / "scripts" / "aside.sh")
    with engine_lock("a test's run"):
        work = subprocess.Popen([aside, "true"])
        time.sleep(2)
        assert work.poll() is None, "work aside started while a run measured"
    assert work.wait(timeout=30) == 0
    work = subprocess.Popen([aside, "sleep", "3"])
    try:
        time.sleep(0.5)
        with pytest.raises(ReproError, match="a run or work aside of runs is going"):
            with engine_lock("a test's run"):
                pass
    finally:
        work.wait(timeout=30)
    with engine_lock("a test's run"):  # free once the work is done
        pass


def test_signals_while_containers_are_being_created_leave_nothing(tmp_path: Path) -> None:
    """SIGTERM at random moments of a run's first seconds, when containers are being created
    (as a CI runner's timeout sends it): every container carrying the run's label goes."""
    env = {**os.environ, "REPRO_RESULTS": str(tmp_path)}
    rng = random.Random(7)
    for _ in range(5):
        proc = subprocess.Popen([sys.executable, "-m", "repro", "run", "auto_explain", "--scale",
                                 "tiny"], cwd=ROOT, env=env, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        time.sleep(rng.uniform(1.0, 4.0))
        os.killpg(proc.pid, signal.SIGTERM)
        assert proc.wait(timeout=60) in (130, -signal.SIGTERM)
        assert ours() == []


def test_ports_on_loopback_only_and_a_fresh_password() -> None:
    with Lab() as lab, Lab() as other:
        s = lab.server("one")
        s.docker.reload()
        bindings = s.docker.attrs["NetworkSettings"]["Ports"]["5432/tcp"]
        if engine.is_local():
            assert {b["HostIp"] for b in bindings} == {"127.0.0.1"}
        assert lab.password != other.password and len(lab.password) >= 24
        host, port = s.container.get_container_host_ip(), s.container.get_exposed_port(5432)
        with pytest.raises(psycopg.OperationalError):  # the fixed password of earlier versions
            psycopg.connect(f"host={host} port={port} user=postgres password=repro dbname=bench",
                            connect_timeout=5)


def test_a_setting_the_major_lacks_is_left_out_and_recorded() -> None:
    """The originals' files name settings of later majors; 9.6 starts without them and says so."""
    wanted = {"max_parallel_maintenance_workers": "2", "track_wal_io_timing": "on",
              "work_mem": "8MB", "DateStyle": "ISO, MDY", "auto_explain.log_analyze": "on"}
    with Lab(9.6) as lab:
        s = lab.server("old", wanted)
        assert s.absent == ["max_parallel_maintenance_workers", "track_wal_io_timing"]
        assert s.sql("SHOW work_mem") == [("8MB",)]
    with Lab() as lab:
        assert lab.absent(wanted) == []


def test_errors_do_not_carry_the_password() -> None:
    with Lab() as lab:
        s = lab.server("one")
        with pytest.raises(ReproError) as failed:
            s.run(["psql", "-h", "127.0.0.1", "-c", "SELECT 1/0"])
        with pytest.raises(psycopg.Error) as bad_sql:
            s.sql("SELECT no_such_column FROM pg_class")
        assert lab.password not in str(failed.value) + str(bad_sql.value)


def test_the_docker_engine_listens_on_no_tcp_port() -> None:
    """The engine the project starts answers on its Unix socket only: nothing in the kernel's
    table of listening TCP sockets belongs to Docker's ports (2375, 2376)."""
    listening = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            if state == "0A":  # LISTEN
                listening.add(int(local.rsplit(":", 1)[1], 16))
    assert not listening & {2375, 2376}


def test_no_password_shows_in_docker_or_the_process_list_and_nothing_is_privileged(
        watcher: Watcher, monkeypatch: pytest.MonkeyPatch) -> None:
    """A primary, its standby, strace on the primary, and client programs beside it given a
    DSN whose password comes from PGPASSWORD: the password shows in no `docker inspect` of
    a container or an exec, no `docker events`, no `ps`, no error message; no container or
    exec is privileged (see test_scaffold for a whole run against a DSN)."""
    output: list[str] = []
    with ExistingLab(majors.DEFAULT_MAJOR, None) as lab:  # containers, and the existing-server path
        net = lab.network()
        primary = lab.server("primary", network=net, alias="primary", ptrace=True)
        standby = lab.standby(primary, net, "s1")
        assert standby.sql("SELECT pg_is_in_recovery()") == [(True,)]
        data = primary.sql("SHOW data_directory")[0][0]
        postmaster = int(primary.run(["head", "-n", "1", f"{data}/postmaster.pid"]))
        with traced(primary, [postmaster]) as trace:
            primary.sql("SELECT 1")
        assert any("read" in line for line in trace.lines)  # strace attached and saw the backend start
        assert not trace.tracer_died
        monkeypatch.setenv("PGPASSWORD", lab.password)
        dsn = without_password(primary.conninfo())
        external = lab.external(dsn, "existing")
        external.pgbench_init(1)
        assert external.pgbench(["-n", "-T", "1"]).transactions > 0
        with pytest.raises(ReproError, match="the DSN carries a password") as refused:
            lab.external(primary.conninfo(), "refused")
        output.append(str(refused.value))
    watcher.stop()
    assert watcher.privileged == []
    leaked = [s for s in watcher.seen + output if lab.password in s]
    assert leaked == [], f"the password shows in: {leaked[0][:300]}"
