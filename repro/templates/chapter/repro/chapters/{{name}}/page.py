"""What the page shows (replace)."""
from __future__ import annotations

from ...chapter import Chart, Run, Series, Table
from ...site.scaling import CLIENTS, PGBENCH_SCALE, ROUNDS, RUN_LENGTH, scaling_table
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


SCALE_ROWS = [("scale", PGBENCH_SCALE),
              ("clients", CLIENTS),
              ("seconds", RUN_LENGTH),
              ("rounds", ROUNDS)]
TABLES = {"tps": tps_table, "scaling": scaling_table(SCALE_ROWS)}
CHARTS = {"tps": tps_chart}
