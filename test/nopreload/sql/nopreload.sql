-- Without shared_preload_libraries, CREATE EXTENSION warns, and collections
-- still work.
SHOW shared_preload_libraries;
CREATE EXTENSION tscoll;
SELECT tscoll.create_collection('weather', 'timestamp', 'sensor');
SELECT name, options FROM tscoll.list_collections();
SELECT tscoll.drop_collection('weather');
