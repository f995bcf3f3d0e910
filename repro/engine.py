"""The Docker engine and the PostgreSQL images the lab runs.

Images: the official ``postgres:<major>`` when it is present or can be pulled;
otherwise the offline equivalent ``repro-postgres:<major>`` that ``make images``
builds from Debian's packages (images/build.sh).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cache

import docker
import docker.errors

from .errors import ReproError

OFFLINE_MAJORS = (13, 15, 17, 18)
DEFAULT_MAJOR = 17


@dataclass(frozen=True)
class Image:
    """The image a server ran from, as recorded in provenance."""

    name: str
    id: str
    origin: str  # "official" or "offline (Debian packages)"


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


def is_local() -> bool:
    """Whether the engine runs on this machine (so containers share this machine's CPUs)."""
    return os.environ.get("DOCKER_HOST", "unix://").startswith("unix:")


def _local(name: str) -> docker.models.images.Image | None:
    try:
        return client().images.get(name)
    except docker.errors.ImageNotFound:
        return None


def resolve_image(major: int) -> Image:
    """Find the image for a major: local official, offline build, then a pull."""
    if major not in OFFLINE_MAJORS and _local(f"postgres:{major}") is None:
        known = ", ".join(map(str, OFFLINE_MAJORS))
        hint = f"PostgreSQL {major} is not one of the majors we build images for ({known})"
    else:
        hint = f"run `make images` to build repro-postgres:{major} offline"
    if found := _local(f"postgres:{major}"):
        return Image(f"postgres:{major}", found.id, "official")
    if found := _local(f"repro-postgres:{major}"):
        return Image(f"repro-postgres:{major}", found.id, "offline (Debian packages)")
    try:
        pulled = client().images.pull("postgres", tag=str(major))
    except docker.errors.APIError as exc:
        raise ReproError(f"no image for PostgreSQL {major}: postgres:{major} cannot be pulled "
                         f"({exc.explanation or exc}); {hint}") from exc
    return Image(f"postgres:{major}", pulled.id, "official")
