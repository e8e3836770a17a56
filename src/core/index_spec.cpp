#include "core/index_spec.hpp"

#include <algorithm>

#include "core/collection_options.hpp"
#include "core/error.hpp"

namespace tscoll {

namespace {

[[noreturn]] void bad_spec(const std::string &what) {
    throw Error(ErrorCode::BadValue, "invalid time-series index: " + what);
}

[[noreturn]] void unsupported(const std::string &what) {
    throw Error(ErrorCode::Unsupported, "time-series collections do not support " + what);
}

// "a.b.c" -> ->'a'->'b'->'c'
std::string json_path(const std::string &dotted) {
    std::string path;
    size_t start = 0;
    while (start <= dotted.size()) {
        size_t dot = dotted.find('.', start);
        if (dot == std::string::npos)
            dot = dotted.size();
        std::string part = dotted.substr(start, dot - start);
        if (part.empty())
            bad_spec("empty path component in \"" + dotted + "\"");
        path += "->" + sql_literal(part);
        start = dot + 1;
    }
    return path;
}

// The meta sub-path of a field ("" for the meta field itself), if it is one.
std::optional<std::string> meta_path(const std::string &field,
                                     const std::optional<std::string> &meta_field) {
    if (!meta_field)
        return std::nullopt;
    if (field == *meta_field)
        return "";
    if (field.size() > meta_field->size() &&
        field.compare(0, meta_field->size(), *meta_field) == 0 && field[meta_field->size()] == '.')
        return json_path(field.substr(meta_field->size() + 1));
    return std::nullopt;
}

// 1 or -1; the kinds MongoDB names by strings are not supported.
int direction_of(const IndexKey &key) {
    if (key.direction.is(Value::Kind::String))
        unsupported("\"" + key.direction.as_string() + "\" indexes (key \"" + key.field + "\")");
    std::optional<int64_t> d = key.direction.as_exact_int64();
    if (!d || (*d != 1 && *d != -1))
        bad_spec("the direction of key \"" + key.field + "\" must be 1 or -1");
    return static_cast<int>(*d);
}

std::string default_name_part(const IndexKey &key) {
    return key.field + "_" +
           (key.direction.is(Value::Kind::Number) ? key.direction.as_number().text
                                                  : key.direction.as_string());
}

void add_columns(IndexDefinition &def, const IndexKey &key, const std::string &time_field,
                 const std::optional<std::string> &meta_field) {
    if (key.field.empty())
        bad_spec("an index key must not be empty");
    if (key.field.find("$**") != std::string::npos)
        unsupported("wildcard indexes (key \"" + key.field + "\")");
    // MongoDB's CannotCreateIndex: no path part may be empty or start with '$'.
    for (size_t start = 0; start <= key.field.size();) {
        size_t end = std::min(key.field.find('.', start), key.field.size());
        if (end == start || key.field[start] == '$')
            bad_spec("index key \"" + key.field + "\" has an empty part or one starting with '$'");
        start = end + 1;
    }
    int d = direction_of(key);
    const char *dir = d > 0 ? " ASC" : " DESC";
    if (key.field == time_field) {
        def.columns.push_back(d > 0 ? "min_time ASC" : "max_time DESC");
        def.columns.push_back(d > 0 ? "max_time ASC" : "min_time DESC");
    } else if (std::optional<std::string> meta = meta_path(key.field, meta_field)) {
        def.columns.push_back((meta->empty() ? "meta" : "(meta" + *meta + ")") + dir);
    } else {
        std::string path = json_path(key.field);
        std::string min = "(control->'min'" + path + ")", max = "(control->'max'" + path + ")";
        def.columns.push_back((d > 0 ? min : max) + dir);
        def.columns.push_back((d > 0 ? max : min) + dir);
    }
}

std::string filter_condition(const std::string &target, const std::string &op, const Value &v);

// One field's condition of a partialFilterExpression: a value, or an
// object of $eq $gt $gte $lt $lte $in $exists.
std::string field_filter(const std::string &field, const Value &condition,
                         const std::optional<std::string> &meta_field) {
    std::optional<std::string> path = meta_path(field, meta_field);
    if (!path)
        bad_spec("partialFilterExpression may only use the meta field, not \"" + field + "\"");
    std::string target = "(meta" + *path + ")";
    bool operators = condition.is(Value::Kind::Object) && !condition.as_object().empty() &&
                     condition.as_object()[0].key[0] == '$';
    if (!operators)
        return filter_condition(target, "$eq", condition);
    std::string sql;
    for (const Member &m : condition.as_object())
        sql += (sql.empty() ? "" : " AND ") + filter_condition(target, m.key, m.value);
    return sql;
}

// jsonb_typeof's name for the values MongoDB compares with v: a range
// operator only matches values of the bound's own type.
const char *type_bracket(const Value &v) {
    switch (v.kind()) {
        case Value::Kind::Number:
            return "number";
        case Value::Kind::String:
            return "string";
        case Value::Kind::Object:
            return "object";
        case Value::Kind::Array:
            return "array";
        case Value::Kind::Bool:
            return "boolean";
        default:
            return "null";
    }
}

// MongoDB's null matches a null and a missing field alike.
std::string is_null(const std::string &target) {
    return "(" + target + " IS NULL OR " + target + " = 'null'::jsonb)";
}

std::string filter_condition(const std::string &target, const std::string &op, const Value &v) {
    static const std::pair<const char *, const char *> comparisons[] = {
        {"$eq", " = "}, {"$gt", " > "}, {"$gte", " >= "}, {"$lt", " < "}, {"$lte", " <= "}};
    for (const auto &[name, sql] : comparisons) {
        if (op != name)
            continue;
        if (v.is(Value::Kind::Null))
            return op == "$gt" || op == "$lt" ? "false" : is_null(target);
        std::string compare = target + sql + sql_literal(to_json_text(v)) + "::jsonb";
        if (op == "$eq")
            return compare;
        return "(jsonb_typeof(" + target + ") = '" + type_bracket(v) + "' AND " + compare + ")";
    }
    if (op == "$in") {
        if (!v.is(Value::Kind::Array) || v.as_array().empty())
            bad_spec("$in needs a non-empty array");
        std::string list;
        bool null = false;
        for (const Value &e : v.as_array()) {
            null = null || e.is(Value::Kind::Null);
            list += (list.empty() ? "" : ", ") + sql_literal(to_json_text(e)) + "::jsonb";
        }
        std::string in = target + " IN (" + list + ")";
        return null ? "(" + in + " OR " + target + " IS NULL)" : in;
    }
    if (op == "$exists") {
        if (!v.is(Value::Kind::Bool))
            bad_spec("$exists needs true or false");
        return target + (v.as_bool() ? " IS NOT NULL" : " IS NULL");
    }
    bad_spec("partialFilterExpression supports $eq $gt $gte $lt $lte $in $exists $and, not " + op);
}

std::string filter_predicate(const Value &filter, const std::optional<std::string> &meta_field) {
    if (!filter.is(Value::Kind::Object) || filter.as_object().empty())
        bad_spec("partialFilterExpression must be a non-empty object");
    std::string sql;
    for (const Member &m : filter.as_object()) {
        std::string part;
        if (m.key == "$and") {
            if (!m.value.is(Value::Kind::Array) || m.value.as_array().empty())
                bad_spec("$and needs a non-empty array");
            for (const Value &clause : m.value.as_array())
                part += (part.empty() ? "" : " AND ") + filter_predicate(clause, meta_field);
        } else if (!m.key.empty() && m.key[0] == '$') {
            bad_spec("partialFilterExpression supports $and, not " + m.key);
        } else {
            part = field_filter(m.key, m.value, meta_field);
        }
        sql += (sql.empty() ? "(" : " AND (") + part + ")";
    }
    return sql;
}

void apply_options(IndexDefinition &def, const Value &options, const std::vector<IndexKey> &keys,
                   const std::string &time_field, const std::optional<std::string> &meta_field) {
    if (!options.is(Value::Kind::Object))
        throw Error(ErrorCode::TypeMismatch,
                    "invalid time-series index: options must be an object");
    for (const Member &m : options.as_object()) {
        if (m.key == "unique" && m.value.is(Value::Kind::Bool) && m.value.as_bool())
            unsupported("unique indexes");
        if (m.key == "name") {
            if (!m.value.is(Value::Kind::String) || m.value.as_string().empty())
                bad_spec("\"name\" must be a non-empty string");
            def.name = m.value.as_string();
            continue;
        }
        if (m.key == "hidden") {
            if (!m.value.is(Value::Kind::Bool))
                throw Error(ErrorCode::TypeMismatch,
                            "invalid time-series index: \"hidden\" must be a boolean");
            def.hidden = m.value.as_bool();
        } else if (m.key == "partialFilterExpression") {
            def.predicate = filter_predicate(m.value, meta_field);
        } else if (m.key == "expireAfterSeconds") {
            std::optional<int64_t> e = m.value.as_exact_int64();
            if (!e || *e < 0 || *e >= kExpireAfterSecondsLimit)
                bad_spec("\"expireAfterSeconds\" must be an integer between 0 and 2^62 - 1");
            def.expire_after_seconds = e;
        } else if (m.key != "unique") {
            bad_spec("unknown index option \"" + m.key + "\"");
        }
        if (m.key != "unique")
            def.options.add(m.key, m.value);
    }
    if (def.expire_after_seconds) {
        if (keys.size() != 1 || keys[0].field != time_field)
            bad_spec("a TTL index must have the time field \"" + time_field + "\" as its only key");
        if (!def.predicate)
            bad_spec(
                "a TTL index on a time-series collection needs a partialFilterExpression on "
                "the meta field");
    }
}

}  // namespace

std::string sql_literal(const std::string &text) {
    // With a backslash, an E'' literal: a plain one would end early under
    // standard_conforming_strings = off (the TTL worker runs these too).
    bool escaped = text.find('\\') != std::string::npos;
    std::string out = escaped ? "E'" : "'";
    for (char c : text) {
        if (c == '\0')
            bad_spec("a NUL byte in a field name or value");
        out += c == '\'' ? "''" : escaped && c == '\\' ? "\\\\" : std::string(1, c);
    }
    return out + "'";
}

IndexDefinition translate_index(const std::vector<IndexKey> &keys, const Value &options,
                                const std::string &time_field,
                                const std::optional<std::string> &meta_field) {
    if (keys.empty())
        bad_spec("an index needs at least one key");
    IndexDefinition def;
    for (const IndexKey &key : keys) {
        add_columns(def, key, time_field, meta_field);
        def.name += (def.name.empty() ? "" : "_") + default_name_part(key);
    }
    apply_options(def, options, keys, time_field, meta_field);
    return def;
}

}  // namespace tscoll
