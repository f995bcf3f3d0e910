"""The canary's bound (repro/canary.py), calibrated by simulation through the real code:
stats.pool for this build's run and for its published pool, compare.difference between
them. Where nothing moved, a check differs from its pool at most canary.FALSE_DIFFER of the
time, as long as runs differ by no more than the between-run floor, even when the pool's
runs share one sitting's offset; the canary's count bound then fails about 1 CI in 100."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as scipy_stats

from repro import canary, compare
from repro.stats import BETWEEN_RUNS, Sample, pool

SPREAD = 0.1  # a round's spread on the log scale (about 10 %)
MINIMUM = 3  # the default scale's minimum rounds of most chapters (the floor's unit)
SIMULATED = 2000  # per case: a rate of 13 % within about ±1.9 % (2.5 standard errors)
MARGIN = 2.5 * np.sqrt(0.13 * 0.87 / SIMULATED)


def _differ_rate(published_runs: int, rng: np.random.Generator, rounds: int = MINIMUM, one_sitting: bool = True,
                 rho: float = BETWEEN_RUNS, moved: float = 1.0, simulated: int = SIMULATED) -> float:
    """How often this build's run differs from a pool of `published_runs` runs of the same
    experiment. Runs are shifted by rho times a run's own standard error at the minimum
    rounds: each run its own shift, or (`one_sitting`) the pool's runs one shift together and
    this build's run another. `moved`: what this build's run measures, over the truth."""
    sd = rho * SPREAD / np.sqrt(MINIMUM)
    differ = 0
    for _ in range(simulated):
        pooled = np.full(published_runs, rng.normal(0, sd)) if one_sitting else rng.normal(0, sd, published_runs)
        shift = np.r_[rng.normal(0, sd) + np.log(moved), pooled]
        values = np.exp(shift[:, None] + rng.normal(0, SPREAD, (published_runs + 1, rounds)))
        runs = [Sample(tuple(r), minimum=MINIMUM) for r in values]
        differ += compare.difference(pool(runs[:1], "ratio"), pool(runs[1:], "ratio"))["differ"]
    return differ / simulated


CASES = [(k, rounds) for k in (1, 3, 5, 9) for rounds in (MINIMUM, 2 * MINIMUM)]


@pytest.mark.parametrize("published_runs, rounds", CASES)
def test_a_check_differs_from_its_pool_by_chance_at_most_false_differ(published_runs: int, rounds: int) -> None:
    rate = _differ_rate(published_runs, np.random.default_rng(published_runs * 10 + rounds), rounds)
    assert rate <= canary.FALSE_DIFFER + MARGIN, rate


def test_the_rate_is_not_loose_and_runs_of_many_sittings_differ_less() -> None:
    """At five runs of one sitting and six rounds the rate comes near the constant (the canary
    allows no more than chance); pools of runs from many sittings differ less often."""
    one_sitting = _differ_rate(5, np.random.default_rng(11), 2 * MINIMUM)
    many = _differ_rate(5, np.random.default_rng(12), 2 * MINIMUM, one_sitting=False)
    assert one_sitting >= canary.FALSE_DIFFER - 3 * MARGIN, one_sitting
    assert many < one_sitting, (many, one_sitting)


@pytest.mark.parametrize("checks", [40, 100, 300])
def test_the_canary_fails_about_one_ci_in_a_hundred_where_nothing_moved(checks: int) -> None:
    """CIs of `checks` independent checks, each differing at FALSE_DIFFER: the count bound
    fails about 1 in 100 (a discrete count: between 0.3 and 1 %)."""
    rng = np.random.default_rng(checks)
    counts = rng.binomial(checks, canary.FALSE_DIFFER, 200_000)
    alarms = float(np.mean(counts > canary.allowed(checks)))
    assert 0.003 <= alarms <= canary.FALSE_ALARMS + 0.001, alarms
    exact = scipy_stats.binom.sf(canary.allowed(checks), checks, canary.FALSE_DIFFER)
    assert abs(alarms - exact) < 0.002


def test_a_moved_number_is_caught_and_a_small_move_is_not() -> None:
    """What the canary sees: a change that moves a third of 100 checks by × 2.5 (against pools
    of 5 runs) fails almost every CI (a fifth of them, about 9 CIs in 10); a move of 10 % it
    does not see."""
    rng = np.random.default_rng(5)
    checks, moved = 100, 100 // 3
    for ratio, caught in ((2.5, lambda a: a > 0.99), (1.1, lambda a: a < 0.2)):
        seen = _differ_rate(5, rng, moved=ratio, simulated=500)
        counts = rng.binomial(moved, seen, 20_000) + rng.binomial(checks - moved, canary.FALSE_DIFFER, 20_000)
        assert caught(np.mean(counts > canary.allowed(checks))), (ratio, seen)


def test_no_checks_allow_no_difference() -> None:
    assert canary.allowed(0) == 0 and not canary.Canary(17).alarm


def test_the_command_fails_naming_the_checks_beyond_chance_and_passes_within(monkeypatch, capsys) -> None:
    """`repro canary` counts each chapter's differing checks from compare and exits 1 past
    the bound, naming them; a chapter compare refuses is listed as not compared."""
    from repro import cli, registry
    from repro.errors import ReproError
    names = list(registry.chapters())

    def compared(differing: int):
        def one(chapter, major):
            if chapter.name == names[0]:
                raise ReproError("measured by another version of the experiment")
            checks = [{"check": f"c{i}", "difference": {"kind": "ratio", "value": 2.0, "low": 1.5, "high": 2.5,
                                                         "differ": i < differing}} for i in range(10)]
            return {"findings": [{"finding": "F1", "checks": checks + [{"check": "exact", "difference": None}]}]}
        return one
    checks = 10 * (len(names) - 1)
    for differing, status in ((canary.allowed(checks) // (len(names) - 1), 0), (10, 1)):
        monkeypatch.setattr(compare, "compare", compared(differing))
        assert cli.main(["canary"]) == status
        out = capsys.readouterr()
        assert f"not compared: {names[0]}: measured by another version" in out.out
        assert f"of {checks} checks differ" in out.out
        assert out.out.count("differs: ") == differing * (len(names) - 1)
        assert ("error: more checks differ than chance allows" in out.err) == bool(status)
