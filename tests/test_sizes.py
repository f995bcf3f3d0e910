"""The original's size beside ours (repro/sizes.py): each magnitude outcome on crafted
rounds, and a declaration that does not parse or names another unit stops `repro register`
with one line naming the finding."""
from __future__ import annotations

import dataclasses
import re
import shutil
from pathlib import Path

import pytest

from conftest import SIZE_PAIR, unrecomputable_ratios

from repro import claims, cli, registry, sizes
from repro.errors import ReproError
from repro.stats import Rounds, median
from repro.text import Text
from repro.verdict import Above, Check, Environment, Finding, Measure

ENV = Environment(17, 2, frozenset(), {})


def _rounds(values: list[float]) -> Rounds:
    return Rounds({"rounds": {"a": [{"round": i, "v": v} for i, v in enumerate(values)]}})


def _finding(unit: str = "%", signed: bool = True) -> Finding:
    m = Measure(Text("変化", "change"), lambda r: median(r.values("a", "v")), unit, 1, signed=signed)
    return Finding("F1", Text("x", "x"), [Check(m, Above(0))])


def _size(original: float, values: list[float], unit: str = "%", signed: bool = True) -> sizes.Size:
    f = _finding(unit, signed)
    text = f"{original:+g} {unit}" if signed else f"{original:g} {unit}"
    declared = sizes._numbers("demo F1", f, [text])
    return sizes.judge(declared, f.judge(_rounds(values), ENV), runs=1)


AROUND_70 = [68.0, 72.0, 70.0, 69.0, 71.0, 70.5]


@pytest.mark.parametrize("original, values, outcome", [
    (69.9, AROUND_70, sizes.SAME),  # the original's point inside our interval
    (150.0, AROUND_70, sizes.SMALLER),
    (20.0, AROUND_70, sizes.LARGER),
    (-30.0, AROUND_70, sizes.REVERSED),  # a cost then, a gain now
])
def test_each_magnitude_outcome(original: float, values: list[float], outcome: str) -> None:
    s = _size(original, values)
    assert s.outcome == outcome and s.comparable
    ours = s.ours.format("en", interval=False)
    assert s.text().en == f"{sizes.OUTCOME[outcome].en}: ours {ours} vs original {original:+g}\u00a0%"
    if outcome == sizes.SAME:
        assert s.ratio is None
    else:  # the ratio of the two effects (log scale of a change), with its interval around it, orders them
        assert s.low <= s.ratio <= s.high
        assert (s.ratio < 1) == (outcome != sizes.LARGER)
    row = s.as_dict()
    assert set(row) == {"original", "size", "size_ratio", "size_low", "size_high"} and row["original"] == original


def test_a_size_says_ours_beside_the_original_and_no_ratio_a_reader_cannot_recompute() -> None:
    """auto_explain F6 on 11: +48.3 % now, +25.8 % then. On the log scale the effect is 1.72 times
    the original's, which no reader recomputes from the two numbers (48.3 / 25.8 = 1.87): the
    text shows the two numbers, in one unit, and no ratio."""
    s = _size(25.8, [47.0, 49.5, 48.0, 48.8, 48.3, 48.1])
    assert s.outcome == sizes.LARGER and s.ratio == pytest.approx(1.72, abs=0.02)
    for lang in ("ja", "en"):
        pair = SIZE_PAIR.search(s.text()(lang))
        assert pair and pair.group(2) == pair.group(4) == "%", s.text()(lang)
        assert pair.group(3) == "+25.8" and pair.group(1) == s.ours.format(lang, interval=False).rstrip("\u00a0%")
        assert unrecomputable_ratios(s.text()(lang)) == []
    # the check against such a text fails on a log-scale ratio, and passes a quotient to its precision
    assert unrecomputable_ratios(f"{s.text().en}: 1.72 × the original's") == ["1.72"]
    assert unrecomputable_ratios("larger now: ours +48.3 % vs original +25.8 %, 1.87 × it") == []


def test_a_size_judged_on_fewer_runs_than_the_verdict_says_so() -> None:
    """The value shown is the pooled verdict's (the one in the measured column); where the
    verdict pools runs from before the size's registration, the text names the runs that judge it."""
    s = dataclasses.replace(_size(25.8, [47.0, 49.5, 48.0, 48.8, 48.3, 48.1]), runs=5, pooled=8)
    assert s.text().en.endswith("(size judged on the 5 runs since its registration)")
    assert s.text().ja.endswith("(大きさは登録後の 5 回の実行で判定)")
    assert unrecomputable_ratios(s.text().en) == unrecomputable_ratios(s.text().ja) == []
    assert s.fewer_runs and s.text(runs=False).en == s.text().en.removesuffix(f" ({s.since().en})")


