"""Which runs a verdict pools across machines (repro/pooling.py): runs of every machine of
the project's kind, except in a chapter whose values move with the machine itself."""
from __future__ import annotations

import dataclasses
from pathlib import Path

from repro import noise, pooling, registry, results
from repro.text import Text


def test_a_machine_bound_chapter_pools_only_the_runs_on_its_newest_runs_cpu_model() -> None:
    chapter = registry.get("auto_explain")
    stored = sorted((results.ROOT / "results" / "auto_explain").glob("pg17-default-*.json"))[-1]
    doc = results.load(stored, "auto_explain")
    key = {**doc["key"], "experiment": chapter.experiment_hash("default")}

    def run(day: int, model: str) -> tuple[Path, dict]:
        host = {**doc["provenance"]["host"], "cpu_model": model}
        started = f"2030-01-0{day}T10:00:00+00:00"
        return Path(f"pg17-default-2030010{day}.json"), {
            **doc, "key": key, "provenance": {**doc["provenance"], "started": started, "host": host}}

    found = [run(1, "CPU A"), run(2, "CPU B"), run(3, "CPU A")]
    mixed = pooling.gather(chapter, 17, "default", found=found)
    assert len(mixed.runs) == 3 and not mixed.left_out
    bound = dataclasses.replace(chapter, machine_bound=Text("理由", "why"))
    pool = pooling.gather(bound, 17, "default", found=found)
    assert [pooling.machine(r.doc) for r in pool.runs] == ["CPU A", "CPU A"]
    assert [(left.path, "(CPU CPU B)" in left.why.en) for left in pool.left_out] == [(found[1][0], True)]
    newest_elsewhere = pooling.gather(bound, 17, "default", found=[*found, run(4, "CPU B")])
    assert [pooling.machine(r.doc) for r in newest_elsewhere.runs] == ["CPU B", "CPU B"]


def test_only_the_chapters_declared_machine_bound_move_with_the_machine() -> None:
    """Runs on another CPU model pool together only where the values do not move with the
    model: in a chapter not declared machine-bound, at most 5 % of the statistics measured on
    two models (and at least one) differ between them at 1 % (repro noise, 'machines'); a
    chapter declared machine-bound shows that its values move."""
    for name, chapter in registry.chapters().items():
        shifted, cells = noise.machine_shift(noise.series(name))
        if chapter.machine_bound:
            assert cells and shifted > 0.05 * cells, f"{name} is declared machine-bound: {shifted} of {cells} moved"
        else:
            assert shifted <= max(1, 0.05 * cells), f"{name}: {shifted} of {cells} statistics moved with the CPU model"
