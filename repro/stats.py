"""The rounds of a run, and confidence intervals over them (bootstrap by round).

A round is the unit of repetition: every condition measured once, conditions
interleaved. Resampling whole rounds keeps what was measured together together,
so a paired comparison (a condition against its baseline of the same round)
stays paired in every resample.
"""
from __future__ import annotations

import statistics
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats as scipy_stats

CONFIDENCE = 0.95
RESAMPLES = 999
SEED = 20171  # fixed: the same result file always gives the same interval


class Missing(KeyError):
    """A statistic asked for a condition the run has not measured (yet)."""


class Rounds:
    """A run's records by condition and round (raw["rounds"]), seen through a choice of
    rounds: all of them, or a bootstrap resample (rounds may repeat).

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
        view.used = self.used  # shared: what any resample reads, the run needs
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
    """A statistic of the rounds and its confidence interval (low = high: no interval)."""

    value: float | None
    low: float | None = None
    high: float | None = None
    rounds: int = 0


def estimate(statistic: Callable[[Rounds], float | None], rounds: Rounds,
             exact: bool = False, resamples: int = RESAMPLES) -> Estimate:
    """The statistic on all rounds, with a percentile bootstrap interval over rounds.

    `exact` statistics (a count, a plan shape, a WAL position) get no interval. With a
    single round there is nothing to resample: the interval is the value itself.
    """
    value = statistic(rounds)
    n = len(rounds.ids)
    if value is None or exact or n < 2:
        return Estimate(value, value, value, n)

    def resampled(sample: np.ndarray) -> float:
        try:
            v = statistic(rounds.resample(sample.tolist()))
        except (Missing, TypeError, ValueError, ZeroDivisionError):
            return np.nan  # rounds added for some conditions only: this resample lacks another's
        return np.nan if v is None else v

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns on degenerate (all-equal) resamples
        result = scipy_stats.bootstrap((np.array(rounds.ids),), resampled, vectorized=False,
                                       n_resamples=resamples, method="percentile",
                                       confidence_level=CONFIDENCE,
                                       rng=np.random.default_rng(SEED))
    # the percentile interval of scipy's resamples, leaving out those with no value
    values = result.bootstrap_distribution[~np.isnan(result.bootstrap_distribution)]
    if len(values) < resamples / 2:
        return Estimate(value, None, None, n)
    tail = (1 - CONFIDENCE) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return Estimate(value, min(float(low), value), max(float(high), value), n)
