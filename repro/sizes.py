"""The original's size beside ours: for a claim of the original whose source gives a number
for the same statistic as a check, whether our pooled interval holds that number ("same
size"), or the effect is smaller or larger now, by how much (the ratio of the two effects,
with its interval). Where scale, hardware or the kinds measured change what the number
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
from .verdict import Finding, Verdict

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
POINT = Text("原典の値は区間なしで報告されているため、1 点として扱います。",
             "The original reports its numbers without an interval: each is taken as a point.")
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
    """How big the effect is now beside the original: the outcome, and for the deciding check
    its original value, our pooled interval and the ratio of the two effects."""

    outcome: str
    check: int | None = None  # the deciding check's index
    original: Number | None = None
    ours: Number | None = None
    ratio: float | None = None
    low: float | None = None
    high: float | None = None
    why: Text | None = None
    runs: int = 0
    several: bool = False  # the finding has several checks: the text names the deciding one

    @property
    def comparable(self) -> bool:
        return self.outcome in MARK

    def text(self, full: bool = False) -> Text:
        """"same size as the original (+0.9 %)", "smaller now: 0.42 [0.30, 0.55] × the original's
        effect"; `full` adds our estimate and the runs it rests on (the runs since the size was
        registered, which may be fewer than the verdict's)."""
        head = OUTCOME[self.outcome]
        if self.outcome == NOT_COMPARABLE and self.why:
            return Text(f"{head.ja}: {self.why.ja}", f"{head.en}: {self.why.en}")
        if not self.comparable or self.original is None:
            return head
        orig = Text(self.original.format("ja"), self.original.format("en"))
        if self.several and self.check is not None:
            head = Text(f"{head.ja} (判定条件 {self.check + 1})", f"{head.en} (check {self.check + 1})")
        if self.outcome == SAME or self.ratio is None:
            short = Text(f"{head.ja} (原典 {orig.ja})", f"{head.en} (original {orig.en})")
        else:
            r = Number(self.ratio, "×", 2, low=self.low, high=self.high)
            short = Text(f"{head.ja}: 効果は原典 ({orig.ja}) の {r.format('ja')}",
                         f"{head.en}: the effect is {r.format('en')} the original's ({orig.en})")
        if not full or self.ours is None:
            return short
        return Text(f"{short.ja}。ここでの値 {self.ours.format('ja')} (大きさの登録の後の {self.runs} 回の実行)",
                    f"{short.en}; ours {self.ours.format('en')} (the {self.runs} run{'s' * (self.runs > 1)} "
                    f"since the size was registered)")

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


def judge(original: Original, verdict: Verdict, runs: int) -> Size:
    """The magnitude verdict of a finding from its verdict over the runs counted for its size."""
    if original.why is not None:
        return Size(NOT_COMPARABLE, why=original.why)
    if runs == 0 or not verdict.checks:
        return Size(NO_RUN)
    sizes = [s for s in (_check(i, v, c, runs) for i, (v, c) in enumerate(zip(original.values, verdict.checks)))
             if s is not None]
    if not sizes:
        return Size(NO_RUN)
    if len(verdict.checks) > 1:
        sizes = [replace(s, several=True) for s in sizes]
    different = [s for s in sizes if s.outcome != SAME]
    if not different:  # every check the original's size: none decides it
        return replace(sizes[0], several=False)
    return max(different, key=lambda s: math.inf if not s.ratio else abs(math.log(abs(s.ratio))))


def _check(i: int, value: float | None, result: Any, runs: int) -> Size | None:
    e, m = result.estimate, result.check.measure
    if value is None or e.value is None or e.low is None or e.high is None:
        return None
    original, ours = m.number(value), m.number(e.value, e.low, e.high)
    if e.low <= value <= e.high:
        return Size(SAME, i, original, ours, runs=runs)
    base = effect(value, m.scale, m.unit)
    if base == 0 or not math.isfinite(base):  # no effect then: any effect now is larger
        return Size(LARGER, i, original, ours, runs=runs)
    ratio, low, high = (effect(x, m.scale, m.unit) / base for x in (e.value, e.low, e.high))
    low, high = min(low, high), max(low, high)
    outcome = REVERSED if high < 0 else SMALLER if ratio < 1 else LARGER
    return Size(outcome, i, original, ours, ratio, low, high, runs=runs)
