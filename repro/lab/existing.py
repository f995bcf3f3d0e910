"""Existing servers (--dsn): the DSN's checks, the run's scratch databases, the server as
experiments see it, and where its client programs run: a helper container of the Docker
engine, or this machine's own pgbench and psql (LocalClient).

Apart from the containers' code (servers.py), which it builds on, so that what runs only
against an existing server stays out of the keys of runs on containers (repro/reach.py).
"""
from __future__ import annotations

import os
import platform
import re
import shlex
import threading
from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg import sql as pgsql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from .. import majors
from ..errors import ReproError
from ..text import Text
from .harness import images
from .harness.containers import RUN_LABEL
from .harness.waiting import until
from .local_client import CLIENT_PROGRAMS, LocalClient
from .servers import Lab, Server, _options, fixed_settings


def check_dsn(dsn: str) -> float:
    """Connect once to an existing server; return its major or fail with one clear line
    (libpq's message, which never carries the password)."""
    return _connect_dsn(dsn)[0]


def _connect_dsn(dsn: str) -> tuple[float, dict[str, str], str | None]:
    """The server's major, its connection parameters as libpq resolved them (service file,
    PG* variables; without the password) and the password libpq used (PGPASSWORD, .pgpass):
    probed once per DSN and libpq environment, however many servers and checks ask."""
    key = (dsn, tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith("PG"))))
    if key not in _PROBED:
        _PROBED[key] = _probe(dsn)
    return _PROBED[key]


_PROBED: dict[tuple, tuple[float, dict[str, str], str | None]] = {}


def _probe(dsn: str) -> tuple[float, dict[str, str], str | None]:
    try:
        if "password" in conninfo_to_dict(dsn):
            raise ReproError("the DSN carries a password, which the process list shows: give it "
                             "through PGPASSWORD, ~/.pgpass or a service file instead")
    except psycopg.ProgrammingError:
        raise ReproError("the DSN is not a libpq connection string (key=value ... or "
                         "postgresql://...)") from None
    try:
        with psycopg.connect(dsn, connect_timeout=10) as conn:
            num = int(conn.execute("SHOW server_version_num").fetchone()[0])
            params, password = conn.info.get_parameters(), conn.info.password
            user, can = conn.execute("SELECT current_user, rolcreatedb OR rolsuper FROM pg_roles "
                                     "WHERE rolname = current_user").fetchone()
    except psycopg.Error as exc:
        raise ReproError(f"cannot connect to the DSN: {libpq_line(exc)}") from None
    if not can:
        raise ReproError(f"the role {user} may not create databases (CREATEDB): a run against an "
                         f"existing server works in a scratch database of its own")
    major = 9.6 if num // 100 == 906 else num // 10000
    if major not in majors.MAJORS:
        raise ReproError(f"the server at the DSN is PostgreSQL {num} (server_version_num); this report "
                         f"covers {majors.name(majors.MAJORS[0])} to {majors.name(majors.MAJORS[-1])}")
    return major, params, password or None


def libpq_line(exc: Exception) -> str:
    """libpq's message on one line: the host, the port and why ("Connection refused"), then
    its hint; psycopg's own prefix left out."""
    text = " ".join(line.strip() for line in str(exc).strip().splitlines() if line.strip())
    return text.removeprefix("connection failed: ") or type(exc).__name__


def extensions(dsn: str) -> frozenset[str]:
    """What an existing server offers as features: the extensions its role may create there
    (all it has for a superuser; the trusted ones, 13+, otherwise) or that are installed
    already. No tools run on its machine, so strace and the like are never among them."""
    with psycopg.connect(dsn, connect_timeout=10) as conn:
        superuser = conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone()[0]
        if superuser:
            query = "SELECT name FROM pg_available_extensions"
        elif int(conn.execute("SHOW server_version_num").fetchone()[0]) >= 130000:
            query = ("SELECT name FROM pg_available_extension_versions WHERE trusted "
                     "UNION SELECT extname FROM pg_extension")
        else:
            query = "SELECT extname FROM pg_extension"
        return frozenset(r[0] for r in conn.execute(query))


def without_password(dsn: str) -> str:
    """A DSN fit to be stored or shown: its parameters but a password."""
    return make_conninfo(**{k: v for k, v in conninfo_to_dict(dsn).items() if k != "password"})


class NeedsOwnServer(ReproError):
    """What a run asked of an existing server that only a server of its own allows: a
    restart, ALTER SYSTEM, a program on the server's machine."""


DROP_WAIT = 10.0  # seconds DROP DATABASE is retried while a session leaves (each try waits 5 s)
CREATE_EXTENSION = re.compile(r"\s*CREATE EXTENSION (?:IF NOT EXISTS )?(\w+)\s*;?\s*", re.IGNORECASE)

