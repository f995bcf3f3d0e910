"""The intervals' simulations vectorized: what tests/test_intervals.py simulates, over all
simulated runs at once (numpy), looping only over a campaign's runs. Through the real code,
one simulated campaign at a time, a test took minutes; this takes milliseconds.

It models stats.pool (on the log scale), the runner's two looks (lab/measure.py: run_rounds
with decidable and Estimate.rounds_to_decide), Finding.judge_runs of one check of a ratio
above LIMIT, and a campaign's readings (test_intervals._runs_to_add, with
Estimate.runs_to_decide). It reads the real code's constants; test_intervals.py holds its
results to the real code's on the same draws, so the simulations keep testing the code the
chapters run.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import stats as scipy_stats

from repro.stats import BETWEEN_RUNS, CONFIDENCE, RUNS_FOR_SPREAD
from repro.verdict import CONTRADICTED, INCONCLUSIVE, REPRODUCED
from repro.verdict_words import FEASIBLE_RUNS

Draw = Callable[[np.random.Generator, tuple[int, ...]], np.ndarray]
# log-scale round noise, and its spread (a normal's standard deviation with the same
# interquartile range: the heavy-tailed one has no standard deviation)
NOISE: dict[str, tuple[Draw, float]] = {
    "lognormal": (lambda rng, shape: rng.normal(0, 0.1, shape), 0.1),
    "heavy-tailed (t, 2 d.f.)": (lambda rng, shape: 0.05 * rng.standard_t(2, shape), 0.05 * 1.633 / 1.349),
}
LIMIT = 1.0  # the threshold the simulated finding's ratio must lie above
MOST_MISSING = 3  # a campaign's reading adds runs only where at most so many more would decide


def ratios(kind: str, rho: float, rounds: int, shape: tuple[int, int, int], rng: np.random.Generator,
           truth: float = 1.0) -> np.ndarray:
    """Simulated rounds' ratios, shaped (simulations, runs, rounds): round noise of `kind`
    around `truth`, each run shifted by a run effect of standard deviation rho times a run's
    own standard error at `rounds` rounds."""
    draw, sd = NOISE[kind]
    shift = rng.normal(0, rho * sd / np.sqrt(rounds), shape[:2])
    return truth * np.exp(shift[..., None] + draw(rng, shape))


def most_runs(stored: int, readings: int) -> int:
    """The most runs a campaign takes: the stored ones, MOST_MISSING + 1 per reading, the build's."""
    return stored + readings * (MOST_MISSING + 1) + 1


def _t(df: np.ndarray) -> np.ndarray:
    return scipy_stats.t.ppf(0.5 + CONFIDENCE / 2, df)


@dataclass
class Runs:
    """Each simulation's runs so far (a Sample each): the mean and variance of their rounds on
    the log scale, their rounds, and how many runs there are (the slots beyond are unused)."""

    mean: np.ndarray  # (simulations, slots)
    var: np.ndarray
    n: np.ndarray
    k: np.ndarray  # (simulations,)

    @staticmethod
    def of(logs: np.ndarray) -> Runs:
        """Runs of all the rounds of logs (simulations, runs, rounds)."""
        sims, runs, rounds = logs.shape
        return Runs(logs.mean(2), logs.var(2, ddof=1), np.full((sims, runs), rounds), np.full(sims, runs))

    def measure(self, logs: np.ndarray, rows: np.ndarray, slots: np.ndarray, n: int) -> None:
        """The runs in (rows, slots) take the first n of their rounds in logs."""
        x = logs[rows, slots, :n]
        self.mean[rows, slots], self.var[rows, slots], self.n[rows, slots] = x.mean(1), x.var(1, ddof=1), n


@dataclass
class Pooled:
    """stats.pool over each simulation's runs: the interval on the log scale, and what
    Estimate.half_with and runs_to_decide read (each run's own variance of its mean and its
    between-run floor, the run means' spread, the degrees of freedom)."""

    runs: Runs
    own: np.ndarray  # (simulations, slots), 0 in unused slots
    floor: np.ndarray
    center: np.ndarray  # (simulations,)
    spread: np.ndarray
    df: np.ndarray
    half: np.ndarray

    @property
    def low(self) -> np.ndarray:
        return np.exp(self.center - self.half)

    @property
    def high(self) -> np.ndarray:
        return np.exp(self.center + self.half)

    @property
    def distance(self) -> np.ndarray:
        return np.abs(self.center - np.log(LIMIT))

    def status(self) -> np.ndarray:
        """Above(LIMIT).status of the interval."""
        return np.select([self.low > LIMIT, self.high <= LIMIT], [REPRODUCED, CONTRADICTED], INCONCLUSIVE)


