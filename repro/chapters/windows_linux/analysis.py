"""From the rounds to what findings and page use: TPS medians, ratios paired by round,
pg_test_fsync's figures, and where read blocks came from."""
from __future__ import annotations

from typing import Any

from ...stats import Rounds, median, paired_ratio
from .conditions import (BUFFERS, FSYNC, METHODS, ONE_WRITE, SB_UPDATE_CLIENTS, TWO_WRITES, buffered_update,
                         fsync_field, read, update)


def fsync_ratio(r: Rounds, section: str, method: str, baseline: str) -> float | None:
    """pg_test_fsync: a method's ops/s over a baseline's, paired by run (a method the file
    system could not test, "n/a", is missing)."""
    pairs = [(rec.get(fsync_field(section, method)), rec.get(fsync_field(section, baseline)))
             for rec in r.records(FSYNC)]
    return paired_ratio([(a, b) for a, b in pairs if a is not None and b is not None])


def read_share(raw: dict[str, Any], size: str) -> float | None:
    """Of the blocks the explained read transactions touched, the share not found in
    shared_buffers (read from the kernel's page cache or the disk), in %."""
    s = raw.get("buffer_sources", {}).get(size)
    return 100.0 * s["read"] / (s["read"] + s["hit"]) if s and s["read"] + s["hit"] else None


def summarize(raw: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
    r = Rounds(raw)

    def tps(condition: str) -> float | None:
        return median(r.values(condition, "tps")) if r.has(condition) else None

    fsync = {section: {m: median([v for rec in r.records(FSYNC) if (v := rec.get(fsync_field(section, m))) is not None])
                       for m in METHODS} for section in (ONE_WRITE, TWO_WRITES)} if r.has(FSYNC) else {}
    return {
        "read": {size: {c: tps(read(size, c)) for c in params["read_clients"]} for size in BUFFERS},
        "update": {m: {c: tps(update(m, c)) for c in params["update_clients"]} for m in METHODS},
        "sb_update": {size: tps(buffered_update(size, SB_UPDATE_CLIENTS)) for size in BUFFERS},
        "fsync": fsync,
        "read_share": {size: read_share(raw, size) for size in BUFFERS},
    }