def test_a_ratio_compares_effects_on_the_log_scale() -> None:
    # 0.5× then, 0.71× now: half the log effect (log 0.71 / log 0.5 ≈ 0.5), smaller now
    s = _size(0.5, [0.70, 0.72, 0.71, 0.70, 0.72, 0.71], unit="×", signed=False)
    assert s.outcome == sizes.SMALLER and s.ratio == pytest.approx(0.49, abs=0.02)


def test_not_comparable_and_no_run() -> None:
    f = _finding()
    why = sizes.Original(why=Text("原典は 96 コアです。", "The original had 96 cores."))
    assert sizes.judge(why, f.judge(_rounds(AROUND_70), ENV), 1).text().en == \
        "not comparable: The original had 96 cores."
    declared = sizes._numbers("demo F1", f, ["+69.9 %"])
    assert sizes.judge(declared, f.judge(_rounds(AROUND_70), ENV), 0).outcome == sizes.NO_RUN


@pytest.mark.parametrize("entry, message", [
    ('original = ["about 70 %"]', "demo F1: the original number of check 1 does not parse: 'about 70 %'"),
    ('original = ["+69.9 ms"]', "demo F1: the original number of check 1 is in 'ms', its measure in '%'"),
    ('original = ["+1 %", "+2 %"]', "demo F1: original needs one entry per check (1)"),
    ('original = ["none"]', "demo F1: no check has an original number"),
    ('not_comparable = { en = "why" }', "demo F1: not_comparable needs its reason in Japanese and English"),
])
def test_a_bad_size_is_a_registration_error_naming_the_finding(tmp_path: Path, entry: str, message: str) -> None:
    chapter = dataclasses.replace(registry.get("auto_explain"), name="demo", package=tmp_path,
                                  findings=[_finding()])
    (tmp_path / sizes.FILE).write_text(f"[F1]\n{entry}\n", encoding="utf-8")
    with pytest.raises(ReproError) as exc:
        claims.register_sizes(chapter)
    assert str(exc.value).startswith(message)


def test_repro_register_refuses_a_bad_size_with_one_line(tmp_path: Path, monkeypatch, capsys) -> None:
    real = registry.get("fdw")
    package = tmp_path / "fdw"
    shutil.copytree(real.package, package, ignore=shutil.ignore_patterns("__pycache__"))
    finding = next(f for f in real.findings if f.checks[0].measure.unit == "×")
    fid, others = finding.id, ', "none"' * (len(finding.checks) - 1)
    (package / sizes.FILE).write_text(f'[{fid}]\noriginal = ["0.4 %"{others}]\n', encoding="utf-8")
    monkeypatch.setattr(registry, "get", lambda name: dataclasses.replace(real, package=package))
    before = (package / claims.FILE).read_text(encoding="utf-8")
    assert cli.main(["register", "fdw"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines == [f"error: fdw {fid}: the original number of check 1 is in '%', its measure in '×'"]
    assert (package / claims.FILE).read_text(encoding="utf-8") == before, "nothing registered"


def test_auto_explains_originals_are_its_published_latencies_rounded() -> None:
    """An original's number is the same wherever it appears: every change in % that auto_explain
    states as the original's (the findings' original column, sizes.toml) is a quotient of two
    latencies of one table of original.toml, rounded to the decimals shown, as the page's
    tables compute it (F7's every option: +1.8 %, which the source's text cuts to 1.7 %)."""
    chapter = registry.get("auto_explain")
    latencies = [t for t in chapter.original.values() if isinstance(t, dict) and all(
        isinstance(x, float) for x in t.values())]
    changes = [(a / b - 1) * 100 for t in latencies for a in t.values() for b in t.values() if a != b]
    declared = sizes.parse(chapter)
    stated = [(f.id, text) for f in chapter.findings for text in (f.original.ja, f.original.en)] + \
             [(fid, text) for fid, d in declared.items() for text in d.texts]
    wrong = []
    for fid, text in stated:
        for m in re.finditer(r"([+\-−]\d+\.(\d+))\s?%", text):
            value = float(m.group(1).replace("−", "-"))
            if not any(round(c, len(m.group(2))) == value for c in changes):
                wrong.append(f"{fid}: {m.group(0)}")
    assert len(stated) > 10 and not wrong, wrong
