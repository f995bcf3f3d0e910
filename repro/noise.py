"""How noisy each chapter's rounds are, from its stored runs: the spread of its per-round
statistics, how consecutive rounds correlate, and how much runs differ beyond their own
rounds. `python -m repro noise` prints it; stats.BETWEEN_RUNS rests on it.

- spread: the median over a chapter's statistics and runs of the per-round standard
  deviation, on the measure's scale (log for ratios: 0.05 is about 5 %);
- lag-1: the mean lag-1 autocorrelation of a statistic's rounds, less what independent
  rounds give at the same number of rounds (about -1/n): 0 when interleaving makes rounds
  independent, positive when they drift together;
- between runs: for consecutive runs of one experiment on one major, the spread between runs
  in units of a run's own standard error (rho), fitted so that independent draws with it
  give the observed median of |difference| / its standard error;
- between machines: per finding, the same fit over every pair of runs on different CPU
  models (one statistic, one major, one experiment): the spread that runs of the models
  have, if they pool. Where it stays within the between-run floor (stats.BETWEEN_RUNS),
  the intervals' simulations cover it; a chapter with a finding beyond it is machine-bound
  (repro/pooling.py).
"""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from functools import cache
from typing import NamedTuple

import numpy as np

from . import pooling, registry, results
from .chapter import Run
from .stats import _DOMAIN, _TO, per_round


@dataclass(frozen=True)
class Series:
    """One statistic's per-round values in one run, on the measure's scale."""

    chapter: str
    measure: str  # "F3/1": the finding and the check
    major: float
    experiment: str
    started: str
    machine: str | None
    values: tuple[float, ...]


def series(name: str, scale: str = "default") -> list[Series]:
    """Every statistic with rounds, in every stored run of the chapter at the scale (not
    this build's: a figure of the committed history, the same in every build of a commit)."""
    chapter = registry.get(name)
    found = []
    for _, doc in results.files(name, build=False):
        if doc["scale"] != scale or "unavailable" in doc:
            continue
        rounds = Run(chapter, doc).rounds
        for f in chapter.findings:
            for i, c in enumerate(f.checks):
                if c.measure.exact:
                    continue
                try:
                    values = per_round(c.measure.statistic, rounds)
                except KeyError:  # a condition an older version of the experiment lacked
                    continue
                if len(values) < 3 or not all(_DOMAIN[c.measure.scale](v) for v in values):
                    continue
                x = tuple(float(v) for v in _TO[c.measure.scale](np.asarray(values)))
                if np.std(x) > 0:
                    found.append(Series(name, f"{f.id}/{i}", doc["major"], doc["key"]["experiment"],
                                        doc["provenance"]["started"], pooling.machine(doc), x))
    return found


def spread(found: list[Series]) -> float | None:
    sds = [float(np.std(s.values, ddof=1)) for s in found]
    return float(np.median(sds)) if sds else None


@cache
def _independent_lag1(n: int) -> float:
    """What the lag-1 autocorrelation of n independent rounds averages to."""
    rng = np.random.default_rng(n)
    return float(np.mean([_lag1(rng.normal(size=n)) for _ in range(4000)]))


def _lag1(x: np.ndarray | tuple[float, ...]) -> float:
    d = np.asarray(x) - np.mean(x)
    return float((d[:-1] * d[1:]).sum() / (d * d).sum())


def lag1(found: list[Series]) -> float | None:
    """Mean lag-1 autocorrelation beyond that of independent rounds."""
    excess = [_lag1(s.values) - _independent_lag1(len(s.values)) for s in found if len(s.values) >= 4]
    return float(np.mean(excess)) if excess else None


def pairs(found: list[Series]) -> list[tuple[float, int, int]]:
    """(|difference| / its standard error, n1, n2) of consecutive runs of one experiment on
    one major, statistic by statistic."""
    groups: dict[tuple, list[Series]] = defaultdict(list)
    for s in found:
        groups[(s.measure, s.major, s.experiment)].append(s)
    out = []
    for runs in groups.values():
        runs.sort(key=lambda s: s.started)
        out += [_z(a, b) for a, b in zip(runs, runs[1:])]
    return out


