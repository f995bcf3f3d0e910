"""What of `ctx` is bookkeeping: the run's parameters, lab and target, its progress lines,
what it records, a server of the target's kind. What shapes or measures the run (its
rounds, its servers' preparation, a file's settings, features) is RunContext's, in
lab/context.py."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...chapter import Chapter
from ...errors import ReproError
from ...text import Text
from ..measure import Undecided
from .progress import Progress

if TYPE_CHECKING:
    from ..servers import Lab, Server


class Context:
    """A run's context as the harness keeps it: its parameters, lab, target, progress lines
    and what it records."""

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

    @property
    def with_images(self) -> bool:
        """Whether the run's servers are containers of the project's images, so that one of its
        own builds (semaphores' control, images/semaphores) can run beside them: not against an
        existing server, nor on local clusters (LocalRunContext)."""
        return not self.external

    def step(self, what: str) -> None:
        """Say what the run does now (a line of progress, with its time)."""
        self.progress.note(what)

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
