#include "pg/write/bucket_store.hpp"

extern "C" {
#include "catalog/pg_type_d.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
}

#include "core/error.hpp"
#include "pg/guard.hpp"
#include "pg/types/jsonb_value.hpp"
#include "pg/pg_time.hpp"
#include "pg/search_path.hpp"

namespace tscoll::pg {

namespace {

constexpr int kMaxReopenCandidates = 8;

// Runs a query with the latest snapshot; returns the number of rows.
uint64 run(const char *query, int nargs, Oid *types, Datum *values, const char *nulls, int limit) {
    return pg_call([&] {
        SPIPlanPtr plan = SPI_prepare(query, nargs, types);
        if (plan == nullptr)
            elog(ERROR, "SPI_prepare failed for \"%s\": %s", query,
                 SPI_result_code_string(SPI_result));
        int rc = SPI_execute_snapshot(plan, values, nulls, GetLatestSnapshot(), InvalidSnapshot,
                                      false, false, limit);
        if (rc < 0)
            elog(ERROR, "SPI_execute_snapshot failed for \"%s\": %s", query,
                 SPI_result_code_string(rc));
        SPI_freeplan(plan);
        return SPI_processed;
    });
}

Datum objectid_datum(const ObjectId &id, MemoryContext context = CurrentMemoryContext) {
    auto *copy = static_cast<ObjectId *>(
        pg_call([&] { return MemoryContextAlloc(context, sizeof(ObjectId)); }));
    *copy = id;
    return PointerGetDatum(copy);
}

}  // namespace

Datum bytea_datum(const std::string &bytes, MemoryContext context) {
    auto *result = static_cast<bytea *>(
        pg_call([&] { return MemoryContextAlloc(context, VARHDRSZ + bytes.size()); }));
    SET_VARSIZE(result, VARHDRSZ + bytes.size());
    memcpy(VARDATA(result), bytes.data(), bytes.size());
    return PointerGetDatum(result);
}

// control as jsonb, built in `context`.
Jsonb *control_jsonb(const Bucket &bucket, MemoryContext context) {
    MemoryContext old = MemoryContextSwitchTo(context);
    Jsonb *result = nullptr;
    try {
        result = value_to_jsonb(bucket.control());
    } catch (...) {
        MemoryContextSwitchTo(old);
        throw;
    }
    MemoryContextSwitchTo(old);
    return result;
}

namespace {

// Runs `decode`, naming the bucket in its errors (SPEC §4.4: XX001).
template <typename Decode>
auto naming_bucket(const ObjectId &id, Decode decode) -> decltype(decode()) {
    try {
        return decode();
    } catch (const Error &e) {
        throw Error(e.code(), e.what(), "Bucket _id " + id.to_hex() + ".",
                    "Restore the bucket from a backup, or delete it from the bucket table.");
    }
}

std::string_view bytes_of(bytea *data) {
    return std::string_view(VARDATA_ANY(data), VARSIZE_ANY_EXHDR(data));
}

}  // namespace

BucketData decode_bucket(const ObjectId &id, bytea *data, const std::vector<std::string> *wanted,
                         const std::optional<BucketData::TimeWindow> &window) {
    return naming_bucket(id, [&] { return BucketData::decode(bytes_of(data), wanted, window); });
}

Float8Columns decode_bucket_float8(const ObjectId &id, bytea *data, const std::string &time_field,
                                   const std::vector<std::string> &fields) {
    return naming_bucket(
        id, [&] { return BucketData::decode_float8(bytes_of(data), time_field, fields); });
}

OwnerSession::OwnerSession(const CollectionInfo &info) {
    pg_call([&] {
        if (SPI_connect() != SPI_OK_CONNECT)
            elog(ERROR, "SPI_connect failed");
        GetUserIdAndSecContext(&saved_user_, &saved_security_);
        SetUserIdAndSecContext(info.owner, saved_security_ | SECURITY_LOCAL_USERID_CHANGE);
        search_path_level_ = push_catalog_search_path();
    });
}

void OwnerSession::finish() {
    pg_call([&] {
        pop_search_path(search_path_level_);
        SetUserIdAndSecContext(saved_user_, saved_security_);
        SPI_finish();
    });
}

// INSERT on the view was checked by the executor (or by insert_many).
BucketStore::BucketStore(const CollectionInfo &info) : info_(info), owner_(info) {
    row_context_ = pg_call([] {
        return AllocSetContextCreate(CurrentMemoryContext, "tscoll bucket row",
                                     ALLOCSET_DEFAULT_SIZES);
    });
}

void BucketStore::finish() {
    owner_.finish();
}

std::optional<StoredBucket> BucketStore::load(const ObjectId &id, Jsonb *meta) {
    // The meta test: a concurrent UPDATE through the view may have moved
    // the bucket to another series since the catalog learnt of it.
    std::string query = "SELECT min_time, data, coalesce(control->'closed' = 'true', false) FROM " +
                        info_.bucket_name + " WHERE _id = $1 AND " +
                        (meta ? "meta = $2" : "meta IS NULL") + " FOR UPDATE SKIP LOCKED";
    Oid types[] = {pg_call([&] { return get_atttype(info_.bucket_table, 1); }), JSONBOID};
    Datum values[] = {objectid_datum(id), PointerGetDatum(meta)};
    if (run(query.c_str(), meta ? 2 : 1, types, values, nullptr, 1) != 1)
        return std::nullopt;
    HeapTuple row = SPI_tuptable->vals[0];
    TupleDesc desc = SPI_tuptable->tupdesc;
    bool isnull = false;
    if (DatumGetBool(SPI_getbinval(row, desc, 3, &isnull)))
        return std::nullopt;
    TimestampTz min_time = DatumGetTimestampTz(SPI_getbinval(row, desc, 1, &isnull));
    Datum data = SPI_getbinval(row, desc, 2, &isnull);
    bytea *raw = pg_call([&] { return DatumGetByteaPP(data); });
    try {
        BucketData decoded = decode_bucket(id, raw);
        return StoredBucket{id, to_unix_micros(min_time), std::move(decoded)};
    } catch (const Error &e) {
        throw Error(e.code(), e.what(),
                    "Bucket " + id.to_hex() + " of collection " + info_.view_name + ".");
    }
}

std::vector<catalog::BucketRef> BucketStore::reopen_candidates(Jsonb *meta, UnixMicros t) {
    std::string query = "SELECT _id, min_time FROM " + info_.bucket_name + " WHERE " +
                        (meta ? "meta = $3" : "meta IS NULL") +
                        " AND min_time <= $1 AND min_time > $2" +
                        // not full: the format byte's flag (doc/BUCKET_FORMAT.md)
                        " AND get_byte(data, 4) < 128 ORDER BY min_time DESC LIMIT " +
                        std::to_string(kMaxReopenCandidates);
    Oid types[] = {TIMESTAMPTZOID, TIMESTAMPTZOID, JSONBOID};
    Datum values[] = {TimestampTzGetDatum(to_timestamptz(t)),
                      TimestampTzGetDatum(to_timestamptz(t - info_.max_span_seconds * 1000000)),
                      PointerGetDatum(meta)};
    uint64 rows = run(query.c_str(), meta ? 3 : 2, types, values, nullptr, 0);
    std::vector<catalog::BucketRef> refs;
    for (uint64 i = 0; i < rows; i++) {
        bool isnull = false;
        Datum id = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull);
        Datum min_time = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2, &isnull);
        refs.push_back({*reinterpret_cast<const ObjectId *>(DatumGetPointer(id)),
                        to_unix_micros(DatumGetTimestampTz(min_time))});
    }
    return refs;
}

