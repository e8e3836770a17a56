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
-- A bucket's rows: its own and its tails (doc/ARCHITECTURE.md, "Tails").
CREATE TEMP VIEW buckets AS
SELECT sum((control->>'count')::int) AS n, min(min_time) AS min_time, max(max_time) AS max_time
  FROM "system.buckets.c" GROUP BY coalesce(control->'tail'->>'bucket', _id::text);
SELECT 'bucket_count_limit', coalesce(max(n), 0) <= 100 FROM buckets;
SELECT 'bucket_span_limit', coalesce(bool_and(max_time < min_time + interval '1 hour'), true)
  FROM buckets;
SELECT 'bucket_control_matches_data', coalesce(bool_and(ok), true) FROM (
    SELECT (b.control->>'count')::int = count(u.*)
           AND min(u.time) >= b.min_time AND max(u.time) = b.max_time AS ok
      FROM "system.buckets.c" b,
           LATERAL tscoll._unpack(b._id, b.meta, b.data, 't', 'm') u
     GROUP BY b._id, b.control, b.min_time, b.max_time) per_bucket;
SELECT 'counters_cluster_wide',
       (tscoll.collection_stats('c')->>'numMeasurementsCommitted')::bigint = :rows;
SELECT 'buckets_reasonably_full', avg(n) >= 10 FROM buckets;
