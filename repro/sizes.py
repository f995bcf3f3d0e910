"""The original's size beside ours: for a claim of the original whose source gives a number
for the same statistic as a check, whether our pooled interval holds that number ("same
size"), or the effect is smaller or larger now. Pages show the two numbers side by side; the
ratio of the two effects on the measure's scale (with its interval) only orders the largest
changes, since no reader could recompute it from them. Where scale, hardware or the kinds measured change what the number
means, the chapter says why it is not comparable.

A chapter declares these in `sizes.toml` in its package, a table per finding:

    [F3]
    original = ["+0.9 %", "+69.9 %", "+89.7 %"]  # one per check, in its measure's unit; "none": not given
    basis = "000, the table under ...: 0.112 / 0.110 - 1"

    [F6]
    not_comparable = { ja = "...", en = "..." }
    basis = "..."

Like a threshold, a size is registered before the runs that judge it (`repro register`
records it in the register with its date: claims.register_sizes), and only runs started
after that count. The original's numbers come without an interval: each is taken as a point.
"""
from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass, replace
from typing import Any

from .chapter import Chapter
from .errors import ReproError
from .text import Number, Text
from .verdict import REPRODUCED, Finding, Verdict

FILE = "sizes.toml"
SAME, SMALLER, LARGER, REVERSED = "same size", "smaller now", "larger now", "reversed now"
NOT_COMPARABLE, NO_RUN = "not comparable", "no run"
OUTCOME = {
    SAME: Text("原典と同じ大きさ", "same size"),
    SMALLER: Text("いまは原典より小さい", "smaller now"),
    LARGER: Text("いまは原典より大きい", "larger now"),
    REVERSED: Text("いまは原典と逆向き", "the other way now"),
    NOT_COMPARABLE: Text("原典と比べられない", "not comparable"),
    NO_RUN: Text("大きさの登録の後の実行がまだありません", "no run since the size was registered"),
}
MARK = {SAME: "=", SMALLER: "↓", LARGER: "↑", REVERSED: "⇅"}
POINT = Text("原典の値は区間なしで報告されているため、1 点として扱います。「原典と同じ大きさ」は、その点がここでの 95% 信頼区間に入ることです。",
             "The original reports its numbers without an interval: each is taken as a point, and \"same size\" "
             "means that point lies within our 95 % interval.")
_NUMBER = re.compile(r"^([+\-−]?\d+(?:\.\d+)?)\s*(\S*)$")


@dataclass(frozen=True)
class Original:
    """A finding's original numbers, one per check (None: the source gives none for it), or
    why they are not comparable."""

    texts: tuple[str, ...] = ()
    values: tuple[float | None, ...] = ()
    why: Text | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"original": list(self.texts)} if self.why is None else {"not_comparable": self.why.as_dict()}


def parse(chapter: Chapter) -> dict[str, Original]:
    """The chapter's declared sizes, checked against its findings: a number that does not
    parse, a unit other than the check's measure's, or a count other than the checks' is an
    error naming the finding."""
    path = chapter.package / FILE
    try:
        declared = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ReproError(f"{path} is not readable TOML: {exc}") from exc
    findings = {f.id: f for f in chapter.findings}
    found = {}
    for fid, entry in declared.items():
        where = f"{chapter.name} {fid}"
        if fid not in findings:
            raise ReproError(f"{where}: sizes.toml names a finding the chapter does not have")
        if ("original" in entry) == ("not_comparable" in entry):
            raise ReproError(f"{where}: give either original = [...] or not_comparable = {{ ja, en }}")
        if "not_comparable" in entry:
            why = entry["not_comparable"]
            if not isinstance(why, dict) or not str(why.get("ja", "")).strip() or not str(why.get("en", "")).strip():
                raise ReproError(f"{where}: not_comparable needs its reason in Japanese and English (ja, en)")
            found[fid] = Original(why=Text(why["ja"], why["en"]))
        else:
            found[fid] = _numbers(where, findings[fid], entry["original"])
    return found


