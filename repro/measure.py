"""Measuring rules from design.md: interleaved conditions, repetitions, medians, ratios."""
from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


def rotated(items: Sequence[T], round_no: int) -> list[T]:
    """The order in one round: rotated by one each round, so over len(items) rounds
    every condition runs once in every position (drift and warm-up even out); every
    other round also reversed, so a condition does not always follow the same one
    (what a run leaves behind, e.g. a standby's backlog, cannot favour one condition)."""
    k = round_no % len(items) if items else 0
    order = list(items[k:]) + list(items[:k])
    return order[::-1] if round_no % 2 else order


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def paired_change(values: Sequence[float], baseline: Sequence[float]) -> float:
    """Median over rounds of (value / baseline - 1), in %: each round is its own control."""
    return median([(v / b - 1) * 100 for v, b in zip(values, baseline, strict=True)])


def spread(values: Sequence[float]) -> float:
    """(max - min) / median in %: how much repetitions of one condition disagree."""
    return (max(values) - min(values)) / median(values) * 100


class Progress:
    """Prints which step runs, elapsed time and an estimate of what is left."""

    def __init__(self, chapter: str, total_steps: int, out: Callable[[str], None] | None = None):
        self.chapter = chapter
        self.total = max(total_steps, 1)
        self.done = 0
        self.start = time.monotonic()
        self.out = out or (lambda line: print(line, file=sys.stderr, flush=True))

    def step(self, what: str) -> None:
        elapsed = time.monotonic() - self.start
        left = f", ~{_clock(elapsed / self.done * (self.total - self.done))} left" if self.done else ""
        self.out(f"[{self.chapter} {self.done + 1}/{self.total} {_clock(elapsed)}{left}] {what}")
        self.done += 1

    def note(self, what: str) -> None:
        self.out(f"[{self.chapter} {_clock(time.monotonic() - self.start)}] {what}")


def _clock(seconds: float) -> str:
    return f"{int(seconds) // 60}:{int(seconds) % 60:02d}"


Measurements = dict[str, dict[str, float]]  # condition -> {"latency_ms": ..., "tps": ...}


def run_rounds(rounds: int, runs: dict[str, Callable[[], Measurements]],
               progress: Progress) -> dict[str, list[dict]]:
    """Do every run once per round, in an order rotated each round.

    A run returns measurements of one or more conditions (a pgbench run with one
    script per condition measures several at once). Returns each condition's
    measurements in round order.
    """
    measured: dict[str, list[dict]] = {}
    for r in range(rounds):
        for name in rotated(list(runs), r):
            progress.step(f"round {r + 1}/{rounds} · {name}")
            for condition, values in runs[name]().items():
                measured.setdefault(condition, []).append({"round": r, **values})
    return measured
