// tscoll.buckets(): every bucket as MongoDB shows it, a bucket's tails
// (doc/ARCHITECTURE.md, "Tails") folded in as they would be on disk.
extern "C" {
#include "postgres.h"
#include "catalog/pg_type_d.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"
}

#include <optional>
#include <string>

#include "core/bucket.hpp"
#include "core/bucket_data.hpp"
#include "core/error.hpp"
#include "pg/catalog/collection.hpp"
#include "pg/guard.hpp"
#include "pg/pg_time.hpp"
#include "pg/read/field_text.hpp"
#include "pg/types/jsonb_value.hpp"
#include "pg/write/bucket_store.hpp"

namespace {

using tscoll::BucketData;
using tscoll::ObjectId;
using tscoll::Value;

// MongoDB's uncompressed v1 data: {"<field>": {"0": v0, "1": v1, ...}, ...}.
Value data_json(const BucketData &bucket, const std::string &time_field) {
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
    return result;
}

bytea *bytea_column(HeapTuple row, TupleDesc desc, int attnum) {
    bool isnull = false;
    Datum d = SPI_getbinval(row, desc, attnum, &isnull);
    return tscoll::pg::pg_call([&] { return DatumGetByteaPP(d); });
}

// One bucket of the output: its row (if still there) and its tails, read
// in order. The rows of a bucket come one after another.
class BucketGroup {
  public:
    BucketGroup(const tscoll::pg::CollectionInfo &info, Tuplestorestate *out, TupleDesc out_desc)
        : info_(info), out_(out), out_desc_(out_desc) {
        context_ = tscoll::pg::pg_call([] {
            return AllocSetContextCreate(CurrentMemoryContext, "tscoll bucket group",
                                         ALLOCSET_DEFAULT_SIZES);
        });
    }

    // A row of the bucket table: _id, meta, control, data, min_time, the
    // bucket it is a tail of (NULL for a bucket's own row).
    void add(HeapTuple row, TupleDesc desc) {
        bool isnull = false;
        ObjectId id = *reinterpret_cast<const ObjectId *>(
            DatumGetPointer(SPI_getbinval(row, desc, 1, &isnull)));
        bool own_row = false;
        Datum owner = SPI_getbinval(row, desc, 6, &own_row);
        ObjectId bucket = bucket_of(owner, id, own_row);
        if (!id_ || !(bucket.bytes == id_->bytes))
            flush();
        if (!id_) {
            id_ = bucket;
            Datum meta = SPI_getbinval(row, desc, 2, &meta_null_);
            min_time_ = tscoll::pg::to_unix_micros(
                DatumGetTimestampTz(SPI_getbinval(row, desc, 5, &isnull)));
            tscoll::pg::pg_call([&] {
                MemoryContext old = MemoryContextSwitchTo(context_);
                meta_ = meta_null_ ? Datum(0) : datumCopy(meta, false, -1);
                MemoryContextSwitchTo(old);
            });
        }
        BucketData data = tscoll::pg::decode_bucket(id, bytea_column(row, desc, 4));
        if (!is_tail_) {
            // A bucket's own row: as stored, unless tails follow.
            Datum control = SPI_getbinval(row, desc, 3, &isnull);
            own_control_ = tscoll::pg::jsonb_to_value(
                tscoll::pg::pg_call([&] { return DatumGetJsonbP(control); }));
        }
        rows_++;
        merged_.append(data);
    }

    void flush() {
        if (!id_)
            return;
        Value data = data_json(merged_, info_.time_field);
        Value control;
        if (rows_ == 1 && own_control_)
            control = std::move(*own_control_);
        else
            control =
                tscoll::Bucket(*id_, min_time_, info_.time_field, std::move(merged_)).control();
        emit(control, data);
        id_.reset();
        own_control_.reset();
        merged_ = BucketData();
        rows_ = 0;
        tscoll::pg::pg_call([&] { MemoryContextReset(context_); });
    }

  private:
    // The bucket a row belongs to: its own, or the one it is a tail of.
    ObjectId bucket_of(Datum owner, const ObjectId &id, bool isnull) {
        is_tail_ = !isnull;
        if (isnull)
            return id;
        char *hex = tscoll::pg::pg_call([&] { return TextDatumGetCString(owner); });
        return ObjectId::from_hex(hex);
    }

