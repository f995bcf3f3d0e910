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


_FSYNC_LINE = re.compile(r"^\s+(?P<what>\S.*?)\s+(?P<ops>[\d.]+) ops/sec\s+(?P<us>\d+) usecs/op\s*$")


def parse_test_fsync(output: str) -> list[dict]:
    """pg_test_fsync: one row per measured line, {section, method, ops_per_s, usecs}.

    Sections are the tool's headings ("Compare file sync methods using one 8kB
    write:" ...); methods the platform lacks ("n/a") are left out.
    """
    rows: list[dict] = []
    section = ""
    for line in output.splitlines():
        if m := _FSYNC_LINE.match(line):
            rows.append({"section": section, "method": m["what"], "ops_per_s": float(m["ops"]),
                         "usecs": int(m["us"])})
        elif line and not line[0].isspace() and line.rstrip().endswith(":"):
            section = line.strip().rstrip(":")
    if not rows:
        raise ValueError("pg_test_fsync output has no 'ops/sec' lines")
    return rows
