"""fulltext: every condition ran every round on the three servers, the generated data and
the mechanism records are what the page reads, and each finding can fail on crafted
rounds (the contract's generic checks run in test_chapters.py)."""
from __future__ import annotations

import json

from conftest import chapter_result

from repro.chapters.fulltext.conditions import (COLUMNS, IDLE, INDEXED, KINDS, LOADED, NONE, PUBLISHER_INGEST,
                                                SINGLE, SUBSCRIBER, WORDS, field, ingest, search)
from repro.chapters.fulltext.corpus import records
from repro.chapters.fulltext.experiment import sections
from repro.chapters.fulltext.findings import FINDINGS
from repro.stats import Rounds
from repro.verdict import CONTRADICTED, NOT_APPLICABLE, PARTIAL, REPRODUCED, Environment

FINDING = {f.id: f for f in FINDINGS}
FEATURES = frozenset({"pg_bigm", "pgroonga"})


def test_every_condition_ran_every_round() -> None:
    doc, _ = chapter_result("fulltext")
    raw, p = doc["raw"], doc["scale_params"]
    kinds = raw["kinds"]
    expected = ({ingest(NONE), PUBLISHER_INGEST} | {ingest(k, c) for k in kinds if k != NONE for c in COLUMNS}
                | {search(k, w, load) for k in kinds for w in (SINGLE, SUBSCRIBER) for load in (IDLE, LOADED)})
    assert set(raw["rounds"]) == expected
    for condition, runs in raw["rounds"].items():
        assert len(runs) >= p["rounds"], condition
    for k in kinds:
        loaded = raw["rounds"][search(k, SUBSCRIBER, LOADED)]
        # the background inserts ran at about the fixed rate, and the subscriber kept up
        assert all(r["load_tps"] > 0.5 * p["rate"] for r in loaded), k
        assert all(r[field(c, w)] > 0 for r in loaded for c in COLUMNS for w in WORDS)


def test_each_server_ran_on_its_own_cpu_as_recorded() -> None:
    doc, _ = chapter_result("fulltext")
    cpus = doc["raw"]["engine_cpus"]
    placed = {s["role"]["en"]: s["container"]["cpuset_cpus"] for s in doc["provenance"]["servers"]}
    assert placed == {"single node": "0", "publisher": "0", "subscriber": str(1 % cpus)}


def test_the_database_extracts_japanese_trigrams_and_every_search_was_planned() -> None:
    raw = chapter_result("fulltext")[0]["raw"]
    assert raw["ctype"]["ctype"].lower().endswith(("utf-8", "utf8")) and raw["ctype"]["trigrams"] > 0
    assert set(raw["hits"]) == set(raw["plans"]) == {f"{k}/{c}:{w}" for k in raw["kinds"] for c in COLUMNS for w in WORDS}
    assert all(n > 0 for n in raw["hits"].values())  # each planted word is found


def test_generated_records_are_deterministic_and_in_the_original_shape() -> None:
    first = list(records(7, 3, WORDS))
    assert first == list(records(7, 3, WORDS))
    assert list(records(7, 1, WORDS, start=2)) == first[2:]
    assert first != list(records(8, 3, WORDS))
    record = json.loads(first[0])
    assert set(record) >= {"tags", "title", "description", "category", "video_id", "upload_time"}
    assert isinstance(record["tags"], list) and record["title"] and len(record["description"]) > len(record["title"])


def test_sections_reads_the_named_statements_of_a_file() -> None:
    text = "-- intro\n-- create: a\nCREATE A;\n\n-- between\n-- create: b\n-- note\nCREATE B {x};\n"
    assert sections(text, "create") == {"a": "CREATE A;", "b": "CREATE B {x};"}


# -- crafted rounds: each finding can fail ------------------------------------------

BASE = [1.0, 1.05, 0.97]  # per-round noise, the same for every condition


