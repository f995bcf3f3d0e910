"""What a chapter's experiment gets on local clusters (`--server local`): the run context, with
the CPUs counted on this machine, where the clusters run, rather than by a Docker engine.

Only runs on this target execute this module: a local run's key adds it whole
(fingerprint.LOCAL_LAB), and containers' keys do not reach it."""
from __future__ import annotations

from .binaries import usable_cpus
from .context import RunContext


class LocalRunContext(RunContext):
    """As RunContext, but the CPUs are this machine's: no engine counts them."""

    def engine_cpus(self) -> int | None:
        """The CPUs this run may use on this machine, which the clusters share, recorded as
        "engine_cpus" as the engine's count is in a container run."""
        cpus = len(usable_cpus())
        self.record("engine_cpus", cpus)
        return cpus
