"""What runs on the server: TPC-DS-derived tables at one scale factor (primary keys only,
prewarmed, as in 004), then Q10 and Q11's year_total at each worker count, timed with
EXPLAIN (ANALYZE) and interleaved round by round.

Q10's serial plan may scan web_sales and catalog_sales once per customer (a correlated
subplan): such a run is cut at the scale's cap by statement_timeout. Every condition runs
once first, a warm-up whose plan details (scans, sorts) are kept; a Q10 run cut there is
not repeated, since it would only give the cap again. Q11's year_total is cut out of
q11.sql and runs uncapped; at full scale the whole Q11 runs too, at each of year_total's
worker counts, cut at its own cap and repeated in the rounds like the rest. Whichever subplan ran shows in the leader's count of
sequential scans of web_sales (pg_stat_xact_user_tables, read in the same transaction
after the statement, finished or cancelled): one scan per run against one per customer.
"""
from __future__ import annotations

import json
import time
from typing import Any

import psycopg
from psycopg import sql as pgsql

from ...lab import tpcds
from ...lab.context import RunContext
from ...lab.servers import Server
from ...text import Text
from .conditions import TABLES, q10, q11, year_total

SCANNED = ("web_sales", "catalog_sales")  # the tables of Q10's OR-ed EXISTS subqueries


def _without_comments(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.startswith("--")).strip()


def cte_body(query: str, name: str) -> str:
    """The query inside `WITH name AS (...)`: up to the parenthesis that closes it."""
    opening = f"{name} as ("
    start = query.lower().index(opening) + len(opening)
    depth = 1
    for end, char in enumerate(query[start:], start):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0:
            return query[start:end].strip()
    raise ValueError(f"no closing parenthesis for {name}")


def _nodes(node: dict, under_gather: bool = False):
    """Every plan node with whether a Gather (Merge) above it runs it in parallel."""
    yield node, under_gather
    inside = under_gather or node["Node Type"] in ("Gather", "Gather Merge")
    for child in node.get("Plans", []):
        yield from _nodes(child, inside)


def _sorts(node: dict) -> list[dict]:
    """The leader's and each worker's sort: method, space used (kB) and where (Memory/Disk)."""
    found = [node] + [w for w in node.get("Workers", []) if "Sort Method" in w]
    return [{"method": s["Sort Method"], "kb": s.get("Sort Space Used"), "space": s.get("Sort Space Type")}
            for s in found if "Sort Method" in s]


def summarize_plan(plan: dict) -> dict[str, Any]:
    """What a timed run keeps of its plan: the time in parallel parts (Gather nodes not
    under another), workers launched, sorts, and the subplans that ran (loops)."""
    nodes = list(_nodes(plan["Plan"]))
    gathers = [n for n, under in nodes if n["Node Type"] in ("Gather", "Gather Merge") and not under]
    sorts = [s for n, _ in nodes if n["Node Type"] == "Sort" for s in _sorts(n)]
    return {"time_ms": plan["Execution Time"],
            "parallel_ms": sum(g["Actual Total Time"] for g in gathers),
            "launched": sum(g.get("Workers Launched", 0) for g in gathers),
            "sorts": sorts,
            "subplans": {n["Subplan Name"]: n.get("Actual Loops", 0) for n, _ in nodes if "Subplan Name" in n},
            # rows the EXISTS subplans were asked about (per-loop averages times loops)
            "evaluations": sum((n["Actual Rows"] + n.get("Rows Removed by Filter", 0)) * n["Actual Loops"]
                               for n, _ in nodes if "SubPlan" in n.get("Filter", ""))}


def subplan_costs(plan: dict) -> dict[str, float]:
    """Each subplan's estimated cost (plain EXPLAIN): before 14 both alternatives show."""
    return {n["Subplan Name"]: n["Total Cost"] for n, _ in _nodes(plan["Plan"]) if "Subplan Name" in n}


