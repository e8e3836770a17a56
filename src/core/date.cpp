#include "core/date.hpp"

#include <cstdio>

namespace tscoll {

namespace {

constexpr int64_t kMicrosPerSecond = 1000000;
constexpr int64_t kSecondsPerDay = 86400;

// Days since 1970-01-01 of a proleptic Gregorian date (civil calendar
// arithmetic on 400-year eras).
int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
    y -= m <= 2;
    const int64_t era = floor_div(y, 400);
    const unsigned yoe = static_cast<unsigned>(y - era * 400);
    const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

struct Civil {
    int64_t year;
    unsigned month;
    unsigned day;
};

Civil civil_from_days(int64_t z) {
    z += 719468;
    const int64_t era = floor_div(z, 146097);
    const unsigned doe = static_cast<unsigned>(z - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    const unsigned d = doy - (153 * mp + 2) / 5 + 1;
    const unsigned m = mp < 10 ? mp + 3 : mp - 9;
    return {static_cast<int64_t>(yoe) + era * 400 + (m <= 2), m, d};
}

unsigned days_in_month(int64_t y, unsigned m) {
    static const unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 && leap ? 29 : kDays[m - 1];
}

// Reads exactly `n` digits at `pos`.
std::optional<int64_t> digits(std::string_view s, size_t &pos, size_t n) {
    if (pos + n > s.size())
        return std::nullopt;
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[pos + i];
        if (c < '0' || c > '9')
            return std::nullopt;
        v = v * 10 + (c - '0');
    }
    pos += n;
    return v;
}

bool expect(std::string_view s, size_t &pos, char c) {
    if (pos >= s.size() || s[pos] != c)
        return false;
    pos++;
    return true;
}

// [+-]YYYYYY or YYYY, then -MM-DD: days since 1970.
std::optional<int64_t> parse_day(std::string_view s, size_t &pos) {
    std::optional<int64_t> year;
    if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
        bool negative = s[0] == '-';
        pos = 1;
        year = digits(s, pos, 6);
        if (year && negative)
            year = -*year;
    } else {
        year = digits(s, pos, 4);
    }
    // Beyond +/-200000 years the microseconds would overflow int64.
    if (!year || *year > 200000 || *year < -200000 || !expect(s, pos, '-'))
        return std::nullopt;
    auto month = digits(s, pos, 2);
    if (!month || *month < 1 || *month > 12 || !expect(s, pos, '-'))
        return std::nullopt;
    auto day = digits(s, pos, 2);
    if (!day || *day < 1 || *day > days_in_month(*year, static_cast<unsigned>(*month)))
        return std::nullopt;
    return days_from_civil(*year, static_cast<unsigned>(*month), static_cast<unsigned>(*day));
}

// HH:MM[:SS]: seconds of the day.
std::optional<int64_t> parse_clock(std::string_view s, size_t &pos, bool seconds_required) {
    auto hour = digits(s, pos, 2);
    if (!hour || *hour > 23 || !expect(s, pos, ':'))
        return std::nullopt;
    auto minute = digits(s, pos, 2);
    if (!minute || *minute > 59)
        return std::nullopt;
    int64_t second = 0;
    if (seconds_required || (pos < s.size() && s[pos] == ':')) {
        auto sec = expect(s, pos, ':') ? digits(s, pos, 2) : std::nullopt;
        if (!sec || *sec > 59)
            return std::nullopt;
        second = *sec;
    }
    return *hour * 3600 + *minute * 60 + second;
}

// Z, or +HH[:MM] / -HH[MM]: the offset in seconds east of UTC.
std::optional<int64_t> parse_offset(std::string_view s, size_t &pos) {
    if (expect(s, pos, 'Z') || expect(s, pos, 'z'))
        return 0;
    if (pos >= s.size() || (s[pos] != '+' && s[pos] != '-'))
        return std::nullopt;
    int64_t sign = s[pos++] == '-' ? -1 : 1;
    auto hours = digits(s, pos, 2);
    if (!hours || *hours > 23)
        return std::nullopt;
    int64_t minutes = 0;
    if (pos < s.size()) {
        expect(s, pos, ':');
        auto m = digits(s, pos, 2);
        if (!m || *m > 59)
            return std::nullopt;
        minutes = *m;
    }
    return sign * (*hours * 3600 + minutes * 60);
}

}  // namespace

