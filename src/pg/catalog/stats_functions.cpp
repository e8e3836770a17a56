// SQL functions behind tscoll.collection_stats() and tscoll.catalog_stats().
extern "C" {
#include "postgres.h"
#include "access/htup_details.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/inval.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
}

#include "core/bucket_data.hpp"
#include "core/error.hpp"
#include "pg/write/bucket_store.hpp"
#include "pg/catalog/catalog.hpp"
#include "pg/guard.hpp"
#include "pg/types/jsonb_value.hpp"

// tscoll._bucket_counters(collection regclass) RETURNS jsonb: for those
// who may read the collection.
TSCOLL_FUNCTION(tscoll_bucket_counters) {
    tscoll::pg::CollectionInfo info = tscoll::pg::lookup_collection(PG_GETARG_OID(0));
    tscoll::pg::check_view_privilege(info, ACL_SELECT);
    tscoll::Value counters = tscoll::Value::object();
    tscoll::pg::catalog::counters(info.bucket_table).append_to(counters);
    PG_RETURN_JSONB_P(tscoll::pg::value_to_jsonb(counters));
}

// tscoll.catalog_stats() RETURNS jsonb
TSCOLL_FUNCTION(tscoll_catalog_stats) {
    tscoll::pg::catalog::Usage u = tscoll::pg::catalog::usage();
    tscoll::Value stats = tscoll::Value::object();
    stats.add("numOpenBuckets", tscoll::Value::number(static_cast<int64_t>(u.open_buckets)));
    // Between statements every open bucket is idle (no write in progress).
    stats.add("numIdleBuckets", tscoll::Value::number(static_cast<int64_t>(u.open_buckets)));
    stats.add("numArchivedBuckets",
              tscoll::Value::number(static_cast<int64_t>(u.archived_buckets)));
    stats.add("memoryUsage", tscoll::Value::number(static_cast<int64_t>(u.memory)));
    PG_RETURN_JSONB_P(tscoll::pg::value_to_jsonb(stats));
}

// tscoll._data_size(data bytea) RETURNS bigint
TSCOLL_FUNCTION(tscoll_data_size) {
    bytea *data = tscoll::pg::pg_call([&] { return PG_GETARG_BYTEA_PP(0); });
    auto decoded =
        tscoll::BucketData::decode(std::string_view(VARDATA_ANY(data), VARSIZE_ANY_EXHDR(data)));
    PG_RETURN_INT64(static_cast<int64_t>(decoded.size()));
}

// tscoll._bucket_totals(collection regclass, OUT bucket_count bigint, OUT
// measurements bigint, OUT uncompressed bigint, OUT stored bigint): read as
// the bucket table's owner once SELECT on the view is checked
// (doc/REFERENCE.md, Privileges).
// bucket_count leaves out tail rows, which belong to their bucket.
// stored: _id (12 bytes), the two times (16) and the other values as stored.
TSCOLL_FUNCTION(tscoll_bucket_totals) {
    tscoll::pg::CollectionInfo info = tscoll::pg::lookup_collection(PG_GETARG_OID(0));
    tscoll::pg::check_view_privilege(info, ACL_SELECT);
    std::string query =
        "SELECT count(*) FILTER (WHERE NOT control ? 'tail'), "
        "coalesce(sum((control->>'count')::int8), 0)::int8, "
        "       coalesce(sum(tscoll._data_size(data)), 0)::int8, "
        "       coalesce(sum(28 + coalesce(pg_column_size(meta), 0) + pg_column_size(control)"
        "                    + pg_column_size(data)), 0)::int8 FROM " +
        info.bucket_name;
    Datum values[4] = {0, 0, 0, 0};
    bool nulls[4] = {false, false, false, false};
    tscoll::pg::OwnerSession owner(info);
    tscoll::pg::pg_call([&] {
        if (SPI_execute(query.c_str(), true, 1) != SPI_OK_SELECT || SPI_processed != 1)
            elog(ERROR, "counting the buckets of %s failed", info.bucket_name.c_str());
        for (int i = 0; i < 4; i++)
            values[i] =
                SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, i + 1, &nulls[i]);
    });
    owner.finish();
    HeapTuple result = tscoll::pg::pg_call([&] {
        TupleDesc desc = nullptr;
        if (get_call_result_type(fcinfo, nullptr, &desc) != TYPEFUNC_COMPOSITE)
            elog(ERROR, "_bucket_totals must return a record");
        return heap_form_tuple(BlessTupleDesc(desc), values, nulls);
    });
    return HeapTupleGetDatum(result);
}

// tscoll._forget_bucket_table(bucket_table oid): called by the sql_drop
// event trigger once a collection's bucket table is gone.
TSCOLL_FUNCTION(tscoll_forget_bucket_table) {
    Oid bucket_table = PG_GETARG_OID(0);
    if (tscoll::pg::pg_call([&] { return get_rel_name(bucket_table); }) != nullptr)
        throw tscoll::Error(tscoll::ErrorCode::Unsupported,
                            "only a dropped bucket table can be forgotten");
    tscoll::pg::catalog::forget_collection(bucket_table);
    PG_RETURN_VOID();
}

// tscoll._forget_series(bucket_table regclass): after coll_mod changes the
// bucketing, so that the next measurement does not go to a bucket opened
// under the old parameters. For the table's owner.
TSCOLL_FUNCTION(tscoll_forget_series) {
    Oid bucket_table = PG_GETARG_OID(0);
    tscoll::pg::pg_call([&] {
        if (!pg_class_ownercheck(bucket_table, GetUserId()))
            aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_TABLE, get_rel_name(bucket_table));
    });
    tscoll::pg::catalog::forget_series(bucket_table);
    // Plans that prune with the old span are made again (plan/read_plan.cpp).
    tscoll::pg::pg_call([&] { CacheInvalidateRelcacheByRelid(bucket_table); });
    PG_RETURN_VOID();
}
