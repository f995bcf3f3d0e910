"""From the rounds to what findings and page use."""
from __future__ import annotations

from typing import Any

from ...stats import Rounds, median, paired_change
from .conditions import CONDITIONS


def gain(r: Rounds) -> float | None:
    """TPS with synchronous_commit = off against on, paired round by round (%)."""
    return paired_change(r.pairs("off", "on", "tps"))


def summarize(raw: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
    r = Rounds(raw)
    return {"tps": {c: median(r.values(c, "tps")) for c in CONDITIONS}}
