"""A run's progress lines: which step runs, its time, what is left. The clock they read is
the round policy's (lab/clock.py: Stopwatch), which stays keyed."""
from __future__ import annotations

import sys
from typing import Callable

from ..clock import Stopwatch


def _clock(seconds: float) -> str:
    return f"{int(seconds) // 60}:{int(seconds) % 60:02d}"


class Progress(Stopwatch):
    """Prints which step runs, elapsed time and, inside rounds, an estimate of what is left."""

    def __init__(self, chapter: str, out: Callable[[str], None] | None = None):
        super().__init__()
        self.chapter = chapter
        self.out = out or (lambda line: print(line, file=sys.stderr, flush=True))

    def note(self, what: str, left_s: float | None = None) -> None:
        left = f", ~{_clock(left_s)} left" if left_s is not None else ""
        self.out(f"[{self.chapter} {_clock(self.elapsed)}{left}] {what}")
