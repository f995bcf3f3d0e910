"""What the page shows: the original's cold runs beside this build's per eic value, the traced
calls per heap block, and charts of the time and request size against eic 0."""
from __future__ import annotations

from ...chapter import INTERVAL, Chart, Run, Series, Table
from ...site.scaling import ROUNDS, scaling_table
from ...site.words import WORDS
from ...text import Number, Text
from ...verdict import Measure
from .conditions import PARALLEL, SERIAL
from .findings import PARALLEL_REQUEST, PARALLEL_TIME, REQUEST_1_0, TIME_1_0, ratio_measure

LABELS = {
    "eic0": Text("eic = 0", "eic = 0"), "eic1": Text("eic = 1", "eic = 1"),
    "eic16": Text("eic = 16", "eic = 16"), "eic64": Text("eic = 64", "eic = 64"),
    "parallel_eic0": Text("並列、eic = 0", "parallel, eic = 0"),
    "parallel_eic1": Text("並列、eic = 1", "parallel, eic = 1"),
}
BASELINE = {**{c: "eic0" for c in SERIAL}, **{c: "parallel_eic0" for c in PARALLEL}}
CHECKED = {("eic1", "time_ms"): TIME_1_0, ("eic1", "request_kb"): REQUEST_1_0,
           ("parallel_eic1", "time_ms"): PARALLEL_TIME, ("parallel_eic1", "request_kb"): PARALLEL_REQUEST}


def _ratio_measure(condition: str, field: str) -> Measure:
    """The findings' ratio where a check has it (one estimate for both), else the same ratio
    for the conditions no finding checks."""
    if (condition, field) in CHECKED:
        return CHECKED[condition, field]
    digits = 3 if field == "request_kb" else 2  # request ratios fall to a few thousandths
    return ratio_measure(condition, BASELINE[condition], field, LABELS[condition], digits)


def ours(run: Run, condition: str, field: str = "time_ms") -> Number:
    """This build's ratio of a condition against eic 0 (serial or parallel), with its interval."""
    return run.estimate(_ratio_measure(condition, field))


def measured(run: Run) -> list[str]:
    return [c for c in LABELS if c in run.summary["conditions"]]


def cold_table(run: Run) -> Table:
    original = run.chapter.original
    rows = []
    for c in measured(run):
        v, orig = run.summary["conditions"][c], original.get(c, {})
        rows.append([LABELS[c], Number(orig.get("time_ms"), "", 1), Number(v["time_ms"], "", 1),
                     f"{Number(v['fastest_ms'], '', 0).format('en')}–{Number(v['slowest_ms'], '', 0).format('en')}",
                     ours(run, c), Number(orig.get("request_kb"), "", 0), Number(v["request_kb"], "", 0),
                     ours(run, c, "request_kb"), Number(v["lossy"], "", 0), Number(v["heap_read"], "", 0),
                     Number(v["heap_hit"], "", 0),
                     Number(v["from_device_min"] * 100, "%", 0)])
    return Table(Text("コールドキャッシュからの実行 (各条件の中央値)", "Cold runs (median of each condition)"),
                 [Text("条件", "Condition"), Text("原典 [ms]", "Original [ms]"), Text("本ビルド [ms]", "This build [ms]"),
                  Text("最速〜最遅 [ms]", "Fastest to slowest [ms]"),
                  Text(f"時間の比{INTERVAL.ja}", f"Time ratio{INTERVAL.en}"),
                  Text("原典の要求 [kB]", "Original request [kB]"), Text("本ビルドの要求 [kB]", "This build request [kB]"),
                  Text(f"要求サイズの比{INTERVAL.ja}", f"Request size ratio{INTERVAL.en}"),
                  Text("lossy [ブロック]", "Lossy [blocks]"), Text("ヒープ read [ブロック]", "Heap read [blocks]"), Text("ヒープ hit [ブロック]", "Heap hit [blocks]"),
                  Text("デバイスから (最小)", "From the device (least)")],
                 rows,
                 Text("比は、各ラウンドの値を同じラウンドの eic = 0 (並列の条件は並列の eic = 0) の値で割った比の、ラウンドにわたる幾何平均です。"
                      "要求はデバイスへの読み込み要求 1 回の平均サイズ (/proc/diskstats の差分)、"
                      "read と hit は EXPLAIN (ANALYZE, BUFFERS) のヒープスキャンの共有バッファー、"
                      "「デバイスから」は実行中にデバイスが読んだバイト数をヒープの read のバイト数で割った値の、全ラウンドでの最小値です "
                      "(100% 前後かそれ以上なら、ページキャッシュからではなくデバイスから読んでいます)。"
                      "並列の条件の lossy は、EXPLAIN がリーダーの分しか数えないため空欄です。",
                      "A ratio is the geometric mean over rounds of each round's value over the same round's eic = 0 "
                      "(parallel eic = 0 for the parallel conditions). A request is the mean size of one read "
                      "request to the device (/proc/diskstats deltas); read and hit are the heap scan's shared "
                      "buffers from EXPLAIN (ANALYZE, BUFFERS); \"from the device\" is the bytes the device "
                      "read during a run over the heap's bytes read, the least over all rounds (about 100 % "
                      "or more: the run read from the device, not from the page cache). Lossy is left "
                      "blank for the parallel conditions: EXPLAIN counts only the leader's blocks there.")).transposed()


