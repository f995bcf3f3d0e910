"""What runs: 004 §4's read and update scripts on four servers side by side, their runs
interleaved round by round: the major under test, 9.6 (the original's older major, System
V semaphores), and Debian's source package of PostgreSQL 15 built twice, with System V and
with unnamed POSIX semaphores (the control the original proposed but did not run).

Before the rounds, on each server: its System V semaphore sets (ipcs -s), then strace on
the postmaster while the update script runs (every semaphore call, its errors and its
call stack); on the major under test, the update script's wait events sampled at the
fewest and the most clients.

Against an existing server (--dsn), only the last part runs, in a scratch database: the
update script's wait events at the fewest and the most clients (F8). The rest needs servers
of the run's own (9.6 and the two builds of 15 beside the major under test) or strace on
the server's machine. On local clusters (--server local) 9.6 comes from its binaries, and the
two builds, which are images only, are left out.
"""
from __future__ import annotations

from contextlib import ExitStack
from typing import Any, Callable

from ...lab.harness import images
from ...lab.beside import lab_for, start_all
from ...lab.context import RunContext
from ...lab.semaphore_calls import semaphore_sets, traced
from ...lab.servers import Server
from ...lab.waits import ActivitySampler
from ...text import Text
from .conditions import CONTROL, CONTROL_MAJOR, POSIX, READ, REFERENCE, REFERENCE_MAJOR, SYSV, THIS, UPDATE, cond

WARMUP_S = 1
ROLES = {THIS: Text("このメジャー", "the major under test"),
         REFERENCE: Text("9.6 (原典の旧メジャー)", "9.6 (the original's older major)"),
         SYSV: Text("15 のソースパッケージからのビルド、System V セマフォ",
                    "15 built from Debian's source package, System V semaphores"),
         POSIX: Text("15 のソースパッケージからのビルド、名前なし POSIX セマフォ",
                     "15 built from Debian's source package, unnamed POSIX semaphores")}


def _pgbench(server: Server, script: tuple[str, str], clients: int, seconds: int,
             scale: int) -> dict[str, float]:
    """One run; threads = clients / 2, as in 004."""
    name, text = script
    r = server.pgbench(["-n", "-c", str(clients), "-j", str(max(1, clients // 2)), "-T", str(seconds),
                        "-s", str(scale), "-f", f"/tmp/{name}"], {name: text})
    return {"tps": r.tps, "latency_ms": r.latency_avg_ms}


def _sample(ctx: RunContext, server: Server, bench: Callable[..., dict[str, float]]) -> None:
    """The update script's wait events at the fewest and the most clients (F8)."""
    p = ctx.params
    ctx.step(f"wait events of the update script at {p['sample_clients']} clients (pg_stat_activity, 10 ms)")
    samples = {}
    for c in p["sample_clients"]:
        with ActivitySampler(server) as sampler:
            bench(server, UPDATE, c)
        samples[str(c)] = dict(sampler.profile)  # as JSON keeps it
    ctx.record("wait_samples", samples)


def _run_existing(ctx: RunContext, settings: dict[str, str], bench: Callable[..., dict[str, float]]) -> None:
    """Against an existing server: the wait events of the update script only."""
    p = ctx.params
    ctx.step(f"a scratch database, pgbench -i -s {p['scale']} -F 80")
    server = ctx.server(ROLES[THIS], settings)
    server.pgbench_init(p["scale"], "-F", "80")
    bench(server, UPDATE, max(p["sample_clients"]), WARMUP_S)
    _sample(ctx, server, bench)


def run(ctx: RunContext) -> None:
    p = ctx.params
    settings = ctx.settings("postgresql.conf") | {"shared_buffers": p["shared_buffers"]}
    scripts = {w: (f"{w}.pgbench", ctx.text(f"{w}.pgbench")) for w in (READ, UPDATE)}

    def bench(server: Server, workload: str, clients: int, seconds: int = p["seconds"]
              ) -> dict[str, float]:
        return _pgbench(server, scripts[workload], clients, seconds, p["scale"])

    if ctx.external:
        _run_existing(ctx, settings, bench)
        return

    def prepare(server: Server) -> None:
        server.pgbench_init(p["scale"], "-F", "80")  # 004's update runs' fillfactor
        server.sql("CREATE EXTENSION pg_prewarm")
        server.sql("CHECKPOINT")
        server.sql("SELECT pg_prewarm('pgbench_accounts')")  # as 004, before measuring

    with ExitStack() as stack:
        starts = {THIS: ctx.lab}
        if ctx.major != REFERENCE_MAJOR and (reference := ctx.beside(stack, REFERENCE_MAJOR)) is not None:
            starts[REFERENCE] = reference
        if ctx.with_images:  # the control's builds are images (images/semaphores)
            for kind in CONTROL:
                starts[kind] = lab_for(stack, CONTROL_MAJOR, f"repro-semaphores:{kind}")
        ctx.step(f"{len(starts)} servers side by side ({', '.join(starts)}), each pgbench -i -s {p['scale']} -F 80")
        servers = dict(zip(starts, start_all(ctx, [(lab, ROLES[k], settings) for k, lab in starts.items()],
                                            prepare, ptrace=True)))
        ctx.engine_cpus()
        ctx.record("versions", {k: s.sql("SHOW server_version")[0][0] for k, s in servers.items()})
        if SYSV in servers:
            ctx.record("control_source", images.client().images.get(f"repro-semaphores:{SYSV}").labels
                       .get(f"{images.LABEL}source"))
        ctx.record("semaphore_sets", {k: semaphore_sets(s) for k, s in servers.items()})
        workloads = {k: (UPDATE,) if k in CONTROL else (READ, UPDATE) for k in servers}
        clients = {k: p["control_clients"] if k in CONTROL else p["clients"] for k in servers}

        ctx.step(f"warm-up: each server's workloads once at {max(p['clients'])} clients for {WARMUP_S} s, untimed")
        for k, server in servers.items():
            for workload in workloads[k]:
                bench(server, workload, max(clients[k]), WARMUP_S)

        _sample(ctx, servers[THIS], bench)

        ctx.step(f"strace -f -k on each postmaster: the update script at {p['trace_clients']} clients for {p['trace_s']} s")
        ctx.record("semaphore_calls", {
            k: traced(s, lambda s=s: bench(s, UPDATE, p["trace_clients"], p["trace_s"])).as_dict()
            for k, s in servers.items()})

        def runs(k: str, workload: str) -> Callable[[], dict[str, dict[str, Any]]]:
            return lambda: {cond(workload, k, c): bench(servers[k], workload, c) for c in clients[k]}

        ctx.rounds({f"{workload}, {k}": runs(k, workload)
                    for k in servers for workload in workloads[k]})
