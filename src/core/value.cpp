#include "core/value.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include "core/date.hpp"
#include "core/number.hpp"
#include "core/objectid.hpp"

namespace tscoll {

Number Number::of(int64_t i) {
    Number n(std::to_string(i));
    n.form_ = Form::Integer;
    n.integer_ = i;
    return n;
}

Number Number::of(double d) {
    Number n(shortest_text(d));
    // As exact_number reads that text: a whole number within int64 (-0
    // included) is an integer.
    constexpr double kTwo63 = 9223372036854775808.0;
    if (d == std::trunc(d) && d >= -kTwo63 && d < kTwo63) {
        n.form_ = Form::Integer;
        n.integer_ = static_cast<int64_t>(d);
    } else {
        n.form_ = Form::Real;
        n.real_ = d;
    }
    return n;
}

ExactNumber Number::exact() const {
    if (form_ == Form::Unknown) {
        ExactNumber e = exact_number(text);
        form_ = e.integer ? Form::Integer : e.real ? Form::Real : Form::Neither;
        integer_ = e.integer.value_or(0);
        real_ = e.real.value_or(0);
    }
    switch (form_) {
        case Form::Integer:
            return ExactNumber{integer_, std::nullopt};
        case Form::Real:
            return ExactNumber{std::nullopt, real_};
        default:
            return ExactNumber{};
    }
}

std::optional<double> Number::ordering_double() const {
    constexpr double kExact = 9007199254740992.0;  // 2^53
    if (form_ == Form::Unknown)
        exact();  // works out the form
    double d = form_ == Form::Integer ? static_cast<double>(integer_) : real_;
    if ((form_ == Form::Integer || form_ == Form::Real) && d > -kExact && d < kExact)
        return d;
    return std::nullopt;
}

std::optional<double> Number::float8() const {
    ExactNumber e = exact();
    if (e.integer)
        return static_cast<double>(*e.integer);
    return e.real;
}

const char *Value::type_name() const {
    switch (kind()) {
        case Kind::Null:
            return "null";
        case Kind::Bool:
            return "bool";
        case Kind::Number:
            return "number";
        case Kind::String:
            return "string";
        case Kind::Array:
            return "array";
        case Kind::Object:
            return "object";
        case Kind::Date:
            return "date";
        case Kind::ObjectId:
            return "objectId";
    }
    return "unknown";
}

const Value *Value::find(std::string_view key) const {
    for (const Member &m : as_object())
        if (m.key == key)
            return &m.value;
    return nullptr;
}

void Value::add(std::string key, Value value) {
    as_object().push_back(Member{std::move(key), std::move(value)});
}

std::optional<int64_t> Value::as_exact_int64() const {
    if (!is(Kind::Number))
        return std::nullopt;
    return as_number().exact().integer;
}

namespace {

void append_json_string(std::string &out, const std::string &s) {
    static const char hex[] = "0123456789abcdef";
    out += '"';
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20) {
            out += "\\u00";
            out += hex[c >> 4];
            out += hex[c & 15];
        } else {
            out += static_cast<char>(c);
        }
    }
    out += '"';
}

void append_json(std::string &out, const Value &v) {
    switch (v.kind()) {
        case Value::Kind::Null:
            out += "null";
            break;
        case Value::Kind::Bool:
            out += v.as_bool() ? "true" : "false";
            break;
        case Value::Kind::Number:
            out += v.as_number().text;
            break;
        case Value::Kind::String:
            append_json_string(out, v.as_string());
            break;
        case Value::Kind::Array:
            out += '[';
            for (size_t i = 0; i < v.as_array().size(); i++) {
                if (i > 0)
                    out += ", ";
                append_json(out, v.as_array()[i]);
            }
            out += ']';
            break;
        case Value::Kind::Object:
            out += '{';
            for (size_t i = 0; i < v.as_object().size(); i++) {
                if (i > 0)
                    out += ", ";
                append_json_string(out, v.as_object()[i].key);
                out += ": ";
                append_json(out, v.as_object()[i].value);
            }
            out += '}';
            break;
        case Value::Kind::Date:
            out += "{\"$date\": ";
            append_json_string(out, format_canonical_date(v.as_date()));
            out += '}';
            break;
        case Value::Kind::ObjectId:
            append_json_string(out, v.as_objectid().to_hex());
            break;
    }
}

}  // namespace

size_t spelling_hash(const Value &v) {
    auto mix = [](size_t h, size_t x) { return (h ^ x) * 0x100000001b3ull; };
    size_t h = mix(0xcbf29ce484222325ull, static_cast<size_t>(v.kind()));
    switch (v.kind()) {
        case Value::Kind::Null:
            break;
        case Value::Kind::Bool:
            h = mix(h, v.as_bool());
            break;
        case Value::Kind::Number:
            h = mix(h, std::hash<std::string>()(v.as_number().text));
            break;
        case Value::Kind::String:
            h = mix(h, std::hash<std::string>()(v.as_string()));
            break;
        case Value::Kind::Array:
            for (const Value &e : v.as_array())
                h = mix(h, spelling_hash(e));
            break;
        case Value::Kind::Object:
            for (const Member &m : v.as_object())
                h = mix(mix(h, std::hash<std::string>()(m.key)), spelling_hash(m.value));
            break;
        case Value::Kind::Date:
            h = mix(h, static_cast<size_t>(v.as_date()));
            break;
        case Value::Kind::ObjectId:
            h = mix(h, std::hash<std::string_view>()(std::string_view(
                           reinterpret_cast<const char *>(v.as_objectid().bytes.data()),
                           ObjectId::kSize)));
            break;
    }
    return h;
}

bool spelled_alike(const Value &a, const Value &b) {
    if (a.kind() != b.kind())
        return false;
    switch (a.kind()) {
        case Value::Kind::Null:
            return true;
        case Value::Kind::Bool:
            return a.as_bool() == b.as_bool();
        case Value::Kind::Number:
            return a.as_number().text == b.as_number().text;
        case Value::Kind::String:
            return a.as_string() == b.as_string();
        case Value::Kind::Array:
            return std::equal(a.as_array().begin(), a.as_array().end(), b.as_array().begin(),
                              b.as_array().end(), spelled_alike);
        case Value::Kind::Object:
            return std::equal(a.as_object().begin(), a.as_object().end(), b.as_object().begin(),
                              b.as_object().end(), [](const Member &x, const Member &y) {
                                  return x.key == y.key && spelled_alike(x.value, y.value);
                              });
        case Value::Kind::Date:
            return a.as_date() == b.as_date();
        case Value::Kind::ObjectId:
            return a.as_objectid().bytes == b.as_objectid().bytes;
    }
    return false;
}

std::string to_json_text(const Value &v) {
    std::string out;
    append_json(out, v);
    return out;
}

}  // namespace tscoll
