"""Chapter: the Linux side of 004 §5 (Windows against Linux, PostgreSQL 10.1): read TPS at
shared_buffers 64MB against a size that holds the table, update TPS per wal_sync_method,
and pg_test_fsync per method; the Windows-only results are listed, not reproduced."""
from ...chapter import Chapter
from ...text import Text
from .analysis import summarize
from .findings import FINDINGS
from .page import CHARTS, TABLES, numbers

CHAPTER = Chapter(
    title=Text("Windows と Linux: shared_buffers と wal_sync_method", "Windows and Linux: shared_buffers and wal_sync_method"),
    summarize=summarize,
    findings=FINDINGS,
    tables=TABLES,
    charts=CHARTS,
    numbers=numbers,
)
