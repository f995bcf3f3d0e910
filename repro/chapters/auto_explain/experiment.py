"""What runs on the servers: the two publications' experiments, re-run side by side.

- 000: a 1-row query and a 1e6-row count under pgbench custom scripts, one client;
  auto_explain loaded, EXPLAIN, ANALYZE, ANALYZE without timing, log output on/off,
  parallel query on/off. Conditions that differ only in auto_explain's settings run as
  scripts of one pgbench run, each script setting them with set_config() before its
  query, so pgbench interleaves them transaction by transaction. "Not loaded" runs on a
  twin server without shared_preload_libraries, compared by alternating short runs.
- 001: pgbench TPC-B, 4 clients: logging every plan, a 10 ms threshold, analyze with
  and without timing, every option; the baseline on the twin server.

Against an existing server (--dsn), one scratch database runs 000's conditions that log
nothing (loaded, EXPLAIN, ANALYZE, ANALYZE without timing; 1-row query and count, parallel
on and off), auto_explain loaded per session through session_preload_libraries, which
needs a superuser role (the run records whether it was loaded: "session_load"). It does not
run what needs a server of its own: "not loaded vs preloaded" (shared_preload_libraries and
a twin server), the conditions that write every plan to the server's log (000's log output,
all of 001), and pg_test_timing (a program on the server's machine).
"""
from __future__ import annotations

from collections.abc import Callable
from statistics import median
from typing import Any

from ...errors import ReproError
from ...lab.context import RunContext
from ...lab.pgtools import parse_test_timing
from ...lab.servers import Server
from ...text import Text

PRELOAD = {"shared_preload_libraries": "auto_explain"}
SESSION_LOAD = {"session_preload_libraries": "auto_explain"}  # an existing server: per session
LOGS = ("explain_log", "analyze_log")  # write every plan to the server's log
ATTEMPTS = 3  # pgbench runs of _mixed before a reading of 0 ms stops the run
NO_OUTPUT = {"auto_explain.log_min_duration": "10000"}  # 10 s: no query here is that slow
ANALYZE = {"auto_explain.log_analyze": "on"}
CONDITIONS_000 = {  # the settings of each condition, on top of SESSION_DEFAULTS
    "loaded": {},
    "explain": NO_OUTPUT,
    "analyze": {**NO_OUTPUT, **ANALYZE},
    "analyze_no_timing": {**NO_OUTPUT, **ANALYZE, "auto_explain.log_timing": "off"},
    "explain_log": {"auto_explain.log_min_duration": "0"},
    "analyze_log": {"auto_explain.log_min_duration": "0", **ANALYZE},
}
COUNT_CONDITIONS = ("loaded", "explain", "analyze", "analyze_no_timing")
SERIAL = {"max_parallel_workers_per_gather": "0"}
# Every script sets all of these, so a transaction never inherits the previous script's
# state; on a server without auto_explain they are harmless placeholder variables.
SESSION_DEFAULTS = {"auto_explain.log_min_duration": "-1", "auto_explain.log_analyze": "off",
                    "auto_explain.log_timing": "on", "max_parallel_workers_per_gather": "2"}
THRESHOLD_10MS = {"auto_explain.sample_rate": "1", "auto_explain.log_min_duration": "10"}
CONDITIONS_001 = {
    "log_all": {"auto_explain.sample_rate": "1", "auto_explain.log_min_duration": "0"},
    "threshold": THRESHOLD_10MS,
    "analyze_no_timing": {**THRESHOLD_10MS, **ANALYZE, "auto_explain.log_timing": "off"},
    "analyze_timing": {**THRESHOLD_10MS, **ANALYZE, "auto_explain.log_timing": "on"},
    "everything": {**THRESHOLD_10MS, **ANALYZE, "auto_explain.log_timing": "on",
                   "auto_explain.log_buffers": "on", "auto_explain.log_verbose": "on",
                   "auto_explain.log_triggers": "on", "auto_explain.log_settings": "on",
                   "auto_explain.log_nested_statements": "on", "auto_explain.log_format": "json"},
}


def _script(query: str, settings: dict[str, str]) -> str:
    """One condition as a pgbench script: a set_config() statement, then the measured query."""
    values = {**SESSION_DEFAULTS, **settings}
    sets = ", ".join(f"set_config('{k}', '{v}', false)" for k, v in values.items())
    return f"SELECT {sets};\n{query}"


