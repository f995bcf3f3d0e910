"""What runs on the servers: an internal server and two external ones on a private network,
004's join, UPDATE and INSERT run by pgbench against local tables or postgres_fdw foreign
tables, all conditions interleaved round by round. The foreign servers point where the run's
servers reach one another: containers by alias on the run's network, local clusters
(--server local) through the lab's socket directory, which only the run's user can enter.

A pattern is a search_path (files/fdw.sql): 004's statements stay verbatim and each table
name resolves to a local table or a foreign one. Before the rounds, every condition runs
once untimed (warm-up); then, untimed as well, each pattern's remote statements are counted
with pg_stat_statements on the external servers, each pattern's plan is kept (EXPLAIN
VERBOSE: the Remote SQL), and two concurrent UPDATEs of one row show what the remote
REPEATABLE READ does.

Against an existing server (--dsn), the three servers are three scratch databases of it,
and postgres_fdw loops back: the internal database's foreign servers ext1 and ext2 point at
the host and port where libpq reached the server, with ext1's and ext2's databases; the
remote sessions get the settings the external role may set (foreign server option
`options`). The user mappings carry the role's password (PGPASSWORD, .pgpass), so they are
created in a session that first turns off whatever would write their statement to the
server's log, pg_stat_statements or pg_stat_activity (QUIET, mostly superuser-only). There:

- runs: every condition, the plans and the two concurrent UPDATEs, where the loopback can
  be set up: a superuser role (CREATE EXTENSION postgres_fdw and QUIET need one), a server
  that has postgres_fdw and reaches itself at that host and port. Otherwise nothing is
  measured and the run records why ("usable": {"fdw": ...});
- runs where the server preloads pg_stat_statements (shared_preload_libraries, and CREATE
  EXTENSION works in the scratch databases; else "usable": {"counts": ...}): the remote
  statements' counts, as calls after each probe less those before in ext1's and ext2's
  databases, since an existing server's statistics are not this run's to reset;
- does not run: servers apart from one another (the loopback has no network between
  machines and one server's CPUs for all three roles: F4 is not judged there), and the
  settings only a server of its own takes (shared_buffers, max_connections,
  shared_preload_libraries: the result compares them with the server's,
  "unapplied_settings").
"""
from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, Callable

import psycopg
from psycopg import sql as pgsql
from psycopg.conninfo import conninfo_to_dict

from ...lab.context import RunContext
from ...lab.existing import ExternalServer
from ...lab.harness.waiting import until
from ...lab.servers import Server
from ...text import Text
from .conditions import BATCH_SIZE_MAJOR, Condition, conditions

PROBE_TRANSACTIONS = 200  # pgbench -t for counting remote statements
LOCK_WAIT_TIMEOUT_S = 10
# An existing server: the session that creates the user mappings (their password) first
# turns off what would write its statements to the server's log, to pg_stat_statements or
# to pg_stat_activity; each is set where the server has it (by major, loaded modules)
QUIET = {"log_statement": "none", "log_min_error_statement": "panic",
         "log_min_duration_statement": "-1", "log_min_duration_sample": "-1",
         "log_transaction_sample_rate": "0", "debug_print_parse": "off",
         "debug_print_rewritten": "off", "debug_print_plan": "off", "track_activities": "off",
         "pg_stat_statements.track": "none", "pgaudit.log": "none"}


