"""What runs on the servers: a primary and three standbys on one private network; the
report's one-row UPDATE script under each configuration of 0-3 standbys, synchronous or
asynchronous, interleaved round by round.

The standbys are made once with pg_basebackup -R; a configuration "connects" the
standbys it needs (setting their primary_conninfo) and "disconnects" the others (an
empty primary_conninfo stops their WAL receiver; before 12 it is retried: see _start), and names the synchronous ones in
synchronous_standby_names by reloading. From 13 on, primary_conninfo changes by
reloading too; before, a standby restarts with it changed (12: ALTER SYSTEM; 9.6 to 11:
in recovery.conf, where pg_basebackup -R wrote it). So all configurations run
interleaved on the same servers. The queries use 10's names; 9.6 reads them as it
spells them (lab.wal.spelled). After every run: each synchronous standby's flush
position against the end of the last commit record; at the end, a checksum of the
table on every server.

Against an existing server (--dsn) nothing runs (the chapter's requirement): every finding
needs a primary and standbys that the run starts and configures.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from psycopg import sql as pgsql

from ...lab.context import RunContext
from ...lab.harness.waiting import until
from ...lab.lag import LagPoller
from ...lab.servers import ContainerServer
from ...lab.wal import has_walinspect, last_commit_end, lsn, spelled
from ...text import Text

STANDBYS = ("s1", "s2", "s3")
CONFIGS = {  # name -> (standbys connected, how many of them synchronous)
    "none": (0, 0),
    "async1": (1, 0), "async2": (2, 0), "async3": (3, 0),
    "sync1": (1, 1), "sync2": (2, 2), "sync3": (3, 3),
    "sync1_async2": (3, 1), "sync2_async1": (3, 2),
}
CATCH_UP_TIMEOUT_S = 120


class Topology:
    """A primary and its standbys; switches between configurations (see the module)."""

    def __init__(self, primary: ContainerServer, standbys: dict[str, ContainerServer]):
        self.primary = primary
        self.standbys = standbys
        self.conninfo = {name: _conninfo(s) for name, s in standbys.items()}
        self.connected = {name: True for name in standbys}
        self.exact_commit = has_walinspect(primary)
        if self.exact_commit:
            primary.sql("CREATE EXTENSION pg_walinspect")
        primary.sql("CREATE EXTENSION pg_prewarm")

    def configure(self, connected: int, synchronous: int) -> None:
        """Connect the first `connected` standbys, the first `synchronous` of them synchronous."""
        names = STANDBYS[:synchronous]
        self._set(self.primary, "synchronous_standby_names",
                  f"{synchronous} ({', '.join(names)})" if synchronous else "")
        for i, (name, standby) in enumerate(self.standbys.items()):
            if self.connected[name] != (i < connected):
                _set_conninfo(standby, self.conninfo[name] if i < connected else "")
                self.connected[name] = i < connected
        self.wait_caught_up(STANDBYS[:connected], names)

    @staticmethod
    def _set(server: ContainerServer, setting: str, value: str) -> None:
        if server.sql(f"SHOW {setting}")[0][0] != value:
            server.set_by_reload({setting: value})

    def replication(self) -> dict[str, dict[str, Any]]:
        """pg_stat_replication on the primary, by application_name."""
        rows = self.primary.sql(spelled(
            "SELECT application_name, state, sync_state, write_lsn::text, flush_lsn::text, "
            "replay_lsn::text, extract(epoch FROM replay_lag) FROM pg_stat_replication", self.primary.major))
        return {r[0]: {"state": r[1], "sync_state": r[2], "write": lsn(r[3]) if r[3] else 0,
                       "flush": lsn(r[4]) if r[4] else 0, "replay": lsn(r[5]) if r[5] else 0,
                       "replay_lag_s": float(r[6]) if r[6] is not None else None} for r in rows}

    def wait_caught_up(self, connected: tuple[str, ...], synchronous: tuple[str, ...]) -> None:
        """Until exactly `connected` stream, the synchronous ones are "sync", and every one
        has replayed the primary's current WAL: each run starts without a backlog."""
        seen: dict[str, dict[str, Any]] = {}

        def caught_up() -> bool:
            target = lsn(self.primary.sql(spelled("SELECT pg_current_wal_lsn()::text", self.primary.major))[0][0])
            seen.clear()
            seen.update(self.replication())
            return set(seen) == set(connected) and all(
                seen[n]["state"] == "streaming" and seen[n]["replay"] >= target
                and (seen[n]["sync_state"] == "sync") == (n in synchronous) for n in connected)
        until(caught_up, CATCH_UP_TIMEOUT_S, lambda: f"standbys did not reach the configuration {connected} "
                                                      f"(synchronous {synchronous}) within {CATCH_UP_TIMEOUT_S} s: {seen}")

    def checksums(self) -> dict[str, int]:
        """A checksum of pgbench_accounts on every server (standbys caught up first)."""
        query = "SELECT sum(hashtext(aid::text || filler))::bigint FROM pgbench_accounts"
        servers = {"primary": self.primary, **self.standbys}
        return {name: int(s.sql(query)[0][0]) for name, s in servers.items()}


