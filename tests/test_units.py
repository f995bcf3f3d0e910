"""Pure units: number formatting, measuring helpers, results and cache keys, pg_test_timing."""
import json

import pytest

from repro import results
from repro.measure import paired_change, rotated, spread
from repro.pgtools import parse_test_fsync, parse_test_timing
from repro.text import Number, Text
from repro.wal import lsn, lsn_text
from repro.waits import cpu_split, shares


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


def test_rotation_varies_positions_and_predecessors() -> None:
    items = ["a", "b", "c", "d"]
    orders = [rotated(items, r) for r in range(4)]
    assert orders == [["a", "b", "c", "d"], ["a", "d", "c", "b"], ["c", "d", "a", "b"],
                      ["c", "b", "a", "d"]]
    for item in items:  # each condition runs first or last at least once, and not always after one other
        assert {o.index(item) for o in orders} & {0, 3}
        assert len({o[o.index(item) - 1] for o in orders if o.index(item) > 0}) > 1


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


def test_pg_test_fsync_parser_reads_every_measured_line(data_dir) -> None:
    for major in (13, 17):
        rows = parse_test_fsync((data_dir / f"pg_test_fsync_{major}.txt").read_text())
        one = {r["method"]: r for r in rows if r["section"].endswith("one 8kB write")}
        assert {"open_datasync", "fdatasync", "fsync", "open_sync"} <= set(one), major
        assert all(r["ops_per_s"] > 0 and r["usecs"] > 0 for r in rows)
        assert any(r["section"].startswith("Non-sync") for r in rows)


def test_cpu_split_is_vmstat_columns() -> None:
    # user nice system idle iowait irq softirq steal
    before = [100, 0, 50, 1000, 10, 0, 0, 5]
    after = [160, 20, 90, 1060, 30, 5, 5, 15]  # +60 +20 +40 +60 +20 +5 +5 +10 = 220
    split = cpu_split(before, after)
    assert split["us"] == pytest.approx(80 / 220 * 100)
    assert split["sy"] == pytest.approx(50 / 220 * 100)
    assert split["id"] == pytest.approx(60 / 220 * 100)
    assert split["wa"] == pytest.approx(20 / 220 * 100)
    assert split["st"] == pytest.approx(10 / 220 * 100)
    assert sum(split.values()) == pytest.approx(100)


def test_wait_shares_leave_out_samples_on_cpu() -> None:
    assert shares({"CPU": 50, "Client:ClientRead": 30, "IO:WALSync": 10}) == {
        "Client:ClientRead": pytest.approx(75.0), "IO:WALSync": pytest.approx(25.0)}
    assert shares({"CPU": 5}) == {}


def test_lsn_round_trip() -> None:
    assert lsn("16/B374D848") == (0x16 << 32) + 0xB374D848
    assert lsn_text(lsn("16/B374D848")) == "16/B374D848"
    assert lsn("0/0") == 0 and lsn_text(0) == "0/0"
