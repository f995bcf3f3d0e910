"""Findings declared once: what is measured, against which threshold, and a three-way
verdict from the measured value's confidence interval.

A finding is a list of checks; a check is a `Measure` (a statistic of the rounds,
with its label and unit) and a threshold. The "holds if" text in both languages,
the verdict and what the page and the CLI print (in the words of repro/verdict_words.py)
all come from that declaration:

- reproduced: every check's interval lies on the finding's side of its threshold;
- contradicted: some check's interval lies entirely on the other side;
- changed in N: contradicted on a major from N on, where the finding declares (and cites)
  that PostgreSQL N changed the behaviour the original measured: news, not a failure;
- inconclusive: otherwise (an interval straddles a threshold);
- not applicable: a requirement (CPUs, an image feature, a major that has the feature,
  a kind of data: repro/requirements.py) is not met where the result was measured; the
  badge names it.

Mechanism checks (a syscall, a plan shape, a WAL position) are `exact`: no interval.

Each finding is of one kind (KINDS): a claim of the original publication, an exact
mechanism check, a claim of this report, or a sanity check (true by construction, so it
reproduces nothing). The declaration is registered (repro/claims.py): a change to it
needs a revision entry, and only runs after the revision count.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from .requirements import Environment, Requirement, Scope, binaries_beside
from .stats import Estimate, Rounds, estimate, pool, sample
from .text import Number, Text

REPRODUCED, PARTIAL, CONTRADICTED, CHANGED, INCONCLUSIVE, NOT_APPLICABLE = (
    "reproduced", "reproduced in part", "contradicted", "changed", "inconclusive", "not applicable")
STATUSES = (REPRODUCED, PARTIAL, CONTRADICTED, CHANGED, INCONCLUSIVE, NOT_APPLICABLE)
ORIGINAL, MECHANISM, REPORT, SANITY = "original", "mechanism", "report", "sanity"
KINDS = (ORIGINAL, MECHANISM, REPORT, SANITY)


@dataclass(frozen=True)
class Measure:
    """A measured quantity: a statistic of the rounds, labelled, with its unit."""

    label: Text
    statistic: Callable[[Rounds], float | None]
    unit: str = ""
    digits: int | None = None
    signed: bool = False
    exact: bool = False  # a mechanism: checked exactly, no interval
    # the least value the quantity can take (a duration, a share: 0). The t interval of a
    # linear-scale mean can reach below it when one round stands out; the page shows the
    # interval cut at the floor (its coverage is the same: the true value is not below
    # it). Judging is unaffected: a floor at or below every threshold changes no verdict.
    floor: float | None = None
    ceiling: float | None = None  # the most it can take (a share: 100 %), the same way
    ratio: bool = False  # a ratio shown in % (one TPS as a share of another): log scale too

    @property
    def scale(self) -> str:
        """How rounds are averaged (stats.SCALES): ratios and signed % changes on the log
        scale, the rest as they are."""
        if self.unit == "×" or self.ratio:
            return "ratio"
        return "change" if self.unit == "%" and self.signed else "linear"

    def estimate(self, rounds: Rounds) -> Estimate:
        return estimate(self.statistic, rounds, self.exact, self.scale)

    def pooled(self, runs: Sequence[Rounds]) -> Estimate:
        """Over every run that measured it (stats.pool); an exact statistic gives its value
        when every such run agrees, else the range of their values (a repeat changed it: not
        exact after all). A run that measured nothing (a trace that followed no backend, or
        whose tracer died) leaves the pool of an exact check as of a sampled one: its missing
        value is no evidence either way (registered 2026-11-29, semaphores F5)."""
        if not self.exact:
            return pool([sample(self.statistic, r) for r in runs], self.scale)
        measured = [(v, r) for r in runs if (v := self.statistic(r)) is not None]
        if not measured:
            return Estimate(None, rounds=sum(len(r.ids) for r in runs), runs=0)
        values = [v for v, _ in measured]
        rounds = sum(len(r.ids) for _, r in measured)
        return Estimate(float(np.median(values)), min(values), max(values), rounds, len(measured))

    def number(self, value: float | None, low: float | None = None,
               high: float | None = None) -> Number:
        if self.floor is not None and low is not None:
            low = max(low, self.floor)
        if self.ceiling is not None and high is not None:
            high = min(high, self.ceiling)
        return Number(value, self.unit, self.digits, self.signed, low, high)


def tps_ratio(condition: str, baseline: str, label: Text) -> Measure:
    """pgbench TPS of one condition over another's, paired round by round."""
    return Measure(label, lambda r: r.ratio(condition, baseline, "tps"), "×", 2)


