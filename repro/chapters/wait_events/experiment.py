"""What runs on the server: pgbench TPC-B in three modes at several client counts, wait
events sampled two ways, the server's own timing of WAL fsyncs, CPU counters. Where the
image has no pg_wait_sampling, only pg_stat_activity samples (its findings need nothing
else) and the run records "waits_sampling" as None.

One server holds two copies of pgbench's tables: logged ones in `public` and unlogged
ones in the schema `unlogged` (pgbench finds them through its search_path). The modes
differ only in session settings, so every mode and client count runs on the same
server, interleaved round by round. Two control runs at 1 client bind pgbench and its
backend to CPU 0, and the backend that polls pg_stat_activity to CPU 0 or CPU 1.

Against an existing server (--dsn), in a scratch database there:

- runs: both copies of pgbench's tables (autovacuum off for them, as 003 had it for the
  whole server), the three modes at every client count (their settings are per session),
  the pg_stat_activity poll counting only the backends in the scratch database (never the
  server's other sessions), and pg_wait_sampling where it samples there: the server
  preloads it, the role may create it in the scratch database, and it profiles per backend
  (pg_wait_sampling.profile_pid). Its profile is read before and after each run, not reset.
- does not run: pg_test_fsync, the CPU counters (/proc/stat, the cgroup's) and the two
  control runs bound to CPUs (taskset): all of them on the server's machine, which the run
  does not reach (the helper container that runs pgbench is not that machine). Neither is
  the server's WAL fsync timing read: its statistics are the server's, other sessions'
  fsyncs count in them, and resetting them would change the server. The server's CPU count
  is unknown there: the run records "engine_cpus" as None.

003's settings that a session cannot set (shared_buffers, wal_buffers, max_wal_size, ...)
stay the server's own; the result's provenance lists them as unapplied.

So F3 is judged as in a container; F1, F2 and F4 where pg_wait_sampling sampled; F5 (the
clients against the server's CPU count), F6, F7 (the control runs) and F8 (the CPU
counters) are not applicable there.

On local clusters (--server local) everything runs as in a container: the run's own CPU is
then the cluster's processes' and the client programs' it started (the server's
cpu_counters), pg_wait_sampling wherever the binaries have it.
"""
from __future__ import annotations

from collections import Counter
from statistics import median
from typing import Any

import psycopg

from ...lab.context import RunContext
from ...lab.pgtools import parse_test_fsync
from ...lab.servers import Server
from ...text import Text
from ...lab.waits import (ActivitySampler, PinnedActivitySampler, container_share, cpu_split,
                          cpu_times, event_key, reset_wait_sampling, reset_wal_stats,
                          wait_sampling_profile, wait_until_gone, wal_syncs)

MODES = {  # mode -> (schema of its tables, session settings)
    "normal": ("public", {}),
    "unlogged": ("unlogged", {"search_path": "unlogged"}),
    "async": ("public", {"synchronous_commit": "off"}),
}
WORKLOAD_CPU = 0  # control runs: pgbench and its backend run here ...
CONTROLS = {"same_cpu": 0, "own_cpu": 1}  # ... and the poll's backend (and thread) here
FSYNC_FILE = "/var/lib/postgresql/data/pg_test_fsync.tmp"  # the WAL's own storage
TABLES = ("pgbench_accounts", "pgbench_branches", "pgbench_tellers", "pgbench_history")


def _prepare(server: Server, scale: int, sampling: bool) -> None:
    if sampling:  # on an existing server `_samples_there` has created it
        server.sql("CREATE EXTENSION IF NOT EXISTS pg_wait_sampling")
    server.pgbench_init(scale)
    server.sql("CREATE SCHEMA unlogged")
    server.pgbench_init(scale, "--unlogged-tables", options={"search_path": "unlogged"})
    for schema, options in MODES.values():  # warm-up: caches and the WAL files
        server.pgbench(["-n", "-c", "4", "-j", "4", "-T", "1"], options=options)


