"""The rounds of a run, and confidence intervals over rounds and over runs.

A round is the unit of repetition: every condition measured once, conditions
interleaved. A statistic (a paired ratio, a change against a baseline, a share) is
evaluated on each round alone, so a paired comparison stays paired within its round,
and the rounds' values are independent repetitions of one measurement (their lag-1
correlation on the stored runs is within 0.1 of what independent rounds give: `python -m
repro noise`). A run's estimate is their mean, on the log scale for ratios and changes
(multiplicative noise).

A verdict speaks of a PostgreSQL major, not of one run: runs of the same experiment
differ by more than their own rounds say (another day, machine, noise level). So the
interval is a random-effects one (`pool`): every run of the experiment on the major is a
unit; with one or two runs the variance allows a spread between runs of up to BETWEEN_RUNS
times a run's own standard error, from three runs on the runs' own spread measures it.
tests/test_intervals.py shows that it covers at least 93 % with 1 to 6 runs and a spread
between runs from none to 2.5 times the within-run one, at the round counts the chapters
use.
"""
from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats as scipy_stats

CONFIDENCE = 0.95


class Missing(KeyError):
    """A statistic asked for a condition the run has not measured (yet)."""


class Rounds:
    """A run's records by condition and round (raw["rounds"]), seen through a choice of
    rounds: all of them, or some (one round, for its own value); `minimum` is the rounds
    its scale measures at least.

    `used` collects the conditions a statistic read: adaptive rounds repeat those.
    """

    def __init__(self, raw: dict[str, Any], ids: Sequence[int] | None = None,
                 _index: dict[str, dict[int, list[dict]]] | None = None, minimum: int | None = None):
        self.raw = raw
        self.minimum = minimum  # the scale's minimum rounds (stats.BETWEEN_RUNS)
        self._index = _index if _index is not None else _by_round(raw.get("rounds", {}))
        self.ids = list(ids) if ids is not None else sorted({i for c in self._index.values()
                                                             for i in c})
        self.used: set[str] = set()

    def resample(self, ids: Sequence[int]) -> Rounds:
        view = Rounds(self.raw, ids, self._index, self.minimum)
        view.used = self.used  # shared: what any view reads, the run needs
        return view

    def has(self, condition: str) -> bool:
        return condition in self._index

    def conditions(self) -> list[str]:
        return list(self._index)

    def records(self, condition: str) -> list[dict]:
        self.used.add(condition)
        if condition not in self._index:
            raise Missing(condition)
        by_round = self._index[condition]
        return [record for i in self.ids for record in by_round.get(i, ())]

    def values(self, condition: str, field: str) -> list[float]:
        return [r[field] for r in self.records(condition)]

    def pairs(self, condition: str, baseline: str, field: str) -> list[tuple[float, float]]:
        """(value, baseline) of the rounds that measured both, in round order."""
        self.used |= {condition, baseline}
        for c in (condition, baseline):
            if c not in self._index:
                raise Missing(c)
        a, b = self._index[condition], self._index[baseline]
        return [(x[field], y[field]) for i in self.ids if i in a and i in b
                for x, y in zip(a[i], b[i])]

    def ratio(self, condition: str, baseline: str, field: str) -> float | None:
        """Median over rounds of the condition's value over its baseline's in the same round
        (a round lacking either value is left out): each round is its own control."""
        return paired_ratio([(v, b) for v, b in self.pairs(condition, baseline, field)
                             if v is not None and b is not None])

    def count(self, condition: str) -> int:
        """Rounds that measured the condition (in this view)."""
        return len(self.records(condition))


def _by_round(rounds: dict[str, list[dict]]) -> dict[str, dict[int, list[dict]]]:
    index: dict[str, dict[int, list[dict]]] = {}
    for condition, records in rounds.items():
        for record in records:
            index.setdefault(condition, {}).setdefault(record["round"], []).append(record)
    return index


def median(values: Sequence[float]) -> float | None:
    return float(statistics.median(values)) if values else None


def paired_change(pairs: Sequence[tuple[float, float]]) -> float | None:
    """Median over rounds of (value / baseline - 1), in %: each round is its own control."""
    return median([(v / b - 1) * 100 for v, b in pairs if b])


def paired_ratio(pairs: Sequence[tuple[float, float]]) -> float | None:
    return median([v / b for v, b in pairs if b])


# how a measure's rounds are averaged: "ratio" (×, on the log scale), "change" (a signed %
# change, on the scale of log(1 + change)), "linear" (shares, differences, counts)
SCALES = ("ratio", "change", "linear")
_TO = {"ratio": np.log, "change": lambda v: np.log1p(np.asarray(v) / 100), "linear": lambda v: np.asarray(v)}
_FROM = {"ratio": np.exp, "change": lambda v: np.expm1(v) * 100, "linear": lambda v: v}
_DOMAIN = {"ratio": lambda v: v > 0, "change": lambda v: v > -100, "linear": lambda v: True}

