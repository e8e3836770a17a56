// JSON numbers by value: parsing the exact decimal text, comparing two
// numbers without rounding, and choosing the BSON type MongoDB would store.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tscoll {

// A finite decimal: (-1)^negative * digits * 10^exponent, with no leading or
// trailing zeros in digits; zero has empty digits.
struct Decimal {
    bool negative = false;
    std::string digits;
    int64_t exponent = 0;

    static std::optional<Decimal> parse(std::string_view text);
    bool is_zero() const { return digits.empty(); }
};

// <0, 0, >0 as a is below, equal to or above b, by value. Both must parse.
int compare_numbers(std::string_view a, std::string_view b);

// The integer the text denotes when it is integral and fits in int64.
std::optional<int64_t> exact_int64(std::string_view text);

// The double whose shortest decimal form has exactly the text's value.
std::optional<double> exact_double(std::string_view text);

// A number as the narrowest machine value that holds it exactly: an int64
// when it is an integer that fits, else a double as exact_double says, else
// neither (only its text holds it). One parse for the writers that try both.
struct ExactNumber {
    std::optional<int64_t> integer;
    std::optional<double> real;  // only when integer is not set
};
ExactNumber exact_number(std::string_view text);

// How a JSON number is stored in BSON: the narrowest exact type.
enum class BsonNumber { Int32, Int64, Double, Decimal128 };
BsonNumber bson_number_type(std::string_view text);
BsonNumber bson_number_type(const ExactNumber &n);

// Where the text's exponent starts ('e' or 'E'), or npos. (A loop, not
// find_first_of, which calls memchr once per character.)
inline size_t exponent_mark(std::string_view text) {
    for (size_t i = 0; i < text.size(); i++)
        if (text[i] == 'e' || text[i] == 'E')
            return i;
    return std::string_view::npos;
}

// The shortest decimal text that reads back as d.
std::string shortest_text(double d);

// The scale numeric gives the text (its digits after the decimal point,
// trailing zeros included, less the exponent; at least 0): jsonb prints
// "3.50" with two, "1e-7" with seven. The text must parse.
int64_t display_scale(std::string_view text);

// The same number without an exponent and with `scale` digits after the
// point, at least display_scale(text) of them: 3.5 at 2 is "3.50".
std::string with_display_scale(std::string_view text, int64_t scale);

}  // namespace tscoll
