"""From the rounds and the probes to what findings and page use: throughput ratios paired
round by round, and the remote statements per local transaction."""
from __future__ import annotations

import re
from typing import Any

from ...stats import Rounds, median
from .conditions import select_name


def client_gain(r: Rounds, pattern: str, baseline: str, clients: int) -> float | None:
    """How much more a pattern gains from `clients` clients than the baseline pattern does:
    per round, (pattern at n / at 1) over (baseline at n / at 1); the median."""
    def by_round(condition: str) -> dict[int, float]:
        return {m["round"]: m["tps"] for m in r.records(condition)}
    many, one = by_round(select_name(pattern, clients)), by_round(select_name(pattern, 1))
    base_many, base_one = by_round(select_name(baseline, clients)), by_round(select_name(baseline, 1))
    gains = [(many[i] / one[i]) / (base_many[i] / base_one[i])
             for i in r.ids if i in many and i in one and i in base_many and i in base_one]
    return median(gains)


# a parameter, a string, or a number after "=", "(" or "," (FETCH 100 keeps its count)
CONSTANT = re.compile(r"\$\d+|'[^']*'|(?<=[=(,]\s)-?\d+(?:\.\d+)?|(?<=[=(,])-?\d+(?:\.\d+)?")


def shape(statement: str) -> str:
    """A statement with its constants as "?": pg_stat_statements normalizes utility statements
    (DECLARE ... CURSOR) only from 16 on (commit daa8365a900), so before that every constant
    makes an entry of its own."""
    return CONSTANT.sub("?", " ".join(statement.split()))


def per_transaction(remote: dict[str, Any]) -> dict[str, float]:
    """Calls per local transaction of each statement shape the external servers ran in at
    least half as many calls as transactions (a new remote session's SETs, once per
    connection, are left out)."""
    n = remote["transactions"]
    calls: dict[str, int] = {}
    for server, statements in remote["statements"].items():
        for query, count in statements.items():
            key = f"{server}: {shape(query)}"
            calls[key] = calls.get(key, 0) + count
    return {key: count / n for key, count in calls.items() if count >= n / 2}


def statements_per_transaction(remote: dict[str, Any]) -> float:
    return sum(per_transaction(remote).values())


def remote_sql(plan: list[str]) -> list[str]:
    """The SQL a plan sends to external servers (EXPLAIN VERBOSE's "Remote SQL" lines)."""
    return [line.split("Remote SQL:", 1)[1].strip() for line in plan if "Remote SQL:" in line]


def pushed_down(plan: list[str]) -> bool:
    """One Foreign Scan that joins both tables on the remote server (EXPLAIN VERBOSE)."""
    scans = [line for line in plan if "Foreign Scan" in line]
    return len(scans) == 1 and "JOIN" in " ".join(remote_sql(plan)).upper()


def summarize(raw: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
    """Against an existing server, a run may lack the counts (no pg_stat_statements there) or
    everything (no postgres_fdw): what it lacks is empty."""
    r = Rounds(raw)
    conditions = {c: {"tps": median(r.values(c, "tps")), "latency_ms": median(r.values(c, "latency_ms")),
                      "rounds": r.count(c)} for c in r.conditions()}
    remote = {c: {"per_transaction": statements_per_transaction(v), "statements": per_transaction(v)}
              for c, v in raw.get("remote", {}).items()}
    return {"conditions": conditions, "remote": remote,
            "plans": {c: {"pushed_down": pushed_down(p), "remote_sql": remote_sql(p),
                          "foreign_scans": sum("Foreign Scan" in line for line in p)}
                      for c, p in raw.get("plans", {}).items()},
            "concurrent_update": raw.get("concurrent_update", {})}