def _run_scripts(server: Server, queries: dict[str, str], query: str,
                 conditions: dict[str, dict[str, str]], tx_each: int) -> dict[str, float]:
    """One pgbench run of several conditions, one script each, chosen at random per
    transaction: the finest interleaving there is. Returns the query's own latency (pgbench
    -r, the script's last statement) for each condition."""
    files = {f"{query}-{name.replace('/', '-')}.sql": (name, _script(queries[query], settings))
             for name, settings in conditions.items()}
    args = ["-n", "-r", "-c", "1", "-j", "1", "-t", str(tx_each * len(files))]
    for file in files:
        args += ["-f", f"/tmp/{file}@1"]
    result = server.pgbench(args, {f: text for f, (_, text) in files.items()})
    scripts = result.scripts or {f"/tmp/{next(iter(files))}": result.statements}
    return {files[path.removeprefix("/tmp/")][0]: statements[-1].latency_ms
            for path, statements in scripts.items()}


def _mixed(server: Server, queries: dict[str, str], query: str,
           conditions: dict[str, dict[str, str]], tx_each: int) -> dict[str, dict[str, float]]:
    """_run_scripts, run again while a condition reads 0 ms, ATTEMPTS times in all. A reading
    of 0 ms measured nothing: no transaction picked that script (64 count transactions over
    8 scripts leave one out in about one round in 650, one default run in 100), or every
    result was in when pgbench first looked for it, so the statement began and ended at one
    reading of its clock, which happens when another process had pgbench's CPU."""
    for _ in range(ATTEMPTS):
        readings = _run_scripts(server, queries, query, conditions, tx_each)
        unmeasured = [name for name, ms in readings.items() if ms <= 0]
        if not unmeasured:
            return {name: {"latency_ms": ms} for name, ms in readings.items()}
    raise ReproError(f"pgbench -r read {query}.sql's query under {unmeasured[0]} at 0 ms in each of {ATTEMPTS} "
                     "runs: no transaction picked its script, or another process had pgbench's CPU when "
                     "the result came in; measure on a quiet machine")


def _tab1(rows: int, queries: dict[str, str]) -> Callable[[Server], None]:
    def prepare(server: Server) -> None:
        server.sql("CREATE TABLE tab1(c1 INTEGER)")
        server.sql("INSERT INTO tab1 SELECT generate_series(1, %s)", (rows,))
        server.sql("VACUUM ANALYZE tab1")
        for query, tx in (("limit", 500), ("count", 3)):
            _run_scripts(server, queries, query, {"warm-up": {}}, tx)  # caches, parallel workers
    return prepare


def _alternate(plain: Server, loaded: Server, queries: dict[str, str], tx: int, times: int
               ) -> dict[str, dict[str, Any]]:
    """F1 compares two servers, which one pgbench run cannot: short runs of the 1-row
    query alternate between them (ABBA...). Each pair of neighbouring runs gives one
    change; the findings pool the pairs of a round, which is steadier than comparing
    per-round medians."""
    sides: dict[str, list[float]] = {"limit/not_loaded": [], "limit/preloaded": []}
    order = [("limit/not_loaded", plain), ("limit/preloaded", loaded)]
    for i in range(times):
        for name, server in order if i % 2 == 0 else order[::-1]:
            sides[name].append(_mixed(server, queries, "limit", {name: {}}, tx)[name]["latency_ms"])
    pairs = [(b / a - 1) * 100 for a, b in zip(sides["limit/not_loaded"], sides["limit/preloaded"])]
    return {"limit/not_loaded": {"latency_ms": median(sides["limit/not_loaded"])},
            "limit/preloaded": {"latency_ms": median(sides["limit/preloaded"]),
                                "pair_changes_pct": pairs}}


