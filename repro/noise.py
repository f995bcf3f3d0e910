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
- machines: the statistics measured on one major by one experiment on more than one CPU
  model, and of them those whose run means differ between the models by more than the
  spread between runs on one model gives (one-way analysis of variance of the run means,
  at 1 %): what decides whether a chapter is machine-bound (repro/pooling.py).
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from functools import cache

import numpy as np

from scipy import stats as scipy_stats

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
    """Every statistic with rounds, in every stored run of the chapter at the scale."""
    chapter = registry.get(name)
    found = []
    for _, doc in results.files(name):
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
        for a, b in zip(runs, runs[1:]):
            x, y = np.asarray(a.values), np.asarray(b.values)
            se = np.sqrt(x.var(ddof=1) / len(x) + y.var(ddof=1) / len(y))
            out.append((float(abs(x.mean() - y.mean()) / se), len(x), len(y)))
    return out


def _median_z(sizes: list[tuple[int, int]], rho: float, rng: np.random.Generator, draws: int = 40) -> float:
    zs = []
    for n1, n2 in sizes:
        for _ in range(draws):
            x = rng.normal(rng.normal(0, rho / np.sqrt(n1)), 1, n1)
            y = rng.normal(rng.normal(0, rho / np.sqrt(n2)), 1, n2)
            zs.append(abs(x.mean() - y.mean()) / np.sqrt(x.var(ddof=1) / n1 + y.var(ddof=1) / n2))
    return float(np.median(zs))


def between_runs(found: list[Series]) -> tuple[float | None, int]:
    """(rho, pairs): the spread between runs, in units of a run's own standard error, that
    gives the observed median |z| of consecutive runs (0.1 steps, at most 4)."""
    observed = pairs(found)
    if len(observed) < 3:
        return None, len(observed)
    median = float(np.median([z for z, _, _ in observed]))
    sizes = [(n1, n2) for _, n1, n2 in observed]
    rng = np.random.default_rng(0)
    for rho in np.arange(0, 4.01, 0.1):
        if _median_z(sizes, float(rho), rng) >= median:
            return round(float(rho), 1), len(observed)
    return 4.0, len(observed)


MACHINE_LEVEL = 0.01


def machine_shift(found: list[Series]) -> tuple[int, int]:
    """(shifted, statistics): of the statistics measured on more than one CPU model (one
    major, one experiment, at least one degree of freedom within the models), those whose
    run means differ between the models beyond the spread between runs on one model, taken
    at least as large as a run's own standard error (one-way ANOVA at MACHINE_LEVEL)."""
    groups: dict[tuple, list[Series]] = defaultdict(list)
    for s in found:
        groups[(s.measure, s.major, s.experiment)].append(s)
    shifted = cells = 0
    for runs in groups.values():
        by_model: dict[str | None, list[float]] = defaultdict(list)
        for s in runs:
            by_model[s.machine].append(float(np.mean(s.values)))
        k, n = len(by_model), len(runs)
        if k < 2 or n - k < 1:
            continue
        grand = np.mean([m for ms in by_model.values() for m in ms])
        between = sum(len(ms) * (np.mean(ms) - grand) ** 2 for ms in by_model.values()) / (k - 1)
        within = sum(((np.asarray(ms) - np.mean(ms)) ** 2).sum() for ms in by_model.values()) / (n - k)
        own = float(np.mean([np.var(s.values, ddof=1) / len(s.values) for s in runs]))
        cells += 1
        shifted += scipy_stats.f.sf(between / max(within, own), k - 1, n - k) < MACHINE_LEVEL
    return int(shifted), cells