# The between-run floor: runs of one experiment differ by more than their own intervals say
# (another day, another machine of the same kind, another noise level). An interval over one
# or two runs therefore allows, beside each run's own standard error s, a spread between runs
# of up to BETWEEN_RUNS × s, s taken at the scale's minimum rounds (more rounds in one run do
# not make runs agree). Measured on the stored runs (2026-11-26, `python -m repro noise`:
# consecutive runs of one experiment on one major): 0 to 1.7 × s by chapter, the most in fdw
# (3 rounds a run). tests/test_intervals.py simulates 0 to 2.5 × s.
BETWEEN_RUNS = 2.5
RUNS_FOR_SPREAD = 3  # from so many runs on, their own spread gives the interval (`pool`)


@dataclass(frozen=True)
class Sample:
    """One run's evidence for a statistic: its value in each round, or, when fewer than two
    rounds give one, its one value over the whole run (`whole`). `minimum` is the run's
    scale's minimum rounds (the unit of the between-run floor)."""

    values: tuple[float, ...]
    whole: float | None = None
    minimum: int | None = None

    @property
    def rounds(self) -> int:
        return len(self.values) if len(self.values) >= 2 else int(self.whole is not None)


@dataclass(frozen=True)
class Estimate:
    """A statistic and its 95 % interval, over one run's rounds or pooled over several runs:
    low = high = value for an exact statistic; low = high = None when there is no interval.

    `center` and `half` are the interval on the measure's scale (log for ratios); `runs`
    and `rounds` what it rests on. `parts` keeps each run's share of the variance (its own
    standard error squared, its between-run floor, its rounds), `spread` the variance from
    the run means' own spread, `df` the t quantile's degrees of freedom: what `half_with` and
    `runs_to_decide` need to say what would decide an undecided check."""

    value: float | None
    low: float | None = None
    high: float | None = None
    rounds: int = 0
    runs: int = 1
    scale: str = "linear"
    center: float | None = None
    half: float | None = None
    parts: tuple[tuple[float, float, int], ...] = ()
    spread: float = 0.0
    df: float = float("inf")

    def distance(self, limit: float) -> float | None:
        """How far the estimate lies from `limit`, on the measure's scale."""
        if self.center is None or (self.scale != "linear" and not _DOMAIN[self.scale](limit)):
            return None
        return abs(self.center - float(_TO[self.scale](limit)))

    def half_with(self, extra_rounds: int) -> float | None:
        """The half-width if the newest run had `extra_rounds` more rounds like its own: only
        its own standard error shrinks, never the between-run floor."""
        if not self.parts:
            return self.half
        k = len(self.parts)
        own, floor, n = self.parts[-1]
        total = sum(o + f for o, f, _ in self.parts[:-1]) + own * n / (n + extra_rounds) + floor
        variance = max(total / k ** 2, self.spread)
        return float(scipy_stats.t.ppf(0.5 + CONFIDENCE / 2, self.df)) * float(np.sqrt(variance))

    def rounds_to_decide(self, limit: float, most: int) -> int | None:
        """The fewest extra rounds (up to `most`) after which the interval would clear `limit`,
        if the estimate stayed where it is; None if no such number."""
        distance = self.distance(limit)
        if distance is None or self.half is None:
            return None
        for extra in range(most + 1):
            if (self.half_with(extra) or 0.0) < distance:
                return extra
        return None

    def runs_to_decide(self, limit: float, most: int = 1000) -> float | None:
        """How many runs like these, in all, the interval would need to clear `limit` if the
        estimate and the variance one run brings stayed as they are: the standard error
        shrinks with the square root of the runs, and the t quantile with the degrees of
        freedom that `pool` would give them (k − 1 from RUNS_FOR_SPREAD runs on), which at
        three or four runs is itself much of the width. inf when the estimate sits on the
        limit or more than `most` runs would be needed, None without an interval."""
        distance = self.distance(limit)
        if distance is None or self.half is None:
            return None
        if distance == 0:
            return float("inf")
        per_run = self.runs * (self.half / float(scipy_stats.t.ppf(0.5 + CONFIDENCE / 2, self.df))) ** 2
        for runs in range(self.runs + 1, most + 1):
            df = float(runs - 1) if runs >= RUNS_FOR_SPREAD else self.df
            if float(scipy_stats.t.ppf(0.5 + CONFIDENCE / 2, df)) * np.sqrt(per_run / runs) < distance:
                return float(runs)
        return float("inf")


def per_round(statistic: Callable[[Rounds], float | None], rounds: Rounds) -> list[float]:
    """The statistic on each round alone; rounds that lack a condition it reads give none."""
    values = []
    for i in rounds.ids:
        try:
            v = statistic(rounds.resample([i]))
        except (Missing, TypeError, ValueError, ZeroDivisionError):
            continue
        if v is not None and np.isfinite(v):
            values.append(float(v))
    return values


