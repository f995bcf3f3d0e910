-- The original's table: hash-partitioned on id into :partitions partitions, each unlogged as
-- in the original. The parent holds no rows; it is a plain table here because 18 no longer
-- accepts UNLOGGED on a partitioned table (:partitions is replaced before it runs). One
-- statement, so that it runs as one.
DO $$
BEGIN
  CREATE TABLE p (id int PRIMARY KEY, info text, crt_time timestamp) PARTITION BY HASH (id);
  FOR i IN 0 .. :partitions - 1 LOOP
    EXECUTE format('CREATE UNLOGGED TABLE p%s PARTITION OF p FOR VALUES WITH (MODULUS %s, REMAINDER %s)',
                   i, :partitions, i);
  END LOOP;
END $$;
