"""What the page shows: the partitions a single-row INSERT locked on each server, the
insert script's TPS on each beside the original's (a table, and as ratios to 11 in a chart),
and what was scaled."""
from __future__ import annotations

from ...chapter import Chart, Run, Series, Table
from ...site.scaling import ROUNDS, scaling_table
from ...site.words import WORDS
from ...text import Number, Text
from .conditions import REFERENCE, THIS
from .findings import SPEEDUP

SERVERS = Text("サーバー", "Server")


def _name(run: Run, server: str) -> Text:
    """A server's name with its version: "this major (17.12)", "11 (11.22)"."""
    version = run.raw["versions"][server].split()[0]
    if server == THIS:
        return Text(f"このメジャー ({version})", f"this major ({version})")
    return Text(f"11 ({version})", f"11 ({version})")


def _servers(run: Run) -> list[str]:
    return [s for s in (THIS, REFERENCE) if s in run.raw.get("versions", {})]


def locks_table(run: Run) -> Table:
    original = run.chapter.original["pg_locks"]["partitions"]
    return Table(Text("1 行の INSERT がロックしたパーティション", "Partitions locked by a single-row INSERT"),
                 [SERVERS, Text("本ビルド (256 のうち)", "This build (of 256)")],
                 [[_name(run, s), Number(run.raw["locked"][s], "", 0)] for s in _servers(run)],
                 Text(f"原典: 11 で {original['11']}、12 で {original['12']}。INSERT と同じトランザクションの中で pg_locks を数えました。",
                      f"The original: {original['11']} on 11, {original['12']} on 12. Counted in pg_locks inside the INSERT's own transaction."))


def tps_table(run: Run) -> Table:
    original = run.chapter.original["tps"]
    rows = [[_name(run, s), Number(run.summary["tps"][s], "", 0), Number(run.summary["latency_ms"][s], "ms", 3)]
            for s in _servers(run)]
    return Table(Text("INSERT のスクリプトの TPS (ラウンドの中央値)", "TPS of the insert script (median over rounds)"),
                 [SERVERS, Text("TPS", "TPS"), Text("平均レイテンシ", "mean latency")], rows,
                 Text(f"原典 (32 クライアント、120 秒): 11 で {original['11']:,} TPS、12 で {original['12']:,} TPS。",
                      f"The original (32 clients, 120 s): {original['11']:,} TPS on 11, {original['12']:,} TPS on 12."))


def tps_chart(run: Run) -> Chart:
    servers = _servers(run)
    return Chart(Text("INSERT のスクリプトの TPS (本ビルド)", "TPS of the insert script (this build)"),
                 [_name(run, s) for s in servers],
                 [Series(Text("本ビルド", "this build"), [run.summary["tps"][s] for s in servers])],
                 Text("TPS", "TPS"))


def speedup_chart(run: Run) -> Chart:
    """This major's TPS over 11's, the original's (12 over 11, at 32 clients) beside this run's
    (pooled), 11 at 1: the same ratio the size column compares, as a picture."""
    original = run.chapter.original["tps"]
    ours = run.estimate(SPEEDUP)
    return Chart(Text("11 を 1 とした TPS: 原典と本ビルド", "TPS with 11 at 1: the original beside ours"),
                 [Text("11", "11"), Text("12 (原典) / このメジャー", "12 (the original) / this major")],
                 [Series(Text("原典 (32 クライアント)", "the original (32 clients)"), [1.0, original["12"] / original["11"]]),
                  Series(WORDS["pooled_runs"] if ours.runs else Text("本ビルド", "this build"),
                         [1.0, ours.value], [None, ours.low], [None, ours.high])],
                 Text("11 に対する TPS の比 [×]", "TPS over 11's [×]"))


def numbers(run: Run) -> dict[str, Number]:
    return {"speedup": run.estimate(SPEEDUP)} if REFERENCE in run.raw.get("versions", {}) else {}


SCALE_ROWS = [("partitions", Text("ハッシュパーティションの数", "hash partitions")),
              ("clients", Text("クライアント数 (pgbench -c, -j)", "clients (pgbench -c, -j)")),
              ("seconds", Text("1 回の計測時間 [s]", "one timed run [s]")),
              ("rounds", ROUNDS)]
TABLES = {"locks": locks_table, "tps": tps_table, "scaling": scaling_table(SCALE_ROWS)}
CHARTS = {"tps": tps_chart, "speedup": speedup_chart}
