-- Packed decimals (doc/BUCKET_FORMAT.md, codec 6) through SQL: readings
-- kept to a few decimals whose range is narrower than their steps, dense
-- ("v", "n"), sparse ("w") and constant ("k", no bits at all), read whole,
-- through measurement filters (decoded only for the rows that pass) and
-- through aggregation in buckets, give what the same documents in a plain
-- table give.
\i test/setup.psql
SET TimeZone = 'UTC';
SELECT tscoll.create_collection('pk', 't', 'm') IS NOT NULL AS created;
CREATE TABLE pk_plain AS
SELECT '2024-01-01'::timestamptz + i * interval '7 second' AS t,
       jsonb_build_object('h', i % 3) AS m,
       jsonb_strip_nulls(jsonb_build_object(
           'v', round((50 + 40 * sin(i / 17.0))::numeric, 2),
           'w', CASE WHEN i % 5 <> 0 THEN round((i * 7919 % 1000)::numeric / 8, 3) END,
           'k', 42.5,
           'n', round(-(i * 104729 % 9973)::numeric / 4, 2))) AS doc
  FROM generate_series(1, 20000) i;
INSERT INTO pk (t, m, doc) SELECT * FROM pk_plain;
SELECT count(*) AS buckets FROM "system.buckets.pk";
-- Packed, the data takes about 8.8 bytes a measurement (before any pglz):
-- none for the time (a regular interval), about 2 for _id, 1.4 for v (its
-- steps, 11 bits), 2.6 for w (17 bits, 4 in 5, and its positions), 2.3
-- for n (18 bits), none for k. Varint deltas would take about 11.
SELECT sum(octet_length(data)) / 20000.0 < 9.2 AS packed FROM "system.buckets.pk";
-- Whole documents, less the fields the view adds.
SELECT count(*) AS differ FROM (
    (SELECT t, m, doc - '_id' - 't' - 'm' FROM pk EXCEPT ALL SELECT * FROM pk_plain)
    UNION ALL
    (SELECT * FROM pk_plain EXCEPT ALL SELECT t, m, doc - '_id' - 't' - 'm' FROM pk)) x;
-- A filter on one field, the others read for the rows that pass.
CREATE FUNCTION pk_filtered(source text, op text, bound float8)
RETURNS TABLE (t timestamptz, h text, v float8, w float8, k float8, n float8) LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY EXECUTE format(
        'SELECT t, m->>''h'', (doc->>''v'')::float8, (doc->>''w'')::float8,
                (doc->>''k'')::float8, (doc->>''n'')::float8
           FROM %s WHERE (doc->>''v'')::float8 %s %s', source, op, bound);
END $$;
SELECT op, bound, count(*) AS rows,
       (SELECT count(*) FROM (
           (SELECT * FROM pk_filtered('pk', op, bound) EXCEPT ALL
            SELECT * FROM pk_filtered('pk_plain', op, bound))
           UNION ALL
           (SELECT * FROM pk_filtered('pk_plain', op, bound) EXCEPT ALL
            SELECT * FROM pk_filtered('pk', op, bound))) x) AS differ
  FROM (VALUES ('>', 85), ('<=', 10.5), ('=', 52.35), ('<', 12)) AS c(op, bound),
       LATERAL pk_filtered('pk_plain', op, bound)
 GROUP BY op, bound ORDER BY op, bound;
EXPLAIN (COSTS OFF)
SELECT t, (doc->>'w')::float8 FROM pk WHERE (doc->>'v')::float8 > 85;
-- Aggregates per minute and series, computed in the buckets.
CREATE FUNCTION pk_groups(source text)
RETURNS TABLE (minute timestamptz, h text, v float8, w float8, k float8, c bigint, n float8)
LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY EXECUTE format(
        'SELECT date_trunc(''minute'', t), m->>''h'', max((doc->>''v'')::float8),
                min((doc->>''w'')::float8), sum((doc->>''k'')::float8),
                count((doc->>''w'')::float8), min((doc->>''n'')::float8)
           FROM %s GROUP BY 1, 2', source);
END $$;
SELECT (SELECT count(*) FROM pk_groups('pk_plain')) AS groups, count(*) AS differ FROM (
    (SELECT * FROM pk_groups('pk') EXCEPT ALL SELECT * FROM pk_groups('pk_plain'))
    UNION ALL
    (SELECT * FROM pk_groups('pk_plain') EXCEPT ALL SELECT * FROM pk_groups('pk'))) x;
EXPLAIN (COSTS OFF)
SELECT date_trunc('minute', t), m->>'h', max((doc->>'v')::float8) FROM pk GROUP BY 1, 2;
DROP FUNCTION pk_filtered, pk_groups;
DROP TABLE pk_plain;
SELECT tscoll.drop_collection('pk');

-- Numbers in whole documents read back as jsonb reads their text: plain
-- decimals are built from their digits and scale, the others (more than 18
-- digits, exponents) through numeric_in.
SELECT tscoll.create_collection('nums', 't') IS NOT NULL AS created;
CREATE TABLE nums_plain AS
SELECT '2024-01-01'::timestamptz + i * interval '1 second' AS t, v::jsonb AS v
  FROM unnest(ARRAY['0', '-0', '0.5', '-0.001', '7', '-12.25', '99.99', '0.000001',
                    '123456789012345678', '-123456789012345678', '1234567890123456789',
                    '12345678901234567.8', '1.5e3', '-2E-7', '3.14159265358979']) WITH ORDINALITY AS x(v, i);
INSERT INTO nums (t, doc) SELECT t, jsonb_build_object('v', v) FROM nums_plain;
SELECT p.v AS sent, s.doc->'v' AS read, scale((s.doc->>'v')::numeric) AS scale,
       (s.doc->'v')::text = p.v::text AS same_text
  FROM (SELECT * FROM nums) s JOIN nums_plain p USING (t) ORDER BY t;
