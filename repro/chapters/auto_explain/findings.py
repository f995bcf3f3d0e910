"""The findings: latency changes with their intervals over rounds, against thresholds that
say what this machine can tell apart, beside what the originals reported.

Resolution here (repeated default runs on a noisy 2-core VM): conditions mixed in one
pgbench run agree within a few percent on the 1-row query (thousands of transactions)
and within about 10 % on the count (a few dozen); two servers compared by alternating
short runs disagree by up to ~15 % on their own; 2-second TPC-B runs vary by up to ~12 %.
"""
from __future__ import annotations

from functools import cache

from ...requirements import Requirement, own_server
from ...stats import Rounds, median
from ...text import Text
from ...verdict import Above, Below, Between, Check, Measure
from ...wording import Wording
from .analysis import change, changes

ACROSS_SERVERS_PCT = 20.0  # comparing two servers by alternating runs
NEGLIGIBLE_PCT = 10.0  # the 1-row query, conditions mixed in one run
COUNT_NEGLIGIBLE_PCT = 15.0  # the count (fewer transactions)
LARGE_PCT = 30.0  # an analyze overhead above this counts as large
LOGGING_PCT = 10.0  # logging every plan costs more than this
TPCB_PCT = 15.0  # TPC-B runs against the baseline server
OPTIONS_PCT = 10.0  # TPC-B runs on the same server, extra options against analyze with timing

TWIN = own_server(Text("auto_explain を shared_preload_libraries で読み込むサーバーと、読み込まない双子のサーバー",
                       "a server that preloads auto_explain (shared_preload_libraries) and a twin without it"))
LOGGING = own_server(Text("すべての計画をサーバーのログに書く実行 (既存のサーバーのログには書きません)",
                          "runs that write every plan into the server's log (an existing server's log is left alone)"))
SESSION_LOADED = Requirement(
    lambda e: not e.external or bool(e.raw.get("session_load")),
    lambda e: Text("既存のサーバーで auto_explain をセッションに読み込めませんでした (session_preload_libraries "
                   "にはスーパーユーザーのロールが要ります)。",
                   "auto_explain could not be loaded into the sessions on the existing server "
                   "(session_preload_libraries needs a superuser role)."),
    Text("auto_explain をセッションに読み込めるロール", "a role that may load auto_explain per session"), of_target=True)

QUERY = {"limit": Text("1 行", "1 row"), "count_parallel": Text("count 並列あり", "count, parallel"),
         "count_serial": Text("count 並列なし", "count, serial"), "tpcb": Text("TPC-B", "TPC-B")}
LABELS = {
    "not_loaded": Text("auto_explain を読み込まない", "auto_explain not loaded"),
    "preloaded": Text("読み込むが無効 (読み込まない条件と交互に実行)",
                      "loaded, disabled (alternating with not loaded)"),
    "loaded": Text("読み込むが無効 (log_min_duration = -1)", "loaded, disabled (log_min_duration = -1)"),
    "explain": Text("EXPLAIN、出力なし", "EXPLAIN, no output"),
    "analyze": Text("EXPLAIN ANALYZE、出力なし", "EXPLAIN ANALYZE, no output"),
    "analyze_no_timing": Text("EXPLAIN ANALYZE、出力なし、log_timing = off",
                              "EXPLAIN ANALYZE, no output, log_timing = off"),
    "explain_log": Text("EXPLAIN、出力あり", "EXPLAIN, output on"),
    "analyze_log": Text("EXPLAIN ANALYZE、出力あり", "EXPLAIN ANALYZE, output on"),
    "baseline": Text("ベースライン (読み込まない)", "baseline (not loaded)"),
    "log_all": Text("全計画をログ (log_min_duration = 0)", "every plan logged (log_min_duration = 0)"),
    "threshold": Text("閾値 10 ms", "10 ms threshold"),
    "tpcb/analyze_no_timing": Text("+ log_analyze、timing off", "+ log_analyze, timing off"),
    "tpcb/analyze_timing": Text("+ log_timing on", "+ log_timing on"),
    "everything": Text("+ buffers、verbose、triggers、settings、nested、JSON",
                       "+ buffers, verbose, triggers, settings, nested, JSON"),
}


