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

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

from ...errors import ReproError
from ...lab.context import RunContext
from ...lab.lag import LagPoller
from ...lab.servers import Server
from ...lab.wal import lsn
from .conditions import (COLUMNS, FEATURE, IDLE, KINDS, LOADED, NONE, PGROONGA, PUBLISHER_INGEST,
                         SINGLE, SUBSCRIBER, WORDS, field, ingest, ingest_table, search, search_table)
from .topology import (LOGICAL_REPLICATION, PUBLISHED, SUBSCRIPTION, TRGM_PROBE, Topology,
                       _trigrams, sections)

LEAD_S = 0.25  # the background inserts run this long before a search starts and after it ends


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
        with LagPoller(self.t.publisher, [SUBSCRIPTION], SUBSCRIPTION) as lag:  # as Topology.lag
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
        return {PUBLISHER_INGEST: {"tps": r.tps, "lag_end_bytes": max(behind, 0), "lag_max_s": lag.most_s.get(SUBSCRIPTION),
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
                record |= {"lag_max_bytes": lag.most_bytes.get(SUBSCRIPTION), "lag_max_s": lag.most_s.get(SUBSCRIPTION)}
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
    """The index kinds the run's servers have (pg_trgm is contrib: always): their image's, or
    on local clusters their binaries'; against an existing server every kind, of which
    Topology keeps those the server and its role allow."""
    if ctx.external:
        return list(KINDS)
    return [k for k in KINDS if k not in FEATURE or ctx.has(FEATURE[k])]


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
