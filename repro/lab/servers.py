"""PostgreSQL servers for experiments: containers (testcontainers) or an existing DSN.

A `Lab` owns every container and network it starts and removes them when it
exits, also on an exception, Ctrl-C or SIGTERM/SIGHUP, so a run leaves nothing
behind: what it recorded, and anything else that carries its run's label.

Nothing of a run is open to the network: with a local engine each server's port is
published on 127.0.0.1 only, and every run has its own random superuser password. The
password reaches a container as a file copied in before it starts (the image's
POSTGRES_PASSWORD_FILE), never in an environment or a command line that `docker inspect`,
`docker events` or `ps` would show; readiness is polled from here, not by an exec in the
container. A given DSN carries no password (libpq's PGPASSWORD, ~/.pgpass or a service
file supply it), and client programs beside it get the password in their environment.

Settings that differ between images and change what is measured are fixed on every server
of every major (FIXED): JIT, which only 11 and later have, is off, as on 9.6 and 10.
"""
from __future__ import annotations

import io
import os
import secrets
import shlex
import signal
import tarfile
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import FrameType, TracebackType
from typing import TYPE_CHECKING, Any

from .. import majors
from . import engine
from ..errors import ReproError
from ..text import Text
from .pgbench import PgbenchResult, parse

if TYPE_CHECKING:
    from .existing import ExternalServer

os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")  # no reaper image offline
if engine.is_local():
    # connect to the published port on this machine's loopback (also when the harness
    # itself runs in a container, where testcontainers would pick the bridge gateway)
    os.environ.setdefault("TESTCONTAINERS_HOST_OVERRIDE", "127.0.0.1")
    os.environ.setdefault("TESTCONTAINERS_CONNECTION_MODE", "docker_host")
os.environ.setdefault("TC_POOLING_INTERVAL", "0.1")  # readiness poll; the default is 1 s

import psycopg  # noqa: E402
from psycopg import sql as pgsql  # noqa: E402
from testcontainers.core.container import DockerContainer  # noqa: E402
from testcontainers.core.network import Network  # noqa: E402

RUN_LABEL = "io.repro.run"
USER, DB = "postgres", "bench"
SOCKET_DIR = "/var/run/postgresql"
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
PASSWORD_FILE = "/run/repro/password"  # in the container; the image reads it at initdb
START_TIMEOUT_S = 300  # initdb, or a standby's base backup, before the first connection


def fixed_settings(major: float) -> dict[str, str]:
    """Settings every server gets, so that cells of the matrix compare like with like."""
    return {"jit": "off"} if major >= 11 else {}