# What an extension that a CREATEDB role may not create (not trusted) is replaced with in the
# run's scratch database: pg_prewarm's signature, warming by reading the table (heap only; an
# index is left to the queries), returning the blocks read. A sequential scan of a table over a
# quarter of shared_buffers reads through a small ring of buffers: such a table is then warm in
# the OS's page cache, not in shared_buffers as pg_prewarm leaves it.
STAND_INS = {"pg_prewarm": """
CREATE FUNCTION pg_prewarm(rel regclass, mode text = 'buffer', fork text = 'main',
                           first_block int8 = NULL, last_block int8 = NULL) RETURNS int8
LANGUAGE plpgsql AS $$
BEGIN
  IF (SELECT relkind FROM pg_class WHERE oid = rel) NOT IN ('r', 'm', 't') THEN
    RETURN 0;
  END IF;
  EXECUTE format('SELECT count(*) FROM %s', rel);
  RETURN pg_relation_size(rel) / current_setting('block_size')::int8;
END $$"""}


class ExternalServer(Server):
    """An existing server given by DSN, used through a scratch database of the run that the
    lab creates and drops; client programs run in a helper container on the host network,
    or on this machine (LocalClient).

    Nothing on the server changes but that database: settings the experiment asks for are
    set per session where the role may (`session`), the others are only compared with the
    server's own values (`unapplied`: {name: (asked, the server's)}); a restart, ALTER
    SYSTEM or a program on the server's machine raise NeedsOwnServer.
    """

    def __init__(self, dsn: str, client: Any, role: Text | str, database: str,
                 settings: dict[str, str] | None = None) -> None:
        self.dsn = dsn
        self.client = client
        self.image = None  # the server's own image is unknown; provenance has its version()
        self.role = role
        self.database = database
        self.major, self._params, self._password = _connect_dsn(dsn)
        self.session: dict[str, str] = {}
        self.unapplied: dict[str, tuple[str, str]] = {}
        self.stand_ins: list[str] = []  # extensions made by a stand-in (STAND_INS)
        self._sort(settings or {})

    def _sort(self, settings: dict[str, str]) -> None:
        """Which settings a session can set, and how the others compare with the server's."""
        superuser = self.sql("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")[0][0]
        for name, value in settings.items():
            rows = self.sql("SELECT context, current_setting(name) FROM pg_settings WHERE name = %s", (name,))
            if not rows and "." in name:  # an extension's own (auto_explain.*): set by the session
                self.session[name] = value
            elif rows and (rows[0][0] == "user" or (rows[0][0] == "superuser" and superuser)):
                self.session[name] = value
            elif rows and rows[0][1].lower() != value.lower():
                self.unapplied[name] = (value, rows[0][1])
            elif not rows:
                self.absent = [*self.absent, name]

    def conninfo(self) -> str:
        options = _options(self.session)
        return make_conninfo(self.dsn, dbname=self.database, **({"options": options} if options else {}))

    def run(self, cmd: list[str], env: dict[str, str] | None = None) -> str:
        """A client program with the caller's environment and the session's settings before
        its own PGOPTIONS; libpq's connection variables would lead it away from the scratch
        database, so they are refused."""
        if cmd[0] not in CLIENT_PROGRAMS:
            raise NeedsOwnServer(f"`{cmd[0]}` would run on the server's machine, which a run against "
                                 f"an existing server does not reach")
        env = env or {}
        if wrong := sorted(k for k in env if k.startswith("PG") and k != "PGOPTIONS"):
            raise ReproError(f"`{cmd[0]}` beside an existing server takes its connection from the DSN, "
                             f"not from {', '.join(wrong)}")
        return super().run(cmd, env | {"PGOPTIONS": " ".join(filter(None, [
            _options(self.session), env.get("PGOPTIONS", "")]))})

    def sql(self, query: str | pgsql.Composable, params: tuple | dict | None = None) -> list[tuple]:
        """As Server.sql; but where the role may not create an extension that has a stand-in
        (STAND_INS), the stand-in is made instead and named in `stand_ins`."""
        wanted = CREATE_EXTENSION.fullmatch(query) if isinstance(query, str) else None
        if wanted and wanted[1] in STAND_INS and wanted[1] not in extensions(self.dsn):
            self.stand_ins = [*self.stand_ins, wanted[1]]
            return super().sql(STAND_INS[wanted[1]])
        return super().sql(query, params)

    def _client_exec(self, cmd: list[str], env: dict[str, str]) -> tuple[int, str]:
        """In the helper container, which has none of this machine's libpq files: the
        parameters libpq resolved here, and the password in the exec's environment (which
        neither `docker inspect` nor `docker events` shows). This machine's own programs
        (LocalClient) find the password as libpq here did."""
        local = isinstance(self.client, LocalClient)
        secret = {"PGPASSWORD": self._password} if self._password and not local else {}
        result = self.client.exec_run(cmd, environment=env | secret)
        return result.exit_code, result.output.decode(errors="replace")

    def _client_target(self) -> list[str]:
        """The parameters libpq resolved here for the helper container; this machine's own
        libpq resolves the DSN itself (and may be older than psycopg's, without its newer
        parameters)."""
        if isinstance(self.client, LocalClient):
            return [make_conninfo(self.dsn, dbname=self.database)]
        return [make_conninfo(**(self._params | {"dbname": self.database}))]

    def restart(self, settings: dict[str, str] | None) -> None:
        raise NeedsOwnServer("a restart of an existing server is not this run's to make")

    def pin(self, cpu: int, pids: Sequence[int] = (), commands: Sequence[str] = ()) -> None:
        raise NeedsOwnServer("binding processes to CPUs happens on the server's machine")

    def set(self, settings: dict[str, str]) -> None:
        raise NeedsOwnServer("ALTER SYSTEM on an existing server is not this run's to make")

    @property
    def docker(self) -> Any:
        return self.client


