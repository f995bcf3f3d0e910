"""The findings: which of Q10's subplans runs (counted scans, exact) and what it costs,
how far more workers help Q10 and Q11's parallel part, and where the sorts go.

Thresholds sit between "no effect" and the original's size, far from what this VM measured
(2026-11-24: 10 tiny runs on 17, 5 default runs on 17 and 2 on each of 9.6, 10, 13, 15, 18;
every applicable expected finding reproduced in every default run and decided in 10 of 10
tiny runs; the ranges below are over the default runs). Scan counts and sorts are exact.
"""
from __future__ import annotations

from ...text import Text
from ...verdict import SANITY, Above, Below, Change, Check, Cite, Finding, Measure, Requirement, majors, min_cpus
from .analysis import disk_sorts, full_q11_ratio, scans, serial_speedup, time_ratio
from .conditions import PLANNER_CHOOSES_SUBPLAN, q10, q11, year_total

PER_RUN = 5  # the leader scans web_sales once per run for the hashed subplan
CORRELATED = 10  # the correlated one, once per customer: 91-93 in 20 s on 9.6-13 here


def _scans(workers: int) -> Measure:
    return Measure(Text(f"ワーカー {workers}: リーダーの web_sales のシーケンシャルスキャン数",
                        f"{workers} workers: the leader's sequential scans of web_sales"),
                   lambda r: scans(r, q10(workers)), "", 0, exact=True)


def _ratio(condition: str, baseline: str, label: Text) -> Measure:
    return Measure(label, lambda r: time_ratio(r, condition, baseline), "×", 2)


def _hashed(workers: tuple[int, ...]) -> Requirement:
    return Requirement(
        lambda e: all(e.raw["first"][q10(w)]["scans"]["web_sales"] < PER_RUN for w in workers),
        lambda e: Text("Q10 がどれかのワーカー数で相関サブプランを実行したため (比べるのはハッシュ化サブプラン同士)。",
                       "Q10 ran the correlated subplan at one of these worker counts (this compares hashed subplans)."),
        Text("両方でハッシュ化サブプラン", "the hashed subplan at both"))


PLANNER_CHANGE = Change(PLANNER_CHOOSES_SUBPLAN, Text(
    "代替サブプランの選択が実行時のエグゼキューターからプランナーに移り、並列なしの Q10 もハッシュ化サブプランを使います",
    "the choice between alternative subplans moved from the executor at run time to the planner, and serial Q10 "
    "uses the hashed subplan too"), "commit 41efb834087")
NEW_PLANNER = majors(PLANNER_CHOOSES_SUBPLAN, why=Text(
    "13 までは実行時にエグゼキューターが選びます。", "Up to 13 the executor chooses at run time."))
SERIAL_MEASURED = majors(PLANNER_CHOOSES_SUBPLAN, why=Text(
    "13 までの並列なしの Q10 は相関サブプランで、打ち切られます (F1)。",
    "Up to 13 serial Q10 runs the correlated subplan and is cut at the cap (F1)."))
GATHER_MERGE = majors(10, why=Text("Gather Merge は 10 からです。", "Gather Merge came in 10."))
WORKER_SORTS = majors(11, why=Text("EXPLAIN ANALYZE がワーカーのソートを示すのは 11 からです (コミット bf11e7ee2e3)。",
                                   "EXPLAIN ANALYZE shows the workers' sorts from 11 on (commit bf11e7ee2e3)."))

SERIAL_SPEEDUP = Measure(Text("Q10 の時間の比 ワーカー 0 (打ち切りなら外挿) ÷ 2",
                              "Q10 time ratio 0 workers (extrapolated when cut) / 2"), serial_speedup, "×")
YEAR_TOTAL_GAIN = _ratio(year_total(0), year_total(2), Text("year_total の時間の比 ワーカー 0 ÷ 2",
                                                            "year_total time ratio 0 / 2 workers"))

