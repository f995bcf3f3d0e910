"""Chapter: the Linux side of 004 §5 (Windows against Linux, PostgreSQL 10.1): read TPS at
shared_buffers 64MB against a size that holds the table, update TPS per wal_sync_method,
and pg_test_fsync per method; the Windows-only results are listed, not reproduced."""
from ...requirements import own_server
from ...text import Text

TITLE = Text("Windows と Linux: shared_buffers と wal_sync_method", "Windows and Linux: shared_buffers and wal_sync_method")
SHORT = Text("Windows と Linux", "Windows and Linux")  # where a list names many chapters
# against an existing server (--dsn) nothing of it can run: the run says so and stops
REQUIRES = [own_server(Text("shared_buffers を変えた再起動、wal_sync_method の変更、サーバーのマシンでの pg_test_fsync",
                               "restarts with other shared_buffers, changes of wal_sync_method and pg_test_fsync on the server's machine"))]