class Server:
    """What experiments need of a server, wherever it runs."""

    major: float  # the server's major (9.6, 17)
    image: engine.Image | None  # the image it runs (its features), None for an existing server
    role: Text | str  # what the server is for, shown in provenance
    absent: Sequence[str] = ()  # settings asked for that this major does not have (left out)
    session: dict[str, str] = {}  # settings set per session (an existing server only)
    unapplied: dict[str, tuple[str, str]] = {}  # asked for, but the existing server's differ

    def conninfo(self) -> str:
        """A libpq connection string for clients of this server (psycopg)."""
        raise NotImplementedError

    def _client_exec(self, cmd: list[str], env: dict[str, str]) -> tuple[int, str]:
        """Run a client program (pgbench, psql, pg_test_timing) next to the server."""
        raise NotImplementedError

    def _client_target(self) -> list[str]:
        """The connection arguments for pgbench/psql run by `_client_exec`."""
        raise NotImplementedError

    def _connect(self, autocommit: bool = False) -> psycopg.Connection:
        """A new connection to the server: how the lab reaches it (its connection string, a
        time limit to connect)."""
        return psycopg.connect(self.conninfo(), autocommit=autocommit, connect_timeout=10)

    def sql(self, query: str | pgsql.Composable, params: tuple | dict | None = None
            ) -> list[tuple]:
        """Run one statement in autocommit mode, on a connection of its own; return its rows
        (empty if none)."""
        with self._connect(autocommit=True) as conn:
            cur = conn.execute(query, params)
            return cur.fetchall() if cur.description else []

    def run(self, cmd: list[str], env: dict[str, str] | None = None) -> str:
        """Run a client-side program; raise with its output if it fails."""
        code, out = self._client_exec(cmd, env or {})
        if code != 0:
            tail = "\n".join(out.strip().splitlines()[-5:])
            raise ReproError(f"`{shlex.join(cmd)}` failed (exit {code}):\n{tail}")
        return out

    @property
    def docker(self) -> Any:
        """The container where client programs (pgbench, psql) run."""
        raise NotImplementedError

    def put_file(self, path: str, text: str) -> None:
        """Write a text file where the client programs run (pgbench scripts)."""
        data = text.encode()
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            info = tarfile.TarInfo(os.path.basename(path))
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
        self.docker.put_archive(os.path.dirname(path), buf.getvalue())

    def pgbench(self, args: list[str], scripts: dict[str, str] | None = None,
                options: dict[str, str] | None = None) -> PgbenchResult:
        """Run pgbench with custom scripts ({file name: text}) and per-session GUCs."""
        for name, text in (scripts or {}).items():
            self.put_file(f"/tmp/{name}", text)
        out = self.run(["pgbench", *args, *self._client_target()], _pgoptions(options))
        return parse(out)

    def pgbench_init(self, scale: int, *extra: str, options: dict[str, str] | None = None) -> None:
        """Create pgbench's tables at a scale factor (pgbench -i); `options` are session GUCs
        (a search_path puts the tables in another schema)."""
        self.run(["pgbench", "-i", "-q", "-s", str(scale), *extra, *self._client_target()],
                 _pgoptions(options))

    def setting_rows(self) -> dict[str, str]:
        """Settings not at their default, for provenance."""
        rows = self.sql("SELECT name, current_setting(name) FROM pg_settings "
                        "WHERE source NOT IN ('default', 'override', 'client') ORDER BY name")
        return dict(rows)

    def set(self, settings: dict[str, str]) -> None:
        """ALTER SYSTEM SET each setting (quoted as identifier and literal) and reload."""
        for key, value in settings.items():
            self.sql(pgsql.SQL("ALTER SYSTEM SET {} = {}").format(pgsql.Identifier(key),
                                                                  pgsql.Literal(value)))
        self.sql("SELECT pg_reload_conf()")


class ContainerServer(Server):
    """A server in a container of the lab; settings can change with a restart."""

    def __init__(self, container: DockerContainer, image: engine.Image, major: float,
                 password: str, role: Text | str, alias: str | None,
                 absent: Sequence[str] = ()) -> None:
        self.container = container  # the testcontainers container
        self.image = image  # the image it runs (its features)
        self.major = major  # the server's major
        self.role = role  # what the server is for, shown in provenance
        self.alias = alias  # its name on the lab's network (standbys, peers)
        self.absent = list(absent)  # settings asked for that this major does not have
        self._password = password

    @property
    def docker(self) -> Any:
        """The Docker SDK's container (update its cpuset, read its stats)."""
        return self.container.get_wrapped_container()

    def conninfo(self) -> str:
        host = self.container.get_container_host_ip()
        port = self.container.get_exposed_port(5432)
        return f"host={host} port={port} user={USER} password={self._password} dbname={DB}"

    def _client_exec(self, cmd: list[str], env: dict[str, str]) -> tuple[int, str]:
        """In the server's own container, as its postgres user: where the client runs."""
        return self._exec(cmd, user="postgres", environment=env)

    def _exec(self, cmd: list[str], **how: Any) -> tuple[int, str]:
        """Run a command in the container (docker exec, `how` its options): its exit code and
        output."""
        result = self.docker.exec_run(cmd, **how)
        return result.exit_code, result.output.decode(errors="replace")

    def _client_target(self) -> list[str]:
        return ["-h", SOCKET_DIR, "-U", USER, DB]

    def pin(self, cpu: int, pids: Sequence[int] = (), commands: Sequence[str] = ()) -> None:
        """Bind processes of the container (by pid, or every process running one of
        `commands`, found in /proc) to one CPU with taskset, as the postgres user, who owns
        the server's and the client programs' processes: no extra capability is needed.
        A process that has exited meanwhile is no error."""
        named = " ".join(shlex.quote(c) for c in commands)
        script = (f"set -e; for p in {' '.join(str(int(p)) for p in pids)} $(for d in /proc/[0-9]*; do "
                  f"for c in {named or '-'}; do [ \"$(cat $d/comm 2>/dev/null)\" = \"$c\" ] && "
                  f"echo ${{d#/proc/}}; done; done); do taskset -p -c {int(cpu)} $p > /dev/null || "
                  f"[ ! -d /proc/$p ]; done")
        result = self.docker.exec_run(["sh", "-c", script], user="postgres")
        if result.exit_code != 0:
            raise ReproError(f"could not bind processes to CPU {cpu}: "
                             f"{result.output.decode(errors='replace').strip()}")

    def restart(self, settings: dict[str, str] | None) -> None:
        """Restart with `settings` as the ALTER SYSTEM layer (replacing the previous one),
        or with None keeping that layer and the server's files as they are.

        Settings given when the server was started are on its command line and
        cannot be overridden here; pass only the ones that vary.
        """
        if settings is not None:
            self.sql("ALTER SYSTEM RESET ALL")
            for key, value in settings.items():
                self.sql(pgsql.SQL("ALTER SYSTEM SET {} = {}").format(pgsql.Identifier(key),
                                                                      pgsql.Literal(value)))
        self.docker.kill(signal="SIGINT")  # fast shutdown, as the official image's STOPSIGNAL
        self._start_again()

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
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                self.docker.reload()
                with psycopg.connect(self.conninfo(), connect_timeout=2):
                    return
            except (psycopg.OperationalError, TypeError, KeyError, ConnectionError, TimeoutError):
                if self.docker.status == "exited" or time.monotonic() > deadline:
                    raise ReproError(f"server {self.alias or self.docker.short_id} did not "
                                     + ("start (the container exited)" if self.docker.status == "exited"
                                        else f"accept connections within {timeout_s:.0f} s")
                                     + ":\n" + self.docker.logs(tail=5).decode(errors="replace"))
                time.sleep(0.1)


