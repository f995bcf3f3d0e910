"""What a chapter's experiment gets: its scale's parameters, its plain files, a lab,
progress, the target, and a place to put what it measures. The bookkeeping is the
harness's (harness/context.py); what shapes or measures the run is here."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from typing import Callable

from ..text import Text
from . import engine
from .existing import extensions
from .harness.context import Context
from .measure import Measurements, Plan, run_rounds
from .servers import Lab, Server


def settings_file(path: Path) -> dict[str, str]:
    """A postgresql.conf-style file (key = value, # comments) as settings."""
    settings = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            key, _, value = line.partition("=")
            settings[key.strip()] = value.strip().strip("'")
    return settings


class RunContext(Context):
    """The experiment records data (`record`) and measures rounds (`rounds`); both end up in
    the result's raw data: {"rounds": {condition: [records]}, "rounds_log": ..., **recorded}.
    A finding that compares with the server's CPU count asks for it (`engine_cpus`), which
    records it."""

    def engine_cpus(self) -> int | None:
        """The CPUs the run's servers share, recorded as "engine_cpus": the engine's NCPU, or
        None against an existing server, whose machine the run cannot see (the count the
        user declares, --server-cpus, takes that None's place: runner.declare_server_cpus)."""
        cpus = None if self.external else engine.info().get("NCPU")
        self.record("engine_cpus", cpus)
        return cpus

    def has(self, feature: str) -> bool:
        """Whether the run's image carries `feature` (an extension or a tool, as its labels
        say), or, against an existing server, whether that server offers the extension: a
        chapter runs what it can without it."""
        if self.dsn:
            return feature in extensions(self.dsn)
        return self.lab.image is not None and feature in self.lab.image.features

    def beside(self, stack: ExitStack, major: float) -> Lab:
        """A lab of another major beside the run's own (partitions' 11), closed with `stack`:
        containers of that major's image; on local clusters, that major's binaries."""
        return stack.enter_context(Lab(major))

    def text(self, name: str) -> str:
        """One of the chapter's plain files (a pgbench script, SQL)."""
        return self.chapter.file(name).read_text(encoding="utf-8")

    def settings(self, name: str) -> dict[str, str]:
        """A postgresql.conf-style file of the chapter as settings."""
        return settings_file(self.chapter.file(name))

    def servers(self, roles: dict[Text, dict[str, str]], prepare: Callable[[Server], None]
                ) -> list[Server]:
        """Start one server per role and `prepare` each (load data, warm up), all at once:
        on 2 cores the set-up of two servers overlaps well with each other."""
        def start(item: tuple[Text, dict[str, str]]) -> Server:
            server = self.server(*item)
            prepare(server)
            return server
        with ThreadPoolExecutor(len(roles)) as pool:
            return list(pool.map(start, roles.items()))

    def rounds(self, runs: dict[str, Callable[[], Measurements]], plan: Plan | None = None
               ) -> None:
        """Measure runs in rotated rounds; rounds beyond the scale's minimum go to the runs
        that undecided findings depend on, where they can decide them, within the scale's
        budget."""
        def undecided(measured: dict[str, list[dict]], extra: int) -> tuple[set[str], list[str]]:
            if self._undecided is None:
                return set(), []
            return self._undecided({**self.raw, "rounds": {**self.raw["rounds"], **measured}}, extra)

        measured, log = run_rounds(runs, plan or Plan.of(self.params), self.progress, undecided)
        self.raw["rounds"].update(measured)
        self.raw["rounds_log"].append(log.as_dict())
