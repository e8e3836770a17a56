-- tscoll 0.1.0 -> 0.2.0. Adds typed fields (the catalog's `fields` column
-- and the functions that read them), the view rules that update meta and
-- delete buckets without the planner's translation, tail folding, time
-- bins and meta spellings for the planner, and pins every function's
-- search_path. Buckets keep their format: 0.2.0 reads every format 0.1.0
-- wrote, and writes new buckets with its own codecs.

\echo Use "ALTER EXTENSION tscoll UPDATE TO '0.2.0'" to load this file. \quit

ALTER TABLE tscoll.collections
    ADD COLUMN fields jsonb NOT NULL DEFAULT '{}';  -- typed fields: {"<name>": "<type>"}, view columns after doc

-- Functions whose arguments changed: their callers are all replaced below.
DROP FUNCTION tscoll._remove_measurements(tscoll.objectid, timestamptz, bytea, bigint[], text);
DROP FUNCTION tscoll._split_name(text);
DROP FUNCTION tscoll._collection(text);

-- The same, building documents only for the measurements that may pass the
-- query's conditions (doc->>f)::float8 <op> bound: filters are "<btree
-- strategy 1-5><field>", with their bounds, read from the fields' columns
-- alone. The query still applies its conditions.
CREATE OR REPLACE FUNCTION tscoll._unpack(_id tscoll.objectid, meta jsonb, data bytea, time_field text,
                               meta_field text, lower timestamptz, lower_strict boolean,
                               upper timestamptz, upper_strict boolean,
                               filters text[], bounds float8[])
    RETURNS TABLE ("time" timestamptz, doc jsonb)
    AS 'MODULE_PATHNAME', 'tscoll_unpack' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 500;

-- The same grouped by date_bin(stride, time, origin) (unit NULL): for
-- date_bin, TimescaleDB's time_bucket, and groupings that bin time alike
-- (floor(extract(epoch from time) / n)), whose expression the query then
-- applies to each group's start.
CREATE OR REPLACE FUNCTION tscoll._unpack_groups(_id tscoll.objectid, meta jsonb, data bytea,
                                      time_field text, meta_field text, unit text,
                                      aggregates text[], lower timestamptz,
                                      lower_strict boolean, upper timestamptz,
                                      upper_strict boolean, stride interval,
                                      origin timestamptz)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME', 'tscoll_unpack_groups' LANGUAGE C STABLE PARALLEL SAFE ROWS 10;

-- The same grouped by date_trunc(unit, time, zone) (stride and origin NULL).
CREATE OR REPLACE FUNCTION tscoll._unpack_groups(_id tscoll.objectid, meta jsonb, data bytea,
                                      time_field text, meta_field text, unit text,
                                      aggregates text[], lower timestamptz,
                                      lower_strict boolean, upper timestamptz,
                                      upper_strict boolean, stride interval,
                                      origin timestamptz, zone text)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME', 'tscoll_unpack_groups' LANGUAGE C STABLE PARALLEL SAFE ROWS 10;

-- TimescaleDB's time_bucket for strides without months or years:
-- date_bin from `origin`, by default Monday 2000-01-03 00:00 UTC as in
-- TimescaleDB, so that its queries run unchanged (with tscoll on the
-- search_path). Aggregation in buckets reads it as date_bin.
CREATE OR REPLACE FUNCTION tscoll.time_bucket(bucket_width interval, ts timestamptz) RETURNS timestamptz
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN pg_catalog.date_bin(bucket_width, ts, '2000-01-03 00:00:00+00'::timestamptz);

CREATE OR REPLACE FUNCTION tscoll.time_bucket(bucket_width interval, ts timestamptz, origin timestamptz)
    RETURNS timestamptz LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN pg_catalog.date_bin(bucket_width, ts, origin);

-- One row per bucket, its latest time: what the view unpacks for a query
-- whose only aggregate is max(time) (control.max is exact). Not STRICT, so
-- that PostgreSQL inlines it: the view then reads the bucket rows alone,
-- with no call per bucket (max_time is never NULL).
CREATE OR REPLACE FUNCTION tscoll._bucket_latest(max_time timestamptz)
    RETURNS TABLE ("time" timestamptz, doc jsonb)
    LANGUAGE sql IMMUTABLE PARALLEL SAFE ROWS 1
    AS 'SELECT max_time, NULL::pg_catalog.jsonb';

-- The jsonb values whose ->> text is `printed`: the planner compares a meta
-- subfield with them (meta->'k' = ANY(...)), which an index on the subfield
-- serves, where the query compares meta->>'k' with a parameter. Parallel
-- unsafe: an object's text is parsed in a subtransaction.
CREATE OR REPLACE FUNCTION tscoll._jsonb_spellings(printed text) RETURNS jsonb[]
    AS 'MODULE_PATHNAME', 'tscoll_jsonb_spellings' LANGUAGE C IMMUTABLE STRICT PARALLEL UNSAFE;

CREATE OR REPLACE FUNCTION tscoll._jsonb_spellings(printed text[]) RETURNS jsonb[]
    AS 'MODULE_PATHNAME', 'tscoll_jsonb_spellings_of_array'
    LANGUAGE C IMMUTABLE STRICT PARALLEL UNSAFE;

-- UPDATE and DELETE through a view are translated at parse analysis into
-- statements on the bucket table (src/pg/dml/modify.cpp). A general DELETE
-- rewrites a partly matching bucket without the matching measurements
-- (numbered from 1 in unpacking order), a tail row as a tail row
-- (`stored_control`); _placeholder marks where the translation puts the
-- conditions and is never called.
CREATE OR REPLACE FUNCTION tscoll._remove_measurements(_id tscoll.objectid, min_time timestamptz,
                                            stored bytea, positions bigint[], time_field text,
                                            stored_control jsonb,
                                            OUT control jsonb, OUT data bytea)
    AS 'MODULE_PATHNAME', 'tscoll_remove_measurements' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION tscoll._placeholder(integer) RETURNS boolean
    LANGUAGE sql IMMUTABLE AS 'SELECT NULL::pg_catalog.bool';

-- What the view's rules call when a statement reached them untranslated
-- (parsed before tscoll was loaded in the session): src/pg/dml/rule_fallback.cpp.
-- Costly, so that the planner checks the rules' other conditions first.
CREATE OR REPLACE FUNCTION tscoll._rule_match(view regclass, bucket_table regclass, _id tscoll.objectid,
                                   ctid tid, bucket_meta jsonb, min_time timestamptz,
                                   max_time timestamptz, data bytea, "time" timestamptz,
                                   meta jsonb, doc jsonb, new_meta jsonb, only_meta boolean)
    RETURNS boolean AS 'MODULE_PATHNAME', 'tscoll_rule_match' LANGUAGE C VOLATILE COST 100000;

-- An UPDATE of a collection without a meta field, untranslated: immutable
-- so that it raises while the statement is planned, whatever it would match.
CREATE OR REPLACE FUNCTION tscoll._untranslated(collection regclass, command text) RETURNS boolean
    AS 'MODULE_PATHNAME', 'tscoll_untranslated' LANGUAGE C IMMUTABLE STRICT;

-- The same for RETURNING, which the rules cannot compute: the rules'
-- RETURNING lists call it (only a statement with RETURNING uses them).
CREATE OR REPLACE FUNCTION tscoll._untranslated_returning(collection regclass, command text)
    RETURNS timestamptz AS 'MODULE_PATHNAME', 'tscoll_untranslated' LANGUAGE C IMMUTABLE STRICT;

-- The same for a column of the type of `type` (not strict: called with a
-- NULL of that type), so that every column of a rule's RETURNING raises.
CREATE OR REPLACE FUNCTION tscoll._untranslated_returning(collection regclass, command text, type anyelement)
    RETURNS anyelement AS 'MODULE_PATHNAME', 'tscoll_untranslated' LANGUAGE C IMMUTABLE;

-- Typed fields (doc/REFERENCE.md, Typed fields): a view column of type T
-- for field f is tscoll._as_T(doc -> 'f'), NULL for a value of another
-- type. The planner reads such a column straight from the field's column
-- data, as it reads (doc->>'f')::float8.
CREATE OR REPLACE FUNCTION tscoll._as_float8(value jsonb) RETURNS float8
    AS 'MODULE_PATHNAME', 'tscoll_as_float8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION tscoll._as_int8(value jsonb) RETURNS int8
    AS 'MODULE_PATHNAME', 'tscoll_as_int8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION tscoll._as_int4(value jsonb) RETURNS int4
    AS 'MODULE_PATHNAME', 'tscoll_as_int4' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION tscoll._as_text(value jsonb) RETURNS text
    AS 'MODULE_PATHNAME', 'tscoll_as_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION tscoll._as_bool(value jsonb) RETURNS boolean
    AS 'MODULE_PATHNAME', 'tscoll_as_bool' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION tscoll._as_timestamptz(value jsonb) RETURNS timestamptz
    AS 'MODULE_PATHNAME', 'tscoll_as_timestamptz' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- The view's column for typed field `name` of `type`, over unpacked m.
