"""The findings: the advice the scan issues per heap block (counted, exact), the device's read
request size and the cold run time, each as a ratio of eic 1 against eic 0 in the same round.

Resolution here: cold runs of one condition on this VM's virtual disk vary by up to 2x between
rounds (tiny, eic 0: 164 to 300 ms), so times are compared as ratios within a round, and a
ratio must pass 1.2 to count as slower (eic 16 and 64 against 0 land within about 0.3 of 1).
Readahead turns 8 kB reads into requests of many pages: a request size ratio under 0.1 means
it was lost (measured: 0.002 to 0.005 on 9.6, 10 and 17).
"""
from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from ...text import Text
from ...verdict import Above, Below, Between, Change, Check, Cite, Finding, Measure, majors, min_cpus
from .analysis import mean_kb, per_block

SLOWER = 1.2  # a cold time ratio above this is slower; below it, not slower
READAHEAD_LOST = 0.1  # a request size ratio below this: readahead lost (8 kB against eic 0's)
READ_STREAM = 18  # bitmap heap scans read through the read stream (commit 2b73a8cd33b)


def _trace(condition: str, statistic: Callable[[dict[str, Any], str], float | None], what: str,
           label: Text, unit: str, digits: int) -> Measure:
    """A count from the traced run of a condition: exact, no interval."""
    return Measure(label, lambda r: statistic(r.raw["trace"][condition], what), unit, digits, exact=True)


WILLNEED_PER_BLOCK = _trace("eic1", per_block, "willneed_calls",
                            Text("eic 1: WILLNEED の回数 ÷ ヒープブロック数", "eic 1: WILLNEED calls per heap block"),
                            "", 2)
WILLNEED_KB = _trace("eic1", mean_kb, "willneed", Text("eic 1: 1 回の WILLNEED の平均の大きさ", "eic 1: mean size of one WILLNEED"),
                     "kB", 1)


@cache
def ratio_measure(condition: str, baseline: str, field: str, label: Text, digits: int = 2) -> Measure:
    """`field` of a condition over its baseline's in the same round. Cached: the page builds
    the same ratio for the conditions no finding checks."""
    return Measure(label, lambda r: r.ratio(condition, baseline, field), "×", digits)


TIME_1_0 = ratio_measure("eic1", "eic0", "time_ms", Text("実行時間の比 eic 1 ÷ eic 0", "run time ratio eic 1 / eic 0"))
REQUEST_1_0 = ratio_measure("eic1", "eic0", "request_kb",
                            Text("読み込み要求の平均サイズの比 eic 1 ÷ eic 0", "mean read request size ratio eic 1 / eic 0"), 3)
PARALLEL_TIME = ratio_measure("parallel_eic1", "parallel_eic0", "time_ms",
                              Text("並列: 実行時間の比 eic 1 ÷ eic 0", "parallel: run time ratio eic 1 / eic 0"))
PARALLEL_REQUEST = ratio_measure("parallel_eic1", "parallel_eic0", "request_kb",
                                 Text("並列: 読み込み要求サイズの比 eic 1 ÷ eic 0", "parallel: request size ratio eic 1 / eic 0"), 3)
READ_STREAM_CHANGE = Change(READ_STREAM, Text("ビットマップヒープスキャンは読み込みストリームで読み、ブロックごとの fadvise を出さず、隣り合うブロックをまとめて読みます",
                                             "bitmap heap scans read through the read stream, which issues no per-block fadvise "
                                             "and combines neighbouring blocks"),
                            "commit 2b73a8cd33b")

FROM_18 = majors(READ_STREAM, why=Text("読み込みストリームは 18 からです。", "The read stream came in 18."))

