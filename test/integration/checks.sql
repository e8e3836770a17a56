-- Each check prints one row: its name and whether it holds.
\pset tuples_only on
\pset format unaligned
\pset fieldsep ' '
SELECT 'measurements_all_there', count(*) = :rows FROM c;
SELECT 'nothing_lost', NOT EXISTS (
    SELECT t, m, n FROM expected
    EXCEPT ALL SELECT t, m, (doc->>'n')::bigint FROM c);
SELECT 'nothing_duplicated_or_invented', NOT EXISTS (
    SELECT t, m, (doc->>'n')::bigint FROM c
    EXCEPT ALL SELECT t, m, n FROM expected);
-- A bucket's rows: its own and its tails (doc/ARCHITECTURE.md, "Tails"),
-- with their latest times (a tail's max_time is a bound, its start plus
-- the span).
CREATE TEMP VIEW buckets AS
SELECT sum((control->>'count')::int) AS n, min(min_time) AS min_time,
       max(tscoll._control_time(control, 'latest', 't')) AS latest, max(max_time) AS max_time
  FROM "system.buckets.c" GROUP BY coalesce(control->'tail'->>'bucket', _id::text);
SELECT 'bucket_count_limit', coalesce(max(n), 0) <= 100 FROM buckets;
SELECT 'bucket_span_limit', coalesce(bool_and(latest < min_time + interval '1 hour'
                                              AND max_time <= min_time + interval '1 hour'), true)
  FROM buckets;
SELECT 'bucket_control_matches_data', coalesce(bool_and(ok), true) FROM (
    SELECT (b.control->>'count')::int = count(u.*)
           AND min(u.time) >= b.min_time AND max(u.time) <= b.max_time
           AND max(u.time) = tscoll._control_time(b.control, 'latest', 't') AS ok
      FROM "system.buckets.c" b,
           LATERAL tscoll._unpack(b._id, b.meta, b.data, 't', 'm') u
     GROUP BY b._id, b.control, b.min_time, b.max_time) per_bucket;
SELECT 'counters_cluster_wide',
       (tscoll.collection_stats('c')->>'numMeasurementsCommitted')::bigint = :rows;
SELECT 'buckets_reasonably_full', avg(n) >= 10 FROM buckets;
-- Rollups kept while the writers ran (and refreshes raced them) equal the
-- aggregates of what was written: with the buckets noted since the last
-- refresh computed at read time, then once refreshed.
CREATE TEMP VIEW expected_seconds AS
SELECT date_bin('1 second', t, '1970-01-01 00:00+00') AS t, m, count(*) AS count,
       count(n) AS n_count, sum(n::float8) AS n_sum, min(n::float8) AS n_min, max(n::float8) AS n_max
  FROM expected GROUP BY 1, 2;
CREATE TEMP VIEW expected_minutes AS
SELECT date_bin('1 minute', t, '1970-01-01 00:00+00') AS t, count(*) AS count,
       count(n) AS n_count, sum(n::float8) AS n_sum, max(n::float8) AS n_max
  FROM expected GROUP BY 1;
SELECT 'rollups_equal_measurements',
       NOT EXISTS ((TABLE c_seconds EXCEPT ALL TABLE expected_seconds)
                   UNION ALL (TABLE expected_seconds EXCEPT ALL TABLE c_seconds))
   AND NOT EXISTS ((TABLE c_minutes EXCEPT ALL TABLE expected_minutes)
                   UNION ALL (TABLE expected_minutes EXCEPT ALL TABLE c_minutes));
SELECT tscoll.refresh_rollups() \g /dev/null
SELECT 'rollups_equal_measurements_refreshed',
       NOT EXISTS ((TABLE c_seconds EXCEPT ALL TABLE expected_seconds)
                   UNION ALL (TABLE expected_seconds EXCEPT ALL TABLE c_seconds))
   AND NOT EXISTS ((TABLE c_minutes EXCEPT ALL TABLE expected_minutes)
                   UNION ALL (TABLE expected_minutes EXCEPT ALL TABLE c_minutes))
   AND NOT EXISTS (SELECT FROM tscoll.rollup_changes);
-- Folded tails give their space back before VACUUM (src/pg/storage/reclaim.hpp):
-- 400 statements of 5 measurements for each of 10 series (tails, folded
-- as buckets of 100 fill) against the same rows in one statement. Without
-- the reclaim the first is about 10 times the second; with it, 1.4 times.
-- In a database of its own: a fold's rows are reclaimed once no snapshot
-- of the database can see them, and an autovacuum worker's ANALYZE of the
-- tables loaded above would hold one for a while.
CREATE DATABASE reclaim_it;
\c reclaim_it
CREATE EXTENSION tscoll;
SET tscoll.bucket_max_count = 100;
SELECT tscoll.create_collection('folded', 't', 'm') \g /dev/null
SELECT tscoll.create_collection('bulk', 't', 'm') \g /dev/null
CREATE TEMP VIEW series_rows AS
SELECT s, i, timestamptz '2024-01-01 00:00:00+00' + (i * 10 + s) * interval '1 s' AS t,
       jsonb_build_object('sensor', s, 'site', repeat('x', 150)) AS m,
       jsonb_build_object('v', i * 7 % 1000, 'w', s * 1.5) AS doc
  FROM generate_series(0, 9) s, generate_series(0, 1999) i;
INSERT INTO bulk (t, m, doc) SELECT t, m, doc FROM series_rows ORDER BY i, s \g /dev/null
SELECT format('INSERT INTO folded (t, m, doc) SELECT t, m, doc FROM series_rows '
              'WHERE i / 5 = %s ORDER BY i, s', k)
  FROM generate_series(0, 399) k \gexec
SELECT tscoll.fold_tails('folded') \g /dev/null
SELECT 'folded_tails_space_reused',
       pg_total_relation_size('"system.buckets.folded"')
         < 3 * pg_total_relation_size('"system.buckets.bulk"');
\c tscoll_it
