"""What the page shows (replace)."""
from __future__ import annotations

from ...chapter import Chart, Run, Series, Table, scaling_table
from ...text import Number, Text
from .conditions import CONDITIONS
from .findings import FINDINGS


def tps_table(run: Run) -> Table:
    original = run.chapter.original["tps"]
    return Table(Text("TPS", "TPS"), [Text("条件", "Condition"), Text("原典", "Original"),
                                       Text("本ビルド", "This build")],
                 [[c, Number(original[c], "", 0), Number(run.summary["tps"][c], "", 0)]
                  for c in CONDITIONS])


def tps_chart(run: Run) -> Chart:
    original = run.chapter.original["tps"]
    return Chart(Text("TPS", "TPS"), [Text(c, c) for c in CONDITIONS],
                 [Series(Text("原典", "original"), [original[c] for c in CONDITIONS]),
                  Series(Text("本ビルド", "this build"), [run.summary["tps"][c] for c in CONDITIONS])],
                 Text("TPS", "TPS"))


def numbers(run: Run) -> dict[str, Number]:
    return {"gain": run.estimate(FINDINGS[0].checks[0].measure)}


SCALE_ROWS = [("scale", Text("pgbench のスケールファクター", "pgbench scale factor")),
              ("clients", Text("クライアント数", "clients")),
              ("seconds", Text("1 回の実行時間 [s]", "run length [s]")),
              ("rounds", Text("繰り返し (ラウンド、最小)", "repetitions (rounds, at least)"))]
TABLES = {"tps": tps_table, "scaling": scaling_table(SCALE_ROWS)}
CHARTS = {"tps": tps_chart}
