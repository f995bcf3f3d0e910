"""The runs of `make test` whose numbers nobody judges, side by side (SIDE_BY_SIDE at a
time) in one block per session: every chapter against the tests' own Debian server with a
CREATEDB role, and auto_explain with its superuser (tests/test_existing_server_roles.py), and
the chapters on local clusters of Debian's binaries that stand another process beside them
(tests/test_local_clusters.py). Each run takes no lock that another waits for (this
machine's client programs take none; local clusters get a run lock of their own through
XDG_RUNTIME_DIR), and the block goes on in the background from the session's first test
(`in_background`) while the session's other tests run one at a time: those tests judge no
number they measure, and every process of the block (its server too) gets the CPU after
them (`low_cpu`: as root, a cgroup of a low CPU weight; else nice 19, which slows them more),
and it slows them less than at an equal share (the disk and the caches are shared). A test that
does judge what it measures, or reads pgbench -r's per-statement times (auto_explain), waits
for the block to end first (tests/conftest.py, `after_the_block`). A run of the block that its
low weight starved runs once more at the session's weight (`Block.starved`). Nobody judges the block's
numbers, so each run measures one round (--one-round, under a key of its own): on 2 cores
the block costs the sum of its runs' work, so each round it does not measure is time saved.
Only the runs of the tests the session collected go in it."""
from __future__ import annotations

import os
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

from existing_server import SUPERUSER, ExistingServer, Under, installed, repro, running
from repro import registry
from repro.lab import runner

NO_ENGINE = "unix:///nonexistent"
ROLE = "dba"  # CREATEDB, no superuser: what a managed service gives
ROLE_RUNS = [(name, ROLE) for name in registry.names()] + [("auto_explain", SUPERUSER)]  # (chapter, role)
LOCAL = "local"  # the "role" of a run on local clusters
# on local clusters, one after the other outside the block: pgbench -r's per-statement times
# read short when another process shares pgbench's CPU (README, "Measure on a quiet machine")
ALONE = ("auto_explain",)
LOCAL_RUNS = [(name, LOCAL) for name in runner.LOCAL_CHAPTERS if name not in ALONE]

Done = tuple[subprocess.CompletedProcess, Path]  # the run, its results directory
STARVED = "measure on a quiet machine"  # how a chapter stops when its run got too little CPU (README)


def debian_major() -> int:
    """Debian's server on this machine (bookworm's 15), installed first where it is missing."""
    return int(installed().parent.name)


def role_env(s: ExistingServer, results: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "REPRO_RESULTS": str(results), "PGPASSWORD": s.password, "DOCKER_HOST": NO_ENGINE,
            **extra}


def local_run(name: str, root: Path, under: Under = ()) -> Done:
    """`repro run NAME --server local` at tiny scale, one round, with no engine reachable and
    a run lock of its own (`under`: the command it runs under, clusters and all)."""
    results, runtime = root / f"{name}-{LOCAL}", root / f"{name}-{LOCAL}-runtime"
    runtime.mkdir(mode=0o700)
    env = {**os.environ, "DOCKER_HOST": NO_ENGINE, "REPRO_RESULTS": str(results), "XDG_RUNTIME_DIR": str(runtime)}
    return repro("run", name, "--server", LOCAL, "--pg", str(debian_major()), "--scale", "tiny",
                 "--one-round", env=env, timeout=600, under=under), results


@contextmanager
def _process_list() -> Iterator[list[str]]:
    """`ps` of every process, sampled while the block runs."""
    seen: list[str] = []
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(0.2):
            seen.append(subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout)
    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield seen
    finally:
        stop.set()
        thread.join()


NICE = ["nice", "-n", "19"]
LOW_SHARE = 8  # the block's CPU weight: an eighth of a session's, or of the containers' group
# The block's runs at once, those on local clusters (the longest: 24-98 s each in the block on
# 2026-11-30, the role runs 5-51 s) first: enough to keep 2 CPUs busy. With all
# 17 at once in the low-weight group, each got so little CPU that fdw's 1-s warm-up of 10
# clients on local clusters completed no transaction (2026-11-30, its setup 39 s against 2 s).
SIDE_BY_SIDE = 4


