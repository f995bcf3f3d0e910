"""Chapter: what auto_explain costs.

Two publications, re-run side by side:
- 000: ぱと隊長日誌, PostgreSQL 14.1: a 1-row query and a 1e6-row count under pgbench
  custom scripts, one client; auto_explain loaded, EXPLAIN, ANALYZE, ANALYZE without
  timing, log output on/off, parallel query on/off.
- 001: pgMustard, PostgreSQL 13.2: pgbench TPC-B, 4 clients; logging every plan, a
  10 ms threshold, analyze with and without timing, every option.
"""
from ...text import Text

TITLE = Text("auto_explain のオーバーヘッド", "The overhead of auto_explain")
SHORT = Text("auto_explain", "auto_explain")  # where a list names many chapters
