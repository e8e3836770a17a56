#include "core/number.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

namespace tscoll {

namespace {

bool is_digit(char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
}

// Magnitude order: the position of the leading digit (digits.size() + exponent).
int compare_magnitudes(const Decimal &a, const Decimal &b) {
    if (a.is_zero() || b.is_zero())
        return static_cast<int>(!a.is_zero()) - static_cast<int>(!b.is_zero());
    int64_t lead_a = static_cast<int64_t>(a.digits.size()) + a.exponent;
    int64_t lead_b = static_cast<int64_t>(b.digits.size()) + b.exponent;
    if (lead_a != lead_b)
        return lead_a < lead_b ? -1 : 1;
    // Same leading position: compare digit strings, the shorter padded with zeros.
    int c = a.digits.compare(0, b.digits.size(), b.digits, 0, a.digits.size());
    if (c != 0)
        return c < 0 ? -1 : 1;
    return a.digits.size() == b.digits.size() ? 0 : (a.digits.size() < b.digits.size() ? -1 : 1);
}

}  // namespace

std::optional<Decimal> Decimal::parse(std::string_view s) {
    Decimal d;
    size_t i = 0;
    if (i < s.size() && (s[i] == '-' || s[i] == '+'))
        d.negative = s[i++] == '-';
    bool seen_digit = false;
    for (; i < s.size() && is_digit(s[i]); i++, seen_digit = true)
        d.digits += s[i];
    if (i < s.size() && s[i] == '.') {
        for (i++; i < s.size() && is_digit(s[i]); i++, seen_digit = true) {
            d.digits += s[i];
            d.exponent--;
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
        for (; i < s.size() && is_digit(s[i]); i++, exp_digit = true)
            e = std::min<int64_t>(e * 10 + (s[i] - '0'), int64_t{1} << 40);
        if (!exp_digit)
            return std::nullopt;
        d.exponent += exp_negative ? -e : e;
    }
    if (i != s.size())
        return std::nullopt;
    size_t last = d.digits.find_last_not_of('0');
    if (last == std::string::npos) {
        d.digits.clear();
        d.exponent = 0;
        d.negative = false;
        return d;
    }
    d.exponent += static_cast<int64_t>(d.digits.size() - 1 - last);
    d.digits.erase(last + 1);
    d.digits.erase(0, d.digits.find_first_not_of('0'));
    return d;
}

int compare_numbers(std::string_view a_text, std::string_view b_text) {
    Decimal a = Decimal::parse(a_text).value_or(Decimal{});
    Decimal b = Decimal::parse(b_text).value_or(Decimal{});
    if (a.negative != b.negative)
        return a.negative ? -1 : 1;
    int c = compare_magnitudes(a, b);
    return a.negative ? -c : c;
}

std::optional<int64_t> exact_int64(std::string_view text) {
    std::optional<Decimal> d = Decimal::parse(text);
    if (!d || d->exponent < 0 || static_cast<int64_t>(d->digits.size()) + d->exponent > 19)
        return std::nullopt;
    std::string digits = d->digits;
    digits.append(static_cast<size_t>(d->exponent), '0');
    // Accumulate negatively so that INT64_MIN fits.
    int64_t value = 0;
    for (char c : digits) {
        int digit = c - '0';
        if (value < (std::numeric_limits<int64_t>::min() + digit) / 10)
            return std::nullopt;
        value = value * 10 - digit;
    }
    if (!d->negative) {
        if (value == std::numeric_limits<int64_t>::min())
            return std::nullopt;
        value = -value;
    }
    return value;
}

std::string shortest_text(double d) {
    char buffer[32];
    auto result = std::to_chars(buffer, buffer + sizeof buffer, d);
    return std::string(buffer, result.ptr);
}

std::optional<double> exact_double(std::string_view text) {
    std::optional<Decimal> decimal = Decimal::parse(text);
    // Beyond these exponents a double is zero or infinite.
    if (!decimal || (!decimal->is_zero() &&
                     (decimal->exponent + static_cast<int64_t>(decimal->digits.size()) > 309 ||
                      decimal->exponent + static_cast<int64_t>(decimal->digits.size()) < -323)))
        return std::nullopt;
    double d = 0;
    auto result = std::from_chars(text.data(), text.data() + text.size(), d);
    if (result.ec != std::errc() || result.ptr != text.data() + text.size() || !std::isfinite(d))
        return std::nullopt;
    if (compare_numbers(text, shortest_text(d)) != 0)
        return std::nullopt;
    return d;
}

BsonNumber bson_number_type(std::string_view text) {
    if (std::optional<int64_t> i = exact_int64(text))
        return *i >= std::numeric_limits<int32_t>::min() &&
                       *i <= std::numeric_limits<int32_t>::max()
                   ? BsonNumber::Int32
                   : BsonNumber::Int64;
    return exact_double(text) ? BsonNumber::Double : BsonNumber::Decimal128;
}

}  // namespace tscoll
