// Reading buckets back: the view's unpacking functions.
extern "C" {
#include "postgres.h"
#include "catalog/pg_type_d.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"
}

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <memory>
#include <vector>

#include "core/bucket_data.hpp"
#include "core/error.hpp"
#include "core/measurement.hpp"
#include "pg/write/bucket_store.hpp"
#include "pg/read/documents.hpp"
#include "pg/read/field_text.hpp"
#include "pg/guard.hpp"
#include "pg/types/jsonb_value.hpp"
#include "pg/pg_time.hpp"
#include "pg/read/row_sink.hpp"
#include "pg/read/unpacking.hpp"
#include "pg/read/time_range.hpp"
#include "pg/read/typed_fields.hpp"
#include "pg/read/unpack_call.hpp"

namespace {

using namespace tscoll::pg::unpack_call;
using tscoll::BucketData;
using tscoll::Error;
using tscoll::Value;
using tscoll::pg::decode_bucket;
using tscoll::pg::field_text;
using tscoll::pg::plain_double;
using tscoll::pg::text_arg;
using tscoll::pg::text_array_arg;

// One output column of _unpack_fields, of a kind unpack_call.hpp names.
struct FieldColumn {
    std::string name;
    char kind = kText;
    const tscoll::BucketColumn *column = nullptr;  // nullptr: no measurement has it
    size_t next = 0;                               // cursor into column->positions
};

// Whether `kind` is the column of a float8 typed field: the numbers as
// float8, NULL for any other value.
bool typed_float8_kind(char kind) {
    return kind == static_cast<char>(tscoll::pg::TypedField::Float8);
}

Datum field_datum(const Value &v, char kind, bool &null) {
    null = false;
    if (tscoll::pg::typed_field_type(kind) != InvalidOid)
        return tscoll::pg::typed_field_datum(v, static_cast<tscoll::pg::TypedField>(kind), &null);
    if (kind == kJsonb)
        return PointerGetDatum(tscoll::pg::value_to_jsonb(v));
    if (kind == kNumber || kind == kNotNumber) {
        std::optional<double> d;
        if (v.is(Value::Kind::Number))
            d = plain_double(v.as_number());
        null = kind == kNumber ? !d : d.has_value();
        if (kind == kNumber || d)
            return kind == kNumber && d ? Float8GetDatum(*d) : 0;
    }
    if (v.is(Value::Kind::Null)) {
        null = true;
        return 0;
    }
    std::string text = field_text(v);
    return tscoll::pg::pg_call(
        [&] { return PointerGetDatum(cstring_to_text_with_len(text.data(), text.size())); });
}

// A condition (doc->>'field')::float8 <strategy> bound of the query, which
// _unpack and _unpack_fields may apply before building a row: a measurement
// whose field is a number failing it, or that has no value for it, cannot
// match. Other values are left to the query.
struct Prefilter {
    std::string name;
    int strategy;  // btree: 1 <, 2 <=, 3 =, 4 >=, 5 >
    double bound;
    size_t field = 0;  // _unpack_fields: into the output fields, of kind 'f'
};

// x <strategy> bound as float8 compares: NaN equals NaN and is above every
// other number.
bool passes(double x, int strategy, double bound) {
    int order = std::isnan(x)       ? (std::isnan(bound) ? 0 : 1)
                : std::isnan(bound) ? -1
                : x < bound         ? -1
                                    : (x > bound ? 1 : 0);
    switch (strategy) {
        case 1:
            return order < 0;
        case 2:
            return order <= 0;
        case 3:
            return order == 0;
        case 4:
            return order >= 0;
        default:
            return order > 0;
    }
}

bool passes(const tscoll::Float8Cursor::Entry &e, const Prefilter &p) {
    return e.present && (e.other != nullptr || passes(e.number, p.strategy, p.bound));
}

// The filters "<strategy digit><field>" (argument `specs`) and their
// float8 bounds (the next argument), when given.
std::vector<Prefilter> filters_arg(FunctionCallInfo fcinfo, int specs_arg) {
    std::vector<Prefilter> result;
    if (PG_NARGS() < specs_arg + 2 || PG_ARGISNULL(specs_arg) || PG_ARGISNULL(specs_arg + 1))
        return result;
    std::vector<std::string> specs = text_array_arg(fcinfo, specs_arg);
    ArrayType *array = tscoll::pg::pg_call([&] { return PG_GETARG_ARRAYTYPE_P(specs_arg + 1); });
    Datum *bounds = nullptr;
    bool *nulls = nullptr;
    int count = 0;
    tscoll::pg::pg_call([&] {
        deconstruct_array(array, FLOAT8OID, 8, FLOAT8PASSBYVAL, 'd', &bounds, &nulls, &count);
    });
    if (count != static_cast<int>(specs.size()))
        throw Error(tscoll::ErrorCode::BadValue, "unpacking: one bound per filter expected");
    for (size_t i = 0; i < specs.size(); i++) {
        const std::string &spec = specs[i];
        if (spec.size() < 2 || spec[0] < '1' || spec[0] > '5' || nulls[i])
            throw Error(tscoll::ErrorCode::BadValue, "unpacking: a filter is <1-5><name>");
        result.push_back({spec.substr(1), spec[0] - '0', DatumGetFloat8(bounds[i])});
    }
    return result;
}

// _unpack_fields' filters, on the fields it returns as 'f'; a filter on
// another field is ignored.
std::vector<Prefilter> prefilters_arg(FunctionCallInfo fcinfo,
                                      const std::vector<FieldColumn> &fields) {
    std::vector<Prefilter> result;
    for (Prefilter &p : filters_arg(fcinfo, kFilters))
        for (size_t f = 0; f < fields.size(); f++)
            if ((fields[f].kind == kNumber || typed_float8_kind(fields[f].kind)) &&
                fields[f].name == p.name) {
                p.field = f;
                result.push_back(p);
            }
    return result;
}

// Each name once, as decode_float8 fills one column a name, and for each of
// `names` its index among them.
std::vector<std::string> distinct(const std::vector<std::string> &names,
                                  std::vector<size_t> *index_of) {
    std::vector<std::string> result;
    for (const std::string &name : names) {
        size_t c = std::find(result.begin(), result.end(), name) - result.begin();
        if (c == result.size())
            result.push_back(name);
        index_of->push_back(c);
    }
    return result;
}

// Which of a bucket's measurements pass `filters`, read from the filtered
// fields alone.
std::vector<bool> passing_rows(const tscoll::ObjectId &id, bytea *data,
                               const std::string &time_field,
                               const std::vector<Prefilter> &filters) {
    std::vector<std::string> filtered;
    for (const Prefilter &p : filters)
        filtered.push_back(p.name);
    std::vector<size_t> column_of;
    std::vector<std::string> names = distinct(filtered, &column_of);
    tscoll::Float8Columns bucket = tscoll::pg::decode_bucket_float8(id, data, time_field, names);
    std::vector<tscoll::Float8Cursor> cursors;  // one per filter, each walking the rows in order
    for (size_t c : column_of)
        cursors.emplace_back(bucket.fields[c]);
    std::vector<bool> rows(bucket.times.size());
    for (uint32_t row = 0; row < rows.size(); row++) {
        bool pass = true;
        for (size_t i = 0; pass && i < filters.size(); i++)
            pass = passes(cursors[i].at(row), filters[i]);
        rows[row] = pass;
    }
    return rows;
}

// _unpack_fields when every field is read as float8 ('f', 'o' and 'd') and none
// is the time or meta field: numbers go from the bucket to float8 without
// value objects, and the prefilters drop rows before they are built.
void unpack_float8_fields(tscoll::pg::RowSink &sink, const tscoll::ObjectId &id, bytea *data,
                          const std::string &time_field, const std::vector<FieldColumn> &fields,
                          const std::vector<Prefilter> &prefilters,
                          const tscoll::pg::TimeRange &range) {
    std::vector<std::string> wanted;
    for (const FieldColumn &f : fields)
        wanted.push_back(f.name);
    std::vector<size_t> column_of;  // for each field, its column in the decoded bucket
    std::vector<std::string> names = distinct(wanted, &column_of);
    tscoll::Float8Columns bucket = tscoll::pg::decode_bucket_float8(id, data, time_field, names);
    std::vector<tscoll::Float8Cursor> cursors(bucket.fields.begin(), bucket.fields.end());
    // Each column's entry of the row, member by member: copied whole, the
    // Entry built in registers went through the stack and stalled the copy.
    std::unique_ptr<bool[]> present(new bool[names.size()]);
    std::vector<const Value *> others(names.size());
    std::vector<double> numbers(names.size());
    std::vector<Datum> values(fields.size() + 2);
    std::unique_ptr<bool[]> nulls(new bool[fields.size() + 2]());
    nulls[1] = true;  // doc: not read
    for (uint32_t row = 0; row < bucket.times.size(); row++) {
        TimestampTz t = tscoll::pg::to_timestamptz(bucket.times[row]);
        if (!range.contains(t))
            continue;
        bool pass = true;
        for (size_t i = 0; pass && i < prefilters.size(); i++)
            pass = passes(cursors[column_of[prefilters[i].field]].at(row), prefilters[i]);
        if (!pass)
            continue;
        for (size_t c = 0; c < names.size(); c++) {
            tscoll::Float8Cursor::Entry e = cursors[c].at(row);
            present[c] = e.present;
            others[c] = e.other;
            numbers[c] = e.number;
        }
        values[0] = TimestampTzGetDatum(t);
        for (size_t i = 0; i < fields.size(); i++) {
            size_t c = column_of[i];
            bool null = true;  // absent, or a number in the 'o' column
            if (present[c] && others[c] != nullptr)
                values[i + 2] = field_datum(*others[c], fields[i].kind, null);
            else if (present[c] && (fields[i].kind == kNumber || typed_float8_kind(fields[i].kind)))
                values[i + 2] = Float8GetDatum(numbers[c]), null = false;
            nulls[i + 2] = null;
        }
        sink.put(values.data(), nulls.get());
    }
}

// Narrows `range` to the bucket's first measurements that the sink wants:
// up to the time of the count-th (from it, for the latest), inclusive, so
// that those tied with it stay.
void keep_first(tscoll::pg::TimeRange &range, const tscoll::pg::FirstRows &first,
                const tscoll::ObjectId &id, bytea *data, const std::string &time_field) {
    if (first.count <= 0)
        return;
    std::vector<TimestampTz> times;
    for (tscoll::UnixMicros t : tscoll::pg::decode_bucket_float8(id, data, time_field, {}).times)
        if (range.contains(tscoll::pg::to_timestamptz(t)))
            times.push_back(tscoll::pg::to_timestamptz(t));
    if (times.size() <= static_cast<size_t>(first.count))
        return;
    auto count_th = times.begin() + (first.count - 1);
    if (first.latest) {
        std::nth_element(times.begin(), count_th, times.end(), std::greater<TimestampTz>());
        range.lower = *count_th;
        range.lower_strict = false;
    } else {
        std::nth_element(times.begin(), count_th, times.end());
        range.upper = *count_th;
        range.upper_strict = false;
    }
}

}  // namespace

