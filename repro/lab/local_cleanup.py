"""What a killed local run left (`--server local`), found and stopped: a lab's directory carries a
marker file with its run's pid; once that pid runs no more, `repro clean` stops each cluster
by its own postmaster.pid, never a server by its name, and removes the directory."""
from __future__ import annotations

import os
import shutil
import signal
import tempfile
from pathlib import Path

from ..errors import ReproError
from .binaries import processes
from .harness.waiting import until

PREFIX = "repro-local-"  # a lab's directory in the machine's temporary directory
MARKER = "repro-local-run"  # in a lab's directory: the pid of the run that made it
STOP_TIMEOUT_S = 60


def stop_clusters(directory: Path) -> None:
    """Stop each cluster under a lab's directory by its own postmaster.pid (fast shutdown),
    where that pid still runs this cluster's postmaster; then anything else still working
    there (an initdb, a postmaster not yet past writing its pid file, after a SIGKILL): its
    arguments name the directory, which is this run's alone. Waited for."""
    def working() -> list[int]:
        inside = f"{directory}/"
        return [pid for pid, _, _, args in processes() if any(a.startswith(inside) for a in args)]
    for pidfile in directory.glob("*/data/postmaster.pid"):
        try:
            pid = int(pidfile.read_text().split("\n", 1)[0])
        except (OSError, ValueError):
            continue
        if pid in working():  # not a process that took the pid since
            _interrupt(pid)
    for pid in working():
        _interrupt(pid)  # fast shutdown; an initdb removes what it made
    until(lambda: not working(), STOP_TIMEOUT_S,
          f"the programs of {directory} did not stop within {STOP_TIMEOUT_S} s", 0.05)


def _interrupt(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGINT)
    except ProcessLookupError:
        pass
    except PermissionError:
        raise ReproError(f"process {pid} of a local cluster is another user's to stop") from None


def leftovers() -> list[Path]:
    """Lab directories whose run has ended (its pid in the marker runs no more)."""
    found = []
    for marker in Path(tempfile.gettempdir()).glob(f"{PREFIX}*/{MARKER}"):
        try:
            pid = int(marker.read_text().strip())
        except (OSError, ValueError):
            continue  # not this user's to read
        if not Path(f"/proc/{pid}").exists():
            found.append(marker.parent)
    return found


def clean() -> list[Path]:
    """Stop and remove what killed local runs left (`repro clean`)."""
    gone = leftovers()
    for directory in gone:
        stop_clusters(directory)
        shutil.rmtree(directory)
    return gone
