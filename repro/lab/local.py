"""Throwaway clusters from this machine's own PostgreSQL binaries (`--server local`): a run's
servers without Docker, on the machine whose findings a DBA wants to know.

Each server is a cluster of its own: `initdb` into the lab's directory, then `postgres` on a
Unix socket in a directory that only the clusters' user may enter (mode 0700), with no TCP
listener (listen_addresses is empty). The run is the clusters' superuser, so restarts and
settings work as in the containers. Run as root, the clusters and their sockets' directory
belong to the `postgres` user (PostgreSQL refuses to run as root), who passes through the
lab's directory (root's, group postgres, 0710) but writes nothing there: what root writes (the
logs, the password file, traces) stays out of that user's reach, and what root puts among the
clusters' files is written by their user.

Nothing stays: the lab stops every postmaster and removes its directory on exit, also after
an error or a signal (the Lab's handling). A lab's directory carries a marker file
(`MARKER`) with the run's pid, so that `repro clean` finds what a killed run left
(local_cleanup.py) and stops each cluster by its own postmaster.pid, never by a process's name.

Only runs on this target execute this module: containers' keys do not reach it (the runner
imports it, no experiment does); a local run's key adds it, local_context.py and binaries.py
whole, with local_tracing.py, local_files.py and local_client.py (fingerprint.LOCAL_LAB).
"""
from __future__ import annotations

import os
import re
import resource
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import psycopg

from .. import majors
from ..errors import ReproError
from ..text import Text
from .harness import images
from .harness.connections import STARTED_WITH
from .harness.containers import DB, USER
from .harness.waiting import until
from .binaries import Binaries, as_owner, binaries, interrupted, owner, processes, tree_cpu_seconds, usable_cpus
from .local_client import LocalClient
from .local_files import allow_replication, give_to_owner, own_primary_conninfo, write_as_owner
from .local_cleanup import MARKER, PREFIX, STOP_TIMEOUT_S, stop_clusters
from .local_tracing import CONTAINER_DATA, LocalTracer
from .provenance import redacted as password_redacted
from .servers import Lab, Server, fixed_settings

FIRST_PORT = 50000  # names each cluster's socket (.s.PGSQL.<port>); nothing listens on TCP
# how the lab reaches a cluster, set last on its command line (a chapter's listen_addresses
# cannot open a TCP port), and left out of what the run records: the paths and ports differ
# from run to run, and would keep every run out of the others' pool
REACHED_BY = ("port", "listen_addresses", "unix_socket_directories")
SOCKETS = "<sockets>"  # the lab's socket directory, where a recorded value names it
CONTAINER_PATH = re.compile(re.escape(CONTAINER_DATA) + r"(?![\w.-])")  # that directory, or a path in it


