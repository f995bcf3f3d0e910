"""What every chapter owes the contract, checked per chapter of the registry: its wiring,
that no check is vacuous, and that its result (tiny scale, or a fresh stored one)
contradicts no expected finding and builds every piece of its page."""
from __future__ import annotations

import dataclasses
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import chapter_result

from repro import registry
from repro.chapter import PAGE_DIRECTIVES, SOURCE_FIELDS, Run
from repro.scales import SCALES
from repro.stats import Rounds
from repro.verdict import (CHANGED, CONTRADICTED, NOT_APPLICABLE, REPRODUCED, SANITY, Above, Below, Between,
                           Check, Environment, Measure)
from repro.wording import Wording

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = registry.names()  # a chapter that does not load fails its own tests only


@pytest.mark.parametrize("name", CHAPTERS)
def test_chapter_is_wired(name: str) -> None:
    chapter = registry.get(name)
    assert (chapter.package / "experiment.py").exists()
    assert set(chapter.scales) == set(SCALES)
    assert chapter.original["sources"] and all(set(SOURCE_FIELDS) <= set(s)
                                               for s in chapter.original["sources"])
    page = (ROOT / "docs" / "chapters" / f"{name}.md").read_text()
    for directive in PAGE_DIRECTIVES:
        assert f"{{{directive}}} {name}" in page, directive
    for table in chapter.tables:
        assert f"{{repro-table}} {name} {table}" in page, table
    for chart in chapter.charts:
        assert f"{{repro-chart}} {name} {chart}" in page, chart
    included = set(re.findall(r"```\{literalinclude\} /?\.\./repro/chapters/" + name + r"/files/(\S+)", page))
    files = {p.name for p in (chapter.package / "files").glob("*")} if (chapter.package / "files").exists() else set()
    assert files <= included, f"files the page does not include: {files - included}"
    assert (ROOT / "locale" / "en" / "LC_MESSAGES" / "chapters" / f"{name}.po").exists()
    assert (ROOT / "tests" / f"test_chapter_{name}.py").exists()
    assert f"chapters/{name}\n" in (ROOT / "docs" / "index.md").read_text()
    assert len({f.id for f in chapter.findings}) == len(chapter.findings)
    words = Wording(chapter.package / "findings.toml", {})
    assert set(words.entries) == {f.id for f in chapter.findings}, "each finding has its words, and only findings"
    cited = {f.cite.source for f in chapter.findings if f.cite}
    assert cited <= {s["id"] for s in chapter.original["sources"]}, "a finding cites a source the chapter lists"


def _sides(threshold) -> tuple[float, float]:
    """A value on the finding's side of a threshold, and one on the other side."""
    if isinstance(threshold, Above):
        margin = max(1.0, abs(threshold.limit)) / 2
        return threshold.limit + margin, threshold.limit - margin
    if isinstance(threshold, Below):
        margin = max(1.0, abs(threshold.limit)) / 2
        return threshold.limit - margin, threshold.limit + margin
    assert isinstance(threshold, Between)
    return (threshold.low + threshold.high) / 2, threshold.high + (threshold.high - threshold.low)


@pytest.mark.parametrize("name", CHAPTERS)
def test_every_check_can_fail(name: str) -> None:
    """Fed a value on the wrong side of any one of its thresholds, each finding is contradicted
    (changed, from the major that changed it on); with every value on its side it is
    reproduced: no check is one that cannot fail."""
    for finding in registry.get(name).findings:
        def judged(values: list[float], major: int = 17) -> str:
            checks = [Check(Measure(c.measure.label, lambda r, v=v: v, c.measure.unit, exact=True),
                            c.threshold) for c, v in zip(finding.checks, values)]
            return dataclasses.replace(finding, checks=checks, requires=(), explain=None, over=None
                                       ).judge(Rounds({}), Environment(major, 2, frozenset(), {})).status
        before = finding.changed_in.major - 1 if finding.changed_in else 17
        good = [_sides(c.threshold)[0] for c in finding.checks]
        assert judged(good, before) == REPRODUCED, finding.id
        for i, check in enumerate(finding.checks):
            bad = good[:i] + [_sides(check.threshold)[1]] + good[i + 1:]
            assert judged(bad, before) == CONTRADICTED, (finding.id, i)
            if finding.changed_in:  # from the major that changed it on, the same value is news
                assert judged(bad, finding.changed_in.major) == CHANGED, (finding.id, i)


