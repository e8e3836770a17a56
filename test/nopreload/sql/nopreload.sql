-- Without shared_preload_libraries, CREATE EXTENSION warns, and collections
-- still work.
SHOW shared_preload_libraries;
CREATE EXTENSION tscoll;
SELECT tscoll.create_collection('weather', 'timestamp', 'sensor');
SELECT name, options FROM tscoll.list_collections();
-- The session keeps its own bucket catalog.
INSERT INTO weather ("timestamp", sensor, doc) VALUES ('2024-01-01 00:00:00+00', '1', '{}'),
                                                     ('2024-01-01 00:00:01+00', '1', '{}');
SELECT tscoll.catalog_stats() - 'memoryUsage';
SELECT tscoll.collection_stats('weather')->'numMeasurementsCommitted' AS committed;
-- UPDATE and DELETE are translated by hooks that a session has once tscoll
-- is loaded: as the first statement of a session, one asks to be run again.
\c
DELETE FROM weather WHERE sensor = '1' AND doc->>'x' IS NULL;
DELETE FROM weather WHERE sensor = '1' AND doc->>'x' IS NULL;
SELECT count(*) FROM weather;
SELECT tscoll.drop_collection('weather');
