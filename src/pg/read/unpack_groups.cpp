// tscoll._unpack_groups: a bucket's measurements aggregated per time group,
// for queries that aggregate measurement fields by a time grouping
// (date_trunc(unit, time), date_bin(stride, time, origin) and what bins
// alike) and meta (plan/read_plan.cpp, "Aggregation in buckets"). The query combines
// these partial aggregates across buckets; no measurement becomes a row.
extern "C" {
#include "postgres.h"
#include "catalog/pg_type_d.h"
#include "common/int.h"
#include "funcapi.h"
#include "parser/scansup.h"
#include "pgtime.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/fmgrprotos.h"
#include "utils/timestamp.h"
}

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/bucket_data.hpp"
#include "core/error.hpp"
#include "core/float8_aggregate.hpp"
#include "pg/write/bucket_store.hpp"
#include "pg/read/field_text.hpp"
#include "pg/guard.hpp"
#include "pg/pg_time.hpp"
#include "pg/read/row_sink.hpp"
#include "pg/read/unpacking.hpp"
#include "pg/read/time_range.hpp"
#include "pg/read/typed_fields.hpp"
#include "pg/read/unpack_call.hpp"

namespace {

using tscoll::Error;
using tscoll::Float8Aggregate;
using tscoll::Float8State;
using tscoll::Value;
using tscoll::pg::pg_call;

int64 floor_div(int64 a, int64 b) {
    return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

// date_trunc(unit, t) of timestamptz, in the session's time zone. For
// units up to an hour, date_trunc keeps t's own UTC offset, so where the
// offset is the same over a whole bucket the truncation is arithmetic;
// elsewhere (other units, a DST change inside the bucket) it calls
// date_trunc itself.
class Truncation {
  public:
    // In `zone` when given: date_trunc(unit, t, zone), always called.
    Truncation(Datum unit, std::optional<Datum> zone) : unit_(unit), zone_(zone) {
        if (zone_)
            return;
        text *t = pg_call([&] { return DatumGetTextPP(unit); });
        std::string name(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));
        int val = 0;
        char *lower = pg_call([&] {
            return downcase_truncate_identifier(name.c_str(), static_cast<int>(name.size()), false);
        });
        if (DecodeUnits(0, lower, &val) == UNITS)
            micros_ = val == DTK_HOUR       ? USECS_PER_HOUR
                      : val == DTK_MINUTE   ? USECS_PER_MINUTE
                      : val == DTK_SECOND   ? USECS_PER_SEC
                      : val == DTK_MILLISEC ? 1000
                      : val == DTK_MICROSEC ? 1
                                            : 0;
    }

    // The bucket's measurements lie in [first, last].
    void prepare(TimestampTz first, TimestampTz last) {
        offset_.reset();
        last_start_.reset();
        if (micros_ == 0)
            return;
        pg_time_t start = floor_div(tscoll::pg::to_unix_micros(first), USECS_PER_SEC);
        pg_time_t end = floor_div(tscoll::pg::to_unix_micros(last), USECS_PER_SEC);
        long before = 0, after = 0;
        int before_dst = 0, after_dst = 0;
        pg_time_t boundary = 0;
        int found = pg_next_dst_boundary(&start, &before, &before_dst, &boundary, &after,
                                         &after_dst, session_timezone);
        if (found == 0 || (found == 1 && boundary > end))
            offset_ = static_cast<int64>(before) * USECS_PER_SEC;
    }

    // Measurements come mostly in time order: the group of the previous one
    // is checked before dividing.
    TimestampTz operator()(TimestampTz t) {
        if (offset_ && last_start_ && t >= *last_start_ && t - *last_start_ < micros_)
            return *last_start_;
        if (offset_)
            return *(last_start_ = floor_div(t + *offset_, micros_) * micros_ - *offset_);
        if (zone_)
            return pg_call([&] {
                return DatumGetTimestampTz(DirectFunctionCall3(timestamptz_trunc_zone, unit_,
                                                               TimestampTzGetDatum(t), *zone_));
            });
        return pg_call(
            [&] { return DatumGetTimestampTz(DirectFunctionCall2(timestamptz_trunc, unit_, t)); });
    }

  private:
    Datum unit_;
    std::optional<Datum> zone_;
    int64 micros_ = 0;                       // the unit, when arithmetic can truncate to it
    std::optional<int64> offset_;            // the UTC offset over the bucket, when constant
    std::optional<TimestampTz> last_start_;  // the group found last, when arithmetic
};

// date_bin(stride, t, origin): bins of a fixed width from the origin, by
// arithmetic; PostgreSQL's date_bin itself where that would overflow, or
// for a stride it refuses (months, not positive), so that its errors stay.
class Bins {
  public:
    // With `epoch_only_near`, the bins stand for floor(extract(epoch from
    // t) / n), which the query applies to each bin's start. That is the
    // same value for every time of a bin only within 10^10 s of 1970:
    // further away, numeric's division rounds the last microseconds of a
    // bin into the next. Such a time is a group of its own there.
    Bins(Datum stride, Datum origin, bool epoch_only_near)
        : stride_(stride),
          origin_(origin),
          origin_micros_(DatumGetTimestampTz(origin)),
          epoch_only_near_(epoch_only_near) {
        const Interval *i = DatumGetIntervalP(stride);
        if (i->month != 0 || TIMESTAMP_NOT_FINITE(origin_micros_) ||
            pg_mul_s64_overflow(i->day, USECS_PER_DAY, &width_) ||
            pg_add_s64_overflow(width_, i->time, &width_) || width_ <= 0)
            width_ = 0;
    }

