// SQL functions behind tscoll.collection_stats() and tscoll.catalog_stats().
extern "C" {
#include "postgres.h"
#include "utils/jsonb.h"
}

#include "core/bucket_data.hpp"
#include "pg/catalog.hpp"
#include "pg/guard.hpp"
#include "pg/jsonb_value.hpp"

// tscoll._bucket_counters(bucket_table regclass) RETURNS jsonb
TSCOLL_FUNCTION(tscoll_bucket_counters) {
    tscoll::Value counters = tscoll::Value::object();
    tscoll::pg::catalog::counters(PG_GETARG_OID(0)).append_to(counters);
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
    auto decoded = tscoll::BucketData::decode(
        std::string_view(VARDATA_ANY(data), VARSIZE_ANY_EXHDR(data)));
    PG_RETURN_INT64(static_cast<int64_t>(decoded.size()));
}
