#include "core/measurement.hpp"

#include <algorithm>

#include "core/compare.hpp"
#include "core/error.hpp"
#include "core/number.hpp"

namespace tscoll {

Value view_document(Value fields, const std::string &time_field, const std::string &meta_field,
                    const std::optional<Value> &meta) {
    for (Member &m : fields.as_object())
        if (m.key == time_field && m.value.is(Value::Kind::Date))
            m.value = Value::string(format_canonical_date(m.value.as_date()));
    if (meta && !meta_field.empty())
        fields.add(meta_field, *meta);
    return fields;
}

void throw_bad_date(const CollectionFields &fields) {
    throw Error(ErrorCode::BadDate,
                "'" + fields.time_field + "' must be present and contain a valid date value",
                "Collection \"" + fields.collection + "\".",
                "Give the time as an ISO 8601 string with a UTC offset, a {\"$date\": ...} "
                "value, or a timestamptz in the time column.");
}

namespace {

std::optional<UnixMicros> time_value(const Value &v) {
    if (v.is(Value::Kind::String))
        return parse_iso_date(v.as_string());
    if (v.is(Value::Kind::Date))
        return v.as_date();
    return extended_json_date(v);
}

// Turns every {"$date": ...} inside `v` into a Date value.
void recognise_dates(Value &v) {
    if (v.is(Value::Kind::Object)) {
        if (std::optional<UnixMicros> t = extended_json_date(v)) {
            v = Value::date(*t);
            return;
        }
        for (Member &m : v.as_object())
            recognise_dates(m.value);
    } else if (v.is(Value::Kind::Array)) {
        for (Value &e : v.as_array())
            recognise_dates(e);
    }
}

void check_limits(const Value &fields, const std::optional<KnownMeta> &meta,
                  const CollectionFields &names, uint64_t size, uint64_t max_size) {
    uint64_t total = size;
    if (meta)
        total += 1 + names.meta_field.size() + 1 + meta->bson_size;
    if (total > max_size)
        throw Error(
            ErrorCode::TooLarge,
            "measurement of " + std::to_string(total) +
                " bytes is too large for "
                "collection \"" +
                names.collection + "\"",
            "The limit is tscoll.max_measurement_size = " + std::to_string(max_size) + " bytes.");
    if (nesting_depth(fields) > kMaxNestingDepth ||
        (meta && meta->nesting_depth + 1 > kMaxNestingDepth))
        throw Error(ErrorCode::TooLarge, "measurement for collection \"" + names.collection +
                                             "\" is nested deeper "
                                             "than " +
                                             std::to_string(kMaxNestingDepth) + " levels");
}

void append_canonical(std::string &out, const Value &v) {
    switch (v.kind()) {
        case Value::Kind::Null:
            out += 'n';
            break;
        case Value::Kind::Bool:
            out += v.as_bool() ? 't' : 'f';
            break;
        case Value::Kind::Number: {
            Decimal d = Decimal::parse(v.as_number().text).value_or(Decimal{});
            out += d.negative ? "-" : "+";
            out += d.digits + 'e' + std::to_string(d.exponent) + ';';
            break;
        }
        case Value::Kind::String:
            out += 's' + std::to_string(v.as_string().size()) + ':' + v.as_string();
            break;
        case Value::Kind::Array:
            out += '[';
            for (const Value &e : v.as_array())
                append_canonical(out, e);
            out += ']';
            break;
        case Value::Kind::Object: {
            std::vector<const Member *> members;
            for (const Member &m : v.as_object())
                members.push_back(&m);
            std::sort(members.begin(), members.end(),
                      [](const Member *a, const Member *b) { return a->key < b->key; });
            out += '{';
            for (const Member *m : members) {
                out += std::to_string(m->key.size()) + ':' + m->key;
                append_canonical(out, m->value);
            }
            out += '}';
            break;
        }
        case Value::Kind::Date:
            out += 'd' + std::to_string(v.as_date()) + ';';
            break;
        case Value::Kind::ObjectId:
            out += 'o' + v.as_objectid().to_hex();
            break;
    }
}

}  // namespace

std::optional<UnixMicros> extended_json_date(const Value &v) {
    if (!v.is(Value::Kind::Object) || v.as_object().size() != 1 || v.as_object()[0].key != "$date")
        return std::nullopt;
    const Value &inner = v.as_object()[0].value;
    if (inner.is(Value::Kind::String))
        return parse_iso_date(inner.as_string());
    if (inner.is(Value::Kind::Object) && inner.as_object().size() == 1 &&
        inner.as_object()[0].key == "$numberLong" &&
        inner.as_object()[0].value.is(Value::Kind::String)) {
        std::optional<int64_t> ms = exact_int64(inner.as_object()[0].value.as_string());
        // Milliseconds within +/-200000 years, like the text forms.
        if (ms && *ms > -6311390400000000 && *ms < 6311390400000000)
            return *ms * 1000;
    }
    return std::nullopt;
}

bool json_equal(const Value &a, const Value &b) {
    std::string ka, kb;
    append_canonical(ka, a);
    append_canonical(kb, b);
    return ka == kb;
}

std::string series_key(const std::optional<Value> &meta) {
    std::string key = meta ? "=" : "-";
    if (meta)
        append_canonical(key, *meta);
    return key;
}

KnownMeta known_meta(const Value &meta) {
    return KnownMeta{bson_value_size(meta), nesting_depth(meta), spelling_hash(meta)};
}

PreparedMeasurement prepare_measurement(MeasurementInput input, const CollectionFields &names,
                                        uint64_t max_measurement_size, const ObjectId &generated_id,
                                        const KnownMeta *known) {
    Value doc = input.doc ? std::move(*input.doc) : Value::object();
    if (!doc.is(Value::Kind::Object))
        throw Error(ErrorCode::BadValue,
                    "a measurement must be a JSON object, not " + std::string(doc.type_name()),
                    "Collection \"" + names.collection + "\".");
    std::optional<Value> meta = std::move(input.meta);
    Value::Object &given = doc.as_object();
    auto has = [&](const std::string &key) {
        return std::any_of(given.begin(), given.end(),
                           [&](const Member &m) { return m.key == key; });
    };
    // The fields: a generated _id first, then the time field when only its
    // column gives it, then the doc's own, built in that order (inserting
    // at the front would move every member).
    bool has_id = has("_id");
    bool has_time = has(names.time_field);
    Value fields = Value::object();
    Value::Object &members = fields.as_object();
    members.reserve(given.size() + 2);
    if (!has_id)
        members.push_back(Member{"_id", Value::objectid(generated_id)});
    if (!has_time)
        members.push_back(Member{names.time_field, Value()});  // set below
    for (Member &m : given) {
        if (!names.meta_field.empty() && m.key == names.meta_field) {
            if (known != nullptr)
                throw Error(ErrorCode::Internal, "a meta field both known and given");
            if (meta && !json_equal(*meta, m.value))
                throw Error(
                    ErrorCode::BadValue,
                    "the meta column and doc give different values for '" + names.meta_field + "'",
                    "Collection \"" + names.collection + "\".",
                    "Give the meta field in one place only.");
            meta = std::move(m.value);
            continue;
        }
        if (m.key == names.time_field) {
            std::optional<UnixMicros> t = time_value(m.value);
            if (!t)
                throw_bad_date(names);
            if (input.time && *input.time != *t)
                throw Error(
                    ErrorCode::BadValue,
                    "the time column and doc give different values for '" + names.time_field + "'",
                    "Collection \"" + names.collection + "\".",
                    "Give the time field in one place only.");
            input.time = t;
            members.push_back(Member{m.key, Value::date(*t)});
            continue;
        }
        recognise_dates(m.value);
        members.push_back(std::move(m));
    }
    // A bucket must start where PostgreSQL's dates do, too.
    if (!input.time || *input.time > kMaxTime ||
        bucket_start(*input.time, names.rounding_seconds) < kMinTime)
        throw_bad_date(names);
    if (!has_time)
        members[has_id ? 0 : 1].value = Value::date(*input.time);
    uint64_t size = bson_document_size(fields);
    std::optional<KnownMeta> meta_limits;
    if (known != nullptr)
        meta_limits = *known;
    else if (meta)
        meta_limits = known_meta(*meta);
    check_limits(fields, meta_limits, names, size, max_measurement_size);
    return PreparedMeasurement{Measurement{*input.time, std::move(fields), size}, std::move(meta),
                               meta_limits ? meta_limits->spelling : 0};
}

}  // namespace tscoll