def _vacuum(server: Server, schema: str) -> None:
    """What pgbench does before a run (unless -n), but outside the measured window."""
    for table in ("pgbench_branches", "pgbench_tellers"):  # one per VACUUM: a list needs 11
        server.sql(f"VACUUM {schema}.{table}")
    server.sql(f"TRUNCATE {schema}.pgbench_history")


def _measure(server: Server, condition: str, mode: str, clients: int, seconds: int,
             sampling: bool, sampler: Any = ActivitySampler) -> Any:
    """One pgbench run of `mode`; `sampler(server)` is the pg_stat_activity poll to use;
    `sampling`: whether pg_wait_sampling samples too."""
    schema, options = MODES[mode]

    def one() -> dict[str, dict[str, Any]]:
        _vacuum(server, schema)
        if sampling:
            reset_wait_sampling(server)
        reset_wal_stats(server)
        cpu_before = cpu_times(server)
        with sampler(server) as poll:
            r = server.pgbench(["-n", "-c", str(clients), "-j", str(clients), "-T", str(seconds)],
                               options=options)
        cpu_after = cpu_times(server)
        wait_until_gone(server)  # a backend reports its WAL statistics when it exits
        synced = wal_syncs(server)
        return {condition: {
            "tps": r.tps, "latency_ms": r.latency_avg_ms, "cpu": cpu_split(cpu_before, cpu_after),
            "cpu_container": container_share(cpu_before, cpu_after),
            "waits_sampling": dict(wait_sampling_profile(server, poll.pids)) if sampling else None,
            "waits_activity": dict(poll.profile), "backends": len(poll.pids), "placement": poll.placement,
            "polls": poll.polls, "poll_ms": median(poll.round_trips_ms),
            "wal_sync_ms": synced[0] if synced else None, "wal_syncs": synced[1] if synced else None}}
    return one


def _samples_there(server: Server) -> bool:
    """Whether pg_wait_sampling profiles the run's backends on an existing server: created in
    the scratch database (by a role that may), loaded at the server's start (reading its
    profile fails otherwise) and counting per backend, as the run's filter needs."""
    try:
        server.sql("CREATE EXTENSION IF NOT EXISTS pg_wait_sampling")
        server.sql("SELECT count(*) FROM pg_wait_sampling_profile")
    except psycopg.Error:
        return False
    return server.sql("SELECT current_setting('pg_wait_sampling.profile_pid', true)")[0][0] != "off"


def _profile_counts(server: Server, pids: set[int] | None = None) -> Counter[tuple[int, str]]:
    """pg_wait_sampling's profile as it stands, per backend and event (of `pids` only)."""
    query = "SELECT pid, event_type, event, count FROM pg_wait_sampling_profile"
    rows = server.sql(query + " WHERE pid = ANY(%s)", (list(pids),)) if pids is not None else server.sql(query)
    counts: Counter[tuple[int, str]] = Counter()
    for pid, event_type, event, count in rows:
        counts[(pid, event_key(event_type, event))] += int(count)
    return counts


def _profile_since(server: Server, before: Counter[tuple[int, str]], pids: set[int]) -> dict[str, int]:
    """The samples of `pids` since `before`, per event: the existing server's profile is not
    reset (others may read it), and a pid may have been an earlier process's."""
    profile: Counter[str] = Counter()
    for (pid, key), count in _profile_counts(server, pids).items():
        profile[key] += count - before[(pid, key)]
    return {key: count for key, count in profile.items() if count > 0}


