-- How many partitions of p a single-row INSERT locks: counted in pg_locks inside the
-- INSERT's own transaction (the function's), before the transaction ends and drops them.
CREATE FUNCTION partitions_locked_by_insert(k int) RETURNS int LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO p VALUES (k, 'lock count', now()) ON CONFLICT (id) DO NOTHING;
  RETURN (SELECT count(*) FROM pg_locks l JOIN pg_inherits i ON i.inhrelid = l.relation
          WHERE l.locktype = 'relation' AND l.pid = pg_backend_pid() AND i.inhparent = 'p'::regclass);
END $$;
