-- 004's searches: LIKE '%word%' for pg_bigm and no index (pg_trgm serves LIKE the same
-- way), PGroonga's full-text operator &@ for PGroonga. One statement per word and field.
-- operator: like
SELECT count(*) FROM {table} WHERE (record->>'{column}') LIKE '%{word}%';
-- operator: pgroonga
SELECT count(*) FROM {table} WHERE (record->>'{column}') &@ '{word}';