FINDINGS = [
    Finding("F1", Text("eic = 1 のビットマップヒープスキャンは、ヒープブロックごとに 8 kB の POSIX_FADV_WILLNEED を 1 回発行する",
                       "With eic = 1 the bitmap heap scan issues one 8 kB POSIX_FADV_WILLNEED per heap block"),
            [Check(WILLNEED_PER_BLOCK, Between(0.9, 1.1)), Check(WILLNEED_KB, Between(7.9, 8.1))],
            original=Text("strace: 連続したオフセットへの fadvise64(…, 8192, POSIX_FADV_WILLNEED)",
                          "strace: fadvise64(…, 8192, POSIX_FADV_WILLNEED) on consecutive offsets"),
            cite=Cite("002", Text("「実際に試してみる」の節、eic = 1 の strace 出力",
                                  "the section \"trying it out\", the strace output at eic = 1")),
            changed_in=READ_STREAM_CHANGE),
    Finding("F2", Text("eic = 1 ではデバイスへの読み込み要求が eic = 0 の 10 分の 1 より小さい (先読みが効かない)",
                       "With eic = 1 the device's read requests are less than a tenth of the size they "
                       "are with eic = 0 (readahead is defeated)"),
            [Check(REQUEST_1_0, Below(READAHEAD_LOST))],
            original=Text("blktrace: 8 kB 対 512 kB (0.016 倍)", "blktrace: 8 kB vs 512 kB (0.016×)"),
            cite=Cite("002", Text("「実際に試してみる」の節、eic = 1 と eic = 0 の blktrace 出力",
                                  "the section \"trying it out\", the blktrace output at eic = 1 and at eic = 0")),
            changed_in=READ_STREAM_CHANGE),
    Finding("F3", Text("キャッシュが冷えた状態では eic = 1 が eic = 0 より遅い (1.2 倍を超える)",
                       "Cold, eic = 1 is slower than eic = 0 (by more than 1.2×)"),
            [Check(TIME_1_0, Above(SLOWER))],
            original=Text("20,898.8 ms 対 3,625.9 ms (5.76 倍)", "20,898.8 ms vs 3,625.9 ms (5.76×)"),
            cite=Cite("002", Text("「実際に試してみる」の節、eic = 1 と eic = 0 の EXPLAIN ANALYZE 出力",
                                  "the section \"trying it out\", the EXPLAIN ANALYZE output at eic = 1 and at "
                                  "eic = 0")),
            changed_in=READ_STREAM_CHANGE),
    Finding("F4", Text("18 ではブロックごとの WILLNEED がなくなり、eic = 1 でも先読みが効く (要求が eic = 0 の 10 分の 1 以上)",
                       "On 18 the per-block WILLNEED is gone and readahead works at eic = 1 (requests at "
                       "least a tenth of eic = 0's)"),
            [Check(WILLNEED_PER_BLOCK, Below(0.1)), Check(REQUEST_1_0, Above(READAHEAD_LOST))],
            requires=[FROM_18]),
    Finding("F5", Text("パラレルビットマップヒープスキャンでは eic = 1 でも先読みが効き (要求が eic = 0 の 10 分の 1 以上)、"
                       "eic = 0 より遅くならない",
                       "A parallel bitmap heap scan keeps readahead at eic = 1 (requests at least a tenth "
                       "of eic = 0's) and is not slower than with eic = 0"),
            [Check(PARALLEL_REQUEST, Above(READAHEAD_LOST)), Check(PARALLEL_TIME, Below(SLOWER))],
            original=Text("主張のみ (数値なし): 10 以降のパラレルビットマップヒープスキャンでは read_ahead が機能した",
                          "claimed without numbers: on 10 and later a parallel bitmap heap scan kept readahead working"),
            cite=Cite("002", Text("「最後に」の節", "the closing section, \"lastly\"")),
            # the original's claim, made without numbers: on 17 the request sizes of the parallel
            # scan swing between runs (2026-11-23: decided in 4 of 10 tiny runs, 3 of 7 default)
            expected=False,
            requires=[majors(10, why=Text("パラレルビットマップヒープスキャンは 10 からです。",
                                          "Parallel bitmap heap scans came in 10.")), min_cpus(2)]),
    Finding("F6", Text("18 では、キャッシュが冷えた状態で eic = 1 がもう eic = 0 より遅くない (1.2 倍未満)",
                       "On 18, cold, eic = 1 is no longer slower than eic = 0 (less than 1.2×)"),
            [Check(TIME_1_0, Below(SLOWER))],
            # a hypothesis from the mechanism, not the original's: on this VM eic 1's cold runs
            # on 18 hold steady (about 220 ms at default) while eic 0's swing between about 150
            # and 700 ms (the hypervisor's cache), so the ratio went from 0.5 to 2.3 between
            # runs (2026-11-23, 7 default runs: reproduced 1, contradicted 1, inconclusive 5)
            expected=False,
            requires=[FROM_18]),
]