    TimestampTz operator()(TimestampTz t) {
        constexpr int64 kUnixEpoch = -(POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY;
        constexpr int64 kNearEpoch = INT64CONST(10000000000) * USECS_PER_SEC;
        if (epoch_only_near_ && (t <= kUnixEpoch - kNearEpoch || t >= kUnixEpoch + kNearEpoch))
            return t;
        int64 since_origin, offset;
        TimestampTz start;
        if (width_ > 0 && !pg_sub_s64_overflow(t, origin_micros_, &since_origin) &&
            !pg_mul_s64_overflow(floor_div(since_origin, width_), width_, &offset) &&
            !pg_add_s64_overflow(origin_micros_, offset, &start) && IS_VALID_TIMESTAMP(start))
            return start;
        return pg_call([&] {
            return DatumGetTimestampTz(
                DirectFunctionCall3(timestamptz_bin, stride_, TimestampTzGetDatum(t), origin_));
        });
    }

  private:
    Datum stride_;
    Datum origin_;
    TimestampTz origin_micros_;
    bool epoch_only_near_;
    int64 width_ = 0;  // microseconds; 0: left to date_bin
};

std::string text_of(Datum d) {
    text *t = pg_call([&] { return DatumGetTextPP(d); });
    return std::string(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));
}

// One output column: an aggregate of (doc->>'field')::float8, spelled
// "<Float8Aggregate letter><field>" in the function's argument.
struct Aggregate {
    Float8Aggregate kind;
    size_t field;  // into the fields; count(*) reads none
};

// The fields the aggregates read, and a cursor into each one's column.
struct Field {
    std::string name;
    bool numbers_only = false;  // a float8 typed field's column
    std::optional<tscoll::Float8Cursor> cursor;