// tscoll._unpack_fields(_id objectid, meta jsonb, data bytea, time_field
// text, meta_field text, fields text[], lower timestamptz, lower_strict
// boolean, upper timestamptz, upper_strict boolean) RETURNS SETOF record:
// per measurement within the bounds (TimeRange) its time, a NULL doc, then
// a column per field (FieldColumn).
// The planner puts it in place of _unpack when a query reads doc only
// through doc->>'f', doc->'f' and (doc->>'f')::float8, so that only those
// fields are decoded (doc/REFERENCE.md §3.4, SELECT: lazy unpacking).
TSCOLL_FUNCTION(tscoll_unpack_fields) {
    tscoll::pg::TuplestoreSink sink(fcinfo);
    tscoll::pg::unpack_fields_rows(fcinfo, sink);
    return PointerGetDatum(nullptr);
}

void tscoll::pg::unpack_fields_rows(FunctionCallInfo fcinfo, RowSink &sink) {
    std::optional<tscoll::pg::TimeRange> range =
        tscoll::pg::time_range_arg(fcinfo, tscoll::pg::unpack_call::kFieldsWindow);
    if (PG_ARGISNULL(0) || PG_ARGISNULL(2) || PG_ARGISNULL(3) || PG_ARGISNULL(5) || !range)
        return;
    TupleDesc desc = sink.desc();
    const auto *id = reinterpret_cast<const tscoll::ObjectId *>(PG_GETARG_POINTER(0));
    bytea *data = tscoll::pg::pg_call([&] { return PG_GETARG_BYTEA_PP(2); });
    std::string time_field = text_arg(fcinfo, 3);
    std::string meta_field = PG_ARGISNULL(4) ? std::string() : text_arg(fcinfo, 4);
    std::vector<FieldColumn> fields;
    std::vector<std::string> wanted{time_field};
    for (const std::string &spec : text_array_arg(fcinfo, tscoll::pg::unpack_call::kFields)) {
        if (spec.empty() || (spec[0] != kText && spec[0] != kJsonb && spec[0] != kNumber &&
                             spec[0] != kNotNumber && tscoll::pg::typed_field_type(spec[0]) == 0))
            throw Error(tscoll::ErrorCode::BadValue, "_unpack_fields: a field is <kind><name>");
        fields.push_back({spec.substr(1), spec[0]});
        wanted.push_back(spec.substr(1));
    }
    if (desc->natts != static_cast<int>(fields.size()) + 2)
        throw Error(tscoll::ErrorCode::Internal, "_unpack_fields: one column per field expected");
    keep_first(*range, sink.first, *id, data, time_field);
    bool float8_only = std::all_of(fields.begin(), fields.end(), [&](const FieldColumn &f) {
        return (f.kind == kNumber || f.kind == kNotNumber || typed_float8_kind(f.kind)) &&
               f.name != time_field && f.name != meta_field;
    });
    if (float8_only) {
        unpack_float8_fields(sink, *id, data, time_field, fields, prefilters_arg(fcinfo, fields),
                             *range);
        return;
    }
    BucketData bucket =
        decode_bucket(*id, data, &wanted, tscoll::pg::decode_window(*range, time_field));
    const tscoll::BucketColumn *times = nullptr;
    for (const tscoll::BucketColumn &c : bucket.columns()) {
        if (c.name == time_field)
            times = &c;
        for (FieldColumn &f : fields)
            if (f.name == c.name)
                f.column = &c;
    }
    if (times == nullptr || times->positions.size() != bucket.count())
        throw Error(tscoll::ErrorCode::Corrupt, "bucket data is corrupt: a measurement has no time",
                    "Bucket _id " + id->to_hex() + ".");

    // The meta field is the same in every measurement of the bucket.
    std::vector<Datum> values(fields.size() + 2);
    std::unique_ptr<bool[]> nulls(new bool[fields.size() + 2]());
    std::vector<bool> from_meta(fields.size(), false);
    if (!PG_ARGISNULL(1) && !meta_field.empty()) {
        Value meta =
            tscoll::pg::jsonb_to_value(tscoll::pg::pg_call([&] { return PG_GETARG_JSONB_P(1); }));
        for (size_t i = 0; i < fields.size(); i++)
            if (fields[i].name == meta_field) {
                bool null = false;
                values[i + 2] = field_datum(meta, fields[i].kind, null);
                nulls[i + 2] = null;
                from_meta[i] = true;
            }
    }
    nulls[1] = true;  // doc: not read
    for (uint32_t row = 0; row < bucket.count(); row++) {
        const Value &time = times->values[row];
        if (!time.is(Value::Kind::Date))
            throw Error(tscoll::ErrorCode::Corrupt,
                        "bucket data is corrupt: a measurement has no time",
                        "Bucket _id " + id->to_hex() + ".");
        if (!range->contains(tscoll::pg::to_timestamptz(time.as_date())))
            continue;
        values[0] = TimestampTzGetDatum(tscoll::pg::to_timestamptz(time.as_date()));
        for (size_t i = 0; i < fields.size(); i++) {
            FieldColumn &f = fields[i];
            if (from_meta[i])
                continue;
            // Columns decoded before the time column still hold rows the window skips.
            while (f.column != nullptr && f.next < f.column->positions.size() &&
                   f.column->positions[f.next] < row)
                f.next++;
            if (f.column == nullptr || f.next >= f.column->positions.size() ||
                f.column->positions[f.next] != row) {
                nulls[i + 2] = true;
                continue;
            }
            const Value &v = f.column->values[f.next++];
            bool null = false;
            values[i + 2] =
                f.column == times
                    ? field_datum(Value::string(tscoll::format_canonical_date(v.as_date())), f.kind,
                                  null)
                    : field_datum(v, f.kind, null);
            nulls[i + 2] = null;
        }
        sink.put(values.data(), nulls.get());
    }
}

