// CopyTextReader: COPY's text format read as PostgreSQL's COPY reads it
// (sql/copy_from.sql compares the two on the same bytes); fed in pieces
// of any size, it reads the same rows.
#include "core/copy_text.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tscoll {
namespace {

// Each row as "number:field|field" (NULL as <null>), or
// "number:!problem".
std::vector<std::string> describe(const CopyRows &rows) {
    std::vector<std::string> out;
    for (size_t r = 0; r < rows.size(); r++) {
        std::string s = std::to_string(rows.line_number(r)) + ":";
        if (rows.problem(r) != CopyLineProblem::None) {
            s += "!" + std::to_string(static_cast<int>(rows.problem(r)));
            if (rows.problem(r) == CopyLineProblem::FieldCount)
                s += "/" + std::to_string(rows.problem_detail(r));
            out.push_back(s);
            continue;
        }
        for (size_t c = 0; c < rows.columns(); c++) {
            if (c > 0)
                s += "|";
            const char *f = rows.field(r, c);
            s += f == nullptr ? "<null>" : std::string(f, rows.field_length(r, c));
        }
        out.push_back(s);
    }
    return out;
}

// The rows of `input` read at once, checked against the same input fed
// in pieces of every size from 1 to 7 bytes.
std::vector<std::string> read(const std::string &input, size_t columns = 1) {
    CopyRows whole(columns);
    CopyTextReader reader(columns);
    reader.read(input, whole);
    reader.finish(whole);
    std::vector<std::string> expected = describe(whole);
    for (size_t piece = 1; piece <= 7; piece++) {
        CopyRows rows(columns);
        CopyTextReader pieces(columns);
        for (size_t at = 0; at < input.size(); at += piece)
            pieces.read(input.substr(at, piece), rows);
        pieces.finish(rows);
        EXPECT_EQ(describe(rows), expected) << "in pieces of " << piece;
    }
    return expected;
}

using Rows = std::vector<std::string>;
constexpr int kCr = static_cast<int>(CopyLineProblem::CarriageReturn);
constexpr int kNl = static_cast<int>(CopyLineProblem::Newline);
constexpr int kCorrupt = static_cast<int>(CopyLineProblem::MarkerCorrupt);
constexpr int kStyle = static_cast<int>(CopyLineProblem::MarkerStyle);
constexpr int kLineEncoding = static_cast<int>(CopyLineProblem::LineEncoding);
constexpr int kFieldEncoding = static_cast<int>(CopyLineProblem::FieldEncoding);
constexpr int kCount = static_cast<int>(CopyLineProblem::FieldCount);

TEST(CopyText, LinesAndTheirEnds) {
    EXPECT_EQ(read("a\nb\n"), (Rows{"1:a", "2:b"}));
    EXPECT_EQ(read("a\nb"), (Rows{"1:a", "2:b"}));  // the last line without an end
    EXPECT_EQ(read("a\n\nb\n"), (Rows{"1:a", "2:", "3:b"}));
    EXPECT_EQ(read(""), Rows{});
    EXPECT_EQ(read("a\r\nb\r\n"), (Rows{"1:a", "2:b"}));
    EXPECT_EQ(read("a\rb\r"), (Rows{"1:a", "2:b"}));
    EXPECT_EQ(read("a\r"), (Rows{"1:a"}));
    // Every line ends as the first did.
    EXPECT_EQ(read("a\nb\rc\n"), (Rows{"1:a", "2:!" + std::to_string(kCr)}));
    EXPECT_EQ(read("a\r\nb\nc"), (Rows{"1:a", "2:!" + std::to_string(kNl)}));
    EXPECT_EQ(read("a\r\nb\rc"), (Rows{"1:a", "2:!" + std::to_string(kCr)}));
    EXPECT_EQ(read("a\rb\n"), (Rows{"1:a", "2:!" + std::to_string(kNl)}));
}

TEST(CopyText, EscapesAndNulls) {
    EXPECT_EQ(read("a\\tb\\\\c\\nd\\re\\bf\\fg\\vh\n"), (Rows{"1:a\tb\\c\nd\re\bf\fg\vh"}));
    EXPECT_EQ(read("\\101\\x41\\x4a\\q\n"), (Rows{"1:AAJq"}));
    EXPECT_EQ(read("\\1012\\x414\\xg\n"), (Rows{"1:A2A4xg"}));
    // An escaped end of line is data; a backslash ending the input is
    // dropped.
    EXPECT_EQ(read("a\\\nb\nc\\"), (Rows{"1:a\nb", "2:c"}));
    EXPECT_EQ(read("\\N\t\\\\N\tx\\N\t\n", 4), (Rows{"1:<null>|\\N|xN|"}));
    EXPECT_EQ(read("{\"a\": \"b\\\\\"c\"}\t{}\n", 2), (Rows{"1:{\"a\": \"b\\\"c\"}|{}"}));
}

TEST(CopyText, TheEndMarker) {
    EXPECT_EQ(read("a\n\\.\nb\n"), (Rows{"1:a"}));
    EXPECT_EQ(read("a\nb\\.\nc\n"), (Rows{"1:a", "2:b"}));
    EXPECT_EQ(read("a\n\\."), (Rows{"1:a", "2:!" + std::to_string(kCorrupt)}));  // no end of line
    EXPECT_EQ(read("a\r\n\\.\r\nb"), (Rows{"1:a"}));
    EXPECT_EQ(read("a\n\\.x\n"), (Rows{"1:a", "2:!" + std::to_string(kCorrupt)}));
    EXPECT_EQ(read("ab\\.cd\n"), (Rows{"1:!" + std::to_string(kCorrupt)}));  // anywhere in a line
    EXPECT_EQ(read("a\n\\.\r"), (Rows{"1:a", "2:!" + std::to_string(kStyle)}));
    EXPECT_EQ(read("a\r\n\\.\n"), (Rows{"1:a", "2:!" + std::to_string(kStyle)}));
    EXPECT_EQ(read("a\r\n\\.x"), (Rows{"1:a", "2:!" + std::to_string(kCorrupt)}));
    EXPECT_EQ(read("\\\\.\n"), (Rows{"1:\\."}));  // an escaped backslash, then a dot
}

TEST(CopyText, FieldsAndTheirCount) {
    EXPECT_EQ(read("a\tb\n", 2), (Rows{"1:a|b"}));
    EXPECT_EQ(read("a\tb\tc\n", 2), (Rows{"1:!" + std::to_string(kCount) + "/3"}));
    EXPECT_EQ(read("x\na\n", 2), (Rows{"1:!" + std::to_string(kCount) + "/1"}));
    EXPECT_EQ(read("a\\\tb\n", 2), (Rows{"1:!" + std::to_string(kCount) + "/1"}));
    EXPECT_EQ(read("\t\n", 2), (Rows{"1:|"}));
}

TEST(CopyText, Encoding) {
    EXPECT_EQ(read("é€😀\n"), (Rows{"1:é€😀"}));
    EXPECT_EQ(read("a\n\xff\nb\n"), (Rows{"1:a", "2:!" + std::to_string(kLineEncoding)}));
    EXPECT_EQ(read(std::string("a\0b\n", 4)), (Rows{"1:!" + std::to_string(kLineEncoding)}));
    // Escapes may make a field that is not UTF-8; a NULL is not read.
    EXPECT_EQ(read("\\xc3\\xa9\n"), (Rows{"1:é"}));
    EXPECT_EQ(read("\\xff\n"), (Rows{"1:!" + std::to_string(kFieldEncoding)}));
    EXPECT_EQ(read("\\0\n"), (Rows{"1:!" + std::to_string(kFieldEncoding)}));
    CopyRows rows(1);
    CopyTextReader reader(1);
    reader.read("ok\n\\x41\\xfe\n", rows);
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows.problem_text(1), "A\xfe");
}