class LocalServer(Server):
    """A cluster of the lab's, started from this machine's binaries; settings change with a
    restart."""

    def __init__(self, binaries: Binaries, image: images.Image, data: Path, sockets: Path, port: int,
                 command: list[str], major: float, role: Text | str, alias: str | None,
                 absent: Sequence[str], client: LocalClient) -> None:
        self.binaries = binaries
        self.image = image
        self.data = data  # the cluster's data directory
        self.sockets = sockets  # the lab's socket directory (0700)
        self.port = port
        self.command = command  # postgres and its arguments, as each start runs it
        self.major = major
        self.role = role
        self.alias = alias
        self.absent = list(absent)
        self.client = client
        self.starts: list[dict[str, str]] = []  # what the server was started with, at each start
        self.process: subprocess.Popen | None = None
        self.cpu: int | None = None  # the one CPU the cluster and its client programs run on (confine)

    def conninfo(self, dbname: str = DB) -> str:
        """Through the lab's socket directory (no password: only the clusters' user enters it)."""
        return f"host={self.sockets} port={self.port} user={USER} dbname={dbname}"

    def peer_conninfo(self, dbname: str = DB) -> str:
        """How another cluster of the lab reaches this one: through the same socket directory."""
        return self.conninfo(dbname)

    def _client_target(self) -> list[str]:
        return ["-p", str(self.port), "-U", USER, DB]

    def _client_exec(self, cmd: list[str], env: dict[str, str]) -> tuple[int, str]:
        """This machine's program, on the cluster's CPU once confined (as in a container, where
        it runs beside its server); the socket directory in PGHOST, not on the command line that
        the run records (it differs from run to run); a container's data directory named in
        the command is this cluster's, and its output names the container's again. A command
        that names the cluster's files runs as their user (pg_test_fsync's file, eviction): root
        follows no link of theirs."""
        here = str(self.data)
        named = [CONTAINER_PATH.sub(here, a) for a in cmd]
        program = [shutil.which(named[0], path=self.client.bindir) or named[0], *named[1:]]
        if named != cmd:
            program = as_owner(program)
        if self.cpu is not None:
            program = ["taskset", "-c", str(self.cpu), *program]
        result = self.client.exec_run(program, environment=env | {"PGHOST": str(self.sockets)})
        return result.exit_code, result.output.decode(errors="replace").replace(here, CONTAINER_DATA)

    def setting_rows(self) -> dict[str, str]:
        """As recorded: without how the lab reaches the cluster (a standby's primary_conninfo
        names the socket directory, which differs from run to run)."""
        return {k: v.replace(str(self.sockets), SOCKETS) for k, v in super().setting_rows().items()
                if k not in REACHED_BY}

    @property
    def docker(self) -> Any:
        """Where client programs run and the lab's files go: this machine (LocalClient)."""
        return self.client

    def put_file(self, path: str, text: str) -> None:
        """A file of the cluster's (a standby's recovery.conf) where the path says, written by
        its user (root follows no link of theirs); any other (pgbench's scripts) where the
        client programs read it."""
        if Path(path).is_relative_to(self.data):
            write_as_owner(Path(path), text)
        else:
            super().put_file(path, text)

    def start(self) -> None:
        """Start the postmaster in a session of its own (a Ctrl-C at the terminal reaches the
        run, which stops it), its log in the lab's directory."""
        log = open(self._log(), "ab")
        on_cpu = ["taskset", "-c", str(self.cpu)] if self.cpu is not None else []  # a restart keeps it
        self.process = subprocess.Popen(on_cpu + as_owner(self.command), stdout=log, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, start_new_session=True)
        log.close()

    def wait_ready(self, timeout_s: float) -> None:
        """Return once the postmaster accepts connections (to the database initdb made: the
        lab's own may not exist yet); fail at once if it exited."""
        def accepts() -> bool:
            if self.process is not None and self.process.poll() is not None:
                raise ReproError(f"server {self._name()} did not start (exit {self.process.returncode}):\n"
                                 + self._last_lines())
            try:
                with psycopg.connect(self.conninfo("postgres"), connect_timeout=2) as conn:
                    self.starts.append({k: v for k, v in conn.execute(STARTED_WITH).fetchall()
                                        if k not in REACHED_BY})
                    return True
            except psycopg.OperationalError:
                return False
        until(accepts, timeout_s, lambda: f"server {self._name()} did not accept connections within "
                                          f"{timeout_s:.0f} s:\n" + self._last_lines())

    def stop(self) -> None:
        """Fast shutdown (SIGINT to the postmaster), waited for."""
        interrupted(self.process, STOP_TIMEOUT_S)

    def restart(self, settings: dict[str, str] | None) -> None:
        """As ContainerServer.restart: `settings` as the ALTER SYSTEM layer, or None keeping it."""
        if settings is not None:
            self.sql("ALTER SYSTEM RESET ALL")
            self.set(settings)  # ALTER SYSTEM, then a reload the restart makes moot
        self.stop()
        self.start()
        self.wait_ready(STOP_TIMEOUT_S)

    def pin(self, cpu: int, pids: Sequence[int] = (), commands: Sequence[str] = ()) -> None:
        """Bind processes to one CPU: `pids`, and this cluster's processes and the run's own
        child processes that run one of `commands`. A process that has exited is no error."""
        family = {self.process.pid if self.process else -1, os.getpid()}
        chosen = set(pids) | {p for p, comm, parent, _ in processes() if comm in commands and parent in family}
        for pid in chosen:
            try:
                os.sched_setaffinity(pid, {int(cpu)})
            except ProcessLookupError:
                pass
            except OSError as exc:
                raise ReproError(f"could not bind process {pid} to CPU {cpu}: {exc}") from None

    def confine(self, cpu: int) -> None:
        """Run the whole cluster on one CPU, the `cpu`-th this run may use: the postmaster first,
        then the processes it has started (every server process is its child; those it starts
        later inherit its CPU), at each later start too, and its client programs."""
        if self.process is None:
            raise ReproError(f"server {self._name()} is not running")
        self.cpu = usable_cpus()[cpu]
        self.pin(self.cpu, pids=[self.process.pid])
        self.pin(self.cpu, pids=self._children())

    def placement(self) -> dict[str, str | None]:
        """Every CPU the cluster's processes may run on, recorded with the run for the pool's
        guard as a container's cpuset is (pooling.recorded); None once the server has stopped."""
        if self.process is None or self.process.poll() is not None:
            return {"cpus": None}
        cpus: set[int] = set()
        for pid in [self.process.pid, *self._children()]:
            try:
                cpus |= os.sched_getaffinity(pid)
            except ProcessLookupError:
                pass  # a backend that has just ended
        return {"cpus": ",".join(map(str, sorted(cpus)))}

    def cpu_counters(self) -> str:
        """/proc/stat's first line, the host's as in a container, and the CPU the run's own
        processes used, as a cgroup's cpu.stat says it (waits.cpu_times): the cluster's (its
        postmaster, the processes it runs and those it has reaped) and the client programs
        the run has reaped (pgbench)."""
        clients = resource.getrusage(resource.RUSAGE_CHILDREN)
        used = (tree_cpu_seconds(self.process.pid if self.process else -1, self._children)
                + clients.ru_utime + clients.ru_stime)
        return f"{Path('/proc/stat').read_text().splitlines()[0]}\nusage_usec {round(used * 1e6)}\n"

    def tracer(self, name: str) -> LocalTracer:
        """strace on this machine, its files in a directory of the lab's own (the run's)."""
        return LocalTracer(self.data, Path(tempfile.mkdtemp(prefix=f"{name}-", dir=self.data.parent.parent)), name)

    def _children(self) -> list[int]:
        postmaster = self.process.pid if self.process else -1
        return [pid for pid, _, parent, _ in processes() if parent == postmaster]

    def _log(self) -> Path:
        """The postmaster's output, beside its cluster in the lab's directory (the run's)."""
        return self.data.parent.with_suffix(".log")

    def _name(self) -> str:
        return self.alias or str(self.data.parent.name)

    def _last_lines(self) -> str:
        try:
            return "\n".join(self._log().read_text(errors="replace").splitlines()[-5:])
        except OSError:
            return ""


