"""What runs on the server: pgbench TPC-B in three modes at several client counts, wait
events sampled two ways, the server's own timing of WAL fsyncs, CPU counters. Where the
image has no pg_wait_sampling, only pg_stat_activity samples (its findings need nothing
else) and the run records "waits_sampling" as None.

One server holds two copies of pgbench's tables: logged ones in `public` and unlogged
ones in the schema `unlogged` (pgbench finds them through its search_path). The modes
differ only in session settings, so every mode and client count runs on the same
server, interleaved round by round. Two control runs at 1 client bind pgbench and its
backend to CPU 0, and the backend that polls pg_stat_activity to CPU 0 or CPU 1.
"""
from __future__ import annotations

from statistics import median
from typing import Any

from ...lab import engine
from ...lab.context import RunContext
from ...lab.pgtools import parse_test_fsync
from ...lab.servers import Server
from ...text import Text
from ...lab.waits import (ActivitySampler, PinnedActivitySampler, container_share, cpu_split,
                          cpu_times, reset_wait_sampling, reset_wal_stats, wait_sampling_profile,
                          wait_until_gone, wal_syncs)

MODES = {  # mode -> (schema of its tables, session settings)
    "normal": ("public", {}),
    "unlogged": ("unlogged", {"search_path": "unlogged"}),
    "async": ("public", {"synchronous_commit": "off"}),
}
WORKLOAD_CPU = 0  # control runs: pgbench and its backend run here ...
CONTROLS = {"same_cpu": 0, "own_cpu": 1}  # ... and the poll's backend (and thread) here
FSYNC_FILE = "/var/lib/postgresql/data/pg_test_fsync.tmp"  # the WAL's own storage


def _prepare(server: Server, scale: int, sampling: bool) -> None:
    if sampling:
        server.sql("CREATE EXTENSION pg_wait_sampling")
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
            "waits_activity": dict(poll.profile), "backends": len(poll.pids),
            "polls": poll.polls, "poll_ms": median(poll.round_trips_ms),
            "wal_sync_ms": synced[0] if synced else None, "wal_syncs": synced[1] if synced else None}}
    return one


CONTROL_SECONDS = 3  # at least: the poll's pinning happens in a run's first milliseconds


def _controls(server: Server, seconds: int, sampling: bool) -> dict[str, Any]:
    """1 client, normal mode, pgbench and its backend bound to one CPU, the poll's backend to
    the same CPU or to the other one (needs 2 CPUs in the engine)."""
    if engine.info().get("NCPU", 1) < 2:
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
    if ctx.major >= 14:
        settings |= ctx.settings("measuring.conf")
    server = ctx.server(Text("TPC-B、pg_wait_sampling", "TPC-B, pg_wait_sampling"), settings)
    ctx.record("seconds", p["seconds"])  # runs' lengths: what measured times divide by
    ctx.record("control_seconds", max(p["seconds"], CONTROL_SECONDS))
    ctx.record("engine_cpus", engine.info().get("NCPU"))  # more clients than this: CPU saturated
    ctx.record("wait_sampling", sampling)
    _prepare(server, p["pgbench_scale"], sampling)
    # older pg_wait_sampling (before the sample_cpu setting) leaves non-waiting samples out
    ctx.record("sampling_counts_cpu", server.sql(
        "SELECT current_setting('pg_wait_sampling.sample_cpu', true)")[0][0] == "on")
    ctx.step("pg_test_fsync")
    ctx.record("pg_test_fsync", parse_test_fsync(
        server.run(["pg_test_fsync", "-s", str(p["fsync_s"]), "-f", FSYNC_FILE])))
    runs = {f"{mode} · {c} client{'s' * (c > 1)}": _measure(server, f"{mode}/{c}", mode, c,
                                                            p["seconds"], sampling)
            for mode in MODES for c in p["clients"]}
    ctx.rounds(runs | _controls(server, p["seconds"], sampling))
