"""A PostgreSQL server that the project does not start: Debian's `postgresql` package on
this machine (scripts/install-system.sh postgresql installs it), as an engineer's own server. A
cluster of its own in a scratch directory, on a free port of 127.0.0.1, with password
(SCRAM) authentication and a UTF-8 character type (as Debian's own clusters: pg_trgm needs it for
Japanese text), started and stopped by the test that wants it, and only that one.

`python tests/existing_server.py DIR` starts one for trying things by hand and prints how
to reach and stop it.
"""
from __future__ import annotations

import glob
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

SUPERUSER = "bench"  # what the chapters' docstrings say a run against an existing server needs
NO_CREATEDB = "reader"  # a role that cannot create the run's scratch database


def binaries() -> Path | None:
    """The newest Debian PostgreSQL server installed on this machine."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: float(p.split("/")[4]))
    return Path(found[-1]).parent if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


Under = Sequence[str]  # a command that runs the rest of the line, e.g. at a lower CPU priority


def _as_postgres(cmd: list[str], under: Under = ()) -> None:
    """Debian's server refuses to run as root: run it as the package's postgres user."""
    prefix = ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups"] if os.geteuid() == 0 else []
    r = subprocess.run([*under, *prefix, *cmd], capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f"{Path(cmd[0]).name} failed: {(r.stderr or r.stdout).strip()[-500:]}")


@dataclass
class ExistingServer:
    directory: Path
    port: int
    password: str = field(repr=False)  # a failing test prints its fixtures

    def dsn(self, user: str = SUPERUSER, dbname: str = "postgres") -> str:
        return f"host=127.0.0.1 port={self.port} user={user} dbname={dbname}"

    def sql(self, query: str, user: str = SUPERUSER) -> str:
        return subprocess.run([str(binaries() / "psql"), "-XAtq", "-d", self.dsn(user), "-c", query],
                              check=True, capture_output=True, text=True,
                              env={**os.environ, "PGPASSWORD": self.password}).stdout

    def settings(self) -> str:
        """Every setting, its value and where it comes from: what a run must leave as it was."""
        return self.sql("SELECT name, setting, source FROM pg_settings ORDER BY name")

    def databases(self) -> list[str]:
        return self.sql("SELECT datname FROM pg_database ORDER BY 1").split()

    def stop(self) -> None:
        _as_postgres([str(binaries() / "pg_ctl"), "-D", str(self.directory / "data"), "-m", "fast", "-w", "stop"])


def repro(*args: str, env: dict[str, str], timeout: float = 900, under: Under = ()) -> subprocess.CompletedProcess:
    """`python -m repro ARGS` as a user runs it, in the project's directory (`under`: the
    command it runs under, with every process it starts)."""
    return subprocess.run([*under, sys.executable, "-m", "repro", *args],
                          cwd=Path(__file__).resolve().parent.parent, env=env, capture_output=True, text=True,
                          timeout=timeout)


def start(directory: Path, settings: dict[str, str] | None = None, under: Under = ()) -> ExistingServer:
    """initdb, start with the given settings (`under`: the command the server runs under),
    and create the two roles with one password (given to the runs through PGPASSWORD only)."""
    bin_dir = binaries()
    if bin_dir is None:
        raise RuntimeError("no Debian PostgreSQL server here: scripts/install-system.sh postgresql installs it")
    directory.mkdir(parents=True, exist_ok=True)
    os.chown(directory, *_ids())
    data, port, password = directory / "data", _free_port(), secrets.token_urlsafe(16)
    pwfile = directory / "pw"
    pwfile.write_text(password)
    os.chown(pwfile, *_ids())
    _as_postgres([str(bin_dir / "initdb"), "-D", str(data), "-U", SUPERUSER, "--pwfile", str(pwfile),
                  "--auth", "scram-sha-256", "-E", "UTF8", "--locale", "C.UTF-8"])
    pwfile.unlink()
    options = "".join(f" -c {k}={v}" for k, v in (settings or {}).items())
    _as_postgres([str(bin_dir / "pg_ctl"), "-D", str(data), "-w", "-l", str(directory / "log"), "-o",
                  f"-p {port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={directory}{options}",
                  "start"], under)
    server = ExistingServer(directory, port, password)
    server.sql(f"CREATE ROLE {NO_CREATEDB} LOGIN PASSWORD '{password}'")
    return server


def installed() -> Path:
    """Debian's server binaries on this machine, installed first where they are missing (the
    install script names the package)."""
    if binaries() is None:
        subprocess.run([str(Path(__file__).resolve().parent.parent / "scripts" / "install-system.sh"),
                        "postgresql"], check=True)
    return binaries()  # type: ignore[return-value]


@contextmanager
def running(settings: dict[str, str] | None = None, under: Under = ()) -> Iterator[ExistingServer]:
    """A cluster of a test's own (Debian's server installed first where it is missing), in a
    scratch directory that the postgres user reaches; stopped and removed afterwards."""
    installed()
    directory = Path(tempfile.mkdtemp(prefix="repro-existing-"))
    os.chmod(directory, 0o755)
    try:
        s = start(directory / "cluster", settings, under)
        try:
            yield s
        finally:  # also when the test fails: no server outlives it
            s.stop()
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _ids() -> tuple[int, int]:
    import pwd
    entry = pwd.getpwnam("postgres")
    return entry.pw_uid, entry.pw_gid


if __name__ == "__main__":
    s = start(Path(sys.argv[1]))
    print(f"DSN: {s.dsn()}\nPGPASSWORD={s.password}\nstop: setpriv --reuid=postgres --regid=postgres "
          f"--init-groups {binaries()}/pg_ctl -D {s.directory}/data stop")
