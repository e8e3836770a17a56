#include "core/number.hpp"

#include <algorithm>
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

// A number written without an exponent, as most JSON numbers are, read in
// place: its integer digits without leading zeros, its fraction digits
// without trailing zeros. Comparing two of them needs no Decimal.
struct PlainDecimal {
    bool negative = false;
    std::string_view integer;
    std::string_view fraction;

    bool is_zero() const { return integer.empty() && fraction.empty(); }
};

std::optional<PlainDecimal> parse_plain(std::string_view s) {
    PlainDecimal d;
    size_t i = 0;
    if (i < s.size() && s[i] == '-')
        d.negative = true, i++;
    size_t start = i;
    while (i < s.size() && is_digit(s[i]))
        i++;
    d.integer = s.substr(start, i - start);
    if (i < s.size() && s[i] == '.') {
        start = ++i;
        while (i < s.size() && is_digit(s[i]))
            i++;
        d.fraction = s.substr(start, i - start);
    }
    if (i != s.size() || (d.integer.empty() && d.fraction.empty()))
        return std::nullopt;
    d.integer.remove_prefix(std::min(d.integer.find_first_not_of('0'), d.integer.size()));
    d.fraction = d.fraction.substr(0, d.fraction.find_last_not_of('0') + 1);
    return d;
}

int sign_of(int c) {
    return (c > 0) - (c < 0);
}

int compare_plain(const PlainDecimal &a, const PlainDecimal &b) {
    bool a_negative = a.negative && !a.is_zero();
    bool b_negative = b.negative && !b.is_zero();
    if (a_negative != b_negative)
        return a_negative ? -1 : 1;
    int c = a.integer.size() != b.integer.size() ? (a.integer.size() < b.integer.size() ? -1 : 1)
                                                 : sign_of(a.integer.compare(b.integer));
    if (c == 0)
        c = sign_of(a.fraction.compare(b.fraction));
    return a_negative ? -c : c;
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
    if (a_text == b_text)
        return 0;
    std::optional<PlainDecimal> plain_a = parse_plain(a_text);
    std::optional<PlainDecimal> plain_b = parse_plain(b_text);
    if (plain_a && plain_b)
        return compare_plain(*plain_a, *plain_b);
    std::optional<Decimal> parsed_a = Decimal::parse(a_text);
    std::optional<Decimal> parsed_b = Decimal::parse(b_text);
    const Decimal zero;
    const Decimal &a = parsed_a ? *parsed_a : zero;
    const Decimal &b = parsed_b ? *parsed_b : zero;
    if (a.negative != b.negative)
        return a.negative ? -1 : 1;
    int c = compare_magnitudes(a, b);
    return a.negative ? -c : c;
}

std::string shortest_text(double d) {
    char buffer[32];
    auto result = std::to_chars(buffer, buffer + sizeof buffer, d);
    return std::string(buffer, result.ptr);
}

namespace {

std::optional<int64_t> int64_of(const Decimal &d) {
    int64_t length = static_cast<int64_t>(d.digits.size()) + d.exponent;
    if (d.exponent < 0 || length > 19)
        return std::nullopt;
    // Accumulate negatively so that INT64_MIN fits; past the digits, zeros.
    int64_t value = 0;
    for (int64_t i = 0; i < length; i++) {
        int digit = i < static_cast<int64_t>(d.digits.size()) ? d.digits[i] - '0' : 0;
        if (value < (std::numeric_limits<int64_t>::min() + digit) / 10)
            return std::nullopt;
        value = value * 10 - digit;
    }
    if (!d.negative) {
        if (value == std::numeric_limits<int64_t>::min())
            return std::nullopt;
        value = -value;
    }
    return value;
}

std::optional<double> double_of(const Decimal &decimal, std::string_view text) {
    int64_t lead = static_cast<int64_t>(decimal.digits.size()) + decimal.exponent;
    // Beyond these exponents a double is zero or infinite.
    if (!decimal.is_zero() && (lead > 309 || lead < -323))
        return std::nullopt;
    double d = 0;
    auto result = std::from_chars(text.data(), text.data() + text.size(), d);
    if (result.ec != std::errc() || result.ptr != text.data() + text.size() || !std::isfinite(d))
        return std::nullopt;
    // A decimal of at most 15 significant digits (DBL_DIG) among the normal
    // doubles reads back from its nearest double unchanged, so it is that
    // double's shortest text: no round trip needed. Not from 1e15 up, where
    // shortest_text writes every digit of an integer in fixed notation.
    if (decimal.digits.size() <= 15 && lead >= -300 && lead <= 15)
        return d;
    if (compare_numbers(text, shortest_text(d)) != 0)
        return std::nullopt;
    return d;
}

}  // namespace

