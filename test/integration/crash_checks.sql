-- crash.sh's checks after crash recovery; :logs is the clients' log
-- directory. Each check prints one row: its name and whether it holds.
\pset tuples_only on
\pset format unaligned
\pset fieldsep ' '
\set QUIET on

-- What the clients saw acknowledged (crash.sh gathers their logs).
CREATE TEMP TABLE acked (k int, j int, kind text);
\set f :logs '/acked.log'
COPY acked FROM :'f' (DELIMITER ' ');
CREATE TEMP TABLE batches (who text, what text, b int);
\set f :logs '/batches.log'
COPY batches FROM :'f' (DELIMITER ' ');
CREATE TEMP VIEW last_batch AS
SELECT who, what, coalesce(max(b), -1) AS b FROM batches GROUP BY who, what;

-- The collection, read once: every bucket must decode for this to work.
CREATE TEMP TABLE seen AS SELECT t, m, doc FROM c;
CREATE TEMP TABLE inserted AS
SELECT (doc->>'k')::int AS k, (doc->>'j')::int AS j, (doc->>'r')::int AS r, doc ? 'rb' AS rb
  FROM seen WHERE doc ? 'k';

SELECT 'crash_clients_had_commits_acknowledged', count(*) > 0 FROM acked WHERE kind = 'c';
SELECT 'crash_no_measurement_twice', count(*) = count(DISTINCT doc->'_id') FROM seen;
SELECT 'crash_inserts_no_duplicates', count(*) = count(DISTINCT (k, j, r)) FROM inserted;
SELECT 'crash_acknowledged_commits_present', NOT EXISTS (
    SELECT FROM acked a
     WHERE a.kind = 'c'
       AND (SELECT count(*) FROM inserted i WHERE i.k = a.k AND i.j = a.j) <> 5);
-- The one transaction in flight per client may have committed, whole.
SELECT 'crash_only_in_flight_unacknowledged', NOT EXISTS (
    SELECT FROM (SELECT k, j, count(*) AS n FROM inserted GROUP BY k, j) i
     WHERE NOT EXISTS (SELECT FROM acked a WHERE a.k = i.k AND a.j = i.j)
       AND (i.n <> 5 OR i.j <> (SELECT coalesce(max(j), -1) + 1 FROM acked a WHERE a.k = i.k)));
SELECT 'crash_rolled_back_absent', NOT EXISTS (SELECT FROM inserted WHERE rb);
SELECT 'crash_deletes_durable', NOT EXISTS (
    SELECT FROM seen
     WHERE m = '"doomed"' AND (doc->>'v')::int % 2 = 0
       AND (doc->>'b')::int <= (SELECT b FROM last_batch WHERE who = 'deleter' AND what = 'deleted'));
SELECT 'crash_delete_kept_the_rest', (
    SELECT count(*) = count(DISTINCT (doc->>'b', doc->>'v'))
           AND count(*) FILTER (WHERE (doc->>'v')::int % 2 = 1 AND (doc->>'b')::int <= l.b) = 10 * (l.b + 1)
           AND coalesce(max((doc->>'b')::int), -1) <= l.b + 1
      FROM seen, last_batch l
     WHERE m = '"doomed"' AND l.who = 'deleter' AND l.what = 'inserted'
     GROUP BY l.b);
SELECT 'crash_expiry_durable', NOT EXISTS (
    SELECT FROM seen
     WHERE doc ? 'ob'
       AND (doc->>'ob')::int <= (SELECT b FROM last_batch WHERE who = 'expirer' AND what = 'expired'));
SELECT 'crash_expired_rows_known', NOT EXISTS (
    SELECT FROM seen
     WHERE doc ? 'ob'
       AND (doc->>'ob')::int > (SELECT b FROM last_batch WHERE who = 'expirer' AND what = 'inserted') + 1);

-- A bucket's rows: its own and its tails (doc/ARCHITECTURE.md, "Tails").
CREATE TEMP VIEW bucket_rows AS
SELECT coalesce(control->'tail'->>'bucket', _id::text) AS bucket, *
  FROM "system.buckets.c";

-- Every bucket, tails included, obeys its limits; every row's control
-- matches its data.
SELECT 'crash_bucket_limits', coalesce(bool_and(n <= 1000 AND span < interval '1 hour'), true)
  FROM (SELECT sum((control->>'count')::int) AS n,
               max(tscoll._control_time(control, 'latest', 't')) - min(min_time) AS span
          FROM bucket_rows GROUP BY bucket) per_bucket;
SELECT 'crash_bucket_control_matches_data', coalesce(bool_and(ok), true) FROM (
    SELECT (b.control->>'count')::int = count(u.*)
           AND min(u.time) >= b.min_time AND max(u.time) <= b.max_time
           AND max(u.time) = tscoll._control_time(b.control, 'latest', 't') AS ok
      FROM "system.buckets.c" b,
           LATERAL tscoll._unpack(b._id, b.meta, b.data, 't', 'm') u
     GROUP BY b._id, b.control, b.min_time, b.max_time) per_bucket;

-- Inserts resume into the reopened buckets: one more measurement per client
-- series, just after its latest, goes into a bucket stored before the crash
-- with room for it, when the series has one. (Not necessarily the bucket
-- of the latest: an appender passes over a bucket a fold holds and opens
-- another, so a series may have two open buckets that start together.)
CREATE TEMP TABLE with_room AS
SELECT meta, bucket FROM bucket_rows WHERE meta::text LIKE '"client_%'
 GROUP BY meta, bucket HAVING sum((control->>'count')::int) < 1000;
INSERT INTO c (t, m, doc)
SELECT max(t) + interval '1 ms', m, '{"after": true}' FROM seen WHERE doc ? 'k' GROUP BY m;
SELECT 'crash_inserts_resume_in_reopened_buckets', count(*) = 4 AND bool_and(
       (b.meta, b.bucket) IN (SELECT meta, bucket FROM with_room)
       OR NOT EXISTS (SELECT FROM with_room w WHERE w.meta = b.meta))
  FROM bucket_rows b,
       LATERAL tscoll._unpack(b._id, b.meta, b.data, 't', 'm') u
 WHERE u.doc ? 'after';
