"""What runs on the servers: three servers on a private network, each pinned to one CPU
as if it were a host of its own: a single node with every index, and a publisher without
any full-text index whose tables a logical-replication subscriber (on the other CPU)
carries with the indexes.

Every server loads the same generated records (corpus.py). The single node has one table
per index kind and field for insert throughput, and one table per kind with both fields
indexed for the searches; the subscriber has the same search tables, the publisher the
same tables without index. Interleaved round by round: insert throughput (pgbench, one
client, a fixed number of inserts) per table and on the publisher, and each kind's
searches (every word on both fields, per-statement latency) on the single node and on the
subscriber, without and with 004's background insert rate into the searched table (on
the subscriber's side: into the publisher, replicated). Before the rounds: index sizes,
build times, hit counts and plans; during them: GIN pending lists and replication lag.
Before 10 (no logical replication) only the single node runs.

Against an existing server (--dsn), in a scratch database of the run there:
- runs: the single node's part, as before 10: insert throughput without and with each index
  kind, every kind's searches idle and under the background inserts, index sizes and build
  times, hit counts, plans and GIN pending lists (F1-F9). The kinds are those the server
  offers (pg_trgm too: it is an extension there) and the run's role may create (pg_trgm is
  trusted from 13, pg_bigm is not trusted); pg_trgm only where the database's character
  type gives it trigrams of Japanese (not in a C one). A kind left out is recorded with why
  (`left_out`), as the findings' requirements say; pending lists are counted only where the
  role may create pgstattuple and run pgstatginindex (`pending_lists`).
- does not run: the publisher and the subscriber (F10-F13: they need a second server of the
  run's own), the pinning to one CPU (pgbench runs in a helper container beside the server,
  not on one CPU with it), the CHECKPOINT before each size (the whole server's, not the
  run's) and a database-wide VACUUM (a superuser's would vacuum the shared catalogs too: the
  run vacuums its own tables). Settings a session may not set (shared_buffers, max_wal_size,
  max_connections) are the server's own, compared in the provenance.
"""
from __future__ import annotations

import re
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from typing import Any, Callable, ContextManager

import psycopg

from ...errors import ReproError
from ...lab import engine
from ...lab.harness import images
from ...lab.context import RunContext
from ...lab.poller import Poller
from ...lab.servers import ContainerServer, Server
from ...lab.wal import lsn
from ...text import Text
from . import corpus
from .conditions import (COLUMNS, FEATURE, IDLE, INDEXED, KINDS, LOADED, NONE, PGROONGA,
                         PUBLISHER_INGEST, SINGLE, SUBSCRIBER, TRGM, WORDS, field, ingest, ingest_table,
                         search, search_table)

SEED = 2017
PUBLISHED = "ingest_published"  # the publisher's insert-throughput table
SUBSCRIPTION = "fts"
CATCH_UP_TIMEOUT_S = 120
LEAD_S = 0.25  # the background inserts run this long before a search starts and after it ends
CLOCK_TICKS = 100  # USER_HZ of Linux's /proc/<pid>/stat
TRGM_PROBE = "美味しいカレーの作り方"  # the seed notes' probe: no trigram in a C-locale database
LOGICAL_REPLICATION = 10  # the first major with publications and subscriptions
EXTENSION = FEATURE | {TRGM: "pg_trgm"}  # against an existing server, every kind is one of its extensions


def sections(text: str, key: str) -> dict[str, str]:
    """The statement after each "-- key: name" line of a file, by name (comments dropped)."""
    parts = re.split(rf"^-- {key}: (\w+)\n", text, flags=re.M)
    return {name: " ".join(line for line in body.splitlines() if line and not line.startswith("--"))
            for name, body in zip(parts[1::2], parts[2::2])}