def _scratch_database(dsn: str, name: str) -> None:
    """Create the run's database on an existing server (check_dsn has checked the role may)."""
    with psycopg.connect(dsn, autocommit=True, connect_timeout=10) as conn:
        conn.execute(pgsql.SQL("CREATE DATABASE {}").format(pgsql.Identifier(name)))


def _drop_database(dsn: str, name: str) -> None:
    """Drop the run's database, ending the run's own sessions only (its role's: a CREATEDB role may
    not end autovacuum's, which DROP DATABASE asks to exit), tried again while a session leaves."""
    command = shlex.join(["psql", "-d", without_password(dsn), "-c", f'DROP DATABASE "{name}"'])
    try:
        with psycopg.connect(dsn, autocommit=True, connect_timeout=10) as conn:
            refused: list[str] = []  # libpq's line of the last try

            def dropped() -> bool:
                conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                             "WHERE datname = %s AND usename = current_user", (name,))
                try:
                    conn.execute(pgsql.SQL("DROP DATABASE IF EXISTS {}").format(pgsql.Identifier(name)))
                    return True
                except psycopg.errors.ObjectInUse as exc:  # another's session, or one still ending
                    refused[:] = [libpq_line(exc)]
                    return False
            until(dropped, DROP_WAIT, lambda: f"{refused[0]}; drop it with `{command}`")
    except psycopg.Error as exc:
        raise ReproError(f"{libpq_line(exc)}; drop it with `{command}`") from None


class ExistingLab(Lab):
    """A run's lab against an existing server: each role a scratch database there, dropped
    when the lab closes (also after an error or a signal). Its client programs run in a
    helper container on the host network, or with this machine's own (LocalClient), which
    needs no Docker engine."""

    def __init__(self, major: float, client: LocalClient | None) -> None:
        super().__init__(major)
        self.client = client
        self._helper: Any = None  # where pgbench and psql run: a container, or the LocalClient
        if client is not None:
            self._helper, self.image = client, client.image
        self._external = threading.Lock()
        self._databases: list[tuple[str, str]] = []  # (DSN, scratch database) to drop

    def external(self, dsn: str, role: Text | str, settings: dict[str, str] | None = None
                 ) -> ExternalServer:
        """The existing server for `role`, through a scratch database of this run."""
        check_dsn(dsn)
        image = self._image()
        with self._external, self._creating():  # several roles may start at once (RunContext.servers)
            if self._helper is None:
                self._helper = images.client().containers.run(
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

    def close(self) -> None:
        """Drop the scratch databases, then remove the helper container (or end the local
        client); one line names a database that stays, and how to drop it."""
        failed = []
        for dsn, name in self._databases:
            try:
                _drop_database(dsn, name)
            except ReproError as exc:
                failed.append(f"{name}: {exc}")
        self._databases.clear()
        if self.client is None:
            super().close()
        else:
            self.client.close()
        if failed:
            raise ReproError("could not drop the run's scratch database on the existing server: "
                             + "; ".join(failed))

    def provenance(self) -> dict[str, Any]:
        """Which client ran, and what stood in for an extension the role could not create."""
        client = self.client.provenance() if self.client else {"kind": "docker", "image": self._image().name}
        stand_ins = sorted({x for s in self.servers for x in getattr(s, "stand_ins", [])})
        return {"client": client, **({"stand_ins": stand_ins} if stand_ins else {})}


def host(client: LocalClient) -> dict[str, Any]:
    """The client's machine, where no Docker engine speaks for it."""
    return {**this_machine(), "engine_cpus": None, "client_cpus": os.cpu_count(),
            "kernel": platform.release(), "os": platform.platform(), "docker_host": None}


def this_machine() -> dict[str, str | None]:
    """This machine's CPU model and clock source."""
    cpu = next((line.split(":", 1)[1].strip() for line in _read("/proc/cpuinfo").splitlines()
                if line.startswith("model name")), None)
    clock = _read("/sys/devices/system/clocksource/clocksource0/current_clocksource").strip()
    return {"cpu_model": cpu, "clocksource": clock or None}


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""
