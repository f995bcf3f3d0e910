"""What a chapter's experiment gets on local clusters (`--server local`): the run context, with
the CPUs counted on this machine, where the clusters run, rather than by a Docker engine,
clusters of another major's binaries beside the run's own, and no image's.

Only runs on this target execute this module: a local run's key adds it whole
(fingerprint.LOCAL_LAB), and containers' keys do not reach it."""
from __future__ import annotations

from contextlib import ExitStack

from .. import majors
from .binaries import NoBinaries, usable_cpus
from .context import RunContext
from .local import LocalLab


class LocalRunContext(RunContext):
    """As RunContext, but the CPUs are this machine's (no engine counts them), and so are the
    servers of another major."""

    def engine_cpus(self) -> int | None:
        """The CPUs this run may use on this machine, which the clusters share, recorded as
        "engine_cpus" as the engine's count is in a container run."""
        cpus = len(usable_cpus())
        self.record("engine_cpus", cpus)
        return cpus

    @property
    def with_images(self) -> bool:
        """No image runs here: the clusters are this machine's binaries."""
        return False

    def beside(self, stack: ExitStack, major: float) -> LocalLab | None:  # type: ignore[override]
        """Clusters of `major`'s binaries on this machine (PG_BINDIR_<major>, a package's, or
        `make binaries`), driven by the run's own client programs (relocatable binaries
        carry none), closed with `stack`. None where this machine has none of that major:
        the run goes on without it and records the major in "beside_missing", and the
        findings that compare with it are not applicable here (Finding.judge_runs)."""
        try:
            return stack.enter_context(LocalLab(major, client=self.lab.client))
        except NoBinaries as exc:
            self.step(f"without {majors.name(major)} beside: {exc}")
            self.record("beside_missing", [*self.raw.get("beside_missing", []), majors.name(major)])
            return None
