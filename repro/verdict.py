"""Findings declared once: what is measured, against which threshold, and a three-way
verdict from the measured value's confidence interval.

A finding is a list of checks; a check is a `Measure` (a statistic of the rounds,
with its label and unit) and a threshold. The "holds if" text in both languages,
the verdict and what the page and the CLI print all come from that declaration:

- reproduced: every check's interval lies on the finding's side of its threshold;
- contradicted: some check's interval lies entirely on the other side;
- inconclusive: otherwise (an interval straddles a threshold);
- not applicable: a requirement (cores, major, an image feature, a kind of data) is
  not met where the result was measured, with the reason.

Mechanism checks (a syscall, a plan shape, a WAL position) are `exact`: no interval.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .stats import Estimate, Rounds, estimate
from .text import Number, Text

REPRODUCED, CONTRADICTED, INCONCLUSIVE, NOT_APPLICABLE = (
    "reproduced", "contradicted", "inconclusive", "not applicable")
STATUSES = (REPRODUCED, CONTRADICTED, INCONCLUSIVE, NOT_APPLICABLE)


@dataclass(frozen=True)
class Measure:
    """A measured quantity: a statistic of the rounds, labelled, with its unit."""

    label: Text
    statistic: Callable[[Rounds], float | None]
    unit: str = ""
    digits: int | None = None
    signed: bool = False
    exact: bool = False  # a mechanism: checked exactly, no interval

    def number(self, value: float | None, low: float | None = None,
               high: float | None = None) -> Number:
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


def _limit(m: Measure, value: float, lang: str) -> str:
    """A threshold in the measure's unit: no decimals for whole numbers, no sign on zero."""
    digits = 0 if float(value).is_integer() else m.digits
    return Number(value, m.unit, digits, m.signed and value != 0).format(lang)


@dataclass(frozen=True)
class Above(Threshold):
    """Holds above `limit` (at or above it when `inclusive`)."""

    limit: float
    inclusive: bool = False

    def status(self, low: float, high: float) -> str:
        if low > self.limit or (self.inclusive and low >= self.limit):
            return REPRODUCED
        if high < self.limit or (not self.inclusive and high <= self.limit):
            return CONTRADICTED
        return INCONCLUSIVE

    def text(self, m: Measure) -> Text:
        op = "≥" if self.inclusive else ">"
        return Text(f"{op} {_limit(m, self.limit, 'ja')}", f"{op} {_limit(m, self.limit, 'en')}")


@dataclass(frozen=True)
class Below(Threshold):
    """Holds below `limit` (at or below it when `inclusive`)."""

    limit: float
    inclusive: bool = False

    def status(self, low: float, high: float) -> str:
        if high < self.limit or (self.inclusive and high <= self.limit):
            return REPRODUCED
        if low > self.limit or (not self.inclusive and low >= self.limit):
            return CONTRADICTED
        return INCONCLUSIVE

    def text(self, m: Measure) -> Text:
        op = "≤" if self.inclusive else "<"
        return Text(f"{op} {_limit(m, self.limit, 'ja')}", f"{op} {_limit(m, self.limit, 'en')}")


@dataclass(frozen=True)
class Between(Threshold):
    """Holds from `low` to `high` (both included)."""

    low: float
    high: float

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
        return Text(f"{_limit(m, self.low, 'ja')}〜{_limit(m, self.high, 'ja')}",
                    f"{_limit(m, self.low, 'en')} to {_limit(m, self.high, 'en')}")


@dataclass(frozen=True)
class Check:
    measure: Measure
    threshold: Threshold

    def text(self) -> Text:
        t = self.threshold.text(self.measure)
        return Text(f"{self.measure.label.ja} {t.ja}", f"{self.measure.label.en} {t.en}")


@dataclass(frozen=True)
class Environment:
    """Where a result was measured, as requirements see it."""

    major: int
    cpus: int | None
    features: frozenset[str]
    raw: dict[str, Any]


@dataclass(frozen=True)
class Requirement:
    """What a finding needs of the environment; otherwise it is not applicable here."""

    met: Callable[[Environment], bool]
    reason: Callable[[Environment], Text]
    of_major: bool = False  # scopes a finding to some majors, rather than asking the machine


def min_cpus(n: int) -> Requirement:
    return Requirement(lambda e: e.cpus is not None and e.cpus >= n,
                       lambda e: Text(f"CPU が {n} 個以上要ります (このエンジンは {e.cpus} 個)。",
                                      f"Needs at least {n} CPUs (this engine has {e.cpus})."))


