"""A lab's life cycle: the containers and networks of one run, started and removed.

A lab owns every container and network it starts and removes them when it exits, also
on an exception, Ctrl-C or SIGTERM/SIGHUP, so a run leaves nothing behind: what it
recorded, and anything else that carries its run's label.

Nothing of a run is open to the network: with a local engine each server's port is
published on 127.0.0.1 only, and every run has its own random superuser password. The
password reaches a container as a file copied in before it starts (the image's
POSTGRES_PASSWORD_FILE), never in an environment or a command line that `docker inspect`,
`docker events` or `ps` would show.

What a container runs (its command line, its shared memory, its capabilities) is the
keyed lab's to say (repro/lab/servers.py: Lab.server); this module makes it so.
"""
from __future__ import annotations

import os
import secrets
import signal
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType, TracebackType
from typing import Any, Protocol, Self, TypeVar

from ... import majors
from ...errors import ReproError
from .. import engine
from . import images

os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")  # no reaper image offline
if engine.is_local():
    # connect to the published port on this machine's loopback (also when the harness
    # itself runs in a container, where testcontainers would pick the bridge gateway)
    os.environ.setdefault("TESTCONTAINERS_HOST_OVERRIDE", "127.0.0.1")
    os.environ.setdefault("TESTCONTAINERS_CONNECTION_MODE", "docker_host")
os.environ.setdefault("TC_POOLING_INTERVAL", "0.1")  # readiness poll; the default is 1 s

from testcontainers.core.container import DockerContainer  # noqa: E402
from testcontainers.core.network import Network  # noqa: E402

RUN_LABEL = "io.repro.run"
USER, DB = "postgres", "bench"
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
PASSWORD_FILE = "/run/repro/password"  # in the container; the image reads it at initdb
START_TIMEOUT_S = 300  # initdb, or a standby's base backup, before the first connection


class Started(Protocol):
    """What the life cycle needs of a server it started (repro/lab/servers.py: Server)."""

    def wait_ready(self, timeout_s: float) -> None:
        """Return once the server accepts connections; fail with one line if it does not."""


StartedServer = TypeVar("StartedServer", bound=Started)