def _world(ingest_rates: dict[str, float] | None = None, search_ms: dict[str, float] | None = None,
           **raw: object) -> dict:
    """Three rounds of every condition: insert rates and search times (per word and field),
    realistic unless overridden; `raw` replaces mechanism records."""
    rates = {ingest(NONE): 5000.0, PUBLISHER_INGEST: 4900.0,
             **{ingest(k, "title"): 4600.0 for k in INDEXED}, **{ingest(k, "description"): 3500.0 for k in INDEXED},
             ingest("bigm", "title"): 4800.0, ingest("pgroonga", "description"): 3300.0}
    rates |= ingest_rates or {}
    times = {}
    for where in (SINGLE, SUBSCRIBER):
        for load in (IDLE, LOADED):
            times[search(NONE, where, load)] = 20.0 * (2.0 if load == LOADED else 1.0) * (0.9 if where == SUBSCRIBER else 1.0)
            for k in INDEXED:
                times[search(k, where, load)] = 0.2 * ((3.0 if k != "pgroonga" else 1.2) if load == LOADED else 1.0)
    times |= search_ms or {}
    rounds: dict[str, list[dict]] = {}
    for c, v in rates.items():
        rounds[c] = [{"round": i, "tps": v * n} for i, n in enumerate(BASE)]
    for r, n in zip(rounds[PUBLISHER_INGEST], BASE):  # applied at 0.6 of the inserts' rate
        r |= {"apply_rate": 0.6 * r["tps"], "insert_s": 0.6 * n, "apply_s": 1.0 * n, "lag_max_s": 0.01}
    for c, v in times.items():
        per_word = {field(col, w): v * (100.0 if c.startswith("search/trgm/") and len(w) < 3 else 1.0)
                    for col in COLUMNS for w in WORDS}
        rounds[c] = [{"round": i, **{f: t * n for f, t in per_word.items()}, "pending_tuples": 3000 if "/load" in c else 0,
                      "lag_max_s": 0.01} for i, n in enumerate(BASE)]
    plans = {f"{k}/{c}:{w}": ("Seq Scan" if k == NONE or (k == "trgm" and len(w) < 3) else "Bitmap Index Scan")
             for k in KINDS for c in COLUMNS for w in WORDS}
    hits = {f"{k}/{c}:{w}": 10 for k in KINDS for c in COLUMNS for w in WORDS}
    return {"rounds": rounds, "kinds": list(KINDS), "plans": plans, "hits": hits} | raw


def _judge(fid: str, raw: dict, features: frozenset[str] = FEATURES) -> str:
    return FINDING[fid].judge(Rounds(raw), Environment(17, 2, features, raw)).status


def test_insert_findings_fail_when_an_index_costs_nothing() -> None:
    assert _judge("F1", _world()) == REPRODUCED
    assert _judge("F1", _world({ingest("trgm", "description"): 4990.0})) == CONTRADICTED
    assert _judge("F2", _world()) == REPRODUCED
    assert _judge("F2", _world({ingest("bigm", "description"): 4800.0})) == CONTRADICTED
    assert _judge("F3", _world()) == CONTRADICTED  # PGroonga slower on descriptions
    assert _judge("F3", _world({ingest("pgroonga", "description"): 4000.0, ingest("bigm", "description"): 3600.0})) == REPRODUCED
    assert _judge("F3", _world(), frozenset({"pg_bigm"})) == NOT_APPLICABLE


def test_search_findings_fail_on_crafted_latencies() -> None:
    assert _judge("F4", _world()) == REPRODUCED
    assert _judge("F4", _world(search_ms={search(NONE, SINGLE, LOADED): 21.0})) == CONTRADICTED
    assert _judge("F5", _world()) == REPRODUCED
    assert _judge("F5", _world(search_ms={search("pgroonga", SINGLE, LOADED): 15.0})) == CONTRADICTED
    assert _judge("F6", _world()) == REPRODUCED
    assert _judge("F6", _world(search_ms={search("pgroonga", SINGLE, LOADED): 0.6})) == CONTRADICTED
    plans = {f"trgm/{c}:{w}": "Bitmap Index Scan" for c in COLUMNS for w in WORDS}
    assert _judge("F7", _world()) == REPRODUCED
    assert _judge("F7", _world(plans=_world()["plans"] | plans)) == CONTRADICTED
    assert _judge("F8", _world()) == REPRODUCED
    assert _judge("F8", _world(search_ms={search("bigm", SINGLE, IDLE): 19.0})) == CONTRADICTED


