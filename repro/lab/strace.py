"""System calls of server processes, counted by strace inside their container.

strace first runs as the postgres user, who owns the server's processes: without Yama's
ptrace restriction that needs no capability. Where Yama restricts ptrace to a process's
ancestors (Ubuntu's default), it runs as root in a privileged exec, which has CAP_SYS_PTRACE
while the container itself gets no extra capability; some engines refuse privileged execs.
The trace lists file descriptors with their paths (-y), so the calls on one relation's files
can be told from the rest; each process writes its own file (-ff), so no call is split
across lines by another process's.
"""
from __future__ import annotations

import re
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from docker.errors import APIError

from ..errors import ReproError
from .servers import ContainerServer

READS = ("read", "pread64", "preadv", "preadv2")
TRACED = ("fadvise64", *READS)
OUTPUT = "/tmp/repro-strace.txt"
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


@contextmanager
def traced(server: ContainerServer, pids: Sequence[int]) -> Iterator[list[str]]:
    """Trace `pids` while the block runs; yields a list that holds the trace's lines after it.

    strace starts detached and the block begins only once every pid shows a tracer; on
    leaving, strace is interrupted and its output read."""
    targets = " ".join(f"-p {int(p)}" for p in pids)
    command = (f"rm -f {OUTPUT}.*; exec strace -qq -ff -y -s 0 -e trace={','.join(TRACED)} "
               f"-e signal=none -o {OUTPUT} {targets}")
    if not (_attached(server, command, pids, privileged=False)
            or _attached(server, command, pids, privileged=True)):
        raise ReproError(f"strace could not attach to {list(pids)}, neither as the postgres user "
                         f"nor in a privileged exec (does the Docker engine allow ptrace?)")
    lines: list[str] = []
    try:
        yield lines
    finally:
        _as_root(server, STOP)
    lines += _as_root(server, f"cat {OUTPUT}.*; rm -f {OUTPUT}.*").splitlines()


STOP = "pkill -INT -x strace; while pgrep -x strace > /dev/null; do sleep 0.05; done"


def _attached(server: ContainerServer, command: str, pids: Sequence[int], privileged: bool) -> bool:
    """Start strace (as the owner of the processes, or as root with CAP_SYS_PTRACE in a
    privileged exec) and wait until every pid shows a tracer; stop it if that never comes."""
    try:
        server.docker.exec_run(["sh", "-c", command], detach=True,
                               **({"user": "root", "privileged": True} if privileged else {"user": "postgres"}))
    except APIError:  # the engine refuses privileged execs
        return False
    check = " && ".join(f"! grep -q '^TracerPid:[[:space:]]*0$' /proc/{int(p)}/status" for p in pids)
    deadline = time.monotonic() + ATTACH_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.docker.exec_run(["sh", "-c", check]).exit_code == 0:
            return True
        time.sleep(0.1)
    _as_root(server, STOP)
    return False


def _as_root(server: ContainerServer, script: str) -> str:
    """A shell script as root in the container (strace and its files are root's)."""
    result = server.docker.exec_run(["sh", "-c", script], user="root")
    if result.exit_code != 0:
        raise ReproError(f"`{script}` failed: {result.output.decode(errors='replace').strip()}")
    return result.output.decode(errors="replace")