// tscoll._bucket_slots(control jsonb) RETURNS TABLE (time timestamptz, doc
// jsonb): control.count rows of NULLs, for queries that only count a
// bucket's measurements (plan/read_plan.cpp); the data is not read.
TSCOLL_FUNCTION(tscoll_bucket_slots) {
    tscoll::pg::TuplestoreSink sink(fcinfo);
    tscoll::pg::bucket_slots_rows(fcinfo, sink);
    return PointerGetDatum(nullptr);
}

void tscoll::pg::bucket_slots_rows(FunctionCallInfo fcinfo, RowSink &sink) {
    if (PG_ARGISNULL(0))
        return;
    Value control =
        tscoll::pg::jsonb_to_value(tscoll::pg::pg_call([&] { return PG_GETARG_JSONB_P(0); }));
    const Value *count = control.find("count");
    std::optional<int64_t> n = count ? count->as_exact_int64() : std::nullopt;
    if (!n || *n < 0)
        throw Error(tscoll::ErrorCode::Corrupt, "bucket control has no count");
    Datum values[2] = {0, 0};
    bool nulls[2] = {true, true};
    for (int64_t i = 0; i < *n; i++)
        sink.put(values, nulls);
}

// tscoll._bucket_ends(_id objectid, data bytea, time_field text) RETURNS
// TABLE (time timestamptz, doc jsonb): the bucket's earliest and latest
// times, for min(time) and max(time) (plan/read_plan.cpp).
TSCOLL_FUNCTION(tscoll_bucket_ends) {
    tscoll::pg::TuplestoreSink sink(fcinfo);
    tscoll::pg::bucket_ends_rows(fcinfo, sink);
    return PointerGetDatum(nullptr);
}

