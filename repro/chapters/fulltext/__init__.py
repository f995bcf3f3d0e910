"""Chapter: 004 §7 (PostgreSQL 10.1, pg_bigm 1.2, PGroonga 2.0.3): full-text search on
Japanese video metadata with and without an index, with and without background inserts,
on one node and on a logical-replication subscriber that carries the index for a
publisher that does not; pg_trgm beside the two."""
from ...text import Text

TITLE = Text("全文検索 (pg_bigm・PGroonga・pg_trgm) とロジカルレプリケーションによる負荷分離",
             "Full-text search (pg_bigm, PGroonga, pg_trgm) and load separation by logical replication")
SHORT = Text("全文検索", "full-text search")  # where a list names many chapters
