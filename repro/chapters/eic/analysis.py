"""From the cold runs and the traces to what findings and page use: ratios against eic 0 paired
round by round, and the calls per heap block."""
from __future__ import annotations

from typing import Any

from ...stats import Rounds, median

BLOCK = 8192
FIELDS = ("time_ms", "request_kb", "heap_read", "heap_hit")


def per_block(trace: dict[str, Any], what: str) -> float | None:
    """Calls (`willneed_calls`, `read_calls`) per heap block the traced scan visited; none
    from a trace whose tracer died before the scan ended (its counts are partial)."""
    if trace.get("tracer_died") or not trace.get("heap_blocks"):
        return None
    return trace[what] / trace["heap_blocks"]


def mean_kb(trace: dict[str, Any], what: str) -> float | None:
    """The mean size of the advice (`willneed`) or of the reads (`read`), in kB; none from a
    trace whose tracer died before the scan ended."""
    calls = trace[f"{what}_calls"]
    return trace[f"{what}_bytes"] / calls / 1024 if calls and not trace.get("tracer_died") else None


def from_device(run: dict[str, Any]) -> float:
    """The bytes the device delivered during a run over the heap bytes the scan read into
    shared buffers: at about 1 or more (readahead reads ahead) the run read cold."""
    return run["device_bytes"] / (run["heap_read"] * BLOCK) if run["heap_read"] else 0.0


def summarize(raw: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
    r = Rounds(raw)
    conditions = {}
    for c in r.conditions():
        records = r.records(c)
        entry = {f: median([m[f] for m in records if m.get(f) is not None]) for f in FIELDS}
        times = [m["time_ms"] for m in records]
        entry |= {"fastest_ms": min(times), "slowest_ms": max(times)}
        parallel = all(m["parallel"] for m in records)
        entry |= {"rounds": len(records), "from_device_min": min(from_device(m) for m in records),
                  "parallel": parallel,  # EXPLAIN counts the leader's heap blocks only
                  "lossy": None if parallel else records[0]["lossy"]}
        conditions[c] = entry
    traces = {c: {**t, "willneed_per_block": per_block(t, "willneed_calls"),
                  "reads_per_block": per_block(t, "read_calls"),
                  "willneed_kb": mean_kb(t, "willneed"), "read_kb": mean_kb(t, "read")}
              for c, t in raw.get("trace", {}).items()}
    return {"conditions": conditions, "trace": traces,
            "relation_mb": raw["relation_bytes"] / 2**20, "io_method": raw.get("io_method"),
            "read_ahead_kb": raw["read_ahead_kb"]["kb"], "device": raw["read_ahead_kb"]["device"]}
