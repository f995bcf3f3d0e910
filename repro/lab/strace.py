"""System calls of server processes, counted by strace inside their container.

strace runs as root in an ordinary exec of a container started with `ptrace=True`, which
adds CAP_SYS_PTRACE and nothing else: with it, ptrace works also where Yama restricts it to
a process's ancestors (Ubuntu's default), and no container or exec is privileged.
The trace lists file descriptors with their paths (-y), so the calls on one relation's files
can be told from the rest; each process writes its own file (-ff), so no call is split
across lines by another process's.
"""
from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from ..errors import ReproError
from .harness.waiting import until
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


@dataclass
class Trace:
    """What strace wrote, and whether it was still tracing when the block ended: a tracer that
    died mid-run leaves a partial trace, whose counts are no evidence (not zero either)."""

    lines: list[str] = field(default_factory=list)
    tracer_died: bool = False


@contextmanager
def traced(server: ContainerServer, pids: Sequence[int]) -> Iterator[Trace]:
    """Trace `pids` while the block runs; yields a `Trace` that holds the trace after it.

    strace starts detached and the block begins only once every pid shows a tracer; on
    leaving, strace is interrupted and its output read."""
    targets = " ".join(f"-p {int(p)}" for p in pids)
    command = (f"rm -f {OUTPUT}.*; exec strace -qq -ff -y -s 0 -e trace={','.join(TRACED)} "
               f"-e signal=none -o {OUTPUT} {targets}")
    attach(server, command, pids)
    trace = Trace()
    try:
        yield trace
    finally:
        trace.tracer_died = not stop(server)
    trace.lines += _as_root(server, f"cat {OUTPUT}.*; rm -f {OUTPUT}.*").splitlines()


def stop(server: ContainerServer) -> bool:
    """Interrupt strace and wait until it has written its files; False if no strace was left
    to interrupt (it died, or its tracees all ended, before the traced work did)."""
    return _as_root(server, STOP).strip() == "stopped"


STOP = ("if pkill -INT -x strace; then while pgrep -x strace > /dev/null; do sleep 0.05; done; "
        "echo stopped; fi")


def attach(server: ContainerServer, command: str, pids: Sequence[int]) -> None:
    """Start strace as root and wait until every pid shows a tracer; stop it and fail with
    one line if that never comes."""
    server.docker.exec_run(["sh", "-c", command], detach=True, user="root")
    check = " && ".join(f"! grep -q '^TracerPid:[[:space:]]*0$' /proc/{int(p)}/status" for p in pids)

    def refused() -> str:
        stop(server)  # no strace is left behind the run that fails here
        caps = server.docker.attrs["HostConfig"].get("CapAdd") or []
        return (f"strace could not attach to {list(pids)}: "
                + ("the Docker engine refuses ptrace to a container with SYS_PTRACE "
                   "(its seccomp profile or security module?)" if "SYS_PTRACE" in caps
                   else "the server was not started with ptrace=True (CAP_SYS_PTRACE)"))
    until(lambda: server.docker.exec_run(["sh", "-c", check]).exit_code == 0, ATTACH_TIMEOUT_S, refused)


def _as_root(server: ContainerServer, script: str) -> str:
    """A shell script as root in the container (strace and its files are root's)."""
    result = server.docker.exec_run(["sh", "-c", script], user="root")
    if result.exit_code != 0:
        raise ReproError(f"`{script}` failed: {result.output.decode(errors='replace').strip()}")
    return result.output.decode(errors="replace")
