"""Wait-event profiles and CPU time of a measured window, two ways, and the time
the server itself measured in WAL syncs.

- `ActivitySampler` polls pg_stat_activity from the harness at a fixed interval:
  works on any server, as a DBA could do it in production.
- `wait_sampling_profile` reads pg_wait_sampling's profile (the extension's
  collector samples every backend in shared memory, by default every 10 ms).
- `wal_syncs` reads how long the server spent in WAL fsyncs (track_wal_io_timing),
  a measured duration to check either sampler against.

Both samplers keep only the backends of one application (pgbench's own
connections), so the walwriter, checkpointer, the sampler's own session and other
idle background processes never enter a profile.
"""
from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass

from . import engine
from .harness.waiting import until
from .servers import ContainerServer, Server
from .poller import Poller

CPU = "CPU"  # a sample of a backend that was not waiting (pg_wait_sampling's NULL event)
CPU_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")

Profile = dict[str, int]  # "event_type:event" -> samples


def event_key(event_type: str | None, event: str | None) -> str:
    return CPU if event is None else f"{event_type}:{event}"


class ActivitySampler(Poller):
    """Samples wait events of one application's backends from pg_stat_activity.

    Use as a context manager around the measured window; afterwards `profile`
    holds the samples per event and `pids` the backends seen.
    """

    # its own database's backends only: on an existing server (--dsn) the run's scratch one
    QUERY = ("SELECT pid, wait_event_type, wait_event FROM pg_stat_activity "
             "WHERE application_name = %s {clients}AND datname = current_database() "
             "AND pid <> pg_backend_pid()")
    CLIENTS = "AND backend_type = 'client backend' "  # 10+; 9.6's view holds client backends only

    def __init__(self, server: Server, application: str = "pgbench", interval_s: float = 0.01):
        clients = self.CLIENTS if server.major >= 10 else ""
        super().__init__(server, self.QUERY.format(clients=clients), (application,), interval_s)
        self.profile: Profile = Counter()
        self.pids: set[int] = set()

    @property
    def placement(self) -> dict[str, int] | None:
        """Where the poll and the workload ran, as the measurement records it: None, unbound."""
        return None

    def take(self, rows: list[tuple]) -> None:
        for pid, event_type, event in rows:
            self.profile[event_key(event_type, event)] += 1
            self.pids.add(pid)


class PinnedActivitySampler(ActivitySampler):
    """An `ActivitySampler` whose own backend (and, with a local engine, its polling
    thread) runs on CPU `own_cpu`, while the client program (`client`, in the server's
    container) and the backends it samples run on `workload_cpu`.

    A poll is a query: its backend must get a CPU before it can read anything. Placing
    the two on the same CPU or on different ones shows what that costs the sample.
    """

    def __init__(self, server: ContainerServer, own_cpu: int, workload_cpu: int,
                 application: str = "pgbench", client: str = "pgbench", interval_s: float = 0.01):
        super().__init__(server, application, interval_s)
        self.own_cpu, self.workload_cpu, self.client = own_cpu, workload_cpu, client
        self.pinned: set[int] = set()

    @property
    def placement(self) -> dict[str, int]:
        """The CPUs of the poll and of the workload, and how many of the workload's backends
        were bound (a run whose backends were never bound measured no placement)."""
        return {"poll_cpu": self.own_cpu, "workload_cpu": self.workload_cpu, "backends_bound": len(self.pinned)}

    def __enter__(self) -> PinnedActivitySampler:
        super().__enter__()
        self.server.pin(self.own_cpu, pids=[self._conn.info.backend_pid])
        return self

    def _poll(self) -> None:
        if engine.is_local():  # the harness shares the engine's CPUs only when local
            os.sched_setaffinity(0, {self.own_cpu})
        super()._poll()

    def take(self, rows: list[tuple]) -> None:
        super().take(rows)
        if new := self.pids - self.pinned:  # the client's backends, as soon as they show up
            self.server.pin(self.workload_cpu, pids=sorted(new), commands=[self.client])
            self.pinned |= new


def reset_wait_sampling(server: Server) -> None:
    server.sql("SELECT pg_wait_sampling_reset_profile()")


def wait_sampling_profile(server: Server, pids: set[int]) -> Profile:
    """pg_wait_sampling's profile since the last reset, for the given backends only."""
    rows = server.sql("SELECT pid, event_type, event, count FROM pg_wait_sampling_profile "
                      "WHERE pid = ANY(%s)", (list(pids),))
    profile: Profile = Counter()
    for _, event_type, event, count in rows:
        profile[event_key(event_type, event)] += int(count)
    return profile