    void read(const tscoll::Float8Column &c) { cursor.emplace(c); }
    // (doc->>'name')::float8 of measurement `row` in x; false when it has
    // none. (Not an optional<double>: built in the loop, it costs a stall.)
    bool at(uint32_t row, double &x) {
        tscoll::Float8Cursor::Entry e = cursor->at(row);
        if (e.present && e.other == nullptr) {
            x = e.number;
            return true;
        }
        std::optional<double> d;
        if (e.present && numbers_only)  // NULL but for numbers
            d = tscoll::pg::typed_float8(*e.other);
        else if (e.present)  // a value that is not a number: cast as its text is
            d = tscoll::pg::field_float8(*e.other);
        x = d.value_or(0);
        return d.has_value();
    }
};

struct TimeGroup {
    TimestampTz start;
    std::vector<Float8State> states;
};

void parse_aggregates(const std::vector<std::string> &specs, std::vector<Aggregate> *aggregates,
                      std::vector<Field> *fields) {
    for (const std::string &spec : specs) {
        bool numbers_only = !spec.empty() && spec[0] == tscoll::pg::unpack_call::kNumbersOnly;
        size_t letter = numbers_only ? 1 : 0;
        if (spec.size() <= letter ||
            std::string_view("Mmsacn").find(spec[letter]) == std::string_view::npos)
            throw Error(tscoll::ErrorCode::BadValue,
                        "_unpack_groups: an aggregate is <kind><field>");
        auto kind = static_cast<Float8Aggregate>(spec[letter]);
        if (kind == Float8Aggregate::Rows) {
            aggregates->push_back({kind, 0});
            continue;
        }
        std::string name = spec.substr(letter + 1);
        size_t i = 0;
        while (i < fields->size() &&
               ((*fields)[i].name != name || (*fields)[i].numbers_only != numbers_only))
            i++;
        if (i == fields->size())
            fields->push_back({name, numbers_only});
        aggregates->push_back({kind, i});
    }
}

Datum state_datum(const Float8State &s, Float8Aggregate kind, bool *null) {
    *null = false;
    switch (kind) {
        case Float8Aggregate::Count:
        case Float8Aggregate::Rows:
            return Int64GetDatum(s.count);
        case Float8Aggregate::Avg: {
            // avg(float8)'s transition state, {N, Sx, Sxx}, for float8_combine.
            Datum parts[] = {Float8GetDatum(static_cast<double>(s.count)), Float8GetDatum(s.value),
                             Float8GetDatum(s.sum_squares)};
            return pg_call([&] {
                return PointerGetDatum(
                    construct_array(parts, 3, FLOAT8OID, sizeof(float8), FLOAT8PASSBYVAL, 'd'));
            });
        }
        default:
            *null = s.count == 0;
            return Float8GetDatum(s.value);
    }
}

void put_groups(tscoll::pg::RowSink &sink, const std::vector<TimeGroup> &groups,
                const std::vector<Aggregate> &aggregates, bool grouped_by_time) {
    size_t width = aggregates.size() + 2;
    std::vector<Datum> values(width);
    std::unique_ptr<bool[]> nulls(new bool[width]());
    nulls[0] = !grouped_by_time;
    nulls[1] = true;  // doc: not read
    for (const TimeGroup &g : groups) {
        values[0] = TimestampTzGetDatum(g.start);
        for (size_t i = 0; i < aggregates.size(); i++)
            values[i + 2] = state_datum(g.states[i], aggregates[i].kind, &nulls[i + 2]);
        sink.put(values.data(), nulls.get());
    }
}

}  // namespace

// tscoll._unpack_groups(_id objectid, meta jsonb, data bytea, time_field
// text, meta_field text, unit text, aggregates text[], lower timestamptz,
// lower_strict boolean, upper timestamptz, upper_strict boolean) RETURNS
// SETOF record: for each date_trunc(unit, time) of the measurements within
// the bounds (unit NULL: one group, time NULL; with stride and origin after
// upper_strict, date_bin(stride, time, origin), or with unit 'epoch' the
// bins of an epoch grouping (Bins); with a zone after those,
// date_trunc(unit, time, zone)), a row of the group's start,
// a NULL doc, and a column per aggregate (Aggregate): float8 for max, min
// and sum, avg(float8)'s state float8[] for avg, bigint for counts.
TSCOLL_FUNCTION(tscoll_unpack_groups) {
    tscoll::pg::TuplestoreSink sink(fcinfo);
    tscoll::pg::unpack_groups_rows(fcinfo, sink);
    return PointerGetDatum(nullptr);
}

