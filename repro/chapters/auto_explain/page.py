"""What the page shows: the originals' latencies and changes beside this build's, with
intervals, and the timing histogram."""
from __future__ import annotations

from collections.abc import Callable

from ...chapter import Chart, Run, Series, Table
from ...site.scaling import ROUNDS, scaling_table
from ...site.words import WORDS
from ...text import Number, Text
from .analysis import BASELINES, COUNT_CONDITIONS, TPCB_CONDITIONS, original_change
from .findings import change_measure, label

COL = {
    "condition": Text("条件", "Condition"),
    "vs": Text("比較の基準", "Compared with"),
    "orig_ms": Text("原典 [ms]", "Original [ms]"),
    "orig_pct": Text("原典の変化", "Original change"),
    "ours_ms": Text("本ビルド [ms]", "This build [ms]"),
    "ours_pct": Text("変化、プールした実行 [95% 信頼区間]", "Change, pooled runs [95 % interval]"),
    "spread": Text("本ビルドのばらつき", "This build spread"),
    "ours_tps": Text("本ビルドの tps", "This build tps"),
    "orig_tps": Text("原典の tps", "Original tps"),
}
NOTE = Text("変化は、各ラウンドの値を同じラウンドの比較の基準で割った比の、ラウンドにわたる幾何平均です。"
            "レイテンシの列は全ラウンドの中央値なので、列どうしを割っても変化とは一致しません。",
            "A change is the geometric mean over rounds of each round's value over the same round's "
            "value of the condition it is compared with; the latency columns are medians over all "
            "rounds, so dividing them does not give the change exactly.")
LIMIT_CONDITIONS = ("not_loaded", "preloaded", "loaded", "explain", "analyze", "analyze_no_timing",
                    "explain_log", "analyze_log")


def _pct(value: float | None) -> Number:
    return Number(value, "%", 1, signed=True)


def ours(run: Run, condition: str) -> Number:
    """This build's change of a condition against its baseline, with its interval (the
    findings' measure)."""
    return run.estimate(change_measure(condition))


ALTERNATING = Text("最初の 2 行 (読み込まない、読み込むが無効で交互に実行) は 2 台のサーバーで交互に行う短い pgbench の"
                   "実行で、それ以外の行は 1 回の pgbench の実行に条件を混ぜて測ります。実行のしかたが違う"
                   "ため、同じ「読み込むが無効」の設定でも 2 行目と 3 行目のレイテンシは一致するとは限りません。"
                   "変化はそれぞれ同じ実行のしかたの基準との比です。",
                   "The first two rows (not loaded; loaded, disabled, alternating) come from short "
                   "pgbench runs alternating between two servers; the other rows mix their conditions "
                   "in one pgbench run. Measured differently, the same \"loaded, disabled\" setting "
                   "need not give the same latency in rows 2 and 3; each change is against a baseline "
                   "measured the same way.")


def _latency_table(caption: Text, query: str, conditions: tuple[str, ...]) -> Callable[[Run], Table]:
    def build(run: Run) -> Table:
        original = run.chapter.original
        rows = []
        for c in conditions:
            key, v = f"{query}/{c}", run.summary["conditions"][f"{query}/{c}"]
            base = BASELINES.get(key)
            rows.append([label(key), Number(original[query].get(c), "", 3),
                         _pct(original_change(original, key)) if base else None,
                         Number(v["latency_ms"], "", 3), ours(run, key) if base else None,
                         label(base) if base else None, Number(v["spread_pct"], "%", 1)])
        note = Text.join([NOTE, ALTERNATING], "", " ") if query == "limit" else NOTE
        return Table(caption, [COL["condition"], COL["orig_ms"], COL["orig_pct"], COL["ours_ms"],
                               COL["ours_pct"], COL["vs"], COL["spread"]], rows, note)
    return build


def tpcb_table(run: Run) -> Table:
    original = run.chapter.original
    rows = []
    for c in ("baseline", *TPCB_CONDITIONS):
        key, v = f"tpcb/{c}", run.summary["conditions"][f"tpcb/{c}"]
        base = key in BASELINES
        rows.append([label(key), Number(original["tpcb"][c], "", 3),
                     _pct(original_change(original, key)) if base else None,
                     Number(original["tpcb_tps"][c], "", 0), Number(v["latency_ms"], "", 3),
                     ours(run, key) if base else None, Number(v["tps"], "", 0),
                     Number(v["spread_pct"], "%", 1)])
    return Table(Text("TPC-B (4 クライアント) の平均レイテンシ", "TPC-B (4 clients) latency average"),
                 [COL["condition"], COL["orig_ms"], COL["orig_pct"], COL["orig_tps"], COL["ours_ms"],
                  COL["ours_pct"], COL["ours_tps"], COL["spread"]], rows, NOTE)


