"""The system calls behind PostgreSQL's semaphores, with their call stacks, from strace.

strace attaches to the postmaster before the workload connects (-f then follows every
backend forked for it; background processes forked earlier are not traced), traces
futex (unnamed POSIX semaphores, 10 and later on Linux) and semop/semtimedop (System V
semaphores; glibc 2.36 issues semop() as semtimedop), and unwinds each call's stack (-k,
the function names come from the binaries' symbols). Each process writes its own file
(-ff), so no call is split by another process's.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .servers import Server
from .strace import attach

CALLS = ("futex", "semop", "semtimedop")
SEMAPHORE_FUNCTIONS = ("PGSemaphoreLock", "PGSemaphoreUnlock")

_CALL = re.compile(r"^(?P<call>\w+)\(.*\)\s+=\s+(?P<ret>-?\d+|\?)(?:\s+(?P<errno>E[A-Z0-9]+))?")
_FRAME = re.compile(r"^ > [^(]*\((?P<function>[^+)]*)")


@dataclass
class SemaphoreCalls:
    """What one trace saw: calls and failures per system call, and, for the calls made by
    PGSemaphoreLock/Unlock, the function above the LWLock layer that asked for the lock."""

    calls: Counter = field(default_factory=Counter)
    errors: Counter = field(default_factory=Counter)  # "futex EAGAIN" -> count
    via_semaphore: Counter = field(default_factory=Counter)  # system call -> count
    lock_users: Counter = field(default_factory=Counter)  # "XLogFlush" -> count
    tracer_died: bool = False  # strace was gone before the workload ended: a partial trace

    def as_dict(self) -> dict[str, Any]:
        return {"calls": dict(self.calls), "errors": dict(self.errors),
                "via_semaphore": dict(self.via_semaphore), "lock_users": dict(self.lock_users),
                "tracer_died": self.tracer_died}


def parse(trace: str) -> SemaphoreCalls:
    """strace -k output: each call's line, then its frames (innermost first)."""
    found = SemaphoreCalls()
    call: str | None = None
    frames: list[str] = []

    def close() -> None:
        if call is not None:
            _attribute(found, call, frames)

    for line in trace.splitlines():
        if line.startswith(" > "):
            m = _FRAME.match(line)
            frames.append(m["function"] if m else "")
            continue
        m = _CALL.match(line)
        if not m or m["call"] not in CALLS:
            continue
        close()
        call, frames = m["call"], []
        found.calls[call] += 1
        if m["ret"] == "-1" and m["errno"]:
            found.errors[f"{call} {m['errno']}"] += 1
    close()
    return found


def _attribute(found: SemaphoreCalls, call: str, frames: list[str]) -> None:
    """Count a call made by PGSemaphoreLock/Unlock, and the first function above the
    LWLock layer on its stack (XLogFlush for the WAL-flush lock)."""
    at = next((i for i, f in enumerate(frames) if f in SEMAPHORE_FUNCTIONS), None)
    if at is None:
        return
    found.via_semaphore[call] += 1
    user = next((f for f in frames[at + 1:] if f and not f.startswith(("LWLock", "PGSemaphore"))), "")
    found.lock_users[user or "?"] += 1


def traced(server: Server, workload: Callable[[], Any]) -> SemaphoreCalls:
    """Trace the postmaster's new children while `workload` runs (strace attached first)."""
    data = server.sql("SHOW data_directory")[0][0]
    pid = int(server.run(["head", "-n", "1", f"{data}/postmaster.pid"]).strip())
    tracer = attach(server, "repro-semaphores", ["-qq", "-ff", "-k", "-e", f"trace={','.join(CALLS)}",
                                                 "-e", "signal=none"], [pid])
    try:
        workload()
    finally:
        died = not tracer.interrupt()
    found = parse(tracer.collect())
    found.tracer_died = died
    return found


KEYS_PER_SERVER = 1000  # how far above its first key a postmaster's semaphore sets may go


def semaphore_sets(server: Server) -> dict[str, int]:
    """The postmaster's System V semaphore sets (ipcs -s), and their semaphores. It takes their
    keys one by one upward, skipping those in use, from its port times 1000 up to 11 and from
    its data directory's inode number since 12 (sysv_sema.c, PGReserveSemaphores; commit
    7de19fbc0b1), as a 32-bit key_t. Counting the keys just above either keeps every set of a container, whose IPC
    namespace is its own, and leaves out those of other processes where it is this machine's
    (a local cluster's)."""
    port = int(server.sql("SHOW port")[0][0])
    data = server.sql("SHOW data_directory")[0][0]
    inode = int(server.run(["stat", "-c", "%i", data]).strip())
    rows = [line.split() for line in server.run(["ipcs", "-s"]).splitlines()]
    sets = [r for r in rows if len(r) >= 5 and r[0].startswith("0x")
            and any(0 < (int(r[0], 16) - first) % 2**32 <= KEYS_PER_SERVER for first in (port * 1000, inode))]
    return {"sets": len(sets), "semaphores": sum(int(r[4]) for r in sets)}
