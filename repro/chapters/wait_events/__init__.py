"""Chapter: wait events expose the WAL bottleneck.

Publication 003 (ぱと隊長日誌, PostgreSQL 14.5, pg_wait_sampling): pgbench's TPC-B-like
workload at 1..24 clients in three modes (normal, --unlogged-tables,
synchronous_commit = off), with vmstat and a pg_wait_sampling profile per run.
"""
from ...text import Text

TITLE = Text("待機イベントで WAL のボトルネックを見つける", "Wait events expose the WAL bottleneck")

# Measured 2026-11-27 14:50 UTC with `python -m repro noise` on the stored runs, after the
# machine of these runs changed: see the text.
MACHINE_BOUND = Text(
    "この章の値はマシンそのものに左右されます。時間のうち WAL のフラッシュに行く分、つまりピーク TPS の比 (F3) "
    "や WAL の待機の割合 (F1) は、マシンの fsync の遅延と CPU の速さの釣り合いで決まるからです。"
    "2026 年 11 月 27 日にこの章の実行のマシンが AMD EPYC から Intel Xeon に替わり、二つの CPU での実行は、"
    "F3 で実行自身の標準誤差の 4.8 倍、F1 で 3.6 倍ほど違いました。区間が実行どうしの違いとして見込む 2.5 倍を"
    "超えます (`python -m repro noise`)。",
    "This chapter's values depend on the machine itself: the share of time that goes to WAL flushes, "
    "and with it the peak-TPS ratios (F3) and the shares of WAL waits (F1), follows the machine's "
    "fsync latency against its CPU speed. When the machine of these runs changed from an AMD EPYC to "
    "an Intel Xeon on 27 November 2026, runs on the two CPUs differed by about 4.8 times a run's own "
    "standard error in F3 and 3.6 times in F1: more than the 2.5 times that the intervals allow runs "
    "to differ (`python -m repro noise`).")