def _measure_there(server: Server, condition: str, mode: str, clients: int, seconds: int,
                   sampling: bool) -> Any:
    """One pgbench run of `mode` on an existing server: as `_measure`, but nothing of the
    server's is reset and nothing is read on its machine (no CPU counters, no WAL fsync
    timing: recorded as None)."""
    schema, options = MODES[mode]

    def one() -> dict[str, dict[str, Any]]:
        _vacuum(server, schema)
        before = _profile_counts(server) if sampling else None
        with ActivitySampler(server) as poll:  # the scratch database's backends only
            r = server.pgbench(["-n", "-c", str(clients), "-j", str(clients), "-T", str(seconds)],
                               options=options)
        wait_until_gone(server)
        return {condition: {
            "tps": r.tps, "latency_ms": r.latency_avg_ms, "cpu": None, "cpu_container": None,
            "waits_sampling": _profile_since(server, before, poll.pids) if before is not None else None,
            "waits_activity": dict(poll.profile), "backends": len(poll.pids),
            "polls": poll.polls, "poll_ms": median(poll.round_trips_ms),
            "wal_sync_ms": None, "wal_syncs": None}}
    return one


CONTROL_SECONDS = 3  # at least: the poll's pinning happens in a run's first milliseconds


def _controls(server: Server, seconds: int, sampling: bool, cpus: int | None) -> dict[str, Any]:
    """1 client, normal mode, pgbench and its backend bound to one CPU, the poll's backend to
    the same CPU or to the other one (needs 2 CPUs in the engine)."""
    if (cpus or 1) < 2:
        return {}
    return {f"control · poll on {'the same' if cpu == WORKLOAD_CPU else 'its own'} CPU":
            _measure(server, f"control/{name}", "normal", 1, max(seconds, CONTROL_SECONDS), sampling,
                     lambda s, cpu=cpu: PinnedActivitySampler(s, cpu, WORKLOAD_CPU))
            for name, cpu in CONTROLS.items()}


def run(ctx: RunContext) -> None:
    p = ctx.params
    sampling = ctx.has("pg_wait_sampling")
    ctx.step(f"server {'with' if sampling else 'without'} pg_wait_sampling; "
             f"pgbench -i -s {p['pgbench_scale']}, logged and unlogged")
    settings = ctx.settings("postgresql.conf")
    if not sampling:
        del settings["shared_preload_libraries"]  # it preloads only pg_wait_sampling
    if ctx.major >= 14 and not ctx.external:  # an existing server's WAL timing is not read
        settings |= ctx.settings("measuring.conf")
    server = ctx.server(Text("TPC-B、pg_wait_sampling", "TPC-B, pg_wait_sampling"), settings)
    if ctx.external:
        sampling = sampling and _samples_there(server)
        ctx.step(f"pg_wait_sampling {'samples' if sampling else 'does not sample'} the scratch "
                 f"database's backends")
    ctx.record("seconds", p["seconds"])  # runs' lengths: what measured times divide by
    ctx.record("control_seconds", max(p["seconds"], CONTROL_SECONDS))
    cpus = ctx.engine_cpus()  # more clients than this: CPU saturated (unknown on an existing server)
    ctx.record("wait_sampling", sampling)
    _prepare(server, p["pgbench_scale"], sampling)
    if ctx.external:  # autovacuum = off is the server's to set; the run's tables can opt out
        for schema in ("public", "unlogged"):
            for table in TABLES:
                server.sql(f"ALTER TABLE {schema}.{table} SET (autovacuum_enabled = false)")
    # older pg_wait_sampling (before the sample_cpu setting) leaves non-waiting samples out
    ctx.record("sampling_counts_cpu", server.sql(
        "SELECT current_setting('pg_wait_sampling.sample_cpu', true)")[0][0] == "on")
    if ctx.external:  # it would run on the server's machine
        ctx.record("pg_test_fsync", None)
    else:
        ctx.step("pg_test_fsync")
        ctx.record("pg_test_fsync", parse_test_fsync(
            server.run(["pg_test_fsync", "-s", str(p["fsync_s"]), "-f", FSYNC_FILE])))
    measure = _measure_there if ctx.external else _measure
    runs = {f"{mode} · {c} client{'s' * (c > 1)}": measure(server, f"{mode}/{c}", mode, c,
                                                           p["seconds"], sampling)
            for mode in MODES for c in p["clients"]}
    # the control runs bind processes to CPUs on the server's machine: not on an existing server
    ctx.rounds(runs | ({} if ctx.external else _controls(server, p["seconds"], sampling, cpus)))
