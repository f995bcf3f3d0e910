"""Shared fixtures.

Tests that measure (they start servers or containers, or run a chapter when no fresh result
is there) are marked `measures`: `make test` runs them one at a time, alone on the machine but
for the block of runs whose numbers nobody judges (tests/unjudged.py), which goes on beside
those that judge nothing they measure; then the rest on every core (pytest-xdist), aside of
any measuring run. Tests that start servers only to see them start, and time nothing, run
there too: the images' own (tests/test_images.py) and every major's relocatable binaries
(tests/test_binaries.py).

Chapter results: a test reuses a fresh stored result of the chapter on the default major
(tiny scale or larger: `make html` made the default one in CI) and otherwise runs the
chapter once at tiny scale, so each chapter runs at most once per session.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import time
from concurrent.futures import Future, wait
from pathlib import Path
from typing import Any, Iterator

import pytest

from repro import registry, results
from repro.majors import DEFAULT_MAJOR
from repro.scales import SCALES

MEASURING = ("test_chapter_", "test_chapters", "test_provenance", "test_lab", "test_scaffold",
             "test_existing_server", "test_cli", "test_benchmarks_run", "test_local_clusters")
_done: dict[str, tuple[dict[str, Any], bool]] = {}


def site_scale() -> str:
    """The scale of the results the site under test shows: SCALE for a site built elsewhere
    (SITE_DIR, CI's), else the smallest scale of this build's results, at which the tests'
    own site is built (test_site.site)."""
    if os.environ.get("SITE_DIR"):
        return os.environ.get("SCALE", "default")
    return min({chapter_result(name)[0]["scale"] for name in registry.chapters()})


def chapter_result(name: str) -> tuple[dict[str, Any], bool]:
    """(result, reused): a fresh stored result, else a new tiny run (printed lines dropped)."""
    if name not in _done:
        from repro.lab import runner
        chapter = registry.get(name)
        for scale in reversed(SCALES):  # the largest fresh one
            key = chapter.experiment_hash(scale)
            try:
                doc = results.load(results.path_for(name, DEFAULT_MAJOR, scale), name)
            except results.CorruptResult:
                continue
            if doc and doc["key"]["experiment"] == key and "unavailable" not in doc:
                _done[name] = (doc, True)
                break
        else:
            if os.environ.get("PYTEST_XDIST_WORKER"):  # beside other tests: it would measure
                pytest.fail(f"no fresh result of {name}: the tests marked `measures` run the chapters "
                            "first (make test)")
            after_the_block()  # its findings are judged
            _done[name] = runner.run(chapter, "tiny", DEFAULT_MAJOR, out=lambda line: None)
    return _done[name]


@pytest.hookimpl(tryfirst=True)  # before -m deselects by the mark
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.stem.startswith(MEASURING):
            item.add_marker(pytest.mark.measures)
    # the block of runs nobody judges goes on beside the tests that neither wait for it nor
    # read it: those first, then the ones that wait for it, then its readers
    items.sort(key=_beside_the_block)


def _beside_the_block(item: pytest.Item) -> int:
    """0: goes beside the block; 1: waits for it (`quiet`); 2: reads it."""
    fixtures = getattr(item, "fixturenames", ())
    return 2 if "unjudged_runs" in fixtures else 1 if "quiet" in fixtures else 0


FOLDERS = ("REPRO_RESULTS", "RESULTS")  # where the results are read from
_SESSION_FOLDERS = {name: os.environ.get(name) for name in FOLDERS}


@pytest.fixture(autouse=True)
def _store_forgets_a_tests_own_folders(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The site's store caches what it read, per process; a test that points REPRO_RESULTS or
    RESULTS elsewhere must not leave the next test in its worker reading that test's results
    (monkeypatch restores the variables after this fixture's end, so the test's are seen here)."""
    yield
    if any(os.environ.get(name) != value for name, value in _SESSION_FOLDERS.items()):
        from repro.site import store
        for value in vars(store).values():
            if callable(getattr(value, "cache_clear", None)):
                value.cache_clear()


@pytest.fixture
def data_dir() -> Path:
    return Path(__file__).parent / "data"


class Watcher:
    """Everything Docker and the host show of a run while it goes: every `docker inspect`
    of its containers and of their execs, the process list, and afterwards the engine's
    event stream."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.privileged: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def start(self) -> None:
        self.since = time.time() - 1
        self._thread.start()

    def stop(self) -> None:
        if self._stop.is_set():
            return
        self._stop.set()
        self._thread.join()
        from repro.lab.harness import images
        c = images.client()
        self.seen += [json.dumps(e) for e in c.events(since=self.since, until=time.time() + 1, decode=True)]

    def _watch(self) -> None:
        import docker.errors
        from repro.lab.harness import images
        c = images.client()
        while not self._stop.is_set():
            self.seen.append(subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout)
            # The low-level list: the high-level one inspects each container outside this try.
            for container in c.api.containers(all=True, filters={"label": "io.repro.run"}):
                try:
                    attrs = c.api.inspect_container(container["Id"])
                    execs = [c.api.exec_inspect(e) for e in attrs.get("ExecIDs") or []]
                except docker.errors.NotFound:  # gone meanwhile
                    continue
                self.seen += [json.dumps(attrs), *map(json.dumps, execs)]
                if attrs["HostConfig"].get("Privileged"):
                    self.privileged.append(attrs["Name"].lstrip("/"))
                self.privileged += [e["ID"] for e in execs if e["ProcessConfig"].get("privileged")]
            time.sleep(0.05)


@pytest.fixture
def watcher() -> Iterator[Watcher]:
    """A Watcher started for the test; the test stops it before judging what it saw."""
    w = Watcher()
    w.start()
    yield w
    w.stop()


# a size's text (repro/sizes.py): "ours +46.7 % vs original +25.8 %", "本ビルド +46.7% 対 原典 +25.8%"
SIZE_PAIR = re.compile(r"(?:ours|本ビルド) ([+±-]?[\d,]*\d(?:\.\d+)?)\u00a0?(\S*) (?:vs|対) (?:original|原典) "
                       r"([+±-]?[\d,]*\d(?:\.\d+)?)\u00a0?(\S*)")
SAYS_WHAT = re.compile(r"\((?:check|判定条件) \d+\)|\d+ (?:runs?|回の実行)")  # numbers that say what they are
NUMBER = re.compile(r"[+±-]?\d[\d,]*(?:\.(\d+))?")


def unrecomputable_ratios(text: str) -> list[str]:
    """The numbers in a size's text, beside the two it compares, that are not their quotient
    to the precision shown and do not say what else they are (a check's number, a count of
    runs): a ratio the reader cannot recompute from the numbers beside it."""
    text = text.rsplit(" — ", 1)[-1]  # a claim before the size (the front page's list) cites its own numbers
    pair = SIZE_PAIR.search(text)
    if pair is None:
        return []
    ours, original = (float(pair.group(i).replace(",", "").replace("±", "")) for i in (1, 3))
    rest = SAYS_WHAT.sub("", text[:pair.start()] + text[pair.end():])
    return [m.group(0) for m in NUMBER.finditer(rest)
            if original == 0 or float(m.group(0).replace(",", "").replace("±", "")) != round(ours / original, len(m.group(1) or ""))]


_block: list[Future] = []  # the session's block of runs nobody judges, once started


@pytest.fixture(scope="session", autouse=True)
def _unjudged_block(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The session's runs whose numbers nobody judges, side by side in one block in the
    background from the first test on (tests/unjudged.py): those of the tests collected only."""
    import unjudged
    wanted = {name for item in request.session.items for name in getattr(item, "fixturenames", ())}
    if not {"side_by_side", "chapter_runs"} & wanted:
        yield
        return
    with unjudged.in_background(tmp_path_factory.mktemp("unjudged"), roles="side_by_side" in wanted,
                                local="chapter_runs" in wanted) as block:
        _block.append(block)
        yield


@pytest.fixture(scope="session")
def unjudged_runs() -> Any:
    """The block, once its runs are done (its tests come last: pytest_collection_modifyitems)."""
    return _block[0].result()


def after_the_block() -> None:
    """Wait until the block's runs are done, before a run whose numbers a test judges or that
    reads pgbench -r's per-statement times (auto_explain's F1 divides one by another): beside
    the block's CPU load they would read otherwise (README, "Measure on a quiet machine")."""
    wait(_block)


@pytest.fixture
def quiet() -> None:
    """A test that measures and reads what it measured: it starts once the block is done."""
    after_the_block()
