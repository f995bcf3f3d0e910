"""Servers of other majors or images beside a run's own, for chapters that compare them in
one run (side by side, their runs interleaved round by round), never across runs.

Each other major or image gets a `Lab` of its own, entered on the caller's ExitStack, so
its containers go when the run ends, fails or is interrupted, like the run's own. Their
servers are gone before the run's provenance is taken, so their provenance is recorded
in the run's raw data ("beside") when they start.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from typing import Callable

import docker.errors

from ..errors import ReproError
from ..text import Text
from . import provenance
from .harness import images
from .context import RunContext
from .servers import ContainerServer, Lab

Start = tuple[Lab, Text, dict[str, str]]  # a lab, the server's role, its settings


def lab_for(stack: ExitStack, major: float, image: str | None = None) -> Lab:
    """A lab for `major`'s image (repro-postgres:<major>) or for the named `image` (which
    runs that major), closed with `stack`."""
    lab = stack.enter_context(Lab(major))
    if image is not None:
        lab.image = named_image(image)
    return lab


def named_image(name: str) -> images.Image:
    """An image made by one of the project's own recipes, with what its labels say."""
    try:
        found = images.client().images.get(name)
    except docker.errors.ImageNotFound:
        raise ReproError(f"no image {name}: run `make images`") from None
    labels = {k.removeprefix(images.LABEL): v for k, v in (found.labels or {}).items()}
    return images.Image(name, found.id, labels.get("origin", "unknown"), labels.get("recipe", found.id),
                         labels.get("version", "unknown"),
                         frozenset(f for f in labels.get("features", "").split(",") if f))


def start_all(ctx: RunContext, starts: list[Start], prepare: Callable[[ContainerServer], None],
              ptrace: bool = False) -> list[ContainerServer]:
    """Start and `prepare` every server at once (set-ups overlap well on 2 cores); record
    the provenance of those not in the run's own lab. `ptrace` as in `Lab.server`."""
    def start(item: Start) -> ContainerServer:
        lab, role, settings = item
        server = lab.server(role, settings, ptrace=ptrace)
        prepare(server)
        return server
    with ThreadPoolExecutor(len(starts)) as pool:
        servers = list(pool.map(start, starts))
    ctx.record("beside", [provenance.server(s) for s in servers if s not in ctx.lab.servers])
    return servers