def label(condition: str) -> Text:
    return LABELS.get(condition) or LABELS[condition.split("/")[1]]


@cache
def change_measure(condition: str, baseline: str | None = None, name: Text | None = None) -> Measure:
    """A condition's latency change against its baseline, one Measure per condition: the
    page's tables and charts show the same (Run.estimate computes it once)."""
    query, text = QUERY[condition.split("/")[0]], name or label(condition)
    return Measure(Text(f"{query.ja}: {text.ja}", f"{query.en}: {text.en}"),
                   lambda r: change(r, condition, baseline), "%", 1, signed=True)


def _within(condition: str, pct: float) -> Check:
    return Check(change_measure(condition), Between(-pct, pct))


def _serial_minus_parallel(r: Rounds) -> float | None:
    """Per round, the serial count's analyze overhead minus the parallel count's."""
    serial, parallel = changes(r, "count_serial/analyze"), changes(r, "count_parallel/analyze")
    return median([s - p for s, p in zip(serial, parallel)])


def _timing_off_share(query: str) -> Measure:
    """Per round, the overhead left with log_timing = off, as a fraction of it with timing."""
    def statistic(r: Rounds) -> float | None:
        off, on = changes(r, f"{query}/analyze_no_timing"), changes(r, f"{query}/analyze")
        return median([a / b for a, b in zip(off, on) if b > 0])
    return Measure(Text(f"{QUERY[query].ja}: timing off での変化 ÷ timing on での変化",
                        f"{QUERY[query].en}: overhead with timing off / with timing on"),
                   statistic, "×", 2)


WORDS = Wording.beside(__file__)

FINDINGS = [
    WORDS.finding("F1",
                  [Check(change_measure("limit/preloaded"), Between(-ACROSS_SERVERS_PCT, ACROSS_SERVERS_PCT))],
                  requires=[TWIN]),
    WORDS.finding("F2",
                  [_within("limit/explain", NEGLIGIBLE_PCT),
                   _within("count_parallel/explain", COUNT_NEGLIGIBLE_PCT),
                   _within("count_serial/explain", COUNT_NEGLIGIBLE_PCT)],
                  requires=[SESSION_LOADED]),
    WORDS.finding("F3",
                  [_within("limit/analyze", NEGLIGIBLE_PCT),
                   Check(change_measure("count_parallel/analyze"), Above(LARGE_PCT)),
                   Check(change_measure("count_serial/analyze"), Above(LARGE_PCT))],
                  requires=[SESSION_LOADED]),
    WORDS.finding("F4",
                  [Check(Measure(Text("count: 並列なしでの変化 − 並列ありでの変化", "count: serial overhead − parallel overhead"),
                                 _serial_minus_parallel, "pt", 1, signed=True), Above(0))],
                  requires=[SESSION_LOADED]),
    WORDS.finding("F5",
                  [Check(_timing_off_share("count_parallel"), Below(0.5)),
                   Check(_timing_off_share("count_serial"), Below(0.5))],
                  requires=[SESSION_LOADED]),
    WORDS.finding("F6",
                  [Check(change_measure("limit/explain_log"), Above(LOGGING_PCT)),
                   Check(change_measure("tpcb/log_all"), Above(LOGGING_PCT)),
                   _within("tpcb/threshold", TPCB_PCT)],
                  requires=[LOGGING]),
    WORDS.finding("F7",
                  [_within("tpcb/analyze_timing", TPCB_PCT),
                   Check(change_measure("tpcb/everything", "tpcb/analyze_timing",
                                        Text("すべてのオプション ÷ timing ありの analyze", "every option over analyze with timing")),
                         Between(-OPTIONS_PCT, OPTIONS_PCT))],
                  requires=[LOGGING]),
]
