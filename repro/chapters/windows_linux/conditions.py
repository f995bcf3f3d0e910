"""The conditions' names, shared by the experiment, the findings and the page."""
from __future__ import annotations

SMALL_BUFFERS = "64MB"  # 004's small shared_buffers
BUFFERS = ("small", "large")  # large: the scale's large_buffers, which holds the table
METHODS = ("fdatasync", "fsync", "open_sync", "open_datasync")  # Linux's wal_sync_method values
WINDOWS_ONLY_METHOD = "fsync_writethrough"
SB_UPDATE_CLIENTS = 8  # the update script at each shared_buffers: enough clients for misses to show
FSYNC = "pg_test_fsync"  # the condition of one pg_test_fsync run
ONE_WRITE = "Compare file sync methods using one 8kB write"  # pg_test_fsync's sections
TWO_WRITES = "Compare file sync methods using two 8kB writes"


def read(buffers: str, clients: int) -> str:
    return f"read_{buffers}_c{clients}"


def update(method: str, clients: int) -> str:
    return f"update_{method}_c{clients}"


def buffered_update(buffers: str, clients: int) -> str:
    """The update script on the shared_buffers server, at one of its sizes (beyond 004)."""
    return f"sb_update_{buffers}_c{clients}"


def fsync_field(section: str, method: str) -> str:
    """A pg_test_fsync figure in a round's record: "one:fdatasync", "two:open_sync"."""
    return f"{'one' if section == ONE_WRITE else 'two'}:{method}"
