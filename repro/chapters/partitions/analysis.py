"""From the rounds to what findings and page use."""
from __future__ import annotations

from typing import Any

from ...stats import Rounds, median
from .conditions import REFERENCE, THIS


def speedup(r: Rounds) -> float | None:
    """TPS on the major under test over TPS on 11, paired round by round."""
    return r.ratio(THIS, REFERENCE, "tps")


def locked(r: Rounds, server: str = THIS) -> float:
    """The partitions a single-row INSERT locked on a server (counted once, exact)."""
    return float(r.raw["locked"][server])


def summarize(raw: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
    r = Rounds(raw)
    return {"tps": {c: median(r.values(c, "tps")) for c in r.conditions()},
            "latency_ms": {c: median(r.values(c, "latency_ms")) for c in r.conditions()},
            "locked": raw.get("locked", {})}