def _start(ctx: RunContext) -> tuple[Server, dict[str, Server]]:
    """The internal server and ext1 (addrbook), ext2 (pgbench's tables and a second addrbook);
    against an existing server, a scratch database of it for each. Records what could be
    used ("usable": {"fdw", "counts"}: True, or why not)."""
    common = ctx.settings("postgresql.conf")
    external = common | ctx.settings("external.conf")
    network = None if ctx.external else ctx.lab.network()
    addrbook = ctx.text("addrbook.sql")
    roles = {"internal": (Text("内部サーバー", "internal server"), common),
             "ext1": (Text("外部サーバー 1 (addrbook)", "external server 1 (addrbook)"), external),
             "ext2": (Text("外部サーバー 2 (pgbench_accounts、pgbench_history)",
                           "external server 2 (pgbench_accounts, pgbench_history)"), external)}

    def start(alias: str) -> Server:
        role, settings = roles[alias]
        server = ctx.server(role, settings, network=network, alias=alias)
        if alias == "internal":
            server.sql("CREATE SCHEMA a_local; CREATE SCHEMA b_local")
            server.sql("SET search_path = a_local;" + addrbook)
            server.pgbench_init(1, options={"search_path": "b_local"})
        else:
            if not ctx.external:  # an existing server's is tried once the loopback works
                server.sql("CREATE EXTENSION pg_stat_statements")
            server.sql(addrbook)
            if alias == "ext2":
                server.pgbench_init(1)
        return server

    # one at a time against an existing server: Lab.external names its databases by count
    with ThreadPoolExecutor(1 if ctx.external else len(roles)) as pool:
        servers = dict(zip(roles, pool.map(start, roles)))
    internal = servers.pop("internal")
    if ctx.external:
        ctx.record("usable", _loopback(ctx, internal, servers))
        return internal, servers
    internal.sql("CREATE EXTENSION postgres_fdw")
    _peers(internal, servers)
    internal.sql(ctx.text("fdw.sql"))
    if internal.major >= BATCH_SIZE_MAJOR:
        internal.sql(ctx.text("batch.sql"))
    ctx.record("usable", {"fdw": True, "counts": True})
    return internal, servers


class Unusable(Exception):
    """What could not be set up on an existing server, and the server's message: recorded as
    "usable", not raised further."""

    def __init__(self, what: Text, message: str = "") -> None:
        super().__init__(what.en)
        ja, en = (f"{what.ja}: {message}", f"{what.en}: {message}") if message else (what.ja, what.en)
        self.why = {"ja": ja.rstrip("。.") + "。", "en": en[0].upper() + en[1:].rstrip(".") + "."}


@contextmanager
def _step(what: Text, secret: str | None = None) -> Iterator[None]:
    """A step the server may refuse: its error becomes Unusable, with `secret` masked should
    it ever appear in the message."""
    try:
        yield
    except psycopg.Error as exc:
        message = " ".join(filter(None, [exc.diag.message_primary or type(exc).__name__, exc.diag.message_detail]))
        message = " ".join(message.split())
        raise Unusable(what, message.replace(secret, "***") if secret else message) from None


def _loopback(ctx: RunContext, internal: Server, external: dict[str, Server]) -> dict[str, Any]:
    """postgres_fdw in the internal scratch database, ext1 and ext2 looping back to the same
    server, then fdw.sql's schemas (batch.sql's too); and whether pg_stat_statements counts
    there. {"fdw": True or why not, "counts": True or why not}."""
    try:
        if not ctx.has("postgres_fdw"):
            raise Unusable(Text("このロールは既存のサーバーに postgres_fdw を作れません (スーパーユーザーのロールと、"
                                "サーバーの postgres_fdw が要ります)",
                                "the role cannot create postgres_fdw on the existing server (that needs a "
                                "superuser role, and postgres_fdw on the server)"))
        with _step(Text("postgres_fdw を作れませんでした", "postgres_fdw could not be created")):
            internal.sql("CREATE EXTENSION postgres_fdw")
        _foreign_servers(internal, external)
        with _step(Text("サーバーが postgres_fdw で自分自身につなげませんでした",
                        "the server could not reach itself through postgres_fdw")):
            internal.sql(ctx.text("fdw.sql"))
            if internal.major >= BATCH_SIZE_MAJOR:
                internal.sql(ctx.text("batch.sql"))
    except Unusable as exc:
        return {"fdw": exc.why, "counts": exc.why}
    try:
        _counting(external)
    except Unusable as exc:
        return {"fdw": True, "counts": exc.why}
    return {"fdw": True, "counts": True}


def _options(settings: dict[str, str]) -> str:
    """Settings as libpq's options (-c k=v, a space in a value escaped)."""
    return " ".join(f"-c {k}={v.replace(' ', chr(92) + ' ')}" for k, v in settings.items())


