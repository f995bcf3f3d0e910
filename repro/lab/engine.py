"""Where the Docker engine runs, and what it says of its machine. Kept apart from the
harness (repro/lab/harness/images.py: the engine's client, the images): whether the engine
is this machine's decides where the harness's own threads run beside the servers (CPU
placement, waits.PinnedActivitySampler) as well as the address it reaches them on, and
chapters read the engine's CPU count; both key the runs."""
from __future__ import annotations

import os
from functools import cache
from typing import Any

from .harness.images import client


def is_local() -> bool:
    """Whether the engine runs on this machine (so containers share this machine's CPUs
    and its loopback address)."""
    return os.environ.get("DOCKER_HOST", "unix://").startswith("unix:")


@cache
def info() -> dict[str, Any]:
    return client().info()
