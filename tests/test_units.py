"""Pure units: number formatting, rounds and intervals, verdicts, measuring helpers, results
and cache keys, the parsers of PostgreSQL's small tools."""
import json
import os
import shutil
import time

import numpy as np
import pytest
from scipy import stats as scipy_stats

from repro import compare, pooling, registry, requirements, results, verdict_words
from repro.errors import ReproError
from repro.lab.harness.progress import Progress
from repro.lab.harness.waiting import until
from repro.lab.measure import Plan, decidable, rotated, run_rounds
from repro.lab.pgtools import parse_test_fsync, parse_test_timing
from repro.lab.wal import lsn, lsn_text, spelled
from repro.lab.waits import CpuReading, container_share, cpu_split, parse_cpu_reading
from repro.site import store
from repro.site.provenance import role_label
from repro.stats import BETWEEN_RUNS, Rounds, estimate, median, paired_change
from repro.text import Number, Text
from repro.verdict import (CONTRADICTED, INCONCLUSIVE, PARTIAL, REPRODUCED, Above, Below, Between, Check, Environment,
                           Finding, Measure)
from repro.wording import Wording


@pytest.mark.parametrize("number, lang, text", [
    (Number(12.345, "%", 1, signed=True), "en", "+12.3\u00a0%"),
    (Number(12.345, "%", 1, signed=True), "ja", "+12.3%"),
    (Number(-0.04, "%", 1, signed=True), "en", "±0.0\u00a0%"),
    (Number(2523.48897, "", 0), "en", "2,523"),
    (Number(0.1104, "ms"), "ja", "0.110\u00a0ms"),
    (Number(38.268, "ms"), "en", "38.3\u00a0ms"),
    (Number(None, "ms"), "en", "—"),
    (Number(56.2, "%", 0, signed=True, low=48.1, high=63.4), "en", "+56 [+48, +63]\u00a0%"),
    (Number(56.2, "%", 0, signed=True, low=48.1, high=63.4), "ja", "+56 [+48, +63]%"),
])
def test_number_format(number: Number, lang: str, text: str) -> None:
    assert number.format(lang) == text


def test_text_picks_language() -> None:
    t = Text("日本語", "English")
    assert (t("ja"), t("en"), t.as_dict()) == ("日本語", "English", {"ja": "日本語", "en": "English"})


def test_rotation_varies_positions_and_predecessors() -> None:
    items = ["a", "b", "c", "d"]
    orders = [rotated(items, r) for r in range(4)]
    assert orders == [["a", "b", "c", "d"], ["a", "d", "c", "b"], ["c", "d", "a", "b"],
                      ["c", "b", "a", "d"]]
    for item in items:  # each condition runs first or last at least once, and not always after one other
        assert {o.index(item) for o in orders} & {0, 3}
        assert len({o[o.index(item) - 1] for o in orders if o.index(item) > 0}) > 1


def _rounds(values: dict[str, list[float]]) -> Rounds:
    return Rounds({"rounds": {c: [{"round": i, "v": v} for i, v in enumerate(vs)]
                              for c, vs in values.items()}})


def test_paired_change_uses_each_round_as_its_own_control() -> None:
    # the machine slows down 2x in round 2; the pairs still say +10 %
    r = _rounds({"a": [1.1, 2.2, 1.1], "b": [1.0, 2.0, 1.0]})
    assert paired_change(r.pairs("a", "b", "v")) == pytest.approx(10.0)


def test_a_resample_repeats_whole_rounds_and_keeps_pairs() -> None:
    r = _rounds({"a": [1, 2, 3], "b": [10, 20, 30]})
    view = r.resample([2, 2, 0])
    assert view.values("a", "v") == [3, 3, 1]
    assert view.pairs("a", "b", "v") == [(3, 30), (3, 30), (1, 10)]
    assert r.used >= {"a", "b"}  # what a statistic read, the run needs