FINDINGS = [
    Finding("F1", Text("Q10 は並列なしでは顧客ごとに web_sales を走査する相関サブプランを実行し、"
                       "ワーカー 2 ではハッシュ化サブプランに切り替わって桁違いに速くなる",
                       "Serial Q10 runs the correlated subplan, scanning web_sales once per customer; with 2 "
                       "workers it switches to the hashed subplan and runs far faster"),
            [Check(_scans(0), Above(CORRELATED)), Check(_scans(2), Below(PER_RUN)),
             Check(SERIAL_SPEEDUP, Above(10))],
            original=Text("サーバー 2、ワーカー 0 → 2: 9.6 14,658 s → 5.86 s (2,503 倍)、10 9,930 s → 5.65 s (1,758 倍)",
                          "server 2, 0 → 2 workers: 9.6 14,658 s → 5.86 s (2,503×), 10 9,930 s → 5.65 s (1,758×)"),
            cite=Cite("004", Text("6.5.1 節、表 6.9 (ワーカー 2) と 6.5.3 節、表 6.18 (ワーカー 0)",
                                  "section 6.5.1, table 6.9 (2 workers) and section 6.5.3, table 6.18 (0 workers)")),
            changed_in=PLANNER_CHANGE),
    Finding("F2", Text("14 以降は並列なしでもプランナーがハッシュ化サブプランを選び、Q10 は打ち切りまでに終わる",
                       "From 14 on the planner picks the hashed subplan without parallelism too, and serial Q10 "
                       "finishes within the cap"),
            [Check(_scans(0), Below(PER_RUN)),
             Check(Measure(Text("ワーカー 0 の Q10 が打ち切り前に完了 (1 = はい)", "0 workers: Q10 finished before the cap (1 = yes)"),
                           lambda r: float(not r.raw["first"][q10(0)]["cancelled"]), "", 0, exact=True), Above(0))],
            requires=[NEW_PLANNER]),
    Finding("F3", Text("ハッシュ化サブプランどうしでは、Q10 はワーカー 1 から 2 に増やしても 25 % 未満しか速くならない",
                       "With the hashed subplan at both, Q10 gains less than 25 % from 1 to 2 workers"),
            [Check(_ratio(q10(1), q10(2), Text("Q10 の時間の比 ワーカー 1 ÷ 2", "Q10 time ratio 1 / 2 workers")), Below(1.25))],
            original=Text("10、サーバー 2、ワーカー 2 → 8: 5.65 s → 5.30 s (6.7 %)", "10, server 2, 2 → 8 workers: 5.65 s → 5.30 s (6.7 %)"),
            cite=Cite("004", Text("6.5.2 節、表 6.13", "section 6.5.2, table 6.13")),
            requires=[min_cpus(3), _hashed((1, 2))],
            # not expected here: with 2 CPUs, 1 worker and the leader already use both, so a
            # second worker has no CPU to gain from (measured 0.91-1.02 on 13-18)
            expected=False),
    Finding("F4", Text("14 以降、Q10 はワーカー 2 のほうが並列なしより遅い",
                       "From 14 on, Q10 is slower with 2 workers than serial"),
            [Check(_ratio(q10(2), q10(0), Text("Q10 の時間の比 ワーカー 2 ÷ 0", "Q10 time ratio 2 / 0 workers")), Above(1.2))],  # here 3.5-4.2
            requires=[SERIAL_MEASURED]),
    Finding("F5", Text("Q11 の並列に動く部分 (CTE year_total) はワーカー 2 で 1.3 倍を超えて速くなる",
                       "Q11's parallel part (the CTE year_total) runs more than 1.3× faster with 2 workers"),
            [Check(YEAR_TOTAL_GAIN, Above(1.3))],  # here 1.47-1.79
            original=Text("並列部分 22.77 s → 7.74 s (ワーカー 0 → 2、2.94 倍、10、サーバー 2)",
                          "parallel part 22.77 s → 7.74 s (0 → 2 workers, 2.94×, 10, server 2)"),
            cite=Cite("004", Text("6.5.2.1 節、表 6.17", "section 6.5.2.1, table 6.17")),
            requires=[GATHER_MERGE]),
    Finding("F6", Text("並列なしでは year_total のソートがディスクにあふれ、ワーカー 2 ではワーカーごとのソートがメモリに収まる",
                       "Serial, year_total's sort spills to disk; with 2 workers each worker's sort fits in memory"),
            [Check(Measure(Text("ワーカー 0: ディスクを使ったソート", "0 workers: sorts on disk"),
                           lambda r: disk_sorts(r, year_total(0)), "", 0, exact=True), Above(0)),
             Check(Measure(Text("ワーカー 2: ディスクを使ったソート", "2 workers: sorts on disk"),
                           lambda r: disk_sorts(r, year_total(2)), "", 0, exact=True), Below(1))],
            original=Text("9.5: external merge Disk: 883,896 kB、10 (ワーカー 2): quicksort Memory: 518,574 kB",
                          "9.5: external merge Disk: 883,896 kB; 10 (2 workers): quicksort Memory: 518,574 kB"),
            cite=Cite("004", Text("6.6.1.2 節 (9.5 と 10 の EXPLAIN ANALYZE 出力、番号なし)",
                                  "section 6.6.1.2 (the EXPLAIN ANALYZE output of 9.5 and 10, not numbered)")),
            requires=[WORKER_SORTS],
            # work_mem (files/postgresql.conf) sits between the serial sort's size and each
            # worker's, measured here: true by construction, so it reproduces nothing
            declared_kind=SANITY),
    Finding("F7", Text("Q11 全体はワーカー 2 でも 10 % 未満しか速くならない",
                       "Q11 as a whole gains less than 10 % with 2 workers"),
            [Check(Measure(Text("Q11 の時間の比 ワーカー 0 ÷ 2", "Q11 time ratio 0 / 2 workers"),
                           full_q11_ratio, "×", 2), Below(1.1))],
            original=Text("10、サーバー 2: ワーカー 0 8,105.3 s、ワーカー 2 9,167.4 s (0.88 倍)",
                          "10, server 2: 0 workers 8,105.3 s, 2 workers 9,167.4 s (0.88×)"),
            cite=Cite("004", Text("6.5.1 節、表 6.11 (ワーカー 2) と 6.5.3 節、表 6.19 (ワーカー 0)",
                                  "section 6.5.1, table 6.11 (2 workers) and section 6.5.3, table 6.19 (0 workers)")),
            requires=[Requirement(lambda e: q11(0) in e.raw["first"],
                                  lambda e: Text("Q11 全体は full スケールだけで実行します (tiny と default は時間の予算に収めるために除きます)。",
                                                 "Only the full scale runs the whole Q11 (tiny and default leave it out to "
                                                 "stay within their time budget)."),
                                  Text("full スケール", "full scale"))],
            # not expected: tiny and default (what `make test` and CI run) leave the full Q11 out
            expected=False),
]
