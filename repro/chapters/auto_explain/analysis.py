"""From the rounds to what findings and page use: each condition's latency change against
the condition it is compared with in the originals, paired round by round."""
from __future__ import annotations

from typing import Any

from ...stats import Rounds, median

COUNT_CONDITIONS = ("loaded", "explain", "analyze", "analyze_no_timing")
TPCB_CONDITIONS = ("log_all", "threshold", "analyze_no_timing", "analyze_timing", "everything")
BASELINES = {  # condition -> the condition its change is measured against (as in the originals)
    "limit/preloaded": "limit/not_loaded",
    "limit/explain": "limit/loaded", "limit/analyze": "limit/loaded",
    "limit/analyze_no_timing": "limit/loaded",
    "limit/explain_log": "limit/explain", "limit/analyze_log": "limit/analyze",
    **{f"{q}/{c}": f"{q}/loaded" for q in ("count_parallel", "count_serial")
       for c in COUNT_CONDITIONS[1:]},
    **{f"tpcb/{c}": "tpcb/baseline" for c in TPCB_CONDITIONS},
}


def changes(r: Rounds, condition: str, baseline: str | None = None) -> list[float]:
    """Per round: the condition's latency change against its baseline's (%). "Loaded vs
    not loaded" pools the neighbouring pairs of each round's alternating runs instead."""
    if condition == "limit/preloaded":
        return [x for m in r.records(condition) for x in m["pair_changes_pct"]]
    base = baseline or BASELINES[condition]
    return [(v / b - 1) * 100 for v, b in r.pairs(condition, base, "latency_ms") if b]


def change(r: Rounds, condition: str, baseline: str | None = None) -> float | None:
    return median(changes(r, condition, baseline))


def spread(values: list[float]) -> float | None:
    """(max - min) / median in %: how much repetitions of one condition disagree."""
    return (max(values) - min(values)) / median(values) * 100 if values else None


def summarize(raw: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
    r = Rounds(raw)
    conditions = {}
    for c in r.conditions():
        records = r.records(c)
        latency = [m["latency_ms"] for m in records]
        entry = {"latency_ms": median(latency), "spread_pct": spread(latency), "rounds": len(records)}
        if "tps" in records[0]:
            entry["tps"] = median([m["tps"] for m in records])
        conditions[c] = entry
    timing = raw.get("pg_test_timing")  # none against an existing server
    if timing is None:
        return {"conditions": conditions, "timing": None}
    under_1us = sum(share for bound, share, _ in timing["histogram"] if bound <= 1)
    return {"conditions": conditions, "timing": {**timing, "under_1us_pct": under_1us}}


def original_change(original: dict[str, Any], condition: str) -> float | None:
    """The original's change for a condition, computed from its published latencies."""
    query, name = condition.split("/")
    base = BASELINES[condition].split("/")[1]
    table = original[query]
    if name not in table or base not in table:
        return None
    return (table[name] / table[base] - 1) * 100

