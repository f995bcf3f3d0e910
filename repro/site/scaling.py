"""A page's "what was scaled" table, and the words its rows share across chapters: each
page declares its SCALE_ROWS, (parameter, label) in its own order, with these labels where
its parameter is one of theirs, so the same parameter reads the same on every page."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..chapter import Run, Table
from ..scales import SCALES
from ..text import Number, Text

ROUNDS = Text("繰り返し (ラウンド、最小)", "repetitions (rounds, at least)")  # every scale has rounds
MEASURED_S = Text("1 回の計測 [s]", "one measured run [s]")
RUN_LENGTH = Text("1 回の実行時間 [s]", "run length [s]")
PGBENCH_SCALE = Text("pgbench のスケールファクター", "pgbench scale factor")
CLIENTS = Text("クライアント数", "clients")
SHARED_BUFFERS = Text("shared_buffers", "shared_buffers")


def _parameter(value: Any) -> Number | str:
    """A scale parameter as a cell: a number, a setting ("384MB"), or a list of client counts
    ("1–24", "1, 4, 16")."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        consecutive = value == list(range(value[0], value[-1] + 1))
        return f"{value[0]}–{value[-1]}" if consecutive and len(value) > 2 else ", ".join(map(str, value))
    return Number(value, "", 0)


def scaling_table(rows: list[tuple[str, Text]]) -> Callable[[Run], Table]:
    """The page's "what was scaled" table: each parameter in the original and at every scale
    (it does not depend on the result)."""
    def build(run: Run) -> Table:
        original, scales = run.chapter.original["scale"], run.chapter.scales
        cells = [[label, _parameter(original[key]), *(_parameter(scales[s][key]) for s in SCALES)]
                 for key, label in rows]
        return Table(Text("原典と各スケールのパラメーター", "Parameters: the original and each scale"),
                     [Text("項目", "Parameter"), Text("原典", "Original"),
                      *(Text(s, s) for s in SCALES)], cells, measured=False)
    return build
