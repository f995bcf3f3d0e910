"""The run's scratch database is dropped while autovacuum works in it, as on every real
server, by a CREATEDB role that is no superuser: an autovacuum worker is no such role's to
end, and DROP DATABASE itself asks it to exit. The run's own sessions are ended, another
role's are not: a database that stays is named in one line with the command that drops it.

A cluster of these tests' own, whose autovacuum visits a new database within a second; a
table there is vacuumed at once and slowly, so that a worker is busy in the database when
the lab closes (the test sees it, and the server's log shows that it was ended).
"""
from __future__ import annotations

import re
import shlex
import subprocess
import time
from collections.abc import Iterator

import psycopg
import pytest

from existing_server import SUPERUSER, ExistingServer, running
from repro.errors import ReproError
from repro.lab import existing
from repro.lab.existing import ExistingLab, ExternalServer, check_dsn
from repro.lab.local_client import LocalClient

ROLE = "dba"  # CREATEDB, no superuser
# Vacuumed as soon as a row is dead, sleeping 100 ms or more after every page (some 450 pages).
SLOW = ("autovacuum_vacuum_threshold = 0, autovacuum_vacuum_scale_factor = 0, "
        "autovacuum_vacuum_cost_delay = 100, autovacuum_vacuum_cost_limit = 1")


@pytest.fixture(scope="module")
def cluster() -> Iterator[ExistingServer]:
    with running({"autovacuum_naptime": "1"}) as s:
        s.sql(f"CREATE ROLE {ROLE} LOGIN CREATEDB PASSWORD '{s.password}'")
        yield s


@pytest.fixture
def lab(cluster: ExistingServer, monkeypatch: pytest.MonkeyPatch) -> tuple[ExistingLab, ExternalServer]:
    """A lab with this machine's client programs, and its scratch database, made by ROLE."""
    monkeypatch.setenv("PGPASSWORD", cluster.password)
    major = check_dsn(cluster.dsn(ROLE))
    lab = ExistingLab(major, LocalClient.find(major))
    return lab, lab.external(cluster.dsn(ROLE), "test")


def _busy_autovacuum(cluster: ExistingServer, server: ExternalServer) -> int:
    """A table full of dead rows; the pid of the autovacuum worker once it vacuums it."""
    server.sql(f"CREATE TABLE big (i int) WITH ({SLOW})")
    server.sql("INSERT INTO big SELECT generate_series(1, 100000)")
    server.sql("DELETE FROM big")
    deadline = time.monotonic() + 30
    while not (pid := cluster.sql(
            "SELECT pid FROM pg_stat_activity WHERE backend_type = 'autovacuum worker' "
            f"AND datname = '{server.database}' AND query LIKE 'autovacuum: VACUUM%public.big'")):
        assert time.monotonic() < deadline, "no autovacuum worker came to the table"
        time.sleep(0.1)
    return int(pid)


def test_the_scratch_database_is_dropped_while_autovacuum_works_in_it(
        cluster: ExistingServer, lab: tuple[ExistingLab, ExternalServer]) -> None:
    the_lab, server = lab
    oid = cluster.sql(f"SELECT oid FROM pg_database WHERE datname = '{server.database}'").strip()
    stray = psycopg.connect(cluster.dsn(ROLE, server.database), autocommit=True)  # the run's own
    worker = _busy_autovacuum(cluster, server)
    the_lab.close()
    assert server.database not in cluster.databases()
    assert not (cluster.directory / "data" / "base" / oid).exists(), "nothing of it is left"
    log = (cluster.directory / "log").read_text()
    assert f"[{worker}] FATAL:  terminating autovacuum process due to administrator command" in log
    with pytest.raises(psycopg.OperationalError):
        stray.execute("SELECT 1")
    stray.close()


def test_a_database_that_stays_is_named_with_the_command_that_drops_it(
        cluster: ExistingServer, lab: tuple[ExistingLab, ExternalServer], monkeypatch: pytest.MonkeyPatch) -> None:
    the_lab, server = lab
    monkeypatch.setattr(existing, "DROP_WAIT", 0)  # one try, which waits 5 s itself
    with psycopg.connect(cluster.dsn(SUPERUSER, server.database), autocommit=True) as other:
        with pytest.raises(ReproError) as failed:
            the_lab.close()
        other.execute("SELECT 1")  # another role's session: not the run's to end
    line = str(failed.value)
    assert len(line.splitlines()) == 1 and cluster.password not in line
    assert line.startswith(f"could not drop the run's scratch database on the existing server: {server.database}: ")
    found = re.search(r"drop it with `(.+)`$", line)
    assert found, line
    command = found[1]
    assert shlex.split(command)[-2:] == ["-c", f'DROP DATABASE "{server.database}"']
    subprocess.run(shlex.split(command), check=True, capture_output=True)
    assert server.database not in cluster.databases()
