-- The demo database of scripts/start.sh. Idempotent.
CREATE EXTENSION IF NOT EXISTS tscoll;
SELECT tscoll.create_collection('demo', 'timestamp', 'sensor', granularity => 'minutes');
\echo
\echo 'Collections:'
SELECT name, bucket_table, options FROM tscoll.list_collections();
\echo 'The bucket table:'
\d+ "system.buckets.demo"
