"""Chapter: wait events expose the WAL bottleneck.

Publication 003 (ぱと隊長日誌, PostgreSQL 14.5, pg_wait_sampling): pgbench's TPC-B-like
workload at 1..24 clients in three modes (normal, --unlogged-tables,
synchronous_commit = off), with vmstat and a pg_wait_sampling profile per run.
"""
from ...text import Text

TITLE = Text("待機イベントで WAL のボトルネックを見つける", "Wait events expose the WAL bottleneck")
SHORT = Text("待機イベント", "wait events")  # where a list names many chapters

# Why the verdicts pool one CPU model at a time; the page adds how far apart the stored runs
# on different models are (repro/site/chapter_page.py).
MACHINE_BOUND = Text(
    "この章の値はマシンそのものに左右されます。時間のうち WAL のフラッシュに費やされる割合と、それに伴ってピーク TPS "
    "の比 (F3) や WAL の待機の割合 (F1) が、マシンの fsync の遅延と CPU の速さの釣り合いで決まるからです。"
    "2026 年 11 月 27 日に、この章の実行のマシンは AMD EPYC から Intel Xeon に替わりました。",
    "This chapter's values depend on the machine itself: the share of time that goes to WAL flushes, "
    "and with it the peak-TPS ratios (F3) and the shares of WAL waits (F1), follows the machine's "
    "fsync latency against its CPU speed. On 27 November 2026 the machine of these runs changed from "
    "an AMD EPYC to an Intel Xeon.")