def test_interval_from_rounds() -> None:
    """One run: Student's t over its rounds, widened by the between-run floor (a verdict is
    about the major, and runs differ by more than their own rounds say)."""
    values = [10.0, 11.0, 9.0, 10.5, 9.5, 10.2, 9.8]
    r = _rounds({"a": values})
    e = estimate(lambda v: median(v.values("a", "v")), r)
    s = float(np.std(values, ddof=1)) / np.sqrt(len(values))
    half = scipy_stats.t.ppf(0.975, len(values) - 1) * s * np.sqrt(1 + BETWEEN_RUNS ** 2)
    assert e.value == pytest.approx(10.0) and (e.low, e.high) == pytest.approx((10.0 - half, 10.0 + half))
    assert (e.runs, e.rounds) == (1, 7)
    assert estimate(lambda v: median(v.values("a", "v")), r) == e  # same data, same interval
    exact = estimate(lambda v: 4.0, r, exact=True)
    assert (exact.low, exact.high) == (4.0, 4.0)


@pytest.mark.parametrize("threshold, low, high, status", [
    (Above(10), 11, 15, REPRODUCED), (Above(10), 5, 9, CONTRADICTED), (Above(10), 9, 11, INCONCLUSIVE),
    (Above(10), 10, 12, INCONCLUSIVE), (Above(10, inclusive=True), 10, 12, REPRODUCED),
    (Below(0), -5, -1, REPRODUCED), (Below(0), 1, 5, CONTRADICTED), (Below(0), -1, 1, INCONCLUSIVE),
    (Between(-20, 20), -5, 5, REPRODUCED), (Between(-20, 20), 25, 40, CONTRADICTED),
    (Between(-20, 20), 10, 30, INCONCLUSIVE),
])
def test_three_way_verdict_from_an_interval(threshold, low: float, high: float, status: str) -> None:
    assert threshold.status(low, high) == status


def test_holds_if_text_comes_from_the_declaration() -> None:
    m = Measure(Text("変化", "change"), lambda r: 0.0, "%", 1, signed=True)
    assert Check(m, Above(30)).text().en == "change > +30\u00a0%"
    assert Check(m, Between(-20, 20)).text().ja == "変化 ±20% 以内"


def _finding(statistic, requires=()) -> Finding:
    return Finding("F", Text("x", "x"), [Check(Measure(Text("a", "a"), statistic), Above(0))],
                   requires=requires)


def test_requirements_give_not_applicable_with_the_reason() -> None:
    v = _finding(lambda r: 1.0, [requirements.min_cpus(8)]).judge(Rounds({}), Environment(17, 2, frozenset(), {}))
    assert v.status == "not applicable" and "8" in v.reason.en and "2" in v.reason.en


def test_what_only_the_projects_images_hold_is_judged_in_containers_only() -> None:
    """semaphores' control: judged in containers; against an existing server the reason is
    own_server's, word for word; on local clusters one of its own."""
    what = Text("ビルド", "a build")
    images_only, own = requirements.images_only(what), requirements.own_server(what)
    container, local = Environment(17, 2, frozenset(), {}), Environment(17, 2, frozenset(), {}, local=True)
    existing = Environment(17, None, frozenset(), {}, external=True)
    assert images_only.met(container) and not images_only.met(local) and not images_only.met(existing)
    assert images_only.reason(existing) == own.reason(existing) and images_only.label == own.label
    assert images_only.reason(local).en == "Not applicable on local clusters: needs a build, which only the project's images hold."
    assert own.met(local), "a local cluster is a server of the run's own"
    finding = _finding(lambda r: 1.0, [images_only])
    assert verdict_words.badge_of(finding.judge(Rounds({}), local)).en == "not applicable here: a build"
    assert verdict_words.badge_of(finding.judge(Rounds({}), existing)).en == "not applicable against an existing server: needs a build"


