"""`python -m repro new` writes a chapter that imports, runs at tiny scale, is wired in and is
translated; the README's chapter list follows."""
import json
import re
import shutil
from pathlib import Path

import pytest

from repro import claims, cli, compare, registry, scaffold
from repro.chapter import Run
from conftest import Watcher
from repro.errors import ReproError
from repro.lab import runner
from repro.lab.existing import without_password
from repro.lab.harness.containers import leftovers
from repro.lab.servers import Lab

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A bare project tree; the demo chapters' results go there too, not into _build."""
    monkeypatch.setenv("REPRO_RESULTS", str(tmp_path / "results"))
    for d in ("repro/chapters", "docs/chapters", "tests", "locale/en/LC_MESSAGES/chapters"):
        (tmp_path / d).mkdir(parents=True)
    shutil.copy(ROOT / "docs" / "index.md", tmp_path / "docs" / "index.md")
    shutil.copy(ROOT / "README.md", tmp_path / "README.md")
    shutil.copy(ROOT / "CITATION.cff", tmp_path / "CITATION.cff")
    return tmp_path


def test_new_chapter_runs_and_is_wired(tree: Path) -> None:
    last = re.findall(r"^chapters/\w+$", (tree / "docs" / "index.md").read_text(), flags=re.M)[-1]
    paths = scaffold.create("demo_chapter", tree)
    rel = {p.relative_to(tree).as_posix() for p in paths}
    assert {"docs/chapters/demo_chapter.md", "tests/test_chapter_demo_chapter.py", "docs/index.md",
            "locale/en/LC_MESSAGES/chapters/demo_chapter.po", "README.md",
            "repro/chapters/demo_chapter/experiment.py", "repro/chapters/demo_chapter/findings.py",
            "repro/chapters/demo_chapter/conditions.py", "repro/chapters/demo_chapter/sizes.toml", "CITATION.cff",
            "repro/chapters/demo_chapter/files/postgresql.conf"} <= rel
    toc = (tree / "docs" / "index.md").read_text()
    assert f"{last}\nchapters/demo_chapter\n" in toc  # appended after the last chapter
    assert "`demo_chapter`" in (tree / "README.md").read_text()
    assert 'title: "(題名)"' in (tree / "CITATION.cff").read_text()
    assert {p.relative_to(tree) for p in paths} >= {Path(str(p).replace(scaffold.PLACEHOLDER, "demo_chapter"))
                                                     for p in scaffold.template_files()}, "every template file"
    chapter = scaffold.load(tree, "demo_chapter")
    assert not claims.differences(chapter) and not claims.size_differences(chapter)  # registered as made
    assert all(r["after"] == [] for e in claims.load(chapter).values() for r in e["revisions"])  # before any run
    doc, _ = runner.run(chapter, "tiny", out=lambda line: None)
    verdicts = Run(chapter, doc).verdicts
    assert [v.finding.id for v in verdicts] == ["F1"] and verdicts[0].checks[0].estimate.value
    page = (tree / "docs" / "chapters" / "demo_chapter.md").read_text()
    assert "{repro-table} demo_chapter tps" in page and "files/postgresql.conf" in page


def test_new_chapter_runs_against_an_existing_server_by_dsn(
        tree: Path, watcher: Watcher, monkeypatch: pytest.MonkeyPatch,
        capfd: pytest.CaptureFixture[str]) -> None:
    """The DSN target: a server the run did not start, pgbench in a helper container, the
    password from PGPASSWORD as libpq takes it, the tables in a scratch database that the run
    drops. The password shows nowhere: not in the run's output or result, `docker inspect` of
    a container or exec, `docker events` or `ps`. A chapter that compares with the server's
    CPU count records it as unknown there; the count the user declares takes its place."""
    scaffold.create("dsn_demo", tree)
    experiment = tree / "repro" / "chapters" / "dsn_demo" / "experiment.py"
    source = experiment.read_text()
    assert "    p = ctx.params\n" in source
    experiment.write_text(source.replace("    p = ctx.params\n", "    p = ctx.params\n    ctx.record("
                                         "\"engine_cpus\", None if ctx.external else 2)\n"))
    chapter = scaffold.load(tree, "dsn_demo")
    output: list[str] = []
    with Lab() as lab:
        existing = lab.server("existing")
        monkeypatch.setenv("PGPASSWORD", lab.password)
        dsn = without_password(existing.conninfo())
        doc, _ = runner.run(chapter, "tiny", dsn=dsn, out=output.append, server_cpus=3)
        again, reused = runner.run(chapter, "tiny", dsn=dsn, out=output.append, server_cpus=3)
        assert reused and again["provenance"]["started"] == doc["provenance"]["started"]
        _, reused = runner.run(chapter, "tiny", dsn=dsn, out=output.append, server_cpus=4)
        assert not reused, "another declared count is another run"
        assert existing.sql("SELECT datname FROM pg_database WHERE datname LIKE 'repro%'") == []
    watcher.stop()
    assert doc["raw"]["engine_cpus"] == 3 and doc["provenance"]["server_cpus_declared"] == 3
    assert Run(chapter, doc).environment.cpus == 3
    assert compare.machine(doc)["cpu"].startswith("server: 3 (--server-cpus); pgbench's host: ")
    assert "?" not in compare.machine(doc)["cpu"], "an unknown CPU model is said, not shown as '?'"
    assert doc["provenance"]["target"] == "external server (DSN)"
    assert doc["key"]["target"] == f"dsn:{dsn}" and "password" not in json.dumps(doc)
    assert doc["raw"]["rounds"]["on"][0]["tps"] > 0
    log = capfd.readouterr()
    assert "round 1" in log.err and watcher.privileged == []
    leaked = [s for s in [*watcher.seen, *output, log.out, log.err, json.dumps(doc)] if lab.password in s]
    assert leaked == [], f"the password shows in: {leaked[0][:300]}"


def test_a_build_goes_on_past_a_chapter_that_stops_and_says_which_did(
        tree: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A matrix is hours of runs: one chapter's error on one major is reported with its
    traceback and the build's exit status, the other runs still happen, and the stopped run
    leaves no container behind."""
    scaffold.create("broken_demo", tree)
    experiment = tree / "repro" / "chapters" / "broken_demo" / "experiment.py"
    source = experiment.read_text()
    assert 'server.pgbench_init(p["scale"])' in source
    experiment.write_text(source.replace('server.pgbench_init(p["scale"])',
                                         'server.sql("SELECT * FROM no_such_table")'))
    scaffold.create("demo_chapter", tree)
    chapters = {name: scaffold.load(tree, name) for name in ("broken_demo", "demo_chapter")}
    monkeypatch.setattr(registry, "get", chapters.__getitem__)
    before = set(leftovers())
    rc = cli.main(["build", "--scale", "tiny", "--only", "broken_demo,demo_chapter"])
    out, err = capsys.readouterr()
    assert rc == 1
    assert 'error: broken_demo on PostgreSQL 17 stopped: UndefinedTable: relation "no_such_table"' in err
    assert "Traceback" in err and "error: 1 run(s) stopped" in err.splitlines()[-1]
    assert "demo_chapter on PostgreSQL 17: ran" in out
    assert not list((tree / "results").glob("broken_demo/*.json"))
    assert list((tree / "results").glob("demo_chapter/pg17-tiny.json"))
    assert set(leftovers()) <= before


@pytest.mark.parametrize("name, message", [("Bad-Name", "lower-case"),
                                           ("auto_explain", "exists already")])
def test_bad_names(tree: Path, name: str, message: str) -> None:
    with pytest.raises(ReproError, match=message):
        scaffold.create(name, tree)
