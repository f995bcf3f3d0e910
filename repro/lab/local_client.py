"""This machine's pgbench and psql (LocalClient), for a run against an existing server with
no Docker engine, the client side of a DBA's own box, and for local clusters whose binaries
carry none. Like lab/existing.py and lab/local.py, whose labs use it, it stays out of the
keys of runs on containers (repro/reach.py: EXISTING_MODULES, fingerprint.LOCAL_LAB)."""
from __future__ import annotations

import glob
import hashlib
import io
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import majors
from ..errors import ReproError
from .harness import images

CLIENT_PROGRAMS = ("pgbench", "psql")  # what runs beside an existing server
# what runs beside a local cluster: standbys are made by pg_basebackup; auto_explain,
# wait_events and windows_linux run pg_test_fsync or pg_test_timing
LOCAL_PROGRAMS = (*CLIENT_PROGRAMS, "pg_basebackup", "pg_test_fsync", "pg_test_timing")


@dataclass
class Ran:
    """What a client program gave, as docker's exec_run gives it."""

    exit_code: int
    output: bytes


class LocalClient:
    """pgbench and psql of this machine (PG_BINDIR, else PATH), for a run against an existing
    server with no Docker engine: the client side of a DBA's own box. Scripts that the lab
    puts in "/tmp" of a helper container go to a private directory here instead: `scratch`,
    a local lab's own (which `repro clean` removes after a SIGKILL), else a temporary one."""

    def __init__(self, bindir: str | None, versions: dict[str, str], scratch: Path | None = None) -> None:
        self.bindir = bindir
        self.versions = versions  # program -> its --version line
        self._own = None if scratch else tempfile.TemporaryDirectory(prefix="repro-client-")
        self.scratch = scratch or Path(self._own.name)  # type: ignore[union-attr]
        self.scratch.mkdir(mode=0o700, exist_ok=True)
        self._files: dict[str, str] = {}  # the path the lab named -> where it is here

    @staticmethod
    def find(server_major: float) -> LocalClient:
        """This machine's programs, refused with one line when one is missing or older than
        the server (an older pgbench may not know the server's catalogs or protocol)."""
        return LocalClient(*LocalClient.programs(server_major, os.environ.get("PG_BINDIR") or None,
                                                 "or use --client docker", CLIENT_PROGRAMS))

    @staticmethod
    def of_binaries(bindir: Path, server_major: float, compiled: Path) -> tuple[str | None, dict[str, str]]:
        """The client programs of a local lab of the server binaries in `bindir`: theirs where
        they carry them (a package's), else PG_BINDIR's where it has them, else the first of
        the server's major or newer among the packages' directories, newest first (Debian's
        or PGDG's, where the server's package adds pg_test_fsync and pg_test_timing), those
        `make binaries` compiled into `compiled`, and PATH. Relocatable binaries carry none.
        Refused with the first one's line when none is new enough."""
        if os.access(bindir / "pgbench", os.X_OK):
            return str(bindir), {}
        explicit = os.environ.get("PG_BINDIR")
        packaged = sorted(glob.glob("/usr/lib/postgresql/*/bin/pgbench") + glob.glob("/usr/pgsql-*/bin/pgbench"),
                          key=lambda p: float(re.findall(r"\d+(?:\.\d+)?", p)[0]), reverse=True)
        candidates: list[str | None] = [os.path.dirname(p) for p in packaged]
        if os.access(compiled / "bin" / "pgbench", os.X_OK):
            candidates.append(str(compiled / "bin"))
        candidates.append(None)  # PATH
        if explicit and os.access(os.path.join(explicit, "pgbench"), os.X_OK):  # it may name the server's
            candidates = [explicit]
        otherwise = (f"or run `make binaries`, which compiles those of {majors.name(majors.MAJORS[-1])} "
                     f"({bindir} has none)")
        refused = []
        for directory in candidates:
            try:
                return LocalClient.programs(server_major, directory, otherwise, LOCAL_PROGRAMS)
            except ReproError as exc:
                refused.append(exc)
        raise refused[0]

    @staticmethod
    def programs(server_major: float, bindir: str | None, otherwise: str,
                 names: tuple[str, ...]) -> tuple[str | None, dict[str, str]]:
        """`bindir` (None: PATH) and the --version lines of its programs `names`, refused with
        one line when one is missing or older than the server; `otherwise` ends that line
        with what else the user may do."""
        versions = {}
        for program in names:
            path = shutil.which(program, path=bindir)
            where = f"in {bindir}" if bindir else "on PATH"
            if path is None:
                raise ReproError(f"no {program} {where}: install PostgreSQL's client programs "
                                 f"{majors.name(server_major)} or newer, {otherwise}")
            line = subprocess.run([path, "--version"], capture_output=True, text=True).stdout.strip()
            found = re.search(r"(\d+)(?:\.(\d+))?", line)
            major = 9.6 if found and found[0].startswith("9.6") else float(found[1]) if found else 0
            if major < server_major:
                raise ReproError(f"the {program} {where} is {line or 'of no known version'}, older than the "
                                 f"server's PostgreSQL {majors.name(server_major)}: set PG_BINDIR to the "
                                 f"programs of {majors.name(server_major)} or newer, {otherwise}")
            versions[program] = line
        return bindir, versions

    @property
    def image(self) -> images.Image:
        """What keys a run's cache in an image's place: these programs' versions."""
        version = self.versions["pgbench"]
        digest = hashlib.sha256(version.encode()).hexdigest()
        return images.Image("local client programs", f"sha256:{digest}", "local", version, version, frozenset())

    def provenance(self) -> dict[str, Any]:
        return {"kind": "local", "programs": dict(self.versions), "bindir": self.bindir or "PATH"}

    def put_archive(self, path: str, data: bytes) -> None:
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            for member in tar.getmembers():
                here = os.path.join(self.scratch, f"{len(self._files)}-{os.path.basename(member.name)}")
                with open(here, "wb") as f:
                    f.write(tar.extractfile(member).read())  # type: ignore[union-attr]
                self._files[f"{path.rstrip('/')}/{member.name}"] = here

    def exec_run(self, cmd: list[str], environment: dict[str, str]) -> Ran:
        args = list(cmd)
        for named, here in self._files.items():
            args = [a.replace(named, here) for a in args]
        path = shutil.which(args[0], path=self.bindir) or args[0]
        r = subprocess.run([path, *args[1:]], capture_output=True, env=os.environ | environment)
        output = r.stdout + r.stderr
        for named, here in self._files.items():  # pgbench names its scripts: as the lab did
            output = output.replace(here.encode(), named.encode())
        return Ran(r.returncode, output)

    def close(self) -> None:
        if self._own is not None:
            self._own.cleanup()


def client_for(choice: str | None, server_major: float) -> LocalClient | None:
    """Where the client programs run: this machine's (`local`, or when no Docker engine
    answers) or a helper container (`docker`, None here)."""
    if choice is None:
        try:
            images.client()
            return None
        except ReproError:
            pass
    return LocalClient.find(server_major) if choice != "docker" else None
