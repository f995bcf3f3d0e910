-- beyond 004, PostgreSQL 14 and later: a foreign pgbench_history that sends 100 rows per INSERT
CREATE SCHEMA b_batch;
IMPORT FOREIGN SCHEMA public LIMIT TO (pgbench_history) FROM SERVER ext2 INTO b_batch;
ALTER FOREIGN TABLE b_batch.pgbench_history OPTIONS (ADD batch_size '100');
