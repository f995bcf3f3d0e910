"""What the page shows: the original's and this build's TPS and ratios, where the standbys
were, the checksums."""
from __future__ import annotations

from collections.abc import Callable

from ...chapter import Chart, Run, Series, Table
from ...site.scaling import CLIENTS, PGBENCH_SCALE, ROUNDS, RUN_LENGTH, scaling_table
from ...site.words import WORDS
from ...text import Number, Text
from .findings import LABELS, PATTERN_B, SYNC_CHAIN, ratio_measure

COL = {
    "config": Text("構成", "Configuration"),
    "orig_tps": Text("原典 TPS", "Original TPS"), "orig_ratio": Text("原典の比", "Original ratio"),
    "tps": Text("本ビルド TPS", "This build TPS"),
    "ratio": Text("比、プールした実行 [95% 信頼区間]", "Ratio, pooled runs [95 % interval]"),
    "spread": Text("本ビルドのばらつき", "This build spread"),
}
ASYNC = ["async1", "async2", "async3"]


def _pct(value: float | None) -> Number:
    return Number(value, "%", 1)


def original_ratio(run_or_chapter: Run, config: str) -> float:
    tps = run_or_chapter.chapter.original["tps"]
    return tps[config] / tps["none"] * 100


def ratio(run: Run, config: str) -> Number:
    """TPS against no replication, with its interval over rounds (the findings' measure)."""
    return run.estimate(ratio_measure(config))


def _tps_table(caption: Text, configs: list[str]) -> Callable[[Run], Table]:
    def build(run: Run) -> Table:
        original = run.chapter.original["tps"]
        rows = []
        for c in ["none", *configs]:
            ours = run.summary["conditions"][c]
            rows.append([LABELS[c], Number(original[c], "", 1), _pct(original_ratio(run, c)),
                         Number(ours["tps"], "", 0), ratio(run, c) if c != "none" else _pct(100),
                         _pct(ours["spread_pct"])])
        return Table(caption, [COL[k] for k in ("config", "orig_tps", "orig_ratio", "tps", "ratio",
                                                "spread")], rows,
                     Text("比は、各ラウンドの TPS を同じラウンドのレプリケーションなしの TPS で割った比の、ラウンドにわたる幾何平均です。"
                          "TPS の列は全ラウンドの中央値なので、列どうしを割っても比とは一致しません。",
                          "A ratio is the geometric mean over rounds of each round's TPS over the same round's "
                          "TPS without replication; the TPS columns are medians over all rounds, so "
                          "dividing them does not give the ratio exactly."))
    return build


def consistency_table(run: Run) -> Table:
    rows = []
    for c, v in run.summary["conditions"].items():
        if c == "none":
            continue
        end, most = v["async_lag_end_median"], v["async_lag_max"]
        rows.append([LABELS[c], Number(v["sync_runs"], "", 0),
                     Number(v["sync_min_flush_margin"], "B", 0),
                     (Text("はい", "yes") if v["sync_all_flushed"] else Text("いいえ", "no"))
                     if v["sync_runs"] else None,
                     Number(None if end is None else end / 1024, "kB", 1),
                     Number(None if most is None else most / 1024, "kB", 1)])
    return Table(Text("実行の終わりのスタンバイの位置", "Where the standbys were at the end of each run"),
                 [COL["config"], Text("確認した同期スタンバイの数", "synchronous standbys checked"),
                  Text("flush − 最後のコミット (最小)", "flush − last commit (lowest)"),
                  Text("すべて flush 済み", "all flushed"),
                  Text("非同期: 区間の終わりの適用の遅れ (中央値)",
                       "asynchronous: replay behind at the window's end (median)"),
                  Text("非同期: 区間中の適用の遅れ (最大)", "asynchronous: replay behind during the window (max)")],
                 rows)


def checksum_table(run: Run) -> Table:
    checksums = run.summary["checksums"]
    rows = [[name, str(value), Text("一致", "match") if value == checksums["primary"] else Text("不一致", "differs")]
            for name, value in checksums.items()]
    return Table(Text("最後に全スタンバイを追いつかせた後の pgbench_accounts のチェックサム",
                      "pgbench_accounts checksums after all standbys caught up at the end"),
                 [Text("サーバー", "Server"), Text("チェックサム", "Checksum"),
                  Text("プライマリとの比較", "Against the primary")], rows)


def _ratio_chart(title: Text, categories: list[Text], groups: list[tuple[Text, list[str]]]
                 ) -> Callable[[Run], Chart]:
    def build(run: Run) -> Chart:
        series = []
        for name, configs in groups:
            series.append(Series(Text(f"{name.ja} (原典)", f"{name.en} (original)"),
                                 [original_ratio(run, c) for c in configs]))
            ours = [ratio(run, c) for c in configs]
            series.append(Series(Text(f"{name.ja} ({WORDS['pooled_runs'].ja})", f"{name.en} ({WORDS['pooled_runs'].en})"),
                                 [n.value for n in ours], [n.low for n in ours], [n.high for n in ours]))
        return Chart(title, categories, series,
                     Text("レプリケーションなしに対する TPS [%]", "TPS against no replication [%]"))
    return build


SCALE_ROWS = [
    ("pgbench_scale", PGBENCH_SCALE),
    ("clients", CLIENTS),
    ("seconds", RUN_LENGTH),
    ("rounds", ROUNDS),
]


def numbers(run: Run) -> dict[str, Number]:
    return {"none_tps": Number(run.summary["conditions"]["none"]["tps"], "", 0),
            "original_none_tps": Number(run.chapter.original["tps"]["none"], "", 1),
            "sync1_ratio": ratio(run, "sync1"), "async1_ratio": ratio(run, "async1"),
            "async3_ratio": ratio(run, "async3")}


TABLES = {
    "pattern_a_sync": _tps_table(Text("検証 A: 同期スタンバイの台数", "Pattern A: synchronous standbys"),
                                 SYNC_CHAIN),
    "pattern_a_async": _tps_table(Text("検証 A: 非同期スタンバイの台数", "Pattern A: asynchronous standbys"),
                                  ASYNC),
    "pattern_b": _tps_table(Text("検証 B: 3 台のうち同期の台数", "Pattern B: synchronous among 3 standbys"),
                            PATTERN_B),
    "consistency": consistency_table, "checksums": checksum_table,
    "scaling": scaling_table(SCALE_ROWS),
}
CHARTS = {
    "pattern_a": _ratio_chart(Text("検証 A: スタンバイの台数と TPS", "Pattern A: standbys and TPS"),
                              [Text(f"{n} 台", f"{n} standby" + ("s" if n > 1 else "")) for n in (1, 2, 3)],
                              [(Text("同期", "synchronous"), SYNC_CHAIN), (Text("非同期", "asynchronous"), ASYNC)]),
    "pattern_b": _ratio_chart(Text("検証 B: 3 台のうち同期の台数と TPS",
                                   "Pattern B: synchronous among 3 standbys and TPS"),
                              [LABELS[c] for c in PATTERN_B], [(Text("3 台", "3 standbys"), PATTERN_B)]),
}
