"""This machine, for the local clusters of `--server local` (lab/local.py): its PostgreSQL
server programs one major at a time (where they are, which version, what they offer), the
user they run as, its processes and what it is."""
from __future__ import annotations

import glob
import hashlib
import os
import platform
import pwd
import re
import shutil
import signal
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import majors
from ..errors import ReproError
from .existing import this_machine
from .harness import images
from .local_client import LocalClient

# where `make binaries` unpacks relocatable server binaries, one directory per major
# (scripts/binaries.py); as root, where the clusters' user may run them
CACHE = Path(os.environ.get("REPRO_BINARIES") or ("/var/cache/repro-binaries" if os.geteuid() == 0 else
                                                    Path.home() / ".cache" / "repro-binaries"))
# where it compiles the client programs that relocatable binaries lack (scripts/client-programs.sh)
CLIENT = CACHE / "client"
# extensions a chapter may need, found in the binaries' own directories
EXTENSIONS = ("pg_wait_sampling", "pg_bigm", "pgroonga", "pg_walinspect")


@dataclass(frozen=True)
class Binaries:
    """One major's server programs on this machine: where, which version, where from."""

    bindir: Path
    version: str  # postgres --version's number, e.g. 15.14
    source: str  # how they were chosen: PG_BINDIR_17, PG_BINDIR, a package's directory

    def program(self, name: str) -> str:
        return str(self.bindir / name)

    def config(self, what: str) -> Path:
        """A directory pg_config names (--sharedir, --pkglibdir); where binaries have no
        pg_config (zonky's relocatable ones), that of their own tree."""
        if not os.access(self.program("pg_config"), os.X_OK):
            return self.bindir.parent / {"--sharedir": "share", "--pkglibdir": "lib"}[what] / "postgresql"
        out = subprocess.run([self.program("pg_config"), what], capture_output=True, text=True)
        return Path(out.stdout.strip())

    def features(self) -> frozenset[str]:
        """What these binaries offer of what chapters need: extensions whose control file and
        library are installed, JIT's library, and tools on PATH (procps)."""
        share, lib = self.config("--sharedir"), self.config("--pkglibdir")
        found = {x for x in EXTENSIONS if (share / "extension" / f"{x}.control").exists()}
        if (lib / "llvmjit.so").exists():
            found.add("jit")
        if shutil.which("ps"):
            found.add("procps")
        return frozenset(found)

    def client_programs(self) -> tuple[str | None, dict[str, str]]:
        """The directory and versions of the client programs a lab of these binaries runs:
        theirs where they carry them, else the first new enough of PG_BINDIR's, the packages',
        those `make binaries` compiled (CLIENT) and PATH's (LocalClient.of_binaries)."""
        return LocalClient.of_binaries(self.bindir, _major_of(self.version), CLIENT)

    def image(self, client: dict[str, str]) -> images.Image:
        """What keys a run's cache in an image's place: the binaries, their version and
        features (an extension installed since makes a cached result stale), and the
        versions of the client programs that run beside them where they carry none."""
        features = self.features()
        described = [str(self.bindir), self.version, ",".join(sorted(features)), *sorted(client.values())]
        digest = hashlib.sha256("\0".join(described).encode()).hexdigest()
        return images.Image(f"local binaries {self.bindir}", f"sha256:{digest}", "local",
                            digest[:16], self.version, features)


class NoBinaries(ReproError):
    """This machine has no server programs of a major (a run of it cannot start; a server of
    it beside another major's run is left out: local_context.beside)."""


