"""From the rounds to what findings and page use: TPS against no replication, round by round;
where the standbys were at the end of each run."""
from __future__ import annotations

from typing import Any

from ...stats import Rounds, median, paired_change

CONFIGS = ("none", "async1", "async2", "async3", "sync1", "sync2", "sync3", "sync1_async2",
           "sync2_async1")


def ratio_pct(r: Rounds, config: str) -> float | None:
    """TPS as a share of no replication: each round's run against the same round's."""
    change = paired_change(r.pairs(config, "none", "tps"))
    return None if change is None else 100 + change


def step_change(r: Rounds, before: str, after: str) -> float | None:
    """How much TPS changed from one configuration to the next (%, paired by round)."""
    return paired_change(r.pairs(after, before, "tps"))


def spread(values: list[float]) -> float | None:
    """(max - min) / median in %: how much repetitions of one configuration disagree."""
    return (max(values) - min(values)) / median(values) * 100 if values else None


def summarize(raw: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
    r = Rounds(raw)
    conditions = {}
    for config in CONFIGS:
        records = r.records(config)
        tps = [m["tps"] for m in records]
        sync_margins = [s["flush_margin"] for m in records for s in m["standbys"].values()
                        if s["sync_state"] == "sync"]
        async_end = [s["lag_end_bytes"] for m in records for s in m["standbys"].values()
                     if "lag_end_bytes" in s]
        async_max = [s["lag_max_bytes"] for m in records for s in m["standbys"].values()
                     if "lag_max_bytes" in s]
        conditions[config] = {
            "tps": median(tps), "spread_pct": spread(tps),
            "latency_ms": median([m["latency_ms"] for m in records]),
            "ratio_pct": ratio_pct(r, config),
            "sync_runs": len(sync_margins), "sync_min_flush_margin": min(sync_margins, default=None),
            "sync_all_flushed": all(m >= 0 for m in sync_margins),
            "async_lag_end_median": median(async_end), "async_lag_max": max(async_max, default=None),
            "rounds": len(records),
        }
    checksums = raw["checksums"]
    return {"conditions": conditions, "checksums": checksums,
            "exact_commit_lsn": raw["exact_commit_lsn"],
            "checksums_match": len(set(checksums.values())) == 1}