TEST(CopyText, LongLines) {
    // A line fed a byte at a time is found once, where it ends.
    CopyRows rows(1);
    CopyTextReader reader(1);
    std::string line(100000, 'x');
    for (char c : line)
        reader.read(std::string_view(&c, 1), rows);
    reader.read("\n", rows);
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows.field_length(0, 0), line.size());
    // Past the reader's bound, a line is refused before it ends.
    CopyRows bounded(1);
    CopyTextReader small(1, 10);
    small.read("short\n0123456789", bounded);
    EXPECT_FALSE(small.done());
    small.read("ab", bounded);
    EXPECT_TRUE(small.done());
    EXPECT_EQ(
        describe(bounded),
        (Rows{"1:short", "2:!" + std::to_string(static_cast<int>(CopyLineProblem::TooLong))}));
}

TEST(CopyText, ValidUtf8) {
    EXPECT_TRUE(valid_utf8("plain ascii text, long enough for words"));
    EXPECT_TRUE(
        valid_utf8("\xc2\x80\xdf\xbf\xe0\xa0\x80\xed\x9f\xbf\xf0\x90\x80\x80\xf4\x8f\xbf\xbf"));
    EXPECT_FALSE(valid_utf8("\xc0\x80"));          // overlong
    EXPECT_FALSE(valid_utf8("\xe0\x80\x80"));      // overlong
    EXPECT_FALSE(valid_utf8("\xed\xa0\x80"));      // a surrogate
    EXPECT_FALSE(valid_utf8("\xf4\x90\x80\x80"));  // past U+10FFFF
    EXPECT_FALSE(valid_utf8("\xf5\x80\x80\x80"));
    EXPECT_FALSE(valid_utf8("\x80"));
    EXPECT_FALSE(valid_utf8("abcdefgh\xc3"));  // cut short
    EXPECT_FALSE(valid_utf8(std::string("abcdefghij\0k", 12)));
}

}  // namespace
}  // namespace tscoll
