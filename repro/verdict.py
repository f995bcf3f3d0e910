"""Findings declared once: what is measured, against which threshold, and a three-way
verdict from the measured value's confidence interval.

A finding is a list of checks; a check is a `Measure` (a statistic of the rounds,
with its label and unit) and a threshold. The "holds if" text in both languages,
the verdict and what the page and the CLI print all come from that declaration:

- reproduced: every check's interval lies on the finding's side of its threshold;
- contradicted: some check's interval lies entirely on the other side;
- changed in N: contradicted on a major from N on, where the finding declares (and cites)
  that PostgreSQL N changed the behaviour the original measured: news, not a failure;
- inconclusive: otherwise (an interval straddles a threshold);
- not applicable: a requirement (CPUs, an image feature, a major that has the feature,
  a kind of data) is not met where the result was measured; the badge names it.

Mechanism checks (a syscall, a plan shape, a WAL position) are `exact`: no interval.

Each finding is of one kind (KINDS): a claim of the original publication, an exact
mechanism check, a claim of this report, or a sanity check (true by construction, so it
reproduces nothing). The declaration is registered (repro/claims.py): a change to it
needs a revision entry, and only runs after the revision count.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .stats import Estimate, Rounds, estimate
from .text import Number, Text

REPRODUCED, CONTRADICTED, CHANGED, INCONCLUSIVE, NOT_APPLICABLE = (
    "reproduced", "contradicted", "changed", "inconclusive", "not applicable")
STATUSES = (REPRODUCED, CONTRADICTED, CHANGED, INCONCLUSIVE, NOT_APPLICABLE)
STATUS = {
    REPRODUCED: Text("再現した", "reproduced"),
    CONTRADICTED: Text("再現しなかった", "contradicted"),
    CHANGED: Text("後のメジャーで変化", "changed in a later major"),
    INCONCLUSIVE: Text("判定できず", "inconclusive"),
    NOT_APPLICABLE: Text("この環境では対象外", "not applicable here"),
}
ORIGINAL, MECHANISM, REPORT, SANITY = "original", "mechanism", "report", "sanity"
KINDS = (ORIGINAL, MECHANISM, REPORT, SANITY)
KIND = {
    ORIGINAL: Text("原典の主張", "claim of the original"),
    MECHANISM: Text("仕組みの確認", "mechanism check"),
    REPORT: Text("本報告の主張", "claim of this report"),
    SANITY: Text("健全性の確認", "sanity check"),
}


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

    def number(self, value: float | None, low: float | None = None,
               high: float | None = None) -> Number:
        if self.floor is not None and low is not None:
            low = max(low, self.floor)
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
    """What a finding needs of the environment; otherwise it is not applicable here.
    `label` names what is lacking, short ("≥ 3 CPUs", "pg_bigm"): the badge shows it and the
    claims register records it."""

    met: Callable[[Environment], bool]
    reason: Callable[[Environment], Text]
    label: Text
    of_major: bool = False  # scopes a finding to some majors, rather than asking the machine
    of_image: bool = False  # asks the image for a package that not every machine can install


def min_cpus(n: int) -> Requirement:
    return Requirement(lambda e: e.cpus is not None and e.cpus >= n,
                       lambda e: Text(f"CPU が {n} 個以上要ります (このエンジンは {e.cpus} 個)。",
                                      f"Needs at least {n} CPUs (this engine has {e.cpus})."),
                       Text(f"CPU {n} 個以上", f"≥ {n} CPUs"))


def max_cpus(n: int) -> Requirement:
    """For a claim scoped to small machines (what holds on n CPUs need not on many)."""
    return Requirement(lambda e: e.cpus is not None and e.cpus <= n,
                       lambda e: Text(f"CPU が {n} 個以下のマシンについての主張です (このエンジンは {e.cpus} 個)。",
                                      f"A claim about machines of at most {n} CPUs (this engine has {e.cpus})."),
                       Text(f"CPU {n} 個以下", f"≤ {n} CPUs"))


def majors(first: int | None = None, last: int | None = None, why: Text | None = None
           ) -> Requirement:
    span = Text(f"PostgreSQL {first} 以降", f"PostgreSQL {first} or later") if last is None else \
        Text(f"PostgreSQL {last} まで", f"PostgreSQL {last} or earlier") if first is None else \
        Text(f"PostgreSQL {first}〜{last}", f"PostgreSQL {first} to {last}")

    def met(e: Environment) -> bool:
        return (first is None or e.major >= first) and (last is None or e.major <= last)

    def reason(e: Environment) -> Text:
        head = Text(f"{span.ja}が対象です (この結果は {e.major})。", f"Applies to {span.en} (this result: {e.major}).")
        return Text.join([head, why], " ", " ") if why else head
    return Requirement(met, reason, span, of_major=True)


def feature(name: str, why: Text | None = None) -> Requirement:
    """An image feature (an extension, a tool); `why` says how an image gets it."""
    def reason(e: Environment) -> Text:
        head = Text(f"このイメージには {name} がありません。", f"This image has no {name}.")
        return Text.join([head, why], " ", " ") if why else head
    return Requirement(lambda e: name in e.features, reason, Text(name, name), of_image=True)


def data(key: str, why: Text, label: Text) -> Requirement:
    """A property the run recorded in its raw data (e.g. what an extension can count)."""
    return Requirement(lambda e: bool(e.raw.get(key)), lambda e: why, label)


@dataclass(frozen=True)
class Change:
    """PostgreSQL `major` changed what the original measured: from it on, a contradicted
    finding is "changed in `major`" (news), with `why` and the release note or commit."""

    major: int
    why: Text
    cite: str  # "commit 2b73a8cd33b", "PostgreSQL 14 release notes" (not translated)

    def reason(self) -> Text:
        return Text(f"{self.major} で変わりました: {self.why.ja} ({self.cite})",
                    f"Changed in {self.major}: {self.why.en} ({self.cite})")


@dataclass
class CheckResult:
    check: Check
    estimate: Estimate
    status: str

    def number(self) -> Number:
        e = self.estimate
        if self.check.measure.exact:  # counted, judged as is: no interval to show
            return self.check.measure.number(e.value)
        return self.check.measure.number(e.value, e.low, e.high)


@dataclass
class Verdict:
    finding: Finding
    status: str
    checks: list[CheckResult] = field(default_factory=list)
    reason: Text | None = None
    lacking: Text | None = None  # not applicable: the requirement's label
    other_majors: bool = False  # not applicable because the finding is scoped to other majors

    @property
    def failed(self) -> bool:
        """An expected finding contradicted: what `make test` and `repro check` fail on."""
        return self.finding.expected and self.status == CONTRADICTED

    def badge(self) -> Text:
        """The status as a reader sees it: "changed in 14", "not applicable: ≥ 3 CPUs"."""
        base = STATUS[self.status]
        if self.status == CHANGED and self.finding.changed_in:
            return Text(f"{self.finding.changed_in.major} で変化", f"changed in {self.finding.changed_in.major}")
        if self.status == NOT_APPLICABLE and self.lacking and self.other_majors:
            return Text(f"{self.lacking.ja}が対象", f"applies to {self.lacking.en}")  # not a lack of this machine
        if self.status == NOT_APPLICABLE and self.lacking:
            return Text(f"{base.ja}: {self.lacking.ja}", f"{base.en}: {self.lacking.en}")
        return base

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.finding.id, "status": self.status, "expected": self.finding.expected,
                "kind": self.finding.kind, "badge": self.badge().as_dict(),
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
    changed_in: Change | None = None
    declared_kind: str | None = None  # KINDS; by default: mechanism if every check is exact,
    # else a claim of the original if it carries the original's number, else the report's

    @property
    def condition(self) -> Text:
        return Text.join([c.text() for c in self.checks])

    @property
    def mechanism(self) -> bool:
        return all(c.measure.exact for c in self.checks)

    @property
    def kind(self) -> str:
        if self.declared_kind:
            return self.declared_kind
        return MECHANISM if self.mechanism else ORIGINAL if self.original else REPORT

    def judge(self, rounds: Rounds, env: Environment) -> Verdict:
        for requirement in self.requires:
            if not requirement.met(env):
                return Verdict(self, NOT_APPLICABLE, reason=requirement.reason(env),
                               lacking=requirement.label, other_majors=requirement.of_major)
        results = []
        for check in self.checks:
            est = check.measure.estimate(rounds)
            if est.value is None or est.low is None or est.high is None:
                status = INCONCLUSIVE  # nothing measured, or no interval to judge by
            else:
                status = check.threshold.status(est.low, est.high)
            results.append(CheckResult(check, est, status))
        statuses = {r.status for r in results}
        status = (CONTRADICTED if CONTRADICTED in statuses else
                  REPRODUCED if statuses == {REPRODUCED} else INCONCLUSIVE)
        reason = self.explain(rounds, results) if self.explain and status != REPRODUCED else None
        if status == CONTRADICTED and self.changed_in and env.major >= self.changed_in.major:
            status, reason = CHANGED, self.changed_in.reason()
        return Verdict(self, status, results, reason)


def undecided(findings: Sequence[Finding], rounds: Rounds, env: Environment
              ) -> tuple[set[str], list[str]]:
    """What more rounds could decide: the conditions read by inconclusive findings, and
    their ids. Findings whose conditions are not all measured yet are left out. The
    intervals are the ones the final verdict uses."""
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
