"""WAL positions: LSN arithmetic and the position of the last commit."""
from __future__ import annotations

from .servers import Server

COMMIT_SEARCH_BYTES = (2 << 20, 32 << 20)  # look this far back for a commit record, then further


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
    flushed = lsn(server.sql("SELECT pg_current_wal_flush_lsn()::text")[0][0])
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
