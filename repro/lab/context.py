"""What a chapter's experiment gets: its scale's parameters, its plain files, a lab,
progress, the target, and a place to put what it measures."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable

from ..chapter import Chapter
from ..errors import ReproError
from ..text import Text
from .measure import Measurements, Plan, Progress, Undecided, run_rounds
from .existing import extensions
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


class RunContext:
    """The experiment records data (`record`) and measures rounds (`rounds`); both end up in
    the result's raw data: {"rounds": {condition: [records]}, "rounds_log": ..., **recorded}.
    A finding that compares with the server's CPU count records it (`engine_cpus`: the
    engine's `NCPU`, None against an existing server; `--server-cpus N` fills it in)."""

    def __init__(self, chapter: Chapter, params: dict[str, Any], lab: Lab,
                 progress: Progress, dsn: str | None = None, undecided: Undecided | None = None,
                 major: float | None = None):
        self.chapter = chapter  # the chapter's declaration (its package, scales, original)
        self.params = params  # this scale's parameters (scales.toml), e.g. params["rounds"]
        self.lab = lab  # the run's lab: its servers, networks, image and superuser password (below)
        self.progress = progress  # the run's progress lines (use step)
        self.dsn = dsn  # the existing server's DSN (`--dsn`), else None (use external)
        self.raw: dict[str, Any] = {"rounds": {}, "rounds_log": []}  # what is recorded so far (read it; write with record)
        self._undecided = undecided
        self._major = major  # the existing server's (the lab's images only run clients then)

    @property
    def major(self) -> float:
        """The major under test: the lab's, or the existing server's (`--dsn`)."""
        return self._major if self._major is not None else self.lab.major

    @property
    def external(self) -> bool:
        """Against an existing server (`--dsn`): one server, no restarts, no access to its
        machine; the experiment runs what it can there (its docstring says what)."""
        return self.dsn is not None

    def has(self, feature: str) -> bool:
        """Whether the run's image carries `feature` (an extension or a tool, as its labels
        say), or, against an existing server, whether that server offers the extension: a
        chapter runs what it can without it."""
        if self.dsn:
            return feature in extensions(self.dsn)
        return self.lab.image is not None and feature in self.lab.image.features

    def step(self, what: str) -> None:
        """Say what the run does now (a line of progress, with its time)."""
        self.progress.note(what)

    def text(self, name: str) -> str:
        """One of the chapter's plain files (a pgbench script, SQL)."""
        return self.chapter.file(name).read_text(encoding="utf-8")

    def settings(self, name: str) -> dict[str, str]:
        """A postgresql.conf-style file of the chapter as settings."""
        return settings_file(self.chapter.file(name))

    def record(self, key: str, value: Any) -> None:
        """Keep something measured outside the rounds (a tool's output, a capability)."""
        if key in ("rounds", "rounds_log"):
            raise ReproError(f"{key!r} is the rounds' own key")
        self.raw[key] = value

    def server(self, role: Text | str, settings: dict[str, str], **kwargs: Any) -> Server:
        """A server for `role` with command-line settings; against an existing server (`--dsn`),
        a scratch database there, with the settings a session may set (existing.ExternalServer)."""
        return self.lab.external(self.dsn, role, settings) if self.dsn else \
            self.lab.server(role, settings, **kwargs)

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