def _create(conn: psycopg.Connection, template: str, name: str, options: dict[str, str | None]) -> None:
    """A foreign server or user mapping named `name`, with the options that have a value."""
    conn.execute(pgsql.SQL(template).format(name=pgsql.Identifier(name), options=pgsql.SQL(", ").join(
        pgsql.SQL("{} {}").format(pgsql.Identifier(k), pgsql.Literal(v)) for k, v in options.items() if v)))


def _peers(internal: Server, external: dict[str, Server]) -> None:
    """ext1 and ext2 where the run's servers reach one another (the lab's peer_conninfo: a
    container by its alias on the run's network, with the run's password; a local cluster
    through the lab's socket directory), each with a user mapping as that connection's user."""
    with psycopg.connect(internal.conninfo(), autocommit=True) as conn:
        for name, server in external.items():
            peer = conninfo_to_dict(server.peer_conninfo())
            _create(conn, "CREATE SERVER {name} FOREIGN DATA WRAPPER postgres_fdw OPTIONS ({options})", name,
                    {k: peer.get(k) for k in ("host", "port", "dbname")})
            _create(conn, "CREATE USER MAPPING FOR CURRENT_USER SERVER {name} OPTIONS ({options})", name,
                    {k: peer.get(k) for k in ("user", "password")})


def _foreign_servers(internal: Server, external: dict[str, Server]) -> None:
    """ext1 and ext2 at the host and port where libpq reached the server from here (DSN,
    service file, PG* variables), each with its scratch database and the session settings
    its role asked for (`options`: the remote sessions are that role's); the user mappings
    with the role and the password libpq used (PGPASSWORD, .pgpass), created in a QUIET
    session. The password goes nowhere else."""
    with psycopg.connect(internal.conninfo(), autocommit=True, connect_timeout=10) as conn:
        host, port, user, password = conn.info.host, str(conn.info.port), conn.info.user, conn.info.password
        with _step(Text("外部サーバーを作れませんでした", "the foreign servers could not be created")):
            for name, server in external.items():
                assert isinstance(server, ExternalServer)
                _create(conn, "CREATE SERVER {name} FOREIGN DATA WRAPPER postgres_fdw OPTIONS ({options})", name,
                        {"host": host, "port": port, "dbname": server.database, "options": _options(server.session)})
        with _step(Text("ユーザーマッピングのパスワードをサーバーのログから外せませんでした",
                        "the user mapping's password could not be kept out of the server's log")):
            present = [r[0] for r in conn.execute("SELECT name FROM pg_settings WHERE name = ANY(%s)", (list(QUIET),))]
            for key in present:
                conn.execute(pgsql.SQL("SET {} = {}").format(pgsql.Identifier(key), pgsql.Literal(QUIET[key])))
        with _step(Text("ユーザーマッピングを作れませんでした", "the user mappings could not be created"), password):
            for name in external:
                _create(conn, "CREATE USER MAPPING FOR CURRENT_USER SERVER {name} OPTIONS ({options})", name,
                        {"user": user, "password": password})


def _counting(external: dict[str, Server]) -> None:
    """Whether pg_stat_statements can count the remote statements (else Unusable): the server
    preloads it (shared_preload_libraries) and it can be created and read in ext1's and
    ext2's databases."""
    with _step(Text("pg_stat_statements を使えませんでした", "pg_stat_statements could not be used")):
        for server in external.values():
            preloaded = server.sql("SHOW shared_preload_libraries")[0][0]
            if "pg_stat_statements" not in [lib.strip().strip('"') for lib in preloaded.split(",")]:
                raise Unusable(Text(f"既存のサーバーは pg_stat_statements を読み込んでいません "
                                    f"(shared_preload_libraries = '{preloaded}')",
                                    f"the existing server does not preload pg_stat_statements "
                                    f"(shared_preload_libraries = '{preloaded}')"))
            server.sql("CREATE EXTENSION pg_stat_statements")
            server.sql("SELECT count(*) FROM pg_stat_statements")


