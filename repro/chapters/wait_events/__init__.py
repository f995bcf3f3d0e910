"""Chapter: wait events expose the WAL bottleneck.

Publication 003 (ぱと隊長日誌, PostgreSQL 14.5, pg_wait_sampling): pgbench's TPC-B-like
workload at 1..24 clients in three modes (normal, --unlogged-tables,
synchronous_commit = off), with vmstat and a pg_wait_sampling profile per run.
"""
from ...chapter import Chapter
from ...text import Text
from .analysis import summarize
from .findings import FINDINGS
from .page import CHARTS, TABLES, numbers

CHAPTER = Chapter(
    title=Text("待機イベントで WAL のボトルネックを見つける", "Wait events expose the WAL bottleneck"),
    summarize=summarize,
    findings=FINDINGS,
    tables=TABLES,
    charts=CHARTS,
    numbers=numbers,
)