def sample(statistic: Callable[[Rounds], float | None], rounds: Rounds) -> Sample | None:
    """A run's evidence for the statistic; None when the run gives no value at all.

    A statistic that reads nothing of the rounds (a timing measured once, outside them) has
    one value per run: only the spread between runs gives it an interval."""
    view = rounds.resample(rounds.ids)
    view.used = set()  # what this statistic reads
    try:
        whole = statistic(view)
    except (Missing, TypeError, ValueError, ZeroDivisionError):
        whole = None
    whole = float(whole) if whole is not None and np.isfinite(whole) else None
    values = per_round(statistic, rounds) if view.used else []
    if len(values) < 2 and whole is None:
        return None
    return Sample(tuple(values) if len(values) >= 2 else (), whole, rounds.minimum)


def pool(samples: Sequence[Sample], scale: str = "linear", level: float = CONFIDENCE) -> Estimate:
    """The statistic's estimate over runs, and its interval (module docstring).

    The estimate is the mean of the runs' own means (runs are the units: each day, machine
    and noise level once). Its interval depends on how many runs there are, chosen by that
    number alone (so each case keeps its own coverage):
    - one or two runs cannot show how much runs differ, so the between-run floor stands in
      for it: the variance is Σ s_i² (1 + BETWEEN_RUNS² n_i / min(n_i, minimum_i)) / k², s_i a
      run's own standard error (at least that of the scale's minimum rounds: more rounds in
      one run do not make runs agree), or the run means' own spread if that is larger; t
      with the Welch–Satterthwaite degrees of freedom;
    - from RUNS_FOR_SPREAD runs on, the run means' spread measures it (Knapp–Hartung with
      its usual floor): the variance is the larger of Σ (m_i − m)² / (k (k − 1)) and
      Σ s_i² / k², t with k − 1 degrees of freedom; it covers whatever the spread between
      runs, and is narrower than the floor where runs agree.
    Runs that give one value each (no rounds) are pooled by their spread alone, t with k − 1.
    """
    samples = [s for s in samples if s is not None]
    if not samples:
        return Estimate(None, runs=0)
    everything = [v for s in samples for v in (s.values or (s.whole,))]
    if not all(_DOMAIN[scale](v) for v in everything):
        scale = "linear"
    rounds = sum(s.rounds for s in samples)
    k = len(samples)
    with_rounds = all(len(s.values) >= 2 for s in samples)
    means = np.array([float(np.mean(_TO[scale](np.asarray(s.values or (s.whole,), dtype=float))))
                      for s in samples])
    center = float(means.mean())
    spread = float(((means - center) ** 2).sum()) / (k * (k - 1)) if k > 1 else 0.0
    parts: tuple[tuple[float, float, int], ...] = ()
    if not with_rounds:
        if k < 2:
            return Estimate(float(_FROM[scale](center)), None, None, rounds, k, scale)
        bound, df = 0.0, float(k - 1)
    else:
        xs = [np.asarray(_TO[scale](np.asarray(s.values, dtype=float))) for s in samples]
        own = [float(x.var(ddof=1)) / len(x) for x in xs]
        if k >= RUNS_FOR_SPREAD:
            floor = [0.0] * k
            df = float(k - 1)
        else:
            floor = [BETWEEN_RUNS ** 2 * float(x.var(ddof=1)) / min(len(x), s.minimum or len(x))
                     for x, s in zip(xs, samples)]
            total = [o + f for o, f in zip(own, floor)]
            denominator = sum(p ** 2 / (len(x) - 1) for p, x in zip(total, xs))
            df = sum(total) ** 2 / denominator if denominator > 0 else float("inf")
        parts = tuple((o, f, len(x)) for o, f, x in zip(own, floor, xs))
        bound = (sum(own) + sum(floor)) / k ** 2
    variance = max(bound, spread)
    half = float(scipy_stats.t.ppf(0.5 + level / 2, df)) * np.sqrt(variance) if variance > 0 else 0.0
    with np.errstate(over="ignore"):  # a huge spread on the log scale: the bound is infinite
        value, low, high = (float(_FROM[scale](v)) for v in (center, center - half, center + half))
    return Estimate(value, low, high, rounds, k, scale, center, half, parts, spread, df)


def estimate(statistic: Callable[[Rounds], float | None], rounds: Rounds,
             exact: bool = False, scale: str = "linear") -> Estimate:
    """The statistic over one run, as a pool of one (with the between-run floor)."""
    if exact:
        value = statistic(rounds)
        return Estimate(value, value, value, len(rounds.ids))
    return pool([sample(statistic, rounds)], scale)