def _numbers(where: str, finding: Finding, texts: Any) -> Original:
    if not isinstance(texts, list) or len(texts) != len(finding.checks):
        raise ReproError(f"{where}: original needs one entry per check ({len(finding.checks)}), "
                         f"\"none\" where the source gives no number")
    values: list[float | None] = []
    for i, (text, check) in enumerate(zip(texts, finding.checks), 1):
        if text == "none":
            values.append(None)
            continue
        m = _NUMBER.match(str(text).strip())
        if not m:
            raise ReproError(f"{where}: the original number of check {i} does not parse: {text!r}")
        if m.group(2) != check.measure.unit:
            raise ReproError(f"{where}: the original number of check {i} is in {m.group(2) or 'no unit'!r}, "
                             f"its measure in {check.measure.unit or 'no unit'!r}")
        values.append(float(m.group(1).replace("−", "-")))
    if all(v is None for v in values):
        raise ReproError(f"{where}: no check has an original number: say why it is not comparable instead")
    return Original(tuple(str(t) for t in texts), tuple(values))


@dataclass(frozen=True)
class Size:
    """How big the effect of one check is now beside the original: the outcome, the
    original's value, our pooled value (the verdict's, shown beside it) and the ratio of the
    two effects on the measure's scale (what orders the largest changes; never shown)."""

    outcome: str
    check: int | None = None  # the check's index
    original: Number | None = None
    ours: Number | None = None  # the pooled verdict's value of the check
    judged: Number | None = None  # the check's value and interval over the runs that judge the size
    ratio: float | None = None
    low: float | None = None
    high: float | None = None
    why: Text | None = None
    runs: int = 0  # the runs since the size was registered: those that judge it
    pooled: int = 0  # the runs the verdict pools (more, where some came before the size's registration)
    several: bool = False  # the finding has several checks: the text names this one

    @property
    def comparable(self) -> bool:
        return self.outcome in MARK

    def text(self, runs: bool = True) -> Text:
        """"larger now (check 2): ours +46.7 % vs original +25.8 %": the two numbers compared,
        in the check's unit, and no ratio a reader could not recompute from them; and (`runs`),
        where the verdict pools runs from before the size's registration, the runs that judge it."""
        head = OUTCOME[self.outcome]
        if self.several and self.check is not None:
            head = Text(f"{head.ja} (判定条件 {self.check + 1})", f"{head.en} (check {self.check + 1})")
        if self.outcome == NOT_COMPARABLE and self.why:
            return Text(f"{head.ja}: {self.why.ja}", f"{head.en}: {self.why.en}")
        if not self.comparable or self.original is None or self.ours is None:
            return head
        ours, orig = (Text(n.format("ja", interval=False), n.format("en", interval=False))
                      for n in (self.ours, self.original))
        short = Text(f"{head.ja}: 本ビルド {ours.ja} 対 原典 {orig.ja}", f"{head.en}: ours {ours.en} vs original {orig.en}")
        if not runs or not self.fewer_runs:
            return short
        since = self.since()
        return Text(f"{short.ja} ({since.ja})", f"{short.en} ({since.en})")

    @property
    def fewer_runs(self) -> bool:
        """The verdict pools runs from before the size's registration, which do not judge it."""
        return self.runs < self.pooled

    def since(self) -> Text:
        return Text(f"大きさは登録後の {self.runs} 回の実行で判定",
                    f"size judged on the {self.runs} run{'s' * (self.runs > 1)} since its registration")

    def as_dict(self) -> dict[str, Any]:
        """The fields of `repro matrix --json`."""
        return {"original": self.original.value if self.original else None, "size": self.outcome,
                "size_ratio": self.ratio, "size_low": self.low, "size_high": self.high}


