"""What runs: 004's §5 read and update scripts on Linux, in two servers side by side.

The first server is restarted between shared_buffers 64MB and the scale's large value
before each of its runs (then its table and index are prewarmed) and runs the read script,
then the update script (beyond 004, which swept shared_buffers for reads only). The
second server's wal_sync_method changes by reload before each of its runs. Before the
rounds: pg_test_fsync on the second server's data directory (its own runs: it compares
methods within one run), where a read transaction's blocks come from at each
shared_buffers (EXPLAIN BUFFERS), what the server says to fsync_writethrough, the storage
under the data directory, and an untimed run of every update condition (which also takes
the full-page writes after the load's checkpoint). Then the pgbench runs are interleaved
round by round.

Against an existing server (--dsn) nothing runs (the chapter's requirement): the findings
need restarts with other shared_buffers, wal_sync_method changes (a reload) or pg_test_fsync
on the server's machine, and the read curve needs the server's CPU count.
"""
from __future__ import annotations

from typing import Any, Callable

import psycopg
from psycopg import sql as pgsql

from ...errors import ReproError
from ...lab.context import RunContext
from ...lab.measure import Plan
from ...lab.pgtools import parse_test_fsync
from ...lab.servers import ContainerServer
from ...text import Text
from .conditions import (FSYNC, METHODS, ONE_WRITE, SB_UPDATE_CLIENTS, SMALL_BUFFERS, TWO_WRITES,
                         WINDOWS_ONLY_METHOD, buffered_update, fsync_field, read, update)

DATA = "/var/lib/postgresql/data"
FSYNC_FILE = f"{DATA}/pg_test_fsync.tmp"  # the WAL's own storage
PROBE_AIDS = 5  # read transactions explained per shared_buffers
WARMUP_S = 1
STORAGE = ("stat -f -c %T " + DATA + "; uname -r; "
           "for f in /sys/block/*/queue/write_cache; do d=${f#/sys/block/}; echo \"${d%%/*} $(cat $f)\"; done")

Measured = Callable[[], dict[str, dict[str, Any]]]