std::optional<UnixMicros> parse_iso_date(std::string_view s) {
    size_t pos = 0;
    std::optional<int64_t> days = parse_day(s, pos);
    if (!days)
        return std::nullopt;
    int64_t seconds = *days * kSecondsPerDay;
    int64_t micros = 0;
    if (pos < s.size() && (s[pos] == 'T' || s[pos] == 't' || s[pos] == ' ')) {
        pos++;
        std::optional<int64_t> clock = parse_clock(s, pos, false);
        if (!clock)
            return std::nullopt;
        seconds += *clock;
        if (expect(s, pos, '.') || expect(s, pos, ',')) {
            size_t start = pos;
            int64_t scale = 100000;
            for (; pos < s.size() && s[pos] >= '0' && s[pos] <= '9'; pos++, scale /= 10) {
                if (scale >= 1)
                    micros += (s[pos] - '0') * scale;
                else if (scale == 0 && s[pos] >= '5' && pos == start + 6)
                    micros += 1;  // round half up at the seventh digit
            }
            if (pos == start)
                return std::nullopt;
        }
        if (pos < s.size()) {
            std::optional<int64_t> offset = parse_offset(s, pos);
            if (!offset)
                return std::nullopt;
            seconds -= *offset;
        }
    }
    if (pos != s.size())
        return std::nullopt;
    return seconds * kMicrosPerSecond + micros;
}

namespace {

// `value` (0 <= value < 10^width) as `width` decimal digits.
char *put_digits(char *out, int64_t value, int width) {
    for (int i = width - 1; i >= 0; i--, value /= 10)
        out[i] = static_cast<char>('0' + value % 10);
    return out + width;
}

}  // namespace

std::string format_canonical_date(UnixMicros t) {
    constexpr int64_t kMicrosPerDay = kSecondsPerDay * kMicrosPerSecond;
    int64_t days = floor_div(t, kMicrosPerDay);
    // t % kMicrosPerDay, not t - days * kMicrosPerDay: that overflows near INT64_MIN
    int64_t micros_of_day = t % kMicrosPerDay;
    if (micros_of_day < 0)
        micros_of_day += kMicrosPerDay;
    Civil c = civil_from_days(days);
    int64_t seconds = micros_of_day / kMicrosPerSecond;
    int64_t micros = micros_of_day % kMicrosPerSecond;
    // Every read of a measurement formats its time: by hand, not snprintf.
    char out[64];
    char *p = out;
    if (c.year >= 0 && c.year <= 9999) {
        p = put_digits(p, c.year, 4);
    } else {
        *p++ = c.year < 0 ? '-' : '+';
        p = put_digits(p, c.year < 0 ? -static_cast<int64_t>(c.year) : c.year, 6);
    }
    *p++ = '-';
    p = put_digits(p, c.month, 2);
    *p++ = '-';
    p = put_digits(p, c.day, 2);
    *p++ = 'T';
    p = put_digits(p, seconds / 3600, 2);
    *p++ = ':';
    p = put_digits(p, seconds / 60 % 60, 2);
    *p++ = ':';
    p = put_digits(p, seconds % 60, 2);
    *p++ = '.';
    p = micros % 1000 == 0 ? put_digits(p, micros / 1000, 3) : put_digits(p, micros, 6);
    *p++ = 'Z';
    return std::string(out, p);
}

std::optional<UnixMicros> parse_canonical_date(std::string_view s) {
    size_t pos = 0;
    std::optional<int64_t> days = parse_day(s, pos);
    if (!days || !expect(s, pos, 'T'))
        return std::nullopt;
    std::optional<int64_t> clock = parse_clock(s, pos, true);
    if (!clock || !expect(s, pos, '.'))
        return std::nullopt;
    size_t fraction_digits = s.size() - pos - 1;
    if (fraction_digits != 3 && fraction_digits != 6)
        return std::nullopt;
    auto fraction = digits(s, pos, fraction_digits);
    if (!fraction || !expect(s, pos, 'Z') || pos != s.size())
        return std::nullopt;
    int64_t micros = fraction_digits == 3 ? *fraction * 1000 : *fraction;
    return (*days * kSecondsPerDay + *clock) * kMicrosPerSecond + micros;
}

}  // namespace tscoll