// Writes a bucket row. A btree entry holds about 2.7 kB: a larger meta
// value, or control value of an indexed field, cannot be indexed, and
// PostgreSQL's own message names neither the collection nor what to do.
uint64 BucketStore::write(const char *query, int nargs, Oid *types, Datum *values,
                          const char *nulls) {
    try {
        return run(query, nargs, types, values, nulls, 0);
    } catch (const PgError &e) {
        if (e.edata()->sqlerrcode != ERRCODE_PROGRAM_LIMIT_EXCEEDED ||
            e.edata()->constraint_name == nullptr)
            throw;
        std::string hint = "Index entries hold at most 2704 bytes; keep large values out of ";
        hint += info_.meta_field.empty()
                    ? "indexed fields."
                    : "the meta field \"" + info_.meta_field + "\" and out of indexed fields.";
        throw Error(ErrorCode::TooLarge,
                    "a bucket of time-series collection \"" + info_.view_name +
                        "\" is too large for its index \"" + e.edata()->constraint_name + "\"",
                    e.edata()->message, hint);
    }
}

void BucketStore::insert(const Bucket &bucket, Jsonb *meta) {
    std::string query =
        "INSERT INTO " + info_.bucket_name + " (_id, meta, control, data) VALUES ($1, $2, $3, $4)";
    Oid types[] = {pg_call([&] { return get_atttype(info_.bucket_table, 1); }), JSONBOID, JSONBOID,
                   BYTEAOID};
    Datum values[] = {objectid_datum(bucket.id(), row_context_), PointerGetDatum(meta),
                      PointerGetDatum(control_jsonb(bucket, row_context_)),
                      bytea_datum(bucket.data().encode(), row_context_)};
    const char nulls[] = {' ', meta ? ' ' : 'n', ' ', ' '};
    write(query.c_str(), 4, types, values, nulls);
    MemoryContextReset(row_context_);
}

void BucketStore::update(const Bucket &bucket) {
    std::string query =
        "UPDATE " + info_.bucket_name + " SET control = $2, data = $3 WHERE _id = $1";
    Oid types[] = {pg_call([&] { return get_atttype(info_.bucket_table, 1); }), JSONBOID, BYTEAOID};
    Datum values[] = {objectid_datum(bucket.id(), row_context_),
                      PointerGetDatum(control_jsonb(bucket, row_context_)),
                      bytea_datum(bucket.data().encode(), row_context_)};
    if (write(query.c_str(), 3, types, values, nullptr) != 1)
        throw Error(ErrorCode::Internal,
                    "bucket " + bucket.id().to_hex() + " vanished while locked");
    MemoryContextReset(row_context_);
}

}  // namespace tscoll::pg