@pytest.mark.parametrize("measured, values, status", [
    (("trgm",), [1.0, 1.2, 0.9, 1.1, 1.0, 1.3], PARTIAL),  # holds where measured, two kinds unmeasured
    (("trgm", "bigm", "pgroonga"), [1.0, 1.2, 0.9, 1.1, 1.0, 1.3], REPRODUCED),
    (("trgm",), [-1.0, -1.2, -0.9, -1.1, -1.0, -1.3], CONTRADICTED),  # a counterexample on one kind
    (("trgm",), [1.0, -1.0, 2.0, -2.0, 0.5, -0.5], INCONCLUSIVE),
])
def test_a_claim_over_every_kind_is_reproduced_only_in_part_on_some(measured, values, status) -> None:
    scope = requirements.Scope({"bigm": "pg_bigm", "pgroonga": "PGroonga", "trgm": "pg_trgm"}, lambda e: e.raw["kinds"])
    finding = Finding("F", Text("x", "x"), [Check(Measure(Text("a", "a"), lambda r: median(r.values("a", "v"))),
                                                  Above(0))], over=scope)
    v = finding.judge(_rounds({"a": values}), Environment(17, 2, frozenset(), {"kinds": list(measured)}))
    assert v.status == status
    if status == PARTIAL:
        assert verdict_words.badge_of(v).en == "reproduced in part"
        assert v.reason.en == "reproduced for pg_trgm; pg_bigm and PGroonga not measured here"
        assert v.reason.ja == "pg_trgm で再現、pg_bigm と PGroonga はここでは未測定"
        assert v.deciding is v.checks[0]


def test_decidable_names_what_more_rounds_could_decide() -> None:
    r = _rounds({"a": [1.0, -1.0, 2.0, -2.0], "b": [5.0, 6.0, 5.5, 6.5]})
    straddles = _finding(lambda v: median(v.values("a", "v")))
    clear = Finding("G", Text("y", "y"), [Check(Measure(Text("b", "b"),
                                                        lambda v: median(v.values("b", "v"))), Above(0))])
    conditions, ids = decidable([straddles, clear], (r, Environment(17, 2, frozenset(), {})))
    assert (conditions, ids) == ({"a"}, ["F"])


def test_rounds_are_added_for_undecided_conditions_within_the_plan() -> None:
    """One look after the minimum rounds: what is undecided then gets rounds up to the most
    the plan allows, with no look in between (two looks keep the error rate, see
    tests/test_intervals.py); what is decided then stops at the minimum."""
    looks: list[int] = []

    def run(name: str):
        return lambda: {name: {"v": 1.0}}

    def decide(measured, extra):  # "a" would be decided at 4 rounds: the rule does not look again
        assert extra == 4  # the plan allows 4 more
        looks.append(len(measured["a"]))
        return ({"a"}, ["F1"]) if len(measured["a"]) < 4 else (set(), [])

    measured, log = run_rounds({"a": run("a"), "b": run("b")}, Plan(2, 6, 1e9),
                               Progress("t", lambda line: None), decide)
    assert len(measured["a"]) == 6 and len(measured["b"]) == 2 and looks == [2]
    assert [e.runs for e in log.extra] == [["a"]] * 4 and log.stopped == "max_rounds"
    _, decided = run_rounds({"a": run("a")}, Plan(2, 6, 1e9), Progress("t", lambda line: None),
                            lambda m, extra: (set(), []))
    assert decided.stopped == "decided" and not decided.extra


def test_cache_key_freshness() -> None:
    key = results.cache_key("abc", "tiny", "debian/r1/17.11", "container")
    doc = {"key": key}
    assert results.is_fresh(doc, key)
    assert results.is_fresh(doc, {**key, "image": None})  # cached mode: any image
    for changed in ({"experiment": "abd"}, {"scale": "default"}, {"image": "debian/r2/17.11"},
                    {"target": "dsn:x"}, {"format": results.FORMAT + 1}):
        assert not results.is_fresh(doc, {**key, **changed})
    assert not results.is_fresh(None, key)


