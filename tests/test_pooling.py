"""Which runs a verdict pools across machines (repro/pooling.py): runs of every machine of
the project's kind, except in a chapter whose values move with the machine itself."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from repro import noise, pooling, registry, results
from repro.stats import BETWEEN_RUNS
from repro.text import Text



def test_a_machine_bound_chapter_pools_only_the_runs_on_its_newest_runs_cpu_model() -> None:
    chapter = registry.get("auto_explain")
    stored = sorted((results.ROOT / "results" / "auto_explain").glob("pg17-default-*.json"))[-1]
    doc = results.load(stored, "auto_explain")
    key = {**doc["key"], "experiment": chapter.experiment_hash("default")}

    def run(day: int, model: str | None) -> tuple[Path, dict]:
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
    assert len(newest_elsewhere.left_out) == 2
    unknown = pooling.gather(bound, 17, "default", found=[*found, run(4, None)])  # never the reference
    assert [pooling.machine(r.doc) for r in unknown.runs] == ["CPU A", "CPU A"]
    assert "not recorded" in unknown.left_out[-1].why.en


def test_runs_whose_records_disagree_do_not_pool_and_an_unrecorded_field_splits_nothing() -> None:
    """The pyperf rule: a run whose server had another shared memory size than the newest
    run's is left out, named by that field; a run that did not record the containers (made
    before they were recorded) pools, or recording a field would start every pool again. A
    machine-bound chapter's pool for `compare` keeps the compared run's CPU model."""
    chapter = registry.get("auto_explain")
    stored = sorted((results.ROOT / "results" / "auto_explain").glob("pg17-default-*.json"))[-1]
    doc = results.load(stored, "auto_explain")
    key = {**doc["key"], "experiment": chapter.experiment_hash("default")}

    def run(day: int, shm: int | None, model: str = "CPU A") -> tuple[Path, dict]:
        servers = [{**s, "container": {"shm_size": shm, "cpuset_cpus": None, "cap_add": []}} if shm else
                   {k: v for k, v in s.items() if k != "container"} for s in doc["provenance"]["servers"]]
        provenance = {**doc["provenance"], "started": f"2030-01-0{day}T10:00:00+00:00", "servers": servers,
                      "host": {**doc["provenance"]["host"], "cpu_model": model}}
        return Path(f"pg17-default-2030010{day}.json"), {**doc, "key": key, "provenance": provenance}

    found = [run(1, None), run(2, 64 * 2**20), run(3, 256 * 2**20), run(4, 256 * 2**20)]
    pool = pooling.gather(chapter, 17, "default", found=found)
    assert [p for p, d in found if any(r.doc is d for r in pool.runs)] == [found[0][0], found[2][0], found[3][0]]
    assert [left.path for left in pool.left_out] == [found[1][0]]
    assert pool.left_out[0].why.en.startswith("a run whose recorded shm_size of publication 1")
    assert "67108864" in pool.left_out[0].why.en and "268435456" in pool.left_out[0].why.en
    bound = dataclasses.replace(chapter, machine_bound=Text("理由", "why"))
    elsewhere = [run(5, 256 * 2**20, "CPU B"), *found]
    assert {pooling.machine(r.doc) for r in pooling.gather(bound, 17, "default", found=elsewhere).runs} == {"CPU B"}
    assert {pooling.machine(r.doc) for r in pooling.gather(bound, 17, "default", found=elsewhere,
                                                            model="CPU A").runs} == {"CPU A"}


def test_only_the_chapters_declared_machine_bound_differ_between_cpu_models_beyond_the_floor() -> None:
    """Runs on other CPU models pool only where the spread between them stays within the
    between-run floor, which the intervals' simulations cover (tests/test_intervals.py): in a
    chapter not declared machine-bound, no finding with enough pairs of runs on two models
    differs more (repro noise, 'machines'); a chapter declared machine-bound has one. Every
    chapter with at least 3 runs on each of two models is judged."""
    for name, chapter in registry.chapters().items():
        found = noise.judged(noise.between_machines(noise.series(name)))
        beyond = {f: a.rho for f, a in found.items() if a.rho > BETWEEN_RUNS}
        if chapter.machine_bound:
            assert beyond, f"{name} is declared machine-bound, but its findings differ between CPU models by {found}"
        else:
            assert not beyond, f"{name}: runs on two CPU models differ by more than the floor ({BETWEEN_RUNS}): {beyond}"


def test_the_spread_between_machines_is_measured_as_the_spread_between_runs() -> None:
    """between_machines finds a spread planted between two CPU models, and none where there
    is none; runs of an unknown model are left out."""
    rng = np.random.default_rng(3)

    def runs(model: str | None, shift: float, n: int = 4) -> list[noise.Series]:
        return [noise.Series("x", "F1/0", 17, "e", f"2030-01-0{i + 1}", model, tuple(rng.normal(shift, 1, 5)))
                for i in range(n)]

    same = noise.between_machines(runs("A", 0.0) + runs("B", 0.0))
    assert same["F1"].pairs == 16 and same["F1"].fewest == 4 and same["F1"].rho <= 1.5
    apart = noise.between_machines(runs("A", 0.0) + runs("B", 3.0))  # 6.7 times a run's own error
    assert apart["F1"].rho > BETWEEN_RUNS
    few = noise.between_machines(runs("A", 0.0) + runs("B", 3.0, n=2))  # 8 pairs, but 2 runs on B
    assert few["F1"].fewest == 2 and noise.judged(few) == {} and noise.judged(apart) == apart
    assert noise.between_machines(runs("A", 0.0) + runs(None, 3.0)) == {}


def test_runs_started_with_other_settings_or_clients_do_not_pool_and_the_page_names_the_setting() -> None:
    """Settings switched by restarts are recorded at each start, those switched by reloads
    (a condition's wal_sync_method) at each reload, and client programs with their session
    settings: a run whose server was started with another shared_buffers, whose conditions
    reloaded other values, or whose pgbench ran under other session settings, is left out, named by the setting and
    the values that differ (not the whole record); older runs, which recorded neither, pool."""
    chapter = registry.get("auto_explain")
    stored = sorted((results.ROOT / "results" / "auto_explain").glob("pg17-default-*.json"))[-1]
    doc = results.load(stored, "auto_explain")
    key = {**doc["key"], "experiment": chapter.experiment_hash("default")}

    def run(day: int, sizes: list[str] | None, options: str = "-c jit=off",
            methods: tuple[str, ...] = ("fdatasync", "open_datasync")) -> tuple[Path, dict]:
        used = {} if sizes is None else {
            "starts": [{"settings": {"shared_buffers": size, "max_wal_size": "1GB"}, "starts": 2} for size in sizes],
            "reloads": [{"settings": {"wal_sync_method": m}, "reloads": 1} for m in methods],
            "client_runs": [{"program": "pgbench", "host": "/var/run/postgresql", "session_settings": options,
                             "runs": day}]}
        servers = [{**s, **used} for s in doc["provenance"]["servers"]]
        provenance = {**doc["provenance"], "started": f"2030-01-0{day}T10:00:00+00:00", "servers": servers}
        return Path(f"pg17-default-2030010{day}.json"), {**doc, "key": key, "provenance": provenance}

    found = [run(1, None), run(2, ["128MB", "512MB"]), run(3, ["128MB", "1GB"]), run(4, ["128MB", "1GB"], "-c jit=on"),
             run(6, ["128MB", "1GB"], methods=("fdatasync", "fsync")), run(7, ["128MB", "1GB"])]
    pool = pooling.gather(chapter, 17, "default", found=found)
    assert [p for p, d in found if any(r.doc is d for r in pool.runs)] == [found[i][0] for i in (0, 2, 5)]
    why = {left.path: left.why.en for left in pool.left_out}
    role = pooling.role(doc["provenance"]["servers"][0])
    assert why[found[1][0]] == (f"a run whose recorded shared_buffers at the starts of {role} differs from the "
                                f"newest run's (512MB, the newest 1GB)")
    assert why[found[4][0]] == (f"a run whose recorded wal_sync_method set by reloads of {role} differs from "
                                f"the newest run's (fsync, the newest open_datasync)")  # a setting of a condition
    assert why[found[3][0]] == (f"a run whose recorded client programs of {role} differs from the newest run's "
                                f"(pgbench -h /var/run/postgresql PGOPTIONS='-c jit=on', the newest "
                                f"pgbench -h /var/run/postgresql PGOPTIONS='-c jit=off')")