class Threshold:
    """Where a measured value must lie for the finding to hold."""

    def status(self, low: float, high: float) -> str:
        raise NotImplementedError

    def text(self, m: Measure) -> Text:
        raise NotImplementedError

    def limits(self) -> tuple[float, ...]:
        """The boundaries an interval must clear to decide."""
        raise NotImplementedError


def limit_text(m: Measure, value: float, lang: str) -> str:
    """A threshold in the measure's unit: no decimals for whole numbers, no sign on zero."""
    digits = 0 if float(value).is_integer() else m.digits
    return Number(value, m.unit, digits, m.signed and value != 0).format(lang)


@dataclass(frozen=True)
class _OneSided(Threshold):
    """Holds on one side of `limit` (on it too when `inclusive`): Above and Below."""

    limit: float
    inclusive: bool = False
    sign = 1  # +1: above the limit; -1: below it
    ops = (">", "≥")

    def limits(self) -> tuple[float, ...]:
        return (self.limit,)

    def status(self, low: float, high: float) -> str:
        """As Above: an interval (low, high) below the limit is Above's (-high, -low) over -limit."""
        near, far, limit = (low, high, self.limit) if self.sign > 0 else (-high, -low, -self.limit)
        if near > limit or (self.inclusive and near >= limit):
            return REPRODUCED
        if far < limit or (not self.inclusive and far <= limit):
            return CONTRADICTED
        return INCONCLUSIVE

    def text(self, m: Measure) -> Text:
        op = self.ops[self.inclusive]
        return Text(f"{op} {limit_text(m, self.limit, 'ja')}", f"{op} {limit_text(m, self.limit, 'en')}")


class Above(_OneSided):
    """Holds above `limit` (at or above it when `inclusive`)."""


class Below(_OneSided):
    """Holds below `limit` (at or below it when `inclusive`)."""

    sign = -1
    ops = ("<", "≤")


@dataclass(frozen=True)
class Between(Threshold):
    """Holds from `low` to `high` (both included)."""

    low: float
    high: float

    def limits(self) -> tuple[float, ...]:
        return (self.low, self.high)

    def status(self, low: float, high: float) -> str:
        if low >= self.low and high <= self.high:
            return REPRODUCED
        if high < self.low or low > self.high:
            return CONTRADICTED
        return INCONCLUSIVE

    def text(self, m: Measure) -> Text:
        if self.low == -self.high:
            bound = Number(self.high, m.unit, 0 if float(self.high).is_integer() else m.digits)
            return Text(f"±{bound.format('ja')} 以内", f"within ±{bound.format('en')}")
        return Text(f"{limit_text(m, self.low, 'ja')}〜{limit_text(m, self.high, 'ja')}",
                    f"{limit_text(m, self.low, 'en')} to {limit_text(m, self.high, 'en')}")


@dataclass(frozen=True)
class Check:
    measure: Measure
    threshold: Threshold

    def text(self) -> Text:
        t = self.threshold.text(self.measure)
        return Text(f"{self.measure.label.ja} {t.ja}", f"{self.measure.label.en} {t.en}")


@dataclass(frozen=True)
class Change:
    """PostgreSQL `major` changed what the original measured: from it on, a contradicted
    finding is "changed in `major`" (news), with `why` and the release note or commit."""

    major: int
    why: Text
    cite: str  # "commit 2b73a8cd33b" (コミット … in Japanese), "PostgreSQL 14 release notes"

    def reason(self) -> Text:
        cite = "コミット " + self.cite[len("commit "):] if self.cite.startswith("commit ") else self.cite
        return Text(f"{self.major} で変わりました: {self.why.ja} ({cite})。",
                    f"Changed in {self.major}: {self.why.en} ({self.cite})")


@dataclass
class CheckResult:
    check: Check
    estimate: Estimate
    status: str

    def number(self) -> Number:
        e = self.estimate
        if self.check.measure.exact and e.low == e.high:  # counted, judged as is: no interval
            return self.check.measure.number(e.value)
        return self.check.measure.number(e.value, e.low, e.high)

    def nearest_limit(self) -> float:
        """The threshold's boundary nearest the estimate: the one an interval must clear."""
        e = self.estimate
        return min(self.check.threshold.limits(), key=lambda x: e.distance(x) or 0.0)


