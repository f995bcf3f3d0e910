"""Every chapter against a server the project did not start, as a DBA has it: a role with
CREATEDB that is no superuser, and this machine's pgbench and psql with no Docker engine
reachable (DOCKER_HOST points at nothing). Each run exits 0, leaves pg_settings and
pg_database as they were, and shows the password nowhere (output, result, process list);
a client older than the server is refused in one line.

Those runs, and auto_explain's with the superuser, go side by side with the other runs
whose numbers nobody judges (tests/unjudged.py): with this machine's client programs a run
takes no engine lock (repro.lab.runner.run), and the server is the tests' own."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from existing_server import SUPERUSER, ExistingServer
from repro import registry
from repro.errors import ReproError
from repro.lab.existing import ExistingLab, check_dsn
from repro.lab.local_client import LocalClient
from unjudged import ROLE, Block, cpu_hierarchy, repro, role_env


@pytest.fixture(scope="module")
def dba(unjudged_runs: Block) -> ExistingServer:
    return unjudged_runs.server


class SideBySide:
    """The role runs of the block, each with its results directory, and what the server and
    the process list showed around them."""

    def __init__(self, block: Block) -> None:
        self.block = block

    def result(self, name: str, role: str) -> dict:
        """The one result document of a run that exited 0 and showed the password nowhere."""
        r, results = self.block.done[name, role]
        assert r.returncode == 0, r.stderr[-2000:]
        files = list(results.rglob("*.json"))
        assert len(files) == 1
        texts = [r.stdout, r.stderr, files[0].read_text(), *self.block.seen]
        assert not [t for t in texts if self.block.server.password in t], "the password showed"
        return json.loads(texts[2])


@pytest.fixture(scope="module")
def side_by_side(unjudged_runs: Block) -> SideBySide:
    return SideBySide(unjudged_runs)


@pytest.mark.parametrize("name", registry.names())
def test_a_createdb_role_with_local_clients(side_by_side: SideBySide, name: str) -> None:
    doc = side_by_side.result(name, ROLE)
    assert side_by_side.block.settings_kept and side_by_side.block.databases_kept, "the runs left the server as it was"
    if doc["raw"]:  # ran (not only "not applicable"): this machine's programs, which it names
        assert doc["provenance"]["client"]["kind"] == "local"
        assert doc["provenance"]["client"]["programs"]["pgbench"].startswith("pgbench (PostgreSQL)")
        stopped = {log["stopped"] for log in doc["raw"].get("rounds_log", [])}
        assert doc["scale_params"]["max_rounds"] == 1 and stopped <= {"minimum"}, "more than one round"


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
    r = repro("run", "partitions", "--dsn", dba.dsn(ROLE), "--scale", "tiny", "--client", "local",
              env=role_env(dba, tmp_path / "results", PG_BINDIR=str(tmp_path)))
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


def test_the_blocks_server_gets_the_cpu_after_the_other_tests(dba: ExistingServer) -> None:
    """pg_ctl starts the server in a session of its own; it keeps nice 19 and stays in the
    block's cgroup of a low CPU weight (tests/unjudged.py, `low_cpu`)."""
    pid = int((dba.directory / "data" / "postmaster.pid").read_text().split()[0])
    assert os.getpriority(os.PRIO_PROCESS, pid) == 19
    found = cpu_hierarchy()
    if found is None:
        pytest.skip("no cgroup of a lower CPU weight can be made here (needs root): nice 19 alone")
    hierarchy, weight, value = found
    groups = [g for g in hierarchy.glob("repro-unjudged-*") if str(pid) in (g / "cgroup.procs").read_text().split()]
    assert len(groups) == 1, "the server is in no group of the block's"
    assert (groups[0] / weight).read_text().strip() == value