class Node:
    """One server of the topology and the SQL it runs on its tables."""

    def __init__(self, server: Server, ctx: RunContext):
        self.server = server
        self.ddl = sections(ctx.text("tables.sql"), "create")
        self.checkpoint = not ctx.external  # an existing server's checkpoints are not the run's

    def create(self, table: str, indexes: list[tuple[str, str]], rows: int, measure: bool = False,
               applied: bool = False) -> dict[str, dict[str, float]]:
        """A table with the first `rows` records of the pool and `indexes` ((kind, column)).
        With `measure`: how long each index took to build and how much it added to the
        database (the directory's growth counts PGroonga's Groonga files too, which
        pg_relation_size misses). With `applied`: the column that times the apply."""
        self.server.sql(self.ddl["table"].format(table=table))
        if applied:
            self.server.sql(self.ddl["applied"].format(table=table))
        self.server.sql(f"INSERT INTO {table} (tag, record) SELECT tag, record FROM pool WHERE id <= {rows}")
        built = {}
        for kind, column in indexes:
            size = self.size() if measure else 0
            start = time.monotonic()
            self.server.sql(self.ddl[kind].format(table=table, column=column))
            if measure:
                built[f"{kind}/{column}"] = {"build_s": time.monotonic() - start, "bytes": self.size() - size}
        return built

    def size(self) -> int:
        """The database's size. A CHECKPOINT first writes what the build left in shared
        buffers; without one (an existing server) the files were still extended as the
        index grew, which is what pg_database_size counts."""
        if self.checkpoint:
            self.server.sql("CHECKPOINT")  # what the build wrote is in the files
        return int(self.server.sql("SELECT pg_database_size(current_database())")[0][0])


def _prepare(server: ContainerServer, cpu: int, kinds: list[str], pool: list[str]) -> None:
    """Pin the container to one CPU, create the extensions and load the record pool."""
    server.docker.update(cpuset_cpus=str(cpu))
    for extension in ["pg_trgm", "pgstattuple", *(FEATURE[k] for k in kinds if k in FEATURE)]:
        server.sql(f"CREATE EXTENSION {extension}")
    _load_pool(server, pool)


def _created(server: Server, extension: str) -> bool:
    """Create an extension in an existing server's scratch database, if the role may (the
    server's template may carry it already); False if it may not."""
    try:
        server.sql(f"CREATE EXTENSION IF NOT EXISTS {extension}")
        return True
    except psycopg.errors.InsufficientPrivilege:
        return False


def _prepare_existing(ctx: RunContext, server: Server, kinds: list[str], pool: list[str]
                      ) -> tuple[list[str], bool]:
    """On an existing server: create the extensions its role may and load the record pool;
    return the kinds that can index the searches there, and whether GIN's pending lists can
    be counted. What is left out is recorded with why (the findings' requirements show it).
    No pinning: the server's CPUs are not the run's."""
    left_out: dict[str, dict[str, str]] = {}
    for kind in [k for k in kinds if k in EXTENSION]:
        name = EXTENSION[kind]
        if not ctx.has(name):
            left_out[kind] = Text(f"既存のサーバーに {name} がありません。", f"The existing server has no {name}.").as_dict()
        elif not _created(server, name):
            left_out[kind] = Text(f"実行のロールは {name} を作れません (信頼された拡張でなければ"
                                  f"スーパーユーザーだけが作れます。pg_trgm は 13 から信頼された拡張です)。",
                                  f"The run's role may not create {name} (only a superuser may create an extension "
                                  f"that is not trusted; pg_trgm is trusted from 13).").as_dict()
    if TRGM in kinds and TRGM not in left_out and _trigrams(server) == 0:
        ctype = server.sql("SELECT datctype FROM pg_database WHERE datname = current_database()")[0][0]
        left_out[TRGM] = Text(f"データベースの文字種別 ({ctype}) では pg_trgm は日本語からトライグラムを 1 つも取り出せず、"
                              f"インデックスは検索に使えません (UTF-8 の文字種別なら使えます)。",
                              f"In the database's character type ({ctype}) pg_trgm finds no trigram in Japanese text, so "
                              f"its index cannot serve the searches (a UTF-8 character type can).").as_dict()
    # GIN's pending lists are counted by pgstattuple's pgstatginindex, which is not trusted
    # and whose EXECUTE is granted only to pg_stat_scan_tables
    pending = ctx.has("pgstattuple") and _created(server, "pgstattuple") and server.sql(
        "SELECT has_function_privilege('pgstatginindex(regclass)', 'EXECUTE')")[0][0]
    for kind, why in left_out.items():
        ctx.step(f"{kind} left out: {why['en']}")
    if not pending:
        ctx.step("GIN's pending lists are not counted: the role may not create or run pgstattuple")
    ctx.record("left_out", left_out)
    ctx.record("pending_lists", pending)
    _load_pool(server, pool)
    return [k for k in kinds if k not in left_out], pending


