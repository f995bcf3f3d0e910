-- The original's query. {cutoff} is its '2019-02-01', moved so that the same share of
-- the table (53.6 % of the rows) lies before it at every scale.
SELECT COUNT(*) FROM foobar WHERE created_at > {cutoff} AND id % 2 = 0