RECOVERY_CONF = "recovery.conf"  # 9.6 to 11: where pg_basebackup -R writes primary_conninfo


def _conninfo(standby: ContainerServer) -> str:
    """The primary_conninfo pg_basebackup -R wrote."""
    if standby.major >= 12:
        return standby.sql("SHOW primary_conninfo")[0][0]
    return _recovery_conf(standby)["primary_conninfo"]


def _recovery_conf(standby: ContainerServer) -> dict[str, str]:
    """recovery.conf's settings (pg_basebackup -R writes one `key = 'value'` per line)."""
    data = standby.sql("SHOW data_directory")[0][0]
    found = {}
    for line in standby.run(["cat", f"{data}/{RECOVERY_CONF}"]).splitlines():
        key, _, value = line.partition("=")
        if value.strip().startswith("'"):
            found[key.strip()] = value.strip()[1:-1].replace("''", "'")
    return found


def _set_conninfo(standby: ContainerServer, conninfo: str) -> None:
    """Point a standby's WAL receiver at the primary, or stop it (empty conninfo)."""
    if standby.major >= 13:
        standby.set_by_reload({"primary_conninfo": conninfo})
        return
    if standby.major >= 12:
        standby.sql(pgsql.SQL("ALTER SYSTEM SET primary_conninfo = {}").format(pgsql.Literal(conninfo)))
    else:
        data = standby.sql("SHOW data_directory")[0][0]
        conf = _recovery_conf(standby) | {"primary_conninfo": conninfo}
        standby.put_file(f"{data}/{RECOVERY_CONF}",
                         "".join(f"{k} = '{v.replace(chr(39), chr(39) * 2)}'\n" for k, v in conf.items()))
    standby.restart(None)


def _start(ctx: RunContext) -> Topology:
    p = ctx.params
    common = ctx.settings("common.conf")
    network = ctx.lab.network()
    settings = common | ctx.settings("primary.conf")
    if ctx.major < 13:  # 004's own setting, renamed in 13
        del settings["wal_keep_size"]
        settings["wal_keep_segments"] = "16"
    primary = ctx.lab.server(Text("プライマリ", "primary"), settings, network=network, alias="primary")
    primary.pgbench_init(p["pgbench_scale"])
    ctx.step("three standbys with pg_basebackup -R")
    standby = common | ctx.settings("standby.conf")
    if ctx.major < 12:
        # an empty primary_conninfo (a disconnected standby) still starts a WAL receiver,
        # which fails and is retried at this interval: slowly, not 10 times a second. A
        # standby is connected again by a restart, whose first attempt does not wait.
        standby["wal_retrieve_retry_interval"] = "1min"
    if ctx.major < 10:
        # a 9.6 standby with nothing left to receive told the primary how far it replayed
        # only every wal_receiver_status_interval (10 s): each run waited for that twice
        standby["wal_receiver_status_interval"] = "1s"
    with ThreadPoolExecutor(len(STANDBYS)) as pool:
        standbys = dict(zip(STANDBYS, pool.map(
            lambda name: ctx.lab.standby(primary, network, name, standby), STANDBYS)))
    return Topology(primary, standbys)


def _measure(topology: Topology, config: str, script: str, p: dict[str, Any]) -> Any:
    connected, synchronous = CONFIGS[config]

    def one() -> dict[str, dict[str, Any]]:
        topology.configure(connected, synchronous)
        primary = topology.primary
        # 004's preparation: VACUUM (vacuumdb -a -z), CHECKPOINT, pg_prewarm of the accounts
        primary.sql("VACUUM ANALYZE")
        primary.sql("CHECKPOINT")
        primary.sql("SELECT pg_prewarm('pgbench_accounts')")
        topology.wait_caught_up(STANDBYS[:connected], STANDBYS[:synchronous])
        with LagPoller(primary, STANDBYS[synchronous:connected]) as lag:  # the asynchronous ones
            r = primary.pgbench(["-n", "-c", str(p["clients"]), "-T", str(p["seconds"]),
                                 "-f", "/tmp/update.pgbench"], {"update.pgbench": script})
        seen = topology.replication()  # first, before the standbys move on
        commit = last_commit_end(primary, topology.exact_commit)
        standbys = {name: {"sync_state": s["sync_state"],
                           "flush_margin": s["flush"] - commit}  # >= 0: has the last commit
                    for name, s in seen.items()}
        for name, (behind, lag_s) in lag.last.items():
            standbys[name] |= {"lag_end_bytes": behind, "lag_end_s": lag_s,
                               "lag_max_bytes": lag.most_bytes[name]}
        return {config: {"tps": r.tps, "latency_ms": r.latency_avg_ms, "standbys": standbys}}
    return one


def run(ctx: RunContext) -> None:
    ctx.step(f"primary on a private network; pgbench -i -s {ctx.params['pgbench_scale']}")
    topology = _start(ctx)
    ctx.record("exact_commit_lsn", topology.exact_commit)
    script = ctx.text("update.pgbench")
    ctx.rounds({config: _measure(topology, config, script, ctx.params) for config in CONFIGS})
    ctx.step("all standbys caught up; table checksums")
    topology.configure(len(STANDBYS), 0)
    ctx.record("checksums", topology.checksums())
