-- On the internal server: postgres_fdw, the two external servers, and one schema per
-- place a table can be; a pattern is a search_path, so every script names its tables
-- as 004's statements do. {password} is this run's password, never stored.
CREATE EXTENSION postgres_fdw;
CREATE SERVER ext1 FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host 'ext1', dbname 'bench');
CREATE SERVER ext2 FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host 'ext2', dbname 'bench');
CREATE USER MAPPING FOR CURRENT_USER SERVER ext1 OPTIONS (user 'postgres', password {password});
CREATE USER MAPPING FOR CURRENT_USER SERVER ext2 OPTIONS (user 'postgres', password {password});
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
