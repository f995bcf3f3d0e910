"""Bad input: one clear line on stderr and a non-zero exit; `check` judges alike in text and JSON."""
from __future__ import annotations

import json
import os
import re
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
    (["run", "auto_explain", "--scale", "huge"], {}, "argument --scale: invalid choice: 'huge'"),
    (["run", "auto_explain", "--pg", "8"], {}, "argument --pg: PostgreSQL 8 is not one of the majors"),
    (["run", "auto_explain", "--pg", "17,x"], {}, "PostgreSQL x is not one of the majors"),
    (["run", "auto_explain", "--pg", ","], {}, "argument --pg: takes one or more majors"),
    (["check", "auto_explain", "--pg", "13,8"], {}, "PostgreSQL 8 is not one of the majors"),
    (["compare", "auto_explain", "--pg", "8"], {}, "argument --pg: invalid choice: '8'"),
    (["noise", "--scale", "huge"], {}, "argument --scale: invalid choice: 'huge'"),
    (["images", "--only", "no_such_chapter"], {}, "unknown chapter 'no_such_chapter'"),
    (["images", "--pg", "8"], {}, "argument --pg: PostgreSQL 8 is not one of the majors"),
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


@pytest.mark.parametrize("args, images", [
    (["--only", "eic", "--pg", "13,16"], "13 16"),
    (["--only", "partitions"], "11 17"),
    (["--only", "semaphores,eic", "--pg", "18"], "--control 9.6 15 18"),
    ([], "--control 9.6 11 15 17"),
])
def test_images_names_what_the_runs_use(args: list[str], images: str) -> None:
    """`make image` builds these: the majors under test, those run beside them, and the
    semaphores control with the 15 it is built on."""
    done = repro("images", *args)
    assert done.returncode == 0 and done.stdout.strip() == images, done.stderr


def test_a_chapter_declares_the_servers_it_starts_beside_its_own() -> None:
    """A chapter whose experiment starts other majors' servers (lab.beside.lab_for, ctx.beside)
    declares their images (BESIDE), or `make image` would not build them."""
    from repro import registry
    for name, chapter in registry.chapters().items():
        text = (chapter.package / "experiment.py").read_text()
        starts = "lab_for(" in text or "ctx.beside(" in text
        assert starts == bool(chapter.beside), f"{name}: BESIDE {chapter.beside}"


def test_check_without_result_and_with_corrupt_result(tmp_path: Path) -> None:
    r = repro("check", "auto_explain", REPRO_RESULTS=str(tmp_path))
    assert r.returncode == 2 and "no result for auto_explain on PostgreSQL 17" in r.stderr
    (tmp_path / "auto_explain").mkdir()
    (tmp_path / "auto_explain" / "pg17-default.json").write_text("{ truncated")
    r = repro("check", "auto_explain", REPRO_RESULTS=str(tmp_path))
    assert r.returncode == 2 and "corrupt" in r.stderr and "python -m repro run" in r.stderr
    r = repro("check", "auto_explain", "--scale", "huge", REPRO_RESULTS=str(tmp_path))
    assert r.returncode == 2 and "argument --scale: invalid choice: 'huge'" in r.stderr


def test_list_names_every_chapter() -> None:
    r = repro("list")
    assert r.returncode == 0 and r.stdout.startswith("auto_explain")


def _stored(tmp_path: Path, chapter: str, major: str, **changed: str) -> None:
    """The newest stored run of a chapter on a major, at the default scale, as this build's
    result in tmp_path (REPRO_RESULTS), with its key changed as given."""
    name = f"pg{major}-default"
    doc = json.loads(sorted((ROOT / "results" / chapter).glob(f"{name}-*.json"))[-1].read_text())
    doc["key"].update(changed)
    (tmp_path / chapter).mkdir()
    (tmp_path / chapter / f"{name}.json").write_text(json.dumps(doc))


def test_check_judges_alike_in_text_and_json(tmp_path: Path) -> None:
    """A run of an older experiment (a stored run on 17 under a key no experiment had),
    which no pool holds: `check` judges it alone in text and in JSON, the same findings with
    the same statuses, and exits alike."""
    _stored(tmp_path, "auto_explain", "17", experiment="0" * 16)
    text = repro("check", "auto_explain", REPRO_RESULTS=str(tmp_path))
    as_json = repro("check", "auto_explain", "--json", REPRO_RESULTS=str(tmp_path))
    judged = json.loads(as_json.stdout)[0]
    assert judged["runs"] == 1 and judged["verdicts"] == judged["this_run"]
    shown = dict(re.findall(r"^  (\S+) (.+?) +\[", text.stdout, flags=re.M))
    assert shown == {v["id"]: v["status"].upper() if v["status"] not in ("changed", "not applicable")
                     else v["badge"]["en"] for v in judged["verdicts"]}, text.stdout
    assert len(shown) == 7 and text.returncode == as_json.returncode


def test_check_of_a_run_where_the_chapter_does_not_apply(tmp_path: Path) -> None:
    """Partitions on 10 (no hash partitioning): not applicable in text and in JSON, exit 0."""
    _stored(tmp_path, "partitions", "10")
    text = repro("check", "partitions", "--pg", "10", REPRO_RESULTS=str(tmp_path))
    as_json = repro("check", "partitions", "--pg", "10", "--json", REPRO_RESULTS=str(tmp_path))
    assert text.returncode == as_json.returncode == 0, as_json.stderr
    assert "not applicable: Applies to PostgreSQL 11 or later" in text.stdout
    assert {v["status"] for v in json.loads(as_json.stdout)[0]["verdicts"]} == {"not applicable"}
