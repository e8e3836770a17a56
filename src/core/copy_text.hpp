// PostgreSQL's COPY text format, read as the server reads it with the
// default options (fields split at tabs, `\N` for NULL, backslash escapes,
// `\.` ending the data, the first line's end of line for every line) from
// UTF-8 input: for a COPY whose rows are parsed on a second thread, the
// lines are found and split there too, not by the backend's thread.
// What PostgreSQL would refuse is marked on the line (CopyLineProblem),
// and the backend raises it, worded as PostgreSQL words it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tscoll {

// Strict UTF-8, as PostgreSQL's server encoding takes it: no NUL, no
// overlong forms, no surrogates, nothing past U+10FFFF.
bool valid_utf8(std::string_view text);

enum class CopyLineProblem : uint8_t {
    None,
    CarriageReturn,  // "literal carriage return found in data"
    Newline,         // "literal newline found in data"
    MarkerCorrupt,   // "end-of-copy marker corrupt"
    MarkerStyle,     // "end-of-copy marker does not match previous newline style"
    LineEncoding,    // the line as read is not UTF-8
    FieldEncoding,   // a field's escapes make it other than UTF-8
    FieldCount,      // other than the expected number of fields (detail)
    TooLong,         // a line longer than the reader takes
};

// Rows of a COPY as the text of their fields, in input order.
class CopyRows {
  public:
    explicit CopyRows(size_t columns) : columns_(columns) {}
    // `fields` (a null pointer for a NULL field, else NUL-terminated) and
    // the line as read.
    void add(char **fields, const char *line, size_t line_length, uint64_t line_number);
    // A line as read and its fields (`count` of them, missing ones NULL,
    // extra ones dropped); a field that is the whole line is stored once.
    struct Field {
        const char *text;  // null for NULL
        size_t length;
    };
    // With a problem: FieldCount's `detail` is the number of fields;
    // the encoding problems' `text` is what is not UTF-8.
    void add(std::string_view line, const Field *fields, size_t count, uint64_t line_number,
             CopyLineProblem problem = CopyLineProblem::None, size_t detail = 0,
             std::string_view text = {});

    size_t size() const { return line_number_.size(); }
    size_t bytes() const { return text_.size(); }
    size_t columns() const { return columns_; }
    // A pointer to the field's text (NUL-terminated), or null for a NULL
    // field.
    const char *field(size_t row, size_t column) const;
    size_t field_length(size_t row, size_t column) const {
        return field_length_[row * columns_ + column];
    }
    std::string_view line(size_t row) const;
    uint64_t line_number(size_t row) const { return line_number_[row]; }
    CopyLineProblem problem(size_t row) const { return problem_[row]; }
    size_t problem_detail(size_t row) const { return problem_detail_[row]; }
    std::string_view problem_text(size_t row) const;

  private:
    static constexpr size_t kNull = SIZE_MAX;
    size_t columns_;
    std::string text_;              // every field and line, each ended by a NUL
    std::vector<size_t> field_at_;  // row r's column c at [r * columns_ + c]
    std::vector<size_t> field_length_;
    std::vector<size_t> line_at_;
    std::vector<size_t> line_length_;
    std::vector<uint64_t> line_number_;
    std::vector<CopyLineProblem> problem_;
    std::vector<size_t> problem_detail_;
    std::vector<std::pair<size_t, size_t>> problem_text_;  // at, length
};

// Reads text-format input fed in pieces of any size into rows. After the
// end-of-data marker or a line with a problem, it reads nothing more.
class CopyTextReader {
  public:
    // PostgreSQL's reader holds a line in one allocation (1 GB at most).
    static constexpr size_t kMaxLineBytes = (size_t{1} << 30) - 1;

    explicit CopyTextReader(size_t columns, size_t max_line_bytes = kMaxLineBytes)
        : columns_(columns), max_line_bytes_(max_line_bytes) {}
    size_t columns() const { return columns_; }
    // The lines `input` completes, added to `rows`.
    void read(std::string_view input, CopyRows &rows);
    // The end of the input: its last line, if it has no end of line.
    void finish(CopyRows &rows);
    // Whether the marker or a problem ended the data.
    bool done() const { return done_; }

  private:
    enum class Eol : uint8_t { Unknown, Nl, Cr, CrNl };
    enum class Scan : uint8_t { Line, More, Marker, Problem };
    struct Found {
        Scan scan;
        size_t line_end;  // the line is [0, line_end)
        size_t next;      // where the next line starts
        Eol eol;
        CopyLineProblem problem;
    };
    Found scan(std::string_view text, bool at_end) const;
    void read_lines(bool at_end, CopyRows &rows);
    void add_line(std::string_view line, CopyRows &rows);
    void add_problem(CopyLineProblem problem, CopyRows &rows);

    size_t columns_;
    size_t max_line_bytes_;
    std::string pending_;  // input not yet read as lines
    Eol eol_ = Eol::Unknown;
    uint64_t line_number_ = 0;
    bool done_ = false;
    std::string fields_;  // a line's fields, de-escaped
    std::vector<CopyRows::Field> split_;
};

}  // namespace tscoll
