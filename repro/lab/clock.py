"""The run's clock, which the round policy reads (lab/measure.py: run_rounds stops adding
rounds at the scale's budget of it) and the progress lines show (harness/progress.py): keyed,
in a module of its own so that the harness's progress does not import the measuring code."""
from __future__ import annotations

import time


class Stopwatch:
    """The run's clock: rounds beyond the minimum stop at the scale's budget of its time."""

    def __init__(self) -> None:
        self.start = time.monotonic()

    @property
    def elapsed(self) -> float:
        """Seconds since the run started."""
        return time.monotonic() - self.start
