#include "pg/write/copy_parse.hpp"

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <system_error>

#include "core/json_text.hpp"

namespace tscoll::pg {

uint32_t MetaSpellings::number(const Value &meta, size_t hash, bool &first) {
    first = false;
    auto [from, to] = by_hash_.equal_range(hash);
    for (auto it = from; it != to; ++it)
        if (spelled_alike(metas_[it->second], meta))
            return it->second;
    if (metas_.size() >= kMaxSpellings)
        return kNone;
    first = true;
    metas_.push_back(meta);
    by_hash_.emplace(hash, static_cast<uint32_t>(metas_.size() - 1));
    return static_cast<uint32_t>(metas_.size() - 1);
}

bool CopyShape::meta_in_doc() const {
    return !fields.meta_field.empty() &&
           std::find(is_doc.begin(), is_doc.end(), false) == is_doc.end();
}

const MetaSpellings::Text *MetaSpellings::of_text(std::string_view text) const {
    auto [from, to] = texts_by_hash_.equal_range(std::hash<std::string_view>()(text));
    for (auto it = from; it != to; ++it)
        if (texts_[it->second].first == text)
            return &texts_[it->second].second;
    return nullptr;
}

void MetaSpellings::remember_text(std::string_view text, Text meta) {
    if (texts_.size() >= kMaxSpellings || text_bytes_ + text.size() > kMaxTextBytes)
        return;
    text_bytes_ += text.size();
    texts_.emplace_back(std::string(text), meta);
    texts_by_hash_.emplace(std::hash<std::string_view>()(text),
                           static_cast<uint32_t>(texts_.size() - 1));
}

namespace {

// A doc, with its meta field left unread when its text is one read
// before (`skip`, when given); nullopt when it is not plain JSON.
std::optional<Value> read_doc(std::string_view text, SkippableMember *skip) {
    if (skip == nullptr)
        return read_plain_json(text);
    std::optional<Value> doc = read_plain_json(text, skip);
    if (skip->repeated) {
        *skip = SkippableMember{skip->key, nullptr};
        return read_plain_json(text);
    }
    return doc;
}

// The row's measurement, or NotPlain when a field needs jsonb_in.
ParsedRow parse_row(const CopyRows &rows, size_t row, const CopyShape &shape, ParserState &state) {
    MeasurementInput input;
    MetaSpellings &spellings = state.spellings;
    const MetaSpellings::Text *known = nullptr;
    std::optional<SkippableMember> skip;
    if (shape.meta_in_doc())
        skip = SkippableMember{shape.fields.meta_field, [&](std::string_view text) {
                                   return (known = spellings.of_text(text)) != nullptr;
                               }};
    for (size_t c = 0; c < rows.columns(); c++) {
        const char *text = rows.field(row, c);
        if (text == nullptr)
            continue;
        std::string_view json(text, rows.field_length(row, c));
        std::optional<Value> value =
            shape.is_doc[c] ? read_doc(json, skip ? &*skip : nullptr) : read_plain_json(json);
        if (!value)
            return ParsedRow{ParsedRow::Outcome::NotPlain, std::nullopt, nullptr};
        (shape.is_doc[c] ? input.doc : input.meta) = std::move(value);
    }
    bool skipped = skip && skip->skipped;
    ParsedRow parsed{
        ParsedRow::Outcome::Prepared,
        prepare_measurement(std::move(input), shape.fields, shape.max_measurement_size,
                            state.ids.make(std::time(nullptr)), skipped ? &known->meta : nullptr),
        nullptr};
    if (skipped) {
        parsed.spelling = known->number;
        return parsed;
    }
    std::optional<Value> &meta = parsed.prepared->meta;
    if (meta) {
        bool first = false;
        parsed.spelling = spellings.number(*meta, parsed.prepared->meta_spelling, first);
        if (parsed.spelling != MetaSpellings::kNone && skip && skip->text)
            spellings.remember_text(*skip->text, {parsed.spelling, known_meta(*meta)});
        // Dropped here, on the thread that made it, rather than compared
        // and dropped by the backend.
        if (parsed.spelling != MetaSpellings::kNone && !first)
            meta.reset();
    }
    return parsed;
}

}  // namespace

CopyRows rows_of_text(std::string_view text, bool ends, ParserState &state) {
    CopyRows rows(state.text.columns());
    state.text.read(text, rows);
    if (ends)
        state.text.finish(rows);
    return rows;
}

std::vector<ParsedRow> parse_rows(const CopyRows &rows, const CopyShape &shape,
                                  ParserState &state) {
    std::vector<ParsedRow> parsed(rows.size());
    for (size_t r = 0; r < rows.size(); r++) {
        if (rows.problem(r) != CopyLineProblem::None) {
            parsed[r] = ParsedRow{ParsedRow::Outcome::BadLine, std::nullopt, nullptr};
            break;
        }
        try {
            parsed[r] = parse_row(rows, r, shape, state);
        } catch (...) {
            parsed[r] =
                ParsedRow{ParsedRow::Outcome::Failed, std::nullopt, std::current_exception()};
            break;
        }
    }
    return parsed;
}

CopyParser::CopyParser(CopyShape shape, size_t columns)
    : shape_(std::move(shape)), columns_(columns), state_(columns) {
    // The thread starts with every signal blocked: PostgreSQL's handlers
    // belong to the backend's own thread.
    sigset_t all, caller;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &caller);
    try {
        thread_ = std::thread([this] { run(); });
    } catch (const std::system_error &) {
        // No thread: take() parses.
    }
    pthread_sigmask(SIG_SETMASK, &caller, nullptr);
}