void tscoll::pg::bucket_ends_rows(FunctionCallInfo fcinfo, RowSink &sink) {
    if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
        return;
    const auto *id = reinterpret_cast<const tscoll::ObjectId *>(PG_GETARG_POINTER(0));
    bytea *data = tscoll::pg::pg_call([&] { return PG_GETARG_BYTEA_PP(1); });
    std::vector<tscoll::UnixMicros> times =
        tscoll::pg::decode_bucket_float8(*id, data, text_arg(fcinfo, 2), {}).times;
    if (times.empty())
        return;
    auto [earliest, latest] = std::minmax_element(times.begin(), times.end());
    Datum values[2] = {TimestampTzGetDatum(tscoll::pg::to_timestamptz(*earliest)), 0};
    bool nulls[2] = {false, true};
    sink.put(values, nulls);
    if (*latest != *earliest) {
        values[0] = TimestampTzGetDatum(tscoll::pg::to_timestamptz(*latest));
        sink.put(values, nulls);
    }
}

// tscoll._unpack(_id objectid, meta jsonb, data bytea, time_field text,
// meta_field text [, lower timestamptz, lower_strict boolean, upper
// timestamptz, upper_strict boolean]) RETURNS TABLE (time timestamptz, doc
// jsonb): every measurement, or those within the bounds (TimeRange).
TSCOLL_FUNCTION(tscoll_unpack) {
    tscoll::pg::TuplestoreSink sink(fcinfo);
    tscoll::pg::unpack_rows(fcinfo, sink);
    return PointerGetDatum(nullptr);
}

