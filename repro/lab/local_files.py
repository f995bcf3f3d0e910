"""A local cluster's own files (lab/local.py), read and written by the clusters' user: root,
running the lab, follows no link of theirs."""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from ..errors import ReproError
from .binaries import as_owner, owner


def give_to_owner(path: Path, text: str) -> None:
    """A file of the lab's that only the clusters' user reads (the password initdb sets)."""
    path.write_text(text)
    ids = owner()
    if ids is not None:
        os.chown(path, *ids)
    path.chmod(0o600)


def write_as_owner(path: Path, text: str) -> None:
    """A file of a cluster's, written by its user (root follows no link of theirs)."""
    written = subprocess.run(as_owner(["sh", "-c", 'cat > "$1"', "sh", str(path)]), input=text, text=True,
                             capture_output=True)
    if written.returncode:
        raise ReproError(f"could not write {path}: {written.stderr.strip()}")


def read_as_owner(path: Path) -> str | None:
    """A file of a cluster's, read by its user; None if there is none."""
    if not path.exists():
        return None
    read = subprocess.run(as_owner(["cat", str(path)]), capture_output=True, text=True)
    if read.returncode:
        raise ReproError(f"could not read {path}: {read.stderr.strip()}")
    return read.stdout


def own_primary_conninfo(data: Path, conninfo: str) -> None:
    """A new standby's primary_conninfo as the lab gives it, where pg_basebackup -R wrote every
    option its own libpq knows: a client newer than the server (relocatable binaries carry
    none, and their server loads the libpq of its own major) names some, such as sslsni
    before 14, that the server's libpq refuses, and the standby would never connect. (The
    images' entrypoint drops those options instead: fit_primary_conninfo.)"""
    quoted = conninfo.replace("'", "''")
    for name in ("postgresql.auto.conf", "recovery.conf"):  # where -R writes it: from 12 on, before 12
        text = read_as_owner(data / name)
        if text is not None and re.search(r"(?m)^primary_conninfo = ", text):
            write_as_owner(data / name, re.sub(r"(?m)^primary_conninfo = .*$",
                                               lambda _: f"primary_conninfo = '{quoted}'", text))
            return
    raise ReproError(f"pg_basebackup -R wrote no primary_conninfo in {data}")


def allow_replication(data: Path) -> None:
    """Replication connections on the cluster's socket, trusted as its other connections."""
    hba = data / "pg_hba.conf"
    entries = read_as_owner(hba)
    if entries is None:
        raise ReproError(f"initdb made no {hba}")
    write_as_owner(hba, f"{entries}local replication all trust\n")