def timing_table(run: Run) -> Table:
    original = {b: share for b, share, _ in run.chapter.original["timing"]["histogram"]}
    measured = {b: share for b, share, _ in run.summary["timing"]["histogram"]}
    rows = [[f"< {bound}", Number(original.get(bound), "%", 5), Number(measured.get(bound), "%", 5)]
            for bound in sorted(original.keys() | measured.keys())]
    return Table(Text("pg_test_timing のヒストグラム", "pg_test_timing histogram"),
                 [Text("計測時間 [µs]", "Duration [µs]"), Text("原典", "Original"),
                  Text("本ビルド", "This build")], rows)


SERIES = {"orig": Text("原典", "original"), "ours": WORDS["pooled_runs"]}


def _series(name: Text, originals: list[float | None], measured: list[Number]) -> list[Series]:
    return [Series(Text(f"{name.ja} ({SERIES['orig'].ja})", f"{name.en} ({SERIES['orig'].en})"),
                   originals),
            Series(Text(f"{name.ja} ({SERIES['ours'].ja})", f"{name.en} ({SERIES['ours'].en})"),
                   [n.value for n in measured], [n.low for n in measured], [n.high for n in measured])]


def overhead_chart_000(run: Run) -> Chart:
    conditions = ("explain", "analyze", "analyze_no_timing")
    series = []
    for query, name in (("count_parallel", Text("count 並列あり", "count, parallel")),
                        ("count_serial", Text("count 並列なし", "count, serial")),
                        ("limit", Text("1 行", "1 row"))):
        keys = [f"{query}/{c}" for c in conditions]
        series += _series(name, [original_change(run.chapter.original, k) for k in keys],
                          [ours(run, k) for k in keys])
    return Chart(Text("auto_explain 読み込み済み・無効に対するレイテンシの変化",
                      "Latency change against auto_explain loaded but disabled"),
                 [label(c) for c in conditions], series, Text("変化 [%]", "change [%]"))


def overhead_chart_001(run: Run) -> Chart:
    keys = [f"tpcb/{c}" for c in TPCB_CONDITIONS]
    measured = [ours(run, k) for k in keys]
    return Chart(Text("TPC-B: ベースラインに対するレイテンシの変化",
                      "TPC-B: latency change against the baseline"),
                 [label(k) for k in keys],
                 [Series(SERIES["orig"], [original_change(run.chapter.original, k) for k in keys]),
                  Series(SERIES["ours"], [n.value for n in measured], [n.low for n in measured],
                         [n.high for n in measured])],
                 Text("変化 [%]", "change [%]"))


SCALE_ROWS = [
    ("rows", Text("tab1 の行数", "rows in tab1")),
    ("limit_tx", Text("1 行のクエリ: 条件ごとのトランザクション数", "1-row query: transactions per condition")),
    ("count_tx", Text("count: 条件ごとのトランザクション数", "count: transactions per condition")),
    ("rounds", ROUNDS),
    ("tpcb_scale", Text("TPC-B のスケールファクター", "TPC-B scale factor")),
    ("tpcb_clients", Text("TPC-B のクライアント数", "TPC-B clients")),
    ("tpcb_seconds", Text("TPC-B の 1 回の時間 [s]", "TPC-B run length [s]")),
]


def numbers(run: Run) -> dict[str, Number]:
    original = run.chapter.original
    return {
        "timing.per_loop": Number(run.summary["timing"]["per_loop_ns"], "ns", 2),
        "timing.under_1us": Number(run.summary["timing"]["under_1us_pct"], "%", 2),
        "timing.original_per_loop": Number(original["timing"]["per_loop_ns"], "ns", 2),
        "count_serial.analyze": ours(run, "count_serial/analyze"),
        "count_parallel.analyze": ours(run, "count_parallel/analyze"),
        "tpcb.baseline_tps": Number(run.summary["conditions"]["tpcb/baseline"]["tps"], "", 0),
        "tpcb.original_baseline_tps": Number(original["tpcb_tps"]["baseline"], "", 0),
    }


TABLES = {
    "limit": _latency_table(Text("1 行のクエリ (limit.pgbench) の平均レイテンシ",
                                 "1-row query (limit.pgbench) latency average"), "limit", LIMIT_CONDITIONS),
    "count_parallel": _latency_table(Text("100 万行の count、パラレルクエリあり",
                                          "1e6-row count, parallel query on"), "count_parallel",
                                     COUNT_CONDITIONS),
    "count_serial": _latency_table(Text("100 万行の count、パラレルクエリなし",
                                        "1e6-row count, parallel query off"), "count_serial",
                                   COUNT_CONDITIONS),
    "tpcb": tpcb_table,
    "scaling": scaling_table(SCALE_ROWS),
    "timing": timing_table,
}
CHARTS = {"overhead_000": overhead_chart_000, "overhead_001": overhead_chart_001}
