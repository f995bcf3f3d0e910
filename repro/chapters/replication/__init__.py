"""Chapter: synchronous and asynchronous streaming replication with 1 to 3 standbys.

Publication 004 (PGECons WG1 2017 report, section 8, PostgreSQL 10.1): a master and three
slaves on KVM guests; pgbench with a one-row UPDATE script, 64 clients, scale 1000, 300 s,
the mean of 3 runs; (A) 1-3 standbys, all synchronous or all asynchronous; (B) 3 standbys,
0-3 of them synchronous.
"""
from ...requirements import own_server
from ...text import Text

TITLE = Text("同期・非同期ストリーミングレプリケーションとスタンバイの台数",
             "Synchronous and asynchronous streaming replication with 1 to 3 standbys")
SHORT = Text("レプリケーション", "replication")  # where a list names many chapters
# against an existing server (--dsn) nothing of it can run: the run says so and stops
REQUIRES = [own_server(Text("実行が起動するプライマリとスタンバイ",
                               "a primary and standbys of the run's own"))]
