"""What runs on the servers: an internal server and two external ones on a private network,
004's join, UPDATE and INSERT run by pgbench against local tables or postgres_fdw foreign
tables, all conditions interleaved round by round.

A pattern is a search_path (files/fdw.sql): 004's statements stay verbatim and each table
name resolves to a local table or a foreign one. Before the rounds, every condition runs
once untimed (warm-up); then, untimed as well, each pattern's remote statements are counted
with pg_stat_statements on the external servers, each pattern's plan is kept (EXPLAIN
VERBOSE: the Remote SQL), and two concurrent UPDATEs of one row show what the remote
REPEATABLE READ does.
"""
from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

import psycopg
from psycopg import sql as pgsql

from ...errors import ReproError
from ...lab.context import RunContext
from ...lab.servers import ContainerServer
from ...text import Text
from .conditions import BATCH_SIZE_MAJOR, Condition, conditions

PROBE_TRANSACTIONS = 200  # pgbench -t for counting remote statements
LOCK_WAIT_TIMEOUT_S = 10


def _start(ctx: RunContext) -> tuple[ContainerServer, dict[str, ContainerServer]]:
    """The internal server and ext1 (addrbook), ext2 (pgbench's tables and a second addrbook)."""
    common = ctx.settings("postgresql.conf")
    external = common | ctx.settings("external.conf")
    network = ctx.lab.network()
    addrbook = ctx.text("addrbook.sql")
    roles = {"internal": (Text("内部サーバー", "internal server"), common),
             "ext1": (Text("外部サーバー 1 (addrbook)", "external server 1 (addrbook)"), external),
             "ext2": (Text("外部サーバー 2 (pgbench_accounts、pgbench_history)",
                           "external server 2 (pgbench_accounts, pgbench_history)"), external)}

    def start(alias: str) -> ContainerServer:
        role, settings = roles[alias]
        server = ctx.lab.server(role, settings, network=network, alias=alias)
        if alias == "internal":
            server.sql("CREATE SCHEMA a_local; CREATE SCHEMA b_local")
            server.sql("SET search_path = a_local;" + addrbook)
            server.pgbench_init(1, options={"search_path": "b_local"})
        else:
            server.sql("CREATE EXTENSION pg_stat_statements")
            server.sql(addrbook)
            if alias == "ext2":
                server.pgbench_init(1)
        return server

    with ThreadPoolExecutor(len(roles)) as pool:
        servers = dict(zip(roles, pool.map(start, roles)))
    internal = servers.pop("internal")
    password = pgsql.Literal(ctx.lab.password)
    internal.sql(pgsql.SQL(ctx.text("fdw.sql")).format(password=password))
    if internal.major >= BATCH_SIZE_MAJOR:
        internal.sql(ctx.text("batch.sql"))
    return internal, servers


def _pgbench(server: ContainerServer, c: Condition, clients: int, scripts: dict[str, str],
             duration: list[str]) -> Any:
    return server.pgbench(["-n", "-c", str(clients), "-j", str(min(clients, 2)), *duration,
                           "-f", f"/tmp/{c.script}.pgbench"],
                          {f"{c.script}.pgbench": scripts[c.script]}, options={"search_path": c.search_path})


def remote_statements(internal: ContainerServer, external: dict[str, ContainerServer], c: Condition,
                      scripts: dict[str, str]) -> dict[str, Any]:
    """The statements each external server ran for PROBE_TRANSACTIONS transactions of one
    client: {server: {statement: calls}}; pg_stat_statements shows constants as $n."""
    for server in external.values():
        server.sql("SELECT pg_stat_statements_reset()")
    _pgbench(internal, c, 1, scripts, ["-t", str(PROBE_TRANSACTIONS)])
    seen = {}
    for name, server in external.items():
        rows = server.sql("SELECT query, calls FROM pg_stat_statements "
                          "WHERE query NOT LIKE '%pg_stat_statements_reset%' ORDER BY calls DESC, query")
        seen[name] = {query: int(calls) for query, calls in rows}
    return {"transactions": PROBE_TRANSACTIONS, "statements": seen}


