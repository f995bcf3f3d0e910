"""The servers and conditions' names, shared by the experiment, the findings and the page."""
from __future__ import annotations

REFERENCE_MAJOR = 9.6  # the original's older major: System V semaphores on Linux
THIS, REFERENCE, SYSV, POSIX = "this", "9.6", "sysv", "posix"  # the servers of one run
CONTROL = (SYSV, POSIX)  # Debian's PostgreSQL 15 source built twice, only the semaphore API differs
CONTROL_MAJOR = 15  # images/semaphores/ensure.sh builds this major's Debian source package
READ, UPDATE = "read", "update"


def cond(workload: str, server: str, clients: int) -> str:
    """One pgbench run: "update_9.6_c64", "read_this_c2", "update_sysv_c8"."""
    return f"{workload}_{server}_c{clients}"