def test_source_hash_changes_with_content(tmp_path) -> None:
    f = tmp_path / "m.py"
    f.write_text("a = 1\n")
    before = results.source_hash([f])
    f.write_text("a = 2\n")
    assert results.source_hash([f]) != before


def test_experiment_hash_keys_a_scale_by_its_own_parameters() -> None:
    from repro import fingerprint, registry
    chapter = registry.get("auto_explain")
    default = chapter.scales["default"]
    key = fingerprint.experiment(chapter.package, default)
    assert fingerprint.experiment(chapter.package, dict(default)) == key == chapter.experiment_hash("default")
    assert fingerprint.experiment(chapter.package, {**default, "rounds": 99}) != key
    assert fingerprint.experiment(chapter.package, chapter.scales["tiny"]) != key


def test_experiment_hash_covers_the_harness_modules_it_imports() -> None:
    from repro import reach, registry
    closure = {p.relative_to(results.ROOT).as_posix() for p in
               reach.closure(registry.get("wait_events").package / "experiment.py")}
    assert {"repro/lab/waits.py", "repro/lab/servers.py", "repro/lab/context.py"} <= closure
    assert not {"repro/site/sphinxext.py", "repro/verdict.py", "repro/stats.py"} & closure


def test_no_chapter_keys_its_measurement_on_its_claims() -> None:
    """A revised claim re-judges stored runs; it must not make them stale. fulltext's
    `from . import corpus` runs the package's __init__, which imports the findings."""
    from repro import reach, registry
    for name in registry.chapters():
        package = registry.get(name).package
        closure = {p.name for p in reach.closure(package / "experiment.py") if p.parent == package}
        assert "experiment.py" in closure
        assert not {"__init__.py", "findings.py", "page.py"} & closure, name
    assert "corpus.py" in {p.name for p in reach.closure(registry.get("fulltext").package / "experiment.py")}


@pytest.mark.parametrize("content", ["{ not json", "[]", json.dumps({"chapter": "x"}), "\xff\xfe"])
def test_corrupt_result_files_are_reported_not_crashed_on(tmp_path, content) -> None:
    path = tmp_path / "x.json"
    path.write_text(content, encoding="latin-1")
    with pytest.raises(results.CorruptResult):
        results.load(path, "x")


def test_save_is_atomic_and_loadable(tmp_path) -> None:
    doc = {k: {} for k in results.REQUIRED} | {"chapter": "x", "format": results.FORMAT}
    results.save(doc, tmp_path / "x.json")
    assert results.load(tmp_path / "x.json", "x") == doc
    assert not list(tmp_path.glob("*.tmp"))


