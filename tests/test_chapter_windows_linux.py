"""windows_linux: every condition ran every round, the servers really ran with the settings
compared, pg_test_fsync's output lands in the rounds; F1, F2, F4 and F6 can fail on crafted
rounds (the contract's generic checks run in test_chapters.py)."""
from conftest import chapter_result

from repro.chapters.windows_linux.analysis import fsync_ratio, read_share
from repro.chapters.windows_linux.conditions import (BUFFERS, FSYNC, METHODS, ONE_WRITE, SB_UPDATE_CLIENTS,
                                                     TWO_WRITES, buffered_update, fsync_field, read, update)
from repro.chapters.windows_linux.findings import FINDINGS
from repro.stats import Rounds
from repro.verdict import CONTRADICTED, NOT_APPLICABLE, REPRODUCED, Environment

FINDING = {f.id: f for f in FINDINGS}


def test_every_condition_ran_every_round() -> None:
    doc, _ = chapter_result("windows_linux")
    p, rounds = doc["scale_params"], doc["raw"]["rounds"]
    expected = ({read(b, c) for b in BUFFERS for c in p["read_clients"]}
                | {buffered_update(b, SB_UPDATE_CLIENTS) for b in BUFFERS}
                | {update(m, c) for m in METHODS for c in p["update_clients"]})
    assert set(rounds) == expected | {FSYNC}
    for condition in expected:
        assert len(rounds[condition]) >= p["rounds"] and all(r["tps"] > 0 for r in rounds[condition]), condition
    assert len(rounds[FSYNC]) == p["fsync_rounds"]


def test_the_small_buffers_missed_and_linux_refused_the_windows_method() -> None:
    raw = chapter_result("windows_linux")[0]["raw"]
    assert read_share(raw, "small") > read_share(raw, "large")
    assert raw["default_method"] == "fdatasync"
    assert not raw["fsync_writethrough"]["accepted"]
    assert "fsync_writethrough" in raw["fsync_writethrough"]["message"]
    assert raw["storage"][0]  # the data directory's file system type


def _rounds(tps: dict[str, list[float]], fsync: list[dict[str, float]] | None = None, **raw: object) -> Rounds:
    rounds = {c: [{"round": i, "tps": v} for i, v in enumerate(values)] for c, values in tps.items()}
    if fsync:
        rounds[FSYNC] = [{"round": i, **values} for i, values in enumerate(fsync)]
    return Rounds({"rounds": rounds, **raw})


def _judge(fid: str, rounds: Rounds, cpus: int = 2) -> str:
    return FINDING[fid].judge(rounds, Environment(17, cpus, frozenset(), rounds.raw)).status


def _fsync(one: dict[str, float], two: dict[str, float]) -> dict[str, float]:
    return {**{fsync_field(ONE_WRITE, m): v for m, v in one.items()},
            **{fsync_field(TWO_WRITES, m): v for m, v in two.items()}}


def test_fsync_ratios_are_paired_within_each_run() -> None:
    r = _rounds({}, [_fsync({"open_datasync": 200, "fsync": 100}, {}),
                     _fsync({"open_datasync": 3000, "fsync": 1000}, {}),
                     _fsync({"open_datasync": 400, "fsync": 100}, {})])
    assert fsync_ratio(r, ONE_WRITE, "open_datasync", "fsync") == 3.0


def test_f2_fails_when_64mb_reads_as_fast_as_the_large_buffers() -> None:
    large = [1000.0, 1100, 950]
    sources = {"small": {"hit": 20, "read": 80}, "large": {"hit": 100, "read": 0}}

    def tps(share: float) -> dict[str, list[float]]:
        return {**{read("large", c): large for c in (1, 2, 8)},
                **{read("small", c): [v * share for v in large] for c in (1, 2, 8)}}
    assert _judge("F2", _rounds(tps(0.75), buffer_sources=sources)) == REPRODUCED
    assert _judge("F2", _rounds(tps(1.0), buffer_sources=sources)) == CONTRADICTED
    all_hits = {"small": {"hit": 100, "read": 0}, "large": {"hit": 100, "read": 0}}
    assert _judge("F7", _rounds(tps(0.75), buffer_sources=sources)) == REPRODUCED
    assert _judge("F7", _rounds(tps(0.75), buffer_sources=all_hits)) == CONTRADICTED


def test_f4_fails_on_windows_like_pg_test_fsync_figures() -> None:
    linux = [_fsync({"open_datasync": v, "fsync": v * 0.97}, {}) for v in (11000.0, 10500, 11800)]
    windows = [_fsync({"open_datasync": 105161.390, "fsync": 5406.255}, {}) for _ in range(3)]
    assert _judge("F4", _rounds({}, linux)) == REPRODUCED
    assert _judge("F4", _rounds({}, windows)) == CONTRADICTED


def test_f6_fails_when_the_two_write_penalty_shows_in_pgbench() -> None:
    fsync = [_fsync({}, {"open_datasync": 5000.0, "fdatasync": 10000.0}) for _ in range(3)]
    base = [16000.0, 15500, 16500]

    def tps(share: float) -> dict[str, list[float]]:
        return {update("fdatasync", 8): base, update("open_datasync", 8): [v * share for v in base]}
    assert _judge("F6", _rounds(tps(1.0), fsync)) == REPRODUCED
    assert _judge("F6", _rounds(tps(0.5), fsync)) == CONTRADICTED


def test_f1_levels_off_at_the_engines_cpu_count_and_needs_clients_around_it() -> None:
    two_cpus = {read("large", 1): [1000.0, 1050, 980], read("large", 2): [2100.0, 2150, 2000],
                read("large", 8): [2000.0, 2100, 1950]}
    assert _judge("F1", _rounds(two_cpus, engine_cpus=2)) == REPRODUCED
    still_growing = {**two_cpus, read("large", 8): [4000.0, 4100, 3900]}
    assert _judge("F1", _rounds(still_growing, engine_cpus=2)) == CONTRADICTED
    assert _judge("F1", _rounds(two_cpus, engine_cpus=4), cpus=4) == NOT_APPLICABLE
