"""Chapter: the cost of postgres_fdw for a join, an UPDATE and an INSERT.

Publication 004 (PGECons WG1 2017 report, section 9, PostgreSQL 10.3): an internal server
and two external ones, 2-core VMs; a join of addrbook and pgbench_accounts with both tables
local, one foreign or both foreign, at 1 to 100 connections; a one-row UPDATE and INSERT,
local or foreign, at 1 connection.
"""
from ...text import Text

TITLE = Text("postgres_fdw のコスト: 結合、UPDATE、INSERT", "The cost of postgres_fdw: a join, an UPDATE and an INSERT")
SHORT = Text("postgres_fdw", "postgres_fdw")  # where a list names many chapters
