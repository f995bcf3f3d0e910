"""The findings: throughput of foreign against local as ratios paired round by round, the
remote statements per local transaction (counted, exact), the plans' shape and what two
concurrent UPDATEs of one row do.

Thresholds: 004's own effects are large (a foreign table costs 80 to 95 % of the throughput),
so the limits sit between "no effect" and the original's size, where this VM's values are
far from them (2026-11-23, PostgreSQL 17: 10 tiny runs, every expected finding decided in
10 of 10; 5 default runs and 2 on each other major; the ranges below are of the medians over
those runs). Counts of remote statements and plan shapes are exact.

Against an existing server (--dsn), postgres_fdw loops back to the same server (experiment.py).
Every finding needs that loopback (LOOPBACK: a superuser role, postgres_fdw on the server);
F8, F10 and F11 read the remote statements' counts too (COUNTED: pg_stat_statements
preloaded). The run records what it could set up ("usable"), and why not. The loopback has
no network between machines, as the containers here have none either (one VM): it lacks
only the latency that every remote statement adds between machines, which would make the
foreign side slower still. So the findings that the foreign side is slower or does more
(F1-F3, F5, F6, F9-F11) and the mechanisms (F7, F8) are judged there as in the containers;
a client far from the server adds its own latency to local and foreign alike, which brings
the ratios nearer 1. F4 is not (APART): its gain from concurrency comes from work and waits
on other machines that concurrent clients overlap, where a loopback has every session of
all three roles on one server's CPUs.
"""
from __future__ import annotations

from functools import cache

from ...requirements import Requirement, majors, own_server
from ...text import Text
from ...verdict import Above, Below, Between, Check, Environment, Measure, tps_ratio
from ...wording import Wording
from .analysis import client_gain, pushed_down, statements_per_transaction
from .conditions import BATCH_SIZE_MAJOR, select_name

HALF = 0.5  # a foreign pattern at less than half the local one (here 0.05-0.22; single noisy
# rounds reached 0.36 on 18, which left a limit of a third undecided with 4 rounds)
SLOWER = 0.8  # a write at less than 0.8 of the local one: slower (here 0.22-0.41)


def _usable(what: str, label: Text) -> Requirement:
    """What a run against an existing server could set up there, as it recorded it
    (raw["usable"][what]: True, or why not); a run's own containers always have it."""
    def why(e: Environment) -> Text:
        reason = e.raw.get("usable", {}).get(what)
        return Text(**reason) if isinstance(reason, dict) else \
            Text(f"次のものがありません: {label.ja}。", f"Lacks {label.en}.")
    return Requirement(lambda e: not e.external or e.raw.get("usable", {}).get(what) is True, why, label,
                       of_target=True)


LOOPBACK = _usable("fdw", Text("postgres_fdw でサーバー自身につなぐループバック (スーパーユーザーのロール)",
                               "a postgres_fdw loopback to the server itself (a superuser role)"))
COUNTED = _usable("counts", Text("pg_stat_statements を読み込むサーバー (shared_preload_libraries)",
                                 "a server that preloads pg_stat_statements (shared_preload_libraries)"))
APART = own_server(Text("内部サーバーとは別のマシンの外部サーバー", "external servers on machines apart from the internal one"))


@cache
def select_ratio(pattern: str, baseline: str, clients: int) -> Measure:
    """SELECT TPS of one pattern over another's at a client count. Cached: the page shows
    the same Measure (Run.estimate computes it once)."""
    return tps_ratio(select_name(pattern, clients), select_name(baseline, clients),
                     Text(f"{clients} クライアント: TPS の比 {pattern.upper()} ÷ {baseline.upper()}",
                          f"{clients} client{'s' if clients > 1 else ''}: TPS ratio {pattern.upper()} / {baseline.upper()}"))


# the writes and the options beyond 004, each against what it is compared with (an option
# against the plain foreign case), with its check's label
VERSUS = {
    "update_remote": ("update_local", Text("UPDATE: TPS の比 外部 ÷ ローカル", "UPDATE: TPS ratio foreign / local")),
    "insert_remote": ("insert_local", Text("INSERT: TPS の比 外部 ÷ ローカル", "INSERT: TPS ratio foreign / local")),
    "bulk_batch": ("bulk_remote", Text("TPS の比 batch_size 100 ÷ 1", "TPS ratio batch_size 100 / 1")),
    select_name("one_server", 1): (select_name("p4", 1),
                                   Text("1 クライアント: TPS の比 同じサーバー ÷ P4", "1 client: TPS ratio one server / P4")),
    select_name("estimate", 1): (select_name("p2", 1),
                                 Text("1 クライアント: TPS の比 use_remote_estimate ÷ P2", "1 client: TPS ratio use_remote_estimate / P2")),
}


@cache
def versus(condition: str) -> Measure:
    """TPS of a write or an option over what it is compared with. Cached: the page shows
    the same Measure (Run.estimate computes it once)."""
    baseline, label = VERSUS[condition]
    return tps_ratio(condition, baseline, label)


def _remote(condition: str, label: Text) -> Measure:
    """Remote statements per local transaction, counted with pg_stat_statements: exact."""
    return Measure(label, lambda r: statements_per_transaction(r.raw["remote"][condition]), "", 2, exact=True)


