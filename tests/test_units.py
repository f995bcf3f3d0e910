"""Pure units: number formatting, measuring helpers, results and cache keys, pg_test_timing."""
import json

import pytest

from repro import results
from repro.measure import paired_change, rotated, spread
from repro.pgtools import parse_test_timing
from repro.text import Number, Text


@pytest.mark.parametrize("number, lang, text", [
    (Number(12.345, "%", 1, signed=True), "en", "+12.3 %"),
    (Number(12.345, "%", 1, signed=True), "ja", "+12.3%"),
    (Number(-0.04, "%", 1, signed=True), "en", "±0.0 %"),
    (Number(2523.48897, "", 0), "en", "2,523"),
    (Number(0.1104, "ms"), "ja", "0.110 ms"),
    (Number(38.268, "ms"), "en", "38.3 ms"),
    (Number(None, "ms"), "en", "—"),
])
def test_number_format(number: Number, lang: str, text: str) -> None:
    assert number.format(lang) == text


def test_text_picks_language() -> None:
    t = Text("日本語", "English")
    assert (t("ja"), t("en"), t.as_dict()) == ("日本語", "English", {"ja": "日本語", "en": "English"})


def test_rotation_puts_every_condition_in_every_position() -> None:
    items = ["a", "b", "c"]
    orders = [rotated(items, r) for r in range(3)]
    assert orders == [["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"]]
    for position in range(3):
        assert {o[position] for o in orders} == set(items)


def test_paired_change_uses_each_round_as_its_own_control() -> None:
    # the machine slows down 2x in round 2; the pairs still say +10 %
    assert paired_change([1.1, 2.2, 1.1], [1.0, 2.0, 1.0]) == pytest.approx(10.0)
    assert spread([1.0, 2.0, 1.5]) == pytest.approx(66.666, rel=1e-3)


def test_cache_key_freshness() -> None:
    key = results.cache_key("abc", "tiny", "sha256:1", "container")
    doc = {"key": key}
    assert results.is_fresh(doc, key)
    assert results.is_fresh(doc, {**key, "image": None})  # cached mode: any image
    for changed in ({"module": "abd"}, {"scale": "default"}, {"image": "sha256:2"},
                    {"target": "dsn:x"}, {"format": results.FORMAT + 1}):
        assert not results.is_fresh(doc, {**key, **changed})
    assert not results.is_fresh(None, key)


def test_source_hash_changes_with_content(tmp_path) -> None:
    f = tmp_path / "m.py"
    f.write_text("a = 1\n")
    before = results.source_hash([f])
    f.write_text("a = 2\n")
    assert results.source_hash([f]) != before


@pytest.mark.parametrize("content", ["{ not json", "[]", json.dumps({"chapter": "x"}), "\xff\xfe"])
def test_corrupt_result_files_are_reported_not_crashed_on(tmp_path, monkeypatch, content) -> None:
    monkeypatch.setenv("REPRO_RESULTS", str(tmp_path))
    (tmp_path / "x.json").write_text(content, encoding="latin-1")
    with pytest.raises(results.CorruptResult):
        results.load("x")


def test_save_is_atomic_and_loadable(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("REPRO_RESULTS", str(tmp_path))
    doc = {k: {} for k in results.REQUIRED} | {"chapter": "x", "format": 1}
    results.save(doc)
    assert results.load("x") == doc
    assert not list(tmp_path.glob("*.tmp"))


def test_pg_test_timing_parser(data_dir) -> None:
    t = parse_test_timing((data_dir / "pg_test_timing_17.txt").read_text())
    assert t["per_loop_ns"] == pytest.approx(34.34)
    assert t["histogram"][0] == [1, pytest.approx(96.78043), 28182931]
    assert sum(share for _, share, _ in t["histogram"]) == pytest.approx(100, abs=0.01)
    with pytest.raises(ValueError):
        parse_test_timing("nothing here")