def plan(internal: ContainerServer, c: Condition, scripts: dict[str, str]) -> list[str]:
    """EXPLAIN VERBOSE of the condition's statement with its variables set to 42."""
    statement = "\n".join(line for line in scripts[c.script].splitlines()
                          if not line.startswith(("\\", "--")))
    for var in ("id", "int_a", "int_b", "int_c"):
        statement = statement.replace(f":{var}", "42")
    with psycopg.connect(internal.conninfo(), autocommit=False) as conn:
        conn.execute(pgsql.SQL("SET search_path = {}").format(pgsql.SQL(c.search_path)))
        rows = conn.execute("EXPLAIN VERBOSE " + statement.rstrip().rstrip(";")).fetchall()
        conn.rollback()
    return [r[0] for r in rows]


def _lock_waits(server: ContainerServer) -> int:
    return int(server.sql("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'")[0][0])


def concurrent_update(internal: ContainerServer, holder: ContainerServer, search_path: str) -> dict[str, Any]:
    """Two sessions UPDATE the same row; the second waits for the first's row lock, then the
    first commits. Locally (READ COMMITTED) the second then updates the new row version; through
    postgres_fdw its remote transaction is REPEATABLE READ. Returns the second's SQLSTATE."""
    update = "UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = 1"
    outcome: dict[str, Any] = {}

    def second() -> None:
        try:
            with psycopg.connect(internal.conninfo()) as conn:
                conn.execute(pgsql.SQL("SET search_path = {}").format(pgsql.SQL(search_path)))
                conn.execute(update)
                conn.commit()
            outcome["sqlstate"] = None
        except psycopg.Error as exc:
            outcome["sqlstate"], outcome["message"] = exc.sqlstate, str(exc).splitlines()[0]

    with psycopg.connect(internal.conninfo()) as first:
        first.execute(pgsql.SQL("SET search_path = {}").format(pgsql.SQL(search_path)))
        first.execute(update)
        thread = threading.Thread(target=second)
        thread.start()
        deadline = time.monotonic() + LOCK_WAIT_TIMEOUT_S
        while _lock_waits(holder) == 0:
            if time.monotonic() > deadline:
                raise ReproError(f"the second UPDATE ({search_path}) never waited for the first's row lock")
            time.sleep(0.02)
        first.commit()
    thread.join()
    return outcome


def run(ctx: RunContext) -> None:
    p = ctx.params
    ctx.step("internal, ext1 and ext2 on a private network; addrbook and pgbench -i -s 1")
    internal, external = _start(ctx)
    scripts = {name: ctx.text(f"{name}.pgbench") for name in ("select", "update", "insert", "bulk_insert")}
    measured = conditions(internal.major, p["clients"])

    def measure(c: Condition) -> Callable[[], dict[str, dict[str, Any]]]:
        def one() -> dict[str, dict[str, Any]]:
            r = _pgbench(internal, c, c.clients, scripts, ["-T", str(p["seconds"])])
            return {c.name: {"tps": r.tps, "latency_ms": r.latency_avg_ms, "failed": r.failed}}
        return one

    ctx.step("warm-up: every condition once, untimed")
    for c in measured.values():
        _pgbench(internal, c, c.clients, scripts, ["-T", str(p["warmup_s"])])
    ctx.step(f"remote statements per transaction (pg_stat_statements, {PROBE_TRANSACTIONS} transactions)")
    probed = {name: c for name, c in measured.items() if c.clients == 1}
    ctx.record("remote", {key: remote_statements(internal, external, c, scripts) for key, c in probed.items()})
    ctx.record("plans", {key: plan(internal, c, scripts) for key, c in probed.items()
                         if c.script != "bulk_insert"})
    ctx.step("two concurrent UPDATEs of one row, local and through postgres_fdw")
    ctx.record("concurrent_update", {"local": concurrent_update(internal, internal, "b_local"),
                                     "remote": concurrent_update(internal, external["ext2"], "b_remote")})
    ctx.rounds({name: measure(c) for name, c in measured.items()})
