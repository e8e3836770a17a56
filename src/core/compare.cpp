#include "core/compare.hpp"

#include <algorithm>
#include <cstring>

#include "core/number.hpp"

namespace tscoll {

int type_class(const Value &v) {
    switch (v.kind()) {
        case Value::Kind::Null:
            return 0;
        case Value::Kind::Number:
            return 1;
        case Value::Kind::String:
            return 2;
        case Value::Kind::Object:
            return 3;
        case Value::Kind::Array:
            return 4;
        case Value::Kind::ObjectId:
            return 5;
        case Value::Kind::Bool:
            return 6;
        case Value::Kind::Date:
            return 7;
    }
    return 0;
}

namespace {

int sign(int c) {
    return (c > 0) - (c < 0);
}

template <typename T>
int compare_scalars(const T &a, const T &b) {
    return (b < a) - (a < b);
}

int compare_objects(const Value::Object &a, const Value::Object &b) {
    size_t n = std::min(a.size(), b.size());
    for (size_t i = 0; i < n; i++) {
        // BSON compares each element's type, then its name, then its value.
        int c = compare_scalars(type_class(a[i].value), type_class(b[i].value));
        if (c == 0)
            c = sign(a[i].key.compare(b[i].key));
        if (c == 0)
            c = compare_values(a[i].value, b[i].value);
        if (c != 0)
            return c;
    }
    return compare_scalars(a.size(), b.size());
}

int compare_arrays(const Value::Array &a, const Value::Array &b) {
    size_t n = std::min(a.size(), b.size());
    for (size_t i = 0; i < n; i++)
        if (int c = compare_values(a[i], b[i]))
            return c;
    return compare_scalars(a.size(), b.size());
}

// Two integers, or two doubles each of which is exactly its text (their
// order is their texts' order), or one of each below 2^53, compare as
// machine numbers; anything else by their texts.
int compare_number_values(const Number &a, const Number &b) {
    ExactNumber x = a.exact(), y = b.exact();
    if (x.integer && y.integer)
        return compare_scalars(*x.integer, *y.integer);
    if (x.real && y.real)
        return compare_scalars(*x.real, *y.real);
    std::optional<double> p = a.ordering_double(), q = b.ordering_double();
    if (p && q)
        return compare_scalars(*p, *q);
    return compare_numbers(a.text, b.text);
}

}  // namespace

int compare_values(const Value &a, const Value &b) {
    if (int c = compare_scalars(type_class(a), type_class(b)))
        return c;
    switch (a.kind()) {
        case Value::Kind::Null:
            return 0;
        case Value::Kind::Number:
            return compare_number_values(a.as_number(), b.as_number());
        case Value::Kind::String:
            return sign(a.as_string().compare(b.as_string()));
        case Value::Kind::Object:
            return compare_objects(a.as_object(), b.as_object());
        case Value::Kind::Array:
            return compare_arrays(a.as_array(), b.as_array());
        case Value::Kind::ObjectId:
            return sign(std::memcmp(a.as_objectid().bytes.data(), b.as_objectid().bytes.data(),
                                    ObjectId::kSize));
        case Value::Kind::Bool:
            return compare_scalars(a.as_bool(), b.as_bool());
        case Value::Kind::Date:
            return compare_scalars(a.as_date(), b.as_date());
    }
    return 0;
}

namespace {

size_t number_size(const Number &n) {
    switch (bson_number_type(n.exact())) {
        case BsonNumber::Int32:
            return 4;
        case BsonNumber::Int64:
        case BsonNumber::Double:
            return 8;
        case BsonNumber::Decimal128:
            return 16;
    }
    return 16;
}

size_t array_size(const Value::Array &a) {
    size_t size = 4 + 1;  // length, terminator
    for (size_t i = 0; i < a.size(); i++)
        size += 1 + std::to_string(i).size() + 1 + bson_value_size(a[i]);
    return size;
}

}  // namespace

size_t bson_value_size(const Value &v) {
    switch (v.kind()) {
        case Value::Kind::Null:
            return 0;
        case Value::Kind::Bool:
            return 1;
        case Value::Kind::Number:
            return number_size(v.as_number());
        case Value::Kind::String:
            return 4 + v.as_string().size() + 1;
        case Value::Kind::Object:
            return bson_document_size(v);
        case Value::Kind::Array:
            return array_size(v.as_array());
        case Value::Kind::Date:
            return 8;
        case Value::Kind::ObjectId:
            return ObjectId::kSize;
    }
    return 0;
}

size_t bson_document_size(const Value &object, std::string_view skip_key) {
    size_t size = 4 + 1;  // length, terminator
    for (const Member &m : object.as_object()) {
        if (!skip_key.empty() && m.key == skip_key)
            continue;
        size += 1 + m.key.size() + 1 + bson_value_size(m.value);
    }
    return size;
}

size_t nesting_depth(const Value &v) {
    size_t deepest = 0;
    if (v.is(Value::Kind::Object)) {
        for (const Member &m : v.as_object())
            deepest = std::max(deepest, nesting_depth(m.value));
    } else if (v.is(Value::Kind::Array)) {
        for (const Value &e : v.as_array())
            deepest = std::max(deepest, nesting_depth(e));
    } else {
        return 0;
    }
    return deepest + 1;
}

}  // namespace tscoll