def cpu_hierarchy() -> tuple[Path, str, str] | None:
    """Where this process can make a cgroup of a lower CPU weight, with the file that sets it
    and the weight: as root, in a writable cgroup v1 cpu hierarchy (cpu.shares, 1024 a group
    by default), or in v2's root with the cpu controller (cpu.weight, 100). None in a
    container's read-only /sys/fs/cgroup."""
    v1, v2 = Path("/sys/fs/cgroup/cpu"), Path("/sys/fs/cgroup")
    if os.geteuid():
        return None
    if (v1 / "cpu.shares").exists() and os.access(v1, os.W_OK):
        return v1, "cpu.shares", str(1024 // LOW_SHARE)
    controllers = v2 / "cgroup.subtree_control"
    if controllers.exists() and "cpu" in controllers.read_text().split() and os.access(v2, os.W_OK):
        return v2, "cpu.weight", str(100 // LOW_SHARE)
    return None


@contextmanager
def low_cpu() -> Iterator[Under]:
    """A command under which a process and all it starts get the CPU after the session's other
    tests: at nice 19, in a cgroup of their own with an eighth of the usual CPU weight where
    one can be made (`cpu_hierarchy`). nice alone is not enough: pg_ctl starts each server in a
    session of its own, and with the kernel's autogroup every session shares the CPU with the
    others as an equal, whatever its processes' nice (measured, `make test-measuring`: 375-388 s
    with the block at nice 19 alone, 364 s in this group). Not a group marked idle (cpu.idle,
    333 s): starved for seconds there, a 1-second pgbench of the block's completed no
    transaction (windows_linux on local clusters, 2026-11-30)."""
    found = cpu_hierarchy()
    if found is None:
        yield NICE
        return
    hierarchy, weight, value = found
    group = Path(tempfile.mkdtemp(prefix="repro-unjudged-", dir=hierarchy))
    try:
        (group / weight).write_text(value)
        yield ["sh", "-c", 'echo $$ > "$0" && exec "$@"', str(group / "cgroup.procs"), *NICE]
    finally:
        _remove(group)


def _remove(group: Path) -> None:
    """Remove the group once its processes are gone (a postmaster that pg_ctl saw stop may
    still be exiting); any left after 10 s, e.g. after an error, go back to its parent first,
    so the group never outlives the session."""
    procs = group / "cgroup.procs"
    for _ in range(100):
        if not procs.read_text().split():
            break
        time.sleep(0.1)
    for pid in procs.read_text().split():
        with suppress(OSError):  # gone meanwhile
            (group.parent / "cgroup.procs").write_text(pid)
    group.rmdir()


@dataclass
class Block:
    """The block's runs by (chapter, role or LOCAL), the server the role runs went to, and
    what that server and the process list showed around them."""

    server: ExistingServer = field(repr=False)
    done: dict[tuple[str, str], Done]
    settings_kept: bool
    databases_kept: bool
    seen: list[str] = field(repr=False)
    starved: list[tuple[str, str]] = field(default_factory=list)  # run again at the session's weight


@contextmanager
def block(root: Path, roles: bool, local: bool) -> Iterator[Block]:
    """Start the tests' Debian server with the CREATEDB role, run the block (the role runs
    if `roles`, the local ones if `local`), and keep the server until the session ends."""
    with low_cpu() as under, running(under=under) as server:
        server.sql(f"CREATE ROLE {ROLE} LOGIN CREATEDB PASSWORD '{server.password}'")
        before, listed = server.settings(), server.databases()

        def run(item: tuple[str, str], under: Under = under, where: Path = root) -> Done:
            name, role = item
            if role == LOCAL:
                return local_run(name, where, under)
            results = where / f"{name}-{role}"
            return repro("run", name, "--dsn", server.dsn(role), "--scale", "tiny",
                         "--one-round", env=role_env(server, results), under=under), results

        runs = (LOCAL_RUNS if local else []) + (ROLE_RUNS if roles else [])
        with _process_list() as seen:
            with ThreadPoolExecutor(max(min(len(runs), SIDE_BY_SIDE), 1)) as pool:
                done = dict(zip(runs, pool.map(run, runs)))
            # A run that the block's low weight starved stops as its chapter does on a busy machine
            # (STARVED); the block shows that each chapter runs, not what it measures, so that run
            # goes once more at the session's weight (wait_events on local clusters in CI,
            # 2026-11-30: a 1-s pgbench of 16 clients that completed no transaction).
            starved = [item for item, (r, _) in done.items() if r.returncode and STARVED in r.stderr]
            for item in starved:
                (root / "again").mkdir(exist_ok=True)
                done[item] = run(item, (), root / "again")
        yield Block(server, done, server.settings() == before, server.databases() == listed, seen, starved)


@contextmanager
def in_background(root: Path, roles: bool, local: bool) -> Iterator[Future[Block]]:
    """The block in a thread of its own, from now until the context ends: the future has the
    block once its runs are done; its server stays until then. An error of the thread after
    that (the server's stop) is raised here at the end."""
    ready: Future[Block] = Future()
    end, errors = threading.Event(), []

    def go() -> None:
        try:
            with block(root, roles, local) as done:
                ready.set_result(done)
                end.wait()
        except BaseException as exc:  # to the tests that wait for the block, or raised at the end
            if ready.done():
                errors.append(exc)
            else:
                ready.set_exception(exc)
    thread = threading.Thread(target=go, name="unjudged runs", daemon=True)
    thread.start()
    try:
        yield ready
    finally:
        end.set()
        thread.join()
    if errors:
        raise errors[0]
