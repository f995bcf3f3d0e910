"""The findings: which partitions a single-row INSERT locks (counted, exact), and how much
faster the original's insert script runs on the major under test than on 11 beside it.

Thresholds come from the original and natural boundaries, registered before any run: all
256 partitions locked (F1, before 12), only the one the row goes to (F2, from 12), and
faster than 11 at all (F3: the ratio's natural boundary, 1; the original's 23.57 × is at 32
clients and its size is compared apart, sizes.toml).
"""
from __future__ import annotations

from ...requirements import majors
from ...text import Text
from ...verdict import Above, Below, Change, Check, Measure
from ...wording import Wording
from .analysis import locked, speedup
from .conditions import REFERENCE

PARTITIONS = 256  # the original's, at every scale

LOCKED = Measure(Text("1 行の INSERT がロックしたパーティション (256 のうち)",
                      "partitions locked by a single-row INSERT (of 256)"), locked, "", 0, exact=True)
SPEEDUP = Measure(Text("TPS の比 このメジャー ÷ 11", "TPS ratio this major / 11"), speedup, "×", 2)

LOCK_ON_ROUTING = Change(12, Text(
    "INSERT は実行の開始時にすべてのパーティションをロックせず、行を振り分けたパーティションだけをそのときにロックします",
    "an INSERT no longer locks every partition when it starts; it locks a partition when it routes a row to it"),
    "commit 9eefba181f7")
FROM_12 = majors(12, why=Text("11 までは INSERT がすべてのパーティションをロックします (F1)。",
                              "Up to 11 an INSERT locks every partition (F1)."))

WORDS = Wording.beside(__file__)

FINDINGS = [
    WORDS.finding("F1", [Check(LOCKED, Above(PARTITIONS - 1))], changed_in=LOCK_ON_ROUTING),
    WORDS.finding("F2", [Check(LOCKED, Below(2)), Check(LOCKED, Above(0))], requires=[FROM_12]),
    WORDS.finding("F3", [Check(SPEEDUP, Above(1.0))], requires=[FROM_12], beside=REFERENCE),
]