def binaries(major: float) -> Binaries:
    """This machine's server programs of `major`: PG_BINDIR_<major> (PG_BINDIR_9_6), else
    PG_BINDIR if it holds that major, else Debian's or PGDG's directories, else those `make
    binaries` unpacked; one line if none."""
    name = majors.name(major)
    variable = f"PG_BINDIR_{name.replace('.', '_')}"
    candidates = [(os.environ.get(variable), variable), (os.environ.get("PG_BINDIR"), "PG_BINDIR"),
                  (f"/usr/lib/postgresql/{name}/bin", "Debian's postgresql package"),
                  (f"/usr/pgsql-{name}/bin", "PGDG's package"),
                  (str(CACHE / name / "bin"), "make binaries (zonky's relocatable binaries)")]
    for path, source in candidates:
        if path and source == variable and not os.access(os.path.join(path, "postgres"), os.X_OK):
            raise ReproError(f"{variable}={path} has no postgres to run")  # not "none here": a wrong setting
        if path and os.access(os.path.join(path, "postgres"), os.X_OK):
            version = _version(Path(path))
            if version is not None and _major_of(version) == major:
                return Binaries(Path(path), version, source)
            if source == variable:
                raise ReproError(f"{variable}={path} holds PostgreSQL {version or 'of no known version'}, "
                                 f"not {name}")
    raise NoBinaries(f"no PostgreSQL {name} server programs on this machine: install them (Debian: "
                     f"postgresql-{name}), set {variable} to their directory, or run `make binaries MAJORS={name}` "
                     f"(zonky's relocatable binaries, fetched by Maven)")


def _version(bindir: Path) -> str | None:
    out = subprocess.run([str(bindir / "postgres"), "--version"], capture_output=True, text=True).stdout
    found = re.search(r"\(PostgreSQL\) (\d+(?:\.\d+)+)", out)
    return found[1] if found else None


def _major_of(version: str) -> float:
    parts = version.split(".")
    return float(f"{parts[0]}.{parts[1]}") if parts[0] == "9" else float(parts[0])


def owner() -> tuple[int, int] | None:
    """The user the clusters run as when the run is root (PostgreSQL refuses root): Debian's
    postgres; None when the run is not root (the clusters are the run's own)."""
    if os.geteuid() != 0:
        return None
    try:
        entry = pwd.getpwnam("postgres")
    except KeyError:
        raise ReproError("run as root, the local clusters need a `postgres` user to run as "
                         "(PostgreSQL refuses root): create one, or run as another user") from None
    return entry.pw_uid, entry.pw_gid


def as_owner(cmd: list[str]) -> list[str]:
    ids = owner()
    if ids is None:
        return cmd
    return ["setpriv", f"--reuid={ids[0]}", f"--regid={ids[1]}", "--init-groups", *cmd]


def interrupted(process: subprocess.Popen | None, timeout_s: float) -> bool:
    """SIGINT to a program the run started, then wait for it (killed after `timeout_s`); False
    if it had ended already."""
    if process is None or process.poll() is not None:
        return False
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    return True


def cpu_seconds(pid: int) -> tuple[float, float]:
    """A process's CPU time so far (user and system): its own, and that of the children it has
    waited for; zeros once it has ended."""
    try:
        text = Path(f"/proc/{int(pid)}/stat").read_text()
    except OSError:
        return 0.0, 0.0
    fields = [int(f) for f in text[text.rindex(")") + 2:].split()[11:15]]  # utime, stime, cutime, cstime
    tick = os.sysconf("SC_CLK_TCK")
    return (fields[0] + fields[1]) / tick, (fields[2] + fields[3]) / tick


def tree_cpu_seconds(pid: int, children: Callable[[], list[int]]) -> float:
    """A process's CPU time with that of its live children and of those it has reaped, read
    again when it reaped one between the reads (that one would be counted in neither)."""
    while True:
        own, reaped = cpu_seconds(pid)
        live = sum(cpu_seconds(child)[0] for child in children())
        if cpu_seconds(pid)[1] == reaped:
            return own + reaped + live


def processes() -> list[tuple[int, str, int, list[str]]]:
    """(pid, command name, parent pid, arguments) of every process this run may see."""
    found = []
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            text = Path(stat).read_text()
            args = Path(stat).with_name("cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        comm = text[text.index("(") + 1:text.rindex(")")]
        found.append((int(stat.split("/")[2]), comm, int(text[text.rindex(")") + 2:].split()[1]), args))
    return found


def usable_cpus() -> list[int]:
    """The CPUs this run may use, in order: the machine's, or fewer where a taskset or a
    cgroup narrowed them (local clusters run on these)."""
    return sorted(os.sched_getaffinity(0))


def host() -> dict[str, Any]:
    """This machine, where the clusters ran."""
    return {**this_machine(), "engine_cpus": len(usable_cpus()), "kernel": platform.release(),
            "os": platform.platform(), "docker_host": None, "server": "local",
            "memory_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1024**3, 1)}