CREATE OR REPLACE FUNCTION tscoll._typed_column(name text, type text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS
$$
SELECT CASE WHEN type = 'jsonb' THEN format('m.doc -> %L AS %I', name, name)
            ELSE format('tscoll._as_%s(m.doc -> %L) AS %I', type, name, name) END
$$;

-- A catalog row's options in MongoDB's listCollections (stored) shape:
-- granularity omitted for fixed bucketing, bucketRoundingSeconds omitted
-- while a granularity is set.
CREATE OR REPLACE FUNCTION tscoll._listing_options(c tscoll.collections) RETURNS jsonb
    LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS
$$
SELECT jsonb_strip_nulls(jsonb_build_object(
    'timeseries', jsonb_build_object(
        'timeField', c.time_field,
        'metaField', c.meta_field,
        'granularity', c.granularity,
        'bucketMaxSpanSeconds', c.bucket_max_span_seconds,
        'bucketRoundingSeconds',
            CASE WHEN c.granularity IS NULL THEN c.bucket_rounding_seconds END),
    'expireAfterSeconds', c.expire_after_seconds,
    'fields', NULLIF(c.fields, '{}')))
$$;

-- The bucket table's name for a view name.
CREATE OR REPLACE FUNCTION tscoll._bucket_table_name(view_name name) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp
    AS $$ SELECT 'system.buckets.' || view_name $$;

-- Splits 'weather' or 'myschema.weather' (quoting as in SQL) into schema and
-- name; an unqualified name goes to creation_schema, the schema CREATE TABLE
-- would use in the caller's search_path.
CREATE OR REPLACE FUNCTION tscoll._split_name(name text, creation_schema text,
                                   OUT schema_name text, OUT rel_name text)
    LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS
$$
DECLARE
    parts text[] := parse_ident(name);
BEGIN
    IF array_length(parts, 1) = 1 THEN
        schema_name := creation_schema;
        IF schema_name IS NULL THEN
            RAISE EXCEPTION 'no schema has been selected to create in'
                USING ERRCODE = '3F000';
        END IF;
        rel_name := parts[1];
    ELSIF array_length(parts, 1) = 2 THEN
        schema_name := parts[1];
        rel_name := parts[2];
    ELSE
        RAISE EXCEPTION 'invalid collection name: "%"', name
            USING ERRCODE = '42602', HINT = 'Write "name" or "schema.name".';
    END IF;
END
$$;

-- A view rule's RETURNING list: a column for each of the view's, each of
-- which raises (the rules cannot return measurements).
CREATE OR REPLACE FUNCTION tscoll._rule_returning(view text, command text, meta_field text, fields jsonb,
                                       typed text[]) RETURNS text
    LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS
$$
SELECT format('tscoll._untranslated_returning(%L::regclass, %L)', view, command)
    || CASE WHEN meta_field IS NULL THEN ''
            ELSE format(', tscoll._untranslated_returning(%L::regclass, %L, NULL::jsonb)',
                        view, command) END
    || format(', tscoll._untranslated_returning(%L::regclass, %L, NULL::jsonb)', view, command)
    || coalesce((SELECT string_agg(format(', tscoll._untranslated_returning(%L::regclass, %L, NULL::%s)',
                                          view, command, fields ->> t.name), '' ORDER BY t.n)
                   FROM unnest(typed) WITH ORDINALITY t(name, n)), '')
$$;

-- Creates (or, with `replace`, redefines with more typed fields) a
-- collection's view and its rules: the time, meta and doc columns, then
-- the typed fields `typed` (types in `fields`) in that order.
CREATE OR REPLACE FUNCTION tscoll._define_view(view text, buckets text, time_field text, meta_field text,
                                    fields jsonb, typed text[], replace boolean) RETURNS void
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS
$$
DECLARE
    typed_columns text := (SELECT string_agg(', ' || tscoll._typed_column(t.name, fields ->> t.name), ''
                                             ORDER BY t.n)
                             FROM unnest(typed) WITH ORDINALITY t(name, n));
BEGIN
    EXECUTE pg_catalog.format(
        'CREATE %s VIEW %s AS SELECT m."time" AS %I, %s m.doc%s
           FROM %s b, LATERAL tscoll._unpack(b._id, b.meta, b.data, %L, %L) m',
        CASE WHEN replace THEN 'OR REPLACE' ELSE '' END, view, time_field,
        CASE WHEN meta_field IS NULL THEN ''
             ELSE pg_catalog.format('b.meta AS %I,', meta_field) END,
        coalesce(typed_columns, ''), buckets, time_field, meta_field);
    PERFORM tscoll._define_rules(view, buckets, time_field, meta_field, fields, typed);
END
$$;

-- A collection's view rules, (re)defined for the view's columns.
CREATE OR REPLACE FUNCTION tscoll._define_rules(view text, buckets text, time_field text, meta_field text,
                                     fields jsonb, typed text[]) RETURNS void
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS
$$
DECLARE
    typed_unchanged text := (SELECT string_agg(format(' AND NEW.%1$I IS NOT DISTINCT FROM OLD.%1$I',
                                                      t.name), '' ORDER BY t.n)
                               FROM unnest(typed) WITH ORDINALITY t(name, n));
    same_series text;
    in_bucket text;
BEGIN
    -- Without the translation (src/pg/dml/rule_fallback.cpp): each bucket paired
    -- with the matched measurements of its series and time range. A rule's
    -- RETURNING list has a column for each of the view's.
    same_series := CASE WHEN meta_field IS NULL THEN ''
                        ELSE format('coalesce(b.meta::text, '''') = coalesce(OLD.%I::text, '''') AND ',
                                    meta_field) END;
    in_bucket := format('OLD.%1$I >= b.min_time AND OLD.%1$I <= b.max_time', time_field);
    IF meta_field IS NULL THEN
        EXECUTE format(
            'CREATE OR REPLACE RULE untranslated_update AS ON UPDATE TO %s
               DO INSTEAD SELECT tscoll._untranslated(%L::regclass, ''UPDATE'')', view, view);
    ELSE
        EXECUTE format(
            'CREATE OR REPLACE RULE update_meta AS ON UPDATE TO %1$s DO INSTEAD
               UPDATE %2$s b SET meta = NEW.%3$I WHERE %5$s%6$s
                  AND tscoll._rule_match(%1$L::regclass, %2$L::regclass, b._id, b.ctid, b.meta,
                                         b.min_time, b.max_time, b.data, OLD.%4$I, OLD.%3$I,
                                         OLD.doc, NEW.%3$I,
                                         NEW.%4$I IS NOT DISTINCT FROM OLD.%4$I
                                         AND NEW.doc IS NOT DISTINCT FROM OLD.doc%8$s)
               RETURNING %7$s',
            view, buckets, meta_field, time_field, same_series, in_bucket,
            tscoll._rule_returning(view, 'UPDATE', meta_field, fields, typed),
            coalesce(typed_unchanged, ''));
    END IF;
    EXECUTE format(
        'CREATE OR REPLACE RULE delete_buckets AS ON DELETE TO %1$s DO INSTEAD
           DELETE FROM %2$s b WHERE %4$s%5$s
              AND tscoll._rule_match(%1$L::regclass, %2$L::regclass, b._id, b.ctid, b.meta,
                                     b.min_time, b.max_time, b.data, OLD.%3$I, %7$s,
                                     OLD.doc, NULL, true)
           RETURNING %6$s',
        view, buckets, time_field, same_series, in_bucket,
        tscoll._rule_returning(view, 'DELETE', meta_field, fields, typed),
        CASE WHEN meta_field IS NULL THEN 'NULL' ELSE format('OLD.%I', meta_field) END);
END
$$;

-- Creates the bucket table, its default index, the view and the catalog
-- row of a new collection. `o` is the output of _validate_options.
CREATE OR REPLACE FUNCTION tscoll._create_collection_objects(
    schema_name text, rel_name text, o jsonb) RETURNS regclass
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS
$$
DECLARE
    time_field text := o ->> 'timeField';
    meta_field text := o ->> 'metaField';
    buckets text := pg_catalog.format('%I.%I', schema_name, tscoll._bucket_table_name(rel_name));
    view text := pg_catalog.format('%I.%I', schema_name, rel_name);
    c tscoll.collections;
BEGIN
    -- min_time/max_time are derived from control so that indexes and
    -- pruning can use them; they can never disagree with it. Pages keep a
    -- tenth free, so that a tail written again in place (an append) stays
    -- on its page, a HOT update.
    EXECUTE pg_catalog.format(
        'CREATE TABLE %s (
            _id tscoll.objectid NOT NULL PRIMARY KEY,
            meta jsonb,
            control jsonb NOT NULL,
            data bytea NOT NULL,
            min_time timestamptz NOT NULL
                GENERATED ALWAYS AS (tscoll._control_time(control, ''min'', %L)) STORED,
            max_time timestamptz NOT NULL
                GENERATED ALWAYS AS (tscoll._control_time(control, ''max'', %L)) STORED
        ) USING tscoll_buckets WITH (fillfactor = 90)', buckets, time_field, time_field);
    EXECUTE pg_catalog.format(
        'COMMENT ON TABLE %s IS %L', buckets,
        pg_catalog.format('buckets of the time-series collection %s', view));

    PERFORM tscoll._define_view(view, buckets, time_field, meta_field, o -> 'fields',
                                ARRAY(SELECT jsonb_object_keys(o -> 'fields')), false);
    EXECUTE pg_catalog.format(
        'CREATE TRIGGER gather_measurements INSTEAD OF INSERT ON %s
           FOR EACH ROW EXECUTE FUNCTION tscoll._insert_measurement()', view);
    EXECUTE pg_catalog.format(
        'CREATE TRIGGER write_buckets AFTER INSERT ON %s
           FOR EACH STATEMENT EXECUTE FUNCTION tscoll._write_buckets()', view);
    EXECUTE pg_catalog.format(
        'COMMENT ON VIEW %s IS %L', view,
        pg_catalog.format('time-series collection (buckets in %s)', buckets));

    INSERT INTO tscoll.collections (view, bucket_table, time_field, meta_field, granularity,
                                    bucket_max_span_seconds, bucket_rounding_seconds,
                                    expire_after_seconds, fields)
    VALUES (view::regclass, buckets::regclass, time_field, meta_field, o ->> 'granularity',
            (o ->> 'bucketMaxSpanSeconds')::integer, (o ->> 'bucketRoundingSeconds')::integer,
            (o ->> 'expireAfterSeconds')::bigint, o -> 'fields')
    RETURNING * INTO c;
    IF meta_field IS NOT NULL THEN
        -- MongoDB's default index: meta, then time.
        PERFORM tscoll._add_index(c, pg_catalog.format('{%s: 1, %s: 1}', pg_catalog.to_json(meta_field),
                                                       pg_catalog.to_json(time_field))::json, '{}');
    END IF;
    RETURN view::regclass;
END
$$;

-- Whether a catalog row holds exactly the validated options `o`.
CREATE OR REPLACE FUNCTION tscoll._same_options(c tscoll.collections, o jsonb) RETURNS boolean
    LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS
$$
SELECT c.time_field = o ->> 'timeField'
   AND c.meta_field IS NOT DISTINCT FROM o ->> 'metaField'
   AND c.granularity IS NOT DISTINCT FROM o ->> 'granularity'
   AND c.bucket_max_span_seconds = (o ->> 'bucketMaxSpanSeconds')::integer
   AND c.bucket_rounding_seconds = (o ->> 'bucketRoundingSeconds')::integer
   AND c.expire_after_seconds IS NOT DISTINCT FROM (o ->> 'expireAfterSeconds')::bigint
   AND c.fields = o -> 'fields'
$$;

-- tscoll's functions resolve names in pg_catalog and tscoll alone (SET
-- search_path). The entry points that take a relation name are plain SQL
-- around them: they resolve that name in the caller's search_path, with
-- nothing but schema-qualified calls, and pass on the result.
CREATE OR REPLACE FUNCTION tscoll._create_collection(name text, options jsonb, creation_schema text)
    RETURNS regclass
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS
$$
DECLARE
    o jsonb;
    target record;
    existing regclass;
    c tscoll.collections;
BEGIN
    IF name IS NULL OR options IS NULL THEN
        RAISE EXCEPTION 'invalid time-series option: the collection name and the options must not be NULL'
            USING ERRCODE = '22023';
    END IF;
    o := tscoll._validate_options(options);
    SELECT * INTO target FROM tscoll._split_name(name, creation_schema);
    IF target.schema_name = 'tscoll' THEN
        RAISE EXCEPTION 'cannot create a time-series collection in the schema of the tscoll extension'
            USING ERRCODE = '42501',
                  HINT = 'Name another schema, e.g. ''public.' || target.rel_name || '''.';
    END IF;

    IF pg_catalog.octet_length(tscoll._bucket_table_name(target.rel_name)) > 63 THEN
        RAISE EXCEPTION 'collection name "%" is too long', target.rel_name
            USING ERRCODE = '42622',
                  DETAIL = pg_catalog.format('The bucket table name "%s" would exceed 63 bytes.',
                                             tscoll._bucket_table_name(target.rel_name)),
                  HINT = 'Use a collection name of at most 48 bytes.';
    END IF;

    existing := pg_catalog.to_regclass(pg_catalog.format('%I.%I', target.schema_name, target.rel_name));
    IF existing IS NOT NULL THEN
        SELECT * INTO c FROM tscoll.collections WHERE view = existing;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'relation "%" already exists and is not a time-series collection',
                            target.rel_name
                USING ERRCODE = '42P07';
        END IF;
        IF NOT tscoll._same_options(c, o) THEN
            RAISE EXCEPTION 'time-series collection "%" already exists with different options',
                            target.rel_name
                USING ERRCODE = '42P07',
                      DETAIL = pg_catalog.format('Existing options: %s.', tscoll._listing_options(c));
        END IF;
        RETURN existing;
    END IF;
    existing := pg_catalog.to_regclass(pg_catalog.format(
        '%I.%I', target.schema_name, tscoll._bucket_table_name(target.rel_name)));
    IF existing IS NOT NULL THEN
        RAISE EXCEPTION 'relation "%" already exists', tscoll._bucket_table_name(target.rel_name)
            USING ERRCODE = '42P07',
                  HINT = 'A collection''s bucket table is named "system.buckets.<collection>".';
    END IF;

    RETURN tscoll._create_collection_objects(target.schema_name, target.rel_name, o);
END
$$;

CREATE OR REPLACE FUNCTION tscoll.create_collection_from_options(name text, options jsonb)
    RETURNS regclass LANGUAGE sql AS
$$ SELECT tscoll._create_collection(name, options, pg_catalog.current_schema()) $$;

-- create_collection's options in MongoDB's create-command shape.
CREATE OR REPLACE FUNCTION tscoll._create_options(
    time_field text, meta_field text, granularity text, bucket_max_span_seconds integer,
    bucket_rounding_seconds integer, expire_after_seconds bigint, fields jsonb) RETURNS jsonb
    LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS
$$
BEGIN
    RETURN jsonb_build_object('timeseries', jsonb_strip_nulls(
            jsonb_build_object(
                'timeField', time_field,
                'metaField', meta_field,
                'granularity', granularity,
                'bucketMaxSpanSeconds', bucket_max_span_seconds,
                'bucketRoundingSeconds', bucket_rounding_seconds)))
        || CASE WHEN expire_after_seconds IS NULL THEN '{}'::jsonb
                ELSE jsonb_build_object('expireAfterSeconds', expire_after_seconds) END
        || CASE WHEN fields IS NULL THEN '{}'::jsonb
                ELSE jsonb_build_object('fields', fields) END;
END
$$;

CREATE OR REPLACE FUNCTION tscoll.create_collection(
    name text,
    time_field text,
    meta_field text DEFAULT NULL,
    granularity text DEFAULT NULL,
    bucket_max_span_seconds integer DEFAULT NULL,
    bucket_rounding_seconds integer DEFAULT NULL,
    expire_after_seconds bigint DEFAULT NULL,
    fields jsonb DEFAULT NULL) RETURNS regclass
    LANGUAGE sql AS
$$
SELECT tscoll._create_collection(
    name,
    tscoll._create_options(time_field, meta_field, granularity, bucket_max_span_seconds,
                           bucket_rounding_seconds, expire_after_seconds, fields),
    pg_catalog.current_schema())
$$;

-- The catalog row of the collection `view` (resolved from `name`); raises
-- 42P01 when there is none.
CREATE OR REPLACE FUNCTION tscoll._collection(view regclass, name text) RETURNS tscoll.collections
    LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS
$$
DECLARE
    c tscoll.collections;
BEGIN
    SELECT * INTO c FROM tscoll.collections x WHERE x.view = _collection.view;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'time-series collection "%" does not exist', name USING ERRCODE = '42P01';
    END IF;
    RETURN c;
END
$$;

CREATE OR REPLACE FUNCTION tscoll._drop_collection(view regclass, name text) RETURNS void
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS
$$
DECLARE
    c tscoll.collections := tscoll._collection(view, name);
BEGIN
    -- Unregister first, so that the sql_drop event trigger has nothing left
    -- to do (it would not run under session_replication_role = replica).
    -- DROP VIEW checks ownership and undoes everything when it fails.
    PERFORM tscoll._forget_rollups_of(c.view);
    DELETE FROM tscoll.collections x WHERE x.view = c.view;
    EXECUTE format('DROP VIEW %s', c.view);
    EXECUTE format('DROP TABLE %s', c.bucket_table);
    PERFORM tscoll._forget_bucket_table(c.bucket_table);
END
$$;

CREATE OR REPLACE FUNCTION tscoll.drop_collection(name text) RETURNS void LANGUAGE sql AS
$$ SELECT tscoll._drop_collection(pg_catalog.to_regclass(name), name) $$;

CREATE OR REPLACE FUNCTION tscoll.buckets(collection regclass)
    RETURNS TABLE (_id tscoll.objectid, meta jsonb, control jsonb, data jsonb)
    LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS
$$
DECLARE
    c tscoll.collections := tscoll._collection(collection, collection::text);
BEGIN
    RETURN QUERY SELECT * FROM tscoll._buckets(c.view);
END
$$;

-- Folds tail rows into their buckets (doc/ARCHITECTURE.md, "Tails").
CREATE OR REPLACE FUNCTION tscoll._fold_tails(collection regclass) RETURNS bigint
    AS 'MODULE_PATHNAME', 'tscoll_fold_tails' LANGUAGE C STRICT;

CREATE OR REPLACE FUNCTION tscoll.fold_tails(collection regclass) RETURNS bigint
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS
$$
DECLARE
    c tscoll.collections := tscoll._collection(collection, collection::text);
BEGIN
    PERFORM tscoll._check_owner(c);
    RETURN tscoll._fold_tails(c.view);
END
$$;

-- Whether the collection's bucket table is distributed: it then has the
-- shard key column series_hash.
CREATE FUNCTION tscoll._is_distributed(c tscoll.collections) RETURNS boolean
    LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS
$$
SELECT EXISTS (SELECT FROM pg_attribute
                WHERE attrelid = c.bucket_table AND attname = 'series_hash' AND NOT attisdropped)
$$;

-- {"shardKey", "shardCount"} of a distributed collection, NULL otherwise.
CREATE FUNCTION tscoll._distribution(c tscoll.collections) RETURNS jsonb
    LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS
$$
DECLARE
    shards bigint;
BEGIN
    -- (a dump of a coordinator restored without Citus keeps series_hash)
    IF NOT tscoll._is_distributed(c) OR to_regclass('pg_catalog.pg_dist_shard') IS NULL THEN
        RETURN NULL;
    END IF;
    EXECUTE 'SELECT count(*) FROM pg_dist_shard WHERE logicalrelid = $1'
        INTO shards USING c.bucket_table;
    RETURN jsonb_build_object('shardKey', 'series_hash', 'shardCount', shards);
END
$$;

CREATE OR REPLACE FUNCTION tscoll.list_collections()
    RETURNS TABLE (name regclass, bucket_table regclass, options jsonb)
    LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS
$$
SELECT c.view, c.bucket_table,
       tscoll._listing_options(c)
           || jsonb_strip_nulls(jsonb_build_object('distribution', tscoll._distribution(c)))
  FROM tscoll.collections c
 WHERE has_table_privilege(c.view, 'SELECT')
 ORDER BY c.view::text
$$;

CREATE OR REPLACE FUNCTION tscoll.collection_stats(collection regclass) RETURNS jsonb
    LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS
$$
DECLARE
    c tscoll.collections := tscoll._collection(collection, collection::text);
    bucket_count bigint;
    measurements bigint;
    uncompressed bigint;
    stored bigint;
    total bigint;
    distribution jsonb := tscoll._distribution(c);
    ns text;
BEGIN
    IF distribution IS NULL THEN
        total := pg_total_relation_size(c.bucket_table);
    ELSE
        EXECUTE 'SELECT citus_total_relation_size($1)' INTO total USING c.bucket_table;
    END IF;
    SELECT * INTO bucket_count, measurements, uncompressed, stored
      FROM tscoll._bucket_totals(c.view);
    SELECT format('%I.%I', n.nspname, r.relname) INTO ns
      FROM pg_class r JOIN pg_namespace n ON n.oid = r.relnamespace WHERE r.oid = c.bucket_table;
    RETURN jsonb_build_object('bucketsNs', ns, 'bucketCount', bucket_count)
        || CASE WHEN bucket_count > 0
                THEN jsonb_build_object('avgBucketSize', stored / bucket_count)
                ELSE '{}' END
        || tscoll._bucket_counters(c.view)
        || jsonb_build_object('numMeasurements', measurements, 'totalSize', total,
                              'uncompressedSize', uncompressed)
        || CASE WHEN c.fields = '{}' THEN '{}' ELSE jsonb_build_object('fields', c.fields) END
        || CASE WHEN distribution IS NULL THEN '{}'
                ELSE jsonb_build_object('sharded', true, 'nchunks', distribution->'shardCount') END;
END
$$;

CREATE OR REPLACE FUNCTION tscoll.create_index(collection regclass, keys json, options jsonb DEFAULT '{}')
    RETURNS text LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS
$$
DECLARE
    c tscoll.collections := tscoll._collection(collection, collection::text);
BEGIN
    PERFORM tscoll._check_owner(c);
    RETURN tscoll._add_index(c, keys, options);
END
$$;

CREATE OR REPLACE FUNCTION tscoll.list_indexes(collection regclass) RETURNS SETOF json
    LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS
$$
DECLARE
    c tscoll.collections := tscoll._collection(collection, collection::text);
BEGIN
    IF NOT has_table_privilege(c.view, 'SELECT') THEN
        RAISE EXCEPTION 'permission denied for view %', c.view USING ERRCODE = '42501';
    END IF;
    RETURN QUERY SELECT tscoll._listed_index(i) FROM tscoll.indexes i
                  WHERE i.collection = c.view ORDER BY i.position;
    -- indexes made with plain CREATE INDEX on the bucket table
    RETURN QUERY
        SELECT format('{"v": 2, "name": %s, "sql": %s}', to_json(r.relname),
                      to_json(pg_get_indexdef(r.oid)))::json
          FROM pg_index x JOIN pg_class r ON r.oid = x.indexrelid
         WHERE x.indrelid = c.bucket_table AND NOT x.indisprimary
           AND r.relname NOT IN (SELECT i.bucket_index FROM tscoll.indexes i
                                  WHERE i.collection = c.view AND i.bucket_index IS NOT NULL)
         ORDER BY r.relname;
END
$$;

CREATE OR REPLACE FUNCTION tscoll.drop_index(collection regclass, name text) RETURNS void
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS
$$
DECLARE
    c tscoll.collections := tscoll._collection(collection, collection::text);
    i tscoll.indexes;
    plain regclass;
BEGIN
    PERFORM tscoll._check_owner(c);
    DELETE FROM tscoll.indexes x WHERE x.collection = c.view AND x.name = drop_index.name
    RETURNING * INTO i;
    IF NOT FOUND THEN
        -- one made with plain CREATE INDEX, as list_indexes shows it
        SELECT r.oid INTO plain
          FROM pg_index x JOIN pg_class r ON r.oid = x.indexrelid
         WHERE x.indrelid = c.bucket_table AND NOT x.indisprimary AND r.relname = drop_index.name
           AND r.relname NOT IN (SELECT y.bucket_index FROM tscoll.indexes y
                                  WHERE y.collection = c.view AND y.bucket_index IS NOT NULL);
        IF plain IS NOT NULL THEN
            EXECUTE format('DROP INDEX %s', plain);
            RETURN;
        END IF;
        RAISE EXCEPTION 'index % of time-series collection % does not exist', name, c.view
            USING ERRCODE = '42704';
    END IF;
    IF tscoll._bucket_index(c, i) IS NOT NULL THEN
        EXECUTE format('DROP INDEX %s', tscoll._bucket_index(c, i));
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION tscoll.coll_mod(collection regclass, changes jsonb) RETURNS jsonb
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS
$$
DECLARE
    c tscoll.collections := tscoll._collection(collection, collection::text);
    result jsonb;
    o jsonb;
    i tscoll.indexes;
BEGIN
    PERFORM tscoll._check_owner(c);
    result := tscoll._apply_coll_mod(jsonb_build_object(
        'timeField', c.time_field, 'metaField', c.meta_field, 'granularity', c.granularity,
        'bucketMaxSpanSeconds', c.bucket_max_span_seconds,
        'bucketRoundingSeconds', c.bucket_rounding_seconds,
        'expireAfterSeconds', c.expire_after_seconds, 'fields', c.fields),
        coalesce(changes, 'null'));
    IF jsonb_typeof(result->'index') = 'object' THEN
        i := tscoll._coll_mod_index(c, result->'index');
        IF result->'index' ? 'expireAfterSeconds' THEN
            IF NOT i.options ? 'expireAfterSeconds' THEN
                RAISE EXCEPTION 'index % of time-series collection % is not a TTL index', i.name, c.view
                    USING ERRCODE = '22023';
            END IF;
            UPDATE tscoll.indexes x
               SET options = x.options || jsonb_build_object('expireAfterSeconds', result->'index'->'expireAfterSeconds')
             WHERE x.collection = c.view AND x.name = i.name;
        END IF;
        IF result->'index' ? 'hidden' THEN
            PERFORM tscoll._set_index_hidden(c, i, (result->'index'->>'hidden')::boolean);
        END IF;
    END IF;
    o := result->'options';
    UPDATE tscoll.collections
       SET granularity = o->>'granularity',
           bucket_max_span_seconds = (o->>'bucketMaxSpanSeconds')::int,
           bucket_rounding_seconds = (o->>'bucketRoundingSeconds')::int,
           expire_after_seconds = (o->>'expireAfterSeconds')::bigint,
           bucketing_changed = bucketing_changed OR (result->>'bucketingChanged')::boolean,
           fields = o->'fields'
     WHERE view = c.view
    RETURNING * INTO c;
    IF result->'addedFields' <> '{}' THEN
        -- New columns go after the view's own: a view's columns never move.
        PERFORM tscoll._define_view(
            c.view::text, c.bucket_table::text, c.time_field, c.meta_field, c.fields,
            tscoll._typed_columns_of(c) || ARRAY(SELECT jsonb_object_keys(result->'addedFields')),
            true);
    END IF;
    IF (result->>'bucketingChanged')::boolean THEN
        PERFORM tscoll._forget_series(c.bucket_table);
    END IF;
    RETURN tscoll._listing_options(c);
END
$$;

-- The view's typed field columns, in their order.
CREATE OR REPLACE FUNCTION tscoll._typed_columns_of(c tscoll.collections) RETURNS text[]
    LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS
$$
SELECT coalesce(array_agg(attname::text ORDER BY attnum), '{}')
  FROM pg_attribute
 WHERE attrelid = c.view AND NOT attisdropped
   AND attnum > (SELECT attnum FROM pg_attribute WHERE attrelid = c.view AND attname = 'doc')
$$;

-- The view's columns must still be named after the time and meta fields.
CREATE OR REPLACE FUNCTION tscoll._check_view_columns(c tscoll.collections) RETURNS void
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS
$$
DECLARE
    expected text[] := CASE WHEN c.meta_field IS NULL THEN ARRAY[c.time_field, 'doc']
                            ELSE ARRAY[c.time_field, c.meta_field, 'doc'] END;
    actual text[];
    typed text[] := tscoll._typed_columns_of(c);
BEGIN
    SELECT array_agg(attname::text ORDER BY attnum) INTO actual
      FROM pg_attribute WHERE attrelid = c.view AND attnum > 0 AND NOT attisdropped;
    -- The typed fields follow in the order they were added.
    IF (SELECT array_agg(k ORDER BY k) FROM unnest(typed) k)
           IS NOT DISTINCT FROM (SELECT array_agg(k ORDER BY k) FROM jsonb_object_keys(c.fields) k) THEN
        expected := expected || typed;
    END IF;
    IF actual IS DISTINCT FROM expected THEN
        RAISE EXCEPTION 'cannot change the columns of time-series collection "%"', c.view
            USING ERRCODE = '0A000',
                  DETAIL = format('Its columns must be %s.', array_to_string(expected, ', ')),
                  HINT = 'Rename fields inside doc with a new collection and INSERT ... SELECT.';
    END IF;
END
$$;

COMMENT ON FUNCTION tscoll.fold_tails(regclass) IS
    'writes the tail rows of every bucket not being written into the bucket; returns how many buckets';

-- Rollups (new in 0.2.0).







------------------------------------------------------------------------------
-- Rollups (doc/REFERENCE.md §2.8): aggregates of a collection per time
-- bucket and group. A rollup's table holds the aggregates' states of its
-- buckets as of its last refresh; a write notes the buckets it changes in
-- tscoll.rollup_changes, in the writing transaction. Readers get the
-- stored states of the buckets not noted and compute the noted ones from
-- the source with their own snapshot, so that a rollup always equals its
-- source's aggregates as the reader sees them. A refresh (the TTL
-- monitor's pass, tscoll.refresh_rollups) stores the noted buckets again.
-- Design: doc/ARCHITECTURE.md, "Rollups".
------------------------------------------------------------------------------

CREATE TABLE tscoll.rollups (
    rollup regclass PRIMARY KEY,       -- the view users read
    storage regclass NOT NULL UNIQUE,  -- its table of stored states, "system.rollups.<name>"
    state regclass NOT NULL UNIQUE,    -- its view of every state, "system.rollups.<name>.state"
    source regclass NOT NULL,          -- a collection's view or a rollup
    collection regclass NOT NULL,      -- the collection the data comes from
    every text NOT NULL,               -- as given
    unit text CHECK (unit IN ('week', 'month', 'year')),  -- a calendar bucket in UTC, or
    seconds float8 CHECK (seconds >= 0.001),              -- a stride from the epoch
    group_by jsonb,                    -- paths in the meta field; NULL: the whole meta
    aggregates jsonb NOT NULL,         -- {"<field>": ["count", "sum", ...]}
    options jsonb NOT NULL DEFAULT '{}',
    CHECK ((unit IS NULL) <> (seconds IS NULL))
);
COMMENT ON TABLE tscoll.rollups IS 'tscoll rollups, one row each';
SELECT pg_catalog.pg_extension_config_dump('tscoll.rollups', '');
-- A row the TTL pass acts on as the collection's owner: written only by
-- that owner, for a collection, with objects of that owner, from the
-- collection or one of its rollups.
CREATE FUNCTION tscoll._rollup_row_valid(r tscoll.rollups) RETURNS boolean
    LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS
$$
SELECT coalesce(tscoll._owns(r.collection), false)
   AND EXISTS (SELECT FROM tscoll.collections c WHERE c.view = r.collection)
   AND (SELECT count(DISTINCT relowner) = 1 AND count(*) = 4 FROM pg_class
         WHERE oid IN (r.collection, r.rollup, r.state, r.storage))
   AND (r.source = r.collection
        OR EXISTS (SELECT FROM tscoll.rollups s
                    WHERE s.rollup = r.source AND s.collection = r.collection))
$$;
GRANT SELECT, INSERT, DELETE ON tscoll.rollups TO PUBLIC;
ALTER TABLE tscoll.rollups ENABLE ROW LEVEL SECURITY;
CREATE POLICY read ON tscoll.rollups FOR SELECT USING (true);
CREATE POLICY register ON tscoll.rollups FOR INSERT WITH CHECK (tscoll._rollup_row_valid(rollups));
CREATE POLICY unregister ON tscoll.rollups FOR DELETE
    USING (coalesce(tscoll._owns(storage), true));

-- Buckets of rollups written since they were stored. Whoever may write to
-- the collection notes them (a note costs a recomputation at worst; one
-- that is not a bucket's start is ignored); only the rollup's owner clears
-- them.
CREATE TABLE tscoll.rollup_changes (
    rollup regclass NOT NULL,  -- the rollup's storage table
    bucket timestamptz NOT NULL
);
CREATE INDEX rollup_changes_bucket ON tscoll.rollup_changes (rollup, bucket);
COMMENT ON TABLE tscoll.rollup_changes IS 'buckets of tscoll rollups to compute again';
SELECT pg_catalog.pg_extension_config_dump('tscoll.rollup_changes', '');
GRANT SELECT, INSERT, DELETE ON tscoll.rollup_changes TO PUBLIC;
ALTER TABLE tscoll.rollup_changes ENABLE ROW LEVEL SECURITY;
CREATE POLICY read ON tscoll.rollup_changes FOR SELECT USING (true);
CREATE FUNCTION tscoll._rollup_writer(storage regclass) RETURNS boolean
    LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS
$$
SELECT coalesce(bool_or(has_table_privilege(r.collection, 'INSERT, UPDATE, DELETE')), false)
  FROM tscoll.rollups r WHERE r.storage = _rollup_writer.storage
$$;
CREATE POLICY note ON tscoll.rollup_changes FOR INSERT WITH CHECK (tscoll._rollup_writer(rollup));
CREATE POLICY clear ON tscoll.rollup_changes FOR DELETE
    USING (coalesce(tscoll._owns(rollup), true));

-- The bucket of `t`: date_bin from the Unix epoch for a stride, date_trunc
-- in UTC for a calendar unit; never the session's time zone. Immutable, for
-- the notes. The queries that aggregate spell date_bin and date_trunc out
-- instead (_rollup_compute_sql): the planner's rewrite for aggregation in
-- buckets reads them, and it sees this function before it is inlined.
CREATE FUNCTION tscoll._rollup_bucket(unit text, seconds float8, t timestamptz)
    RETURNS timestamptz LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$
SELECT CASE WHEN unit IS NULL
            THEN pg_catalog.date_bin(pg_catalog.make_interval(secs => seconds), t,
                                     '1970-01-01 00:00:00+00'::timestamptz)
            ELSE pg_catalog.timezone('UTC', pg_catalog.date_trunc(unit, pg_catalog.timezone('UTC', t)))
       END
$$;

-- The bucket after the one starting at `bucket`.
CREATE FUNCTION tscoll._rollup_next(unit text, seconds float8, bucket timestamptz)
    RETURNS timestamptz LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$
SELECT CASE WHEN bucket IN ('-infinity', 'infinity') THEN bucket
            WHEN unit IS NULL THEN bucket + pg_catalog.make_interval(secs => seconds)
            ELSE pg_catalog.timezone('UTC', pg_catalog.timezone('UTC', bucket)
                     + pg_catalog.make_interval(weeks => (unit = 'week')::integer,
                                                months => (unit = 'month')::integer,
                                                years => (unit = 'year')::integer))
       END
$$;

-- The buckets holding a time in [lo, hi].
CREATE FUNCTION tscoll._rollup_buckets_between(unit text, seconds float8, lo timestamptz,
                                               hi timestamptz)
    RETURNS SETOF timestamptz LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$
SELECT pg_catalog.timezone('UTC', b)
  FROM pg_catalog.generate_series(
           pg_catalog.timezone('UTC', tscoll._rollup_bucket(unit, seconds, lo)),
           pg_catalog.timezone('UTC', hi),
           CASE WHEN unit IS NULL THEN pg_catalog.make_interval(secs => seconds)
                ELSE pg_catalog.make_interval(weeks => (unit = 'week')::integer,
                                              months => (unit = 'month')::integer,
                                              years => (unit = 'year')::integer) END) b
$$;

-- `every` as a calendar unit or a stride in seconds; 22023 for anything else.
CREATE FUNCTION tscoll._rollup_stride(every text, OUT unit text, OUT seconds float8)
    LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS
$$
DECLARE
    e text := lower(btrim(every));
    i interval;
    months integer;
BEGIN
    IF e IN ('week', 'month', 'year') THEN
        unit := e;
        RETURN;
    END IF;
    IF e IN ('millisecond', 'second', 'minute', 'hour', 'day') THEN
        e := '1 ' || e;
    END IF;
    BEGIN
        i := e::interval;
    EXCEPTION WHEN data_exception THEN
        i := NULL;
    END;
    IF i IS NULL THEN
        RAISE EXCEPTION 'invalid rollup interval: %', coalesce(quote_literal(every), 'NULL')
            USING ERRCODE = '22023',
                  HINT = 'Give an interval such as ''1 minute'', ''1 hour'' or ''1 day'', or one of week, month, year.';
    END IF;
    months := extract(year FROM i)::integer * 12 + extract(month FROM i)::integer;
    IF months <> 0 THEN
        IF i - make_interval(months => months) = interval '0' AND months IN (1, 12) THEN
            unit := CASE months WHEN 1 THEN 'month' ELSE 'year' END;
            RETURN;
        END IF;
        RAISE EXCEPTION 'invalid rollup interval: %', quote_literal(every)
            USING ERRCODE = '22023',
                  DETAIL = 'An interval with months or years buckets by calendar: it must be 1 month or 1 year.';
    END IF;
    seconds := extract(epoch FROM i);
    IF seconds <= 0 THEN
        RAISE EXCEPTION 'invalid rollup interval: %', quote_literal(every)
            USING ERRCODE = '22023', DETAIL = 'The interval must be positive.';
    END IF;
END
$$;

-- Whether buckets of (unit, seconds) are unions of buckets of the source's
-- (source_unit, source_seconds).
CREATE FUNCTION tscoll._rollup_coarser(unit text, seconds float8, source_unit text,
                                       source_seconds float8) RETURNS boolean
    LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS
$$
SELECT CASE
    WHEN unit IS NULL AND source_unit IS NULL
        THEN round((seconds * 1e6)::numeric) % round((source_seconds * 1e6)::numeric) = 0
    WHEN unit IS NULL THEN false
    -- a calendar bucket starts at midnight UTC
    WHEN source_unit IS NULL THEN 86400e6::numeric % round((source_seconds * 1e6)::numeric) = 0
    ELSE unit = source_unit OR (unit = 'year' AND source_unit = 'month')
END
$$;

-- The states a rollup keeps of each field, in column order: a count of the
-- field's numbers (count, avg), their sum (sum, avg), min, max, and the
-- first and last with their times.
CREATE FUNCTION tscoll._rollup_states(aggregates jsonb)
    RETURNS TABLE (field text, state text, type text, ord bigint)
    LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS
$$
SELECT f.key, s.state, s.type, f.n * 10 + s.position
  FROM jsonb_each(aggregates) WITH ORDINALITY f(key, aggs, n),
       (VALUES (1, 'n', 'bigint', ARRAY['count', 'avg']), (2, 'sum', 'float8', ARRAY['sum', 'avg']),
               (3, 'min', 'float8', ARRAY['min']), (4, 'max', 'float8', ARRAY['max']),
               (5, 'first', 'float8', ARRAY['first']), (6, 'first_time', 'timestamptz', ARRAY['first']),
               (7, 'last', 'float8', ARRAY['last']), (8, 'last_time', 'timestamptz', ARRAY['last']))
           s(position, state, type, used_by)
 WHERE EXISTS (SELECT FROM jsonb_array_elements_text(f.aggs) a WHERE a = ANY (s.used_by))
 ORDER BY f.n, s.position
$$;

-- A rollup's group columns: name and path in the meta field (NULL: the
-- whole meta value, under the meta field's name).
CREATE FUNCTION tscoll._rollup_groups(r tscoll.rollups)
    RETURNS TABLE (name text, path text[], ord bigint)
    LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS
$$
SELECT c.meta_field, NULL::text[], 0::bigint
  FROM tscoll.collections c WHERE c.view = r.collection AND r.group_by IS NULL
UNION ALL
SELECT g.p, string_to_array(g.p, '.'), g.n
  FROM jsonb_array_elements_text(coalesce(r.group_by, '[]')) WITH ORDINALITY g(p, n)
$$;

-- The column definitions of a rollup's states (also the storage's columns).
CREATE FUNCTION tscoll._rollup_state_columns(r tscoll.rollups) RETURNS text
    LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS
$$
SELECT format('%I timestamptz', c.time_field)
    || coalesce((SELECT string_agg(format(', %I jsonb', g.name), '' ORDER BY g.ord) FROM tscoll._rollup_groups(r) g), '')
    || ', count bigint'
    || coalesce((SELECT string_agg(format(', %I %s', s.field || ':' || s.state, s.type), '' ORDER BY s.ord)
                   FROM tscoll._rollup_states(r.aggregates) s), '')
  FROM tscoll.collections c WHERE c.view = r.collection
$$;

-- The query computing a rollup's states from its source for the buckets
-- `changed` (NULL: every bucket): from the measurements (a collection) or
-- from the source rollup's states.
CREATE FUNCTION tscoll._rollup_compute_sql(r tscoll.rollups, changed timestamptz[]) RETURNS text
    LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS
$$
DECLARE
    c tscoll.collections;
    s tscoll.rollups;
    from_rollup boolean;
    t text;
    bucket text;
    groups text;
    states text;
    wanted text := 'true';
    first_bucket timestamptz;
    last_bucket timestamptz;
BEGIN
    SELECT * INTO c FROM tscoll.collections WHERE view = r.collection;
    SELECT * INTO s FROM tscoll.rollups WHERE rollup = r.source;
    from_rollup := FOUND;
    t := format('x.%I', c.time_field);
    -- date_bin and date_trunc spelled out: aggregation in buckets reads them
    bucket := CASE WHEN r.unit IS NULL
                   THEN format('date_bin(%L::interval, %s, %L::timestamptz)',
                               make_interval(secs => r.seconds), t, '1970-01-01 00:00:00+00')
                   ELSE format('date_trunc(%L, %s, %L)', r.unit, t, 'UTC') END;
    IF changed IS NOT NULL THEN
        first_bucket := (SELECT min(b) FROM unnest(changed) b);
        last_bucket := (SELECT max(b) FROM unnest(changed) b);
        -- A time range, which prunes the source's buckets and leaves the
        -- query to aggregation in buckets; the buckets themselves only
        -- when the range holds others.
        wanted := format('%1$s >= %2$L AND %1$s < %3$L', t, first_bucket,
                         tscoll._rollup_next(r.unit, r.seconds, last_bucket));
        IF (CASE WHEN r.unit IS NULL
                 THEN round(extract(epoch FROM last_bucket - first_bucket) / r.seconds) + 1
                 ELSE (SELECT count(*) FROM tscoll._rollup_buckets_between(r.unit, NULL, first_bucket,
                                                                              last_bucket)) END)
           <> cardinality(changed) THEN
            wanted := format('%s AND %s = ANY (%L::timestamptz[])', wanted, bucket, changed);
        END IF;
    END IF;
    SELECT string_agg(', ' || CASE
               WHEN NOT from_rollup AND g.path IS NULL THEN format('x.%I', c.meta_field)
               WHEN NOT from_rollup OR s.group_by IS NULL
                   THEN format('x.%I', c.meta_field)
                        || coalesce((SELECT string_agg(format(' -> %L', k), '' ORDER BY n)
                                       FROM unnest(g.path) WITH ORDINALITY p(k, n)), '')
               ELSE format('x.%I', g.name) END || format(' AS %I', g.name), '' ORDER BY g.ord)
      INTO groups FROM tscoll._rollup_groups(r) g;
    SELECT string_agg(', ' || CASE
               WHEN NOT from_rollup THEN CASE st.state
                   WHEN 'n' THEN format('count(%s)', v)
                   WHEN 'sum' THEN format('sum(%s)', v)
                   WHEN 'min' THEN format('min(%s)', v)
                   WHEN 'max' THEN format('max(%s)', v)
                   WHEN 'first' THEN format('(array_agg(%1$s ORDER BY %2$s) FILTER (WHERE %1$s IS NOT NULL))[1]', v, t)
                   WHEN 'first_time' THEN format('min(%s) FILTER (WHERE %s IS NOT NULL)', t, v)
                   WHEN 'last' THEN format('(array_agg(%1$s ORDER BY %2$s DESC) FILTER (WHERE %1$s IS NOT NULL))[1]', v, t)
                   ELSE format('max(%s) FILTER (WHERE %s IS NOT NULL)', t, v) END
               ELSE CASE st.state
                   WHEN 'n' THEN format('sum(x.%I)::bigint', st.field || ':n')
                   WHEN 'sum' THEN format('sum(x.%I)', st.field || ':sum')
                   WHEN 'min' THEN format('min(x.%I)', st.field || ':min')
                   WHEN 'max' THEN format('max(x.%I)', st.field || ':max')
                   WHEN 'first' THEN format('(array_agg(x.%1$I ORDER BY x.%2$I) FILTER (WHERE x.%2$I IS NOT NULL))[1]',
                                            st.field || ':first', st.field || ':first_time')
                   WHEN 'first_time' THEN format('min(x.%I)', st.field || ':first_time')
                   WHEN 'last' THEN format('(array_agg(x.%1$I ORDER BY x.%2$I DESC) FILTER (WHERE x.%2$I IS NOT NULL))[1]',
                                           st.field || ':last', st.field || ':last_time')
                   ELSE format('max(x.%I)', st.field || ':last_time') END
               END || format(' AS %I', st.field || ':' || st.state), '' ORDER BY st.ord)
      INTO states
      FROM tscoll._rollup_states(r.aggregates) st,
           LATERAL (SELECT CASE WHEN strpos(st.field, '.') = 0
                                THEN format('tscoll._as_float8(x.doc -> %L)', st.field)
                                ELSE format('tscoll._as_float8(x.doc #> %L)',
                                            string_to_array(st.field, '.')) END AS v) f(v);
    RETURN format('SELECT %s AS %I%s, %s AS count%s FROM %s x WHERE %s GROUP BY %s',
                  bucket, c.time_field, coalesce(groups, ''),
                  CASE WHEN from_rollup THEN 'sum(x.count)::bigint' ELSE 'count(*)' END,
                  coalesce(states, ''),
                  CASE WHEN from_rollup THEN s.state::text ELSE r.collection::text END,
                  wanted,
                  (SELECT string_agg(n::text, ', ')
                     FROM generate_series(1, 1 + (SELECT count(*) FROM tscoll._rollup_groups(r))::integer) n));
END
$$;

-- The states of the buckets noted as changed, computed from the source in
-- the reader's snapshot, with the reader's rights (the state view checked
-- them).
CREATE FUNCTION tscoll._rollup_live(storage regclass) RETURNS SETOF record
    LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp SET DateStyle = 'ISO, MDY' SET TimeZone = 'UTC'
    SET IntervalStyle = 'postgres' SET extra_float_digits = 3 SET jit = off AS
$$
DECLARE
    r tscoll.rollups;
    changed timestamptz[];
BEGIN
    IF NOT EXISTS (SELECT FROM tscoll.rollup_changes c WHERE c.rollup = _rollup_live.storage) THEN
        RETURN;
    END IF;
    SELECT * INTO r FROM tscoll.rollups x WHERE x.storage = _rollup_live.storage;
    SELECT array_agg(DISTINCT c.bucket ORDER BY c.bucket) INTO changed
      FROM tscoll.rollup_changes c
     WHERE c.rollup = r.storage AND c.bucket = tscoll._rollup_bucket(r.unit, r.seconds, c.bucket);
    IF changed IS NOT NULL THEN
        RETURN QUERY EXECUTE tscoll._rollup_compute_sql(r, changed);
    END IF;
END
$$;

-- A rollup is read by whoever may read its collection (42501 otherwise).
CREATE FUNCTION tscoll._rollup_check_read(collection regclass) RETURNS boolean
    LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS
$$
BEGIN
    IF NOT has_table_privilege(collection, 'SELECT') THEN
        RAISE EXCEPTION 'permission denied for view %', collection USING ERRCODE = '42501',
            HINT = 'A rollup is read by those who may read its collection.';
    END IF;
    RETURN true;
END
$$;

-- Creates the state view of rollup `r` (every bucket's states as the
-- reader's snapshot has them), beside its table, and the view users read,
-- `schema_name`.`rel_name`, with the columns of doc/REFERENCE.md §2.8;
-- returns the state view.
CREATE FUNCTION tscoll._define_rollup_views(r tscoll.rollups, schema_name text, rel_name text)
    RETURNS regclass LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS
$$
DECLARE
    c tscoll.collections;
    state_name text := format('%I.%I', schema_name,
                              (SELECT relname || '.state' FROM pg_class WHERE oid = r.storage));
    names text;
    finals text;
BEGIN
    SELECT * INTO c FROM tscoll.collections WHERE view = r.collection;
    SELECT format('s.%I', c.time_field)
        || coalesce((SELECT string_agg(format(', s.%I', g.name), '' ORDER BY g.ord) FROM tscoll._rollup_groups(r) g), '')
        || ', s.count'
        || coalesce((SELECT string_agg(format(', s.%I', st.field || ':' || st.state), '' ORDER BY st.ord)
                       FROM tscoll._rollup_states(r.aggregates) st), '')
      INTO names;
    EXECUTE format(
        'CREATE VIEW %s AS
           SELECT %s FROM %s s
            WHERE NOT EXISTS (SELECT FROM tscoll.rollup_changes c
                               WHERE c.rollup = %L::regclass AND c.bucket = s.%I)
              AND tscoll._rollup_check_read(%L::regclass)
           UNION ALL
           SELECT * FROM tscoll._rollup_live(%L::regclass) AS l(%s)
            WHERE tscoll._rollup_check_read(%L::regclass)',
        state_name, names, r.storage, r.storage, c.time_field,
        r.collection, r.storage, tscoll._rollup_state_columns(r), r.collection);
    EXECUTE format('COMMENT ON VIEW %s IS %L', state_name,
                   format('states of the rollup %I.%I', schema_name, rel_name));
    SELECT string_agg(', ' || CASE a.agg
               WHEN 'count' THEN format('s.%I', f.key || ':n')
               WHEN 'sum' THEN format('s.%I', f.key || ':sum')
               WHEN 'avg' THEN format('s.%I / NULLIF(s.%I, 0)', f.key || ':sum', f.key || ':n')
               ELSE format('s.%I', f.key || ':' || a.agg) END
               || format(' AS %I', f.key || '_' || a.agg), '' ORDER BY f.n, a.m)
      INTO finals
      FROM jsonb_each(r.aggregates) WITH ORDINALITY f(key, aggs, n),
           jsonb_array_elements_text(f.aggs) WITH ORDINALITY a(agg, m);
    EXECUTE format('CREATE VIEW %I.%I AS SELECT s.%I%s, s.count%s FROM %s s',
                   schema_name, rel_name, c.time_field,
                   coalesce((SELECT string_agg(format(', s.%I', g.name), '' ORDER BY g.ord) FROM tscoll._rollup_groups(r) g), ''),
                   coalesce(finals, ''), state_name);
    EXECUTE format('COMMENT ON VIEW %I.%I IS %L', schema_name, rel_name,
                   format('rollup of %s every %s', r.source, r.every));
    RETURN state_name::regclass;
END
$$;

-- Sessions learn that a collection's rollups changed (its descriptor has
-- whether it has any: writers note their changes only then).
CREATE FUNCTION tscoll._rollups_changed(collection regclass) RETURNS void
    AS 'MODULE_PATHNAME', 'tscoll_rollups_changed' LANGUAGE C STRICT;

-- Stores a rollup's noted buckets again and clears their notes (all its
-- buckets, into its empty table, when `everything`); returns how many rows
-- it computed, or NULL when it did not wait for writers and some held it
-- up. Writers hold their lock on the rollup's table from before they write
-- or look for a note until they commit: once the refresh has it in SHARE
-- mode, every writer that relied on a note has committed, and this
-- transaction's next snapshot sees what it wrote. So a refresh needs READ
-- COMMITTED.
CREATE FUNCTION tscoll._refresh_rollup(storage regclass, everything boolean DEFAULT false,
                                       wait boolean DEFAULT true)
    RETURNS bigint LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
    SET DateStyle = 'ISO, MDY' SET TimeZone = 'UTC' SET IntervalStyle = 'postgres'
    SET extra_float_digits = 3 SET jit = off AS
$$
DECLARE
    r tscoll.rollups;
    c tscoll.collections;
    changed timestamptz[];
    computed bigint;
    waited text;
BEGIN
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'rollups are created and refreshed in READ COMMITTED transactions only'
            USING ERRCODE = '25000',
                  DETAIL = 'The refresh must see every writer it waited for.';
    END IF;
    IF wait THEN
        -- Nothing noted yet: writers in progress are the next refresh's.
        IF NOT everything AND NOT EXISTS (SELECT FROM tscoll.rollup_changes x
                                           WHERE x.rollup = _refresh_rollup.storage) THEN
            RETURN 0;
        END IF;
        EXECUTE format('LOCK TABLE %s IN SHARE MODE', storage);
    ELSE
        -- Held to the end of the transaction, whose expiry must not miss a
        -- writer in progress; waited for briefly, so that writers that keep
        -- coming do not starve it, and new ones queue a moment at most.
        waited := current_setting('lock_timeout');
        PERFORM set_config('lock_timeout', '200ms', true);
        BEGIN
            EXECUTE format('LOCK TABLE %s IN SHARE MODE', storage);
        EXCEPTION WHEN lock_not_available THEN
            PERFORM set_config('lock_timeout', waited, true);
            RETURN NULL;
        END;
        PERFORM set_config('lock_timeout', waited, true);
    END IF;
    SELECT * INTO r FROM tscoll.rollups x WHERE x.storage = _refresh_rollup.storage;
    SELECT * INTO c FROM tscoll.collections WHERE view = r.collection;
    WITH cleared AS (DELETE FROM tscoll.rollup_changes x WHERE x.rollup = r.storage RETURNING bucket)
    SELECT array_agg(DISTINCT bucket ORDER BY bucket) INTO changed FROM cleared
     WHERE bucket = tscoll._rollup_bucket(r.unit, r.seconds, bucket);
    IF everything THEN  -- a new rollup: its table is empty
        changed := NULL;
    ELSIF changed IS NULL THEN
        RETURN 0;
    ELSE
        EXECUTE format('DELETE FROM %s WHERE %I = ANY ($1)', r.storage, c.time_field) USING changed;
    END IF;
    EXECUTE format('INSERT INTO %s %s', r.storage, tscoll._rollup_compute_sql(r, changed));
    GET DIAGNOSTICS computed = ROW_COUNT;
    RETURN computed;
END
$$;

-- Removes a rollup's buckets that ended expireAfterSeconds before `now`.
CREATE FUNCTION tscoll._expire_rollup(r tscoll.rollups, now timestamptz) RETURNS bigint
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp SET DateStyle = 'ISO, MDY' SET TimeZone = 'UTC'
    SET IntervalStyle = 'postgres' SET extra_float_digits = 3 SET jit = off AS
$$
DECLARE
    c tscoll.collections;
    seconds numeric := (r.options ->> 'expireAfterSeconds')::numeric;
    expired bigint;
BEGIN
    IF seconds IS NULL OR seconds > 200000000000 THEN
        RETURN 0;
    END IF;
    SELECT * INTO c FROM tscoll.collections WHERE view = r.collection;
    EXECUTE format('DELETE FROM %s WHERE tscoll._rollup_next(%L, %L, %I) <= $1',
                   r.storage, r.unit, r.seconds, c.time_field)
      USING now - make_interval(secs => seconds::double precision);
    GET DIAGNOSTICS expired = ROW_COUNT;
    DELETE FROM tscoll.rollup_changes x
     WHERE x.rollup = r.storage
       AND tscoll._rollup_next(r.unit, r.seconds, x.bucket) <= now - make_interval(secs => seconds::double precision);
    RETURN expired;
END
$$;

-- A collection's rollups refreshed, then expired (the TTL pass, as the
-- collection's owner; READ COMMITTED, as a refresh needs): sources before
-- the rollups built on them. True when every one was refreshed: a refresh
-- waits for writers briefly here (it holds the collection's writers behind
-- the waiting lock), and the collection does not expire until its rollups
-- have stored what expires.
CREATE FUNCTION tscoll._maintain_rollups(collection regclass, now timestamptz) RETURNS boolean
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS
$$
DECLARE
    r tscoll.rollups;
    refreshed boolean := true;
BEGIN
    FOR r IN SELECT * FROM tscoll.rollups x
              WHERE x.collection = _maintain_rollups.collection AND tscoll._rollup_row_valid(x)
              ORDER BY x.storage::oid LOOP
        IF tscoll._refresh_rollup(r.storage, false, false) IS NULL THEN
            refreshed := false;
        END IF;
        PERFORM tscoll._expire_rollup(r, now);
    END LOOP;
    RETURN refreshed;
END
$$;

CREATE FUNCTION tscoll._create_rollup(name text, source regclass, every text, group_by jsonb,
                                      aggregates jsonb, options jsonb, creation_schema text)
    RETURNS regclass LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS
$$
#variable_conflict use_variable
DECLARE
    target record;
    c tscoll.collections;
    s tscoll.rollups;
    r tscoll.rollups;
    stride record;
    storage_name text;
    owner_name name;
    columns text[];
    bad text;
    missing record;
BEGIN
    IF name IS NULL OR source IS NULL OR every IS NULL THEN
        RAISE EXCEPTION 'invalid rollup: name, source and every must not be NULL' USING ERRCODE = '22023';
    END IF;
    SELECT * INTO target FROM tscoll._split_name(name, creation_schema);
    IF target.schema_name = 'tscoll' THEN
        RAISE EXCEPTION 'cannot create a rollup in the schema of the tscoll extension'
            USING ERRCODE = '42501';
    END IF;
    storage_name := 'system.rollups.' || target.rel_name;
    IF octet_length(storage_name || '.state') > 63 THEN
        RAISE EXCEPTION 'rollup name "%" is too long', target.rel_name
            USING ERRCODE = '42622', HINT = 'Use a rollup name of at most 42 bytes.';
    END IF;
    IF to_regclass(format('%I.%I', target.schema_name, target.rel_name)) IS NOT NULL THEN
        RAISE EXCEPTION 'relation "%" already exists', target.rel_name USING ERRCODE = '42P07';
    END IF;
    IF to_regclass(format('%I.%I', target.schema_name, storage_name)) IS NOT NULL
       OR to_regclass(format('%I.%I', target.schema_name, storage_name || '.state')) IS NOT NULL THEN
        RAISE EXCEPTION 'relation "%" already exists', storage_name
            USING ERRCODE = '42P07', HINT = 'A rollup''s tables are named "system.rollups.<rollup>".';
    END IF;

    SELECT * INTO s FROM tscoll.rollups x WHERE x.rollup = source;
    IF FOUND THEN
        SELECT * INTO c FROM tscoll.collections x WHERE x.view = s.collection;
    ELSE
        SELECT * INTO c FROM tscoll.collections x WHERE x.view = source;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'invalid rollup source: % is neither a time-series collection nor a rollup',
                            source USING ERRCODE = '22023';
        END IF;
    END IF;
    IF NOT coalesce(tscoll._owns(c.view), false) THEN
        RAISE EXCEPTION 'must be owner of time-series collection %', c.view USING ERRCODE = '42501';
    END IF;
    PERFORM tscoll._check_not_distributed(c, 'create a rollup');

    stride := tscoll._rollup_stride(every);
    IF s.rollup IS NOT NULL
       AND NOT tscoll._rollup_coarser(stride.unit, stride.seconds, s.unit, s.seconds) THEN
        RAISE EXCEPTION 'invalid rollup interval: % is not a multiple of the source rollup''s %',
                        quote_literal(every), quote_literal(s.every)
            USING ERRCODE = '22023';
    END IF;

    -- group_by: NULL, or an array of distinct non-empty paths in the meta field
    IF group_by IS NOT NULL AND (jsonb_typeof(group_by) <> 'array'
           OR EXISTS (SELECT FROM jsonb_array_elements(group_by) g
                       WHERE jsonb_typeof(g) <> 'string' OR g #>> '{}' = ''
                          OR g #>> '{}' LIKE '.%' OR g #>> '{}' LIKE '%.' OR g #>> '{}' LIKE '%..%')
           OR (SELECT count(DISTINCT g) <> count(*) FROM jsonb_array_elements(group_by) g)) THEN
        RAISE EXCEPTION 'invalid rollup group_by: %', group_by
            USING ERRCODE = '22023', HINT = 'Give a JSON array of paths in the meta field, or NULL for the whole meta value.';
    END IF;
    -- without a meta field, the whole meta value is no grouping
    IF c.meta_field IS NULL AND group_by IS NULL THEN
        group_by := '[]';
    END IF;
    IF c.meta_field IS NULL AND jsonb_array_length(group_by) > 0 THEN
        RAISE EXCEPTION 'invalid rollup group_by: collection % has no meta field', c.view
            USING ERRCODE = '22023', HINT = 'Group by [] (no grouping).';
    END IF;
    IF s.rollup IS NOT NULL THEN
        IF s.group_by IS NOT NULL AND (group_by IS NULL
               OR EXISTS (SELECT FROM jsonb_array_elements(group_by) g WHERE NOT s.group_by @> jsonb_build_array(g))) THEN
            RAISE EXCEPTION 'invalid rollup group_by: % groups by fields the source rollup % does not',
                            coalesce(group_by::text, 'the whole meta value'), source
                USING ERRCODE = '22023';
        END IF;
    END IF;

    -- aggregates: {"<field>": ["count", "sum", "min", "max", "avg", "first", "last"]}
    IF aggregates IS NULL OR jsonb_typeof(aggregates) <> 'object' THEN
        RAISE EXCEPTION 'invalid rollup aggregates: %', coalesce(aggregates::text, 'NULL')
            USING ERRCODE = '22023', HINT = 'Give {"<field>": ["count", "sum", "min", "max", "avg", "first", "last"]}.';
    END IF;
    SELECT f.key INTO bad FROM jsonb_each(aggregates) f
     WHERE f.key = '' OR f.key IN (c.time_field, c.meta_field) OR f.key LIKE (c.meta_field || '.%')
        OR f.key LIKE '.%' OR f.key LIKE '%.' OR f.key LIKE '%..%'
        OR jsonb_typeof(f.value) <> 'array' OR jsonb_array_length(f.value) = 0
        OR EXISTS (SELECT FROM jsonb_array_elements(f.value) a
                    WHERE jsonb_typeof(a) <> 'string'
                       OR a #>> '{}' NOT IN ('count', 'sum', 'min', 'max', 'avg', 'first', 'last'))
        OR (SELECT count(DISTINCT a) <> count(*) FROM jsonb_array_elements(f.value) a)
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'invalid rollup aggregates for field "%": %', bad, aggregates -> bad
            USING ERRCODE = '22023',
                  HINT = 'Aggregate measurement fields (not the time or meta field) with count, sum, min, max, avg, first or last.';
    END IF;
    IF s.rollup IS NOT NULL THEN
        SELECT st.field, st.state INTO missing
          FROM tscoll._rollup_states(aggregates) st
         WHERE NOT EXISTS (SELECT FROM tscoll._rollup_states(s.aggregates) x
                            WHERE x.field = st.field AND x.state = st.state)
         LIMIT 1;
        IF FOUND THEN
            RAISE EXCEPTION 'invalid rollup aggregates: the source rollup % keeps no % of field "%"',
                            source, CASE missing.state WHEN 'n' THEN 'count' ELSE missing.state END,
                            missing.field
                USING ERRCODE = '22023',
                      DETAIL = format('It aggregates %s as %s.', missing.field,
                                      coalesce(s.aggregates -> missing.field, '[]')),
                      HINT = 'avg needs the source''s avg, or its sum and count; the others need the same aggregate.';
        END IF;
    END IF;

    IF options IS NULL OR jsonb_typeof(options) <> 'object'
       OR EXISTS (SELECT FROM jsonb_object_keys(options) k WHERE k <> 'expireAfterSeconds')
       OR (options ? 'expireAfterSeconds'
           AND (jsonb_typeof(options -> 'expireAfterSeconds') <> 'number'
                OR (options ->> 'expireAfterSeconds')::numeric < 0
                OR (options ->> 'expireAfterSeconds')::numeric <> trunc((options ->> 'expireAfterSeconds')::numeric))) THEN
        RAISE EXCEPTION 'invalid rollup options: %', coalesce(options::text, 'NULL')
            USING ERRCODE = '22023', HINT = 'The only option is {"expireAfterSeconds": <non-negative integer>}.';
    END IF;

    -- The view's column names must be distinct.
    SELECT array_agg(n) INTO columns FROM (
        SELECT c.time_field AS n
        UNION ALL SELECT coalesce(g #>> '{}', c.meta_field)
          FROM jsonb_array_elements(coalesce(group_by, jsonb_build_array(NULL))) g
         WHERE group_by IS NULL OR jsonb_array_length(group_by) > 0
        UNION ALL SELECT 'count'
        UNION ALL SELECT f.key || '_' || (a #>> '{}')
          FROM jsonb_each(aggregates) f, jsonb_array_elements(f.value) a) x;
    IF (SELECT count(DISTINCT n) <> count(*) FROM unnest(columns) n) THEN
        RAISE EXCEPTION 'invalid rollup: its columns would not have distinct names: %',
                        array_to_string(columns, ', ')
            USING ERRCODE = '22023';
    END IF;

    -- No write to the collection runs while its rollup is created: writers
    -- that started before are done, and those after see its triggers.
    EXECUTE format('LOCK TABLE %s IN SHARE MODE', c.view);
    EXECUTE format('LOCK TABLE %s IN SHARE MODE', c.bucket_table);
    owner_name := (SELECT rolname FROM pg_roles, pg_class WHERE pg_class.oid = c.view AND pg_roles.oid = relowner);

    r.collection := c.view;
    r.source := source;
    r.every := every;
    r.unit := stride.unit;
    r.seconds := stride.seconds;
    r.group_by := group_by;
    r.aggregates := aggregates;
    r.options := options;
    EXECUTE format('CREATE TABLE %I.%I (%s)', target.schema_name, storage_name,
                   tscoll._rollup_state_columns(r));
    EXECUTE format('CREATE INDEX ON %I.%I (%I)', target.schema_name, storage_name, c.time_field);
    EXECUTE format('COMMENT ON TABLE %I.%I IS %L', target.schema_name, storage_name,
                   format('stored states of the rollup %I.%I', target.schema_name, target.rel_name));
    r.storage := format('%I.%I', target.schema_name, storage_name)::regclass;
    r.state := tscoll._define_rollup_views(r, target.schema_name, target.rel_name);
    r.rollup := format('%I.%I', target.schema_name, target.rel_name)::regclass;
    INSERT INTO tscoll.rollups SELECT r.*;
    -- Read by whoever may read the collection (the state view checks).
    EXECUTE format('GRANT SELECT ON %s, %s TO PUBLIC', r.rollup, r.state);
    EXECUTE format('ALTER TABLE %s OWNER TO %I', r.storage, owner_name);
    EXECUTE format('ALTER VIEW %s OWNER TO %I', r.state, owner_name);
    EXECUTE format('ALTER VIEW %s OWNER TO %I', r.rollup, owner_name);
    PERFORM tscoll._rollups_changed(c.view);
    -- Every bucket stored now, as the collection's writers left it.
    PERFORM tscoll._refresh_rollup(r.storage, true);
    RETURN r.rollup;
END
$$;

CREATE FUNCTION tscoll.create_rollup(name text, source regclass, every text,
                                     group_by jsonb DEFAULT NULL, aggregates jsonb DEFAULT '{}',
                                     options jsonb DEFAULT '{}') RETURNS regclass
    LANGUAGE sql AS
$$ SELECT tscoll._create_rollup(name, source, every, group_by, aggregates, options,
                                pg_catalog.current_schema()) $$;
COMMENT ON FUNCTION tscoll.create_rollup(text, regclass, text, jsonb, jsonb, jsonb) IS
    'creates a rollup: aggregates of a collection per time bucket and group, kept by tscoll';

CREATE FUNCTION tscoll.list_rollups() RETURNS SETOF jsonb LANGUAGE sql STABLE AS
$$
-- names as the caller's search_path prints them
SELECT pg_catalog.jsonb_build_object('name', r.rollup::text, 'source', r.source::text,
                                     'every', r.every, 'groupBy', r.group_by,
                                     'aggregates', r.aggregates, 'options', r.options)
  FROM tscoll.rollups r
 WHERE pg_catalog.has_table_privilege(r.collection, 'SELECT')
 ORDER BY r.rollup::text COLLATE "C"
$$;
COMMENT ON FUNCTION tscoll.list_rollups() IS 'the rollups whose collection the caller may read';

-- Drops a rollup's objects and forgets it; the collection's triggers go
-- with its last rollup.
CREATE FUNCTION tscoll._forget_rollup(r tscoll.rollups) RETURNS void
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS
$$
BEGIN
    DELETE FROM tscoll.rollups x WHERE x.rollup = r.rollup;
    DELETE FROM tscoll.rollup_changes x WHERE x.rollup = r.storage;
    IF EXISTS (SELECT FROM pg_class WHERE oid = r.rollup) THEN
        EXECUTE format('DROP VIEW %s', r.rollup);
    END IF;
    IF EXISTS (SELECT FROM pg_class WHERE oid = r.state) THEN
        EXECUTE format('DROP VIEW %s', r.state);
    END IF;
    IF EXISTS (SELECT FROM pg_class WHERE oid = r.storage) THEN
        EXECUTE format('DROP TABLE %s', r.storage);
    END IF;
    IF EXISTS (SELECT FROM pg_class WHERE oid = r.collection) THEN
        PERFORM tscoll._rollups_changed(r.collection);
    END IF;
END
$$;

CREATE FUNCTION tscoll._drop_rollup(rollup regclass, name text) RETURNS void
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS
$$
DECLARE
    r tscoll.rollups;
    dependent regclass;
BEGIN
    SELECT * INTO r FROM tscoll.rollups x WHERE x.rollup = _drop_rollup.rollup;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'rollup "%" does not exist', name USING ERRCODE = '42P01';
    END IF;
    IF NOT coalesce(tscoll._owns(r.rollup), false) THEN
        RAISE EXCEPTION 'must be owner of rollup %', r.rollup USING ERRCODE = '42501';
    END IF;
    SELECT x.rollup INTO dependent FROM tscoll.rollups x WHERE x.source = r.rollup LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'cannot drop rollup % because rollup % is built on it', r.rollup, dependent
            USING ERRCODE = '2BP01', HINT = 'Drop the rollups built on it first.';
    END IF;
    PERFORM tscoll._forget_rollup(r);
END
$$;

CREATE FUNCTION tscoll.drop_rollup(name regclass) RETURNS void LANGUAGE sql AS
$$ SELECT tscoll._drop_rollup(name, name::text) $$;
COMMENT ON FUNCTION tscoll.drop_rollup(regclass) IS 'drops a rollup: its views, table and catalog row';

-- Refreshes the caller's rollups (all, or `rollup`); returns the buckets
-- computed. The TTL monitor refreshes every rollup on each pass.
CREATE FUNCTION tscoll.refresh_rollups(rollup regclass DEFAULT NULL) RETURNS bigint
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS
$$
DECLARE
    r tscoll.rollups;
    total bigint := 0;
BEGIN
    IF rollup IS NOT NULL AND NOT EXISTS (SELECT FROM tscoll.rollups x WHERE x.rollup = refresh_rollups.rollup) THEN
        RAISE EXCEPTION 'rollup "%" does not exist', rollup USING ERRCODE = '42P01';
    END IF;
    FOR r IN SELECT * FROM tscoll.rollups x
              WHERE (refresh_rollups.rollup IS NULL OR x.rollup = refresh_rollups.rollup)
                AND coalesce(tscoll._owns(x.storage), false)
              ORDER BY x.storage::oid LOOP
        total := total + tscoll._refresh_rollup(r.storage);
    END LOOP;
    RETURN total;
END
$$;
COMMENT ON FUNCTION tscoll.refresh_rollups(regclass) IS
    'stores the buckets of the caller''s rollups that are computed from the source at each read';

-- Forgets (and drops what is left of) the rollups that `relation` is part
-- of or feeds: a rollup's view, state view or table, its source or its
-- collection; the rollups built on them go too.
CREATE FUNCTION tscoll._forget_rollups_of(relation oid) RETURNS void
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS
$$
DECLARE
    r tscoll.rollups;
BEGIN
    LOOP
        SELECT * INTO r FROM tscoll.rollups x
         WHERE relation IN (x.rollup, x.state, x.storage, x.source, x.collection)
            OR NOT EXISTS (SELECT FROM pg_class WHERE oid = x.source)
         ORDER BY EXISTS (SELECT FROM tscoll.rollups y WHERE y.source = x.rollup)
         LIMIT 1;
        EXIT WHEN NOT FOUND;
        -- a rollup built on this one first
        WHILE EXISTS (SELECT FROM tscoll.rollups y WHERE y.source = r.rollup) LOOP
            SELECT * INTO r FROM tscoll.rollups y WHERE y.source = r.rollup LIMIT 1;
        END LOOP;
        PERFORM tscoll._forget_rollup(r);
    END LOOP;
END
$$;

CREATE OR REPLACE FUNCTION tscoll._expiring_collections() RETURNS SETOF regclass
    LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS
$$
SELECT c.view FROM tscoll.collections c
 WHERE c.expire_after_seconds IS NOT NULL
    OR EXISTS (SELECT FROM tscoll.indexes i
                WHERE i.collection = c.view AND i.options ? 'expireAfterSeconds')
    OR EXISTS (SELECT FROM tscoll.rollups r WHERE r.collection = c.view)
 ORDER BY c.view::text
$$;

CREATE OR REPLACE FUNCTION tscoll._expire_collection(collection regclass, now timestamptz,
                                          batch_size integer DEFAULT NULL) RETURNS bigint
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS
$$
DECLARE
    c tscoll.collections;
    i tscoll.indexes;
    total bigint := 0;
BEGIN
    SELECT * INTO c FROM tscoll.collections WHERE view = collection;
    IF NOT FOUND THEN
        RETURN 0;
    END IF;
    -- Rollups store what they will keep before it expires here.
    IF NOT tscoll._maintain_rollups(c.view, now) THEN
        RETURN 0;
    END IF;
    IF c.expire_after_seconds IS NOT NULL THEN
        total := total + tscoll._expire(c, now, c.expire_after_seconds, NULL, batch_size);
    END IF;
    FOR i IN SELECT * FROM tscoll.indexes x
              WHERE x.collection = c.view AND x.options ? 'expireAfterSeconds' LOOP
        total := total + tscoll._expire(c, now, (i.options->>'expireAfterSeconds')::bigint,
            tscoll._translate_index(tscoll._key_pairs(i.keys), i.options,
                                    c.time_field, c.meta_field)->>'predicate', batch_size);
    END LOOP;
    RETURN total;
END
$$;

CREATE OR REPLACE FUNCTION tscoll._on_sql_drop() RETURNS event_trigger
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS
$$
DECLARE
    dropped record;
    c tscoll.collections;
BEGIN
    FOR dropped IN
        SELECT objid FROM pg_event_trigger_dropped_objects()
         WHERE classid = 'pg_class'::regclass AND objsubid = 0
    LOOP
        PERFORM tscoll._forget_rollups_of(dropped.objid);
        FOR c IN DELETE FROM tscoll.collections
                  WHERE view = dropped.objid OR bucket_table = dropped.objid RETURNING *
        LOOP
            PERFORM tscoll._forget_rollups_of(c.view);
            IF EXISTS (SELECT FROM pg_class WHERE oid = c.view) THEN
                EXECUTE format('DROP VIEW %s', c.view);
            END IF;
            IF EXISTS (SELECT FROM pg_class WHERE oid = c.bucket_table) THEN
                EXECUTE format('DROP TABLE %s', c.bucket_table);
            END IF;
            PERFORM tscoll._forget_bucket_table(c.bucket_table);
        END LOOP;
    END LOOP;
END
$$;

CREATE OR REPLACE FUNCTION tscoll._sync_with_view(c tscoll.collections) RETURNS void
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS
$$
DECLARE
    r record;  -- of tscoll.rollups
    v record;
    b record;
    expected text;
BEGIN
    SELECT relname, relnamespace, relowner INTO v FROM pg_class WHERE oid = c.view;
    SELECT relname, relnamespace, relowner INTO b FROM pg_class WHERE oid = c.bucket_table;
    expected := tscoll._bucket_table_name(v.relname);
    IF octet_length(expected) > 63 THEN
        RAISE EXCEPTION 'collection name "%" is too long', v.relname
            USING ERRCODE = '42622',
                  HINT = 'A collection name has at most 48 bytes, for its bucket table''s name.';
    END IF;
    IF b.relnamespace <> v.relnamespace THEN
        EXECUTE format('ALTER TABLE %s SET SCHEMA %I', c.bucket_table,
                       (SELECT nspname FROM pg_namespace WHERE oid = v.relnamespace));
    END IF;
    IF b.relname <> expected THEN
        EXECUTE format('ALTER TABLE %s RENAME TO %I', c.bucket_table, expected);
    END IF;
    IF b.relowner <> v.relowner THEN
        EXECUTE format('ALTER TABLE %s OWNER TO %I', c.bucket_table,
                       (SELECT rolname FROM pg_roles WHERE oid = v.relowner));
    END IF;
    -- and its rollups
    FOR r IN SELECT * FROM tscoll.rollups x
              WHERE x.collection = c.view
                AND EXISTS (SELECT FROM pg_class WHERE oid = x.storage AND relowner <> v.relowner) LOOP
        EXECUTE format('ALTER TABLE %s OWNER TO %I', r.storage,
                       (SELECT rolname FROM pg_roles WHERE oid = v.relowner));
        EXECUTE format('ALTER VIEW %s OWNER TO %I', r.state,
                       (SELECT rolname FROM pg_roles WHERE oid = v.relowner));
        EXECUTE format('ALTER VIEW %s OWNER TO %I', r.rollup,
                       (SELECT rolname FROM pg_roles WHERE oid = v.relowner));
    END LOOP;
END
$$;


-- The views of existing collections keep their columns; their rules become
-- 0.2.0's (a meta update and a bucket delete the rules can do themselves).
-- A catalog row whose view is gone (dropped with event triggers off) has
-- none to give rules to.
DO $$
DECLARE
    c tscoll.collections;
BEGIN
    FOR c IN SELECT * FROM tscoll.collections x
              WHERE EXISTS (SELECT FROM pg_catalog.pg_class r WHERE r.oid = x.view) LOOP
        EXECUTE pg_catalog.format('DROP RULE IF EXISTS untranslated_delete ON %s', c.view);
        IF c.meta_field IS NOT NULL THEN
            EXECUTE pg_catalog.format('DROP RULE IF EXISTS untranslated_update ON %s', c.view);
        END IF;
        PERFORM tscoll._define_rules(c.view::text, c.bucket_table::text, c.time_field,
                                     c.meta_field, c.fields, '{}');
    END LOOP;
END
$$;

------------------------------------------------------------------------------
-- Scale-out with Citus (doc/REFERENCE.md §2.10, doc/ARCHITECTURE.md "Scale-out").
------------------------------------------------------------------------------

-- A collection's view stays on the coordinator until the collection is
-- distributed (Citus then copies it to the workers): without this, Citus
-- warns at each create_collection that it cannot distribute the view.
ALTER FUNCTION tscoll._create_collection_objects(text, text, jsonb)
    SET citus.enable_ddl_propagation = off;

-- The shard key an _id carries, and the _id a bucket of the series `meta`
-- gets in a distributed collection (ObjectId::series_hash).
CREATE FUNCTION tscoll._series_hash(_id tscoll.objectid) RETURNS integer
    AS 'MODULE_PATHNAME', 'tscoll_series_hash' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION tscoll._with_series_hash(_id tscoll.objectid, meta jsonb) RETURNS tscoll.objectid
    AS 'MODULE_PATHNAME', 'tscoll_with_series_hash' LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- Refuses what a distributed collection cannot do yet.
CREATE FUNCTION tscoll._check_not_distributed(c tscoll.collections, what text) RETURNS void
    LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS
$$
BEGIN
    IF tscoll._is_distributed(c) THEN
        RAISE EXCEPTION 'cannot % of distributed time-series collection %', what, c.view
            USING ERRCODE = '0A000';
    END IF;
END
$$;

CREATE FUNCTION tscoll._check_citus(what text) RETURNS void
    LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS
$$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN
        RAISE EXCEPTION 'cannot % a time-series collection: the citus extension is not installed', what
            USING ERRCODE = '0A000',
                  HINT = 'Install Citus on every node, then CREATE EXTENSION citus and tscoll on each.';
    END IF;
END
$$;

-- The bucket table becomes a Citus distributed table on the shard key
-- series_hash: bytes 4-7 of each bucket's _id, a hash of its series when
-- it was made, so that a series' buckets and tails share a shard and the
-- key never changes (meta updates keep it). Tails are folded first and
-- the buckets' _ids given their series' hash.
CREATE FUNCTION tscoll.distribute_collection(collection regclass, shard_count integer DEFAULT NULL)
    RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS
$$
DECLARE
    c tscoll.collections := tscoll._collection(collection, collection::text);
    pkey name;
BEGIN
    PERFORM tscoll._check_owner(c);
    PERFORM tscoll._check_citus('distribute');
    IF tscoll._is_distributed(c) THEN
        RAISE EXCEPTION 'time-series collection % is already distributed', c.view
            USING ERRCODE = '55000';
    END IF;
    IF shard_count IS NOT NULL AND shard_count < 1 THEN
        RAISE EXCEPTION 'shard_count must be at least 1, not %', shard_count USING ERRCODE = '22023';
    END IF;
    IF EXISTS (SELECT FROM tscoll.rollups r WHERE r.collection = c.view) THEN
        RAISE EXCEPTION 'cannot distribute time-series collection % with rollups', c.view
            USING ERRCODE = '0A000', HINT = 'Drop its rollups first (tscoll.drop_rollup).';
    END IF;
    EXECUTE format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', c.bucket_table);
    PERFORM tscoll._fold_tails(c.view);
    SELECT conname INTO pkey FROM pg_constraint WHERE conrelid = c.bucket_table AND contype = 'p';
    EXECUTE format('ALTER TABLE %s ADD COLUMN series_hash integer', c.bucket_table);
    EXECUTE format('UPDATE %s SET _id = tscoll._with_series_hash(_id, meta)', c.bucket_table);
    EXECUTE format('UPDATE %s SET series_hash = tscoll._series_hash(_id)', c.bucket_table);
    -- Citus's unique constraints hold the shard key.
    EXECUTE format('ALTER TABLE %1$s ALTER COLUMN series_hash SET NOT NULL,
                                 DROP CONSTRAINT %2$I, ADD CONSTRAINT %2$I PRIMARY KEY (_id, series_hash)',
                   c.bucket_table, pkey);
    EXECUTE 'SELECT create_distributed_table($1, ''series_hash'', colocate_with => ''none'',
                                             shard_count => $2)'
        USING c.bucket_table, shard_count;
    EXECUTE 'SELECT truncate_local_data_after_distributing_table($1)' USING c.bucket_table;
END
$$;
COMMENT ON FUNCTION tscoll.distribute_collection(regclass, integer) IS
    'distributes the collection''s buckets over the Citus cluster, a series'' buckets in one shard';

-- The bucket table becomes a local table again, with the same oid (the
-- collection's catalog row, view and indexes name it): its rows are read
-- back, then Citus's metadata and shards removed as a DROP TABLE removes
-- them, and the rows written locally.
CREATE FUNCTION tscoll.undistribute_collection(collection regclass)
    RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS
$$
DECLARE
    c tscoll.collections := tscoll._collection(collection, collection::text);
    t record;
    trigger name;
BEGIN
    PERFORM tscoll._check_owner(c);
    PERFORM tscoll._check_citus('undistribute');
    IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        RAISE EXCEPTION 'undistribute_collection must be run by a superuser'
            USING ERRCODE = '42501',
                  DETAIL = 'It removes the view''s entry from Citus''s pg_dist_object.';
    END IF;
    IF NOT tscoll._is_distributed(c) THEN
        RAISE EXCEPTION 'time-series collection % is not distributed', c.view USING ERRCODE = '55000';
    END IF;
    EXECUTE format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', c.bucket_table);
    SELECT n.nspname, r.relname, k.conname INTO t
      FROM pg_class r JOIN pg_namespace n ON n.oid = r.relnamespace
      JOIN pg_constraint k ON k.conrelid = r.oid AND k.contype = 'p'
     WHERE r.oid = c.bucket_table;
    CREATE TEMPORARY TABLE tscoll_undistributed_rows (_id tscoll.objectid, meta jsonb, control jsonb, data bytea);
    EXECUTE format('INSERT INTO tscoll_undistributed_rows SELECT _id, meta, control, data FROM %s',
                   c.bucket_table);
    EXECUTE 'SELECT master_remove_distributed_table_metadata_from_workers($1, $2, $3)'
        USING c.bucket_table, t.nspname, t.relname;
    EXECUTE 'SELECT citus_drop_all_shards($1, $2, $3, drop_shards_metadata_only => false)'
        USING c.bucket_table, t.nspname, t.relname;
    EXECUTE 'SELECT master_remove_partition_metadata($1, $2, $3)'
        USING c.bucket_table, t.nspname, t.relname;
    -- Citus copied the view to the workers, where the shell table's drop
    -- dropped it. Neither is a distributed object any more; Citus's own
    -- function unmarks only objects that no longer exist.
    EXECUTE 'DELETE FROM pg_catalog.pg_dist_object WHERE classid = $1 AND objid IN ($2, $3)'
        USING 'pg_class'::regclass, c.view, c.bucket_table;
    -- create_distributed_table's TRUNCATE trigger, which DROP TABLE would drop
    FOR trigger IN SELECT tg.tgname FROM pg_trigger tg JOIN pg_proc fn ON fn.oid = tg.tgfoid
                    WHERE tg.tgrelid = c.bucket_table AND fn.proname = 'citus_truncate_trigger' LOOP
        EXECUTE format('DROP TRIGGER %I ON %s', trigger, c.bucket_table);
    END LOOP;
    EXECUTE format('ALTER TABLE %1$s DROP CONSTRAINT %2$I, DROP COLUMN series_hash,
                                 ADD CONSTRAINT %2$I PRIMARY KEY (_id)', c.bucket_table, t.conname);
    EXECUTE format('INSERT INTO %s (_id, meta, control, data) SELECT * FROM tscoll_undistributed_rows',
                   c.bucket_table);
    DROP TABLE tscoll_undistributed_rows;
END
$$;
COMMENT ON FUNCTION tscoll.undistribute_collection(regclass) IS
    'brings a distributed collection''s buckets back into a local bucket table';
-- Citus's removal functions do nothing without it.
ALTER FUNCTION tscoll.undistribute_collection(regclass) SET citus.enable_ddl_propagation = on;
