"""System calls of server processes, counted by strace beside them.

strace runs where the server's lab puts it (`server.tracer()`): as root in an ordinary exec
of a container started with `ptrace=True`, which adds CAP_SYS_PTRACE and nothing else (with
it, ptrace works also where Yama restricts it to a process's ancestors, Ubuntu's default, and
no container or exec is privileged); or on this machine beside a local cluster, as the run's
user (repro/lab/local_tracing.py).
The trace lists file descriptors with their paths (-y), so the calls on one relation's files
can be told from the rest; each process writes its own file (-ff), so no call is split
across lines by another process's.
"""
from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Protocol

from .harness.waiting import until
from .servers import Server

READS = ("read", "pread64", "preadv", "preadv2")
TRACED = ("fadvise64", *READS)
ATTACH_TIMEOUT_S = 5

_CALL = re.compile(r"^(?:\[pid\s+\d+\]\s+|\d+\s+)?(?P<call>\w+)\((?P<fd>\d+)<(?P<path>[^>]*)>, "
                   r"(?P<args>.*)\)\s+=\s+(?P<ret>-?\d+)")
_ADVICE = re.compile(r"^(?P<offset>\d+), (?P<length>\d+), (?P<advice>POSIX_FADV_\w+)$")


@dataclass
class FileCalls:
    """The calls on one set of files: WILLNEED advice and reads (sizes in bytes)."""

    willneed: list[int] = field(default_factory=list)  # lengths advised
    reads: list[int] = field(default_factory=list)  # bytes each read returned
    calls: dict[str, int] = field(default_factory=dict)  # by system call

    def as_dict(self) -> dict:
        return {"willneed_calls": len(self.willneed), "willneed_bytes": sum(self.willneed),
                "read_calls": len(self.reads), "read_bytes": sum(self.reads), "calls": self.calls}


def parse(trace: str, paths: Sequence[str]) -> FileCalls:
    """The traced calls on `paths` (exact paths, as strace -y prints them)."""
    wanted = set(paths)
    found = FileCalls()
    for line in trace.splitlines():
        m = _CALL.match(line.strip())
        if not m or m["path"] not in wanted or m["call"] not in TRACED:
            continue
        found.calls[m["call"]] = found.calls.get(m["call"], 0) + 1
        if m["call"] == "fadvise64":
            advice = _ADVICE.match(m["args"])
            if advice and advice["advice"] == "POSIX_FADV_WILLNEED":
                found.willneed.append(int(advice["length"]))
        elif int(m["ret"]) > 0:
            found.reads.append(int(m["ret"]))
    return found


@dataclass
class Trace:
    """What strace wrote, and whether it was still tracing when the block ended: a tracer that
    died mid-run leaves a partial trace, whose counts are no evidence (not zero either)."""

    lines: list[str] = field(default_factory=list)
    tracer_died: bool = False


class Tracer(Protocol):
    """Where strace runs beside a server (repro/lab/tracing.py, repro/lab/local_tracing.py)."""

    def launch(self, options: Sequence[str], pids: Sequence[int]) -> None: ...
    def attached(self, pids: Sequence[int]) -> bool: ...
    def interrupt(self) -> bool: ...
    def collect(self) -> str: ...
    def refusal(self, pids: Sequence[int]) -> str: ...


@contextmanager
def traced(server: Server, pids: Sequence[int]) -> Iterator[Trace]:
    """Trace `pids` while the block runs; yields a `Trace` that holds the trace after it.

    strace starts detached and the block begins only once every pid shows a tracer; on
    leaving, strace is interrupted and its output read."""
    tracer = attach(server, "repro-strace", ["-qq", "-ff", "-y", "-s", "0", "-e", f"trace={','.join(TRACED)}",
                                             "-e", "signal=none"], pids)
    trace = Trace()
    try:
        yield trace
    finally:
        trace.tracer_died = not tracer.interrupt()
    trace.lines += tracer.collect().splitlines()


def attach(server: Server, name: str, options: Sequence[str], pids: Sequence[int]) -> Tracer:
    """Start strace with `options` on `pids`, its files named after `name`, and wait until
    every pid shows a tracer; stop it and fail with one line if that never comes."""
    tracer: Tracer = server.tracer(name)
    tracer.launch(options, pids)

    def refused() -> str:
        tracer.interrupt()  # no strace is left behind the run that fails here
        return tracer.refusal(pids)
    until(lambda: tracer.attached(pids), ATTACH_TIMEOUT_S, refused)
    return tracer
