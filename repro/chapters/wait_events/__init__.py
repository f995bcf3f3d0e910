"""Chapter: wait events expose the WAL bottleneck.

Publication 003 (ぱと隊長日誌, PostgreSQL 14.5, pg_wait_sampling): pgbench's TPC-B-like
workload at 1..24 clients in three modes (normal, --unlogged-tables,
synchronous_commit = off), with vmstat and a pg_wait_sampling profile per run.
"""
from ...text import Text

TITLE = Text("待機イベントで WAL のボトルネックを見つける", "Wait events expose the WAL bottleneck")

# Measured 2026-11-27 with `python -m repro noise` on the stored runs, when the machine these
# runs use changed: see the text.
MACHINE_BOUND = Text(
    "この章の値はマシンそのものに左右されます。時間のうち WAL のフラッシュに行く分、つまりピーク TPS の比 (F3) "
    "や WAL の待機の割合 (F1、F5) は、マシンの fsync の遅延と CPU の速さの釣り合いで決まるからです。"
    "2026 年 11 月 27 日にこの実行のマシンが AMD EPYC から Intel Xeon に替わったとき、同じ実験の同じメジャー"
    "バージョンの統計量 131 個のうち 38 個が、同じマシンでの実行どうしのばらつきを超えて動きました "
    "(1 % 水準。ほかの章は 197 個のうち 2 個。`python -m repro noise`)。",
    "This chapter's values depend on the machine itself: the share of time that goes to WAL flushes, "
    "and with it the peak-TPS ratios (F3) and the shares of WAL waits (F1, F5), follows the machine's "
    "fsync latency against its CPU speed. When the machine of these runs changed from an AMD EPYC to "
    "an Intel Xeon on 27 November 2026, 38 of 131 of its statistics (one experiment on one major) "
    "moved by more than runs on one machine differ (at 1 %; in the other chapters, 2 of 197; "
    "`python -m repro noise`).")