@dataclass
class Verdict:
    finding: Finding
    status: str
    checks: list[CheckResult] = field(default_factory=list)
    reason: Text | None = None
    lacking: Text | None = None  # not applicable: the requirement's label
    other_majors: bool = False  # not applicable because the finding is scoped to other majors
    of_target: bool = False  # not applicable because the run used an existing server
    runs: int = 0  # the runs it pools (stats.pool), and their rounds
    rounds: int = 0

    @property
    def deciding(self) -> CheckResult | None:
        """The check that gave the verdict: an inconclusive finding's undecided check, not a
        sub-check that passed (a changed one's contradicted check)."""
        status = {CHANGED: CONTRADICTED, PARTIAL: REPRODUCED}.get(self.status, self.status)
        return next((c for c in self.checks if c.status == status), self.checks[0] if self.checks else None)

    @property
    def failed(self) -> bool:
        """An expected finding contradicted: what `make test` and `repro check` fail on."""
        return self.finding.expected and self.status == CONTRADICTED


@dataclass(frozen=True)
class Cite:
    """Where in a source publication (its id in the chapter's original.toml) the original's
    number is: the table, figure or section as the source numbers it."""

    source: str
    where: Text


@dataclass
class Finding:
    """A published finding as named checks over a run's rounds."""

    id: str
    claim: Text
    checks: Sequence[Check]
    original: Text | None = None  # what the original publication reported
    cite: Cite | None = None  # where in the source the original's number is
    also: Sequence[Cite] = ()  # where else (another table, another source) part of it is
    expected: bool = True  # `make test` fails when an expected finding is contradicted
    not_here: Text | None = None  # not expected: why not here, in a few words (the front page says it)
    requires: Sequence[Requirement] = ()
    explain: Callable[[Rounds, list[CheckResult]], Text | None] | None = None  # why it missed
    changed_in: Change | None = None
    declared_kind: str | None = None  # KINDS; by default: mechanism if every check is exact,
    # else a claim of the original if it carries the original's number, else the report's
    over: Scope | None = None  # a claim over several kinds: judged on all of them
    # the major of the server beside the run's own that its checks compare with: a local run
    # that went without it (no binaries of that major) is left out (judge_runs)
    beside: str | None = None

    @property
    def condition(self) -> Text:
        return Text.join([c.text() for c in self.checks])

    def cites(self) -> list[Cite]:
        """Every place in the sources that the original's number comes from, the main one first."""
        return ([self.cite] if self.cite else []) + list(self.also)

    @property
    def mechanism(self) -> bool:
        return all(c.measure.exact for c in self.checks)

    @property
    def kind(self) -> str:
        if self.declared_kind:
            return self.declared_kind
        return MECHANISM if self.mechanism else ORIGINAL if self.original else REPORT

    def judge(self, rounds: Rounds, env: Environment) -> Verdict:
        """The verdict from one run."""
        return self.judge_runs([(rounds, env)])

    def judge_runs(self, runs: Sequence[tuple[Rounds, Environment]]) -> Verdict:
        """The verdict pooled over runs of one experiment on one major, newest last. A run
        whose environment lacks a requirement is left out; with none left, the finding is not
        applicable (the newest run's reason). So is a run on local clusters that went without
        the server beside it that the checks compare with (`beside`): it never measured them."""
        requires = [*([binaries_beside(self.beside)] if self.beside else []), *self.requires]
        usable = [(r, e) for r, e in runs if all(q.met(e) for q in requires)]
        if not usable:
            env = runs[-1][1]
            requirement = next(q for q in requires if not q.met(env))
            return Verdict(self, NOT_APPLICABLE, reason=requirement.reason(env), lacking=requirement.label,
                           other_majors=requirement.of_major, of_target=requirement.of_target and env.external)
        rounds = [r for r, _ in usable]
        results = []
        for check in self.checks:
            est = check.measure.pooled(rounds)
            if est.value is None or est.low is None or est.high is None:
                status = INCONCLUSIVE  # nothing measured, or no interval to judge by
            else:
                status = check.threshold.status(est.low, est.high)
            results.append(CheckResult(check, est, status))
        statuses = {r.status for r in results}
        status = (CONTRADICTED if CONTRADICTED in statuses else
                  REPRODUCED if statuses == {REPRODUCED} else INCONCLUSIVE)
        reason = self.explain(rounds[-1], results) if self.explain and status != REPRODUCED else None
        env = usable[-1][1]
        if status == CONTRADICTED and self.changed_in and env.major >= self.changed_in.major:
            status, reason = CHANGED, self.changed_in.reason()
        if status == REPRODUCED and self.over:  # only what was measured reproduced
            measured, missing = self.over.missing([e for _, e in usable])
            if missing:
                status, reason = PARTIAL, self.over.reason(measured, missing)
        return Verdict(self, status, results, reason, runs=len(usable),
                       rounds=sum(len(r.ids) for r in rounds))
