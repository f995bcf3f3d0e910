"""System calls of server processes, counted by strace inside their container.

strace runs as the postgres user, who owns the server's processes: on a kernel without
Yama's ptrace restriction (or with ptrace_scope 0) attaching to a process of one's own
uid needs no capability. The trace lists file descriptors with their paths (-y), so the
calls on one relation's files can be told from the rest; each process writes its own file
(-ff), so no call is split across lines by another process's.
"""
from __future__ import annotations

import re
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from ..errors import ReproError
from .servers import ContainerServer

READS = ("read", "pread64", "preadv", "preadv2")
TRACED = ("fadvise64", *READS)
OUTPUT = "/tmp/repro-strace.txt"
ATTACH_TIMEOUT_S = 10

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


@contextmanager
def traced(server: ContainerServer, pids: Sequence[int]) -> Iterator[list[str]]:
    """Trace `pids` while the block runs; yields a list that holds the trace's lines after it.

    strace starts detached and the block begins only once every pid shows a tracer; on
    leaving, strace is interrupted and its output read."""
    targets = " ".join(f"-p {int(p)}" for p in pids)
    command = (f"strace -qq -ff -y -s 0 -e trace={','.join(TRACED)} -e signal=none "
               f"-o {OUTPUT} {targets}")
    server.docker.exec_run(["sh", "-c", f"rm -f {OUTPUT}.*; exec {command}"], user="postgres", detach=True)
    lines: list[str] = []
    deadline = time.monotonic() + ATTACH_TIMEOUT_S
    check = " && ".join(f"! grep -q '^TracerPid:[[:space:]]*0$' /proc/{int(p)}/status" for p in pids)
    while server.docker.exec_run(["sh", "-c", check], user="postgres").exit_code != 0:
        if time.monotonic() > deadline:
            raise ReproError(f"strace could not attach to {list(pids)} within {ATTACH_TIMEOUT_S} s "
                             f"(does the engine allow ptrace?)")
        time.sleep(0.1)
    try:
        yield lines
    finally:
        server.run(["sh", "-c", "pkill -INT -x strace; while pgrep -x strace > /dev/null; do sleep 0.05; done"])
    lines += server.run(["sh", "-c", f"cat {OUTPUT}.*; rm -f {OUTPUT}.*"]).splitlines()
