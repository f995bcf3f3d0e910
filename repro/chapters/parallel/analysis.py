"""From the runs to what findings and page use."""
from __future__ import annotations

from typing import Any

from ...stats import Rounds, median
from .conditions import q10, q11


def seconds(r: Rounds, condition: str) -> float | None:
    """The median time of a condition's rounds, or the cap when its first run was cut
    (then a lower bound)."""
    if r.has(condition):
        return median([v / 1000 for v in r.values(condition, "time_ms")])
    first = r.raw["first"][condition]
    return first["time_ms"] / 1000 if first["cancelled"] else None


def time_ratio(r: Rounds, condition: str, baseline: str) -> float | None:
    """Time of `condition` over `baseline`, paired round by round."""
    return r.ratio(condition, baseline, "time_ms")


def serial_estimate(r: Rounds) -> float | None:
    """Serial Q10's seconds: measured, or, when cut, extrapolated: the rows its EXISTS
    subplans must check (counted in the 2-worker run) times the time per check before the
    cut (each check of a correlated run starts one scan of web_sales)."""
    first = r.raw["first"][q10(0)]
    if not first["cancelled"]:
        return seconds(r, q10(0))
    checks, done = r.raw["first"][q10(2)].get("evaluations"), first["scans"]["web_sales"]
    return checks * first["time_ms"] / 1000 / done if checks and done else None


def serial_speedup(r: Rounds) -> float | None:
    """Serial Q10 (measured or extrapolated) over Q10 with 2 workers. Measured, it is paired
    round by round; extrapolated from the one cut run, it is one value per run (over the
    median of the 2-worker rounds), which only the spread between runs gives an interval."""
    if not r.raw["first"][q10(0)]["cancelled"]:
        return time_ratio(r, q10(0), q10(2))
    serial = serial_estimate(r)
    parallel = median([x["time_ms"] / 1000 for x in r.raw["rounds"].get(q10(2), [])])
    return serial / parallel if serial is not None and parallel else None


def scans(r: Rounds, condition: str) -> float:
    """The leader's sequential scans of web_sales in the condition's first run."""
    return float(r.raw["first"][condition]["scans"]["web_sales"])


def full_q11_ratio(r: Rounds) -> float | None:
    """The whole Q11, serial over 2 workers, paired round by round; none when either was cut
    at its cap in the warm-up (then not repeated: two caps would measure nothing)."""
    if not (r.has(q11(0)) and r.has(q11(2))):
        return None
    return time_ratio(r, q11(0), q11(2))


def disk_sorts(r: Rounds, condition: str) -> float:
    """Sorts (leader's and workers') that spilled to disk, in the first run."""
    return float(sum(s["space"] == "Disk" for s in r.raw["first"][condition].get("sorts", [])))


def _condition(r: Rounds, condition: str) -> dict[str, Any]:
    first = r.raw["first"][condition]
    parallel = median([x["parallel_ms"] / 1000 for x in r.records(condition)]) if r.has(condition) else None
    return {"seconds": seconds(r, condition), "cancelled": first["cancelled"], "parallel_s": parallel,
            "scans": first["scans"]["web_sales"], "sorts": first.get("sorts", []),
            "launched": first.get("launched")}


def summarize(raw: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
    r = Rounds(raw)
    return {"conditions": {c: _condition(r, c) for c in raw["first"]},
            "serial_estimate": serial_estimate(r)}
