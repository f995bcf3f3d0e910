"""One way for the harness to wait: poll until a condition holds, or fail at a deadline with
one line that says what did not happen in how long. No wait gives up silently."""
from __future__ import annotations

import time
from typing import Callable, TypeVar

from ...errors import ReproError

Value = TypeVar("Value")


def until(check: Callable[[], Value], timeout_s: float, failure: str | Callable[[], str],
          interval_s: float = 0.1) -> Value:
    """Call `check` every `interval_s` until it returns a true value, and return that value;
    once `timeout_s` has passed, raise ReproError with `failure` (a callable: its message
    then, e.g. with a container's last log lines)."""
    deadline = time.monotonic() + timeout_s
    while not (found := check()):
        if time.monotonic() > deadline:
            raise ReproError(failure() if callable(failure) else failure)
        time.sleep(interval_s)
    return found
