"""The Docker engine the lab runs on, and the PostgreSQL images it offers.

Images are `repro-postgres:<major>`, made by `make images` (images/ensure.sh): the
official `postgres:<major>` plus a layer with what chapters need where a registry
answers; otherwise an equivalent built offline from Debian's packages (13, 15, 17,
18) or from relocatable server binaries on Maven Central (9.6 to 16). Each image's
labels say where it came from, its recipe's hash, its PostgreSQL version and the
features it carries (extensions, tools, JIT), so a chapter that needs what an image
lacks is "not applicable" on that major instead of crashing. Which image a run used keys
its cache apart (results.cache_key), not through this code.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cache

import docker
import docker.errors

from ... import majors
from ...errors import ReproError

LABEL = "io.repro.image."  # labels: origin, recipe, version, features


@dataclass(frozen=True)
class Image:
    """The image a server ran from, as recorded in provenance."""

    name: str
    id: str
    origin: str
    recipe: str
    version: str
    features: frozenset[str]

    @property
    def key(self) -> str:
        """What of the image keys the cache: how it was made and which PostgreSQL it runs."""
        return f"{self.origin}/{self.recipe}/{self.version}"


@cache
def client() -> docker.DockerClient:
    """A client for the engine at DOCKER_HOST (or the local socket); fail clearly without one."""
    where = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    try:
        c = docker.from_env(timeout=300)
        c.ping()
    except Exception as exc:  # docker raises several unrelated types here
        raise ReproError(
            f"no Docker engine reachable at {where}: start one (as root on Debian, "
            f"`make engine` installs and starts docker.io) or set DOCKER_HOST"
        ) from exc
    return c


def resolve_image(major: float) -> Image:
    """The image for a major, with what its labels say about it."""
    name = f"repro-postgres:{majors.name(major)}"
    try:
        found = client().images.get(name)
    except docker.errors.ImageNotFound:
        raise ReproError(f"no image {name}: run `make images MAJORS={majors.name(major)}` "
                         f"(builds it, offline if no registry answers)") from None
    labels = found.labels or {}
    return Image(name, found.id, labels.get(LABEL + "origin", "unknown"),
                 labels.get(LABEL + "recipe", found.id), labels.get(LABEL + "version", "unknown"),
                 frozenset(f for f in labels.get(LABEL + "features", "").split(",") if f))
