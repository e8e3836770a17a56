// A COPY's rows parsed on a second thread (doc/ARCHITECTURE.md, COPY): the
// backend's thread reads the rows' text and stores the measurements while
// this one parses the next rows' JSON and prepares them. Calls nothing of
// PostgreSQL's.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/copy_text.hpp"
#include "core/measurement.hpp"
#include "core/objectid.hpp"

namespace tscoll::pg {

// What the rows' columns are and how they are prepared.
struct CopyShape {
    std::vector<bool> is_doc;  // per column: doc, else the meta column
    CollectionFields fields;
    uint64_t max_measurement_size = 0;
    // The meta comes from the doc alone (no meta column).
    bool meta_in_doc() const;
};

// The meta values a COPY's parser has seen, numbered by spelling
// (spelling_hash, spelled_alike) in order of first sight, up to a bound;
// and the texts they were read from, so that a row repeating one is not
// read again.
class MetaSpellings {
  public:
    static constexpr uint32_t kNone = UINT32_MAX;
    // The meta's number (kNone once the bound is reached); `first` when
    // it is seen for the first time.
    uint32_t number(const Value &meta, size_t hash, bool &first);

    struct Text {
        uint32_t number;
        KnownMeta meta;
    };
    // The meta read from this JSON text before, or null.
    const Text *of_text(std::string_view text) const;
    void remember_text(std::string_view text, Text meta);

  private:
    // A series' rows mostly spell its meta alike: beyond this many
    // spellings or texts (and the memory they hold), rows are not
    // numbered, or read again.
    static constexpr size_t kMaxSpellings = 10000;
    static constexpr size_t kMaxTextBytes = 4 << 20;
    std::unordered_multimap<size_t, uint32_t> by_hash_;
    std::vector<Value> metas_;
    std::unordered_multimap<size_t, uint32_t> texts_by_hash_;
    std::vector<std::pair<std::string, Text>> texts_;
    size_t text_bytes_ = 0;
};

// What a parser keeps from row to row; one thread's.
struct ParserState {
    explicit ParserState(size_t columns) : text(columns) {}
    MetaSpellings spellings;
    ObjectIdMaker ids;    // for rows whose doc has no _id
    CopyTextReader text;  // when the parser reads the COPY's text
};

// The rows a piece of the COPY's text completes (all of them at its end).
CopyRows rows_of_text(std::string_view text, bool ends, ParserState &state);

// A row as parsing left it.
struct ParsedRow {
    enum class Outcome : uint8_t {
        Prepared,
        // A field is not plain JSON: the backend reads it with jsonb_in,
        // which words the errors.
        NotPlain,
        Failed,   // prepare_measurement threw `error`
        Skipped,  // after a failed row
        BadLine,  // the line has a problem (CopyRows::problem) PostgreSQL raises
    };
    Outcome outcome = Outcome::Skipped;
    std::optional<PreparedMeasurement> prepared;
    std::exception_ptr error;
    // The meta's number (MetaSpellings): `prepared` has the meta only with
    // the first row of each number (MeasurementBatch::add).
    uint32_t spelling = MetaSpellings::kNone;
};

// Each row in order, up to and including the first that fails.
std::vector<ParsedRow> parse_rows(const CopyRows &rows, const CopyShape &shape, ParserState &state);

// Batches of rows parsed in the order they were submitted. The backend's
// thread reads ahead while the parsed rows are not ready, and the parser
// works through what was read ahead while the backend writes buckets.
// When no thread can be had, take() parses the rows itself.
class CopyParser {
  public:
    CopyParser(CopyShape shape, size_t columns);
    ~CopyParser();
    CopyParser(const CopyParser &) = delete;
    CopyParser &operator=(const CopyParser &) = delete;

    void submit(CopyRows rows);
    // A piece of the COPY's text, whose lines the parser finds; `ends`
    // with the last.
    void submit_text(std::string text, bool ends);
    // Whether the text read so far ended the data (its end marker, or a
    // line with a problem): what follows is not read.
    bool text_done() const { return text_done_; }
    // Batches submitted and not taken.
    size_t in_flight() const { return in_flight_; }
    // Whether the oldest batch in flight is parsed.
    bool ready();
    // The oldest batch in flight, parsed; waits for it.
    std::pair<CopyRows, std::vector<ParsedRow>> take();

  private:
    // A batch of input: rows, or a piece of text.
    struct Input {
        CopyRows rows;
        std::string text;
        bool text_ends = false;
    };
    std::vector<ParsedRow> parse(Input &input);
    void run();

    const CopyShape shape_;
    const size_t columns_;
    std::atomic<bool> text_done_{false};
    ParserState state_;  // of the thread that parses
    size_t in_flight_ = 0;
    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<Input> waiting_;  // the parser takes the front
    std::deque<std::pair<CopyRows, std::vector<ParsedRow>>> parsed_;
    bool stopping_ = false;
    std::thread thread_;
};

}  // namespace tscoll::pg
