"""Clusters of this machine's own PostgreSQL binaries (`--server local`, #71): Debian's 15,
which the project's scripts install, with no Docker engine reachable (DOCKER_HOST points at
nothing). A lab's clusters listen on no TCP port, sit in a directory only their user enters,
restart with settings, stream to a standby, and leave nothing: not after the lab closes,
not after a SIGTERM, and after a SIGKILL not once `repro clean` has run.

The chapters' runs here judge nothing of this machine: they show that each chapter runs and
judges where a container would. auto_explain runs alone; the others go in the session's
block of runs side by side (tests/unjudged.py)."""
from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg
import pytest

from repro.lab import local_cleanup, runner
from repro.lab.local import LocalLab
from repro.lab.local_tracing import CONTAINER_DATA
from repro.lab.runlock import engine_lock
from repro.lab.semaphore_calls import semaphore_sets
from repro.lab.strace import parse, traced
from repro.lab.waits import container_share, cpu_times
from repro.results import ROOT
from unjudged import ALONE, LOCAL, LOCAL_RUNS, NO_ENGINE, Block, Done, debian_major, local_run

MAJOR = debian_major()


@pytest.fixture
def no_engine(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("DOCKER_HOST", NO_ENGINE)
    yield


def _listeners() -> set[str]:
    """The local addresses and ports that listen on TCP."""
    out = subprocess.run(["ss", "-Hltn"], capture_output=True, text=True, check=True).stdout
    return {line.split()[3] for line in out.splitlines() if line.strip()}


def _postmasters(directory: Path) -> list[str]:
    """Processes whose command line names the directory."""
    out = subprocess.run(["ps", "-eww", "-o", "pid,args"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if str(directory) in line and "ps -eww" not in line]


def test_a_local_lab_restarts_streams_and_leaves_nothing(no_engine: None) -> None:
    before = _listeners()
    with LocalLab(MAJOR) as lab:
        directory = lab.directory
        with ThreadPoolExecutor(2) as pool:  # as RunContext.servers starts them; a chapter's
            # listen_addresses (parallel's postgresql.conf has '*') opens no TCP port
            primary, other = pool.map(lambda item: lab.server(*item), [
                ("primary", {"work_mem": "5MB", "wal_level": "replica"}, None, "primary"),
                ("other", {"listen_addresses": "*"}, None, "other")])
        assert primary.port != other.port and other.sql("SHOW listen_addresses") == [("",)]
        assert oct(os.stat(lab.sockets).st_mode & 0o777) == "0o700"
        if os.geteuid() == 0:  # the clusters' user passes through the lab's directory, writes nothing there
            assert os.stat(lab.directory).st_uid == 0 and oct(os.stat(lab.directory).st_mode & 0o777) == "0o710"
        assert primary.sql("SHOW work_mem") == [("5MB",)]
        assert primary.sql("SHOW listen_addresses") == [("",)]
        primary.pgbench_init(1)
        result = primary.pgbench(["-n", "-c", "2", "-T", "1", "-f", "/tmp/one.pgbench"],
                                 {"one.pgbench": "SELECT 1;\n"}, {"work_mem": "6MB"})
        assert result.tps > 0
        primary.restart({"work_mem": "7MB"})
        assert primary.sql("SHOW work_mem") == [("5MB",)]  # the command line wins, as in a container
        primary.restart({"random_page_cost": "1.5"})
        assert primary.sql("SHOW random_page_cost") == [("1.5",)] and len(primary.starts) == 3
        standby = lab.standby(primary, lab.network(), "s1")
        assert standby.sql("SELECT pg_is_in_recovery()") == [(True,)]
        primary.pin(0, pids=[primary.process.pid])
        assert os.sched_getaffinity(primary.process.pid) == {0}
        cpu = len(os.sched_getaffinity(0)) - 1  # the last this run may use: not the default
        other.confine(cpu)  # the whole cluster: its processes, a backend started later, a restart
        for restarted in (False, True):
            with psycopg.connect(other.conninfo()) as conn:
                pids = [other.process.pid, conn.info.backend_pid, *other._children()]
                assert {frozenset(os.sched_getaffinity(p)) for p in pids} == {frozenset({other.cpu})}, restarted
            assert other.placement() == {"cpus": str(other.cpu)}
            # its client programs too, as in a container beside its server
            assert f"Cpus_allowed_list:\t{other.cpu}\n" in other.run(["cat", "/proc/self/status"])
            if not restarted:
                other.restart(None)
        other.sql("CREATE EXTENSION dblink")  # a peer reaches the primary, as a subscription would
        assert other.sql("SELECT x FROM dblink(%s, 'SELECT 42') AS t(x int)", (primary.peer_conninfo(),)) == [(42,)]
        assert _listeners() <= before, "a cluster listens on TCP"
        assert _postmasters(directory)
    assert not directory.exists() and not _postmasters(directory)


def _tracers(directory: Path) -> list[str]:
    """strace processes whose command line names the directory (their output file is in it)."""
    return [line for line in _postmasters(directory) if "strace" in line]


@pytest.mark.skipif(os.geteuid() != 0, reason="strace beside a cluster of another user needs root")
def test_strace_beside_a_local_cluster_names_its_files_as_a_container_and_leaves_nothing(no_engine: None) -> None:
    """A backend traced on a local cluster: the trace sees its reads of a table's file, named
    as in a container (the lab's directory appears nowhere); a tracer killed inside the block
    is noticed; the tracer's files are gone after each block and no strace stays."""
    with LocalLab(MAJOR) as lab:
        server = lab.server("traced", ptrace=True)
        server.sql("CREATE TABLE t AS SELECT generate_series(1, 1000) AS i")
        path = server.sql("SELECT pg_relation_filepath('t')")[0][0]
        server.restart(None)  # shared_buffers empty: the scan reads the file
        with psycopg.connect(server.conninfo(), autocommit=True) as conn:
            pid = conn.info.backend_pid
            with traced(server, [pid]) as whole:
                assert _tracers(lab.directory)
                conn.execute("SELECT count(*) FROM t")
            assert not _tracers(lab.directory)
            with traced(server, [pid]) as killed:
                [tracer] = [int(line.split()[0]) for line in _tracers(lab.directory)]
                os.kill(tracer, signal.SIGKILL)
                conn.execute("SELECT count(*) FROM t")
        assert not whole.tracer_died and killed.tracer_died
        calls = parse("\n".join(whole.lines), [f"{CONTAINER_DATA}/{path}"])
        assert calls.reads, whole.lines[:20]
        assert str(lab.directory) not in "\n".join(whole.lines + killed.lines)
        tracers = list(lab.directory.glob("repro-strace-*"))
        assert len(tracers) == 2 and all(p.owner() == "root" for p in tracers)  # one per block, root's
        assert not [f for d in tracers for f in d.iterdir()], "a tracer's files stayed"
        assert not _tracers(lab.directory)


def test_the_runs_own_cpu_is_its_clusters_and_its_client_programs(no_engine: None) -> None:
    """What wait_events reads as a container's cgroup counter: on a local cluster, the CPU its
    processes used, those that have ended (pgbench's backends) too, and the run's pgbench."""
    with LocalLab(MAJOR) as lab:
        server = lab.server("counted")
        server.pgbench_init(1)
        before, run_before = cpu_times(server), resource.getrusage(resource.RUSAGE_CHILDREN)
        server.pgbench(["-n", "-S", "-c", "2", "-j", "2", "-T", "2"])  # CPU-bound: no commit waits
        after, run_after = cpu_times(server), resource.getrusage(resource.RUSAGE_CHILDREN)
    used = after.container_s - before.container_s
    clients = (run_after.ru_utime + run_after.ru_stime) - (run_before.ru_utime + run_before.ru_stime)
    assert 0 < container_share(before, after) <= 100 and clients > 0.1, (used, clients)
    assert used - clients > 0.5, (used, clients)  # the backends', which have ended by now


def test_a_local_clusters_semaphore_sets_are_its_own_among_this_machines(no_engine: None) -> None:
    """ipcs here lists every process's System V semaphore sets: a cluster of 9.6 counts its own
    (their marker's pid is its postmaster's), one of the machine's 15 (unnamed POSIX semaphores)
    none, though both labs number their clusters' ports alike, beside a set of another process
    (ipcmk) that the listing holds too."""
    made = subprocess.run(["ipcmk", "-S", "3", "-p", "0600"], capture_output=True, text=True, check=True)
    other = made.stdout.split()[-1]  # "Semaphore id: 12"
    try:
        with LocalLab(MAJOR) as lab, LocalLab(9.6, client=lab.client) as old:
            with ThreadPoolExecutor(2) as pool:
                current, reference = pool.map(lambda pair: pair[0].server(pair[1]), [(lab, "15"), (old, "9.6")])
            assert semaphore_sets(current) == {"sets": 0, "semaphores": 0}
            found = semaphore_sets(reference)
            listed = subprocess.run(["ipcs", "-s"], capture_output=True, text=True, check=True).stdout
            assert found["sets"] > 0 and found["semaphores"] == 17 * found["sets"]  # 16 and a marker each
            assert len([line for line in listed.splitlines() if line.startswith("0x")]) > found["sets"]
    finally:
        subprocess.run(["ipcrm", "-s", other], check=True)


def _run(results: Path, *args: str) -> subprocess.Popen:
    """`python -m repro ARGS` with no engine reachable, its results in `results`."""
    env = {**os.environ, "DOCKER_HOST": NO_ENGINE, "REPRO_RESULTS": str(results)}
    return subprocess.Popen([sys.executable, "-m", "repro", *args], cwd=ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _labs() -> set[Path]:
    return set(Path(os.environ.get("TMPDIR", "/tmp")).glob(f"{local_cleanup.PREFIX}*"))


def _once_a_cluster_runs(before: set[Path], timeout_s: float = 120) -> Path:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for lab in _labs() - before:
            if list(lab.glob("*/data/postmaster.pid")):
                return lab
        time.sleep(0.2)
    raise AssertionError("no local cluster started")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_a_run_stopped_mid_way_leaves_nothing_once_clean_has_run(sig: signal.Signals, tmp_path: Path) -> None:
    before = _labs()
    run = _run(tmp_path, "run", "auto_explain", "--server", "local", "--pg", str(MAJOR), "--scale", "tiny")
    lab = _once_a_cluster_runs(before)
    assert (lab / "client").is_dir(), "the client programs' scripts are outside the lab's directory"
    run.send_signal(sig)
    run.communicate(timeout=120)
    if sig == signal.SIGKILL:
        assert lab.exists()  # nobody stopped it
        clean = subprocess.run([sys.executable, "-m", "repro", "clean"], cwd=ROOT, capture_output=True, text=True,
                               env={**os.environ, "DOCKER_HOST": NO_ENGINE}, timeout=120)
        assert clean.returncode == 0 and str(lab) in clean.stdout, clean.stdout + clean.stderr
    assert not lab.exists() and not _postmasters(lab)


# why a finding may stay unjudged here, as in a container on this machine: an extension
# Debian's server does not ship, this machine's CPUs, a scale above tiny, or another major
# the reasons a container on this machine has too, and the semaphore control's builds (images only)
NOT_HERE = ("pg_bigm", "pgroonga", "pg_wait_sampling", "CPUs", "full scale", "Applies to PostgreSQL ",
            "which only the project's images hold")


@pytest.fixture(scope="module")
def chapter_runs(unjudged_runs: Block, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Done]:
    """Each chapter's tiny run on local clusters: those of ALONE here, one after the other
    under the machine's lock, the others in the session's block of runs side by side."""
    root = tmp_path_factory.mktemp("local-runs")
    with engine_lock("the local clusters' chapter tests", wait=True, machine=True):
        done = {name: local_run(name, root) for name in runner.LOCAL_CHAPTERS if name in ALONE}
    return done | {name: unjudged_runs.done[name, LOCAL] for name, _ in LOCAL_RUNS}


@pytest.mark.parametrize("name", runner.LOCAL_CHAPTERS)
def test_a_chapter_runs_on_local_clusters_with_no_engine_and_says_where(
        name: str, chapter_runs: dict[str, Done]) -> None:
    """Each chapter that runs on local clusters, at tiny scale and one round: exit 0, the
    result on the local target with the binaries and this machine recorded, nothing of the
    lab's directory in it (a standby's primary_conninfo names the socket directory), and
    every finding judged but for the reasons a container on this machine has too (NOT_HERE)."""
    run, results = chapter_runs[name]
    assert run.returncode == 0, run.stderr[-2000:]
    [path] = list((results / name).glob(f"pg{MAJOR}-tiny-local-*.json"))
    assert local_cleanup.PREFIX not in path.read_text()
    doc = json.loads(path.read_text())
    assert doc["key"]["target"].startswith("local:") and doc["provenance"]["target"] == "local"
    assert doc["provenance"]["binaries"]["bindir"] == f"/usr/lib/postgresql/{MAJOR}/bin"
    assert doc["provenance"]["host"]["engine_cpus"] == os.cpu_count()
    assert all(s["image"]["origin"] == "local" for s in doc["provenance"]["servers"])
    for v in doc["verdicts"]:
        assert v["status"] != "not applicable" or any(w in v["reason"]["en"] for w in NOT_HERE), v
    assert all(s["cluster"]["cpus"] for s in doc["provenance"]["servers"])  # the CPUs each ran on
    stopped = {log["stopped"] for log in doc["raw"]["rounds_log"]}
    assert doc["scale_params"]["max_rounds"] == 1 and stopped == {"minimum"}, "more than one round"