def _counted(value: Any) -> bool:
    """A dict of counts (events, syscalls, errors by name), or an empty one."""
    return isinstance(value, dict) and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in value.values())


def _words(value: Any, key: str = "") -> tuple[set[str], dict[str, set[str]]]:
    """The run's texts, and per key of a dict of counts the names it counts anywhere."""
    texts, names = set(), {}
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for k, v in items:
        more_texts, more_names = _words(v, k if isinstance(k, str) else key)
        texts |= more_texts
        for n, found in more_names.items():
            names.setdefault(n, set()).update(found)
    if isinstance(value, str):
        texts.add(value)
    if _counted(value):
        names.setdefault(key, set()).update(value)
    return texts, names


def _perturbed(value: Any, rng: random.Random, texts: list[str], names: dict[str, set[str]],
               key: str = "") -> Any:
    """The raw data with every measured number scaled by its own random factor (a zero made
    one to nine), yes/no outcomes flipped, texts (plans, tool output) swapped for another
    text of the run or blanked, a count added of a name that a dict under the same key
    counts elsewhere in the run, and empty values filled, each at random (round numbers stay)."""
    if isinstance(value, dict):
        out = {k: v if k == "round" else _perturbed(v, rng, texts, names, k) for k, v in value.items()}
        if _counted(value) and names.get(key) and rng.random() < 0.5:
            out.setdefault(rng.choice(sorted(names[key])), rng.randint(1, 9))
        return out
    if isinstance(value, list):
        return [_perturbed(v, rng, texts, names, key) for v in value]
    if isinstance(value, bool):
        return value if rng.random() < 0.5 else not value
    if isinstance(value, str):
        return value if rng.random() < 0.5 else rng.choice(texts + [""])
    if value is None:
        return None if rng.random() < 0.5 else "perturbed"
    if not isinstance(value, (int, float)):
        return value
    if value == 0:
        return value if rng.random() < 0.5 else type(value)(rng.randint(1, 9))
    scaled = value * rng.uniform(0.3, 3.0)
    return round(scaled) if isinstance(value, int) else scaled


def _value(measure: Measure, raw: dict[str, Any]) -> Any:
    try:
        return measure.statistic(Rounds(raw))
    except Exception as exc:  # the perturbed data broke the statistic: it did read the data
        return repr(exc)


# Each perturbation adds a given counted name to a given dict with chance 1/4 at worst (half
# the time a name, one of two): 10 tries missed it 5.6 % of the time (0.75^10), 60 tries
# miss it once in 30,000 runs.
PERTURBATIONS = 60

# findings whose measures only a kind of event that the run did not see can move (no
# perturbation of its own names makes one up): each chapter's test crafts those runs
MOVED_BY_CRAFTED_RUNS = {
    ("semaphores", "F6"): "test_f6_fails_when_futex_fails_for_other_reasons_or_semop_fails (another errno, a semop error)",
}


@pytest.mark.parametrize("name", CHAPTERS)
def test_every_measure_depends_on_the_data(name: str) -> None:
    """A measure that gives the same value whatever was measured is constant by construction:
    perturbing the run's raw data must move each measure of every finding that is not
    declared a sanity check."""
    doc, _ = chapter_result(name)
    run = Run(registry.get(name), doc)
    found, names = _words(doc["raw"])
    texts = sorted(found)
    constant = []
    for v in run.verdicts:
        if v.finding.kind == SANITY or v.status == NOT_APPLICABLE or (name, v.finding.id) in MOVED_BY_CRAFTED_RUNS:
            continue
        for c in v.finding.checks:
            before = _value(c.measure, doc["raw"])
            if before is None or isinstance(before, str):
                continue  # not measured in this run
            if all(_value(c.measure, _perturbed(doc["raw"], random.Random(seed), texts, names)) == before
                   for seed in range(PERTURBATIONS)):
                constant.append(f"{v.finding.id}: {c.measure.label.en}")
    assert not constant, f"measures that no change of the data moves: {constant}"


