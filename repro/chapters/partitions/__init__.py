"""Chapter: single-row INSERTs into a table of 256 hash partitions, PostgreSQL 11 against
the majors after it (source 005: digoal's blog post on PostgreSQL 12's partitioning,
2019-03-31).

The registry builds the chapter from this package by convention: analysis.summarize,
findings.FINDINGS, page.TABLES, page.CHARTS, page.numbers; here only its title and what the
whole chapter needs."""
from ... import majors as pg
from ...requirements import majors
from ...text import Text
from .conditions import REFERENCE_MAJOR

SHORT = Text("パーティション", "partitions")  # where a list names many chapters
TITLE = Text("256 パーティションへの 1 行 INSERT: 11 と 12 以降", "Single-row INSERTs into 256 partitions: 11 against 12 and later")

REQUIRES = [majors(11, why=Text("ハッシュパーティションは 11 からです。", "Hash partitioning came in 11."))]
BESIDE = (pg.image(REFERENCE_MAJOR),)  # 11, the original's older major, in every run
