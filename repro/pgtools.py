"""Parsers for PostgreSQL's small measuring tools run inside the containers."""
from __future__ import annotations

import re

_LOOP = re.compile(r"Per loop time including overhead: ([\d.]+) ns")
_BIN = re.compile(r"^\s*(\d+)\s+([\d.]+)\s+(\d+)\s*$")


def parse_test_timing(output: str) -> dict:
    """pg_test_timing: per-loop time (ns) and the histogram [(< us, % of total, count)]."""
    loop = _LOOP.search(output)
    if not loop:
        raise ValueError("pg_test_timing output has no 'Per loop time' line")
    histogram = [[int(m[1]), float(m[2]), int(m[3])]
                 for line in output.splitlines() if (m := _BIN.match(line))]
    return {"per_loop_ns": float(loop[1]), "histogram": histogram}
