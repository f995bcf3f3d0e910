"""Where strace runs beside a server in a container: as root, in an ordinary exec of the
server's own container (started with ptrace=True, which adds CAP_SYS_PTRACE and nothing
else), its files in that container's /tmp. What strace is asked to trace, and what a trace
means, is strace.py's and semaphore_calls.py's; how it is stopped decides whether a trace is
whole (tracer_died), so this is keyed lab code too. Beside a local cluster, local_tracing.py.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import ReproError

STOP = ("if pkill -INT -x strace; then while pgrep -x strace > /dev/null; do sleep 0.05; done; "
        "echo stopped; fi")


class InContainerTracer:
    """strace in a server's container: one tracer at a time, as a container runs one run's
    server."""

    def __init__(self, docker: Any, name: str) -> None:
        self.docker = docker  # the Docker SDK's container
        self.output = f"/tmp/{name}.txt"  # strace -ff adds each process's pid

    def launch(self, options: Sequence[str], pids: Sequence[int]) -> None:
        """Start strace detached, `options` before its output file and the pids it attaches to."""
        targets = " ".join(f"-p {int(p)}" for p in pids)
        command = f"rm -f {self.output}.*; exec strace {' '.join(options)} -o {self.output} {targets}"
        self.docker.exec_run(["sh", "-c", command], detach=True, user="root")

    def attached(self, pids: Sequence[int]) -> bool:
        """Whether every pid shows a tracer."""
        check = " && ".join(f"! grep -q '^TracerPid:[[:space:]]*0$' /proc/{int(p)}/status" for p in pids)
        return self.docker.exec_run(["sh", "-c", check]).exit_code == 0

    def interrupt(self) -> bool:
        """Interrupt strace and wait until it has written its files; False if no strace was
        left to interrupt (it died, or its tracees all ended, before the traced work did)."""
        return self._as_root(STOP).strip() == "stopped"

    def collect(self) -> str:
        """What strace wrote, its files removed."""
        return self._as_root(f"cat {self.output}.* 2>/dev/null; rm -f {self.output}.*")

    def refusal(self, pids: Sequence[int]) -> str:
        """Why strace did not attach, in one line."""
        caps = self.docker.attrs["HostConfig"].get("CapAdd") or []
        return (f"strace could not attach to {list(pids)}: "
                + ("the Docker engine refuses ptrace to a container with SYS_PTRACE "
                   "(its seccomp profile or security module?)" if "SYS_PTRACE" in caps
                   else "the server was not started with ptrace=True (CAP_SYS_PTRACE)"))

    def _as_root(self, script: str) -> str:
        """A shell script as root in the container (strace and its files are root's)."""
        result = self.docker.exec_run(["sh", "-c", script], user="root")
        if result.exit_code != 0:
            raise ReproError(f"`{script}` failed: {result.output.decode(errors='replace').strip()}")
        return result.output.decode(errors="replace")
