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
-- whose only aggregate is max(time) (control.max is exact).
CREATE OR REPLACE FUNCTION tscoll._bucket_latest(max_time timestamptz)
    RETURNS TABLE ("time" timestamptz, doc jsonb)
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE ROWS 1
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
    -- pruning can use them; they can never disagree with it.
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
        ) USING tscoll_buckets', buckets, time_field, time_field);
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

CREATE OR REPLACE FUNCTION tscoll.collection_stats(collection regclass) RETURNS jsonb
    LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS
$$
DECLARE
    c tscoll.collections := tscoll._collection(collection, collection::text);
    bucket_count bigint;
    measurements bigint;
    uncompressed bigint;
    stored bigint;
    total bigint := pg_total_relation_size(c.bucket_table);
    ns text;
BEGIN
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
        || CASE WHEN c.fields = '{}' THEN '{}' ELSE jsonb_build_object('fields', c.fields) END;
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
