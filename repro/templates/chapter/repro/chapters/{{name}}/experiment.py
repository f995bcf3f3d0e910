"""What runs on the server (replace): pgbench TPC-B with synchronous_commit on and off,
interleaved round by round."""
from __future__ import annotations

from typing import Any

from ...lab.context import RunContext
from .conditions import CONDITIONS


def run(ctx: RunContext) -> None:
    p = ctx.params
    ctx.step(f"pgbench -i -s {p['scale']}")
    server = ctx.server("TPC-B", ctx.settings("postgresql.conf"))
    server.pgbench_init(p["scale"])

    def tpcb(condition: str) -> Any:
        def one() -> dict[str, dict[str, float]]:
            r = server.pgbench(["-c", str(p["clients"]), "-T", str(p["seconds"])],
                               options=CONDITIONS[condition])
            return {condition: {"latency_ms": r.latency_avg_ms, "tps": r.tps}}
        return one

    ctx.rounds({c: tpcb(c) for c in CONDITIONS})
