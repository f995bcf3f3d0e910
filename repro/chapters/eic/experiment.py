"""What runs on the server: the original's table, BRIN index and query; every measured run
cold, one condition per effective_io_concurrency value, interleaved round by round.

A cold run restarts the server (empty shared_buffers), drops the table's and the index's
files from the kernel's page cache from inside the container (beside a local cluster, on
this machine: --server local), then runs EXPLAIN (ANALYZE,
BUFFERS) of the query while /proc/diskstats counts the device's read requests and bytes:
the buffers read (not hit) and the bytes the device delivered show that the run was cold.
Before the rounds, one cold run per serial condition runs under strace, to count the
advice and the reads the scan issues (strace slows the scan: these runs are not timed).

Against an existing server (--dsn) nothing runs (the chapter's requirement): every finding
needs cold runs, which restart the server and evict its files from the page cache of its
machine, or strace there.
"""
from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

import psycopg
from psycopg import sql as pgsql

from ...lab.context import RunContext
from ...lab.pagecache import disk_reads, evict, read_ahead_kb, relation_files
from ...lab.servers import ContainerServer
from ...lab.strace import parse, traced
from ...text import Text
from .conditions import PARALLEL, SERIAL

START = datetime(2019, 1, 1, 0, 0, 1)
ORIGINAL_ROWS, ORIGINAL_BEFORE_CUTOFF = 5_000_000, 2_678_400  # rows before '2019-02-01'


def cutoff(rows: int) -> datetime:
    """The original's '2019-02-01', moved to keep the same share of rows before it."""
    return START + timedelta(seconds=round(rows * ORIGINAL_BEFORE_CUTOFF / ORIGINAL_ROWS) - 1)


# The planner's estimate of this query's rows is small (the filter id % 2 = 0 gets a default
# selectivity), so without these it keeps the scan serial: the parallel conditions force it.
FORCE_PARALLEL = {"parallel_setup_cost": "0", "parallel_tuple_cost": "0", "min_parallel_table_scan_size": "0"}


def _session(server: ContainerServer, eic: int, workers: int) -> dict[str, str]:
    settings = {"effective_io_concurrency": str(eic), "max_parallel_workers_per_gather": str(workers),
                **(FORCE_PARALLEL if workers else {})}
    if server.major >= 11:
        settings["jit"] = "off"  # the original (9.6) had none; it would add compile time
    return settings


def _explain(conn: psycopg.Connection, query: pgsql.Composable, settings: dict[str, str]) -> dict:
    for key, value in settings.items():
        conn.execute(pgsql.SQL("SET {} = {}").format(pgsql.Identifier(key), pgsql.Literal(value)))
    text = conn.execute(pgsql.SQL("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ") + query).fetchone()[0]
    return (json.loads(text) if isinstance(text, str) else text)[0]


def _heap_scan(plan: dict) -> dict:
    """The Bitmap Heap Scan node under the aggregate (and the Gather, when parallel)."""
    node = plan["Plan"]
    while node.get("Node Type") != "Bitmap Heap Scan":
        children = node.get("Plans") or []
        if not children:
            raise ValueError(f"no Bitmap Heap Scan in the plan: {plan['Plan'].get('Node Type')}")
        node = children[0]
    return node


def summarize_plan(plan: dict) -> dict[str, Any]:
    """What a run keeps of its plan: time, the heap scan's blocks and buffers, its shape."""
    scan = _heap_scan(plan)
    index = (scan.get("Plans") or [{}])[0]
    read = scan.get("Shared Read Blocks", 0) - index.get("Shared Read Blocks", 0)
    hit = scan.get("Shared Hit Blocks", 0) - index.get("Shared Hit Blocks", 0)
    return {"time_ms": plan["Execution Time"], "parallel": bool(scan.get("Parallel Aware")),
            "workers": plan["Plan"].get("Plans", [{}])[0].get("Workers Launched"),
            "heap_read": read, "heap_hit": hit, "lossy": scan.get("Lossy Heap Blocks"),
            "exact": scan.get("Exact Heap Blocks")}