def majors(first: int | None = None, last: int | None = None, why: Text | None = None
           ) -> Requirement:
    def met(e: Environment) -> bool:
        return (first is None or e.major >= first) and (last is None or e.major <= last)

    def reason(e: Environment) -> Text:
        span = Text(f"PostgreSQL {first} 以降", f"PostgreSQL {first} or later") if last is None else \
            Text(f"PostgreSQL {last} まで", f"PostgreSQL {last} or earlier") if first is None else \
            Text(f"PostgreSQL {first}〜{last}", f"PostgreSQL {first} to {last}")
        head = Text(f"{span.ja}が対象です (この結果は {e.major})。", f"Applies to {span.en} (this result: {e.major}).")
        return Text.join([head, why], " ", " ") if why else head
    return Requirement(met, reason, of_major=True)


def feature(name: str) -> Requirement:
    return Requirement(lambda e: name in e.features,
                       lambda e: Text(f"このイメージには {name} がありません。",
                                      f"This image has no {name}."))


def data(key: str, why: Text) -> Requirement:
    """A property the run recorded in its raw data (e.g. what an extension can count)."""
    return Requirement(lambda e: bool(e.raw.get(key)), lambda e: why)


@dataclass
class CheckResult:
    check: Check
    estimate: Estimate
    status: str

    def number(self) -> Number:
        e = self.estimate
        return self.check.measure.number(e.value, e.low, e.high)


@dataclass
class Verdict:
    finding: Finding
    status: str
    checks: list[CheckResult] = field(default_factory=list)
    reason: Text | None = None

    @property
    def failed(self) -> bool:
        """An expected finding contradicted: what `make test` and `repro check` fail on."""
        return self.finding.expected and self.status == CONTRADICTED

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.finding.id, "status": self.status, "expected": self.finding.expected,
                "claim": self.finding.claim.as_dict(),
                "checks": [{"label": c.check.measure.label.as_dict(),
                            "holds_if": c.check.threshold.text(c.check.measure).as_dict(),
                            "status": c.status, **c.number().as_dict()} for c in self.checks],
                "reason": self.reason.as_dict() if self.reason else None}


@dataclass
class Finding:
    """A published finding as named checks over a run's rounds."""

    id: str
    claim: Text
    checks: Sequence[Check]
    original: Text | None = None  # what the original publication reported
    expected: bool = True  # `make test` fails when an expected finding is contradicted
    requires: Sequence[Requirement] = ()
    explain: Callable[[Rounds, list[CheckResult]], Text | None] | None = None  # why it missed

    @property
    def condition(self) -> Text:
        return Text.join([c.text() for c in self.checks])

    @property
    def mechanism(self) -> bool:
        return all(c.measure.exact for c in self.checks)

    def judge(self, rounds: Rounds, env: Environment) -> Verdict:
        for requirement in self.requires:
            if not requirement.met(env):
                return Verdict(self, NOT_APPLICABLE, reason=requirement.reason(env))
        results = []
        for check in self.checks:
            est = estimate(check.measure.statistic, rounds, check.measure.exact)
            if est.value is None or est.low is None or est.high is None:
                status = INCONCLUSIVE  # nothing measured, or no interval to judge by
            else:
                status = check.threshold.status(est.low, est.high)
            results.append(CheckResult(check, est, status))
        statuses = {r.status for r in results}
        status = (CONTRADICTED if CONTRADICTED in statuses else
                  REPRODUCED if statuses == {REPRODUCED} else INCONCLUSIVE)
        reason = self.explain(rounds, results) if self.explain and status != REPRODUCED else None
        return Verdict(self, status, results, reason)


def undecided(findings: Sequence[Finding], rounds: Rounds, env: Environment
              ) -> tuple[set[str], list[str]]:
    """What more rounds could decide: the conditions read by inconclusive findings, and
    their ids. Findings whose conditions are not all measured yet are left out. The
    intervals are the final verdict's (same resamples, same seed): a run stops adding
    rounds only when the verdict it will print is decided."""
    conditions: set[str] = set()
    ids: list[str] = []
    for finding in findings:
        if finding.mechanism:  # checked exactly: more rounds cannot decide it
            continue
        view = rounds.resample(rounds.ids)
        view.used = set()
        try:
            verdict = finding.judge(view, env)
        except KeyError:  # data the run records later (or a condition not measured yet)
            continue
        if verdict.status == INCONCLUSIVE:
            conditions |= view.used
            ids.append(finding.id)
    return conditions, ids