def pool(runs: Runs, minimum: int) -> Pooled:
    """stats.pool of each simulation's runs, at a scale of `minimum` rounds: below
    RUNS_FOR_SPREAD runs the between-run floor and Welch–Satterthwaite degrees of freedom,
    from there on the runs' spread (at least their own variance) and k − 1."""
    used = np.arange(runs.mean.shape[1]) < runs.k[:, None]
    k = runs.k.astype(float)
    center = np.where(used, runs.mean, 0.0).sum(1) / k
    deviations = np.where(used, (runs.mean - center[:, None]) ** 2, 0.0).sum(1)
    spread = deviations / np.maximum(k * (k - 1), 1.0)  # one run: 0
    few = (runs.k < RUNS_FOR_SPREAD)[:, None]
    own = np.where(used, runs.var / runs.n, 0.0)
    floor = np.where(used & few, BETWEEN_RUNS ** 2 * runs.var / np.minimum(runs.n, minimum), 0.0)
    total = own + floor
    welch = total.sum(1) ** 2 / (total ** 2 / (runs.n - 1)).sum(1)
    df = np.where(few[:, 0], welch, k - 1)
    variance = np.maximum((own.sum(1) + floor.sum(1)) / k ** 2, spread)
    return Pooled(runs, own, floor, center, spread, df, _t(df) * np.sqrt(variance))


def could_decide(p: Pooled, extra: int) -> np.ndarray:
    """decidable at the first look: undecided, and `extra` more rounds of the newest run would
    clear LIMIT if the estimate stayed put (Estimate.half_with: only the newest run's own
    variance shrinks). The half-width only shrinks with more rounds, so whether the most
    rounds do is whether any number up to them does (Estimate.rounds_to_decide)."""
    newest = np.arange(p.own.shape[1]) == (p.runs.k - 1)[:, None]
    n = p.runs.n
    total = np.where(newest, p.own * n / (n + extra) + p.floor, p.own + p.floor).sum(1)
    half = _t(p.df) * np.sqrt(np.maximum(total / p.runs.k ** 2, p.spread))
    return (p.status() == INCONCLUSIVE) & (half < p.distance)


def runs_to_add(p: Pooled) -> np.ndarray:
    """test_intervals._runs_to_add: an undecided estimate whose projection (Estimate.runs_to_decide,
    the first number of runs that clears LIMIT) is at most FEASIBLE_RUNS and MOST_MISSING more
    runs gets the runs that bring it to one more than that; any other, none."""
    per_run = p.runs.k * (p.half / _t(p.df)) ** 2
    add = np.zeros_like(p.runs.k)
    for more in range(MOST_MISSING, 0, -1):  # the fewest that clear win
        m = p.runs.k + more
        df = np.where(m >= RUNS_FOR_SPREAD, m - 1.0, p.df)
        clears = (_t(df) * np.sqrt(per_run / m) < p.distance) & (m <= FEASIBLE_RUNS)
        add = np.where(clears, more + 1, add)
    return np.where(p.status() == INCONCLUSIVE, add, 0)


def _run(runs: Runs, logs: np.ndarray, rounds: int, most: int, active: np.ndarray) -> None:
    """The runner's two looks on the next run of each active simulation: `rounds` rounds,
    then, where that run pooled with the runs before it is undecided and could be decided,
    `most`."""
    rows = np.flatnonzero(active)
    runs.measure(logs, rows, runs.k[rows], rounds)
    runs.k[rows] += 1
    if most > rounds:
        more = rows[could_decide(pool(runs, rounds), most - rounds)[rows]]
        runs.measure(logs, more, runs.k[more] - 1, most)


def campaigns(drawn: np.ndarray, rounds: int, most: int, stored: int, readings: int) -> tuple[Pooled, np.ndarray]:
    """test_intervals._campaign on every simulation's `ratios` (simulations, most_runs, most
    rounds) at once: `stored` runs, each taking the runner's two looks pooled with the runs
    before it; `readings` readings, each adding the runs `runs_to_add` asks for (one at a time,
    the same way); the build's own run. The build's pooled estimate, and each run's rounds
    (0: a slot not run)."""
    logs = np.log(drawn)
    sims, slots = drawn.shape[:2]
    runs = Runs(np.zeros((sims, slots)), np.zeros((sims, slots)), np.full((sims, slots), rounds),
                np.zeros(sims, dtype=int))
    everyone = np.ones(sims, dtype=bool)
    for _ in range(stored):
        _run(runs, logs, rounds, most, everyone)
    for _ in range(readings):
        add = runs_to_add(pool(runs, rounds))
        for a in range(add.max(initial=0)):
            _run(runs, logs, rounds, most, add > a)
    _run(runs, logs, rounds, most, everyone)
    return pool(runs, rounds), np.where(np.arange(slots) < runs.k[:, None], runs.n, 0)
