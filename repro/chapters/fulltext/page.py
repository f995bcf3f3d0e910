"""What the page shows: the generated data, the indexes (size, build time, plans), insert
throughput beside 004's Tables 7.7 and 7.10, search latency beside Tables 7.8-7.12 (the
original's word on both fields), every word's speed-up over no index, the rise under
load with GIN's pending list, and the replication: the publisher's walsender, lag and
how fast the subscriber applies."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ...chapter import INTERVAL, Chart, Run, Series, Table
from ...site.scaling import ROUNDS, SHARED_BUFFERS, scaling_table
from ...stats import Rounds
from ...text import Number, Text
from ...verdict import Measure
from .analysis import ingest_ratio, rise, speedup, subscriber_over_single
from .conditions import (COLUMNS, IDLE, INDEXED, KINDS, LOADED, NONE, PUBLISHER_INGEST, SINGLE, SUBSCRIBER, WORDS,
                         field, ingest, search)
from .findings import NO_INDEX_UNDER_LOAD, PUBLISHER_OVER_SINGLE, TRGM_SHORT

KIND_NAMES = {NONE: Text("インデックスなし", "no index"), "bigm": Text("pg_bigm", "pg_bigm"),
              "pgroonga": Text("PGroonga", "PGroonga"), "trgm": Text("pg_trgm", "pg_trgm")}
LOADS = {IDLE: Text("負荷なし", "idle"), LOADED: Text("挿入負荷あり", "under insert load")}
ORIGINAL_WORD = "カレー"
MB = 1024 * 1024


def _kinds(run: Run) -> list[str]:
    return [k for k in KINDS if k in run.raw["kinds"]]


MEASURES: dict[str, Measure] = {}  # the page's own, by name


def _measure(name: str, statistic: Callable[[Rounds], float | None], unit: str = "×", digits: int = 2) -> Measure:
    """One Measure per name, made at its first call: the callers' statistic is a lambda made
    anew at every call, so a cache on the arguments would never hit, and Run.estimate
    computes an estimate once per Measure."""
    if name not in MEASURES:
        MEASURES[name] = Measure(Text(name, name), statistic, unit, digits)
    return MEASURES[name]


def _over_no_index(condition: str) -> Measure:
    """Insert throughput over the single node's without an index, in the same round."""
    return _measure(condition, lambda r: ingest_ratio(r, condition, ingest(NONE)))


def _word_speedup(kind: str, word: str) -> Measure:
    """One word's search time without an index over with `kind`'s, idle."""
    return _measure(f"speedup/{kind}/{word}", lambda r: speedup(r, kind, IDLE, (word,)), "×", 0)


def _ms(run: Run, condition: str, column: str, word: str = ORIGINAL_WORD) -> Number:
    value = run.summary.get(condition, {}).get(field(column, word))
    return Number(value, "", 2 if value is not None and value < 10 else 1)


def data_table(run: Run) -> Table:
    hits = run.raw["hits"]
    rows = [[Text(f"「{w}」({len(w)} 文字)", f"“{w}” ({len(w)} character{'s' if len(w) > 1 else ''})"),
             Number(hits[f"{NONE}/title:{w}"], "", 0), Number(hits[f"{NONE}/description:{w}"], "", 0)] for w in WORDS]
    return Table(Text(f"生成したデータ {run.params['rows']} 行での各語の件数", f"Rows per word in the {run.params['rows']} generated rows"),
                 [Text("語", "Word"), Text("title に語を含む行", "rows with it in title"),
                  Text("description に語を含む行", "rows with it in description")],
                 rows,
                 Text("ラウンドの前、インデックスのないテーブルで LIKE '%語%' が数えた件数です。どのインデックスの件数も同じかは F9 が確かめます。",
                      "Counted before the rounds by LIKE '%word%' on the table without an index; F9 checks that every index counts the same."))


