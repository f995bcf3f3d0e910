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


MARKER = 537  # PGSemaMagic: the value of the last semaphore of each of PostgreSQL's sets
# every set of the machine, each after a line "set ID" ("ipcs -s -i" of a set the run's user may
# not read prints nothing, and fails: the loop goes on)
EVERY_SET = ("for id in $(ipcs -s | awk '/^0x/ {print $2}'); do echo \"set $id\"; "
             "ipcs -s -i \"$id\" 2> /dev/null || true; done")
_SET = re.compile(r"^set \d+$", re.M)
_SEMAPHORE = re.compile(r"^\d+\s+(?P<value>\d+)\s+\d+\s+\d+\s+(?P<pid>\d+)\s*$")


def semaphore_sets(server: Server) -> dict[str, int]:
    """The postmaster's System V semaphore sets, and their semaphores. PostgreSQL makes each
    set with a marker for its last semaphore, set to PGSemaMagic by the postmaster
    (sysv_sema.c, IpcSemaphoreCreate), so the marker's last pid is the postmaster's. That
    counts every set of a container, whose IPC namespace is its own, and leaves out those of
    other processes where the namespace is this machine's, a local cluster's (another
    cluster's too: their keys follow a port that two labs may both use)."""
    data = server.sql("SHOW data_directory")[0][0]
    postmaster = int(server.run(["head", "-n", "1", f"{data}/postmaster.pid"]).strip())
    ours = 0
    semaphores = 0
    for block in _SET.split(server.run(["sh", "-c", EVERY_SET]))[1:]:
        rows = [m for m in map(_SEMAPHORE.match, block.splitlines()) if m]
        if rows and int(rows[-1]["value"]) == MARKER and int(rows[-1]["pid"]) == postmaster:
            ours += 1
            semaphores += len(rows)
    return {"sets": ours, "semaphores": semaphores}