class LocalNetwork:
    """Servers of one lab reach each other through its socket directory: nothing to make."""


class LocalLab(Lab):
    """A run's clusters, from this machine's binaries of `major`, in a directory of the run's
    own; every postmaster stopped and the directory removed on exit."""

    def __init__(self, major: float = majors.DEFAULT_MAJOR, client: LocalClient | None = None) -> None:
        """`client`: the client programs (a run's own, for a lab of another major beside it),
        else those its binaries take (Binaries.client_programs)."""
        super().__init__(major)
        self.binaries = binaries(major)
        programs = (client.bindir, client.versions) if client else self.binaries.client_programs()
        self.image = self.binaries.image(programs[1])
        self.directory = Path(tempfile.mkdtemp(prefix=PREFIX))
        (self.directory / "marker").write_text(f"{os.getpid()}\n")
        (self.directory / "marker").rename(self.directory / MARKER)  # whole, or not there
        self.sockets = self.directory / "sockets"
        self.sockets.mkdir(mode=0o700)
        ids = owner()
        if ids is not None:  # the clusters' user passes through it and enters the sockets'; nobody else
            os.chown(self.sockets, *ids)  # does. The run's own files stay the run's: none of the
            os.chown(self.directory, os.getuid(), ids[1])  # clusters' processes may put a link where
        os.chmod(self.directory, 0o710 if ids else 0o700)  # root writes (a log, a trace, the password)
        self.client = LocalClient(*programs, self.directory / "client")
        self._clusters = 0  # made so far: each its directory and its socket's port
        self._made: list[LocalServer] = []  # every postmaster started, ready or not
        self._closed = False  # set by close: no postmaster starts after it
        self._lock = threading.Lock()  # servers may start at once (RunContext.servers)

    def _image(self) -> images.Image:
        return self.image

    def _describe_config(self) -> str:
        """`postgres --describe-config` of the binaries, run once per lab."""
        if self._described is None:
            self._described = self._owned(["postgres", "--describe-config"])
        return self._described

    def network(self) -> Any:
        """Nothing to make: the lab's clusters share its socket directory."""
        return LocalNetwork()

    def server(self, role: Text | str, settings: dict[str, str] | None = None, network: Any = None,
               alias: str | None = None, shm_size: str = "256m", entrypoint: list[str] | None = None,
               ptrace: bool = False) -> LocalServer:  # type: ignore[override]
        """A new cluster for `role` whose command line carries the fixed settings and
        `settings`, as Lab.server's does (shared memory is the machine's: `shm_size` does not
        apply; ptrace needs no capability for the run's own processes)."""
        with self._creating():
            data, port = self._cluster(alias)
            self._initdb(data)
        return self._started(role, settings, alias, data, port)

    def standby(self, primary: LocalServer, network: Any, name: str,
                settings: dict[str, str] | None = None) -> LocalServer:  # type: ignore[override]
        """A streaming standby of `primary`, made as on real hosts (pg_basebackup -R with a
        physical slot and the standby's name as application_name)."""
        role = Text(f"スタンバイ {name}", f"standby {name}")
        with self._creating():
            data, port = self._cluster(name)
            conninfo = f"host={primary.sockets} port={primary.port} user={USER} application_name={name}"
            self._owned(["pg_basebackup", "-d", conninfo, "-D", str(data), "-R", "-X", "stream", "-c", "fast",
                         "-C", "-S", name])
            own_primary_conninfo(data, conninfo)
        standby = self._started(role, settings, name, data, port)
        until(lambda: primary.sql("SELECT state FROM pg_stat_replication WHERE application_name = %s",
                                  (name,)) == [("streaming",)],
              60, f"standby {name} did not stream from its primary within 60 s", 0.05)
        return standby

    def _cluster(self, alias: str | None) -> tuple[Path, int]:
        """A new cluster's data directory (not yet made) and its socket's port."""
        with self._lock:
            if self._closed:
                raise ReproError("the run ended while its servers were being made")
            self._clusters += 1
            number = self._clusters
        cluster = self.directory / f"{number}-{alias or 'server'}"
        cluster.mkdir()
        ids = owner()
        if ids is not None:
            os.chown(cluster, *ids)
        return cluster / "data", FIRST_PORT + number

    def _initdb(self, data: Path) -> None:
        """initdb with the lab's password for connections over TCP (none listen), trust on
        the socket, whose directory only the clusters' user enters, for replication too (as
        the images allow it); UTF-8 as Debian's clusters."""
        pwfile = self.directory / f"{data.parent.name}.pw"
        give_to_owner(pwfile, self.password)
        try:
            self._owned(["initdb", "-D", str(data), "-U", USER, "--pwfile", str(pwfile), "--auth-local", "trust",
                         "--auth-host", "scram-sha-256" if self.major >= 14 else "md5", "-E", "UTF8",
                         "--locale", "C.UTF-8"])
        finally:
            pwfile.unlink()
        if self.major < 10:  # 9.6's initdb leaves replication on the socket commented out
            allow_replication(data)

    def _owned(self, cmd: list[str]) -> str:
        """One of the binaries' programs (a client program from the client's directory, where
        relocatable binaries have none), as the clusters' user: its output, or one line why not."""
        clients = self.client.bindir or os.environ.get("PATH", os.defpath)
        program = shutil.which(cmd[0], path=f"{self.binaries.bindir}{os.pathsep}{clients}")
        if program is None:
            raise ReproError(f"no {cmd[0]} in {self.binaries.bindir} or {self.client.bindir or 'on PATH'}")
        r = subprocess.run(as_owner([program, *cmd[1:]]), capture_output=True, text=True)
        if r.returncode:
            last = (r.stderr or r.stdout).strip().splitlines()[-1:] or [f"exit {r.returncode}"]
            raise ReproError(f"{cmd[0]} failed: {last[0]}")
        return r.stdout

    def _started(self, role: Text | str, settings: dict[str, str] | None, alias: str | None,
                 data: Path, port: int) -> LocalServer:
        wanted = {k: v for k, v in (fixed_settings(self.major) | (settings or {})).items() if k not in REACHED_BY}
        absent = self.absent(wanted)
        command = [self.binaries.program("postgres"), "-D", str(data)]
        for key, value in [*((k, v) for k, v in wanted.items() if k not in absent),
                           ("port", str(port)), ("listen_addresses", ""), ("unix_socket_directories", str(self.sockets))]:
            command += ["-c", f"{key}={value}"]
        server = LocalServer(self.binaries, self.image, data, self.sockets, port, command, self.major, role,
                             alias, absent, self.client)
        with self._creating(), self._lock:
            if self._closed:
                raise ReproError("the run ended while its servers were being made")
            self._made.append(server)
            server.start()
        self._ready(server)
        with psycopg.connect(server.conninfo("postgres"), autocommit=True) as conn:
            if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (DB,)).fetchone():
                conn.execute(f"CREATE DATABASE {DB}")  # a standby has its primary's
        return server

    def close(self) -> None:
        """Stop every postmaster, then remove the lab's directory, its marker last (a
        directory that stays is `repro clean`'s to find)."""
        with self._lock:
            self._closed = True
        try:
            for server in reversed(self._made):
                server.stop()
            stop_clusters(self.directory)
            for path in self.directory.iterdir():
                if path.name != MARKER:
                    shutil.rmtree(path) if path.is_dir() else path.unlink()
            shutil.rmtree(self.directory)
        finally:
            self.client.close()
            self.servers.clear()

    def redacted(self, value: str) -> str:
        """A recorded value without the password or the lab's socket directory (a standby's
        primary_conninfo names it), which differs from run to run and would split every pool."""
        return password_redacted(value).replace(str(self.sockets), SOCKETS)

    def provenance(self) -> dict[str, Any]:
        """Which binaries the clusters ran, where they came from, and the client programs."""
        return {"binaries": {"bindir": str(self.binaries.bindir), "version": self.binaries.version,
                             "source": self.binaries.source},
                "client": self.client.provenance()}
