"""What the page shows: Q10 per worker count (which subplan ran, the time and its parallel
part), the alternative subplans' costs beside the original's, Q11's year_total and its
sorts, the plans trimmed to the nodes that matter, and charts of serial and parallel parts."""
from __future__ import annotations

import re

from ...chapter import Chart, Run, Series, Table
from ...site.scaling import ROUNDS, scaling_table
from ...text import Number, Text
from .conditions import q10, workers_of, year_total
from .findings import PER_RUN, SERIAL_SPEEDUP, YEAR_TOTAL_GAIN

CORRELATED_RUN = Text("相関 (顧客ごとに走査)", "correlated (a scan per customer)")
HASHED_RUN = Text("ハッシュ化 (1 回の走査)", "hashed (one scan)")
SUBPLANS = [("SubPlan 1", Text("SubPlan 1 相関 web_sales", "SubPlan 1 correlated, web_sales")),
            ("SubPlan 2", Text("SubPlan 2 ハッシュ化 web_sales", "SubPlan 2 hashed, web_sales")),
            ("SubPlan 3", Text("SubPlan 3 相関 catalog_sales", "SubPlan 3 correlated, catalog_sales")),
            ("SubPlan 4", Text("SubPlan 4 ハッシュ化 catalog_sales", "SubPlan 4 hashed, catalog_sales"))]


def _count(workers: int) -> Text:
    return Text(f"ワーカー {workers}", f"{workers} worker{'' if workers == 1 else 's'}")


def _workers(run: Run, prefix: str) -> list[str]:
    return sorted((c for c in run.summary["conditions"] if c.startswith(prefix)), key=workers_of)


def _seconds(run: Run, condition: str) -> Number | Text:
    c = run.summary["conditions"][condition]
    if c["cancelled"]:
        cap = Number(c["seconds"], "s", 0)
        return Text(f"{cap.format('ja')} で打ち切り", f"cut at {cap.format('en')}")
    return Number(c["seconds"], "s", 2)


def _parts(c: dict) -> tuple[Number, Number]:
    if c["parallel_s"] is None:
        return Number(None), Number(None)
    return Number(c["parallel_s"], "s", 2), Number(c["seconds"] - c["parallel_s"], "s", 2)


def data_table(run: Run) -> Table:
    original, files, sizes = run.chapter.original["tables"], run.raw["data"]["files"], run.raw["relation_bytes"]
    rows = [[t, Number(o["rows"], "", 0), Number((o["bytes"] + o["key_bytes"]) / 2**20, "MiB", 0),
             Number(files[t]["rows"], "", 0), Number(sizes[t] / 2**20, "MiB", 0)] for t, o in original.items()]
    return Table(Text("Q10 と Q11 が読むテーブル", "The tables Q10 and Q11 read"),
                 [Text("テーブル", "Table"), Text("原典 SF 2 の行数", "Original SF 2 rows"),
                  Text("原典のテーブルと主キー", "Original table and key"), Text("本ビルドの行数", "This build's rows"),
                  Text("本ビルドのテーブルと主キー", "This build's table and key")],
                 rows, Text(f"本ビルドのデータ: {run.raw['data']['generator']}、SF {run.raw['data']['sf']:g}。",
                            f"This build's data: {run.raw['data']['generator']}, SF {run.raw['data']['sf']:g}."))


def original_table(run: Run) -> Table:
    q10, q11 = run.chapter.original["q10"], run.chapter.original["q11"]
    rows = [(Text("Q10、サーバー 1、ワーカー 2", "Q10, server 1, 2 workers"), q10["server1"]),
            (Text("Q10、サーバー 2、ワーカー 2", "Q10, server 2, 2 workers"), q10["server2"]),
            (Text("Q10、サーバー 2、ワーカー 0", "Q10, server 2, 0 workers"), q10["server2_serial"]),
            (Text("Q11、サーバー 2、ワーカー 2", "Q11, server 2, 2 workers"), q11["server2"]),
            (Text("Q11、サーバー 2、ワーカー 0", "Q11, server 2, 0 workers"), q11["server2_serial"])]
    return Table(Text("原典の時間 [s]", "The original's times [s]"),
                 [Text("クエリ、サーバー、ワーカー", "Query, server, workers"), Text("9.5", "9.5"),
                  Text("9.6", "9.6"), Text("10", "10")],
                 [[label, *(f"{times[v]:,}" for v in ("9.5", "9.6", "10"))] for label, times in rows],  # as printed
                 Text("原典 (PGECons 2017 年度 WG1 活動報告、6 章) の値です。"
                      "9.5 にはパラレルクエリがないため、9.5 の 2 行は同じ実行です。",
                      "Figures of the original (PGECons WG1 report for fiscal 2017, section 6). "
                      "9.5 has no parallel query: its two rows per query are the same run."),
                 measured=False)