CopyParser::~CopyParser() {
    if (!thread_.joinable())
        return;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
    }
    changed_.notify_all();
    thread_.join();
}

void CopyParser::submit(CopyRows rows) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        waiting_.push_back(Input{std::move(rows), std::string(), false});
    }
    in_flight_++;
    changed_.notify_all();
}

void CopyParser::submit_text(std::string text, bool ends) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        waiting_.push_back(Input{CopyRows(columns_), std::move(text), ends});
    }
    in_flight_++;
    changed_.notify_all();
}

bool CopyParser::ready() {
    std::lock_guard<std::mutex> lock(mutex_);
    return !parsed_.empty();
}

std::pair<CopyRows, std::vector<ParsedRow>> CopyParser::take() {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!thread_.joinable() && parsed_.empty()) {
        std::vector<ParsedRow> parsed = parse(waiting_.front());
        parsed_.emplace_back(std::move(waiting_.front().rows), std::move(parsed));
        waiting_.pop_front();
    }
    changed_.wait(lock, [this] { return !parsed_.empty(); });
    std::pair<CopyRows, std::vector<ParsedRow>> out = std::move(parsed_.front());
    parsed_.pop_front();
    in_flight_--;
    return out;
}

std::vector<ParsedRow> CopyParser::parse(Input &input) {
    if (!input.text.empty() || input.text_ends) {
        input.rows = rows_of_text(input.text, input.text_ends, state_);
        input.text = std::string();
        if (state_.text.done())
            text_done_ = true;
    }
    return parse_rows(input.rows, shape_, state_);
}

void CopyParser::run() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
        changed_.wait(lock, [this] { return stopping_ || !waiting_.empty(); });
        if (stopping_)
            return;
        // Only this thread pops waiting_: the front stays put while the
        // backend pushes behind it.
        Input &input = waiting_.front();
        lock.unlock();
        std::vector<ParsedRow> parsed;
        try {
            parsed = parse(input);
        } catch (...) {
            // Out of memory before any row: the first row carries it.
            parsed.clear();
            parsed.push_back(
                ParsedRow{ParsedRow::Outcome::Failed, std::nullopt, std::current_exception()});
        }
        lock.lock();
        parsed_.emplace_back(std::move(waiting_.front().rows), std::move(parsed));
        waiting_.pop_front();
        changed_.notify_all();
    }
}

}  // namespace tscoll::pg