def _trigrams(server: Server) -> int | None:
    """How many trigrams pg_trgm finds in the probe (None without pg_trgm): none in a
    database whose character type does not take Japanese characters as word characters."""
    if not server.sql("SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'"):
        return None
    return server.sql("SELECT cardinality(show_trgm(%s))", (TRGM_PROBE,))[0][0]


def _load_pool(server: Server, pool: list[str]) -> None:
    server.sql("CREATE TABLE pool (id int PRIMARY KEY, tag text, record jsonb)")
    with psycopg.connect(server.conninfo(), autocommit=True) as conn:
        with conn.cursor().copy("COPY pool (id, tag, record) FROM STDIN") as copy:
            for i, record in enumerate(pool, 1):
                copy.write_row((i, "nikoniko", record))


class Topology:
    """The single node, the publisher and the subscriber, with their tables loaded."""

    def __init__(self, ctx: RunContext, kinds: list[str]):
        p = ctx.params
        self.ctx, self.kinds, self.p = ctx, kinds, p
        self.replicated = ctx.major >= LOGICAL_REPLICATION and not ctx.external
        self.pending_lists = True  # GIN's pending lists can be counted
        settings = ctx.settings("postgresql.conf") | {"shared_buffers": p["shared_buffers"]}
        pool = list(corpus.records(SEED, p["rows"] + p["pool"], WORDS))
        if ctx.external:  # the single node only, in the run's scratch database
            self.single = ctx.server(Text("単一ノード", "single node"), settings)
            self.publisher = self.subscriber = None
            self.kinds, self.pending_lists = _prepare_existing(ctx, self.single, kinds, pool)
            return
        network = ctx.lab.network()
        cpus = engine.info().get("NCPU") or 1
        roles = {SINGLE: (Text("単一ノード", "single node"), settings, 0),
                 "publisher": (Text("パブリッシャ", "publisher"), settings | ctx.settings("publisher.conf"), 0),
                 SUBSCRIBER: (Text("サブスクライバ", "subscriber"), settings, 1)}

        def start(name: str) -> ContainerServer:
            role, conf, cpu = roles[name]
            server = ctx.lab.server(role, conf, network=network, alias=name)
            _prepare(server, cpu % cpus, kinds, pool)
            return server
        names = list(roles) if self.replicated else [SINGLE]
        with ThreadPoolExecutor(len(names)) as workers:
            started = dict(zip(names, workers.map(start, names)))
        self.single = started[SINGLE]
        self.publisher, self.subscriber = started.get("publisher"), started.get(SUBSCRIBER)

    def load(self) -> dict[str, dict[str, dict[str, float]]]:
        """Every table on every server, the three at once; the build time and size of the
        single node's indexes."""
        rows, kinds, indexed = self.p["rows"], self.kinds, self.indexed
        both = {k: [(k, c) for c in COLUMNS] if k != NONE else [] for k in kinds}
        single = Node(self.single, self.ctx)

        def load_single() -> dict[str, dict[str, dict[str, float]]]:
            tables = {ingest_table(NONE): [], **{ingest_table(k, c): [(k, c)] for k in indexed for c in COLUMNS},
                      **{search_table(k): both[k] for k in kinds}}
            return {table: single.create(table, indexes, rows, measure=True) for table, indexes in tables.items()}

        def load_publisher() -> None:
            publisher = Node(self.publisher, self.ctx)
            for table in [PUBLISHED, *(search_table(k) for k in kinds)]:
                publisher.create(table, [], rows)

        def load_subscriber() -> None:
            subscriber = Node(self.subscriber, self.ctx)
            subscriber.create(PUBLISHED, [(k, "description") for k in indexed], rows, applied=True)
            for kind in kinds:
                subscriber.create(search_table(kind), both[kind], rows)
        with ThreadPoolExecutor(3) as workers:
            built = workers.submit(load_single)
            for done in [workers.submit(f) for f in (load_publisher, load_subscriber) if self.replicated]:
                done.result()
            built = built.result()
        if self.ctx.external:  # the run's own tables: a superuser's database-wide VACUUM
            # would also vacuum the server's shared catalogs
            for table in ["pool", *built]:
                self.single.sql(f"VACUUM ANALYZE {table}")
        else:
            for server in self.servers:
                server.sql("VACUUM ANALYZE")
        return built

    @property
    def servers(self) -> list[Server]:
        return [s for s in (self.single, self.publisher, self.subscriber) if s is not None]

    @property
    def indexed(self) -> list[str]:
        return [k for k in self.kinds if k in INDEXED]

    def subscribe(self) -> None:
        """Publish the publisher's tables; the subscriber, loaded with the same rows, takes
        the changes from now on (no initial copy)."""
        tables = ", ".join([PUBLISHED, *(search_table(k) for k in self.kinds)])
        self.publisher.sql(f"CREATE PUBLICATION {SUBSCRIPTION} FOR TABLE {tables}")
        conninfo = f"host=publisher dbname=bench user=postgres password={self.ctx.lab.password}"
        self.subscriber.sql(f"CREATE SUBSCRIPTION {SUBSCRIPTION} CONNECTION '{conninfo}' "
                            f"PUBLICATION {SUBSCRIPTION} WITH (copy_data = false)")
        self.caught_up(self.position())

    def walsender_cpu_s(self) -> float:
        """CPU seconds the subscription's walsender (logical decoding) has used so far."""
        pid = self.publisher.sql("SELECT pid FROM pg_stat_replication WHERE application_name = %s",
                                 (SUBSCRIPTION,))[0][0]
        stat = self.publisher.run(["cat", f"/proc/{int(pid)}/stat"])
        fields = stat.rsplit(")", 1)[1].split()  # after the command name, which may hold spaces
        return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime + stime

    def position(self) -> int:
        return lsn(self.publisher.sql("SELECT pg_current_wal_lsn()::text")[0][0])

    def settle(self) -> None:
        """Before a run: the subscriber has applied everything (nothing to wait for before 10)."""
        if self.replicated:
            self.caught_up(self.position())

    def lag(self) -> ContextManager[LagPoller | None]:
        """Polls the subscriber's lag around a run; None before 10."""
        return LagPoller(self.publisher) if self.replicated else nullcontext()

    def caught_up(self, target: int) -> float:
        """Wait until the subscriber has applied the publisher's WAL up to `target`; seconds."""
        start = time.monotonic()
        while True:
            rows = self.publisher.sql("SELECT state, replay_lsn::text FROM pg_stat_replication "
                                      "WHERE application_name = %s", (SUBSCRIPTION,))
            if rows and rows[0][0] == "streaming" and rows[0][1] and lsn(rows[0][1]) >= target:
                return time.monotonic() - start
            if time.monotonic() - start > CATCH_UP_TIMEOUT_S:
                raise ReproError(f"the subscriber did not catch up within {CATCH_UP_TIMEOUT_S} s: {rows}")
            time.sleep(0.05)


