-- The original's table: 900-byte rows, created_at advancing one second per row, so the
-- rows lie on the heap in created_at order (8 rows per 8 kB page) and a BRIN index fits.
-- The original loaded a CSV with \copy; generate_series makes the same rows.
CREATE TABLE foobar(id serial primary key, created_at timestamp, data text);
INSERT INTO foobar (created_at, data)
  SELECT timestamp '2019-01-01 00:00:01' + (i - 1) * interval '1 second', repeat('A', 900)
  FROM generate_series(1, {rows}) AS i;
CREATE INDEX foobar_created_at_brin ON foobar USING brin(created_at);