def _pgbench(server: Server, c: Condition, clients: int, scripts: dict[str, str],
             duration: list[str]) -> Any:
    return server.pgbench(["-n", "-c", str(clients), "-j", str(min(clients, 2)), *duration,
                           "-f", f"/tmp/{c.script}.pgbench"],
                          {f"{c.script}.pgbench": scripts[c.script]}, options={"search_path": c.search_path})


def remote_statements(internal: Server, external: dict[str, Server], c: Condition,
                      scripts: dict[str, str], existing: bool = False) -> dict[str, Any]:
    """The statements each external server ran for PROBE_TRANSACTIONS transactions of one
    client: {server: {statement: calls}}; pg_stat_statements shows constants as $n. On an
    `existing` server, whose statistics hold every database's and are not this run's to
    reset, the calls in each external scratch database after the probe less those before."""
    if existing:
        before = {name: _calls(server) for name, server in external.items()}
    else:
        for server in external.values():
            server.sql("SELECT pg_stat_statements_reset()")
    _pgbench(internal, c, 1, scripts, ["-t", str(PROBE_TRANSACTIONS)])
    seen = {}
    for name, server in external.items():
        if existing:
            seen[name] = {query: calls - before[name].get(query, 0) for query, calls in _calls(server).items()
                          if calls > before[name].get(query, 0)}
            continue
        rows = server.sql("SELECT query, calls FROM pg_stat_statements "
                          "WHERE query NOT LIKE '%pg_stat_statements_reset%' ORDER BY calls DESC, query")
        seen[name] = {query: int(calls) for query, calls in rows}
    return {"transactions": PROBE_TRANSACTIONS, "statements": seen}


def _calls(server: Server) -> dict[str, int]:
    """Calls per statement in the server's (scratch) database, but this run's own reads."""
    rows = server.sql("SELECT query, sum(calls) FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database "
                      "WHERE datname = current_database()) AND query NOT LIKE '%pg_stat_statements%' "
                      "GROUP BY query ORDER BY sum(calls) DESC, query")
    return {query: int(calls) for query, calls in rows}


def plan(internal: Server, c: Condition, scripts: dict[str, str]) -> list[str]:
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


def _lock_waits(server: Server) -> int:
    """Sessions waiting for a lock in the server's database (an existing server has others)."""
    return int(server.sql("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                          "AND datname = current_database()")[0][0])


def concurrent_update(internal: Server, holder: Server, search_path: str) -> dict[str, Any]:
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
        until(lambda: _lock_waits(holder), LOCK_WAIT_TIMEOUT_S,
              f"the second UPDATE ({search_path}) never waited for the first's row lock", 0.02)
        first.commit()
    thread.join()
    return outcome


def run(ctx: RunContext) -> None:
    p = ctx.params
    ctx.step("internal, ext1 and ext2 as scratch databases of the existing server, postgres_fdw looping back; "
             "addrbook and pgbench -i -s 1" if ctx.external else
             "internal, ext1 and ext2 on a private network; addrbook and pgbench -i -s 1")
    internal, external = _start(ctx)
    if ctx.raw["usable"]["fdw"] is not True:  # every finding needs it: not applicable, and why
        ctx.step(f"nothing to measure: {ctx.raw['usable']['fdw']['en']}")
        return
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
    probed = {name: c for name, c in measured.items() if c.clients == 1}
    if ctx.raw["usable"]["counts"] is True:
        ctx.step(f"remote statements per transaction (pg_stat_statements, {PROBE_TRANSACTIONS} transactions)")
        ctx.record("remote", {key: remote_statements(internal, external, c, scripts, ctx.external)
                              for key, c in probed.items()})
    ctx.record("plans", {key: plan(internal, c, scripts) for key, c in probed.items()
                         if c.script != "bulk_insert"})
    ctx.step("two concurrent UPDATEs of one row, local and through postgres_fdw")
    ctx.record("concurrent_update", {"local": concurrent_update(internal, internal, "b_local"),
                                     "remote": concurrent_update(internal, external["ext2"], "b_remote")})
    ctx.rounds({name: measure(c) for name, c in measured.items()})