def indexes_table(run: Run) -> Table:
    rows = []
    for kind in [k for k in _kinds(run) if k in INDEXED]:
        for column in COLUMNS:
            built = run.raw["indexes"][f"search_{kind}"][f"{kind}/{column}"]
            rows.append([KIND_NAMES[kind], column, Number(built["bytes"] / MB, "MB", 1), Number(built["build_s"], "s", 2)])
    return Table(Text("インデックスの大きさと作成時間 (単一ノード)", "Index size and build time (single node)"),
                 [Text("種類", "Kind"), Text("列", "Field"), Text("大きさ", "Size"), Text("作成時間", "Build time")],
                 rows,
                 Text(f"検索用のテーブルのインデックスで測りました (各種類の最初のインデックスの後に作るので、PGroonga の最初のインデックスが作る Groonga のデータベースを含みません)。"
                      f"大きさは CREATE INDEX の前後のデータベースの増分 (pg_database_size) で、PGroonga が PostgreSQL のリレーションの外に置く Groonga のファイルも含みます。"
                      f"Groonga はファイルを大きな単位で確保するため、PGroonga の値は中身の量より大きくなります。"
                      f"テーブルそのもの ({run.params['rows']} 行) は {run.raw['table_bytes'] / MB:.1f} MB です。",
                      f"Measured on the search tables' indexes, built after each kind's first index (so PGroonga's figures leave out the "
                      f"Groonga database its first index creates). Size is the database's growth across CREATE INDEX (pg_database_size), "
                      f"which counts the Groonga files PGroonga keeps outside PostgreSQL's relations; Groonga allocates its files in large "
                      f"steps, so PGroonga's figures exceed what they hold. The table itself ({run.params['rows']} rows) is {run.raw['table_bytes'] / MB:.1f} MB."))


def plans_table(run: Run) -> Table:
    def node(plan: str) -> str:
        lines = [line.strip().removeprefix("->  ") for line in plan.splitlines()]
        scan = next(line for line in lines if "Scan" in line)
        return scan.split(" on ")[0].split(" using ")[0]
    rows = [[KIND_NAMES[k], *[node(run.raw["plans"][f"{k}/description:{w}"]) for w in WORDS]] for k in _kinds(run)]
    return Table(Text("検索の計画 (description、EXPLAIN の最初の走査)", "Plans of the searches (description; the first scan node of EXPLAIN)"),
                 [Text("種類", "Kind"), *[Text(f"「{w}」", f"“{w}”") for w in WORDS]], rows,
                 Text("ラウンドの前に単一ノードで EXPLAIN (COSTS OFF) したものです。両方の列 (title と description) の計画は F7 が数えます。",
                      "EXPLAIN (COSTS OFF) on the single node before the rounds; F7 counts the plans of both fields."))


def ingest_table(run: Run) -> Table:
    original, ours = run.chapter.original["ingest"], run.summary
    rows = []
    for kind, column in [(NONE, None), *((k, c) for k in _kinds(run) if k != NONE for c in COLUMNS)]:
        key = f"{kind}_{column}" if column else kind
        condition = ingest(kind, column)
        rows.append([KIND_NAMES[kind], column or "—", Number(original[key], "", 0) if key in original else "—",
                     Number(ours[condition]["tps"], "", 0),
                     run.estimate(_over_no_index(condition)) if kind != NONE else None])
    if PUBLISHER_INGEST in ours:  # not before 10, nor against an existing server
        rows.append([Text("パブリッシャー (インデックスなし)", "publisher (no index)"), "—", Number(original["publisher"], "", 0),
                     Number(ours[PUBLISHER_INGEST]["tps"], "", 0),
                     run.estimate(PUBLISHER_OVER_SINGLE)])
    return Table(Text("挿入性能: 原典の表 7.7、7.10 と本ビルド", "Insert throughput: the original's Tables 7.7 and 7.10 and this build"),
                 [Text("インデックス", "Index"), Text("列", "Field"), Text("原典 [件/s]", "Original [inserts/s]"),
                  Text("本ビルド [件/s]", "This build [inserts/s]"), Text(f"÷ インデックスなし{INTERVAL.ja}", f"/ no index{INTERVAL.en}")],
                 rows,
                 Text(f"1 クライアントの pgbench が 1 行ずつ {run.params['inserts']} 行を挿入した速さの中央値と、"
                      "同じラウンド内の比の、全ラウンドでの幾何平均です。"
                      "単一ノードとパブリッシャーはそれぞれ CPU 1 個に固定しています。",
                      f"Median rate of {run.params['inserts']} single-row inserts by one pgbench client, and the geometric mean over rounds of the "
                      "ratio within a round. The single node and the publisher are each pinned to one CPU."))


