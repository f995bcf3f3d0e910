"""strace beside a local cluster (`--server local`): where lab/strace.py's Tracer runs when
the server is a cluster of this machine's binaries, as repro/lab/tracing.py is
where it runs in a container. Like local.py, only runs on local clusters execute it, and
their key adds it whole (fingerprint.LOCAL_LAB).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from ..errors import ReproError
from .binaries import interrupted
from .local_cleanup import STOP_TIMEOUT_S

# a container's data directory (the images' PGDATA), which chapters name in client commands
# (pg_test_fsync's file, stat -f) and traces name in their paths: on a local cluster, that
# cluster's own
CONTAINER_DATA = "/var/lib/postgresql/data"


class LocalTracer:
    """strace beside a local cluster, as the run's user: root may trace the clusters'
    `postgres` processes; another user only where the kernel lets a process trace its
    siblings (kernel.yama.ptrace_scope 0). Its files go to `directory`, the run's own (never
    one the clusters' user may write: root follows no link of theirs), and what it wrote
    names the cluster's data directory as a container's, as the client programs' output
    does. It is stopped by its own pid, never by a name."""

    def __init__(self, data: Path, directory: Path, name: str) -> None:
        self.data = data
        self.output = directory / f"{name}.txt"  # strace -ff adds each process's pid
        self.errors = directory / f"{name}.stderr"
        self.process: subprocess.Popen | None = None

    def launch(self, options: Sequence[str], pids: Sequence[int]) -> None:
        """Start strace, `options` before its output file and the pids it attaches to."""
        program = shutil.which("strace")
        if program is None:
            raise ReproError("no strace on this machine: install it (Debian's strace package), or run in containers")
        self._remove()
        with open(self.errors, "wb") as errors:
            self.process = subprocess.Popen([program, *options, "-o", str(self.output),
                                             *(a for p in pids for a in ("-p", str(int(p))))],
                                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errors)

    def attached(self, pids: Sequence[int]) -> bool:
        """Whether every pid shows a tracer (a process that has ended waits for none)."""
        def traced(pid: int) -> bool:
            try:
                status = Path(f"/proc/{int(pid)}/status").read_text()
            except FileNotFoundError:
                return True
            return re.search(r"^TracerPid:\s*0$", status, re.M) is None
        return all(map(traced, pids))

    def interrupt(self) -> bool:
        """Interrupt strace and wait until it has written its files; False if it had ended
        before (it died, or its tracees all ended, before the traced work did)."""
        return interrupted(self.process, STOP_TIMEOUT_S)

    def collect(self) -> str:
        """What strace wrote, its files removed."""
        text = "".join(f.read_text(errors="replace") for f in sorted(self.output.parent.glob(self.output.name + ".*")))
        self._remove()
        for here in sorted({str(self.data.resolve()), str(self.data)}, key=len, reverse=True):  # the longer
            text = text.replace(here, CONTAINER_DATA)  # first, should one path hold the other
        return text

    def refusal(self, pids: Sequence[int]) -> str:
        """Why strace did not attach, in one line: what it said, and the kernel's ptrace rule
        where the run is not root."""
        said = " ".join(self.errors.read_text(errors="replace").split()) if self.errors.exists() else ""
        scope = Path("/proc/sys/kernel/yama/ptrace_scope")
        rule = scope.read_text().strip() if scope.exists() else "0"
        why = (f"kernel.yama.ptrace_scope is {rule}, so only root may trace the clusters' processes: run as root"
               if rule != "0" and os.geteuid() != 0 else said or "strace gave no reason")
        return f"strace could not attach to {list(pids)}: {why}"

    def _remove(self) -> None:
        for f in [*self.output.parent.glob(self.output.name + ".*"), self.errors]:
            f.unlink(missing_ok=True)
