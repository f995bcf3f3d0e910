"""How the lab reaches a server: its connection string, a connection, the transport of
client programs and files to where they run, readiness, a container's start again.

Readiness is polled from here, not by an exec in the container. A given DSN carries no
password (libpq's PGPASSWORD, ~/.pgpass or a service file supply it), and client programs
beside it get the password in their environment. What a server is asked to do (its SQL in
autocommit, pgbench, where the client runs, a restart's settings) is the keyed lab's
(repro/lab/servers.py).
"""
from __future__ import annotations

import io
import os
import shlex
import tarfile
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import psycopg

from ...errors import ReproError
from ...text import Text
from .containers import DB, USER
from .images import Image
from .waiting import until

if TYPE_CHECKING:
    from testcontainers.core.container import DockerContainer


# The settings a server was started with: its command line and its configuration files
# (postgresql.conf, and ALTER SYSTEM's postgresql.auto.conf, which a restart applies).
STARTED_WITH = ("SELECT name, current_setting(name) FROM pg_settings "
                "WHERE source IN ('command line', 'configuration file') ORDER BY name")


class Endpoint:
    """A server as the lab reaches it, wherever it runs."""

    def conninfo(self) -> str:
        """A libpq connection string for clients of this server (psycopg)."""
        raise NotImplementedError

    def _client_exec(self, cmd: list[str], env: dict[str, str]) -> tuple[int, str]:
        """Run a client program (pgbench, psql, pg_test_timing) next to the server."""
        raise NotImplementedError

    @property
    def docker(self) -> Any:
        """The container where client programs (pgbench, psql) run."""
        raise NotImplementedError

    def tracer(self, name: str) -> Any:
        """Where strace runs beside the server (repro/lab/strace.py's Tracer), its files named
        after `name`: only a server of the run's own."""
        raise NotImplementedError

    def cpu_counters(self) -> str:
        """The machine's CPU counters and the run's own CPU use where the server runs
        (repro/lab/waits.py cpu_times): only a server of the run's own."""
        raise NotImplementedError

    def _connect(self, autocommit: bool = False) -> psycopg.Connection:
        """A new connection to the server: how the lab reaches it (its connection string, a
        time limit to connect)."""
        return psycopg.connect(self.conninfo(), autocommit=autocommit, connect_timeout=10)

    @property
    def client_runs(self) -> dict[tuple[str, str, str], int]:
        """How many times each kind of client program ran: (program, the host it connected to
        (-h: a socket directory, a host), its session settings (PGOPTIONS)), for the pool's guard."""
        return self.__dict__.setdefault("_client_runs", {})

    @property
    def reloads(self) -> list[dict[str, str]]:
        """The settings changed by a reload (ALTER SYSTEM), as a new session saw them once the
        reload had applied: one entry per reload, for the pool's guard."""
        return self.__dict__.setdefault("_reloads", [])

    def run(self, cmd: list[str], env: dict[str, str] | None = None) -> str:
        """Run a client-side program; raise with its output if it fails."""
        env = env or {}
        host = next((cmd[i + 1] for i in range(len(cmd) - 1) if cmd[i] == "-h"), "")
        kind = (cmd[0], host, env.get("PGOPTIONS", ""))
        self.client_runs[kind] = self.client_runs.get(kind, 0) + 1
        code, out = self._client_exec(cmd, env)
        if code != 0:
            tail = "\n".join(out.strip().splitlines()[-5:])
            raise ReproError(f"`{shlex.join(cmd)}` failed (exit {code}):\n{tail}")
        return out

    def put_file(self, path: str, text: str) -> None:
        """Write a text file where the client programs run (pgbench scripts)."""
        data = text.encode()
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            info = tarfile.TarInfo(os.path.basename(path))
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
        self.docker.put_archive(os.path.dirname(path), buf.getvalue())