def _search_rows(run: Run, where: str) -> list[list]:
    original = run.chapter.original["search"][where]
    rows = []
    for kind in _kinds(run):
        for load in (IDLE, LOADED):
            o = original[load].get(kind)
            cond = search(kind, where, load)
            row = [KIND_NAMES[kind], LOADS[load],
                   Number(o["title"], "", 2) if o else "—", _ms(run, cond, "title"),
                   Number(o["description"], "", 2) if o else "—", _ms(run, cond, "description")]
            if where == SUBSCRIBER:
                row.append(run.estimate(_measure(f"sub/{kind}/{load}",
                                                 lambda r, k=kind, lo=load: subscriber_over_single(r, k, lo))))
            else:
                row.append(Number(run.summary[cond].get("pending_tuples"), "", 0) if kind in ("bigm", "trgm") else "—")
            rows.append(row)
    return rows


def _search_columns(last: Text) -> list[Text]:
    return [Text("種類", "Kind"), Text("負荷", "Load"),
            Text("原典 title [ms]", "Original title [ms]"), Text("本ビルド title [ms]", "This build title [ms]"),
            Text("原典 description [ms]", "Original description [ms]"),
            Text("本ビルド description [ms]", "This build description [ms]"), last]


SEARCH_NOTE = Text(f"原典の語「{ORIGINAL_WORD}」の検索 1 回の平均時間 (pgbench -r の文ごとの値) の、全ラウンドの中央値です。"
                   "原典は 203,317 行、本ビルドの行数は「何を縮小したか」の表にあります。",
                   f"Mean time of one search for the original's word “{ORIGINAL_WORD}” (pgbench -r, per statement), median over rounds. "
                   "The original had 203,317 rows; this build's row count is in the table under \"What was scaled\".")


def search_table(run: Run) -> Table:
    return Table(Text("検索時間 (単一ノード): 原典の表 7.8、7.9 と本ビルド", "Search latency (single node): the original's Tables 7.8 and 7.9 and this build"),
                 _search_columns(Text("GIN の保留リストの行", "rows in GIN's pending lists")),
                 _search_rows(run, SINGLE),
                 Text.join([SEARCH_NOTE, Text("保留リストの行は、検索の直後に pgstatginindex で数えた、そのテーブルの GIN インデックス (2 つ) の合計です。",
                                              "Pending-list rows: the sum over the table's two GIN indexes, counted by pgstatginindex right after the searches.")],
                           "", " "))


def subscriber_table(run: Run) -> Table:
    return Table(Text("検索時間 (サブスクライバー): 原典の表 7.11、7.12 と本ビルド",
                      "Search latency (subscriber): the original's Tables 7.11 and 7.12 and this build"),
                 _search_columns(Text(f"÷ 単一ノード{INTERVAL.ja}", f"/ single node{INTERVAL.en}")),
                 _search_rows(run, SUBSCRIBER),
                 Text.join([SEARCH_NOTE, Text("比は、すべての語と両方の列の検索時間の合計の、同じラウンド内の比の、全ラウンドでの幾何平均です。",
                                              "The ratio is of the summed time of every word on both fields, the geometric mean over rounds of the ratio within a round.")],
                           "", " "))


