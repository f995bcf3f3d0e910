"""CI's canary: this build's fresh runs on one major beside each chapter's published pool
(`repro compare`, chapter by chapter), counted over every check. A change to the harness,
which the experiments' keys do not cover, must not move a number: if it did, more checks
differ from their pool than chance allows, and the canary fails and names them.

Chance, here: runs of one experiment differ by as much as the between-run floor allows
(stats.BETWEEN_RUNS, the most the intervals promise to cover), and a pool's runs may all
come from one sitting of one machine, sharing its offset, while CI's run comes from another
(on 2026-11-29 every run pooled on 17 was from 2026-11-26). Then a check differs from its
pool at most FALSE_DIFFER of the time (tests/test_canary.py simulates it through stats.pool
and compare.difference, at the pools' sizes and the scales' rounds). Over n checks the
canary allows the 99th percentile of a binomial count at that rate, so about 1 CI in 100
fails where nothing moved, if checks differ independently. What it sees is a move by about
× 2.5 in a third of the checks (almost every CI) or a fifth (9 in 10); a move of 10 % it
does not see: one run's interval is wide.

A chapter whose run has no published pool under its current key (its experiment changed in
this commit, so its pool starts again) is not compared, and said so: the canary guards the
code that keys do not cover.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from scipy import stats as scipy_stats

from . import compare, registry
from .errors import ReproError

FALSE_DIFFER = 0.14  # per check: the highest simulated rate, 0.13, and its simulation error (tests/test_canary.py)
FALSE_ALARMS = 0.01  # of CIs where nothing moved


def allowed(checks: int) -> int:
    """The most differing checks among `checks` that chance explains: the count a binomial
    at FALSE_DIFFER exceeds in FALSE_ALARMS of CIs at most."""
    return int(scipy_stats.binom.ppf(1 - FALSE_ALARMS, checks, FALSE_DIFFER)) if checks else 0


@dataclass
class Canary:
    """What the canary compared on one major, and what differed."""

    major: float
    checks: int = 0
    differing: list[str] = field(default_factory=list)  # "chapter F3 · count, serial: ratio 1.29 [1.25, 1.34]"
    not_compared: dict[str, str] = field(default_factory=dict)  # chapter -> why

    @property
    def alarm(self) -> bool:
        return len(self.differing) > allowed(self.checks)


def check(major: float) -> Canary:
    """Compare this build's newest run of every chapter on `major` with its published pool."""
    canary = Canary(major)
    for name, chapter in registry.chapters().items():
        try:
            found = compare.compare(chapter, major)
        except ReproError as exc:
            canary.not_compared[name] = str(exc)
            continue
        for f in found["findings"]:
            for c in f["checks"]:
                d = c["difference"]
                if d is None:
                    continue
                canary.checks += 1
                if d["differ"]:
                    canary.differing.append(f"{name} {f['finding']} · {c['check']}: {d['kind']} "
                                            f"{d['value']:.3g} [{d['low']:.3g}, {d['high']:.3g}]")
    return canary
