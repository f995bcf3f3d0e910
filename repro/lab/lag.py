"""How far a server's WAL receivers (standbys, logical-replication subscriptions) are behind
it while a workload runs: one poller, and one rule for which samples count, for every
chapter that measures replication lag (replication, fulltext)."""
from __future__ import annotations

from collections.abc import Sequence

from .poller import Poller
from .servers import Server
from .wal import spelled


class LagPoller(Poller):
    """Every 100 ms, for the peers named (their application_name in pg_stat_replication), how
    far each one's replay is behind the server's WAL, in bytes and (where the server reports
    it) seconds. Only samples taken while the workload's clients (`clients`, their
    application_name) are connected count: `most_bytes` and `most_s` are the most over that
    window, `last` is each peer's last sample in it, the lag at its end (afterwards the peers
    catch up)."""

    QUERY = ("SELECT application_name, pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)::bigint, "
             "extract(epoch FROM replay_lag)::float8, "
             "(SELECT count(*) FROM pg_stat_activity WHERE application_name = %s) "
             "FROM pg_stat_replication WHERE application_name = ANY(%s)")

    def __init__(self, server: Server, peers: Sequence[str], clients: str = "pgbench") -> None:
        super().__init__(server, spelled(self.QUERY, server.major), (clients, list(peers)), interval_s=0.1)
        self.last: dict[str, tuple[int, float | None]] = {}
        self.most_bytes: dict[str, int] = {}
        self.most_s: dict[str, float] = {}  # a peer is missing while the server reports no replay_lag

    def take(self, rows: list[tuple]) -> None:
        for name, behind, lag_s, clients in rows:
            if not clients or behind is None:
                continue
            self.last[name] = (int(behind), lag_s)
            self.most_bytes[name] = max(self.most_bytes.get(name, 0), int(behind))
            if lag_s is not None:
                self.most_s[name] = max(self.most_s.get(name, 0.0), float(lag_s))