class ColdScan:
    """The table on one server, and cold runs of the query on it."""

    def __init__(self, ctx: RunContext, server: ContainerServer):
        self.server = server
        text = "\n".join(line for line in ctx.text("query.sql").splitlines() if not line.startswith("--"))
        self.query = pgsql.SQL(text.strip()).format(cutoff=pgsql.Literal(cutoff(ctx.params["rows"])))
        self.heap = relation_files(server, "foobar")
        self.files = self.heap + relation_files(server, "foobar_created_at_brin")

    def _cold(self) -> None:
        """Restart (shared_buffers empty), drop the files from the page cache."""
        self.server.restart({})
        evict(self.server, self.files)

    def measure(self, eic: int, workers: int) -> dict[str, Any]:
        self._cold()
        with psycopg.connect(self.server.conninfo(), autocommit=True) as conn:
            conn.execute("SELECT 1")  # the connection's own start-up reads stay out of the delta
            before = disk_reads(self.server)
            plan = _explain(conn, self.query, _session(self.server, eic, workers))
            device = disk_reads(self.server).since(before)
        name, requests, size = device or ("", 0, 0)
        return {**summarize_plan(plan), "device": name, "requests": requests, "device_bytes": size,
                "request_kb": size / requests / 1024 if requests else None}

    def trace(self, eic: int) -> dict[str, Any]:
        """A cold serial run under strace: the backend's (and on 18 the I/O workers') calls
        on the table's files."""
        self._cold()
        with psycopg.connect(self.server.conninfo(), autocommit=True) as conn:
            pids = [conn.execute("SELECT pg_backend_pid()").fetchone()[0]]
            if self.server.major >= 18:
                pids += [r[0] for r in conn.execute(
                    "SELECT pid FROM pg_stat_activity WHERE backend_type = 'io worker'")]
            with traced(self.server, pids) as trace:
                plan = _explain(conn, self.query, _session(self.server, eic, 0))
        calls = parse("\n".join(trace.lines), self.heap)
        scan = summarize_plan(plan)
        return {**calls.as_dict(), "heap_blocks": scan["heap_read"] + scan["heap_hit"],
                "heap_hit": scan["heap_hit"], "processes": len(pids), "tracer_died": trace.tracer_died}


def _load(server: ContainerServer, schema: str, rows: int) -> None:
    server.sql(pgsql.SQL(schema).format(rows=pgsql.Literal(rows)))
    server.sql("VACUUM (FREEZE, ANALYZE) foobar")  # hint bits set now, not during a measured run
    server.sql("CHECKPOINT")  # clean pages: only those can be dropped from the page cache


def run(ctx: RunContext) -> None:
    p = ctx.params
    ctx.step(f"a server with foobar ({p['rows']:,} rows of 900 bytes) and its BRIN index")
    server = ctx.server(Text("BRIN とビットマップヒープスキャン", "BRIN and bitmap heap scan"),
                        ctx.settings("postgresql.conf"), ptrace=True)
    _load(server, ctx.text("schema.sql"), p["rows"])
    ctx.record("relation_bytes", server.sql("SELECT pg_relation_size('foobar')")[0][0])
    ctx.record("io_method", server.sql("SELECT current_setting('io_method', true)")[0][0])
    scan = ColdScan(ctx, server)
    conditions = {name: (eic, 0) for name, eic in SERIAL.items()}
    if server.major >= 10:
        conditions |= {name: (eic, 2) for name, eic in PARALLEL.items()}
    ctx.step("each serial condition once under strace")
    ctx.record("trace", {name: scan.trace(eic) for name, eic in SERIAL.items()})
    ctx.rounds({name: (lambda n=name, c=cond: {n: scan.measure(*c)}) for name, cond in conditions.items()})
    device = ctx.raw["rounds"]["eic0"][0]["device"]
    ctx.record("read_ahead_kb", {"device": device, "kb": read_ahead_kb(server, device) if device else None})
