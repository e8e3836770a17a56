// libFuzzer target for the bucket data decoder (doc/BUCKET_FORMAT.md), the
// code that reads bytes a user may have written into a bucket table.
// Each input is decoded three times: as it is (header and checksum checks),
// and with the magic, format version 1 or 2 and a correct checksum put around
// it, so that most inputs reach the structure parser. Whatever decodes must
// rebuild its measurements and survive an encode/decode round trip; the
// partial decode queries use (some columns, a time window) must not fail
// otherwise, and a fold that writes them again from their codecs must
// write what decoding and encoding do. The same bytes are also parsed as
// date text.
// Built by CMake with -DTSCOLL_FUZZ=ON (clang); run by scripts/test.sh.
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/bucket_data.hpp"
#include "core/bucket_fold.hpp"
#include "core/compare.hpp"
#include "core/date.hpp"
#include "core/error.hpp"
#include "core/value.hpp"

namespace {

void check_round_trip(const tscoll::BucketData &data) {
    std::vector<tscoll::Value> measurements = data.measurements();
    tscoll::BucketData again = tscoll::BucketData::decode(data.encode());
    std::vector<tscoll::Value> after = again.measurements();
    if (after.size() != measurements.size() || again.size() != data.size())
        std::abort();
    for (size_t i = 0; i < after.size(); i++) {
        if (tscoll::compare_values(after[i], measurements[i]) != 0)
            std::abort();
        // what reading the bucket back as JSON does with each value
        tscoll::to_json_text(after[i]);
        tscoll::bson_document_size(after[i]);
    }
}

// What a fold does with stored data (core/bucket_fold.hpp): written again
// from its codecs, what it writes must be what decoding and encoding
// write, and what it reads must decode.
void fold(std::string_view bytes) {
    std::optional<tscoll::FoldedBucket> folded;
    try {
        std::vector<std::string_view> pieces{bytes};
        folded = tscoll::fold_typed(pieces, tscoll::BucketData(), 0, "t", false);
    } catch (const tscoll::Error &) {
        return;
    }
    if (!folded)
        return;
    try {
        if (folded->data != tscoll::BucketData::decode(bytes).encode())
            std::abort();
    } catch (const tscoll::Error &) {
        std::abort();
    }
}

void decode(std::string_view bytes) {
    try {
        check_round_trip(tscoll::BucketData::decode(bytes));
    } catch (const tscoll::Error &) {
        // refusing is the expected answer to most inputs
    }
    // What queries do: a few columns, measurements within a time window.
    static const std::vector<std::string> wanted = {"t", "a", "b"};
    auto within = [](tscoll::UnixMicros t) { return t >= 1000 && t < 1000000; };
    try {
        tscoll::BucketData::decode(bytes, &wanted, tscoll::BucketData::TimeWindow{"t", within});
    } catch (const tscoll::Error &) {
    }
    try {
        tscoll::BucketData::decode_float8(bytes, "t", {"a", "b"});
    } catch (const tscoll::Error &) {
    }
    fold(bytes);
}

std::string with_header_and_checksum(std::string_view body, uint8_t version) {
    std::string bytes = "TSCB";
    bytes += static_cast<char>(version);
    bytes += body;
    uint32_t checksum = tscoll::crc32c(bytes);
    for (int i = 0; i < 4; i++)
        bytes += static_cast<char>(checksum >> (8 * i));
    return bytes;
}

// Date text from users ({"$date": "..."} and time fields given as text)
// must parse or not, and what parses must come back from its canonical text.
void parse_date(std::string_view text) {
    for (auto parsed : {tscoll::parse_iso_date(text), tscoll::parse_canonical_date(text)})
        if (parsed &&
            tscoll::parse_canonical_date(tscoll::format_canonical_date(*parsed)) != parsed)
            std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    std::string_view input(reinterpret_cast<const char *>(data), size);
    decode(input);
    decode(with_header_and_checksum(input, 1));
    decode(with_header_and_checksum(input, 2));
    parse_date(input);
    return 0;
}
