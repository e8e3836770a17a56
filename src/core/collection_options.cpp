#include "core/collection_options.hpp"

#include "core/error.hpp"

#include <algorithm>

namespace tscoll {

namespace {

constexpr const char *kPrefix = "invalid time-series option: ";
constexpr size_t kMaxColumnNameBytes = 63;  // NAMEDATALEN - 1

[[noreturn]] void invalid(const std::string &what) {
    throw Error(ErrorCode::InvalidOptions, kPrefix + what);
}

[[noreturn]] void type_mismatch(const std::string &option, const char *expected, const Value &got) {
    throw Error(ErrorCode::TypeMismatch, std::string(kPrefix) + "\"" + option + "\" must be " +
                                             expected + ", not " + got.type_name());
}

std::string quoted(std::string_view s) {
    return "\"" + std::string(s) + "\"";
}

// The string value of an optional option; type-checked.
std::optional<std::string> string_option(const Value &object, const char *key) {
    const Value *v = object.find(key);
    if (v == nullptr)
        return std::nullopt;
    if (!v->is(Value::Kind::String))
        type_mismatch(key, "a string", *v);
    return v->as_string();
}

// The integer value of an optional numeric option; type-checked.
std::optional<int64_t> integer_option(const Value &object, const char *key) {
    const Value *v = object.find(key);
    if (v == nullptr)
        return std::nullopt;
    if (!v->is(Value::Kind::Number))
        type_mismatch(key, "a number", *v);
    std::optional<int64_t> n = v->as_exact_int64();
    if (!n)
        throw Error(ErrorCode::BadValue, std::string(kPrefix) + quoted(key) +
                                             " must be an integer in range, not " +
                                             v->as_number().text);
    return n;
}

void check_known_keys(const Value &object, std::initializer_list<std::string_view> known,
                      const char *where) {
    for (const Member &m : object.as_object()) {
        bool ok = false;
        for (std::string_view k : known)
            ok = ok || m.key == k;
        if (!ok)
            invalid("unknown option " + quoted(m.key) + where);
    }
}

void check_field_name(const char *option, const std::string &name) {
    if (name.empty())
        invalid(quoted(option) + " must not be empty");
    if (name.find('.') != std::string::npos)
        invalid(quoted(option) + " must not contain '.': " + quoted(name));
    if (name.find('\0') != std::string::npos)
        invalid(quoted(option) + " must not contain a NUL byte");
    if (name[0] == '$')
        invalid(quoted(option) + " must not start with '$': " + quoted(name));
    // It names a column of the view, and PostgreSQL would cut it short.
    if (name.size() > kMaxColumnNameBytes)
        invalid(quoted(option) + " must be at most " + std::to_string(kMaxColumnNameBytes) +
                " bytes long (a view column's name): " + quoted(name));
}

void check_field_names(const CollectionOptions &o) {
    check_field_name("timeField", o.time_field);
    if (o.meta_field)
        check_field_name("metaField", *o.meta_field);
    if (o.meta_field == o.time_field)
        invalid("\"metaField\" must differ from \"timeField\"");
    if (o.meta_field == "_id")
        invalid("\"metaField\" must not be \"_id\"");
    // Every measurement has an _id of its own, generated when missing.
    if (o.time_field == "_id")
        invalid("\"timeField\" must not be \"_id\"");
    // The view's document column is named "doc".
    if (o.time_field == "doc")
        invalid("\"timeField\" must not be \"doc\", the name of the document column");
    if (o.meta_field == "doc")
        invalid("\"metaField\" must not be \"doc\", the name of the document column");
}

// A typed field's name is a measurement field's and a view column's.
void check_typed_field(const CollectionOptions &o, const std::string &name) {
    check_field_name(("fields." + name).c_str(), name);
    if (name == o.time_field)
        invalid("typed field " + quoted(name) +
                " is the time field, which the view has as a column already");
    if (o.meta_field == name)
        invalid("typed field " + quoted(name) +
                " is the meta field, which the view has as a column already");
    if (name == "doc")
        invalid("typed field \"doc\" would clash with the view's document column");
}

// {"<name>": "<type>", ...}: each new field checked against `o`.
std::vector<TypedField> parse_typed_fields(const CollectionOptions &o, const Value &fields) {
    if (!fields.is(Value::Kind::Object))
        type_mismatch("fields", "an object", fields);
    std::vector<TypedField> result;
    for (const Member &m : fields.as_object()) {
        if (!m.value.is(Value::Kind::String))
            type_mismatch("fields." + m.key, "a type name", m.value);
        check_typed_field(o, m.key);
        std::optional<std::string> type = typed_field_type(m.value.as_string());
        if (!type)
            invalid("typed field " + quoted(m.key) + " has unknown type " +
                    quoted(m.value.as_string()) +
                    "; the types are float8, int8, int4, text, bool, timestamptz and jsonb");
        result.push_back({m.key, *type});
    }
    return result;
}

void set_bucketing(CollectionOptions &o, const std::optional<std::string> &granularity,
                   std::optional<int64_t> span, std::optional<int64_t> rounding) {
    if (!granularity && (span || rounding)) {
        if (!span || !rounding)
            invalid(
                "\"bucketMaxSpanSeconds\" and \"bucketRoundingSeconds\" must be given together");
        if (*span != *rounding)
            invalid("\"bucketMaxSpanSeconds\" and \"bucketRoundingSeconds\" must be equal");
        if (*span < 1 || *span > kMaxBucketSpanSeconds)
            invalid("\"bucketMaxSpanSeconds\" must be between 1 and " +
                    std::to_string(kMaxBucketSpanSeconds) + ", not " + std::to_string(*span));
        o.granularity.reset();
        o.bucket_max_span_seconds = o.bucket_rounding_seconds = static_cast<int32_t>(*span);
        return;
    }
    Granularity g = Granularity::Seconds;
    if (granularity) {
        std::optional<Granularity> named = granularity_from_name(*granularity);
        if (!named)
            invalid("\"granularity\" must be one of \"seconds\", \"minutes\" or \"hours\", not " +
                    quoted(*granularity));
        g = *named;
    }
    BucketingDefaults d = bucketing_defaults(g);
    if (rounding)
        invalid("\"bucketRoundingSeconds\" cannot be set together with \"granularity\"");
    if (span && *span != d.max_span_seconds)
        invalid("\"bucketMaxSpanSeconds\" must be " + std::to_string(d.max_span_seconds) +
                " with granularity " + quoted(granularity_name(g)) + ", not " +
                std::to_string(*span));
    o.granularity = g;
    o.bucket_max_span_seconds = d.max_span_seconds;
    o.bucket_rounding_seconds = d.rounding_seconds;
}

void set_expiry(CollectionOptions &o, std::optional<int64_t> expire) {
    if (expire && (*expire < 0 || *expire >= kExpireAfterSecondsLimit))
        invalid("\"expireAfterSeconds\" must be between 0 and 2^62 - 1, not " +
                std::to_string(*expire));
    o.expire_after_seconds = expire;
}

}  // namespace

std::optional<std::string> typed_field_type(std::string_view name) {
    static const std::pair<const char *, const char *> aliases[] = {
        {"double precision", "float8"},
        {"bigint", "int8"},
        {"integer", "int4"},
        {"int", "int4"},
        {"boolean", "bool"},
        {"timestamp with time zone", "timestamptz"},
    };
    for (const char *type : kTypedFieldTypes)
        if (name == type)
            return std::string(type);
    for (const auto &[alias, type] : aliases)
        if (name == alias)
            return std::string(type);
    return std::nullopt;
}

const char *granularity_name(Granularity g) {
    switch (g) {
        case Granularity::Seconds:
            return "seconds";
        case Granularity::Minutes:
            return "minutes";
        case Granularity::Hours:
            return "hours";
    }
    return "seconds";
}

std::optional<Granularity> granularity_from_name(std::string_view name) {
    for (Granularity g : {Granularity::Seconds, Granularity::Minutes, Granularity::Hours})
        if (name == granularity_name(g))
            return g;
    return std::nullopt;
}

BucketingDefaults bucketing_defaults(Granularity g) {
    switch (g) {
        case Granularity::Seconds:
            return {3600, 60};
        case Granularity::Minutes:
            return {86400, 3600};
        case Granularity::Hours:
            return {2592000, 86400};
    }
    return {3600, 60};
}

bool CollectionOptions::operator==(const CollectionOptions &o) const {
    return time_field == o.time_field && meta_field == o.meta_field &&
           granularity == o.granularity && bucket_max_span_seconds == o.bucket_max_span_seconds &&
           bucket_rounding_seconds == o.bucket_rounding_seconds &&
           expire_after_seconds == o.expire_after_seconds && fields == o.fields;
}

CollectionOptions parse_create_options(const Value &options) {
    if (!options.is(Value::Kind::Object))
        type_mismatch("options", "an object", options);
    const Value *ts = options.find("timeseries");
    if (ts != nullptr && !ts->is(Value::Kind::Object))
        type_mismatch("timeseries", "an object", *ts);
    const Value *time_field = ts != nullptr ? ts->find("timeField") : nullptr;
    if (time_field == nullptr ||
        (time_field->is(Value::Kind::String) && time_field->as_string().empty()))
        invalid("\"timeField\" is required and must not be empty");

    // The rules of doc/REFERENCE.md, tscoll.create_collection and
    // tscoll.create_collection_from_options, in this order: the first failing
    // rule raises.
    CollectionOptions o;
    o.time_field = *string_option(*ts, "timeField");
    o.meta_field = string_option(*ts, "metaField");
    check_known_keys(
        *ts,
        {"timeField", "metaField", "granularity", "bucketMaxSpanSeconds", "bucketRoundingSeconds"},
        " in \"timeseries\"");
    check_known_keys(options, {"timeseries", "expireAfterSeconds", "fields"}, "");
    check_field_names(o);
    std::optional<std::string> granularity = string_option(*ts, "granularity");
    std::optional<int64_t> span = integer_option(*ts, "bucketMaxSpanSeconds");
    std::optional<int64_t> rounding = integer_option(*ts, "bucketRoundingSeconds");
    set_bucketing(o, granularity, span, rounding);
    set_expiry(o, integer_option(options, "expireAfterSeconds"));
    const Value *fields = options.find("fields");
    if (fields != nullptr && !fields->is(Value::Kind::Null))
        o.fields = parse_typed_fields(o, *fields);
    return o;
}

Value to_flat_value(const CollectionOptions &o) {
    Value v = Value::object();
    v.add("timeField", Value::string(o.time_field));
    v.add("metaField", o.meta_field ? Value::string(*o.meta_field) : Value::null());
    v.add("granularity",
          o.granularity ? Value::string(granularity_name(*o.granularity)) : Value::null());
    v.add("bucketMaxSpanSeconds", Value::number(o.bucket_max_span_seconds));
    v.add("bucketRoundingSeconds", Value::number(o.bucket_rounding_seconds));
    v.add("expireAfterSeconds",
          o.expire_after_seconds ? Value::number(*o.expire_after_seconds) : Value::null());
    Value fields = Value::object();
    for (const TypedField &f : o.fields)
        fields.add(f.name, Value::string(f.type));
    v.add("fields", std::move(fields));
    return v;
}

CollectionOptions from_flat_value(const Value &flat) {
    CollectionOptions o;
    o.time_field = *string_option(flat, "timeField");
    const Value *meta = flat.find("metaField");
    if (meta != nullptr && !meta->is(Value::Kind::Null))
        o.meta_field = *string_option(flat, "metaField");
    const Value *granularity = flat.find("granularity");
    if (granularity != nullptr && !granularity->is(Value::Kind::Null))
        o.granularity = granularity_from_name(*string_option(flat, "granularity"));
    o.bucket_max_span_seconds = static_cast<int32_t>(*integer_option(flat, "bucketMaxSpanSeconds"));
    o.bucket_rounding_seconds =
        static_cast<int32_t>(*integer_option(flat, "bucketRoundingSeconds"));
    const Value *expire = flat.find("expireAfterSeconds");
    if (expire != nullptr && !expire->is(Value::Kind::Null))
        o.expire_after_seconds = integer_option(flat, "expireAfterSeconds");
    const Value *fields = flat.find("fields");
    if (fields != nullptr && fields->is(Value::Kind::Object))
        for (const Member &m : fields->as_object())
            o.fields.push_back({m.key, m.value.as_string()});
    return o;
}

namespace {

// {"granularity": g} (with, at most, g's own default span): only upward,
// and from fixed bucketing only to a granularity that is not finer.
bool change_granularity(CollectionOptions &o, const std::string &name, std::optional<int64_t> span,
                        std::optional<int64_t> rounding) {
    std::optional<Granularity> g = granularity_from_name(name);
    if (!g)
        invalid("\"granularity\" must be one of \"seconds\", \"minutes\" or \"hours\", not " +
                quoted(name));
    BucketingDefaults d = bucketing_defaults(*g);
    if (rounding)
        invalid("\"bucketRoundingSeconds\" cannot be changed together with \"granularity\"");
    if (span && *span != d.max_span_seconds)
        invalid("\"bucketMaxSpanSeconds\" must be " + std::to_string(d.max_span_seconds) +
                " with granularity " + quoted(name) + ", not " + std::to_string(*span));
    if (o.granularity == g)
        return false;
    if (o.granularity && *g < *o.granularity)
        invalid("\"granularity\" can only increase (seconds, minutes, hours), not go from " +
                quoted(granularity_name(*o.granularity)) + " to " + quoted(name));
    if (!o.granularity && (d.max_span_seconds < o.bucket_max_span_seconds ||
                           d.rounding_seconds < o.bucket_rounding_seconds))
        invalid("\"granularity\" " + quoted(name) +
                " would decrease the collection's bucketMaxSpanSeconds or "
                "bucketRoundingSeconds");
    o.granularity = g;
    o.bucket_max_span_seconds = d.max_span_seconds;
    o.bucket_rounding_seconds = d.rounding_seconds;
    return true;
}

// {"bucketMaxSpanSeconds": s, "bucketRoundingSeconds": s}: fixed
// bucketing, neither value decreasing.
bool change_fixed_bucketing(CollectionOptions &o, std::optional<int64_t> span,
                            std::optional<int64_t> rounding) {
    if (!span || !rounding)
        invalid("\"bucketMaxSpanSeconds\" and \"bucketRoundingSeconds\" must be changed together");
    if (*span != *rounding)
        invalid("\"bucketMaxSpanSeconds\" and \"bucketRoundingSeconds\" must be equal");
    if (*span < 1 || *span > kMaxBucketSpanSeconds)
        throw Error(ErrorCode::BadValue,
                    std::string(kPrefix) + "\"bucketMaxSpanSeconds\" must be between 1 and " +
                        std::to_string(kMaxBucketSpanSeconds) + ", not " + std::to_string(*span));
    if (*span < o.bucket_max_span_seconds || *rounding < o.bucket_rounding_seconds)
        invalid("\"bucketMaxSpanSeconds\" and \"bucketRoundingSeconds\" cannot decrease (now " +
                std::to_string(o.bucket_max_span_seconds) + " and " +
                std::to_string(o.bucket_rounding_seconds) + ")");
    bool changed = o.granularity || *span != o.bucket_max_span_seconds;
    o.granularity.reset();
    o.bucket_max_span_seconds = o.bucket_rounding_seconds = static_cast<int32_t>(*span);
    return changed;
}

bool change_bucketing(CollectionOptions &o, const Value &ts) {
    if (!ts.is(Value::Kind::Object))
        type_mismatch("timeseries", "an object", ts);
    check_known_keys(ts, {"granularity", "bucketMaxSpanSeconds", "bucketRoundingSeconds"},
                     " in \"timeseries\" (the time and meta fields never change)");
    std::optional<std::string> granularity = string_option(ts, "granularity");
    std::optional<int64_t> span = integer_option(ts, "bucketMaxSpanSeconds");
    std::optional<int64_t> rounding = integer_option(ts, "bucketRoundingSeconds");
    if (granularity)
        return change_granularity(o, *granularity, span, rounding);
    if (span || rounding)
        return change_fixed_bucketing(o, span, rounding);
    return false;
}

void change_expiry(CollectionOptions &o, const Value &expire) {
    if (expire.is(Value::Kind::String)) {
        if (expire.as_string() != "off")
            invalid("\"expireAfterSeconds\" must be a number or \"off\", not " +
                    quoted(expire.as_string()));
        o.expire_after_seconds.reset();
        return;
    }
    if (!expire.is(Value::Kind::Number))
        type_mismatch("expireAfterSeconds", "a number or \"off\"", expire);
    std::optional<int64_t> n = expire.as_exact_int64();
    if (!n)
        invalid("\"expireAfterSeconds\" must be an integer, not " + expire.as_number().text);
    set_expiry(o, n);
}

Value checked_index_change(const Value &index) {
    if (!index.is(Value::Kind::Object))
        type_mismatch("index", "an object", index);
    check_known_keys(index, {"name", "keyPattern", "hidden", "expireAfterSeconds"},
                     " in \"index\" (a time-series index can only be hidden or unhidden)");
    const Value *name = index.find("name");
    const Value *key_pattern = index.find("keyPattern");
    if ((name == nullptr) == (key_pattern == nullptr))
        invalid("\"index\" needs exactly one of \"name\" and \"keyPattern\"");
    if (name != nullptr && !name->is(Value::Kind::String))
        type_mismatch("index.name", "a string", *name);
    if (key_pattern != nullptr && !key_pattern->is(Value::Kind::Object))
        type_mismatch("index.keyPattern", "an object", *key_pattern);
    const Value *hidden = index.find("hidden");
    if (hidden != nullptr && !hidden->is(Value::Kind::Bool))
        type_mismatch("index.hidden", "a boolean", *hidden);
    const Value *expire = index.find("expireAfterSeconds");
    if (hidden == nullptr && expire == nullptr)
        invalid("\"index\" must change \"hidden\" or \"expireAfterSeconds\"");
    if (expire != nullptr) {
        // As create_index checks it: a bad value here would fail every TTL pass.
        if (!expire->is(Value::Kind::Number) && !expire->is(Value::Kind::String))
            type_mismatch("index.expireAfterSeconds", "a number", *expire);
        std::optional<int64_t> n = expire->as_exact_int64();
        if (!n || *n < 0 || *n >= kExpireAfterSecondsLimit)
            invalid("\"index.expireAfterSeconds\" must be an integer between 0 and 2^62 - 1, not " +
                    to_json_text(*expire));
    }
    return index;
}

// New typed fields; one already there must keep its type (a view column's
// type never changes).
std::vector<TypedField> add_typed_fields(CollectionOptions &o, const Value &fields) {
    std::vector<TypedField> added;
    for (TypedField &f : parse_typed_fields(o, fields)) {
        auto same_name = [&](const TypedField &e) { return e.name == f.name; };
        auto existing = std::find_if(o.fields.begin(), o.fields.end(), same_name);
        if (existing == o.fields.end()) {
            added.push_back(f);
            o.fields.push_back(std::move(f));
        } else if (existing->type != f.type) {
            invalid("typed field " + quoted(f.name) + " is " + existing->type +
                    " and cannot become " + f.type);
        }
    }
    return added;
}

}  // namespace

CollMod apply_coll_mod(const CollectionOptions &current, const Value &changes) {
    if (!changes.is(Value::Kind::Object))
        type_mismatch("changes", "an object", changes);
    for (const Member &m : changes.as_object())
        if (m.key != "timeseries" && m.key != "expireAfterSeconds" && m.key != "index" &&
            m.key != "fields")
            invalid(quoted(m.key) + " cannot be changed on a time-series collection");
    CollMod result{current, false, std::nullopt, {}};
    const Value *ts = changes.find("timeseries");
    if (ts != nullptr && changes.as_object().size() > 1)
        invalid("\"timeseries\" changes cannot be combined with other changes");
    if (ts != nullptr)
        result.bucketing_changed = change_bucketing(result.options, *ts);
    if (const Value *expire = changes.find("expireAfterSeconds"))
        change_expiry(result.options, *expire);
    if (const Value *index = changes.find("index"))
        result.index = checked_index_change(*index);
    if (const Value *fields = changes.find("fields"))
        result.added_fields = add_typed_fields(result.options, *fields);
    return result;
}

}  // namespace tscoll
