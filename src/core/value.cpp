#include "core/value.hpp"

#include "core/number.hpp"

namespace tscoll {

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
    return exact_int64(as_number().text);
}

}  // namespace tscoll
