"""The conditions: which script runs with which search_path (where its tables are) and how
many clients. Shared by the experiment and the page; it needs no lab."""
from __future__ import annotations

from dataclasses import dataclass

BATCH_SIZE_MAJOR = 14  # postgres_fdw's batch_size (commit b663a413633)

# 004's SELECT patterns (addrbook, pgbench_accounts) and two more beyond 004
SELECT_PATTERNS = {"p1": "a_local,b_local", "p2": "a_local,b_remote",
                   "p3": "a_remote,b_local", "p4": "a_remote,b_remote"}
SELECT_EXTRA = {"one_server": "one_server", "estimate": "a_local,b_estimate"}
WRITES = {"update_local": ("update", "b_local"), "update_remote": ("update", "b_remote"),
          "insert_local": ("insert", "b_local"), "insert_remote": ("insert", "b_remote"),
          "bulk_local": ("bulk_insert", "b_local"), "bulk_remote": ("bulk_insert", "b_remote"),
          "bulk_batch": ("bulk_insert", "b_batch")}


@dataclass(frozen=True)
class Condition:
    name: str
    script: str  # files/<script>.pgbench
    search_path: str
    clients: int


def select_name(pattern: str, clients: int) -> str:
    return f"select_{pattern}_c{clients}"


def conditions(major: float, clients: list[int]) -> dict[str, Condition]:
    """Every condition measured on a major: 004's patterns at each client count, the rest at 1."""
    found = [Condition(select_name(p, n), "select", path, n)
             for n in clients for p, path in SELECT_PATTERNS.items()]
    found += [Condition(select_name(p, 1), "select", path, 1) for p, path in SELECT_EXTRA.items()]
    found += [Condition(name, script, path, 1) for name, (script, path) in WRITES.items()
              if name != "bulk_batch" or major >= BATCH_SIZE_MAJOR]
    return {c.name: c for c in found}