std::optional<int64_t> exact_int64(std::string_view text) {
    std::optional<Decimal> d = Decimal::parse(text);
    return d ? int64_of(*d) : std::nullopt;
}

std::optional<double> exact_double(std::string_view text) {
    std::optional<Decimal> d = Decimal::parse(text);
    return d ? double_of(*d, text) : std::nullopt;
}

namespace {

// A number written -?digits(.digits)? with at most 15 significant digits,
// as nearly every reading is, classified in place: the same answer as
// through a Decimal, without building one.
std::optional<ExactNumber> plain_exact_number(std::string_view text) {
    size_t lead = !text.empty() && text[0] == '-' ? 1 : 0;
    if (text.size() <= lead || !is_digit(text[lead]) || !is_digit(text.back()))
        return std::nullopt;
    std::optional<PlainDecimal> d = parse_plain(text);
    if (!d)
        return std::nullopt;
    if (d->fraction.empty()) {
        if (d->integer.size() > 18)
            return std::nullopt;
        int64_t value = 0;
        for (char c : d->integer)
            value = value * 10 + (c - '0');
        return ExactNumber{d->negative ? -value : value, std::nullopt};
    }
    size_t significant = d->integer.size() + d->fraction.size();
    if (d->integer.empty())
        significant -= std::min(d->fraction.find_first_not_of('0'), d->fraction.size());
    if (significant > 15 || d->fraction.size() > 300)
        return std::nullopt;
    if (d->fraction.size() <= 22) {
        // Digits and power of ten both exact as doubles (below 10^15 and
        // 10^22), so their quotient is the correctly rounded value.
        static constexpr double kPowers[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                             1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                             1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
        int64_t digits = 0;
        for (char c : d->integer)
            digits = digits * 10 + (c - '0');
        for (char c : d->fraction)
            digits = digits * 10 + (c - '0');
        double real = static_cast<double>(digits) / kPowers[d->fraction.size()];
        return ExactNumber{std::nullopt, d->negative ? -real : real};
    }
    double real = 0;
    auto result = std::from_chars(text.data(), text.data() + text.size(), real);
    if (result.ec != std::errc() || result.ptr != text.data() + text.size())
        return std::nullopt;
    return ExactNumber{std::nullopt, real};
}

}  // namespace

ExactNumber exact_number(std::string_view text) {
    if (std::optional<ExactNumber> plain = plain_exact_number(text))
        return *plain;
    std::optional<Decimal> d = Decimal::parse(text);
    if (!d)
        return {};
    if (std::optional<int64_t> i = int64_of(*d))
        return {i, std::nullopt};
    return {std::nullopt, double_of(*d, text)};
}

BsonNumber bson_number_type(std::string_view text) {
    return bson_number_type(exact_number(text));
}

BsonNumber bson_number_type(const ExactNumber &n) {
    if (n.integer)
        return *n.integer >= std::numeric_limits<int32_t>::min() &&
                       *n.integer <= std::numeric_limits<int32_t>::max()
                   ? BsonNumber::Int32
                   : BsonNumber::Int64;
    return n.real ? BsonNumber::Double : BsonNumber::Decimal128;
}

int64_t display_scale(std::string_view text) {
    int64_t fraction = 0;
    size_t dot = text.find('.');
    size_t e = exponent_mark(text);
    if (dot != std::string_view::npos)
        fraction = static_cast<int64_t>((e == std::string_view::npos ? text.size() : e) - dot - 1);
    int64_t exponent = 0;
    if (e != std::string_view::npos) {
        std::optional<Decimal> one = Decimal::parse("1" + std::string(text.substr(e)));
        exponent = one ? one->exponent : 0;
    }
    return std::max<int64_t>(0, fraction - exponent);
}

std::string with_display_scale(std::string_view text, int64_t scale) {
    std::optional<Decimal> d = Decimal::parse(text);
    if (!d)
        return std::string(text);
    std::string integer, fraction;
    if (d->exponent >= 0) {
        integer = d->is_zero() ? "0" : d->digits + std::string(d->exponent, '0');
    } else {
        size_t k = static_cast<size_t>(-d->exponent);
        if (d->digits.size() > k) {
            integer = d->digits.substr(0, d->digits.size() - k);
            fraction = d->digits.substr(d->digits.size() - k);
        } else {
            integer = "0";
            fraction = std::string(k - d->digits.size(), '0') + d->digits;
        }
    }
    if (static_cast<int64_t>(fraction.size()) < scale)
        fraction.append(static_cast<size_t>(scale) - fraction.size(), '0');
    std::string result = d->negative ? "-" : "";
    result += integer;
    if (!fraction.empty())
        result += "." + fraction;
    return result;
}

}  // namespace tscoll
