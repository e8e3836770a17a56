// Reading buckets back: the view's unpacking function and tscoll.buckets().
extern "C" {
#include "postgres.h"
#include "catalog/pg_type_d.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"
}

#include <algorithm>

#include "core/bucket_data.hpp"
#include "core/error.hpp"
#include "pg/bucket_store.hpp"
#include "pg/guard.hpp"
#include "pg/jsonb_value.hpp"
#include "pg/pg_time.hpp"

namespace {

using tscoll::BucketData;
using tscoll::Error;
using tscoll::Value;
using tscoll::pg::decode_bucket;

// The time field is the canonical text; other dates stay {"$date": ...}.
void render_time_field(Value &measurement, const std::string &time_field) {
    for (tscoll::Member &m : measurement.as_object())
        if (m.key == time_field && m.value.is(Value::Kind::Date))
            m.value = Value::string(tscoll::format_canonical_date(m.value.as_date()));
}

std::string text_arg(FunctionCallInfo fcinfo, int n) {
    text *t = PG_GETARG_TEXT_PP(n);
    return std::string(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));
}

}  // namespace

// tscoll._unpack(_id objectid, meta jsonb, data bytea, time_field text,
// meta_field text) RETURNS TABLE (time timestamptz, doc jsonb)
TSCOLL_FUNCTION(tscoll_unpack) {
    if (PG_ARGISNULL(0) || PG_ARGISNULL(2) || PG_ARGISNULL(3))
        return PointerGetDatum(nullptr);
    auto *rsinfo = reinterpret_cast<ReturnSetInfo *>(fcinfo->resultinfo);
    tscoll::pg::pg_call([&] { InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC); });
    const auto *id = reinterpret_cast<const tscoll::ObjectId *>(PG_GETARG_POINTER(0));
    bytea *data = tscoll::pg::pg_call([&] { return PG_GETARG_BYTEA_PP(2); });
    std::string time_field = text_arg(fcinfo, 3);
    std::optional<Value> meta;
    std::string meta_field;
    if (!PG_ARGISNULL(1) && !PG_ARGISNULL(4)) {
        meta =
            tscoll::pg::jsonb_to_value(tscoll::pg::pg_call([&] { return PG_GETARG_JSONB_P(1); }));
        meta_field = text_arg(fcinfo, 4);
    }
    BucketData bucket = decode_bucket(*id, data);
    for (Value &m : bucket.measurements()) {
        const Value *time = m.find(time_field);
        if (time == nullptr || !time->is(Value::Kind::Date))
            throw Error(tscoll::ErrorCode::Corrupt,
                        "bucket data is corrupt: a measurement has no time",
                        "Bucket _id " + id->to_hex() + ".");
        Datum values[2] = {TimestampTzGetDatum(tscoll::pg::to_timestamptz(time->as_date())), 0};
        bool nulls[2] = {false, false};
        render_time_field(m, time_field);
        if (meta)
            m.add(meta_field, *meta);
        values[1] = PointerGetDatum(tscoll::pg::value_to_jsonb(m));
        tscoll::pg::pg_call(
            [&] { tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls); });
    }
    return PointerGetDatum(nullptr);
}

// tscoll._unpack_times(_id objectid, data bytea, time_field text) RETURNS
// TABLE (time timestamptz): the measurements' times only, in the order of
// _unpack, for conditions that read nothing else (DELETE by time).
TSCOLL_FUNCTION(tscoll_unpack_times) {
    auto *rsinfo = reinterpret_cast<ReturnSetInfo *>(fcinfo->resultinfo);
    tscoll::pg::pg_call([&] { InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC); });
    const auto *id = reinterpret_cast<const tscoll::ObjectId *>(PG_GETARG_POINTER(0));
    bytea *data = tscoll::pg::pg_call([&] { return PG_GETARG_BYTEA_PP(1); });
    std::string time_field = text_arg(fcinfo, 2);
    BucketData bucket = decode_bucket(*id, data);
    auto corrupt = [&] {
        return Error(tscoll::ErrorCode::Corrupt,
                     "bucket data is corrupt: a measurement has no time",
                     "Bucket _id " + id->to_hex() + ".");
    };
    auto time = std::find_if(bucket.columns().begin(), bucket.columns().end(),
                             [&](const tscoll::BucketColumn &c) { return c.name == time_field; });
    if (time == bucket.columns().end() || time->positions.size() != bucket.count())
        throw corrupt();
    for (const Value &t : time->values) {
        if (!t.is(Value::Kind::Date))
            throw corrupt();
        Datum value = TimestampTzGetDatum(tscoll::pg::to_timestamptz(t.as_date()));
        bool null = false;
        tscoll::pg::pg_call(
            [&] { tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &value, &null); });
    }
    return PointerGetDatum(nullptr);
}

// tscoll._data_json(_id objectid, data bytea, time_field text) RETURNS jsonb:
// MongoDB's uncompressed v1 data, {"<field>": {"0": v0, "1": v1, ...}, ...}.
TSCOLL_FUNCTION(tscoll_data_json) {
    const auto *id = reinterpret_cast<const tscoll::ObjectId *>(PG_GETARG_POINTER(0));
    bytea *data = tscoll::pg::pg_call([&] { return PG_GETARG_BYTEA_PP(1); });
    std::string time_field = text_arg(fcinfo, 2);
    BucketData bucket = decode_bucket(*id, data);
    Value result = Value::object();
    for (const tscoll::BucketColumn &c : bucket.columns()) {
        Value column = Value::object();
        for (size_t i = 0; i < c.positions.size(); i++) {
            const Value &v = c.values[i];
            bool is_time = c.name == time_field && v.is(Value::Kind::Date);
            column.add(std::to_string(c.positions[i]),
                       is_time ? Value::string(tscoll::format_canonical_date(v.as_date())) : v);
        }
        result.add(c.name, std::move(column));
    }
    PG_RETURN_JSONB_P(tscoll::pg::value_to_jsonb(result));
}

// tscoll._buckets(collection regclass) RETURNS TABLE (_id objectid, meta
// jsonb, control jsonb, data jsonb): every bucket, in _id order, read as the
// bucket table's owner once SELECT on the view is checked (SPEC §2.3).
TSCOLL_FUNCTION(tscoll_read_buckets) {
    tscoll::pg::CollectionInfo info = tscoll::pg::lookup_collection(PG_GETARG_OID(0));
    tscoll::pg::check_view_privilege(info, ACL_SELECT);
    auto *rsinfo = reinterpret_cast<ReturnSetInfo *>(fcinfo->resultinfo);
    tscoll::pg::pg_call([&] { InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC); });
    std::string query =
        "SELECT b._id, b.meta, b.control, tscoll._data_json(b._id, b.data, $1) FROM " +
        info.bucket_name + " b ORDER BY b._id";
    tscoll::pg::OwnerSession owner(info);
    tscoll::pg::pg_call([&] {
        Oid types[] = {TEXTOID};
        Datum values[] = {CStringGetTextDatum(info.time_field.c_str())};
        Portal portal =
            SPI_cursor_open_with_args(nullptr, query.c_str(), 1, types, values, nullptr, true, 0);
        for (SPI_cursor_fetch(portal, true, 1000); SPI_processed > 0;
             SPI_cursor_fetch(portal, true, 1000)) {
            for (uint64 i = 0; i < SPI_processed; i++)
                tuplestore_puttuple(rsinfo->setResult, SPI_tuptable->vals[i]);
            SPI_freetuptable(SPI_tuptable);
        }
        SPI_cursor_close(portal);
    });
    owner.finish();
    return PointerGetDatum(nullptr);
}
