"""The servers of the chapter fulltext as the experiment sets them up: the single node, and
from 10 the publisher and its logical-replication subscriber, each pinned to one CPU, with
their extensions, the record pool and the tables loaded (against an existing server: the
single node only, in the run's scratch database, with the kinds its role may create); the
subscription, its catch-up and its lag.
"""
from __future__ import annotations

import re
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from typing import ContextManager

import psycopg

from ...lab.context import RunContext
from ...lab.harness.waiting import until
from ...lab.lag import LagPoller
from ...lab.servers import Server
from ...lab.wal import lsn
from ...text import Text
from . import corpus
from .conditions import (COLUMNS, FEATURE, INDEXED, NONE, SINGLE, SUBSCRIBER, TRGM, WORDS,
                         ingest_table, search_table)

SEED = 2017
PUBLISHED = "ingest_published"  # the publisher's insert-throughput table
SUBSCRIPTION = "fts"
CATCH_UP_TIMEOUT_S = 120
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


def _prepare(server: Server, cpu: int, kinds: list[str], pool: list[str]) -> None:
    """Run the server on one CPU, create the extensions and load the record pool."""
    server.confine(cpu)
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
        cpus = ctx.engine_cpus() or 1
        roles = {SINGLE: (Text("単一ノード", "single node"), settings, 0),
                 "publisher": (Text("パブリッシャ", "publisher"), settings | ctx.settings("publisher.conf"), 0),
                 SUBSCRIBER: (Text("サブスクライバ", "subscriber"), settings, 1)}

        def start(name: str) -> Server:
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
        conninfo = self.publisher.peer_conninfo()
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
        """Polls the subscriber's lag around a run, every sample while the subscription's
        walsender is connected (its clients: the searches run on the subscriber, not on the
        publisher where lag is read); None before 10."""
        return LagPoller(self.publisher, [SUBSCRIPTION], SUBSCRIPTION) if self.replicated else nullcontext()

    def caught_up(self, target: int) -> float:
        """Wait until the subscriber has applied the publisher's WAL up to `target`; seconds."""
        start, seen = time.monotonic(), []

        def applied() -> bool:
            seen[:] = self.publisher.sql("SELECT state, replay_lsn::text FROM pg_stat_replication "
                                         "WHERE application_name = %s", (SUBSCRIPTION,))
            return bool(seen and seen[0][0] == "streaming" and seen[0][1] and lsn(seen[0][1]) >= target)
        until(applied, CATCH_UP_TIMEOUT_S,
              lambda: f"the subscriber did not catch up within {CATCH_UP_TIMEOUT_S} s: {seen}", 0.05)
        return time.monotonic() - start
