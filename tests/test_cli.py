"""Bad input: one clear line on stderr and a non-zero exit."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def repro(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "repro", *args], cwd=ROOT, capture_output=True,
                          text=True, env={**os.environ, **env}, timeout=120)


@pytest.mark.parametrize("args, env, message", [
    (["run", "no_such_chapter"], {}, "unknown chapter 'no_such_chapter'; known chapters: auto_explain"),
    (["check", "no_such_chapter"], {}, "unknown chapter"),
    (["run", "auto_explain", "--scale", "huge"], {}, "unknown scale 'huge'; scales: tiny, default, full"),
    (["run", "auto_explain", "--pg", "8"], {}, "PostgreSQL 8 is not one of the majors"),
    (["run", "auto_explain", "--pg", "17,x"], {}, "PostgreSQL x is not one of the majors"),
    (["run", "auto_explain", "--scale", "tiny"], {"DOCKER_HOST": "unix:///nonexistent/docker.sock"},
     "no Docker engine reachable at unix:///nonexistent/docker.sock"),
    (["run", "auto_explain", "--dsn", "host=127.0.0.1 port=1 dbname=x connect_timeout=3"], {},
     "cannot connect to the DSN"),
    (["run", "auto_explain", "--dsn", "host=127.0.0.1 port=1 password=secret"], {},
     "the DSN carries a password"),
    (["run", "wait_events", "--server-cpus", "4"], {}, "--server-cpus declares an existing server's CPU count (--dsn)"),
    (["run", "wait_events", "--dsn", "host=127.0.0.1 port=1 dbname=x", "--server-cpus", "0"], {},
     "--server-cpus must be a positive number of CPUs, not 0"),
    (["run", "wait_events", "--server-cpus", "many"], {}, "argument --server-cpus: invalid int value: 'many'"),
    (["matrix", "no_such_chapter"], {}, "unknown chapter 'no_such_chapter'"),
    (["matrix", "--pg", "8"], {}, "PostgreSQL 8 is not one of the majors"),
    (["archive", "--machine", "Bad Name"], {}, "--machine takes a short name"),
])
def test_bad_input(args: list[str], env: dict[str, str], message: str) -> None:
    r = repro(*args, **env)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], r.stderr


def test_check_without_result_and_with_corrupt_result(tmp_path: Path) -> None:
    r = repro("check", "auto_explain", REPRO_RESULTS=str(tmp_path))
    assert r.returncode == 2 and "no result for auto_explain on PostgreSQL 17" in r.stderr
    (tmp_path / "auto_explain").mkdir()
    (tmp_path / "auto_explain" / "pg17-default.json").write_text("{ truncated")
    r = repro("check", "auto_explain", REPRO_RESULTS=str(tmp_path))
    assert r.returncode == 2 and "corrupt" in r.stderr and "python -m repro run" in r.stderr
    r = repro("check", "auto_explain", "--scale", "huge", REPRO_RESULTS=str(tmp_path))
    assert r.returncode == 2 and "unknown scale 'huge'" in r.stderr


def test_list_names_every_chapter() -> None:
    r = repro("list")
    assert r.returncode == 0 and r.stdout.startswith("auto_explain")