def trace_table(run: Run) -> Table:
    rows = []
    for c, t in run.summary["trace"].items():
        rows.append([LABELS[c], Number(t["heap_blocks"], "", 0), Number(t["willneed_calls"], "", 0),
                     Number(t["willneed_per_block"], "", 2), Number(t["willneed_kb"], "", 0),
                     Number(t["read_calls"], "", 0), Number(t["reads_per_block"], "", 2), Number(t["read_kb"], "", 0),
                     ", ".join(f"{k} {n:,}" for k, n in sorted(t["calls"].items())) or "—"])
    return Table(Text("strace で数えたテーブルのファイルへのシステムコール (直列、コールドキャッシュで各 1 回)",
                      "System calls on the table's files, counted by strace (serial, one cold run each)"),
                 [Text("条件", "Condition"), Text("ヒープブロック", "Heap blocks"), Text("WILLNEED", "WILLNEED"),
                  Text("WILLNEED ÷ ブロック", "WILLNEED per block"), Text("WILLNEED 平均 [kB]", "WILLNEED mean [kB]"),
                  Text("読み込み", "Reads"), Text("読み込み ÷ ブロック", "Reads per block"),
                  Text("読み込み平均 [kB]", "Read mean [kB]"), Text("システムコール別", "By system call")],
                 rows,
                 Text("18 ではバックエンドに加えて I/O ワーカーのプロセスも追跡します (io_method = worker)。",
                      "On 18 the I/O worker processes are traced beside the backend (io_method = worker)."))


def time_chart(run: Run) -> Chart:
    conditions = [c for c in measured(run) if c not in BASELINE.values()]
    values = [ours(run, c) for c in conditions]
    original = run.chapter.original
    return Chart(Text("コールドキャッシュでの実行時間、eic = 0 (並列は並列の eic = 0) に対する比",
                      "Cold run time against eic = 0 (parallel: against parallel eic = 0)"),
                 [LABELS[c] for c in conditions],
                 [Series(Text("原典", "original"),
                         [original["eic1"]["time_ms"] / original["eic0"]["time_ms"] if c == "eic1" else None
                          for c in conditions]),
                  Series(WORDS["pooled_runs"], [n.value for n in values], [n.low for n in values],
                         [n.high for n in values])],
                 Text("比 [×]", "ratio [×]"))


def request_chart(run: Run) -> Chart:
    conditions = measured(run)
    original = run.chapter.original
    return Chart(Text("デバイスへの読み込み要求 1 回の平均サイズ", "Mean size of one read request to the device"),
                 [LABELS[c] for c in conditions],
                 [Series(Text("原典 (blktrace)", "original (blktrace)"),
                         [original.get(c, {}).get("request_kb") for c in conditions]),
                  Series(Text("本ビルド (/proc/diskstats、中央値)", "this build (/proc/diskstats, median)"),
                         [run.summary["conditions"][c]["request_kb"] for c in conditions])],
                 Text("kB", "kB"))


def numbers(run: Run) -> dict[str, Number]:
    c, original = run.summary["conditions"], run.chapter.original
    return {
        "relation_mb": Number(run.summary["relation_mb"], "MB", 0),
        "read_ahead_kb": Number(run.summary["read_ahead_kb"], "kB", 0),
        "time_ratio": ours(run, "eic1"),
        "request_eic0": Number(c["eic0"]["request_kb"], "kB", 0),
        "request_eic1": Number(c["eic1"]["request_kb"], "kB", 0),
        "time_eic0": Number(c["eic0"]["time_ms"], "ms", 0),
        "time_eic1": Number(c["eic1"]["time_ms"], "ms", 0),
        "original_ratio": Number(original["eic1"]["time_ms"] / original["eic0"]["time_ms"], "×", 2),
        "eic16_ratio": ours(run, "eic16"),
        "willneed_per_block": Number(run.summary["trace"]["eic1"]["willneed_per_block"], "", 2),
        "read_kb": Number(run.summary["trace"]["eic0"]["read_kb"], "kB", 0),
    }


SCALE_ROWS = [("rows", Text("foobar の行数", "rows in foobar")),
              ("rounds", ROUNDS)]

TABLES = {"cold": cold_table, "trace": trace_table, "scaling": scaling_table(SCALE_ROWS)}
CHARTS = {"time": time_chart, "request": request_chart}
