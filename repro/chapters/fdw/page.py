"""What the page shows: SELECT throughput per pattern against all-local beside Table 9.3, the
writes and the options beyond 004 against their baselines, the remote statements per local
transaction, and what the second of two concurrent UPDATEs got."""
from __future__ import annotations

from functools import cache

from ...chapter import INTERVAL, Chart, Run, Series, Table
from ...site.scaling import MEASURED_S, ROUNDS, scaling_table
from ...site.words import WORDS
from ...text import Number, Text, clients
from ...verdict import Measure, tps_ratio
from .conditions import SELECT_PATTERNS, select_name
from .findings import VERSUS, select_ratio, versus

PATTERNS = {"p1": Text("P1: 両方ローカル", "P1: both local"),
            "p2": Text("P2: pgbench_accounts が外部", "P2: pgbench_accounts foreign"),
            "p3": Text("P3: addrbook が外部", "P3: addrbook foreign"),
            "p4": Text("P4: 両方外部 (別々のサーバー)", "P4: both foreign (two servers)"),
            "one_server": Text("両方外部 (同じサーバー)", "both foreign (one server)"),
            "estimate": Text("P2 + use_remote_estimate", "P2 + use_remote_estimate")}
WRITES = {"update_local": Text("UPDATE、ローカル", "UPDATE, local"),
          "update_remote": Text("UPDATE、外部", "UPDATE, foreign"),
          "insert_local": Text("INSERT、ローカル", "INSERT, local"),
          "insert_remote": Text("INSERT、外部", "INSERT, foreign"),
          "bulk_local": Text("100 行の INSERT、ローカル", "100-row INSERT, local"),
          "bulk_remote": Text("100 行の INSERT、外部 (batch_size 1)", "100-row INSERT, foreign (batch_size 1)"),
          "bulk_batch": Text("100 行の INSERT、外部 (batch_size 100)", "100-row INSERT, foreign (batch_size 100)")}
# what each write and option is compared with: the findings' (VERSUS), and 100-row INSERTs
# through a foreign table against local ones, which only the page shows
BASELINE = {"bulk_remote": "bulk_local", **{c: baseline for c, (baseline, _) in VERSUS.items()}}
COMPARED = [*WRITES, select_name("one_server", 1), select_name("estimate", 1)]  # in the page's order


def label(condition: str) -> Text:
    if condition in WRITES:
        return WRITES[condition]
    pattern, n = condition.removeprefix("select_").rsplit("_c", 1)
    return Text(f"{PATTERNS[pattern].ja}、{clients(int(n)).ja}", f"{PATTERNS[pattern].en}, {clients(int(n)).en}")


@cache
def _versus(condition: str) -> Measure:
    """TPS of a write or an option over BASELINE's: the findings' measure where one checks
    it (one estimate for both), else the page's own."""
    return versus(condition) if condition in VERSUS else tps_ratio(condition, BASELINE[condition], label(condition))


def ours(run: Run, condition: str) -> Number:
    """This build's TPS of a write or an option against what it is compared with, with its interval."""
    return run.estimate(_versus(condition))


def ours_select(run: Run, pattern: str, clients: int) -> Number:
    """This build's SELECT TPS of a pattern against P1's at a client count, with its interval
    (the findings' measure)."""
    return run.estimate(select_ratio(pattern, "p1", clients))


def _original_select(run: Run, pattern: str, clients: int) -> float | None:
    select = run.chapter.original["select"]
    return select[pattern][select["clients"].index(clients)] if clients in select["clients"] else None


def _measured_clients(run: Run) -> list[int]:
    return sorted({int(c.rsplit("_c", 1)[1]) for c in run.summary["conditions"] if c.startswith("select_p1_")})


def select_table(run: Run) -> Table:
    rows = []
    for n in _measured_clients(run):
        for p in SELECT_PATTERNS:
            c = run.summary["conditions"][select_name(p, n)]
            orig, orig_p1 = _original_select(run, p, n), _original_select(run, "p1", n)
            rows.append([label(select_name(p, n)), Number(orig, "", 1),
                         Number(orig / orig_p1 if orig and p != "p1" else None, "×", 3),
                         Number(c["tps"], "", 0), Number(c["latency_ms"], "", 2),
                         ours_select(run, p, n) if p != "p1" else None])
    return Table(Text("SELECT のスループット (原典の表 9.3 と本ビルド)", "SELECT throughput (the original's Table 9.3 and this build)"),
                 [Text("パターン", "Pattern"), Text("原典 [tps]", "Original [tps]"), Text("原典 ÷ P1", "Original / P1"),
                  Text("本ビルド [tps]", "This build [tps]"), Text("本ビルド 平均応答 [ms]", "This build mean latency [ms]"),
                  Text(f"÷ P1、プールした実行{INTERVAL.ja}", f"/ P1, pooled runs{INTERVAL.en}")],
                 rows,
                 Text("tps と応答時間は各条件の中央値、比は各ラウンドの値を同じラウンドの同じクライアント数の P1 で割った比の、ラウンドにわたる幾何平均です。"
                      "原典は JDBC Runner のスループットで、クライアントは別の 16 コアのマシンでした。",
                      "tps and latency are each condition's median; a ratio is the geometric mean over rounds of each "
                      "round's value over P1's at the same client count in the same round. The original's figures "
                      "are JDBC Runner throughputs, from a separate 16-core client machine."))