def _speedup_cell(number: Number) -> Number:
    """A speed-up with the digits its size needs: two decimals below 10, so a search the index
    does not help shows how near 1 it is and its interval (not "1 [1, 1]"); none from 10 on."""
    if number.value is None:
        return number
    return replace(number, digits=2 if abs(number.value) < 10 else 0)


def words_table(run: Run) -> Table:
    rows = [[KIND_NAMES[k], *[_speedup_cell(run.estimate(_word_speedup(k, w))) for w in WORDS]]
            for k in _kinds(run) if k != NONE]
    return Table(Text("語ごとの高速化: インデックスなしの検索時間 ÷ インデックスでの検索時間 (単一ノード、負荷なし)",
                      "Per word: search time without an index over with it (single node, idle)"),
                 [Text("種類", "Kind"), *[Text(f"「{w}」{INTERVAL.ja}", f"“{w}”{INTERVAL.en}") for w in WORDS]], rows,
                 Text("両方の列の検索時間の合計の、同じラウンド内の比の、全ラウンドでの幾何平均です。"
                      "1 に近いほどインデックスが役に立っていません。",
                      "Of the summed time on both fields, the geometric mean over rounds of the ratio within a round; near 1, the index does not help."))


def replication_table(run: Run) -> Table:
    pub = run.summary.get(PUBLISHER_INGEST)
    rows = []
    if pub:  # no replication before 10, nor against an existing server: no rows
        rows.append([Text("パブリッシャーの全速の挿入", "publisher's full-speed inserts"), Number(pub["tps"], "", 0),
                     Number(100 * pub["walsender_cpu"], "%", 0), Number(pub["lag_end_bytes"] / 1024, "kB", 0),
                     Number(pub["catch_up_s"], "s", 2), Number(pub["apply_rate"], "", 0)])
        for kind in _kinds(run):
            s = run.summary[search(kind, SUBSCRIBER, LOADED)]
            rows.append([Text(f"{run.params['rate']:,} 件/s ({KIND_NAMES[kind].ja})", f"{run.params['rate']:,} inserts/s ({KIND_NAMES[kind].en})"),
                         Number(s["load_tps"], "", 0), None, Number(s["lag_max_bytes"] / 1024, "kB", 1), None, None])
    return Table(Text("ロジカルレプリケーション: パブリッシャー、遅延、適用の速さ", "Logical replication: publisher, lag and apply rate"),
                 [Text("挿入", "Inserts"), Text("挿入の速さ [件/s]", "insert rate [inserts/s]"),
                  Text("walsender の CPU (パブリッシャーの CPU 1 個に対して)", "walsender's CPU (of the publisher's one CPU)"),
                  Text("遅れ (全速: 終了時、一定レート: 最大)", "behind (full speed: at the end; fixed rate: the most)"),
                  Text("追いつくまで", "caught up after"), Text("適用の速さ [件/s]", "apply rate [rows/s]")],
                 rows,
                 Text("遅れはパブリッシャーの pg_current_wal_lsn() とサブスクライバーが適用を報告した位置 (pg_stat_replication.replay_lsn) の差で、"
                      "一定レートの行は負荷ありの検索の間 100 ms ごとに見た最大です。適用の速さは、挿入した行数を、パブリッシャーの最初の挿入からサブスクライバーが最後の行を適用するまでの"
                      "時間 (どちらもサーバーの時計) で割ったものです (制約と注意を参照)。"
                      "サブスクライバーの全速挿入先のテーブルは、使える種類すべての description インデックスを持ちます。"
                      "どの列も、ラウンドごとの値の中央値です。",
                      "Behind: the publisher's pg_current_wal_lsn() minus the position the subscriber reported as applied "
                      "(pg_stat_replication.replay_lsn); for the fixed rate, the most seen every 100 ms during the loaded searches. "
                      "Apply rate: the rows inserted over the time from the publisher's first insert until the subscriber "
                      "applied the last row, both by the servers' clocks (see the limitations). "
                      "The subscriber's copy of "
                      "the full-speed table carries the description index of every kind the image has. Every column is the "
                      "median of the rounds' values."))