class Containers:
    """The containers and networks of one run: started for it, all removed on exit."""

    def __init__(self, major: float = majors.DEFAULT_MAJOR) -> None:
        self.major = major  # the major under test
        self.run_id = uuid.uuid4().hex[:12]  # labels the run's containers and networks
        self.password = secrets.token_urlsafe(24)  # this run's superuser password
        self.image: images.Image | None = None  # the major's image, once a server started (its features)
        self.servers: list[Any] = []  # every server started so far (servers.py: Server)
        self._containers: list[Any] = []
        self._networks: list[Network] = []
        self._previous: dict[int, Any] = {}
        self._starting = False
        self._pending: int | None = None
        self._described: str | None = None  # postgres --describe-config of the image

    def __enter__(self) -> Self:
        for sig in SIGNALS:
            self._previous[sig] = signal.signal(sig, self._interrupt)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        # Ignore further interrupts while cleaning up, so a second Ctrl-C cannot strand a container.
        for sig in SIGNALS:
            signal.signal(sig, signal.SIG_IGN)
        try:
            self.close()
        finally:
            for sig, handler in self._previous.items():
                signal.signal(sig, handler)

    def _interrupt(self, signum: int, frame: FrameType | None) -> None:
        """Turn a signal into KeyboardInterrupt so `with Lab()` cleans up; while a container is
        being created, only once it exists (a second signal does not wait)."""
        if self._starting and self._pending is None:
            self._pending = signum
            return
        raise KeyboardInterrupt(f"signal {signum}")

    @contextmanager
    def _creating(self) -> Iterator[None]:
        self._starting = True
        try:
            yield
        finally:
            self._starting = False
            if self._pending is not None:
                raise KeyboardInterrupt(f"signal {self._pending}")

    def close(self) -> None:
        """Remove every container and network of this run: those recorded, then anything else
        carrying the run's label (a container whose creation a signal cut short)."""
        c = images.client()
        label = {"label": f"{RUN_LABEL}={self.run_id}"}
        containers = list(reversed(self._containers))
        containers += [x for x in c.containers.list(all=True, filters=label)
                       if x.id not in {k.id for k in containers}]
        for container in containers:
            try:
                container.remove(force=True, v=True)
            except Exception:  # already gone is fine; anything else shows in leftovers()
                pass
        for network in [*reversed(self._networks), *c.networks.list(filters=label)]:
            try:
                network.remove()
            except Exception:
                pass
        self._containers.clear()
        self._networks.clear()

    def _image(self) -> images.Image:
        if self.image is None:
            self.image = images.resolve_image(self.major)
        return self.image

    def _describe_config(self) -> str:
        """`postgres --describe-config` in a container of the major's image (no network,
        removed when done), run once per lab."""
        if self._described is None:
            self._described = images.client().containers.run(
                self._image().name, ["--describe-config"], entrypoint=["postgres"], user="postgres",
                network_mode="none", remove=True, labels={RUN_LABEL: self.run_id}).decode(errors="replace")
        return self._described

    def network(self) -> Network:
        """A private Docker network for multi-node topologies."""
        images.client()
        net = Network(docker_network_kw={"labels": {RUN_LABEL: self.run_id}})
        with self._creating():
            net.create()
            self._networks.append(net)
        return net

    def _container(self, command: list[str], options: dict[str, Any], network: Network | None,
                   alias: str | None) -> DockerContainer:
        """Create and start a container of the major's image that runs `command`, with Docker's
        `options`: labelled as this run's, the password copied in, its port published (on this
        machine's loopback only, with a local engine), on `network` as `alias`; recorded for
        `close` as soon as it exists, ready or not."""
        image = self._image()
        container = (DockerContainer(image.name)
                     .with_env("POSTGRES_USER", USER)
                     .with_env("POSTGRES_DB", DB)
                     .with_env("POSTGRES_PASSWORD_FILE", PASSWORD_FILE)
                     .with_copy_into_container(self.password.encode(), PASSWORD_FILE, 0o644)
                     .with_exposed_ports(5432)
                     .with_command(command)
                     .with_kwargs(labels={RUN_LABEL: self.run_id}, **options))
        if engine.is_local():  # published on this machine's loopback only (docker-py: (ip, port))
            container.ports[5432] = ("127.0.0.1", None)
        if network is not None:
            container.with_network(network)
            if alias:
                container.with_network_aliases(alias)
        try:
            with self._creating():
                try:
                    container.start()
                finally:
                    if container._container is not None:  # created: ours to remove, ready or not
                        self._containers.append(container._container)
        except Exception as exc:
            raise ReproError(f"PostgreSQL {majors.name(self.major)} ({image.name}) did not "
                             f"start: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
                             ) from exc
        return container

    def _ready(self, server: StartedServer) -> StartedServer:
        """The server once it accepts connections, recorded for provenance."""
        server.wait_ready(START_TIMEOUT_S)
        self.servers.append(server)
        return server


def host_config(container: Any) -> dict[str, Any]:
    """A server's container as the engine runs it (its HostConfig): shared memory, CPUs and
    added capabilities, recorded with the run for the pool's guard (pooling.recorded)."""
    container.reload()
    config = container.attrs["HostConfig"]
    return {"shm_size": config.get("ShmSize"), "cpuset_cpus": config.get("CpusetCpus") or None,
            "cap_add": sorted(config.get("CapAdd") or [])}


def leftovers() -> list[str]:
    """Ids of containers and networks any repro run left behind (for tests and `clean`)."""
    c = images.client()
    found = [x.id for x in c.containers.list(all=True, filters={"label": RUN_LABEL})]
    found += [n.id for n in c.networks.list(filters={"label": RUN_LABEL})]
    return found