void tscoll::pg::unpack_rows(FunctionCallInfo fcinfo, RowSink &sink) {
    if (PG_ARGISNULL(0) || PG_ARGISNULL(2) || PG_ARGISNULL(3))
        return;
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
    std::optional<tscoll::pg::TimeRange> range =
        PG_NARGS() >= tscoll::pg::unpack_call::kUnpackArgsWithWindow
            ? tscoll::pg::time_range_arg(fcinfo, tscoll::pg::unpack_call::kUnpackWindow)
            : tscoll::pg::TimeRange{};
    if (!range)
        return;
    keep_first(*range, sink.first, *id, data, time_field);
    std::vector<Prefilter> filters = filters_arg(fcinfo, kUnpackFilters);
    std::vector<bool> rows;
    std::optional<BucketData::TimeWindow> window = tscoll::pg::decode_window(*range, time_field);
    if (!filters.empty()) {
        rows = passing_rows(*id, data, time_field, filters);
        if (!window)
            window = BucketData::TimeWindow{time_field, [](tscoll::UnixMicros) { return true; }};
        window->rows = &rows;
    }
    BucketData bucket = decode_bucket(*id, data, nullptr, window);
    const tscoll::BucketColumn *times = nullptr;
    for (const tscoll::BucketColumn &c : bucket.columns())
        if (c.name == time_field)
            times = &c;
    if (times == nullptr || times->positions.size() != bucket.count())
        throw Error(tscoll::ErrorCode::Corrupt, "bucket data is corrupt: a measurement has no time",
                    "Bucket _id " + id->to_hex() + ".");
    tscoll::pg::DocumentBuilder documents(bucket, time_field, meta_field, meta);
    for (uint32_t row = 0; row < bucket.count(); row++) {
        const Value &time = times->values[row];
        if (!time.is(Value::Kind::Date))
            throw Error(tscoll::ErrorCode::Corrupt,
                        "bucket data is corrupt: a measurement has no time",
                        "Bucket _id " + id->to_hex() + ".");
        if (!range->contains(tscoll::pg::to_timestamptz(time.as_date())) ||
            (!rows.empty() && !rows[row]))
            continue;
        Datum values[2] = {TimestampTzGetDatum(tscoll::pg::to_timestamptz(time.as_date())),
                           PointerGetDatum(documents.build(row))};
        bool nulls[2] = {false, false};
        sink.put(values, nulls);
    }
}

// tscoll._unpack_times(_id objectid, data bytea, time_field text) RETURNS
// TABLE (time timestamptz): the measurements' times only, in the order of
// _unpack, for conditions that read nothing else (DELETE by time).
TSCOLL_FUNCTION(tscoll_unpack_times) {
    tscoll::pg::TuplestoreSink sink(fcinfo);
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
        sink.put(&value, &null);
    }
    return PointerGetDatum(nullptr);
}
