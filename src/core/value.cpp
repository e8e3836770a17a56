#include "core/value.hpp"

#include <cctype>
#include <limits>

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

namespace {

// Parses "[-]digits[.digits][e[+-]digits]" exactly: returns the integer it
// denotes when it is integral and fits in int64.
std::optional<int64_t> parse_exact_integer(std::string_view s) {
    size_t i = 0;
    bool negative = false;
    if (i < s.size() && (s[i] == '-' || s[i] == '+'))
        negative = s[i++] == '-';
    std::string digits;
    int64_t exponent = 0;
    bool seen_digit = false;
    for (; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); i++, seen_digit = true)
        digits += s[i];
    if (i < s.size() && s[i] == '.') {
        for (i++; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); i++) {
            digits += s[i];
            exponent--;
            seen_digit = true;
        }
    }
    if (!seen_digit)
        return std::nullopt;
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        bool exp_negative = false;
        if (i < s.size() && (s[i] == '-' || s[i] == '+'))
            exp_negative = s[i++] == '-';
        int64_t e = 0;
        bool exp_digit = false;
        for (; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); i++) {
            e = std::min<int64_t>(e * 10 + (s[i] - '0'), 1000000);
            exp_digit = true;
        }
        if (!exp_digit)
            return std::nullopt;
        exponent += exp_negative ? -e : e;
    }
    if (i != s.size())
        return std::nullopt;
    // Drop trailing zeros while the exponent is negative: "12.50" is 1250e-2 = 125e-1.
    while (exponent < 0 && !digits.empty() && digits.back() == '0') {
        digits.pop_back();
        exponent++;
    }
    size_t first = digits.find_first_not_of('0');
    if (first == std::string::npos)
        return 0;
    if (exponent < 0)
        return std::nullopt;
    digits = digits.substr(first);
    if (static_cast<int64_t>(digits.size()) + exponent > 19)
        return std::nullopt;
    digits.append(static_cast<size_t>(exponent), '0');
    // Accumulate negatively so that INT64_MIN fits.
    int64_t value = 0;
    for (char c : digits) {
        int d = c - '0';
        if (value < (std::numeric_limits<int64_t>::min() + d) / 10)
            return std::nullopt;
        value = value * 10 - d;
    }
    if (!negative) {
        if (value == std::numeric_limits<int64_t>::min())
            return std::nullopt;
        value = -value;
    }
    return value;
}

}  // namespace

std::optional<int64_t> Value::as_exact_int64() const {
    if (!is(Kind::Number))
        return std::nullopt;
    return parse_exact_integer(as_number().text);
}

}  // namespace tscoll