def _z(a: Series, b: Series) -> tuple[float, int, int]:
    x, y = np.asarray(a.values), np.asarray(b.values)
    se = np.sqrt(x.var(ddof=1) / len(x) + y.var(ddof=1) / len(y))
    return float(abs(x.mean() - y.mean()) / se), len(x), len(y)


def _median_z(sizes: list[tuple[int, int]], rho: float, rng: np.random.Generator, draws: int = 40) -> float:
    zs = []
    for (n1, n2), count in sorted(Counter(sizes).items()):
        m = draws * count
        x = rng.normal(size=(m, n1)) + rng.normal(0, rho / np.sqrt(n1), (m, 1))
        y = rng.normal(size=(m, n2)) + rng.normal(0, rho / np.sqrt(n2), (m, 1))
        zs.append(abs(x.mean(1) - y.mean(1)) / np.sqrt(x.var(1, ddof=1) / n1 + y.var(1, ddof=1) / n2))
    return float(np.median(np.concatenate(zs)))


def between_runs(found: list[Series]) -> tuple[float | None, int]:
    """(rho, pairs): the spread between runs, in units of a run's own standard error, that
    gives the observed median |z| of consecutive runs (0.1 steps, at most 4)."""
    observed = pairs(found)
    return (_fit(observed) if len(observed) >= 3 else None), len(observed)


def _fit(observed: list[tuple[float, int, int]], most: float = 4.0) -> float:
    """The rho (0.1 steps, at most `most`) at which independent draws give the observed
    median |z|; the draws follow the observed pairs' rounds."""
    median = float(np.median([z for z, _, _ in observed]))
    sizes = [(n1, n2) for _, n1, n2 in observed]
    rng = np.random.default_rng(0)
    for rho in np.arange(0, most + 0.01, 0.1):
        if _median_z(sizes, float(rho), rng) >= median:
            return round(float(rho), 1)
    return most


class Apart(NamedTuple):
    """A finding's spread between CPU models (rho, in units of a run's own standard error),
    over how many pairs of runs, and the fewest runs any of those models has."""
    rho: float
    pairs: int
    fewest: int


MIN_RUNS = 3  # runs on each of two CPU models before their spread can judge a chapter


def between_machines(found: list[Series]) -> dict[str, Apart]:
    """Per finding with at least 3 such pairs: its spread over the pairs of runs on
    different CPU models (one statistic, major and experiment); runs whose model is unknown
    are left out."""
    groups: dict[tuple, list[Series]] = defaultdict(list)
    for s in found:
        if s.machine is not None:
            groups[(s.measure, s.major, s.experiment)].append(s)
    by_finding: dict[str, list[tuple[float, int, int]]] = defaultdict(list)
    runs: dict[str, dict[str, set[tuple[float, str]]]] = defaultdict(lambda: defaultdict(set))
    for (measure, _, _), group in groups.items():
        finding = measure.split("/")[0]
        paired = [(a, b) for i, a in enumerate(group) for b in group[i + 1:] if a.machine != b.machine]
        by_finding[finding] += [_z(a, b) for a, b in paired]
        for s in {s for pair in paired for s in pair}:
            runs[finding][s.machine].add((s.major, s.started))
    return {f: Apart(_fit(z, most=8.0), len(z), min(len(r) for r in runs[f].values()))
            for f, z in sorted(by_finding.items()) if len(z) >= 3}


def judged(found: dict[str, Apart]) -> dict[str, Apart]:
    """The findings whose runs on two CPU models are enough to judge a chapter machine-bound
    or not: at least MIN_RUNS on each."""
    return {f: a for f, a in found.items() if a.fewest >= MIN_RUNS}
