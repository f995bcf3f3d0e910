-- On the internal server, once postgres_fdw and the foreign servers ext1 and ext2 exist
-- (experiment.py: where the run's servers reach one another), one schema per place a
-- table can be; a pattern is a search_path, so every script names its tables as 004's
-- statements do.
-- addrbook: local (a_local) or on ext1 (a_remote)
CREATE SCHEMA a_remote;
IMPORT FOREIGN SCHEMA public LIMIT TO (addrbook) FROM SERVER ext1 INTO a_remote;
-- pgbench_accounts and pgbench_history: local (b_local) or on ext2 (b_remote)
CREATE SCHEMA b_remote;
IMPORT FOREIGN SCHEMA public LIMIT TO (pgbench_accounts, pgbench_history) FROM SERVER ext2 INTO b_remote;
-- beyond 004: both tables of the join on one server (ext2), so the join can be pushed down
CREATE SCHEMA one_server;
IMPORT FOREIGN SCHEMA public LIMIT TO (addrbook, pgbench_accounts) FROM SERVER ext2 INTO one_server;
-- beyond 004: the planner asks ext2 for estimates (EXPLAIN) instead of using local statistics
CREATE SCHEMA b_estimate;
IMPORT FOREIGN SCHEMA public LIMIT TO (pgbench_accounts) FROM SERVER ext2 INTO b_estimate;
ALTER FOREIGN TABLE b_estimate.pgbench_accounts OPTIONS (ADD use_remote_estimate 'true');
