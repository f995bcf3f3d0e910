"""Chapters against a real server that the runs did not start, then `repro compare` beside a
published run: the verdicts, nothing left on the server but what was there, its settings
unchanged, no password anywhere; and, against Debian's `postgresql` (a cluster of the
test's own: tests/existing_server.py), bad input, one line and exit 2, leaving nothing
behind, and an interrupted run that drops its scratch database.

auto_explain runs its session-loaded part there (its role is a superuser, as the chapter
needs); semaphores its one finding that needs no server of its own (F8). The published run
of auto_explain is this build's container run on the same major at the same scale;
semaphores' published runs are the project's, at another scale: compare names the
difference and refuses.
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest
from conftest import Watcher, chapter_result

from existing_server import NO_CREATEDB, ExistingServer, repro, running
from repro.lab.runlock import engine_lock
from repro.lab.existing import without_password
from repro.lab.harness.containers import leftovers
from repro.lab.servers import Lab

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def server() -> Iterator[ExistingServer]:
    EARLIER.update(leftovers())
    with running() as s:
        yield s


EARLIER: set[str] = set()  # runs' leftovers from before these tests (not theirs to judge)


def _containers_left() -> list[str]:
    """Containers and networks of repro runs these tests left, looked at while no run
    measures: another run on this engine (a user's) has containers of its own while it goes."""
    with engine_lock("a test looking for leftovers", wait=True, out=lambda _: None):
        return [x for x in leftovers() if x not in EARLIER]


def test_chapters_against_an_existing_server_and_compare(tmp_path: Path, watcher: Watcher, quiet: None) -> None:
    """The existing server here is a container of the default major that the test starts (a
    server the runs did not start, reached by its DSN with pgbench in a helper container), so
    that the published run is this build's own of auto_explain (`make results`' run, reused),
    copied into a scratch RESULTS directory as `repro archive` would store it. Its auto_explain
    run reads pgbench -r's per-statement times: it waits for the block of unjudged runs."""
    build, published = tmp_path / "build", tmp_path / "published"
    env = {**os.environ, "REPRO_RESULTS": str(build), "RESULTS": str(published)}
    doc, _ = chapter_result("auto_explain")
    (published / "auto_explain").mkdir(parents=True)
    (published / "auto_explain" / f"pg{doc['major']:g}-{doc['scale']}-x.json").write_text(json.dumps(doc))

    with Lab(doc["major"]) as lab:
        existing = lab.server("existing")
        settings = "SELECT name, setting, source FROM pg_settings ORDER BY name"
        databases = "SELECT datname FROM pg_database ORDER BY 1"
        before = existing.sql(settings), existing.sql(databases)
        with_password = {**env, "PGPASSWORD": lab.password}
        dsn = without_password(existing.conninfo())
        outputs = []
        for name, scale in (("auto_explain", doc["scale"]), ("semaphores", "tiny")):
            r = repro("run", name, "--dsn", dsn, "--scale", scale, "--wait", env=with_password)
            assert r.returncode == 0, r.stderr[-2000:]
            outputs += [r.stdout, r.stderr]
        after = existing.sql(settings), existing.sql(databases)
        password = lab.password
    compared = repro("compare", "auto_explain", "--json", env=env)
    other = repro("compare", "semaphores", "--json", env=env)
    watcher.stop()

    assert compared.returncode == 0, compared.stderr
    found = {f["finding"]: f for f in json.loads(compared.stdout)["findings"]}
    assert found["F1"]["this_machine"].startswith("not applicable against an existing server")
    assert found["F6"]["this_machine"].startswith("not applicable against an existing server")
    for fid in ("F2", "F3", "F4", "F5"):  # judged per session, beside the published run
        assert not found[fid]["this_machine"].startswith("not applicable"), found[fid]
        assert all(c["this_machine"]["value"] is not None for c in found[fid]["checks"]), found[fid]
        assert all(c["published"]["value"] is not None for c in found[fid]["checks"]), found[fid]
    count = next(c for c in found["F3"]["checks"] if "count, serial" in c["check"])
    assert count["difference"]["kind"] == "ratio" and count["difference"]["low"] < count["difference"]["high"]
    # the project's published semaphores runs are at default scale: another experiment, named
    major = f"{doc['major']:g}"
    lines = other.stderr.strip().splitlines()
    assert other.returncode == 2 and len(lines) == 1 and lines[0].startswith(
        f"error: the published runs of semaphores on PostgreSQL {major} differ from this machine's") \
        and "default scale" in lines[0] and "this machine: tiny scale" in lines[0], other.stderr
    semaphores = json.loads(next((build / "semaphores").glob(f"pg{major}-tiny-dsn-*.json")).read_text())
    assert semaphores["raw"]["wait_samples"], "F8's samples were taken on the existing server"

    assert after == before, "the server's settings and databases are as they were"
    assert not _containers_left()
    texts = outputs + [compared.stdout] + [p.read_text() for p in build.rglob("*.json")] + watcher.seen
    assert not [t for t in texts if password in t], "the password showed"


def _one_line_error(r: subprocess.CompletedProcess, text: str) -> None:
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: ") and text in lines[0], r.stderr


@pytest.mark.parametrize("case", ["unreachable", "wrong password", "no CREATEDB", "password in the DSN"])
def test_bad_input_against_an_existing_server(server: ExistingServer, tmp_path: Path, case: str) -> None:
    env = {**os.environ, "REPRO_RESULTS": str(tmp_path), "PGPASSWORD": server.password}
    dsn, text = {
        "unreachable": ("host=127.0.0.1 port=1 user=bench dbname=postgres connect_timeout=3",
                        'cannot connect to the DSN: connection to server at "127.0.0.1", port 1 failed: Connection refused'),
        "wrong password": (server.dsn(), "cannot connect to the DSN"),
        "no CREATEDB": (server.dsn(NO_CREATEDB), f"the role {NO_CREATEDB} may not create databases (CREATEDB)"),
        "password in the DSN": (server.dsn() + " password=secret", "the DSN carries a password"),
    }[case]
    if case == "wrong password":
        env["PGPASSWORD"] = "not-the-password"
    databases = server.databases()
    r = repro("run", "parallel", "--dsn", dsn, "--scale", "tiny", "--wait", env=env, timeout=120)
    _one_line_error(r, text)
    assert server.password not in r.stderr + r.stdout
    assert server.databases() == databases and not _containers_left() and not list(tmp_path.rglob("*.json"))


def test_an_interrupted_run_drops_its_scratch_database(server: ExistingServer, tmp_path: Path) -> None:
    env = {**os.environ, "REPRO_RESULTS": str(tmp_path), "PGPASSWORD": server.password, "PYTHONUNBUFFERED": "1"}
    databases = server.databases()
    proc = subprocess.Popen([sys.executable, "-m", "repro", "run", "auto_explain", "--dsn", server.dsn(),
                             "--scale", "tiny", "--wait"], cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    for line in proc.stderr:
        if "round 1 ·" in line or time.monotonic() > deadline:
            break
    assert any(re.fullmatch(r"repro_[0-9a-f]+_\d+", d) for d in server.databases()), "the run is in its database"
    proc.send_signal(signal.SIGINT)
    proc.stderr.read()
    assert proc.wait(timeout=60) == 130
    assert server.databases() == databases and not _containers_left()