void tscoll::pg::unpack_groups_rows(FunctionCallInfo fcinfo, RowSink &sink) {
    if (PG_ARGISNULL(0) || PG_ARGISNULL(2) || PG_ARGISNULL(3) || PG_ARGISNULL(6))
        return;
    std::optional<tscoll::pg::TimeRange> range =
        tscoll::pg::time_range_arg(fcinfo, tscoll::pg::unpack_call::kGroupsWindow);
    if (!range)
        return;
    std::vector<Aggregate> aggregates;
    std::vector<Field> fields;
    parse_aggregates(tscoll::pg::text_array_arg(fcinfo, 6), &aggregates, &fields);
    if (sink.desc()->natts != static_cast<int>(aggregates.size()) + 2)
        throw Error(tscoll::ErrorCode::Internal,
                    "_unpack_groups: one column per aggregate expected");
    std::optional<Truncation> truncation;
    std::optional<Bins> bins;
    using tscoll::pg::unpack_call::kGroupsOrigin;
    using tscoll::pg::unpack_call::kGroupsStride;
    using tscoll::pg::unpack_call::kGroupsZone;
    using tscoll::pg::unpack_call::kUnit;
    bool has_bins =
        PG_NARGS() > kGroupsOrigin && !PG_ARGISNULL(kGroupsStride) && !PG_ARGISNULL(kGroupsOrigin);
    bool has_zone = PG_NARGS() > kGroupsZone;
    if (PG_ARGISNULL(kUnit) || (has_bins && text_of(PG_GETARG_DATUM(kUnit)) == "epoch")) {
        // date_bin (strict: a NULL stride or origin makes one NULL group)
        // or the bins of an epoch grouping.
        if (has_bins)
            bins.emplace(PG_GETARG_DATUM(kGroupsStride), PG_GETARG_DATUM(kGroupsOrigin),
                         !PG_ARGISNULL(kUnit));
    } else if (!has_zone || !PG_ARGISNULL(kGroupsZone)) {
        // date_trunc; in a NULL zone it is NULL, one group.
        truncation.emplace(
            PG_GETARG_DATUM(kUnit),
            has_zone ? std::optional<Datum>(PG_GETARG_DATUM(kGroupsZone)) : std::nullopt);
    }

    const auto *id = reinterpret_cast<const tscoll::ObjectId *>(PG_GETARG_POINTER(0));
    bytea *data = pg_call([&] { return PG_GETARG_BYTEA_PP(2); });
    // One column a name: a field may be read both ways (cast and typed).
    std::vector<std::string> names;
    std::vector<size_t> column_of;
    for (const Field &f : fields) {
        size_t c = std::find(names.begin(), names.end(), f.name) - names.begin();
        if (c == names.size())
            names.push_back(f.name);
        column_of.push_back(c);
    }
    tscoll::Float8Columns bucket =
        tscoll::pg::decode_bucket_float8(*id, data, tscoll::pg::text_arg(fcinfo, 3), names);
    for (size_t i = 0; i < fields.size(); i++)
        fields[i].read(bucket.fields[column_of[i]]);

    uint32_t count = static_cast<uint32_t>(bucket.times.size());
    std::vector<TimestampTz> at(count);
    TimestampTz first = 0, last = 0;
    for (uint32_t row = 0; row < count; row++) {
        at[row] = tscoll::pg::to_timestamptz(bucket.times[row]);
        first = row == 0 ? at[row] : std::min(first, at[row]);
        last = row == 0 ? at[row] : std::max(last, at[row]);
    }
    if (truncation)
        truncation->prepare(first, last);

    std::vector<TimeGroup> groups;
    std::unordered_map<TimestampTz, size_t> group_of;
    std::vector<double> row_values(fields.size());
    std::unique_ptr<bool[]> row_has(new bool[fields.size()]);
    size_t current = 0;  // the group of the previous measurement, most often the next's
    for (uint32_t row = 0; row < count; row++) {
        if (!range->contains(at[row]))
            continue;
        TimestampTz start = truncation ? (*truncation)(at[row]) : bins ? (*bins)(at[row]) : 0;
        if (groups.empty() || groups[current].start != start) {
            auto [found, added] = group_of.emplace(start, groups.size());
            if (added)
                groups.push_back({start, std::vector<Float8State>(aggregates.size())});
            current = found->second;
        }
        TimeGroup &group = groups[current];
        for (size_t i = 0; i < fields.size(); i++)
            row_has[i] = fields[i].at(row, row_values[i]);
        for (size_t i = 0; i < aggregates.size(); i++) {
            if (aggregates[i].kind == Float8Aggregate::Rows)
                group.states[i].add(aggregates[i].kind, 0);
            else if (row_has[aggregates[i].field])
                group.states[i].add(aggregates[i].kind, row_values[aggregates[i].field]);
        }
    }
    put_groups(sink, groups, aggregates, truncation || bins);
}