def wait_until_gone(server: Server, application: str = "pgbench", timeout_s: float = 10) -> None:
    """Until the application's backends in this database have exited: a backend flushes its
    statistics (pg_stat_wal, pg_stat_io) when it exits, after its client has already returned.
    One still there at the deadline fails the run: its statistics would be missing."""
    until(lambda: not server.sql("SELECT count(*) FROM pg_stat_activity WHERE application_name = %s "
                                 "AND datname = current_database()", (application,))[0][0],
          timeout_s, f"{application}'s backends were still connected {timeout_s:g} s after it returned", 0.02)


def reset_wal_stats(server: Server) -> None:
    """Zero what `wal_syncs` reads (14+; 13 keeps no WAL I/O statistics)."""
    if server.major >= 14:
        server.sql("SELECT pg_stat_reset_shared(%s)", ("io" if server.major >= 18 else "wal",))


def wal_syncs(server: Server) -> tuple[float, int] | None:
    """Milliseconds the server spent in WAL fsyncs since `reset_wal_stats`, and how many
    (needs track_wal_io_timing; pg_stat_wal on 14-17, pg_stat_io from 18; None on 13)."""
    if server.major < 14:
        return None
    query = ("SELECT coalesce(sum(fsync_time), 0), coalesce(sum(fsyncs), 0) FROM pg_stat_io "
             "WHERE object = 'wal'" if server.major >= 18
             else "SELECT wal_sync_time, wal_sync FROM pg_stat_wal")
    ms, count = server.sql(query)[0]
    return float(ms), int(count)


USER_HZ = 100  # /proc/stat's tick: fixed by the kernel's ABI, whatever its internal HZ


@dataclass(frozen=True)
class CpuReading:
    """The machine's CPU counters (/proc/stat "cpu" line, in ticks) and the CPU seconds
    used so far by the container where the client programs run."""

    ticks: list[int]
    container_s: float


def cpu_times(server: Server) -> CpuReading:
    """Both counters, read in one go where the server runs (its `cpu_counters`).

    /proc/stat is not namespaced, so `ticks` are the whole host's, like vmstat on the
    original's VM (pgbench runs there too); the second counter tells the run's own use apart
    from other processes' (a container's cgroup holds the server and pgbench; beside a local
    cluster, its processes and the client programs the run started).
    """
    return parse_cpu_reading(server.cpu_counters())


def parse_cpu_reading(text: str) -> CpuReading:
    lines = text.strip().splitlines()
    stat = lines[0].split() if lines else []
    if not stat or stat[0] != "cpu":
        raise ValueError(f"unexpected /proc/stat first line: {' '.join(stat)!r}")
    ticks = [int(x) for x in stat[1:1 + len(CPU_FIELDS)]]
    usage = dict(line.split() for line in lines[1:] if " " in line)
    if "usage_usec" in usage:  # cgroup v2 cpu.stat
        return CpuReading(ticks, int(usage["usage_usec"]) / 1e6)
    if len(lines) == 2 and lines[1].strip().isdigit():  # cgroup v1 cpuacct.usage, in ns
        return CpuReading(ticks, int(lines[1]) / 1e9)
    raise ValueError(f"no cgroup CPU usage after /proc/stat: {lines[1:]!r}")


def cpu_split(before: CpuReading, after: CpuReading) -> dict[str, float]:
    """vmstat's us/sy/id/wa (plus st) in % of the ticks between two readings."""
    d = dict(zip(CPU_FIELDS, (b - a for a, b in zip(before.ticks, after.ticks, strict=True))))
    total = sum(d.values()) or 1
    return {"us": (d["user"] + d["nice"]) / total * 100,
            "sy": (d["system"] + d["irq"] + d["softirq"]) / total * 100,
            "wa": d["iowait"] / total * 100, "st": d["steal"] / total * 100,
            "id": d["idle"] / total * 100}


def container_share(before: CpuReading, after: CpuReading) -> float:
    """The container's CPU time between two readings, in % of the machine's (all CPUs)."""
    total_s = sum(b - a for a, b in zip(before.ticks, after.ticks, strict=True)) / USER_HZ
    return (after.container_s - before.container_s) / total_s * 100 if total_s else 0.0