def writes_table(run: Run) -> Table:
    original = run.chapter.original["writes"]
    conditions = run.summary["conditions"]
    rows = [[label(c), Number(conditions[c]["tps"], "", 0),
             label(BASELINE[c]) if c in BASELINE else None,
             Number(original.get(c), "×", 2), ours(run, c) if c in BASELINE else None]
            for c in COMPARED if c in conditions]
    return Table(Text("書き込みと、原典が測っていないオプション (1 クライアント)", "Writes, and the options the original did not measure (1 client)"),
                 [Text("条件", "Condition"), Text("本ビルド [tps]", "This build [tps]"), Text("比べる相手", "Compared with"),
                  Text("原典の比", "Original ratio"), Text(f"比、プールした実行{INTERVAL.ja}", f"Ratio, pooled runs{INTERVAL.en}")],
                 rows,
                 Text("原典の比は本文の「約 −31%」「約 −34%」から求めた値です (UPDATE と INSERT は図のみ)。",
                      "The original's ratios come from its text's \"about −31 %\" and \"about −34 %\" "
                      "(UPDATE and INSERT are in figures only)."))


ORDER = ("START", "EXPLAIN", "DECLARE", "FETCH", "UPDATE", "INSERT", "CLOSE", "DEALLOCATE", "COMMIT")


def _in_order(item: tuple[str, float]) -> tuple[str, int]:
    """Statements ("server: statement") by server, then in the order a transaction sends them."""
    server, _, statement = item[0].partition(": ")
    verb = statement.split()[0].upper()
    return server, ORDER.index(verb) if verb in ORDER else len(ORDER)


def _short(statement: str, most: int = 200) -> str:
    """One line, cut after `most` characters (a 100-row INSERT lists 600 parameters)."""
    line = " ".join(statement.split())
    return line if len(line) <= most else line[:most] + "…"


def _local(condition: str) -> str:
    """The all-local condition a 1-client condition is compared with, for its extra latency."""
    return select_name("p1", 1) if condition.startswith("select_") else condition.split("_")[0] + "_local"


def _extra_ms(run: Run, condition: str) -> float | None:
    """A 1-client condition's median latency over its all-local counterpart's (ms)."""
    remote = run.summary["remote"].get(condition)
    if not remote or not remote["per_transaction"]:
        return None  # an all-local condition, or not counted (an existing server without pg_stat_statements)
    c = run.summary["conditions"]
    return c[condition]["latency_ms"] - c[_local(condition)]["latency_ms"]


def _per_statement_us(run: Run, condition: str) -> float | None:
    extra = _extra_ms(run, condition)
    return extra * 1000 / run.summary["remote"][condition]["per_transaction"] if extra is not None else None


def remote_table(run: Run) -> Table:
    rows = []
    for c, remote in run.summary["remote"].items():
        statements = "; ".join(f"{_short(q)}{f' (×{n:g})' if n != 1 else ''}"
                               for q, n in sorted(remote["statements"].items(), key=_in_order))
        rows.append([label(c), Number(remote["per_transaction"], "", 0), Number(_extra_ms(run, c), "", 3),
                     Number(_per_statement_us(run, c), "", 0), statements or "—"])
    return Table(Text("1 回のローカルなトランザクションごとに外部サーバーが実行した文 (pg_stat_statements)",
                      "Statements the external servers ran per local transaction (pg_stat_statements)"),
                 [Text("条件", "Condition"), Text("文 ÷ トランザクション", "Statements per transaction"),
                  Text("ローカルより長い応答 [ms]", "Latency over local [ms]"),
                  Text("文 1 つあたり [µs]", "Per statement [µs]"),
                  Text("外部サーバー: 文", "External server: statement")],
                 rows,
                 Text("1 クライアントで 200 トランザクションを実行して数えました。新しいリモートセッションが一度だけ送る SET は除いています。"
                      "定数は ? に置き換えて、同じ形の文をまとめています。"
                      "pg_stat_statements は 17 より前では DEALLOCATE を数えないため (コミット 3cd934f6356、bb45156f342)、"
                      "INSERT の文は 17 以降で 1 つ多く見えます。"
                      "「ローカルより長い応答」は、1 クライアントの平均応答時間 (中央値) からローカルだけの同じ文 (SELECT は P1) のものを引いた値、"
                      "「文 1 つあたり」はそれを文の数で割った値です。",
                      "Counted over 200 transactions of one client; the SETs a new remote session sends once are "
                      "left out. Constants are shown as ? and statements of the same shape are added up. "
                      "pg_stat_statements does not count DEALLOCATE before 17 (commits 3cd934f6356, bb45156f342), "
                      "so an INSERT shows one statement more from 17 on. \"Latency over local\" is the median "
                      "mean latency at 1 client minus that of the same statement on local tables only (P1 for "
                      "the SELECTs); \"per statement\" divides it by the statements."))


