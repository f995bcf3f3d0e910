"""One measuring run per Docker engine at a time. Two runs on one machine share its CPUs and
spoil each other's numbers without a trace in either result, so the second one refuses with
a line that names the first (or waits for it). `repro clean` takes the same lock: it never
removes the containers of a run that is still going.

Work that measures nothing but takes CPUs (a site build, an image build, a browser test)
holds the same lock shared (`aside`): it waits while a run measures, and a run waits (or,
without --wait, refuses) while such work goes on. Any number of them may run side by side.

The lock is a file locked with flock(2) in the runtime directory of this host, named after
the engine's id; the kernel releases it when its holder ends, however it ends (SIGKILL too).
Runs started from another host against the same remote engine do not see it."""
from __future__ import annotations

import fcntl
import os
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Callable

from ..errors import ReproError
from . import engine


def lock_path() -> Path:
    folder = Path(os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir())
    return folder / f"repro-run-{engine.info()['ID'].replace(':', '')[:12]}.lock"


@contextmanager
def engine_lock(what: str, wait: bool = False, out: Callable[[str], None] = print,
                refusal: str = "a second run beside it would spoil both measurements: wait "
                               "for it (--wait) or stop it first") -> Iterator[None]:
    """Hold the engine's run lock for `what` (e.g. "auto_explain on PostgreSQL 17"). Without
    `wait`, a lock held by another run is one clear error naming that run, then `refusal`."""
    path = lock_path()
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 512, 0).decode(errors="replace").strip() or "another run"
            if not wait:
                raise ReproError(f"a run or a build is going on this Docker engine ({holder}); {refusal}"
                                 ) from None
            out(f"waiting for the run or build going on this Docker engine: {holder}")
            fcntl.flock(fd, fcntl.LOCK_EX)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{what}, pid {os.getpid()}, since {datetime.now():%H:%M:%S}".encode(), 0)
        yield
    finally:
        os.close(fd)  # releases the lock


def aside(command: list[str], out: Callable[[str], None] = print) -> int:
    """Run `command` holding the engine's lock shared: after any run that measures, and with no
    run starting until it ends; its exit status. With no engine reachable nothing here can
    measure: it just runs."""
    try:
        path = lock_path()
    except ReproError:
        path = None
    if path is None:
        return _run(command)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 512, 0).decode(errors="replace").strip() or "a run"
            out(f"waiting for the run measuring on this Docker engine: {holder}")
            fcntl.flock(fd, fcntl.LOCK_SH)
        os.ftruncate(fd, 0)  # what a run refused meanwhile names
        os.pwrite(fd, f"{os.path.basename(command[0])} (a build), pid {os.getpid()}, "
                      f"since {datetime.now():%H:%M:%S}".encode(), 0)
        return _run(command)
    finally:
        os.close(fd)


def _run(command: list[str]) -> int:
    try:
        return subprocess.run(command).returncode
    except OSError as exc:
        raise ReproError(f"cannot run {command[0]}: {exc.strerror}") from None