def _options(settings: dict[str, str]) -> str:
    """Session settings as libpq's options (-c k=v, spaces in a value escaped)."""
    return " ".join(f"-c {k}={str(v).replace(' ', chr(92) + ' ')}" for k, v in settings.items())


def _pgoptions(options: dict[str, str] | None) -> dict[str, str]:
    """Session settings for a client program, as the PGOPTIONS environment variable."""
    return {"PGOPTIONS": _options(options or {})}


class Lab:
    """Starts servers and networks for one run and removes all of them on exit."""

    def __init__(self, major: float = majors.DEFAULT_MAJOR) -> None:
        self.major = major  # the major under test
        self.run_id = uuid.uuid4().hex[:12]  # labels the run's containers and networks
        self.password = secrets.token_urlsafe(24)  # this run's superuser password
        self.image: engine.Image | None = None  # the major's image, once a server started (its features)
        self.servers: list[Server] = []  # every server started so far
        self._containers: list[Any] = []
        self._networks: list[Network] = []
        self._previous: dict[int, Any] = {}
        self._starting = False
        self._pending: int | None = None
        self._described: str | None = None  # postgres --describe-config of the image
        self._helper: Any = None  # the client container beside an existing server
        self._external = threading.Lock()
        self._databases: list[tuple[str, str]] = []  # (DSN, scratch database) to drop

    # -- life cycle ---------------------------------------------------------
    def __enter__(self) -> Lab:
        for sig in SIGNALS:
            self._previous[sig] = signal.signal(sig, self._interrupt)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        # Ignore further interrupts while cleaning up, so a second Ctrl-C cannot strand a container.
        for sig in SIGNALS:
            signal.signal(sig, signal.SIG_IGN)
        try:
            self.close()
        finally:
            for sig, handler in self._previous.items():
                signal.signal(sig, handler)

    def _interrupt(self, signum: int, frame: FrameType | None) -> None:
        """Turn a signal into KeyboardInterrupt so `with Lab()` cleans up; while a container is
        being created, only once it exists (a second signal does not wait)."""
        if self._starting and self._pending is None:
            self._pending = signum
            return
        raise KeyboardInterrupt(f"signal {signum}")

    @contextmanager
    def _creating(self) -> Iterator[None]:
        self._starting = True
        try:
            yield
        finally:
            self._starting = False
            if self._pending is not None:
                raise KeyboardInterrupt(f"signal {self._pending}")

    def close(self) -> None:
        """Drop the scratch databases on existing servers, then remove every container and
        network of this run: those recorded, then anything else carrying the run's label (a
        container whose creation a signal cut short)."""
        from .existing import _drop_database  # existing.py builds on this module
        failed = []
        for dsn, name in self._databases:
            try:
                _drop_database(dsn, name)
            except (psycopg.Error, ReproError) as exc:
                failed.append(f"{name}: {str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__}")
        self._databases.clear()
        c = engine.client()
        label = {"label": f"{RUN_LABEL}={self.run_id}"}
        containers = list(reversed(self._containers))
        containers += [x for x in c.containers.list(all=True, filters=label)
                       if x.id not in {k.id for k in containers}]
        for container in containers:
            try:
                container.remove(force=True, v=True)
            except Exception:  # already gone is fine; anything else shows in leftovers()
                pass
        for network in [*reversed(self._networks), *c.networks.list(filters=label)]:
            try:
                network.remove()
            except Exception:
                pass
        self._containers.clear()
        self._networks.clear()
        if failed:
            raise ReproError("could not drop the run's scratch database on the existing server: "
                             + "; ".join(failed))

    # -- resources ------------------------------------------------------------
    def _image(self) -> engine.Image:
        if self.image is None:
            self.image = engine.resolve_image(self.major)
        return self.image

    def absent(self, settings: dict[str, str]) -> list[str]:
        """The settings this major's server does not have: the originals' postgresql.conf
        names some that came later (max_parallel_maintenance_workers in 11, track_wal_io_timing
        in 14), and a server given one on its command line does not start. The list is
        `postgres --describe-config` of the image; an extension's own (auto_explain.*) are
        not in it and are left to the server."""
        known = {line.split("\t", 1)[0].lower() for line in self._describe_config().splitlines()}
        return [k for k in settings if "." not in k and k.lower() not in known]

    def _describe_config(self) -> str:
        """`postgres --describe-config` in a container of the major's image (no network,
        removed when done), run once per lab."""
        if self._described is None:
            self._described = engine.client().containers.run(
                self._image().name, ["--describe-config"], entrypoint=["postgres"], user="postgres",
                network_mode="none", remove=True, labels={RUN_LABEL: self.run_id}).decode(errors="replace")
        return self._described

    def network(self) -> Network:
        """A private Docker network for multi-node topologies."""
        engine.client()
        net = Network(docker_network_kw={"labels": {RUN_LABEL: self.run_id}})
        with self._creating():
            net.create()
            self._networks.append(net)
        return net

    def server(self, role: Text | str, settings: dict[str, str] | None = None,
               network: Network | None = None, alias: str | None = None, shm_size: str = "256m",
               entrypoint: list[str] | None = None, ptrace: bool = False) -> ContainerServer:
        """Start a server for `role` whose command line carries the fixed settings and
        `settings` (postgres -c k=v).

        `entrypoint` replaces the image's entrypoint; it gets the postgres command line
        as its arguments (see `standby`). `ptrace` adds only CAP_SYS_PTRACE, for strace.
        Every server is recorded for provenance."""
        wanted = fixed_settings(self.major) | (settings or {})
        absent = self.absent(wanted)
        command = ["postgres"]
        for key, value in wanted.items():
            if key not in absent:
                command += ["-c", f"{key}={value}"]
        options: dict[str, Any] = {"shm_size": shm_size}
        if entrypoint:
            options["entrypoint"] = entrypoint
        if ptrace:
            options["cap_add"] = ["SYS_PTRACE"]
        container = self._container(command, options, network, alias)
        return self._ready(ContainerServer(container, self._image(), self.major, self.password, role, alias,
                                           absent))

    def _container(self, command: list[str], options: dict[str, Any], network: Network | None,
                   alias: str | None) -> DockerContainer:
        """Create and start a container of the major's image that runs `command`, with Docker's
        `options`: labelled as this run's, the password copied in, its port published (on this
        machine's loopback only, with a local engine), on `network` as `alias`; recorded for
        `close` as soon as it exists, ready or not."""
        image = self._image()
        container = (DockerContainer(image.name)
                     .with_env("POSTGRES_USER", USER)
                     .with_env("POSTGRES_DB", DB)
                     .with_env("POSTGRES_PASSWORD_FILE", PASSWORD_FILE)
                     .with_copy_into_container(self.password.encode(), PASSWORD_FILE, 0o644)
                     .with_exposed_ports(5432)
                     .with_command(command)
                     .with_kwargs(labels={RUN_LABEL: self.run_id}, **options))
        if engine.is_local():  # published on this machine's loopback only (docker-py: (ip, port))
            container.ports[5432] = ("127.0.0.1", None)
        if network is not None:
            container.with_network(network)
            if alias:
                container.with_network_aliases(alias)
        try:
            with self._creating():
                try:
                    container.start()
                finally:
                    if container._container is not None:  # created: ours to remove, ready or not
                        self._containers.append(container._container)
        except Exception as exc:
            raise ReproError(f"PostgreSQL {majors.name(self.major)} ({image.name}) did not "
                             f"start: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
                             ) from exc
        return container

    def _ready(self, server: ContainerServer) -> ContainerServer:
        """The server once it accepts connections, recorded for provenance."""
        server.wait_ready(START_TIMEOUT_S)
        self.servers.append(server)
        return server

    def standby(self, primary: ContainerServer, network: Network, name: str,
                settings: dict[str, str] | None = None) -> ContainerServer:
        """A streaming-replication standby of `primary` (same network, reachable by its alias).

        Made as on real hosts: `pg_basebackup -R` with a physical replication slot and the
        standby's name as `application_name` (what synchronous_standby_names refers to),
        then the image's own entrypoint starts the server in standby mode. The password
        comes from the container's password file, as the primary's did. It is returned once
        the primary shows it streaming.
        """
        if primary.alias is None:
            raise ReproError("a standby needs a primary started with a network alias")
        conninfo = f"host={primary.alias} user={USER} application_name={name}"
        script = STANDBY_SCRIPT.format(conninfo=shlex.quote(conninfo), slot=shlex.quote(name),
                                       host=shlex.quote(primary.alias))
        standby = self.server(Text(f"スタンバイ {name}", f"standby {name}"), settings, network=network,
                              alias=name, entrypoint=["sh", "-c", script, "standby"])
        deadline = time.monotonic() + 60
        while primary.sql("SELECT state FROM pg_stat_replication WHERE application_name = %s",
                          (name,)) != [("streaming",)]:
            if time.monotonic() > deadline:
                raise ReproError(f"standby {name} did not stream from {primary.alias} within 60 s")
            time.sleep(0.05)
        return standby

    def external(self, dsn: str, role: Text | str, settings: dict[str, str] | None = None
                 ) -> ExternalServer:
        """An existing server, through a scratch database of this run (dropped when the lab
        closes, also after an error or a signal); pgbench and psql run in a helper container
        on the host network."""
        from .existing import ExternalServer, _scratch_database, check_dsn  # existing.py builds on this module
        check_dsn(dsn)
        image = self._image()
        with self._external, self._creating():  # several roles may start at once (RunContext.servers)
            if self._helper is None:
                self._helper = engine.client().containers.run(
                    image.name, ["sleep", "infinity"], detach=True, network_mode="host",
                    labels={RUN_LABEL: self.run_id}, entrypoint=[])
                self._containers.append(self._helper)
            name = f"repro_{self.run_id}_{len(self._databases) + 1}"  # one per role: each its own tables
            self._databases.append((dsn, name))
        with self._creating():
            _scratch_database(dsn, name)
        server = ExternalServer(dsn, self._helper, role, name, fixed_settings(check_dsn(dsn)) | (settings or {}))
        self.servers.append(server)
        return server


