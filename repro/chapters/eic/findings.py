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

from ...requirements import majors, min_cpus
from ...text import Text
from ...verdict import Above, Below, Between, Change, Check, Measure
from ...wording import Wording
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

WORDS = Wording.beside(__file__)

FINDINGS = [
    WORDS.finding("F1",
                  [Check(WILLNEED_PER_BLOCK, Between(0.9, 1.1)), Check(WILLNEED_KB, Between(7.9, 8.1))],
                  changed_in=READ_STREAM_CHANGE),
    WORDS.finding("F2",
                  [Check(REQUEST_1_0, Below(READAHEAD_LOST))],
                  changed_in=READ_STREAM_CHANGE),
    WORDS.finding("F3",
                  [Check(TIME_1_0, Above(SLOWER))],
                  changed_in=READ_STREAM_CHANGE),
    WORDS.finding("F4",
                  [Check(WILLNEED_PER_BLOCK, Below(0.1)), Check(REQUEST_1_0, Above(READAHEAD_LOST))],
                  requires=[FROM_18]),
    WORDS.finding("F5",
                  [Check(PARALLEL_REQUEST, Above(READAHEAD_LOST)), Check(PARALLEL_TIME, Below(SLOWER))],
                  # the original's claim, made without numbers: on 17 the request sizes of the parallel
                  # scan swing between runs (2026-11-23: decided in 4 of 10 tiny runs, 3 of 7 default)
                  expected=False,
                  requires=[majors(10, why=Text("パラレルビットマップヒープスキャンは 10 からです。",
                                                "Parallel bitmap heap scans came in 10.")), min_cpus(2)]),
    WORDS.finding("F6",
                  [Check(TIME_1_0, Below(SLOWER))],
                  # a hypothesis from the mechanism, not the original's: on this VM eic 1's cold runs
                  # on 18 hold steady (about 220 ms at default) while eic 0's swing between about 150
                  # and 700 ms (the hypervisor's cache), so the ratio went from 0.5 to 2.3 between
                  # runs (2026-11-23, 7 default runs: reproduced 1, contradicted 1, inconclusive 5)
                  expected=False,
                  requires=[FROM_18]),
]
