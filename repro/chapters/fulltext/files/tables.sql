-- The original's table (004 names it nikoniko in the DDL and fluentd in the queries):
-- a tag and the video's metadata as jsonb. {table} is one of the experiment's tables.
-- inserted_at (not the original's) times the publisher's inserts by its own clock; every
-- table has it, so that every insert pays the same.
-- create: table
CREATE TABLE {table} (tag text, record jsonb, inserted_at timestamptz DEFAULT clock_timestamp());

-- The subscriber's copy of the publisher's table: the apply worker fills the columns the
-- publisher does not send with their defaults, so applied_at is when it applied the row.
-- create: applied
ALTER TABLE {table} ADD COLUMN applied_at timestamptz DEFAULT clock_timestamp();

-- One full-text index per kind on one text field ({column}: title or description), as
-- 004's DDL for pg_bigm and PGroonga; pg_trgm as pg_bigm, with its own operator class.
-- create: bigm
CREATE INDEX ON {table} USING gin((record->>'{column}') gin_bigm_ops);
-- create: pgroonga
CREATE INDEX ON {table} USING pgroonga((record->>'{column}'));
-- create: trgm
CREATE INDEX ON {table} USING gin((record->>'{column}') gin_trgm_ops);