    // Built in the group's context, which each bucket resets.
    void emit(const Value &control, const Value &data) {
        Jsonb *control_jsonb = tscoll::pg::control_jsonb(control, context_);
        Jsonb *data_jsonb = tscoll::pg::control_jsonb(data, context_);
        tscoll::pg::pg_call([&] {
            ObjectId *id = static_cast<ObjectId *>(MemoryContextAlloc(context_, sizeof(ObjectId)));
            *id = *id_;
            Datum values[] = {PointerGetDatum(id), meta_, PointerGetDatum(control_jsonb),
                              PointerGetDatum(data_jsonb)};
            bool nulls[] = {false, meta_null_, false, false};
            tuplestore_putvalues(out_, out_desc_, values, nulls);
        });
    }

    const tscoll::pg::CollectionInfo &info_;
    Tuplestorestate *out_;
    TupleDesc out_desc_;
    MemoryContext context_ = nullptr;
    std::optional<ObjectId> id_;
    bool is_tail_ = false;
    Datum meta_ = 0;
    bool meta_null_ = true;
    tscoll::UnixMicros min_time_ = 0;
    std::optional<Value> own_control_;
    BucketData merged_;
    uint32_t rows_ = 0;
};

}  // namespace

// tscoll._buckets(collection regclass) RETURNS TABLE (_id objectid, meta
// jsonb, control jsonb, data jsonb): every bucket, in _id order, read as the
// bucket table's owner once SELECT on the view is checked (doc/REFERENCE.md,
// tscoll.buckets).
TSCOLL_FUNCTION(tscoll_read_buckets) {
    tscoll::pg::CollectionInfo info = tscoll::pg::lookup_collection(PG_GETARG_OID(0));
    tscoll::pg::check_view_privilege(info, ACL_SELECT);
    auto *rsinfo = reinterpret_cast<ReturnSetInfo *>(fcinfo->resultinfo);
    tscoll::pg::pg_call([&] { InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC); });
    // A bucket's tails sort right after its row, in the order appended.
    std::string query =
        "SELECT b._id, b.meta, b.control, b.data, b.min_time, b.control->'tail'->>'bucket' FROM " +
        info.bucket_name +
        " b ORDER BY coalesce(b.control->'tail'->>'bucket', b._id::text) COLLATE \"C\","
        " (b.control->'tail'->>'seq')::int8 NULLS FIRST";
    tscoll::pg::OwnerSession owner(info);
    BucketGroup group(info, rsinfo->setResult, rsinfo->setDesc);
    Portal portal = tscoll::pg::pg_call([&] {
        return SPI_cursor_open_with_args(nullptr, query.c_str(), 0, nullptr, nullptr, nullptr, true,
                                         0);
    });
    for (;;) {
        tscoll::pg::pg_call([&] { SPI_cursor_fetch(portal, true, 1000); });
        if (SPI_processed == 0)
            break;
        for (uint64 i = 0; i < SPI_processed; i++)
            group.add(SPI_tuptable->vals[i], SPI_tuptable->tupdesc);
        tscoll::pg::pg_call([&] { SPI_freetuptable(SPI_tuptable); });
    }
    group.flush();
    tscoll::pg::pg_call([&] { SPI_cursor_close(portal); });
    owner.finish();
    return PointerGetDatum(nullptr);
}

// tscoll._data_json(_id objectid, data bytea, time_field text) RETURNS jsonb:
// a bucket row's data in MongoDB's uncompressed v1 shape.
TSCOLL_FUNCTION(tscoll_data_json) {
    const auto *id = reinterpret_cast<const ObjectId *>(PG_GETARG_POINTER(0));
    bytea *data = tscoll::pg::pg_call([&] { return PG_GETARG_BYTEA_PP(1); });
    std::string time_field = tscoll::pg::text_arg(fcinfo, 2);
    PG_RETURN_JSONB_P(
        tscoll::pg::value_to_jsonb(data_json(tscoll::pg::decode_bucket(*id, data), time_field)));
}
