"""WAL positions: LSN arithmetic and the position of the last commit."""
from __future__ import annotations

import re

from .servers import Server

COMMIT_SEARCH_BYTES = (2 << 20, 32 << 20)  # look this far back for a commit record, then further


# 10 renamed "xlog" to "wal" (commit 806091c96f9) and "location" to "lsn" (d10c626de4) in
# the WAL functions and pg_stat_replication's columns: what 9.6 calls them; replay_lag
# (new in 10) reads as NULL there
NAMES_96 = {"pg_current_wal_lsn": "pg_current_xlog_location",
            "pg_current_wal_flush_lsn": "pg_current_xlog_flush_location",
            "pg_wal_lsn_diff": "pg_xlog_location_diff", "sent_lsn": "sent_location",
            "write_lsn": "write_location", "flush_lsn": "flush_location",
            "replay_lsn": "replay_location", "replay_lag": "NULL::interval"}
_NAMES_96 = re.compile(r"\b(" + "|".join(NAMES_96) + r")\b")


def spelled(sql: str, major: float) -> str:
    """A query written with 10's names of the WAL functions and pg_stat_replication's
    columns, as `major` spells them."""
    return sql if major >= 10 else _NAMES_96.sub(lambda m: NAMES_96[m.group(1)], sql)


def lsn(text: str) -> int:
    """A pg_lsn ("16/B374D848") as a byte position."""
    high, _, low = text.partition("/")
    return (int(high, 16) << 32) + int(low, 16)


def lsn_text(position: int) -> str:
    return f"{position >> 32:X}/{position & 0xFFFFFFFF:X}"


def has_walinspect(server: Server) -> bool:
    return bool(server.sql("SELECT 1 FROM pg_available_extensions WHERE name = 'pg_walinspect'"))


def last_commit_end(server: Server, exact: bool) -> int:
    """Where the last commit record ends: what a synchronous standby must have flushed.

    exact: read the WAL with pg_walinspect (15+, installed); otherwise the flush position,
    which is at or after the last commit (a stricter bound).
    """
    flushed = lsn(server.sql(spelled("SELECT pg_current_wal_flush_lsn()::text", server.major))[0][0])
    if not exact:
        return flushed
    for back in COMMIT_SEARCH_BYTES:
        rows = server.sql(
            "SELECT max(end_lsn)::text FROM pg_get_wal_records_info(%s::pg_lsn, %s::pg_lsn) "
            "WHERE resource_manager = 'Transaction' AND record_type LIKE 'COMMIT%%'",
            (lsn_text(max(flushed - back, 0)), lsn_text(flushed)))
        if rows and rows[0][0]:
            return lsn(rows[0][0])
    return flushed