@pytest.mark.parametrize("name", CHAPTERS)
def test_expected_findings_are_not_contradicted(name: str) -> None:
    """`make test`'s policy: an expected finding contradicted (or a mechanism that fails) is a
    failure; inconclusive is not. None may be "not applicable" on this machine, except one
    scoped to other majors than the default or needing a package the image could not install
    (test_images checks what each image has)."""
    doc, _ = chapter_result(name)
    run = Run(registry.get(name), doc)
    failed = [f"{v.finding.id}: " + "; ".join(f"{c.check.measure.label.en} {c.number().format('en')} "
                                               f"({c.check.threshold.text(c.check.measure).en})"
                                               for c in v.checks)
              for v in run.verdicts if v.failed]
    assert not failed, failed
    env = run.environment
    assert not [v.finding.id for v in run.verdicts if v.finding.expected and v.status == NOT_APPLICABLE
                and not all(r.of_major or r.of_image for r in v.finding.requires if not r.met(env))]


@pytest.mark.parametrize("name", CHAPTERS)
def test_pages_pieces_build_from_the_result(name: str) -> None:
    doc, _ = chapter_result(name)
    chapter = registry.get(name)
    run = Run(chapter, doc)
    for build in chapter.tables.values():
        table = build(run)
        assert table.rows and all(len(row) == len(table.columns) for row in table.rows)
    for build in chapter.charts.values():
        chart = build(run)
        assert chart.series and all(len(s.values) == len(chart.categories) for s in chart.series)
    assert all(n.format("en") for n in chapter.numbers(run).values())


def test_the_site_layer_imports_no_lab() -> None:
    code = ("import sys, repro.site.sphinxext as s, repro.registry as r; r.chapters(); "
            "print(sorted(m for m in ('docker', 'psycopg', 'testcontainers') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"


def test_readme_lists_every_chapter() -> None:
    """The README's chapter list is generated (the scaffold and `python -m repro readme`)."""
    from repro.readme import block, chapter_names
    assert block(chapter_names(ROOT)) in (ROOT / "README.md").read_text()
    assert chapter_names(ROOT) == CHAPTERS


def test_a_contributed_run_is_pooled_apart_by_machine(tmp_path, monkeypatch) -> None:
    """`repro archive --machine NAME` keeps a run in results/CHAPTER/NAME/: the pages list it
    by machine, pooled apart from the project's runs and other machines'."""
    from repro import results
    from repro.site.machines import machine_rows
    doc, _ = chapter_result("eic")
    monkeypatch.setattr(results, "history", lambda: tmp_path)
    for machine, copies in (("laptop", 2), ("big-server", 1)):
        for i in range(copies):
            started = f"2026-01-0{i + 1}T00:00:00+00:00"
            results.archive({**doc, "provenance": {**doc["provenance"], "started": started}}, machine)
    rows = {(r["machine"], r["major"]): r for r in machine_rows(["eic"], doc["scale"])}
    assert set(rows) == {("laptop", doc["major"]), ("big-server", doc["major"])}
    assert rows["laptop", doc["major"]]["runs"] == 2 and rows["big-server", doc["major"]]["runs"] == 1
    assert sum(rows["laptop", doc["major"]]["verdicts"].values()) == len(registry.get("eic").findings)
    assert not [p for p, _ in results.files("eic", build=False) if tmp_path in p.parents], \
        "a contributed run is not one of the project's"