def effect(value: float, scale: str, unit: str) -> float:
    """The size of an effect on its measure's scale: a ratio's log (1× is none), a signed
    change's log of 1 + change, any other quantity as it is."""
    if scale == "ratio":
        return math.log(value / 100 if unit == "%" else value) if value > 0 else -math.inf
    if scale == "change":
        return math.log1p(value / 100) if value > -100 else -math.inf
    return value


def each_check(original: Original, judged: Verdict, runs: int, pooled: Verdict | None = None) -> list[Size]:
    """Every check's size beside the original's number for it, one per check: judged on the
    `runs` counted for sizes (`judged` is their verdict), shown with the value of the verdict
    the page shows (`pooled`, by default `judged`)."""
    pooled = pooled or judged
    count = len(judged.finding.checks)
    if original.why is not None:
        return [Size(NOT_COMPARABLE, why=original.why)] * count
    if runs == 0 or not judged.checks:
        return [Size(NO_RUN)] * count
    several = count > 1
    return [replace(_check(i, value, result, runs), several=several, pooled=pooled.runs,
                    ours=pooled.checks[i].number() if pooled.checks else None,
                    original=_as_declared(result.check.measure, text, value))
            for i, (text, value, result) in enumerate(zip(original.texts, original.values, judged.checks))]


def _as_declared(measure: Any, text: str, value: float | None) -> Number | None:
    """The original's number as sizes.toml gives it, to its decimals (as the source does)."""
    if value is None:
        return None
    decimals = m.group(1).partition(".")[2] if (m := _NUMBER.match(text.strip())) else ""
    return replace(measure.number(value), digits=len(decimals))


def shown_index(verdict: Verdict, each: list[Size]) -> int | None:
    """The one check a finding is shown by, value and size together (the matrix's cell, the
    size column, `repro matrix --json`): the check that gave its verdict; where every check
    held, the one whose size is furthest from the original's."""
    if verdict.status == REPRODUCED and (i := furthest(each)) is not None:
        return i
    return next((i for i, c in enumerate(verdict.checks) if c is verdict.deciding), None)


def furthest(each: list[Size]) -> int | None:
    """The check whose size differs most from the original's (the first comparable one where
    all are the same size); None where no check compares."""
    comparable = [s for s in each if s.comparable]
    different = [s for s in comparable if s.outcome != SAME]
    if not different:
        return comparable[0].check if comparable else None
    return max(different, key=lambda s: math.inf if not s.ratio else abs(math.log(abs(s.ratio)))).check


def judge(original: Original, judged: Verdict, runs: int, pooled: Verdict | None = None) -> Size:
    """A finding's size: that of the check it is shown by (shown_index, on `pooled`)."""
    each = each_check(original, judged, runs, pooled)
    i = shown_index(pooled or judged, each)
    return each[i if i is not None else 0] if each else Size(NO_RUN)


NO_NUMBER = Text("原典はこの判定条件の数値を示していません", "the original gives no number for this check")


def _check(i: int, value: float | None, result: Any, runs: int) -> Size:
    e, m = result.estimate, result.check.measure
    if value is None:
        return Size(NOT_COMPARABLE, i, why=NO_NUMBER)
    if e.value is None or e.low is None or e.high is None:
        return Size(NO_RUN, i)
    original, judged = m.number(value), m.number(e.value, e.low, e.high)
    if e.low <= value <= e.high:
        return Size(SAME, i, original, judged=judged, runs=runs)
    base = effect(value, m.scale, m.unit)
    if base == 0 or not math.isfinite(base):  # no effect then: any effect now is larger
        return Size(LARGER, i, original, judged=judged, runs=runs)
    ratio, low, high = (effect(x, m.scale, m.unit) / base for x in (e.value, e.low, e.high))
    low, high = min(low, high), max(low, high)
    outcome = REVERSED if high < 0 else SMALLER if ratio < 1 else LARGER
    return Size(outcome, i, original, judged=judged, ratio=ratio, low=low, high=high, runs=runs)
