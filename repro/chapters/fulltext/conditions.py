"""Names shared by the experiment and the judge: index kinds, searched fields and words,
and how a measured condition is called."""
from __future__ import annotations

NONE, BIGM, PGROONGA, TRGM = "none", "bigm", "pgroonga", "trgm"
KINDS = (NONE, BIGM, PGROONGA, TRGM)
INDEXED = (BIGM, PGROONGA, TRGM)
FEATURE = {BIGM: "pg_bigm", PGROONGA: "pgroonga"}  # image features; pg_trgm is contrib
COLUMNS = ("title", "description")
# One- and two-character words (pg_trgm extracts no trigram from them), 004's word and a
# long one. Each is planted in a fixed share of the rows (corpus.py).
WORDS = ("猫", "料理", "カレー", "プログラミング")
SINGLE, SUBSCRIBER = "single", "subscriber"  # where a search runs
IDLE, LOADED = "idle", "load"  # without and with the background inserts
PUBLISHER_INGEST = "ingest/publisher"


def ingest_table(kind: str, column: str | None = None) -> str:
    """The single node's table for insert throughput: one index of `kind` on `column`."""
    return f"ingest_{kind}_{column}" if column else f"ingest_{kind}"


def search_table(kind: str) -> str:
    """The table searched (on the single node and on the subscriber): `kind`'s index on
    both fields."""
    return f"search_{kind}"


def ingest(kind: str, column: str | None = None) -> str:
    return f"ingest/{ingest_table(kind, column)}"


def search(kind: str, where: str, load: str) -> str:
    return f"search/{kind}/{where}/{load}"


def field(column: str, word: str) -> str:
    """A search's latency field in a search condition's record."""
    return f"{column}:{word}"
