"""Every chapter against a server the project did not start, as a DBA has it: a role with
CREATEDB that is no superuser, and this machine's pgbench and psql with no Docker engine
reachable (DOCKER_HOST points at nothing). Each run exits 0, leaves pg_settings and
pg_database as they were, and shows the password nowhere (output, result, process list);
a client older than the server is refused in one line.

Those runs, and auto_explain's with the superuser, go side by side: with this machine's
client programs a run takes no engine lock (repro.lab.runner.run), and the server is the
test's own, whose numbers nobody judges here. They take about as long as parallel's run
alone, not the sum of eleven."""
from __future__ import annotations

import json
import os
import subprocess
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from existing_server import SUPERUSER, ExistingServer
from repro import registry
from repro.errors import ReproError
from repro.lab.existing import ExistingLab, check_dsn
from repro.lab.local_client import LocalClient
from repro.lab.runlock import engine_lock
from test_existing_server import _databases, _repro, _settings, server  # noqa: F401  (the fixture)

ROLE = "dba"  # CREATEDB, no superuser: what a managed service gives
NO_ENGINE = "unix:///nonexistent"
LOCAL_RUNS = [(name, ROLE) for name in registry.names()] + [("auto_explain", SUPERUSER)]  # (chapter, role)


@pytest.fixture(scope="module")
def dba(server: ExistingServer) -> ExistingServer:  # noqa: F811
    server.sql(f"CREATE ROLE {ROLE} LOGIN CREATEDB PASSWORD '{server.password}'")
    return server


def _env(s: ExistingServer, results: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "REPRO_RESULTS": str(results), "PGPASSWORD": s.password, "DOCKER_HOST": NO_ENGINE,
            **extra}


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


@dataclass
class SideBySide:
    """The local-client runs, each with its results directory, and what the server and the
    process list showed around them."""

    done: dict[tuple[str, str], tuple[subprocess.CompletedProcess, Path]]
    settings_kept: bool
    databases_kept: bool
    seen: list[str] = field(repr=False)
    password: str = field(repr=False)

    def result(self, name: str, role: str) -> dict:
        """The one result document of a run that exited 0 and showed the password nowhere."""
        r, results = self.done[name, role]
        assert r.returncode == 0, r.stderr[-2000:]
        files = list(results.rglob("*.json"))
        assert len(files) == 1
        texts = [r.stdout, r.stderr, files[0].read_text(), *self.seen]
        assert not [t for t in texts if self.password in t], "the password showed"
        return json.loads(texts[2])


@pytest.fixture(scope="module")
def side_by_side(dba: ExistingServer, tmp_path_factory: pytest.TempPathFactory) -> SideBySide:
    root = tmp_path_factory.mktemp("runs")
    before, databases = _settings(dba), _databases(dba)

    def run(item: tuple[str, str]) -> tuple[subprocess.CompletedProcess, Path]:
        name, role = item
        results = root / f"{name}-{role}"
        return _repro("run", name, "--dsn", dba.dsn(role), "--scale", "tiny", env=_env(dba, results)), results

    # They take no engine lock themselves, but fill both cores: hold it, so that no container run
    # of another session measures beside them.
    with engine_lock("the existing-server tests' runs side by side", wait=True), _process_list() as seen, \
            ThreadPoolExecutor(len(LOCAL_RUNS)) as pool:
        done = dict(zip(LOCAL_RUNS, pool.map(run, LOCAL_RUNS)))
    return SideBySide(done, _settings(dba) == before, _databases(dba) == databases, seen, dba.password)


@pytest.mark.parametrize("name", registry.names())
def test_a_createdb_role_with_local_clients(side_by_side: SideBySide, name: str) -> None:
    doc = side_by_side.result(name, ROLE)
    assert side_by_side.settings_kept and side_by_side.databases_kept, "the runs left the server as it was"
    if doc["raw"]:  # ran (not only "not applicable"): this machine's programs, which it names
        assert doc["provenance"]["client"]["kind"] == "local"
        assert doc["provenance"]["client"]["programs"]["pgbench"].startswith("pgbench (PostgreSQL)")


def test_a_superuser_with_local_clients_loads_auto_explain_per_session(side_by_side: SideBySide) -> None:
    """pgbench's scripts are put where this machine's pgbench reads them, and its report names
    them as the lab did."""
    doc = side_by_side.result("auto_explain", SUPERUSER)
    judged = {v["id"]: v["status"] for v in doc["verdicts"]}
    assert all(judged[f] != "not applicable" for f in ("F2", "F3", "F4", "F5")), judged


def test_a_client_older_than_the_server_is_refused(dba: ExistingServer, tmp_path: Path) -> None:
    for program in ("pgbench", "psql"):
        fake = tmp_path / program
        fake.write_text(f"#!/bin/sh\necho '{program} (PostgreSQL) 9.6.24'\n")
        fake.chmod(0o755)
    r = _repro("run", "partitions", "--dsn", dba.dsn(ROLE), "--scale", "tiny", "--client", "local",
               env=_env(dba, tmp_path / "results", PG_BINDIR=str(tmp_path)))
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert "older than the server's PostgreSQL" in lines[0] and "PG_BINDIR" in lines[0]


def test_a_local_client_keeps_its_environment_and_refuses_a_connection_variable(
        dba: ExistingServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PGPASSWORD", dba.password)
    major = check_dsn(dba.dsn(ROLE))
    with ExistingLab(major, LocalClient.find(major)) as lab:
        server = lab.external(dba.dsn(ROLE), "test")
        shown = server.run(["psql", "-XAtq", "-d", server.conninfo(), "-c", r"\getenv v REPRO_SEEN", "-c", r"\echo :v"],
                           {"REPRO_SEEN": "kept"})
        assert shown.strip() == "kept"
        with pytest.raises(ReproError, match="takes its connection from the DSN, not from PGHOST"):
            server.run(["psql", "-c", "SELECT 1"], {"PGHOST": "elsewhere"})
        server.sql("CREATE EXTENSION pg_prewarm")  # not trusted: the stand-in reads the table
        server.sql("CREATE TABLE t AS SELECT generate_series(1, 1000) AS i")
        assert server.sql("SELECT pg_prewarm('t')")[0][0] > 0 and server.stand_ins == ["pg_prewarm"]