# Runs as root in a standby's container before the image's entrypoint ("$@" is the
# postgres command line); the entrypoint finds PG_VERSION and skips initdb. A restarted
# standby keeps its data directory and skips the base backup. pg_basebackup
# reads the password file through PGPASSWORD, set inside the script only, and writes it
# into primary_conninfo (-R), in the standby's data directory.
STANDBY_SCRIPT = """set -eu
export PATH="/usr/lib/postgresql/$PG_MAJOR/bin:$PATH"
: "${{PGDATA:=/var/lib/postgresql/data}}"
as_postgres() {{ setpriv --reuid=postgres --regid=postgres --init-groups "$@"; }}
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  mkdir -p "$PGDATA" && chown postgres:postgres "$PGDATA" && chmod 700 "$PGDATA"
  until as_postgres pg_isready -q -h {host}; do sleep 0.1; done
  PGPASSWORD="$(cat "$POSTGRES_PASSWORD_FILE")" as_postgres pg_basebackup -d {conninfo} -D "$PGDATA" -R -X stream -c fast -C -S {slot}
fi
exec /usr/local/bin/docker-entrypoint.sh "$@"
"""


def leftovers() -> list[str]:
    """Ids of containers and networks any repro run left behind (for tests and `clean`)."""
    c = engine.client()
    found = [x.id for x in c.containers.list(all=True, filters={"label": RUN_LABEL})]
    found += [n.id for n in c.networks.list(filters={"label": RUN_LABEL})]
    return found