class LagPoller(Poller):
    """How far the subscriber's apply is behind the publisher, every 100 ms."""

    QUERY = ("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)::bigint, "
             "extract(epoch FROM replay_lag)::float8 FROM pg_stat_replication WHERE application_name = %s")

    def __init__(self, publisher: ContainerServer) -> None:
        super().__init__(publisher, self.QUERY, (SUBSCRIPTION,), interval_s=0.1)
        self.most_bytes = 0
        self.most_s: float | None = None  # None while the server reports no replay_lag (NULL)

    def take(self, rows: list[tuple]) -> None:
        for behind, lag_s in rows:
            self.most_bytes = max(self.most_bytes, int(behind or 0))
            if lag_s is not None:
                self.most_s = max(self.most_s or 0.0, float(lag_s))


def _pending(server: Server, table: str) -> int:
    """Rows waiting in the GIN pending lists (fastupdate) of the table's GIN indexes."""
    rows = server.sql("SELECT coalesce(sum((pgstatginindex(i.indexrelid)).pending_tuples), 0)::bigint "
                      "FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam "
                      "WHERE i.indrelid = %s::regclass AND a.amname = 'gin'", (table,))
    return int(rows[0][0])


class Experiment:
    """The runs of one round, as functions returning their measurements."""

    def __init__(self, ctx: RunContext, topology: Topology):
        self.ctx, self.t, self.p = ctx, topology, ctx.params
        self.insert = ctx.text("insert.pgbench")
        self.queries = sections(ctx.text("search.sql"), "operator")
        rows = self.p["rows"]
        self.pool_range = ["-D", f"first={rows + 1}", "-D", f"last={rows + self.p['pool']}"]

    def statements(self, kind: str) -> list[tuple[str, str, str]]:
        """(column, word, SQL) of a kind's searches, in the search script's order."""
        query = self.queries[PGROONGA if kind == PGROONGA else "like"]
        return [(c, w, query.format(table=search_table(kind), column=c, word=w)) for c in COLUMNS for w in WORDS]

    def _inserts(self, server: Server, table: str, args: list[str]) -> Any:
        return server.pgbench(["-n", "-c", "1", *args, "-f", "/tmp/insert.pgbench", "-D", f"table={table}",
                               *self.pool_range], {"insert.pgbench": self.insert})

    def ingest(self, kind: str, column: str | None) -> Callable[[], dict]:
        table = ingest_table(kind, column)

        def one() -> dict[str, dict[str, float]]:
            self.t.settle()
            r = self._inserts(self.t.single, table, ["-t", str(self.p["inserts"])])
            return {ingest(kind, column): {"tps": r.tps}}
        return one

    def publisher_ingest(self) -> dict[str, dict[str, float]]:
        self.t.caught_up(self.t.position())
        walsender = self.t.walsender_cpu_s()
        since = self.t.publisher.sql("SELECT clock_timestamp()")[0][0]
        with LagPoller(self.t.publisher) as lag:
            r = self._inserts(self.t.publisher, PUBLISHED, ["-t", str(self.p["inserts"])])
        end = self.t.position()
        behind = end - lsn(self.t.publisher.sql(
            "SELECT replay_lsn::text FROM pg_stat_replication WHERE application_name = %s", (SUBSCRIPTION,))[0][0])
        catch_up_s = self.t.caught_up(end)
        walsender = (self.t.walsender_cpu_s() - walsender) / (self.p["inserts"] / r.tps)
        # both spans by the servers' own clocks (one kernel's), from the first insert: the
        # publisher's to its last insert, the subscriber's to its last apply; no step of the
        # harness (docker exec, pgbench's start, the polls) is in either
        rows, insert_s, apply_s = self.t.subscriber.sql(
            f"SELECT count(*), extract(epoch FROM max(inserted_at) - min(inserted_at))::float8, "
            f"extract(epoch FROM max(applied_at) - min(inserted_at))::float8 FROM {PUBLISHED} "
            f"WHERE inserted_at > %s", (since,))[0]
        if rows != self.p["inserts"] or not apply_s:
            raise ReproError(f"the subscriber applied {rows} of the publisher's {self.p['inserts']} inserts")
        return {PUBLISHER_INGEST: {"tps": r.tps, "lag_end_bytes": max(behind, 0), "lag_max_s": lag.most_s,
                                   "catch_up_s": catch_up_s, "walsender_cpu": walsender,
                                   "insert_s": insert_s, "apply_s": apply_s, "apply_rate": rows / apply_s}}

    def search(self, kind: str, where: str, load: str) -> Callable[[], dict]:
        statements = self.statements(kind)
        script = "\n".join(sql for _, _, sql in statements) + "\n"
        searched = self.t.single if where == SINGLE else self.t.subscriber
        loaded = self.t.single if where == SINGLE else self.t.publisher
        seconds = self.p["search_s"]

        def one() -> dict[str, dict[str, float]]:
            # every search starts with the index up to date: VACUUM empties GIN's pending
            # list (fastupdate), which otherwise keeps the rows of earlier runs
            for server in {loaded, searched} - {self.t.publisher}:
                server.sql(f"VACUUM {search_table(kind)}")
            self.t.settle()
            record: dict[str, float] = {}
            with ThreadPoolExecutor(1) as background, self.t.lag() as lag:
                inserts = None
                if load == LOADED:
                    count = round(self.p["rate"] * (seconds + 2 * LEAD_S))
                    inserts = background.submit(self._inserts, loaded, search_table(kind),
                                                ["-R", str(self.p["rate"]), "-t", str(count)])
                    time.sleep(LEAD_S)
                r = searched.pgbench(["-n", "-c", "1", "-r", "-T", str(seconds), "-f", "/tmp/search.sql"],
                                     {"search.sql": script})
                if self.t.pending_lists:
                    record["pending_tuples"] = _pending(searched, search_table(kind))
                if inserts is not None:
                    record["load_tps"] = inserts.result().tps
            if len(r.statements) != len(statements):
                raise ReproError(f"pgbench -r reported {len(r.statements)} statements, not {len(statements)}")
            record |= {field(c, w): s.latency_ms for (c, w, _), s in zip(statements, r.statements)}
            record["transactions"] = r.transactions
            if lag is not None:
                record |= {"lag_max_bytes": lag.most_bytes, "lag_max_s": lag.most_s}
            return {search(kind, where, load): record}
        return one

    def runs(self) -> dict[str, Callable[[], dict]]:
        runs = {ingest(NONE): self.ingest(NONE, None)}
        runs |= {ingest(k, c): self.ingest(k, c) for k in self.t.indexed for c in COLUMNS}
        if self.t.replicated:
            runs[PUBLISHER_INGEST] = self.publisher_ingest
        places = (SINGLE, SUBSCRIBER) if self.t.replicated else (SINGLE,)
        runs |= {search(k, w, load): self.search(k, w, load)
                 for k in self.t.kinds for w in places for load in (IDLE, LOADED)}
        return runs