def test_claims_over_every_kind_are_reproduced_in_part_on_pg_trgm_alone() -> None:
    """The image here has neither pg_bigm nor PGroonga: what holds on pg_trgm holds in part."""
    alone = {"kinds": [NONE, "trgm"]}
    for fid in ("F1", "F5", "F9", "F11"):
        assert _judge(fid, _world(**alone)) == PARTIAL, fid
    v = FINDING["F1"].judge(Rounds(_world(**alone)), Environment(17, 2, FEATURES, _world(**alone)))
    assert v.reason.en == "reproduced for pg_trgm; pg_bigm and PGroonga not measured here"
    assert _judge("F1", _world({ingest("trgm", "description"): 4990.0}, **alone)) == CONTRADICTED
    assert _judge("F2", _world(**alone)) == REPRODUCED  # about long and short text, not every kind


def test_counts_and_replication_findings_fail_on_crafted_records() -> None:
    assert _judge("F9", _world()) == REPRODUCED
    assert _judge("F9", _world(hits=_world()["hits"] | {"pgroonga/title:猫": 9})) == CONTRADICTED
    assert _judge("F10", _world()) == REPRODUCED
    assert _judge("F10", _world({PUBLISHER_INGEST: 3000.0})) == CONTRADICTED
    assert _judge("F11", _world()) == REPRODUCED
    assert _judge("F11", _world(search_ms={search("bigm", SUBSCRIBER, IDLE): 0.8})) == CONTRADICTED
    assert _judge("F12", _world()) == REPRODUCED
    assert _judge("F12", _world(search_ms={search(NONE, SUBSCRIBER, LOADED): 50.0})) == CONTRADICTED
    assert _judge("F13", _world()) == REPRODUCED
    lagging = _world()
    for r in lagging["rounds"][search("bigm", SUBSCRIBER, LOADED)]:
        r["lag_max_s"] = 3.0
    assert _judge("F13", lagging) == CONTRADICTED
    keeping_up = _world()  # the last row applied 2 ms after it was inserted, every round
    for r in keeping_up["rounds"][PUBLISHER_INGEST]:
        r["apply_s"] = r["insert_s"] + 0.002
    assert _judge("F13", keeping_up) == CONTRADICTED


def test_without_logical_replication_the_single_node_findings_are_still_judged() -> None:
    """9.6 runs the single node only: F10-F13 do not apply, the rest are judged as on 10+."""
    world = _world()
    world["rounds"] = {c: runs for c, runs in world["rounds"].items()
                       if c != PUBLISHER_INGEST and f"/{SUBSCRIBER}/" not in c}
    status = {f.id: f.judge(Rounds(world), Environment(9.6, 2, FEATURES, world)).status for f in FINDINGS}
    assert {fid for fid, s in status.items() if s == NOT_APPLICABLE} == {"F10", "F11", "F12", "F13"}
    assert all(status[f"F{i}"] == _judge(f"F{i}", _world()) for i in range(1, 10)), status


def test_a_finding_that_needs_pg_bigm_says_what_lacks_it() -> None:
    """The image, the existing server, or the local binaries: the reason names where it ran."""
    raw = _world()
    for where, says in (({}, "This image has no pg_bigm."), ({"external": True}, "This server has no pg_bigm."),
                        ({"local": True}, "These binaries have no pg_bigm.")):
        v = FINDING["F8"].judge(Rounds(raw), Environment(17, 2, frozenset({"pgroonga"}), raw, **where))
        assert v.status == NOT_APPLICABLE and v.reason.en.startswith(says), v.reason.en
