"""PostgreSQL servers for experiments as they shape what is measured: containers
(testcontainers) or an existing DSN.

What a server is asked to do keys the runs: its command line (the fixed settings and the
experiment's, less those its major lacks), its shared memory and capabilities, statements
in autocommit on a connection each, pgbench and its session settings, where client
programs run and how they connect, a restart's settings layer and shutdown, CPU pinning,
standbys. How the lab starts, reaches and removes servers is the harness's
(harness/containers.py, harness/connections.py), followed by the key but not hashed.

Settings that differ between images and change what is measured are fixed on every server
of every major (FIXED): JIT, which only 11 and later have, is off, as on 9.6 and 10.
"""
from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from psycopg import sql as pgsql

from ..errors import ReproError
from ..text import Text
from .harness import images
from .harness.connections import Endpoint, InContainer
from .harness.containers import DB, USER, Containers
from .harness.waiting import until
from .pgbench import PgbenchResult, parse
from .tracing import InContainerTracer

if TYPE_CHECKING:
    from testcontainers.core.network import Network

SOCKET_DIR = "/var/run/postgresql"
CPU_READING = ("head -n 1 /proc/stat; "  # the cgroup's own counter: v2, else v1
               "cat /sys/fs/cgroup/cpu.stat 2>/dev/null || cat /sys/fs/cgroup/cpuacct/cpuacct.usage")
RELOAD_TIMEOUT_S = 10  # a reload is a signal to the postmaster: it takes milliseconds
STANDBY_TIMEOUT_S = 60  # a base backup of a fresh primary, then streaming


def fixed_settings(major: float) -> dict[str, str]:
    """Settings every server gets, so that cells of the matrix compare like with like."""
    return {"jit": "off"} if major >= 11 else {}


class Server(Endpoint):
    """What experiments need of a server, wherever it runs."""

    major: float  # the server's major (9.6, 17)
    image: images.Image | None  # the image it runs (its features), None for an existing server
    role: Text | str  # what the server is for, shown in provenance
    absent: Sequence[str] = ()  # settings asked for that this major does not have (left out)
    session: dict[str, str] = {}  # settings set per session (an existing server only)
    unapplied: dict[str, tuple[str, str]] = {}  # asked for, but the existing server's differ

    def _client_target(self) -> list[str]:
        """The connection arguments for pgbench/psql run by `_client_exec`."""
        raise NotImplementedError

    def confine(self, cpu: int) -> None:
        """Run the whole server on one CPU (its processes and those it starts later): only a
        server of the run's own, whose machine is the run's."""
        raise NotImplementedError

    def sql(self, query: str | pgsql.Composable, params: tuple | dict | None = None
            ) -> list[tuple]:
        """Run one statement in autocommit mode, on a connection of its own; return its rows
        (empty if none)."""
        with self._connect(autocommit=True) as conn:
            cur = conn.execute(query, params)
            return cur.fetchall() if cur.description else []

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

    def set_by_reload(self, settings: dict[str, str]) -> None:
        """`set`, then return once a new session sees the reload (the postmaster's
        pg_conf_load_time moved on: a reload is asynchronous), and record the values that
        session sees (the pool's guard). What a condition switches by reload goes this way."""
        before = self.sql("SELECT pg_conf_load_time()")[0][0]
        self.set(settings)
        until(lambda: self.sql("SELECT pg_conf_load_time()")[0][0] > before, RELOAD_TIMEOUT_S,
              f"the server did not reload {', '.join(settings)} within {RELOAD_TIMEOUT_S} s", 0.02)
        self.reloads.append(dict(self.sql("SELECT name, current_setting(name) FROM pg_settings "
                                          "WHERE name = ANY(%s) ORDER BY name", (list(settings),))))


class ContainerServer(Server, InContainer):
    """A server in a container of the lab; settings can change with a restart."""

    def _client_exec(self, cmd: list[str], env: dict[str, str]) -> tuple[int, str]:
        """In the server's own container, as its postgres user: where the client runs."""
        return self._exec(cmd, user="postgres", environment=env)

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

    def confine(self, cpu: int) -> None:
        """Run the whole server on one CPU: the container's cpuset, which every process in it
        keeps, those started later too (recorded with the container: host_config)."""
        self.docker.update(cpuset_cpus=str(int(cpu)))

    def tracer(self, name: str) -> InContainerTracer:
        """strace in the server's own container, its files named after `name`."""
        return InContainerTracer(self.docker, name)

    def cpu_counters(self) -> str:
        """/proc/stat's first line and the container's own CPU use (its cgroup's counter: v2's
        cpu.stat, else v1's cpuacct.usage), read in one go inside it (waits.cpu_times)."""
        return self.run(["sh", "-c", CPU_READING])

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


def _options(settings: dict[str, str]) -> str:
    """Session settings as libpq's options (-c k=v, spaces in a value escaped)."""
    return " ".join(f"-c {k}={str(v).replace(' ', chr(92) + ' ')}" for k, v in settings.items())


def _pgoptions(options: dict[str, str] | None) -> dict[str, str]:
    """Session settings for a client program, as the PGOPTIONS environment variable."""
    return {"PGOPTIONS": _options(options or {})}


class Lab(Containers):
    """Starts servers and networks for one run and removes all of them on exit."""

    def absent(self, settings: dict[str, str]) -> list[str]:
        """The settings this major's server does not have: the originals' postgresql.conf
        names some that came later (max_parallel_maintenance_workers in 11, track_wal_io_timing
        in 14), and a server given one on its command line does not start. The list is
        `postgres --describe-config` of the image; an extension's own (auto_explain.*) are
        not in it and are left to the server."""
        known = {line.split("\t", 1)[0].lower() for line in self._describe_config().splitlines()}
        return [k for k in settings if "." not in k and k.lower() not in known]

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
        until(lambda: primary.sql("SELECT state FROM pg_stat_replication WHERE application_name = %s",
                                  (name,)) == [("streaming",)],
              STANDBY_TIMEOUT_S, f"standby {name} did not stream from {primary.alias} within {STANDBY_TIMEOUT_S} s", 0.05)
        return standby


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