def _mechanism(ctx: RunContext, topology: Topology, experiment: Experiment) -> None:
    """Before the rounds: the character type the trigrams need, the table's size, hit counts
    (every index against a scan without one) and the plan of every search."""
    single = topology.single
    ctype = single.sql("SELECT datctype FROM pg_database WHERE datname = current_database()")[0][0]
    trigrams = _trigrams(single)  # None only on an existing server without pg_trgm
    ctx.record("ctype", {"ctype": ctype, "trigrams": trigrams, "probe": TRGM_PROBE})
    ctx.record("table_bytes", single.sql("SELECT pg_table_size(%s)", (ingest_table(NONE),))[0][0])
    hits, plans = {}, {}
    for kind in topology.kinds:
        for column, word, sql in experiment.statements(kind):
            hits[f"{kind}/{column}:{word}"] = single.sql(sql)[0][0]
            plans[f"{kind}/{column}:{word}"] = "\n".join(r[0] for r in single.sql("EXPLAIN (COSTS OFF) " + sql))
    ctx.record("hits", hits)
    ctx.record("plans", plans)


def wanted(ctx: RunContext) -> list[str]:
    """The index kinds the image has (pg_trgm is contrib: always); against an existing server
    every kind, of which Topology keeps those the server and its role allow."""
    if ctx.external:
        return list(KINDS)
    features = images.resolve_image(ctx.major).features
    return [k for k in KINDS if k not in FEATURE or FEATURE[k] in features]


def run(ctx: RunContext) -> None:
    p = ctx.params
    if ctx.external:
        servers = ("the single node only, in a scratch database of the existing server (logical "
                   "replication needs a second server of the run's own); not pinned")
    else:
        servers = ("three servers, each" if ctx.major >= LOGICAL_REPLICATION
                   else "the single node only (no logical replication before 10),") + " on one CPU"
    ctx.step(f"{servers}; {p['rows'] + p['pool']} generated records")
    topology = Topology(ctx, wanted(ctx))
    kinds = topology.kinds
    ctx.record("kinds", kinds)
    ctx.step(f"tables of {p['rows']} records and their indexes ({', '.join(kinds)})")
    ctx.record("indexes", topology.load())
    if topology.replicated:
        ctx.step("logical replication: publisher to subscriber")
        topology.subscribe()
    experiment = Experiment(ctx, topology)
    _mechanism(ctx, topology, experiment)
    ctx.rounds(experiment.runs())
    ctx.record("rows", {table: topology.single.sql(f"SELECT count(*) FROM {table}")[0][0]
                        for table in (ingest_table(NONE), *(search_table(k) for k in kinds))})
