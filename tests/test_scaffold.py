"""`python -m repro new` writes a chapter that imports, runs at tiny scale and is wired in."""
import importlib.util
import json
import shutil
from pathlib import Path

import pytest

from repro import runner, scaffold
from repro.errors import ReproError
from repro.lab import Lab

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for d in ("repro/chapters", "docs/chapters", "tests"):
        (tmp_path / d).mkdir(parents=True)
    shutil.copy(ROOT / "docs" / "index.md", tmp_path / "docs" / "index.md")
    return tmp_path


def test_new_chapter_runs_and_is_wired(tree: Path) -> None:
    paths = scaffold.create("demo_chapter", tree)
    assert {p.relative_to(tree).as_posix() for p in paths} == {
        "repro/chapters/demo_chapter.py", "docs/chapters/demo_chapter.md",
        "tests/test_chapter_demo_chapter.py", "docs/index.md"}
    toc = (tree / "docs" / "index.md").read_text()
    assert "chapters/replication\nchapters/demo_chapter\n" in toc  # appended after the last chapter
    spec = importlib.util.spec_from_file_location(
        "repro.chapters.demo_chapter", tree / "repro" / "chapters" / "demo_chapter.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    doc, _ = runner.run(module.CHAPTER, "tiny", out=lambda line: None)
    assert [f["id"] for f in doc["findings"]] == ["F1"]
    assert doc["summary"]["tps"]["off"] > 0
    page = (tree / "docs" / "chapters" / "demo_chapter.md").read_text()
    assert "{repro-table} demo_chapter tps" in page


def test_new_chapter_runs_against_an_existing_server_by_dsn(tree: Path) -> None:
    """The DSN target: a server the run did not start, pgbench in a helper container."""
    scaffold.create("dsn_demo", tree)
    spec = importlib.util.spec_from_file_location(
        "repro.chapters.dsn_demo", tree / "repro" / "chapters" / "dsn_demo.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with Lab() as lab:
        existing = lab.server()
        doc, _ = runner.run(module.CHAPTER, "tiny", dsn=existing.conninfo(), out=lambda line: None)
        assert existing.sql("SELECT count(*) FROM pgbench_branches") == [(1,)]
    assert doc["provenance"]["target"] == "external server (DSN)"
    assert doc["key"]["target"].startswith("dsn:") and "password" not in json.dumps(doc)
    assert doc["summary"]["tps"]["on"] > 0


@pytest.mark.parametrize("name, message", [("Bad-Name", "lower-case"),
                                           ("auto_explain", "exists already")])
def test_bad_names(tree: Path, name: str, message: str) -> None:
    with pytest.raises(ReproError, match=message):
        scaffold.create(name, tree)