def _pgbench(server: ContainerServer, script: str, text: str, clients: int, seconds: int,
             scale: int) -> dict[str, float]:
    """One run; threads = clients / 2, as in 004."""
    r = server.pgbench(["-n", "-c", str(clients), "-j", str(max(1, clients // 2)), "-T", str(seconds),
                        "-s", str(scale), "-f", f"/tmp/{script}"], {script: text})
    return {"tps": r.tps, "latency_ms": r.latency_avg_ms}


def set_method(server: ContainerServer, method: str) -> None:
    """Set wal_sync_method by reload (Server.set_by_reload returns once a new session sees it)."""
    server.set_by_reload({"wal_sync_method": method})
    if server.sql("SHOW wal_sync_method")[0][0] != method:
        raise ReproError(f"wal_sync_method did not change to {method}")


def switch_buffers(server: ContainerServer, size: str) -> None:
    """Restart with shared_buffers `size`, then prewarm the table (as 004) and its index."""
    server.restart({"shared_buffers": size})
    if server.sql("SHOW shared_buffers")[0][0] != size:
        raise ReproError(f"shared_buffers did not change to {size}")
    server.sql("SELECT pg_prewarm('pgbench_accounts'), pg_prewarm('pgbench_accounts_pkey')")


def buffer_sources(server: ContainerServer, scale: int) -> dict[str, int]:
    """Blocks of PROBE_AIDS read transactions (evenly spread aids) found in shared_buffers
    (hit) or read from the kernel (read), from EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)."""
    hit = got = 0
    last = 100000 * scale - 10000
    for i in range(PROBE_AIDS):
        aid = 1 + last * (2 * i + 1) // (2 * PROBE_AIDS)
        plan = server.sql("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) SELECT count(abalance) FROM "
                          "pgbench_accounts WHERE aid BETWEEN %s AND %s", (aid, aid + 10000))[0][0]
        top = plan[0]["Plan"]
        hit += top["Shared Hit Blocks"]
        got += top["Shared Read Blocks"]
    return {"hit": hit, "read": got, "transactions": PROBE_AIDS}


def rejected_method(server: ContainerServer) -> dict[str, Any]:
    """What ALTER SYSTEM says to the Windows-only wal_sync_method (nothing is changed)."""
    try:
        server.sql(pgsql.SQL("ALTER SYSTEM SET wal_sync_method = {}").format(pgsql.Literal(WINDOWS_ONLY_METHOD)))
    except psycopg.Error as exc:
        return {"accepted": False, "message": str(exc).splitlines()[0]}
    server.sql("ALTER SYSTEM RESET wal_sync_method")
    return {"accepted": True, "message": None}


READ_ROLE = Text("shared_buffers (再起動で切り替え): 参照系と更新系", "shared_buffers (switched by restart): read and update")
UPDATE_ROLE = Text("wal_sync_method (reload で切り替え): 更新系と pg_test_fsync", "wal_sync_method (switched by reload): update and pg_test_fsync")


def run(ctx: RunContext) -> None:
    p = ctx.params
    settings = ctx.settings("postgresql.conf")
    buffers = {"small": SMALL_BUFFERS, "large": p["large_buffers"]}
    scripts = {name: ctx.text(name) for name in ("read.pgbench", "update.pgbench")}
    ctx.step(f"shared_buffers server (pgbench -i -s {p['read_scale']}) and wal_sync_method server "
             f"(pgbench -i -s {p['update_scale']}), side by side")

    def prepare(server: ContainerServer) -> None:
        if server.role is READ_ROLE:
            server.pgbench_init(p["read_scale"])
            server.sql("CREATE EXTENSION pg_prewarm")
        else:
            server.pgbench_init(p["update_scale"])  # §5: default fillfactor (§4 had -F 80)

    # the first server's shared_buffers is not on its command line: a restart sets it
    reader, writer = ctx.servers({READ_ROLE: settings,
                                  UPDATE_ROLE: settings | {"shared_buffers": buffers["large"]}}, prepare)
    ctx.engine_cpus()  # the read curve's knee
    ctx.record("default_method", writer.sql("SHOW wal_sync_method")[0][0])
    ctx.record("wal_level", writer.sql("SHOW wal_level")[0][0])  # minimal before 10: O_DIRECT WAL
    ctx.record("fsync_writethrough", rejected_method(writer))
    ctx.record("storage", writer.run(["sh", "-c", STORAGE]).split("\n"))
    ctx.record("pg_test_fsync_version", writer.run(["pg_test_fsync", "--version"]).strip())
    ctx.record("table_mb", float(reader.sql("SELECT pg_table_size('pgbench_accounts') / 1048576.0")[0][0]))

    ctx.step("checkpoint and sync: the load's dirty pages written before anything is measured")
    for server in (reader, writer):
        server.sql("CHECKPOINT")
    writer.run(["sync"])

    def test_fsync() -> dict[str, dict[str, Any]]:
        rows = parse_test_fsync(writer.run(["pg_test_fsync", "-s", str(p["fsync_s"]), "-f", FSYNC_FILE]))
        return {FSYNC: {fsync_field(r["section"], r["method"]): r["ops_per_s"] for r in rows
                        if r["section"] in (ONE_WRITE, TWO_WRITES)}}

    # its own rounds, before pgbench's: the findings pairing it with pgbench can then be judged
    # while pgbench's rounds decide how many to add
    ctx.rounds({FSYNC: test_fsync}, Plan(p["fsync_rounds"], p["fsync_rounds"], float("inf")))

    ctx.step("where a read transaction's blocks come from, at each shared_buffers")
    sources = {}
    for size, value in buffers.items():
        switch_buffers(reader, value)
        sources[size] = buffer_sources(reader, p["read_scale"])
    ctx.record("buffer_sources", sources)

    def reading(size: str) -> Measured:
        def one() -> dict[str, dict[str, Any]]:
            switch_buffers(reader, buffers[size])
            reads = {read(size, c): _pgbench(reader, "read.pgbench", scripts["read.pgbench"], c,
                                             p["seconds"], p["read_scale"])
                     for c in p["read_clients"]}
            return reads | {buffered_update(size, SB_UPDATE_CLIENTS): _pgbench(
                reader, "update.pgbench", scripts["update.pgbench"], SB_UPDATE_CLIENTS, p["seconds"], p["read_scale"])}
        return one

    def updating(method: str, seconds: int = p["seconds"]) -> Measured:
        def one() -> dict[str, dict[str, Any]]:
            set_method(writer, method)
            return {update(method, c): _pgbench(writer, "update.pgbench", scripts["update.pgbench"], c,
                                                seconds, p["update_scale"])
                    for c in p["update_clients"]}
        return one

    ctx.step(f"warm-up: every update condition once for {WARMUP_S} s, untimed")
    for method in METHODS:
        updating(method, WARMUP_S)()
    ctx.rounds({**{f"read, shared_buffers {buffers[s]}": reading(s) for s in buffers},
                **{f"update, {m}": updating(m) for m in METHODS}})
