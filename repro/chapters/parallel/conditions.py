"""The conditions: Q10 per worker count, Q11's year_total per worker count. Shared by the
experiment and the page, which imports no lab."""
from __future__ import annotations

# 004's tables read by Q10 and Q11, in load order
TABLES = ["date_dim", "customer_address", "customer_demographics", "customer", "store_sales",
          "web_sales", "catalog_sales"]
PLANNER_CHOOSES_SUBPLAN = 14  # before 14 the executor chose between alternative subplans


def q10(workers: int) -> str:
    return f"q10_w{workers}"


def year_total(workers: int) -> str:
    return f"year_total_w{workers}"


def q11(workers: int) -> str:
    return f"q11_w{workers}"


def workers_of(condition: str) -> int:
    return int(condition.rsplit("_w", 1)[1])
