"""A verdict as readers see it, in both languages: the words for the statuses and the kinds
of finding, the badge, what would decide an undecided check, why a run's rounds stopped,
and a verdict as JSON. The judge (repro/verdict.py) decides; the page, the command line,
the pooled tables and the result documents say it with these, one wording for all."""
from __future__ import annotations

from typing import Any

import numpy as np

from .text import Text
from .verdict import (CHANGED, CONTRADICTED, INCONCLUSIVE, MECHANISM, NOT_APPLICABLE, ORIGINAL, PARTIAL, REPORT,
                      REPRODUCED, SANITY, CheckResult, Verdict, limit_text)

STATUS = {
    REPRODUCED: Text("再現した", "reproduced"),
    PARTIAL: Text("一部で再現", "reproduced in part"),  # a claim over kinds, some not measured here
    CONTRADICTED: Text("再現しなかった", "contradicted"),
    CHANGED: Text("後のメジャーで変化", "changed in a later major"),
    INCONCLUSIVE: Text("判定できず", "inconclusive"),
    NOT_APPLICABLE: Text("この環境では対象外", "not applicable here"),
}
KIND = {
    ORIGINAL: Text("原典の主張", "claim of the original"),
    MECHANISM: Text("仕組みの確認", "mechanism check"),
    REPORT: Text("本報告の主張", "claim of this report"),
    SANITY: Text("健全性の確認", "sanity check"),
}

# Why a run's rounds stopped (its rounds log, as lab/measure.py writes it): "decided" is the
# first look finding nothing that more rounds could decide: every finding decided, or the
# rest beyond what the rounds left could settle (too close to its threshold, or measured
# once per run).
STOPPED = {
    "minimum": Text("最小ラウンド数で終了", "stopped at the minimum rounds"),
    "decided": Text("これ以上のラウンドで決まる知見がないため終了",
                    "stopped: no more rounds could decide another finding"),
    "max_rounds": Text("最大ラウンド数に達して終了", "stopped at the most rounds the scale allows"),
    "budget": Text("スケールの時間予算に達して終了", "stopped: the scale's time budget was spent"),
}

# more runs than this to decide a check is "too close to call at this threshold"
FEASIBLE_RUNS = 20


def badge_of(v: Verdict) -> Text:
    """The status as a reader sees it: "changed in 14", "not applicable: ≥ 3 CPUs"."""
    base = STATUS[v.status]
    if v.status == CHANGED and v.finding.changed_in:
        return Text(f"{v.finding.changed_in.major} で変化", f"changed in {v.finding.changed_in.major}")
    if v.status == NOT_APPLICABLE and v.lacking and v.of_target:
        return Text(f"既存のサーバーでは対象外 (必要なもの: {v.lacking.ja})",
                    f"not applicable against an existing server: needs {v.lacking.en}")
    if v.status == NOT_APPLICABLE and v.lacking and v.other_majors:
        return Text(f"{v.lacking.ja}が対象", f"applies to {v.lacking.en}")  # not a lack of this machine
    if v.status == NOT_APPLICABLE and v.lacking:
        return Text(f"{base.ja}: {v.lacking.ja}", f"{base.en}: {v.lacking.en}")
    return base


def to_decide(c: CheckResult) -> Text | None:
    """For an undecided check: the end of its interval that lies across the threshold, and
    how many runs of the observed spread would decide it; or that none feasibly would."""
    e, m = c.estimate, c.check.measure
    if c.status != INCONCLUSIVE or m.exact:
        return None
    if e.value is None:
        return Text("測った値がありません。", "Nothing was measured for it.")
    if e.low is None or e.high is None:
        return Text("区間がありません (実行ごとに 1 つの値で、値が 2 つ以上要ります)。あと 1 回の実行で区間が得られます。",
                    "No interval yet (one value per run, and it needs two or more): one more run gives one.")
    limit = c.nearest_limit()
    end = m.number(e.high if e.high - limit < limit - e.low else e.low)  # the end across the limit
    runs = e.runs_to_decide(limit)
    bound = limit_text(m, limit, "ja"), limit_text(m, limit, "en")
    head = Text(f"区間が閾値 {bound[0]} をまたいで {end.format('ja')} まで広がっています",
                f"the interval reaches across the threshold {bound[1]}, to {end.format('en')}")
    if runs is None or runs > FEASIBLE_RUNS:
        return Text(f"閾値に近すぎて判定できません: {head.ja}。同じばらつきなら {FEASIBLE_RUNS} 回を超える実行が要ります。",
                    f"Too close to call at this threshold: {head.en}; at the observed spread it would take "
                    f"more than {FEASIBLE_RUNS} runs.")
    need = max(int(np.ceil(runs)), e.runs + 1)
    return Text(f"{head.ja}。同じばらつきなら、合わせて約 {need} 回の実行 (いまは {e.runs} 回) で決まります。",
                f"{head.en[0].upper()}{head.en[1:]}; at the observed spread, about {need} runs in all "
                f"(now {e.runs}) would decide it.")


def verdict_dict(v: Verdict) -> dict[str, Any]:
    """A verdict as `repro check --json` prints it and a result document keeps it."""
    return {"id": v.finding.id, "status": v.status, "expected": v.finding.expected,
            "kind": v.finding.kind, "badge": badge_of(v).as_dict(),
            "claim": v.finding.claim.as_dict(),
            "checks": [{"label": c.check.measure.label.as_dict(),
                        "holds_if": c.check.threshold.text(c.check.measure).as_dict(),
                        "status": c.status, **c.number().as_dict(),
                        **({"to_decide": decide.as_dict()} if (decide := to_decide(c)) else {})}
                       for c in v.checks],
            "runs": v.runs, "rounds": v.rounds,
            "reason": v.reason.as_dict() if v.reason else None}
