"""Chapter: effective_io_concurrency and prefetching in bitmap heap scans.

Publication 002 (a Japanese blog, PostgreSQL 9.6, CentOS 7): a count over a table whose
rows lie in created_at order, through a lossy BRIN bitmap; cold runs with
effective_io_concurrency 1 and 0, with strace (fadvise64) and blktrace (request sizes).
"""
from ...requirements import own_server
from ...text import Text

TITLE = Text("effective_io_concurrency とビットマップヒープスキャンの先読み",
             "effective_io_concurrency and prefetching in bitmap heap scans")
SHORT = Text("effective_io_concurrency", "effective_io_concurrency")  # where a list names many chapters
# against an existing server (--dsn) nothing of it can run: the run says so and stops
REQUIRES = [own_server(Text("コールドキャッシュでの実行 (再起動と、サーバーのマシンのページキャッシュからの追い出し) と strace",
                               "cold runs (restarts, and evicting the files from the page cache of the server's machine) and strace there"))]
