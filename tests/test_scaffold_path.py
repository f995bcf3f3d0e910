"""The contributor's path, walked as the guide (docs/contributing.md) gives it, in a copy of
the project: `python -m repro new`, a tiny run, `repro check`, the site in both languages
with its catalogue check, and the chapter's tests. A new chapter passes all of it unedited.

It runs a chapter in containers, so it is one of the tests that measure (conftest.MEASURING:
"test_scaffold"): it runs alone, not beside the work aside of runs (whose shared lock its
run would wait on). Its own work that measures nothing (the site, the tests) goes aside
(scripts/aside.sh) of other measuring runs on this engine."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAME = "walked_path"  # no chapter of the project's, not even one a contributor made with `repro new demo`


def _copy(to: Path) -> None:
    """The project's files as they stand (tracked and new, edits included), the venv linked."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout.split("\0")
    for rel in filter(None, listed):
        if (ROOT / rel).is_file():
            (to / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, to / rel)
    if (ROOT / ".venv").exists():
        (to / ".venv").symlink_to((ROOT / ".venv").resolve())


def _only(tree: Path, name: str) -> None:
    """Leave `name` the project's only chapter (package, page, test, table of contents): the
    site then builds in seconds, and every page, the matrix and sources included, shows it."""
    index = tree / "docs" / "index.md"
    for package in (tree / "repro" / "chapters").iterdir():
        other = package.name
        if package.is_dir() and other not in (name, "__pycache__"):
            shutil.rmtree(package)
            (tree / "docs" / "chapters" / f"{other}.md").unlink(missing_ok=True)
            (tree / "tests" / f"test_chapter_{other}.py").unlink(missing_ok=True)
            index.write_text(index.read_text(encoding="utf-8").replace(f"chapters/{other}\n", ""), encoding="utf-8")


def test_a_new_chapter_walks_the_guides_path(tmp_path: Path) -> None:
    assert not (ROOT / "repro" / "chapters" / NAME).exists()
    tree = tmp_path / "project"
    _copy(tree)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "REPRO"))}
    env |= {"REPRO_RESULTS": str(tree / "_build" / "results"), "REPRO": "cached", "SCALE": "tiny"}
    timings: dict[str, float] = {}

    def step(what: str, *cmd: str) -> str:
        start = time.monotonic()
        done = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True)
        timings[what] = round(time.monotonic() - start, 1)
        assert done.returncode == 0, f"{what}: {' '.join(cmd)}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        return done.stdout

    py = sys.executable
    step("new", py, "-m", "repro", "new", NAME)
    assert (tree / "repro" / "chapters" / NAME / "registered.json").exists()
    _only(tree, NAME)
    step("run", py, "-m", "repro", "run", NAME, "--scale", "tiny", "--wait")
    assert "F1" in step("check", py, "-m", "repro", "check", NAME, "--scale", "tiny")
    aside = str(tree / "scripts" / "aside.sh")
    sphinx = [aside, py, "-m", "sphinx", "-c", ".", "-W", "--keep-going", "-n", "-q", "-b", "html", "-D"]
    start = time.monotonic()
    builds = [subprocess.Popen([*sphinx, f"language={lang}", "docs", f"_build/html/{lang}"], cwd=tree, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for lang in ("ja", "en")]
    for build in builds:
        out, _ = build.communicate()
        assert build.returncode == 0, out[-3000:]
    timings["site (ja, en)"] = round(time.monotonic() - start, 1)
    english = (tree / "_build" / "html" / "en" / "chapters" / f"{NAME}.html").read_text(encoding="utf-8")
    assert "(English title)" in english and "How it is reproduced" in english
    step("catalogues", aside, py, "scripts/check_po.py")
    tests = step("tests", aside, py, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"tests/test_chapter_{NAME}.py",
         "tests/test_chapters.py", "tests/test_claims.py", "tests/test_pooling.py", "-k", NAME)
    assert " failed" not in tests and " passed" in tests, tests
    print(tests.strip().splitlines()[-1], "\nthe path's steps, in seconds:", timings)
