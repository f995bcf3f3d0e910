"""What runs: the original's table (id int primary key, info text, crt_time timestamp)
hash-partitioned into 256 unlogged partitions and its pgbench script (a random id, one
prepared INSERT ... ON CONFLICT DO NOTHING), on the major under test and, beside it in the
same run, on PostgreSQL 11 (the original's older major); their runs interleaved round by
round, so that the ratio of the two is measured in one run.

Before the rounds, on each server: how many partitions a single-row INSERT locks (pg_locks
in the INSERT's own transaction, an exact count).

Against an existing server (--dsn): the table in a scratch database, the lock count and the
script's rounds there; the comparison with 11 needs a server of the run's own beside it.
"""
from __future__ import annotations

from contextlib import ExitStack
from typing import Any, Callable

from ...lab.beside import start_all
from ...lab.context import RunContext
from ...lab.servers import Server
from ...text import Text
from .conditions import REFERENCE, REFERENCE_MAJOR, THIS

WARMUP_S = 2
SCRIPT = "insert.pgbench"
ROLES = {THIS: Text("このメジャー", "the major under test"),
         REFERENCE: Text("11 (原典の旧メジャー)", "11 (the original's older major)")}


def run(ctx: RunContext) -> None:
    p = ctx.params
    settings = ctx.settings("postgresql.conf")
    tables = ctx.text("partitions.sql").replace(":partitions", str(int(p["partitions"])))
    locks = ctx.text("locks.sql")

    def prepare(server: Server) -> None:
        server.sql(tables)
        server.sql(locks)

    def bench(server: Server, seconds: int) -> dict[str, float]:
        r = server.pgbench(["-n", "-M", "prepared", "-c", str(p["clients"]), "-j", str(p["clients"]),
                            "-T", str(seconds), "-f", f"/tmp/{SCRIPT}"], {SCRIPT: ctx.text(SCRIPT)})
        return {"tps": r.tps, "latency_ms": r.latency_avg_ms}

    with ExitStack() as stack:
        if ctx.external:
            ctx.step(f"a scratch database: the table in {p['partitions']} hash partitions")
            server = ctx.server(ROLES[THIS], settings)
            prepare(server)
            servers = {THIS: server}
        else:
            starts = {THIS: ctx.lab}
            if ctx.major != REFERENCE_MAJOR and (reference := ctx.beside(stack, REFERENCE_MAJOR)) is not None:
                starts[REFERENCE] = reference
            ctx.step(f"{len(starts)} servers side by side ({', '.join(starts)}), each with the table in "
                     f"{p['partitions']} hash partitions")
            servers = dict(zip(starts, start_all(ctx, [(lab, ROLES[k], settings) for k, lab in starts.items()],
                                                prepare)))
        ctx.record("versions", {k: s.sql("SHOW server_version")[0][0] for k, s in servers.items()})
        ctx.step("the partitions a single-row INSERT locks (pg_locks, in its own transaction)")
        ctx.record("locked", {k: s.sql("SELECT partitions_locked_by_insert(1)")[0][0] for k, s in servers.items()})

        ctx.step(f"warm-up: the script once on each server for {WARMUP_S} s, untimed")
        for server in servers.values():
            bench(server, WARMUP_S)

        def one(k: str) -> Callable[[], dict[str, dict[str, Any]]]:
            return lambda: {k: bench(servers[k], p["seconds"])}

        ctx.rounds({k: one(k) for k in servers})