class InContainer(Endpoint):
    """A server in a container of the lab, as the lab reaches it."""

    def __init__(self, container: DockerContainer, image: Image, major: float,
                 password: str, role: Text | str, alias: str | None,
                 absent: Sequence[str] = ()) -> None:
        self.container = container  # the testcontainers container
        self.image = image  # the image it runs (its features)
        self.major = major  # the server's major
        self.role = role  # what the server is for, shown in provenance
        self.alias = alias  # its name on the lab's network (standbys, peers)
        self.absent = list(absent)  # settings asked for that this major does not have
        self._password = password
        self._conninfo: str | None = None  # looked up once, again after a start (wait_ready)
        self.starts: list[dict[str, str]] = []  # what the server was started with, at each start

    @property
    def docker(self) -> Any:
        """The Docker SDK's container (update its cpuset, read its stats)."""
        return self.container.get_wrapped_container()

    def conninfo(self) -> str:
        """Looked up once (two calls to the engine), not at each statement: the host port
        changes only when the container starts again, and wait_ready looks it up anew."""
        if self._conninfo is None:
            host = self.container.get_container_host_ip()
            port = self.container.get_exposed_port(5432)
            self._conninfo = f"host={host} port={port} user={USER} password={self._password} dbname={DB}"
        return self._conninfo

    def peer_conninfo(self, dbname: str = DB) -> str:
        """How another server of the run reaches this one on the lab's network (a
        subscription's connection): by its alias, with the run's password."""
        if self.alias is None:
            raise ReproError("a server that peers reach needs a network alias")
        return f"host={self.alias} user={USER} password={self._password} dbname={dbname}"

    def _exec(self, cmd: list[str], **how: Any) -> tuple[int, str]:
        """Run a command in the container (docker exec, `how` its options): its exit code and
        output."""
        result = self.docker.exec_run(cmd, **how)
        return result.exit_code, result.output.decode(errors="replace")

    def _start_again(self) -> None:
        """Once the container has stopped, start it again and wait until the server accepts
        connections."""
        self.docker.wait(timeout=60)
        self.docker.start()
        self.wait_ready(60)

    def wait_ready(self, timeout_s: float) -> None:
        """Poll from here until the server accepts connections over TCP: the image's initdb
        server listens on its socket only, so the first success is the real server (the
        host port may change on restart). A container that exits fails at once."""
        def accepts() -> bool:
            self._conninfo = None  # its host port: new after a start
            try:
                self.docker.reload()
                with psycopg.connect(self.conninfo(), connect_timeout=2) as conn:
                    self.starts.append(dict(conn.execute(STARTED_WITH).fetchall()))
                    return True
            except (psycopg.OperationalError, TypeError, KeyError, ConnectionError, TimeoutError):
                if self.docker.status == "exited":
                    raise ReproError(f"server {self._name()} did not start (the container exited):\n"
                                     + self._last_lines()) from None
                return False
        until(accepts, timeout_s, lambda: f"server {self._name()} did not accept connections within "
                                          f"{timeout_s:.0f} s:\n" + self._last_lines())

    def _name(self) -> str:
        return self.alias or self.docker.short_id

    def _last_lines(self) -> str:
        return self.docker.logs(tail=5).decode(errors="replace")


def use_of(server: Endpoint, redact: Callable[[str], str]) -> dict[str, Any]:
    """How the run used a server, recorded with it for the pool's guard (pooling.recorded):
    what it was started with and what reloads set, each distinct set once with how many starts
    (reloads) had it, in order (`redact` takes a password out of a value, e.g. a standby's
    primary_conninfo, and what differs from run to run, e.g. a local lab's socket directory); and each kind of client program run against it, with how many times it
    ran."""
    starts = _counted(getattr(server, "starts", []), redact, "starts")
    reloads = _counted(server.reloads, redact, "reloads")
    clients = [{"program": program, "host": host, "session_settings": options, "runs": runs}
               for (program, host, options), runs in sorted(server.client_runs.items())]
    return {**({"starts": starts} if starts else {}), **({"reloads": reloads} if reloads else {}),
            "client_runs": clients}


def _counted(seen: list[dict[str, str]], redact: Callable[[str], str], count: str) -> list[dict[str, Any]]:
    """Each distinct set of settings once, in order, with how many times it was seen."""
    out: list[dict[str, Any]] = []
    for settings in seen:
        clean = {name: redact(value) for name, value in settings.items()}
        same = next((s for s in out if s["settings"] == clean), None)
        if same is None:
            out.append({"settings": clean, count: 1})
        else:
            same[count] += 1
    return out