def plans_table(run: Run) -> Table:
    rows = [[label(c), Number(p["foreign_scans"], "", 0),
             (Text("はい", "yes") if p["pushed_down"] else Text("いいえ", "no")) if c.startswith("select_") else None,
             "; ".join(p["remote_sql"])]
            for c, p in run.summary["plans"].items() if p["remote_sql"]]
    return Table(Text("外部テーブルを使う文のプラン (EXPLAIN VERBOSE、変数は 42)", "Plans of the statements on foreign tables (EXPLAIN VERBOSE, variables set to 42)"),
                 [Text("条件", "Condition"), Text("Foreign Scan の数", "Foreign Scans"),
                  Text("結合を外部で実行", "Join on the external server"), Text("Remote SQL", "Remote SQL")],
                 rows)


def concurrent_table(run: Run) -> Table:
    outcome = run.summary["concurrent_update"]
    where = {"local": Text("ローカル (b_local)", "local (b_local)"), "remote": Text("外部テーブル (b_remote)", "foreign table (b_remote)")}
    rows = [[where[k], Text("成功 (1 番目がコミットした後)", "succeeded (after the first committed)") if v["sqlstate"] is None
             else f"SQLSTATE {v['sqlstate']}: {v['message']}"] for k, v in outcome.items()]
    return Table(Text("同じ行への 2 つの並行した UPDATE: 2 番目の結果", "Two concurrent UPDATEs of one row: what the second got"),
                 [Text("テーブル", "Table"), Text("2 番目の UPDATE", "Second UPDATE")], rows)


def select_chart(run: Run) -> Chart:
    categories, original, values = [], [], []
    for n in _measured_clients(run):
        for p in ("p2", "p3", "p4"):
            categories.append(label(select_name(p, n)))
            o, o1 = _original_select(run, p, n), _original_select(run, "p1", n)
            original.append(o / o1 if o else None)
            values.append(ours_select(run, p, n))
    return Chart(Text("SELECT のスループット、P1 (両方ローカル) に対する比", "SELECT throughput against P1 (both local)"),
                 categories,
                 [Series(Text("原典", "original"), original),
                  Series(WORDS["pooled_runs"], [v.value for v in values], [v.low for v in values],
                         [v.high for v in values])],
                 Text("比 [×]", "ratio [×]"))


def options_chart(run: Run) -> Chart:
    original = run.chapter.original["writes"]
    conditions = [c for c in COMPARED if c in BASELINE and c in run.summary["conditions"]]
    values = [ours(run, c) for c in conditions]
    return Chart(Text("書き込みとオプション、比べる相手に対する比", "Writes and options against what each is compared with"),
                 [label(c) for c in conditions],
                 [Series(Text("原典", "original"), [original.get(c) for c in conditions]),
                  Series(WORDS["pooled_runs"], [v.value for v in values], [v.low for v in values],
                         [v.high for v in values])],
                 Text("比 [×]", "ratio [×]"))


def numbers(run: Run) -> dict[str, Number]:
    c = run.summary["conditions"]
    return {
        "p1_c1": Number(c[select_name("p1", 1)]["tps"], "tps", 0),
        "p2_c1": Number(c[select_name("p2", 1)]["tps"], "tps", 0),
        "p2_ratio_c1": ours_select(run, "p2", 1),
        "p4_ratio_c10": ours_select(run, "p4", 10),
        "one_server_ratio": ours(run, select_name("one_server", 1)),
        "p2_per_statement": Number(_per_statement_us(run, select_name("p2", 1)), "µs", 0),
    }


SCALE_ROWS = [("clients", Text("SELECT のクライアント数", "SELECT clients")),
              ("seconds", MEASURED_S),
              ("warmup_s", Text("ウォームアップ [s]", "warm-up [s]")),
              ("rounds", ROUNDS)]

TABLES = {"select": select_table, "writes": writes_table, "remote": remote_table, "plans": plans_table,
          "concurrent": concurrent_table, "scaling": scaling_table(SCALE_ROWS)}
CHARTS = {"select": select_chart, "options": options_chart}