def q10_table(run: Run) -> Table:
    original = run.chapter.original["q10"]
    by_workers = {0: original["server2_serial"]["10"],
                  **dict(zip(original["workers"], original["server2_by_workers"]["10"]))}
    rows = []
    for name in _workers(run, "q10_"):
        c, w = run.summary["conditions"][name], workers_of(name)
        rows.append([str(w), CORRELATED_RUN if c["scans"] >= PER_RUN else HASHED_RUN, Number(c["scans"], "", 0),
                     Number(c["launched"], "", 0), _seconds(run, name), *_parts(c), Number(by_workers.get(w), "s")])
    return Table(Text("Q10 (ワーカー数ごと)", "Q10 by worker count"),
                 [Text("ワーカー", "Workers"), Text("実行されたサブプラン", "Subplan that ran"),
                  Text("web_sales の走査 (リーダー)", "Scans of web_sales (leader)"),
                  Text("起動したワーカー (Gather の合計)", "Workers launched (all Gathers)"),
                  Text("時間 (中央値)", "Time (median)"), Text("うち Gather の中", "Of which inside Gather"),
                  Text("Gather の外", "Outside Gather"), Text("原典 10、サーバー 2", "Original 10, server 2")],
                 rows,
                 Text("走査の数は、1 回目の実行で Q10 を実行したバックエンド (リーダー) が web_sales をシーケンシャルスキャンした回数です "
                      "(同じトランザクションの pg_stat_xact_user_tables)。ワーカーの走査は含みません。"
                      "「起動したワーカー」は 1 回目の実行の値で、打ち切った実行では空欄です。"
                      "打ち切った条件は繰り返しません。「Gather の中」は、ほかの Gather の下にない Gather・Gather Merge の"
                      "実時間の和で、「Gather の外」はその残りです。原典にはワーカー 1 の行がありません。",
                      "Scans are the sequential scans of web_sales by the backend that ran Q10 (the leader) in the "
                      "first run (pg_stat_xact_user_tables, same transaction); workers' scans are not counted. "
                      "Workers launched are the first run's; a cut run has none. A condition cut by the cap is "
                      "not repeated. Inside Gather is the actual time of the Gather and Gather Merge nodes not "
                      "under another; outside is the rest. The original has no row for 1 worker."))


def costs_table(run: Run) -> Table:
    original = run.chapter.original["costs"]
    rows = [[Text(f"原典 {v} ({_count(w).ja})", f"original {v} ({_count(w).en})")]
            + [Number(original[v][name], "", 0) for name, _ in SUBPLANS]
            for v, w in (("9.5", 0), ("9.6", 2))]
    for name, costs in sorted(run.raw["q10_costs"].items(), key=lambda item: workers_of(item[0])):
        w = _count(workers_of(name))
        rows.append([Text(f"本ビルド ({w.ja})", f"this build ({w.en})")]
                    + [Number(costs.get(sub), "", 0) for sub, _ in SUBPLANS])
    return Table(Text("Q10 の代替サブプランの推定コスト (EXPLAIN)", "Estimated costs of Q10's alternative subplans (EXPLAIN)"),
                 [Text("プラン", "Plan"), *[label for _, label in SUBPLANS]],
                 rows,
                 Text("13 までは両方の候補が計画に残り、実行時にエグゼキューターが安いほうを選びます。"
                      "14 からはプランナーが選んだものだけが残るため、相関サブプランの列は空欄です。"
                      "並列にすると、ハッシュ化サブプランの入力が Gather になってコストが下がります。",
                      "Up to 13 both candidates stay in the plan and the executor picks the cheaper at run time; "
                      "from 14 on only the planner's choice remains, so the correlated columns are blank. With "
                      "workers, the hashed subplan's input becomes a Gather and its cost falls."))


def _sorts(sorts: list[dict]) -> str:
    return "; ".join(f"{s['method']} {Number(s['kb'], 'kB', 0).format('en')} ({s['space']})" for s in sorts) or "—"