def test_a_half_written_verdict_cache_is_judged_again(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("REPRO_RESULTS", str(tmp_path / "results"))
    run = store._runs("eic")[-1]  # a stored result in results/
    first = store.statuses(run)
    [cached] = (tmp_path / "verdicts" / "eic").glob("*.json")
    cached.write_text('{"F1": "repro')  # what a build that died mid-write would leave
    assert store.statuses(run) == first and json.loads(cached.read_text()) == first


def test_pg_test_timing_parser(data_dir) -> None:
    t = parse_test_timing((data_dir / "pg_test_timing_17.txt").read_text())
    assert t["per_loop_ns"] == pytest.approx(34.34)
    assert t["histogram"][0] == [1, pytest.approx(96.78043), 28182931]
    assert sum(share for _, share, _ in t["histogram"]) == pytest.approx(100, abs=0.01)
    with pytest.raises(ValueError):
        parse_test_timing("nothing here")


def test_pg_test_fsync_parser_reads_every_measured_line(data_dir) -> None:
    for major in (13, 17):
        rows = parse_test_fsync((data_dir / f"pg_test_fsync_{major}.txt").read_text())
        one = {r["method"]: r for r in rows if r["section"].endswith("one 8kB write")}
        assert {"open_datasync", "fdatasync", "fsync", "open_sync"} <= set(one), major
        assert all(r["ops_per_s"] > 0 and r["usecs"] > 0 for r in rows)
        assert any(r["section"].startswith("Non-sync") for r in rows)


def test_cpu_split_is_vmstat_columns() -> None:
    # user nice system idle iowait irq softirq steal
    before = CpuReading([100, 0, 50, 1000, 10, 0, 0, 5], 0.0)
    after = CpuReading([160, 20, 90, 1060, 30, 5, 5, 15], 0.0)  # +60 +20 +40 +60 +20 +5 +5 +10 = 220
    split = cpu_split(before, after)
    assert split["us"] == pytest.approx(80 / 220 * 100)
    assert split["sy"] == pytest.approx(50 / 220 * 100)
    assert split["id"] == pytest.approx(60 / 220 * 100)
    assert split["wa"] == pytest.approx(20 / 220 * 100)
    assert split["st"] == pytest.approx(10 / 220 * 100)
    assert sum(split.values()) == pytest.approx(100)


def test_container_share_is_of_all_cpus() -> None:
    # 400 ticks of 10 ms over all CPUs = 4 CPU-seconds; the container used 1.5 of them
    before, after = CpuReading([0] * 8, 10.0), CpuReading([100, 0, 100, 200, 0, 0, 0, 0], 11.5)
    assert container_share(before, after) == pytest.approx(37.5)


@pytest.mark.parametrize("tail, seconds", [
    ("usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000", 2.5),  # cgroup v2 cpu.stat
    ("2500000000", 2.5),  # cgroup v1 cpuacct.usage, ns
])
def test_cpu_reading_parses_both_cgroup_versions(tail: str, seconds: float) -> None:
    reading = parse_cpu_reading(f"cpu  1 2 3 4 5 6 7 8 0 0\n{tail}\n")
    assert reading.ticks == [1, 2, 3, 4, 5, 6, 7, 8] and reading.container_s == seconds


@pytest.mark.parametrize("text", ["intr 1 2 3\n2500", "cpu  1 2 3 4 5 6 7 8\n", "cpu  1 2 3 4 5 6 7 8\nnope"])
def test_cpu_reading_refuses_what_it_cannot_read(text: str) -> None:
    with pytest.raises(ValueError):
        parse_cpu_reading(text)


def test_lsn_round_trip() -> None:
    assert lsn("16/B374D848") == (0x16 << 32) + 0xB374D848
    assert lsn_text(lsn("16/B374D848")) == "16/B374D848"
    assert lsn("0/0") == 0 and lsn_text(0) == "0/0"


def test_a_wal_query_is_spelled_as_9_6_names_it() -> None:
    query = ("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn), pg_current_wal_flush_lsn(), "
             "extract(epoch FROM replay_lag), flush_lsn FROM pg_stat_replication")
    assert spelled(query, 10) == query
    assert spelled(query, 9.6) == (
        "SELECT pg_xlog_location_diff(pg_current_xlog_location(), replay_location), "
        "pg_current_xlog_flush_location(), extract(epoch FROM NULL::interval), flush_location "
        "FROM pg_stat_replication")


def test_japanese_chart_labels_have_glyphs(tmp_path) -> None:
    import warnings
    from repro.chapter import Chart, Series
    from repro.site import charts
    chart = Chart(Text("待機イベント", "Wait events"), [Text("ロック", "lock")],
                  [Series(Text("割合", "share"), [1.0])], Text("秒", "s"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib warns "Glyph ... missing from font(s)"
        charts.render(chart, "ja", tmp_path / "ja.png")


def test_fulltext_apply_share_is_the_servers_spans_and_nothing_from_an_older_timing() -> None:
    """F13's measure: the publisher's insert span over the span until the subscriber applied
    the last row. A run that timed the apply on the host (no spans) gives no value."""
    from repro.chapters.fulltext.analysis import apply_share
    from repro.chapters.fulltext.conditions import PUBLISHER_INGEST
    from repro.stats import Rounds
    spans = [{"round": i, "tps": 2400.0, "insert_s": 1.0, "apply_s": a} for i, a in enumerate([1.25, 1.001])]
    assert apply_share(Rounds({"rounds": {PUBLISHER_INGEST: spans[:1]}})) == pytest.approx(0.8)
    assert apply_share(Rounds({"rounds": {PUBLISHER_INGEST: spans}})) == pytest.approx((0.8 + 1 / 1.001) / 2)
    host_timed = [{"round": 0, "tps": 2400.0, "apply_rate": 2300.0}]
    assert apply_share(Rounds({"rounds": {PUBLISHER_INGEST: host_timed}})) is None


def test_a_stored_role_label_is_written_in_the_sites_spelling() -> None:
    assert role_label({"ja": "サブスクライバ", "en": "subscriber"}) == Text("サブスクライバー", "subscriber")
    assert role_label({"ja": "パブリッシャー", "en": "publisher"}).ja == "パブリッシャー"
    assert role_label("primary") == Text("primary", "primary")


def test_wording_fills_values_and_refuses_what_it_cannot_use(tmp_path) -> None:
    words = tmp_path / "findings.toml"
    words.write_text('[F1]\nclaim.ja = "{MANY} 人"\nclaim.en = "{MANY} people"\nsource = "004"\n'
                     'where.ja = "表 1"\nwhere.en = "table 1"\n')
    finding = Wording(words, {"MANY": 10}).finding("F1", [])
    assert finding.claim == Text("10 人", "10 people") and finding.original is None
    assert finding.cite.source == "004" and finding.cite.where.en == "table 1"
    with pytest.raises(ReproError, match="MANY"):
        Wording(words, {}).finding("F1", [])
    with pytest.raises(ReproError, match="no entry"):
        Wording(words, {"MANY": 10}).finding("F2", [])
    words.write_text('[F1]\nclaim.ja = "x"\nclaim.en = "x"\ncited = "004"\n')
    with pytest.raises(ReproError, match="unknown keys cited"):
        Wording(words, {})


def test_compare_leaves_this_run_out_of_the_published_ones(tmp_path, monkeypatch) -> None:
    """A run kept with `repro archive` is also this machine's latest: compared with itself it
    would always "agree"."""
    kept = sorted((results.history() / "eic").glob("pg17-default-*.json"))  # the newest: current
    (tmp_path / "eic").mkdir()
    shutil.copy(kept[-1], tmp_path / "eic" / "pg17-default.json")
    monkeypatch.setenv("REPRO_RESULTS", str(tmp_path))
    found = compare.compare(registry.get("eic"), 17)
    assert found["published_runs"] and found["this_machine_run"] not in found["published_runs"]


def test_compare_names_the_cpu_of_the_client_beside_an_existing_server(monkeypatch) -> None:
    """Beside an existing server pgbench runs on this machine (or in a helper of its local
    engine): compare names that machine's CPU model, and its own CPU count with no engine."""
    from repro.lab import engine, existing, provenance
    model = existing.this_machine()["cpu_model"]
    assert model, "no CPU model in /proc/cpuinfo"
    monkeypatch.setattr(engine, "info", lambda: {"NCPU": 2})
    monkeypatch.setattr(engine, "is_local", lambda: True)
    host = provenance.host(None)
    assert host["cpu_model"] == model
    doc = {"provenance": {"host": host, "servers": [], "target": "dsn:host=db"}, "key": {"target": "dsn:host=db"}}
    assert compare.machine(doc)["cpu"] == f"server: not declared (--server-cpus); pgbench's host: 2 × {model}"
    doc["provenance"]["host"] = existing.host(None)  # this machine's client programs, no engine
    assert compare.machine(doc)["cpu"].endswith(f"pgbench's host: {os.cpu_count()} × {model}")


def test_compare_matches_servers_by_role_not_order() -> None:
    """auto_explain starts its servers side by side, so each run lists them in another order:
    matched by role, two runs of one configuration differ in nothing (matched by order, the
    preloaded server's shared_preload_libraries showed as differing). An existing server,
    one role the other run lacks, is set beside the server most like it."""
    runs = [r.doc for r in pooling.gather(registry.get("auto_explain"), 17, "default").runs]  # one experiment
    def roles(doc: dict) -> list[str]:
        return [s["role"]["en"] for s in doc["provenance"]["servers"]]
    a, b = next((x, y) for x, y in zip(runs, runs[1:]) if roles(x) != roles(y) and sorted(roles(x)) == sorted(roles(y)))
    assert compare.settings_that_differ(a, b) == {}

    def server(role: str, **settings: str) -> dict:
        return {"role": {"ja": role, "en": role}, "settings": settings}
    mine = {"provenance": {"servers": [server("loaded per session", jit="off", port="5433")]}}
    theirs = {"provenance": {"servers": [server("preloaded", jit="off", shared_preload_libraries="auto_explain"),
                                         server("not loaded", jit="off")]}}
    assert compare.settings_that_differ(mine, theirs) == {"loaded per session | not loaded": {"port": ("5433", None)}}


def test_compare_names_what_the_pools_guard_would_split_on() -> None:
    """`repro compare` shows the recorded fields (pooling.recorded) that both runs have and
    that differ, such as a condition's wal_sync_method set by reload; a field one run lacks
    (an older run) is no difference."""
    def doc(methods: list[str] | None, shm: str = "1g") -> dict:
        server = {"role": {"ja": "s", "en": "s"}, "settings": {}, "container": {"shm_size": shm}}
        if methods is not None:
            server["reloads"] = [{"settings": {"wal_sync_method": m}, "reloads": 1} for m in methods]
        return {"provenance": {"servers": [server]}}
    assert compare.recorded_that_differ(doc(["fdatasync", "fsync"]), doc(["fdatasync"])) == {
        "wal_sync_method set by reloads of s": (["fdatasync", "fsync"], ["fdatasync"])}
    assert compare.recorded_that_differ(doc(["fsync"]), doc(None)) == {}
    assert compare.recorded_that_differ(doc(None, "2g"), doc(None)) == {"shm_size of s": ("2g", "1g")}


def test_a_page_watches_the_folders_of_its_results(tmp_path, monkeypatch) -> None:
    """A run added beside the stored ones touches no existing file, only its folder: the
    pages built from the chapter's results must depend on that folder too (a warm build
    re-reads them), and on the results folder where the chapter has none yet."""
    build, extra = tmp_path / "build", tmp_path / "extra"
    (build / "eic").mkdir(parents=True)
    (build / "eic" / "pg17-default.json").write_text("{}")
    extra.mkdir()
    monkeypatch.setenv("REPRO_RESULTS", str(build))
    monkeypatch.setenv("RESULTS", str(extra))
    store.watched.cache_clear()  # an earlier caller in this process saw other folders
    watched = store.watched("eic")
    assert build / "eic" in watched and build / "eic" / "pg17-default.json" in watched
    assert extra in watched and results.history() / "eic" in watched
    before = os.stat(build / "eic").st_mtime_ns
    time.sleep(0.01)
    (build / "eic" / "pg17-default-x.json").write_text("{}")  # a new run: the folder's time moves
    assert os.stat(build / "eic").st_mtime_ns > before


def test_a_wait_returns_what_it_waited_for_or_fails_with_its_message_at_the_deadline() -> None:
    calls = iter([None, 0, "ready"])
    assert until(lambda: next(calls), 5, "never", interval_s=0) == "ready"
    started = time.monotonic()
    with pytest.raises(ReproError, match=r"^the standby did not stream within 0\.2 s$"):
        until(lambda: False, 0.2, lambda: "the standby did not stream within 0.2 s", interval_s=0.01)
    assert 0.2 <= time.monotonic() - started < 2
