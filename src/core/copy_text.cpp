#include "core/copy_text.hpp"

#include <cstring>

namespace tscoll {

namespace {

bool has_zero_byte(uint64_t word) {
    return ((word - 0x0101010101010101ULL) & ~word & 0x8080808080808080ULL) != 0;
}

}  // namespace

bool valid_utf8(std::string_view text) {
    const auto *p = reinterpret_cast<const unsigned char *>(text.data());
    const unsigned char *end = p + text.size();
    while (p < end) {
        // Runs of ASCII, eight bytes at a time.
        while (end - p >= 8) {
            uint64_t word;
            std::memcpy(&word, p, 8);
            if ((word & 0x8080808080808080ULL) != 0 || has_zero_byte(word))
                break;
            p += 8;
        }
        if (p == end)
            break;
        unsigned char c = *p;
        if (c < 0x80) {
            if (c == 0)
                return false;
            p++;
            continue;
        }
        ptrdiff_t follow;
        unsigned char low = 0x80, high = 0xBF;  // of the byte after the first
        if (c >= 0xC2 && c <= 0xDF) {
            follow = 1;
        } else if (c >= 0xE0 && c <= 0xEF) {
            follow = 2;
            if (c == 0xE0)
                low = 0xA0;  // overlong
            else if (c == 0xED)
                high = 0x9F;  // surrogates
        } else if (c >= 0xF0 && c <= 0xF4) {
            follow = 3;
            if (c == 0xF0)
                low = 0x90;  // overlong
            else if (c == 0xF4)
                high = 0x8F;  // past U+10FFFF
        } else {
            return false;
        }
        if (end - p <= follow || p[1] < low || p[1] > high)
            return false;
        for (ptrdiff_t k = 2; k <= follow; k++)
            if ((p[k] & 0xC0) != 0x80)
                return false;
        p += follow + 1;
    }
    return true;
}

void CopyRows::add(char **fields, const char *line, size_t line_length, uint64_t line_number) {
    std::vector<Field> split(columns_);
    for (size_t c = 0; c < columns_; c++)
        split[c] = {fields[c], fields[c] == nullptr ? 0 : std::strlen(fields[c])};
    add(std::string_view(line, line_length), split.data(), split.size(), line_number);
}

void CopyRows::add(std::string_view line, const Field *fields, size_t count, uint64_t line_number,
                   CopyLineProblem problem, size_t detail, std::string_view text) {
    size_t line_at = text_.size();
    line_at_.push_back(line_at);
    line_length_.push_back(line.size());
    text_.append(line);
    text_.push_back('\0');
    for (size_t c = 0; c < columns_; c++) {
        if (c >= count || fields[c].text == nullptr) {
            field_at_.push_back(kNull);
            field_length_.push_back(0);
            continue;
        }
        field_length_.push_back(fields[c].length);
        if (fields[c].text == line.data() && fields[c].length == line.size()) {
            field_at_.push_back(line_at);
            continue;
        }
        field_at_.push_back(text_.size());
        text_.append(fields[c].text, fields[c].length);
        text_.push_back('\0');
    }
    line_number_.push_back(line_number);
    problem_.push_back(problem);
    problem_detail_.push_back(detail);
    problem_text_.emplace_back(text_.size(), text.size());
    text_.append(text);
}

std::string_view CopyRows::problem_text(size_t row) const {
    return std::string_view(text_.data() + problem_text_[row].first, problem_text_[row].second);
}

const char *CopyRows::field(size_t row, size_t column) const {
    size_t at = field_at_[row * columns_ + column];
    return at == kNull ? nullptr : text_.data() + at;
}

std::string_view CopyRows::line(size_t row) const {
    return std::string_view(text_.data() + line_at_[row], line_length_[row]);
}

// Where the first line of `text` ends, as PostgreSQL's CopyReadLineText
// finds it: a backslash escapes the character after it (an escaped end of
// line is data), `\.` followed by an end of line ends the data, and every
// line ends as the first one did.
CopyTextReader::Found CopyTextReader::scan(std::string_view text, bool at_end) const {
    const char *s = text.data();
    const size_t n = text.size();
    Eol eol = eol_;
    if (eol == Eol::Unknown || eol == Eol::Nl) {
        const void *newline = std::memchr(s, '\n', n);
        if (newline != nullptr) {
            size_t end = static_cast<size_t>(static_cast<const char *>(newline) - s);
            if (std::memchr(s, '\\', end) == nullptr && std::memchr(s, '\r', end) == nullptr)
                return {Scan::Line, end, end + 1, Eol::Nl, CopyLineProblem::None};
        } else if (!at_end && std::memchr(s, '\r', n) == nullptr) {
            return {Scan::More, 0, 0, eol, CopyLineProblem::None};
        }
    }
    auto problem = [&](CopyLineProblem p) { return Found{Scan::Problem, 0, 0, eol, p}; };
    const Found more{Scan::More, 0, 0, eol, CopyLineProblem::None};
    size_t i = 0;
    for (;;) {
        if (i == n)
            return at_end ? Found{Scan::Line, n, n, eol, CopyLineProblem::None} : more;
        char c = s[i++];
        if (c == '\r') {
            if (eol == Eol::Nl)
                return problem(CopyLineProblem::CarriageReturn);
            if (eol == Eol::Cr)
                return {Scan::Line, i - 1, i, eol, CopyLineProblem::None};
            if (i == n && !at_end)
                return more;
            if (i < n && s[i] == '\n')
                return {Scan::Line, i - 1, i + 1, Eol::CrNl, CopyLineProblem::None};
            if (eol == Eol::CrNl)
                return problem(CopyLineProblem::CarriageReturn);
            return {Scan::Line, i - 1, i, Eol::Cr, CopyLineProblem::None};
        }
        if (c == '\n') {
            if (eol == Eol::Cr || eol == Eol::CrNl)
                return problem(CopyLineProblem::Newline);
            return {Scan::Line, i - 1, i, Eol::Nl, CopyLineProblem::None};
        }
        if (c != '\\')
            continue;
        if (i == n)
            return at_end ? Found{Scan::Line, n, n, eol, CopyLineProblem::None} : more;
        if (s[i] != '.') {
            i++;
            continue;
        }
        size_t marker = i - 1;
        i++;
        if (eol == Eol::CrNl) {
            if (i == n && !at_end)
                return more;
            char c2 = i < n ? s[i++] : '\0';
            if (c2 == '\n')
                return problem(CopyLineProblem::MarkerStyle);
            if (c2 != '\r')
                return problem(CopyLineProblem::MarkerCorrupt);
        }
        if (i == n && !at_end)
            return more;
        char c2 = i < n ? s[i++] : '\0';
        if (c2 != '\r' && c2 != '\n')
            return problem(CopyLineProblem::MarkerCorrupt);
        if (((eol == Eol::Nl || eol == Eol::CrNl) && c2 != '\n') || (eol == Eol::Cr && c2 != '\r'))
            return problem(CopyLineProblem::MarkerStyle);
        return {Scan::Marker, marker, i, eol, CopyLineProblem::None};
    }
}

void CopyTextReader::read(std::string_view input, CopyRows &rows) {
    if (done_)
        return;
    // A line ends at a newline or a carriage return: input with neither
    // ends no line, and the start of a long line is not scanned again.
    bool may_end = pending_.empty() || std::memchr(input.data(), '\n', input.size()) != nullptr ||
                   std::memchr(input.data(), '\r', input.size()) != nullptr;
    pending_.append(input);
    if (may_end)
        read_lines(false, rows);
    if (!done_ && pending_.size() > max_line_bytes_) {
        line_number_++;
        add_problem(CopyLineProblem::TooLong, rows);
    }
}

void CopyTextReader::finish(CopyRows &rows) {
    if (!done_)
        read_lines(true, rows);
    done_ = true;
    pending_.clear();
}

void CopyTextReader::read_lines(bool at_end, CopyRows &rows) {
    std::string_view all(pending_);
    size_t at = 0;
    while (!done_ && at < all.size()) {
        Found found = scan(all.substr(at), at_end);
        if (found.scan == Scan::More)
            break;
        line_number_++;
        if (found.scan == Scan::Problem) {
            add_problem(found.problem, rows);
            break;
        }
        std::string_view line = all.substr(at, found.line_end);
        at += found.next;
        if (found.scan == Scan::Marker) {
            if (!line.empty())
                add_line(line, rows);
            done_ = true;
            break;
        }
        eol_ = found.eol;
        add_line(line, rows);
    }
    if (done_)
        pending_.clear();
    else
        pending_.erase(0, at);
}

void CopyTextReader::add_problem(CopyLineProblem problem, CopyRows &rows) {
    rows.add(std::string_view(), nullptr, 0, line_number_, problem);
    done_ = true;
}

namespace {

int hex_digit(char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

bool octal_digit(char c) {
    return c >= '0' && c <= '7';
}

// The character a backslash escape at `p` (after the backslash) stands
// for, as CopyReadAttributesText reads it; `wide` when it is a NUL or not
// ASCII, so that the field's encoding must be checked.
char unescape(const char *&p, const char *end, bool &wide) {
    char c = *p++;
    if (octal_digit(c)) {
        int value = c - '0';
        for (int k = 0; k < 2 && p < end && octal_digit(*p); k++)
            value = (value << 3) + (*p++ - '0');
        c = static_cast<char>(value & 0377);
    } else if (c == 'x' && p < end && hex_digit(*p) >= 0) {
        int value = hex_digit(*p++);
        if (p < end && hex_digit(*p) >= 0)
            value = (value << 4) + hex_digit(*p++);
        c = static_cast<char>(value & 0xff);
    } else {
        switch (c) {
            case 'b':
                return '\b';
            case 'f':
                return '\f';
            case 'n':
                return '\n';
            case 'r':
                return '\r';
            case 't':
                return '\t';
            case 'v':
                return '\v';
            default:
                return c;  // any other character stands for itself
        }
    }
    if (c == '\0' || (static_cast<unsigned char>(c) & 0x80) != 0)
        wide = true;
    return c;
}

}  // namespace

void CopyTextReader::add_line(std::string_view line, CopyRows &rows) {
    if (!valid_utf8(line)) {
        rows.add(std::string_view(), nullptr, 0, line_number_, CopyLineProblem::LineEncoding, 0,
                 line);
        done_ = true;
        return;
    }
    split_.clear();
    CopyLineProblem problem = CopyLineProblem::None;
    size_t detail = 0;
    std::string_view bad;
    if (std::memchr(line.data(), '\\', line.size()) == nullptr) {
        size_t start = 0;
        for (;;) {
            size_t tab = line.find('\t', start);
            size_t end = tab == std::string_view::npos ? line.size() : tab;
            split_.push_back({line.data() + start, end - start});
            if (tab == std::string_view::npos)
                break;
            start = tab + 1;
        }
    } else {
        // De-escaped into fields_, which is not grown once a field points
        // into it: no field is longer than its text.
        fields_.clear();
        fields_.reserve(line.size() + 1);
        const char *p = line.data();
        const char *end = p + line.size();
        for (;;) {
            const char *start = p;
            const char *text_end = p;
            size_t out = fields_.size();
            bool tab = false, wide = false;
            for (;;) {
                text_end = p;
                if (p >= end)
                    break;
                char c = *p++;
                if (c == '\t') {
                    tab = true;
                    break;
                }
                if (c == '\\') {
                    if (p >= end)
                        break;
                    c = unescape(p, end, wide);
                }
                fields_.push_back(c);
            }
            // NULL is `\N` as written, before de-escaping.
            if (text_end - start == 2 && start[0] == '\\' && start[1] == 'N') {
                split_.push_back({nullptr, 0});
            } else {
                split_.push_back({fields_.data() + out, fields_.size() - out});
                std::string_view field(fields_.data() + out, fields_.size() - out);
                if (wide && problem == CopyLineProblem::None && !valid_utf8(field)) {
                    problem = CopyLineProblem::FieldEncoding;
                    bad = field;
                }
            }
            if (!tab)
                break;
        }
    }
    if (problem == CopyLineProblem::None && split_.size() != columns_) {
        problem = CopyLineProblem::FieldCount;
        detail = split_.size();
    }
    rows.add(line, split_.data(), split_.size(), line_number_, problem, detail, bad);
    if (problem != CopyLineProblem::None)
        done_ = true;
}

}  // namespace tscoll