def _run_existing(ctx: RunContext) -> None:
    """000's conditions that log nothing, in a scratch database of an existing server."""
    p = ctx.params
    queries = {"limit": ctx.text("limit.sql"), "count": ctx.text("count.sql")}
    ctx.step(f"a scratch database with tab1 ({p['rows']:,} rows), auto_explain loaded per session")
    loaded = ctx.server(Text("原典 1、auto_explain をセッションで読み込む", "publication 1, auto_explain loaded per session"),
                        {**ctx.settings("postgresql-000.conf"), **SESSION_LOAD})
    ctx.record("session_load", bool(loaded.sql("SELECT count(*) FROM pg_settings WHERE vartype = 'integer' AND name = "
                                               "'auto_explain.log_min_duration'")[0][0]))
    if not ctx.raw["session_load"]:
        return
    _tab1(p["rows"], queries)(loaded)
    limit = {f"limit/{c}": o for c, o in CONDITIONS_000.items() if c not in LOGS}
    count = {f"count_parallel/{c}": CONDITIONS_000[c] for c in COUNT_CONDITIONS}
    count |= {f"count_serial/{c}": {**CONDITIONS_000[c], **SERIAL} for c in COUNT_CONDITIONS}
    ctx.rounds({"1-row query, 4 conditions": lambda: _mixed(loaded, queries, "limit", limit, p["limit_tx"]),
                "count, 8 conditions": lambda: _mixed(loaded, queries, "count", count, p["count_tx"])})


def _run_000(ctx: RunContext) -> None:
    p = ctx.params
    queries = {"limit": ctx.text("limit.sql"), "count": ctx.text("count.sql")}
    settings = ctx.settings("postgresql-000.conf")
    ctx.step(f"two servers with tab1 ({p['rows']:,} rows), one preloading auto_explain")
    plain, loaded = ctx.servers({Text("原典 1、auto_explain なし", "publication 1, auto_explain not loaded"): settings,
                                 Text("原典 1、auto_explain を読み込む", "publication 1, auto_explain preloaded"):
                                     {**settings, **PRELOAD}},
                                _tab1(p["rows"], queries))
    limit = {f"limit/{c}": o for c, o in CONDITIONS_000.items()}
    count = {f"count_parallel/{c}": CONDITIONS_000[c] for c in COUNT_CONDITIONS}
    count |= {f"count_serial/{c}": {**CONDITIONS_000[c], **SERIAL} for c in COUNT_CONDITIONS}
    ctx.rounds({
        "1-row query, not loaded vs preloaded":
            lambda: _alternate(plain, loaded, queries, p["limit_tx"] // p["alternations"],
                               p["alternations"]),
        "1-row query, 6 conditions": lambda: _mixed(loaded, queries, "limit", limit, p["limit_tx"]),
        "count, 8 conditions": lambda: _mixed(loaded, queries, "count", count, p["count_tx"]),
    })


def _run_001(ctx: RunContext) -> Server:
    p = ctx.params
    settings = ctx.settings("postgresql-001.conf")
    ctx.step(f"two servers with pgbench -i -s {p['tpcb_scale']}, one preloading auto_explain")
    clients = ["-c", str(p["tpcb_clients"])]

    def prepare(server: Server) -> None:
        server.pgbench_init(p["tpcb_scale"])
        server.pgbench([*clients, "-T", "1"])  # warm-up

    plain, loaded = ctx.servers({Text("原典 2、TPC-B、auto_explain なし", "publication 2, TPC-B, auto_explain not loaded"):
                                     settings,
                                 Text("原典 2、TPC-B、auto_explain を読み込む", "publication 2, TPC-B, auto_explain preloaded"):
                                     {**settings, **PRELOAD}},
                                prepare)

    def tpcb(server: Server, condition: str, options: dict[str, str]) -> Callable:
        def one() -> dict[str, dict[str, float]]:
            # -n: no VACUUM before each run (pgbench -i vacuumed); keeps runs short
            r = server.pgbench(["-n", *clients, "-T", str(p["tpcb_seconds"])], options=options)
            return {condition: {"latency_ms": r.latency_avg_ms, "tps": r.tps}}
        return one

    runs = {"tpcb/baseline": tpcb(plain, "tpcb/baseline", {})}
    runs |= {f"tpcb/{c}": tpcb(loaded, f"tpcb/{c}", o) for c, o in CONDITIONS_001.items()}
    ctx.rounds(runs)
    return loaded


def run(ctx: RunContext) -> None:
    if ctx.external:
        _run_existing(ctx)
        return
    _run_000(ctx)
    server = _run_001(ctx)
    ctx.step("pg_test_timing")
    ctx.record("pg_test_timing", parse_test_timing(
        server.run(["pg_test_timing", "-d", str(ctx.params["timing_s"])])))