class Timed:
    """Runs of one query on the server, each in its own transaction and session settings."""

    def __init__(self, server: Server, cap_s: float = 0):
        self.server = server
        self.cap_s = cap_s  # statement_timeout; 0: none

    def _session(self, conn: psycopg.Connection, settings: dict[str, str]) -> None:
        for key, value in {**settings, "statement_timeout": f"{int(self.cap_s * 1000)}"}.items():
            conn.execute(pgsql.SQL("SET LOCAL {} = {}").format(pgsql.Identifier(key), pgsql.Literal(value)))

    def explain(self, query: str, settings: dict[str, str]) -> tuple[dict, str]:
        """The plan without running it: as JSON, and as text for the page."""
        with psycopg.connect(self.server.conninfo()) as conn:
            self._session(conn, settings)
            plan = _json(conn.execute(pgsql.SQL("EXPLAIN (FORMAT JSON) ") + pgsql.SQL(query)).fetchone()[0])
            text = "\n".join(row[0] for row in conn.execute(pgsql.SQL("EXPLAIN ") + pgsql.SQL(query)))
        return plan, text

    def run(self, query: str, settings: dict[str, str]) -> dict[str, Any]:
        with psycopg.connect(self.server.conninfo()) as conn:
            self._session(conn, settings)
            conn.execute("SAVEPOINT timed")
            start = time.monotonic()
            try:
                plan = _json(conn.execute(pgsql.SQL("EXPLAIN (ANALYZE, FORMAT JSON) ") + pgsql.SQL(query)).fetchone()[0])
                record = {**summarize_plan(plan), "cancelled": False}
            except psycopg.errors.QueryCanceled:
                conn.execute("ROLLBACK TO SAVEPOINT timed")
                record = {"time_ms": (time.monotonic() - start) * 1000, "cancelled": True}
            scans = dict(conn.execute("SELECT relname, seq_scan FROM pg_stat_xact_user_tables "
                                      "WHERE relname = ANY(%s)", (list(SCANNED),)).fetchall())
        return {**record, "scans": {t: scans.get(t, 0) for t in SCANNED}}


def _json(value: Any) -> dict:
    return (json.loads(value) if isinstance(value, str) else value)[0]


def _prepare(ctx: RunContext, server: Server, data: dict) -> None:
    server.sql(ctx.text("schema.sql"))
    tpcds.load(server, data, TABLES)
    server.sql(ctx.text("primary_keys.sql"))
    server.sql("VACUUM (FREEZE, ANALYZE)")
    server.sql("CREATE EXTENSION pg_prewarm")
    ctx.record("prewarmed", dict(server.sql(ctx.text("prewarm.sql"))))


def run(ctx: RunContext) -> None:
    p = ctx.params
    ctx.step(f"TPC-DS-derived tables at scale factor {p['sf']:g} (generated once, then cached)")
    data = tpcds.dataset(TABLES, p["sf"])
    ctx.record("data", {k: v for k, v in data.items() if k != "directory"})
    settings = ctx.settings("postgresql.conf")
    if ctx.major < 10:
        settings.pop("max_parallel_workers")  # 10 brought it
    server = ctx.server(Text("TPC-DS 由来のデータ", "TPC-DS-derived data"), settings, shm_size="2g")
    _prepare(ctx, server, data)
    ctx.record("relation_bytes", dict(server.sql(
        "SELECT relname, pg_total_relation_size(oid) FROM pg_class WHERE relname = ANY(%s)", (TABLES,))))

    def session(workers: int, extra: dict[str, str] | None = None) -> dict[str, str]:
        jit = {"jit": "off"} if ctx.major >= 11 else {}  # the original (9.6, 10) had none
        return {"max_parallel_workers_per_gather": str(workers), **jit, **(extra or {})}

    capped, uncapped = Timed(server, p["cap_s"]), Timed(server)
    queries = {"q10": _without_comments(ctx.text("q10.sql")).rstrip(";"),
               "q11": _without_comments(ctx.text("q11.sql")).rstrip(";")}
    queries["year_total"] = cte_body(queries["q11"], "year_total")
    body = {"enable_hashagg": "off", "work_mem": p["year_total_work_mem"]}  # 2017's plan shape
    runs = {q10(w): (capped, queries["q10"], session(w)) for w in p["workers"]}
    runs |= {year_total(w): (uncapped, queries["year_total"], session(w, body)) for w in p["year_total_workers"]}
    if p.get("q11_cap_s"):  # the whole Q11 (full scale only), repeated in the rounds like the rest
        full = Timed(server, p["q11_cap_s"])
        runs |= {q11(w): (full, queries["q11"], session(w)) for w in p["year_total_workers"]}

    def measure(name: str) -> dict[str, Any]:
        timed, query, settings = runs[name]
        return timed.run(query, settings)

    ctx.step("each condition's plan (EXPLAIN)")
    plans = {name: timed.explain(query, settings) for name, (timed, query, settings) in runs.items()}
    ctx.record("q10_costs", {name: subplan_costs(plan) for name, (plan, _) in plans.items()
                             if name.startswith("q10")})
    ctx.record("plans", {name: text for name, (_, text) in plans.items()})
    ctx.step(f"every condition once, a warm-up that counts only when cut (Q10 at {p['cap_s']:g} s)")
    first = {name: measure(name) for name in runs}
    ctx.record("first", first)
    repeat = {name: (lambda n=name: {n: measure(n)}) for name in runs if not first[name]["cancelled"]}
    ctx.rounds(repeat)