def year_total_table(run: Run) -> Table:
    original = run.chapter.original["q11"]
    parts = dict(zip(original["parallel_part_workers"], original["parallel_part"]))
    rows = []
    for name in _workers(run, "year_total_"):
        c, w = run.summary["conditions"][name], workers_of(name)
        rows.append([str(w), _seconds(run, name), *_parts(c), _sorts(c["sorts"]), Number(parts.get(w), "s", 2)])
    return Table(Text("Q11 の year_total (2017 年のプランの形: enable_hashagg = off)",
                      "Q11's year_total (2017's plan shape: enable_hashagg = off)"),
                 [Text("ワーカー", "Workers"), Text("時間 (中央値)", "Time (median)"),
                  Text("うち Gather の中", "Of which inside Gather"), Text("Gather の外", "Outside Gather"),
                  Text("ソート (リーダーと各ワーカー、1 回目)", "Sorts (leader and each worker, first run)"),
                  Text("原典 10 の並列部分、サーバー 2", "Original 10, parallel part, server 2")],
                 rows,
                 Text(f"原典のソート: 9.5 (並列なし) {original['serial_sort']}、10 (ワーカー 2) {original['worker_sort']}。"
                      f"work_mem はこのスケールで {run.params['year_total_work_mem']} です。",
                      f"The original's sorts: 9.5 (serial) {original['serial_sort']}; 10 (2 workers) "
                      f"{original['worker_sort']}. work_mem is {run.params['year_total_work_mem']} at this scale."))


KEPT = re.compile(r"Gather|SubPlan|Seq Scan on (web|catalog)_sales")


def trimmed(plan: str) -> list[str]:
    """The lines that show which subplans exist and what feeds them: the Gathers, each
    subplan with its top node (its cost), and the scans of web_sales and catalog_sales."""
    lines = plan.splitlines()
    kept = [line for i, line in enumerate(lines)
            if KEPT.search(line) or (i and re.match(r"\s*SubPlan \d+$", lines[i - 1]))]
    indent = min((len(line) - len(line.lstrip()) for line in kept), default=0)
    return [line[indent:].rstrip() for line in kept]


def plan_table(run: Run) -> Table:
    rows = []
    for name in (q10(0), q10(2)):
        rows += [[str(workers_of(name)) if i == 0 else "", line.replace("  ", "\u00a0 ")]
                 for i, line in enumerate(trimmed(run.raw["plans"][name]))]
    return Table(Text("Q10 の実行計画 (EXPLAIN の出力のうち Gather、サブプランとその最上位ノード、"
                      "web_sales と catalog_sales の走査の行だけ)",
                      "Q10's plans (EXPLAIN: only the Gathers, each subplan with its top node, and the scans of "
                      "web_sales and catalog_sales)"),
                 [Text("ワーカー", "Workers"), Text("計画の行", "Plan line")], rows)


def _parts_chart(run: Run, prefix: str, title: Text) -> Chart:
    names = [n for n in _workers(run, prefix) if not run.summary["conditions"][n]["cancelled"]]
    cs = [run.summary["conditions"][n] for n in names]
    return Chart(title, [_count(workers_of(n)) for n in names],
                 [Series(Text("Gather の外", "outside Gather"), [c["seconds"] - c["parallel_s"] for c in cs]),
                  Series(Text("Gather の中", "inside Gather"), [c["parallel_s"] for c in cs])],
                 Text("時間 [s] (中央値)", "time [s] (median)"), kind="stacked")


def q10_chart(run: Run) -> Chart:
    return _parts_chart(run, "q10_", Text("Q10: Gather の外と中 (打ち切った条件を除く)",
                                         "Q10: outside and inside Gather (conditions cut by the cap left out)"))


def year_total_chart(run: Run) -> Chart:
    return _parts_chart(run, "year_total_", Text("Q11 の year_total: Gather の外と中", "Q11's year_total: outside and inside Gather"))


def numbers(run: Run) -> dict[str, Number]:
    c = run.summary["conditions"]
    return {"serial_estimate": Number(run.summary["serial_estimate"], "s"),
            "parallel_q10": Number(c[q10(2)]["seconds"], "s", 2),
            "speedup": run.estimate(SERIAL_SPEEDUP),
            "year_total_gain": run.estimate(YEAR_TOTAL_GAIN),
            "year_total_serial": Number(c[year_total(0)]["seconds"], "s", 1),
            "cap": Number(run.params["cap_s"], "s", 0)}


SCALE_ROWS = [("sf", Text("TPC-DS のスケールファクター", "TPC-DS scale factor")),
              ("workers", Text("Q10 のワーカー数", "Q10's worker counts")),
              ("year_total_workers", Text("year_total のワーカー数", "year_total's worker counts")),
              ("year_total_work_mem", Text("year_total の work_mem", "year_total's work_mem")),
              ("rounds", ROUNDS)]
TABLES = {"original": original_table, "data": data_table, "q10": q10_table, "costs": costs_table, "year_total": year_total_table, "plan": plan_table,
          "scaling": scaling_table(SCALE_ROWS)}
CHARTS = {"q10": q10_chart, "year_total": year_total_chart}
