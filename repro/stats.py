"""The rounds of a run, and confidence intervals over them.

A round is the unit of repetition: every condition measured once, conditions
interleaved. A statistic (a paired ratio, a change against a baseline, a share) is
evaluated on each round alone, so a paired comparison stays paired within its round,
and the rounds' values are independent repetitions of one measurement. The estimate is
their mean and its interval Student's t over them: on the log scale for ratios and
changes (multiplicative noise), where it is exact for lognormal round noise and
conservative for symmetric heavy tails, at any number of rounds from 2 (the simulation
in tests/test_intervals.py shows it at the round counts the chapters use).

The bootstrap this replaced gave the rounds' min-max for five rounds or fewer, which
covers the true value far less often than 95 % (about 49 % at 2 rounds, 74 % at 3).
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
    rounds: all of them, or some (one round, for its own value).

    `used` collects the conditions a statistic read: adaptive rounds repeat those.
    """

    def __init__(self, raw: dict[str, Any], ids: Sequence[int] | None = None,
                 _index: dict[str, dict[int, list[dict]]] | None = None):
        self.raw = raw
        self._index = _index if _index is not None else _by_round(raw.get("rounds", {}))
        self.ids = list(ids) if ids is not None else sorted({i for c in self._index.values()
                                                             for i in c})
        self.used: set[str] = set()

    def resample(self, ids: Sequence[int]) -> Rounds:
        view = Rounds(self.raw, ids, self._index)
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


@dataclass(frozen=True)
class Estimate:
    """A statistic of the rounds and its confidence interval: low = high = value for an exact
    statistic; low = high = None when there is no interval (fewer than two rounds)."""

    value: float | None
    low: float | None = None
    high: float | None = None
    rounds: int = 0


# how a measure's rounds are averaged: "ratio" (×, on the log scale), "change" (a signed %
# change, on the scale of log(1 + change)), "linear" (shares, differences, counts)
SCALES = ("ratio", "change", "linear")
_TO = {"ratio": np.log, "change": lambda v: np.log1p(v / 100), "linear": lambda v: v}
_FROM = {"ratio": np.exp, "change": lambda v: np.expm1(v) * 100, "linear": lambda v: v}
_DOMAIN = {"ratio": lambda v: v > 0, "change": lambda v: v > -100, "linear": lambda v: True}


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


def t_interval(values: Sequence[float], scale: str = "linear", level: float = CONFIDENCE
               ) -> tuple[float, float, float] | None:
    """(mean, low, high) of the rounds' values at `level`, on the measure's scale; None with
    fewer than two values. A scale whose domain a value leaves falls back to linear."""
    if len(values) < 2:
        return None
    if not all(_DOMAIN[scale](v) for v in values):
        scale = "linear"
    x = _TO[scale](np.asarray(values, dtype=float))
    mean, sd = float(np.mean(x)), float(np.std(x, ddof=1))
    half = float(scipy_stats.t.ppf(0.5 + level / 2, len(x) - 1)) * sd / np.sqrt(len(x))
    with np.errstate(over="ignore"):  # a huge spread on the log scale: the bound is infinite
        return tuple(float(_FROM[scale](v)) for v in (mean, mean - half, mean + half))


def estimate(statistic: Callable[[Rounds], float | None], rounds: Rounds,
             exact: bool = False, scale: str = "linear") -> Estimate:
    """The statistic over the rounds with its 95 % interval (module docstring).

    `exact` statistics (a count, a plan shape, a WAL position) get no interval. A statistic
    that no two rounds give a value for has no interval either: its value is the statistic
    on all rounds, and a judge cannot call it decided. Nor has one that reads nothing of
    the rounds (a timing measured once, outside them): one measurement, no interval.
    """
    n = len(rounds.ids)
    if exact:
        value = statistic(rounds)
        return Estimate(value, value, value, n)
    view = rounds.resample(rounds.ids)
    view.used = set()  # what this statistic reads
    once = statistic(view)
    if not view.used:
        return Estimate(once, None, None, 1)
    values = per_round(statistic, rounds)
    found = t_interval(values, scale)
    if found is None:
        return Estimate(statistic(rounds), None, None, len(values))
    mean, low, high = found
    return Estimate(mean, low, high, len(values))