def ingest_chart(run: Run) -> Chart:
    kinds = [k for k in _kinds(run) if k != NONE]
    return Chart(Text("インデックスを付けた列ごとの挿入性能 (インデックスなしに対する比)", "Insert throughput per indexed field (over no index)"),
                 [KIND_NAMES[k] for k in kinds],
                 [Series(Text(c, c), *_series(run, [_over_no_index(ingest(k, c)) for k in kinds])) for c in COLUMNS],
                 Text("÷ インデックスなし", "/ no index"))


def _series(run: Run, measures: list[Measure]) -> tuple[list, list, list]:
    numbers = [run.estimate(m) for m in measures]
    return [n.value for n in numbers], [n.low for n in numbers], [n.high for n in numbers]


def words_chart(run: Run) -> Chart:
    kinds = [k for k in _kinds(run) if k != NONE]
    return Chart(Text("語ごとの高速化 (インデックスなし ÷ インデックス、負荷なし)", "Speed-up per word (no index over index, idle)"),
                 [Text(f"{w} ({len(w)})", f"{w} ({len(w)})") for w in WORDS],
                 [Series(KIND_NAMES[k], *_series(run, [_word_speedup(k, w) for w in WORDS])) for k in kinds],
                 Text("× (インデックスなし ÷ あり)", "× (no index / index)"), Text("語 (文字数)", "word (characters)"))


WHERE = {SINGLE: Text("単一ノード", "single node"), SUBSCRIBER: Text("サブスクライバー", "subscriber")}


def rise_chart(run: Run) -> Chart:
    kinds = _kinds(run)
    return Chart(Text("挿入負荷による検索時間の伸び (負荷あり ÷ なし)", "Rise of search time under insert load (loaded over idle)"),
                 [KIND_NAMES[k] for k in kinds],
                 [Series(WHERE[w], *_series(run, [_measure(f"rise/{k}/{w}", lambda r, k=k, w=w: rise(r, k, w))
                                                  for k in kinds]))
                  for w in (SINGLE, SUBSCRIBER)],
                 Text("× (負荷あり ÷ なし)", "× (loaded / idle)"))


def numbers(run: Run) -> dict[str, Number]:
    pub = run.summary.get(PUBLISHER_INGEST)  # none before 10, nor against an existing server
    rows = run.raw["rows"]
    return {
        "walsender": Number(100 * pub["walsender_cpu"] if pub else None, "%", 0),
        "load_share": Number(100 * run.params["rate"] / run.summary[ingest(NONE)]["tps"], "%", 0),
        "rows_end": Number(max(rows[f"search_{k}"] for k in _kinds(run)), "", 0),
        "none_rise": run.estimate(NO_INDEX_UNDER_LOAD),
        "short_trgm": run.estimate(TRGM_SHORT),
    }


SCALE_ROWS = [("rows", Text("読み込む行数", "rows loaded")),
              ("pool", Text("挿入に使う別の行数", "other rows the inserts copy")),
              ("shared_buffers", SHARED_BUFFERS),
              ("inserts", Text("挿入性能の計測 1 回の挿入行数", "inserts per throughput run")),
              ("search_s", Text("検索の 1 回の時間 [s]", "one search run [s]")),
              ("rate", Text("バックグラウンドの挿入 [件/s]", "background inserts [per s]")),
              ("rounds", ROUNDS)]
TABLES = {"data": data_table, "indexes": indexes_table, "plans": plans_table, "ingest": ingest_table,
          "search": search_table, "subscriber": subscriber_table, "words": words_table,
          "replication": replication_table, "scaling": scaling_table(SCALE_ROWS)}
CHARTS = {"ingest": ingest_chart, "words": words_chart, "rise": rise_chart}
