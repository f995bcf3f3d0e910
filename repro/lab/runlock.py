"""One measuring run per Docker engine at a time. Two runs on one machine share its CPUs and
spoil each other's numbers without a trace in either result, so the second one refuses with
a line that names the first (or waits for it). `repro clean` takes the same lock: it never
removes the containers of a run that is still going.

Work that measures nothing but takes CPUs (a site build, an image build, a browser test)
holds the same lock shared (scripts/aside.sh, flock(1)): it waits while a run measures, and
a run waits (or, without --wait, refuses) while such work goes on.

The lock is a file locked with flock(2) in the runtime directory of this host, named after
the engine's id; the kernel releases it when its holder ends, however it ends (SIGKILL too).
Runs started from another host against the same remote engine do not see it."""
from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Callable

from ..errors import ReproError
from . import engine


def lock_path(machine: bool = False) -> Path:
    """The engine's lock; for runs on this machine's own clusters (`machine`), the same lock
    where this machine's engine answers (its containers share the CPUs), else one for the
    machine."""
    folder = Path(os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir())
    if machine:
        try:
            if not engine.is_local():
                raise ReproError("the engine is another machine's")
            engine.info()
        except ReproError:
            return folder / "repro-run-this-machine.lock"
    return folder / f"repro-run-{engine.info()['ID'].replace(':', '')[:12]}.lock"


@contextmanager
def engine_lock(what: str, wait: bool = False, out: Callable[[str], None] = print,
                refusal: str = "a second run beside it would spoil both measurements: wait "
                               "for it (--wait) or stop it first", machine: bool = False) -> Iterator[None]:
    """Hold the engine's run lock for `what` (e.g. "auto_explain on PostgreSQL 17"). Without
    `wait`, a lock held by another run, or shared by work aside, is one clear error naming
    the last run that held it (work aside writes no name), then `refusal`."""
    fd = os.open(lock_path(machine), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 512, 0).decode(errors="replace").strip() or "another run"
            if not wait:
                raise ReproError(f"a run or work aside of runs is going on this Docker engine (the last run: "
                                 f"{holder}); {refusal}") from None
            out(f"waiting for the run or the work aside going on this Docker engine (the last run: {holder})")
            fcntl.flock(fd, fcntl.LOCK_EX)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{what}, pid {os.getpid()}, since {datetime.now():%H:%M:%S}".encode(), 0)
        yield
    finally:
        os.close(fd)  # releases the lock