def _latency(pattern: str, baseline: str, clients: int) -> Measure:
    return Measure(Text(f"{clients} クライアント: 平均応答時間の比 {pattern.upper()} ÷ {baseline.upper()}",
                        f"{clients} clients: mean latency ratio {pattern.upper()} / {baseline.upper()}"),
                   lambda r: r.ratio(select_name(pattern, clients), select_name(baseline, clients), "latency_ms"),
                   "×", 2)


SERIALIZATION_FAILURE = "40001"
SECOND_UPDATE = {  # what the second of two concurrent UPDATEs of one row got, by table
    "remote": (Text("外部テーブル: 2 番目の UPDATE が直列化の失敗 (1 = はい)", "foreign table: second UPDATE failed to serialize (1 = yes)"),
               lambda outcome: outcome.get("sqlstate") == SERIALIZATION_FAILURE),
    "local": (Text("ローカル: 2 番目の UPDATE が成功 (1 = はい)", "local: second UPDATE succeeded (1 = yes)"),
              lambda outcome: outcome.get("sqlstate") is None),
}


def _second_update(path: str) -> Measure:
    label, happened = SECOND_UPDATE[path]
    return Measure(label, lambda r: float(happened(r.raw["concurrent_update"][path])), "", 0, exact=True)


def _pushed(condition: str) -> Measure:
    return Measure(Text("結合を外部サーバーで実行するプラン (1 = はい)", "plan joins on the external server (1 = yes)"),
                   lambda r: float(pushed_down(r.raw["plans"][condition])), "", 0, exact=True)


MANY = 10  # the second client count of tiny and default

WORDS = Wording.beside(__file__, MANY=MANY)

FINDINGS = [
    WORDS.finding("F1",
                  [Check(select_ratio("p2", "p1", 1), Below(HALF)), Check(select_ratio("p3", "p1", 1), Below(HALF))],
                  requires=[LOOPBACK]),
    WORDS.finding("F2",
                  # here 0.05-0.12: the foreign patterns' three backends share the 2 cores with P1's one
                  [Check(select_ratio(p, "p1", MANY), Below(HALF)) for p in ("p2", "p3", "p4")],
                  requires=[LOOPBACK]),
    WORDS.finding("F3",
                  [Check(select_ratio("p4", p, n), Below(0.9)) for n in (1, MANY) for p in ("p2", "p3")],  # here 0.47-0.58
                  requires=[LOOPBACK]),
    WORDS.finding("F4",
                  [Check(Measure(Text(f"P4 の伸び ({MANY} ÷ 1 クライアント) ÷ P1 の伸び", f"P4's gain ({MANY} / 1 client) over P1's"),
                                 lambda r: client_gain(r, "p4", "p1", MANY), "×", 2), Above(1.2))],
                  # not expected here: the three servers and pgbench share this VM's 2 cores, so 10
                  # clients saturate them sooner with three backends per foreign transaction (measured
                  # 0.42-0.65: contradicted in 9 of 10 tiny runs and 3 of 5 default, else inconclusive)
                  expected=False,
                  requires=[APART]),
    WORDS.finding("F5",
                  [Check(versus("update_remote"), Below(SLOWER)), Check(versus("insert_remote"), Below(SLOWER))],
                  requires=[LOOPBACK]),
    WORDS.finding("F6",
                  [Check(_latency("p4", "p1", MANY), Above(2))],  # here 18-22
                  requires=[LOOPBACK]),
    WORDS.finding("F7",
                  [Check(_second_update("remote"), Above(0)), Check(_second_update("local"), Above(0))],
                  requires=[LOOPBACK]),
    # INSERT's fourth statement, DEALLOCATE, is invisible to pg_stat_statements before 17
    # (commits 3cd934f6356, bb45156f342): the page shows its count, the finding leaves it out
    WORDS.finding("F8",
                  [Check(_remote(select_name("p2", 1), Text("P2: 外部サーバーの文 ÷ トランザクション", "P2: remote statements per transaction")),
                         Between(4.9, 5.1)),
                   Check(_remote("update_remote", Text("UPDATE: 外部サーバーの文 ÷ トランザクション", "UPDATE: remote statements per transaction")),
                         Between(2.9, 3.1))],
                  requires=[LOOPBACK, COUNTED]),
    WORDS.finding("F9",
                  [Check(_pushed(select_name("one_server", 1)), Above(0)),
                   Check(versus(select_name("one_server", 1)), Above(1.2))],  # here 1.7-2.1
                  requires=[LOOPBACK]),
    WORDS.finding("F10",
                  [Check(_remote("bulk_batch", Text("batch_size 100: 外部サーバーの文 ÷ トランザクション",
                                                    "batch_size 100: remote statements per transaction")), Below(10)),
                   Check(versus("bulk_batch"), Above(2))],  # here 4.1-8.7
                  requires=[majors(BATCH_SIZE_MAJOR, why=Text("batch_size は 14 からです。", "batch_size came in 14.")),
                            LOOPBACK, COUNTED]),
    WORDS.finding("F11",
                  # the time ratio is 0.69-0.96 here, the smallest effect of the chapter: with at most 5
                  # rounds of 1 s runs it was undecided in 2 of 10 tiny runs; with 8, decided in 10 of 10
                  [Check(_remote(select_name("estimate", 1), Text("外部サーバーの文 ÷ トランザクション", "remote statements per transaction")), Above(5.1)),
                   Check(versus(select_name("estimate", 1)), Below(1))],
                  requires=[LOOPBACK, COUNTED]),
]
