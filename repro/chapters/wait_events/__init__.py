"""Chapter: wait events expose the WAL bottleneck.

Publication 003 (ぱと隊長日誌, PostgreSQL 14.5, pg_wait_sampling): pgbench's TPC-B-like
workload at 1..24 clients in three modes (normal, --unlogged-tables,
synchronous_commit = off), with vmstat and a pg_wait_sampling profile per run.
"""
from ...text import Text

TITLE = Text("待機イベントで WAL のボトルネックを見つける", "Wait events expose the WAL bottleneck")
