"""Measuring rules from design.md: interleaved conditions, repetitions, and rounds added
where they can decide something.

A round runs every run once, in an order rotated each round. The findings are judged
twice at most (two looks): after the scale's minimum rounds, and at the end. At the first
look, a finding that is undecided (pooled with the stored runs that count for it) and that
the rounds the run may still add could decide, if its estimate stayed put, gets them: more
rounds go to the runs whose conditions such findings read, up to the scale's maximum rounds
or until its time budget would be exceeded, with no look in between. A finding that no
feasible number of rounds decides (its estimate on the threshold, or the between-run floor
wider than its distance to it) gets none. The error is spent over the looks by Bonferroni:
each look's 95 % interval calls a finding whose true value sits on its threshold
"reproduced" at most 2.5 % of the time, so two looks keep it at 5 % per finding at most
(tests/test_intervals.py simulates it at the looks the runner takes).
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from ..stats import Rounds
from ..verdict import INCONCLUSIVE, CheckResult, Environment, Finding

if TYPE_CHECKING:
    from .harness.progress import Progress

T = TypeVar("T")

Measurements = dict[str, dict[str, Any]]  # condition -> {"latency_ms": ..., "tps": ...}
# (what is measured so far, the rounds the run may still add) -> (conditions, finding ids)
Undecided = Callable[[dict[str, list[dict]], int], tuple[set[str], list[str]]]


def rotated(items: Sequence[T], round_no: int) -> list[T]:
    """The order in one round: rotated by one each round, so over len(items) rounds
    every condition runs once in every position (drift and warm-up even out); every
    other round also reversed, so a condition does not always follow the same one
    (what a run leaves behind, e.g. a standby's backlog, cannot favour one condition)."""
    k = round_no % len(items) if items else 0
    order = list(items[k:]) + list(items[:k])
    return order[::-1] if round_no % 2 else order


@dataclass
class Plan:
    """How many rounds: at least `rounds`, at most `max_rounds`, within `budget_s` seconds
    of the whole chapter run."""

    rounds: int
    max_rounds: int
    budget_s: float

    @staticmethod
    def of(params: dict[str, Any]) -> Plan:
        return Plan(params["rounds"], params.get("max_rounds", params["rounds"]),
                    params.get("budget_s", float("inf")))


@dataclass
class Extra:
    """Why a round beyond the minimum ran: which findings were undecided, which runs it did."""

    round: int
    findings: list[str]
    runs: list[str]


@dataclass
class RoundsLog:
    extra: list[Extra] = field(default_factory=list)
    stopped: str = "minimum"  # "minimum" | "decided" (at the first look) | "max_rounds" | "budget"

    def as_dict(self) -> dict[str, Any]:
        return {"extra": [vars(e) for e in self.extra], "stopped": self.stopped}


def run_rounds(runs: dict[str, Callable[[], Measurements]], plan: Plan, progress: Progress,
               undecided: Undecided | None = None) -> tuple[dict[str, list[dict]], RoundsLog]:
    """Run every run once per round, in an order rotated each round, then add rounds as the
    plan allows. A run returns measurements of one or more conditions (a pgbench run with
    one script per condition measures several at once). Returns each condition's records
    (with their round) and the log of extra rounds."""
    measured: dict[str, list[dict]] = {}
    produces: dict[str, set[str]] = {}
    log = RoundsLog()
    durations: dict[str, float] = {}
    todo = list(runs)
    findings: list[str] = []
    for r in range(plan.max_rounds):
        if r == plan.rounds:  # the first look; the second is the final verdict
            if undecided is None:
                break
            per_round = sum(durations.values())
            room = (plan.budget_s - progress.elapsed) / per_round if per_round else float("inf")
            extra = int(max(0, min(plan.max_rounds - plan.rounds, room)))
            conditions, findings = undecided(measured, extra)
            todo = [n for n in runs if produces[n] & conditions]
            if not todo:
                log.stopped = "decided"
                break
        if r >= plan.rounds:
            if progress.elapsed + sum(durations[n] for n in todo) > plan.budget_s:
                log.stopped = "budget"
                break
            log.extra.append(Extra(r, findings, todo))
        for i, name in enumerate(rotated(todo, r)):
            left = sum(durations.get(n, 0) for n in todo) * (plan.rounds - r - 1) if r < plan.rounds else 0
            progress.note(f"round {r + 1} · {name} ({i + 1}/{len(todo)})", left or None)
            t0 = time.monotonic()
            for condition, values in runs[name]().items():
                measured.setdefault(condition, []).append({"round": r, **values})
                produces.setdefault(name, set()).add(condition)
            durations[name] = time.monotonic() - t0
    else:
        if plan.max_rounds > plan.rounds and undecided is not None:
            log.stopped = "max_rounds"
    return measured, log


def decidable(findings: Sequence[Finding], current: tuple[Rounds, Environment],
              history: Callable[[str], Sequence[tuple[Rounds, Environment]]] = lambda fid: (),
              extra: int | None = None) -> tuple[set[str], list[str]]:
    """What more rounds of the current run could decide: the conditions read by the findings
    that are inconclusive over it and the stored runs that count for them (`history`, by
    finding: the same pooled intervals as the final verdict), and their ids. With `extra`
    (the rounds the run may still add), only findings that so many rounds could decide if
    their estimates stayed put: rounds are spent where they can decide something. Findings
    whose conditions are not all measured yet are left out."""
    conditions: set[str] = set()
    ids: list[str] = []
    rounds, env = current
    for finding in findings:
        if finding.mechanism:  # checked exactly: more rounds cannot decide it
            continue
        view = rounds.resample(rounds.ids)
        view.used = set()
        try:
            verdict = finding.judge_runs([*history(finding.id), (view, env)])
        except KeyError:  # data the run records later (or a condition not measured yet)
            continue
        if verdict.status != INCONCLUSIVE:
            continue
        if extra is not None and not all(_can_clear(c, extra) for c in verdict.checks
                                         if c.status == INCONCLUSIVE):
            continue
        conditions |= view.used
        ids.append(finding.id)
    return conditions, ids


def _can_clear(result: CheckResult, extra: int) -> bool:
    """Whether `extra` more rounds of the newest run could clear the check's threshold."""
    e = result.estimate
    if e.low is None or not e.parts:  # measured once per run (or not at all): rounds cannot help
        return False
    return e.rounds_to_decide(result.nearest_limit(), extra) is not None
