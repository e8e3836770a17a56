// Speed of the bucket data codecs (`codec_bench build N`: building N
// buckets of TSBS rows once, and `codec_bench parse FILE N`: parsing N
// NDJSON lines once, for callgrind): buckets of 1,000 measurements
// whose one field holds a kind of column (each picks its codec), decoded
// again and again (and encoded again), as values per second and bytes per
// value. Two decoders:
// BucketData::decode builds every value (what SELECT * and tscoll.buckets()
// pay); decode_float8 reads numbers as doubles (what aggregation and
// filters on (doc->>'f')::float8 pay). Then what the steps of writing a
// tail and of a fold cost per measurement of TSBS rows. Built by CMake (target codec_bench,
// Release); run build/codec/codec_bench.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/bucket.hpp"
#include "core/bucket_data.hpp"
#include "core/bucket_fold.hpp"
#include "core/compare.hpp"
#include "core/json_text.hpp"
#include "core/measurement.hpp"
#include "core/number.hpp"
#include "core/objectid.hpp"
#include "core/value.hpp"

using namespace tscoll;

namespace {

constexpr int kCount = 1000;

struct Column {
    const char *name;
    std::function<Value(int, std::mt19937_64 &)> value;
};

// A bucket of kCount measurements: times 10 s apart, and "v" unless
// column is null.
std::string bucket_of(const Column *column) {
    std::mt19937_64 rng(42);
    BucketData data;
    for (int i = 0; i < kCount; i++) {
        Value m = Value::object();
        m.add("t", Value::date(int64_t{1451606400000000} + i * int64_t{10000000}));
        if (column)
            m.add("v", column->value(i, rng));
        data.append(m, 10);
    }
    return data.encode();
}

// The best of five rounds of `decode` of 0.2 s each, in values per second
// (the best, because on a shared machine noise only slows a round down).
double rate(const std::function<size_t()> &decode) {
    using Clock = std::chrono::steady_clock;
    double best = 0;
    for (int round = 0; round < 5; round++) {
        size_t values = 0;
        Clock::time_point start = Clock::now();
        double seconds = 0;
        do {
            values += decode();
            seconds = std::chrono::duration<double>(Clock::now() - start).count();
        } while (seconds < 0.2);
        best = std::max(best, static_cast<double>(values) / seconds);
    }
    return best;
}

// Microseconds per measurement of `work`, which handles n, at rate()'s best.
double micros_per(size_t n, const std::function<void()> &work) {
    return 1e6 / rate([&] {
               work();
               return n;
           });
}

// TSBS cpu rows as a bucket holds them: time, _id and ten readings of
// two decimals that walk.
std::vector<Value> tsbs_measurements(int n) {
    static const char *fields[] = {
        "usage_user", "usage_system",  "usage_idle",  "usage_nice",  "usage_iowait",
        "usage_irq",  "usage_softirq", "usage_steal", "usage_guest", "usage_guest_nice"};
    std::mt19937_64 rng(7);
    std::vector<double> readings(10, 50.0);
    std::vector<Value> out;
    for (int i = 0; i < n; i++) {
        Value m = Value::object();
        m.add("time", Value::date(int64_t{1451606400000000} + i * int64_t{10000000}));
        m.add("_id", Value::objectid(ObjectId::generate(1451606400 + i * 10)));
        for (int f = 0; f < 10; f++) {
            readings[f] = std::min(100.0, std::max(0.0, readings[f] + (rng() % 201) / 100.0 - 1));
            char text[32];
            std::snprintf(text, sizeof text, "%.2f", readings[f]);
            m.add(fields[f], Value::number(text));
        }
        out.push_back(std::move(m));
    }
    return out;
}

// What writing a bucket of n TSBS rows costs per measurement, step by
// step: a tail (n of 1 or 10) is appended and encoded; a fold decodes the
// bucket, appends its tails, summarises the control and encodes it all,
// or, typed, reads the codecs' numbers and writes them again.
void fold_steps() {
    std::printf(
        "\n| TSBS rows | append | encode | decode | control | typed fold | "
        "bytes/measurement |\n");
    std::printf("|---|---|---|---|---|---|---|\n");
    std::vector<Value> rows = tsbs_measurements(360);
    for (size_t n : {size_t{1}, size_t{10}, size_t{150}, size_t{360}}) {
        BucketData data;
        for (size_t i = 0; i < n; i++)
            data.append(rows[i], 200);
        std::string bytes = data.encode();
        Bucket bucket(ObjectId::generate(1451606400), 1451606400000000, "time", data);
        double append = micros_per(n, [&] {
            BucketData fresh;
            for (size_t i = 0; i < n; i++)
                fresh.append(rows[i], 200);
        });
        double encode = micros_per(n, [&] { data.encode(); });
        double decode = micros_per(n, [&] { BucketData::decode(bytes); });
        double control = micros_per(n, [&] { bucket.control(); });
        // The same bucket written again from its bytes (bucket_fold.hpp).
        std::vector<std::string_view> stored{bytes};
        double typed = micros_per(
            n, [&] { fold_typed(stored, BucketData(), 1451606400000000, "time", false); });
        std::printf("| %zu | %.2f us | %.2f us | %.2f us | %.2f us | %.2f us | %.1f |\n", n, append,
                    encode, decode, control, typed, static_cast<double>(bytes.size()) / n);
    }
}

// What the insert path does with `buckets` buckets of 360 TSBS rows, once
// (a run for callgrind, whose instruction counts do not vary as the
// machine's speed does): the rollover decision and the append of each
// measurement, then each bucket's encoding and control.
void build_buckets(int buckets) {
    std::vector<Value> rows = tsbs_measurements(360);
    // The readings as JSON writers spell them (the shortest text: 49.6, not
    // 49.60), their forms worked out as preparing a measurement does.
    for (Value &row : rows) {
        for (Member &m : row.as_object())
            if (m.value.is(Value::Kind::Number))
                m.value = Value::number(shortest_text(std::stod(m.value.as_number().text)));
        bson_document_size(row);
    }
    BucketingLimits limits;
    size_t bytes = 0;
    for (int b = 0; b < buckets; b++) {
        Bucket bucket(ObjectId::generate(1451606400), 1451606400000000, "time");
        for (const Value &row : rows) {
            Measurement m{row.find("time")->as_date(), row, 200};
            BucketState::Decision d = bucket.decide(m, limits);
            if (d.reason != Rollover::None)
                std::abort();
            bucket.append(std::move(m), d.schema_known);
        }
        bytes += bucket.encode().size() + to_json_text(bucket.control()).size();
    }
    std::printf("%d buckets, %zu bytes\n", buckets, bytes);
}

// What a COPY's parser thread does with the first `n` lines of an NDJSON
// file (bench/data/*/cpu.ndjson), once, for callgrind: each line read into
// a value, the meta "tags" skipped where its text was read before, and
// the measurement prepared.
void parse_lines(const char *path, size_t n) {
    std::ifstream in(path);
    std::vector<std::string> lines;
    for (std::string line; lines.size() < n && std::getline(in, line);)
        lines.push_back(line);
    CollectionFields fields{"cpu", "time", "tags", 60};
    std::unordered_map<std::string, KnownMeta> metas;
    ObjectIdMaker ids;
    uint64_t bytes = 0;
    for (const std::string &line : lines) {
        const KnownMeta *known = nullptr;
        SkippableMember skip("tags", [&](std::string_view text) {
            auto it = metas.find(std::string(text));
            known = it == metas.end() ? nullptr : &it->second;
            return known != nullptr;
        });
        std::optional<Value> doc = read_plain_json(line, &skip);
        if (!doc)
            std::abort();
        if (!skip.skipped)
            metas.emplace(std::string(*skip.text), known_meta(*doc->find("tags")));
        PreparedMeasurement p =
            prepare_measurement(MeasurementInput{std::move(doc), {}, {}}, fields, 16 << 20,
                                ids.make(1451606400), skip.skipped ? known : nullptr);
        bytes += p.measurement.bson_size;
    }
    std::printf("%zu lines, %llu BSON bytes\n", lines.size(),
                static_cast<unsigned long long>(bytes));
}

// A step of TSBS's cpu walk (normal, sigma 1, clamped to [0, 100]).
double walk_step(double value, std::mt19937_64 &rng) {
    std::normal_distribution<double> step(0.0, 1.0);
    return std::min(100.0, std::max(0.0, value + step(rng)));
}

}  // namespace

int main(int argc, char **argv) {
    if (argc == 3 && std::string(argv[1]) == "build") {
        build_buckets(std::atoi(argv[2]));
        return 0;
    }
    if (argc == 4 && std::string(argv[1]) == "parse") {
        parse_lines(argv[2], std::strtoull(argv[3], nullptr, 10));
        return 0;
    }
    double walk = 50, decimal_walk = 50;
    std::vector<Column> columns = {
        {"integers, TSBS walk (packed steps)",
         [&](int, std::mt19937_64 &rng) {
             walk = walk_step(walk, rng);
             return Value::number(std::to_string(static_cast<int64_t>(walk)));
         }},
        {"2 decimals, walk by up to 5 (packed decimal steps)",
         [&](int, std::mt19937_64 &rng) {
             decimal_walk =
                 std::min(100.0, std::max(0.0, decimal_walk + (rng() % 1001) / 100.0 - 5));
             char text[32];
             std::snprintf(text, sizeof text, "%.2f", decimal_walk);
             return Value::number(text);
         }},
        {"2 decimals, random in [0, 100) (packed decimals)",
         [](int, std::mt19937_64 &rng) {
             char text[32];
             std::snprintf(text, sizeof text, "%.2f", (rng() % 10000) / 100.0);
             return Value::number(text);
         }},
        {"integers, random int64 (integers)",
         [](int, std::mt19937_64 &rng) {
             return Value::number(std::to_string(static_cast<int64_t>(rng())));
         }},
        {"doubles, random (XOR)",
         [](int, std::mt19937_64 &rng) {
             char text[40];
             std::snprintf(text, sizeof text, "%.17g",
                           std::uniform_real_distribution<double>(0, 1)(rng));
             return Value::number(text);
         }},
        {"dates, regular (packed dates)",
         [](int i, std::mt19937_64 &) {
             return Value::date(int64_t{1451606400000000} + i * int64_t{1000000});
         }},
        {"dates, jittered (dates)",
         [](int i, std::mt19937_64 &rng) {
             return Value::date(int64_t{1451606400000000} + i * int64_t{1000000} +
                                static_cast<int64_t>(rng() % 1000000));
         }},
        {"ObjectIds of one process, one in 100 of its ids (packed ObjectIds)",
         [](int, std::mt19937_64 &) {
             ObjectId id;
             for (int skip = 0; skip < 100; skip++)
                 id = ObjectId::generate(1451606400);
             return Value::objectid(id);
         }},
        {"ObjectIds, random (ObjectIds)",
         [](int, std::mt19937_64 &rng) {
             ObjectId id;
             for (uint8_t &b : id.bytes)
                 b = static_cast<uint8_t>(rng());
             return Value::objectid(id);
         }},
        {"strings of 8 (tagged)",
         [](int, std::mt19937_64 &rng) {
             return Value::string("host_" + std::to_string(rng() % 8));
         }},
    };
    std::printf(
        "| column | bytes/value | encode, values/s | decode, values/s | decode_float8, values/s "
        "|\n");
    std::printf("|---|---|---|---|---|\n");
    std::string times_only = bucket_of(nullptr);
    for (const Column &column : columns) {
        std::string bytes = bucket_of(&column);
        double per_value = static_cast<double>(bytes.size() - times_only.size()) / kCount;
        BucketData decoded = BucketData::decode(bytes);
        double encode = rate([&] { return decoded.encode().size() * 0 + kCount; });
        double full = rate([&] { return BucketData::decode(bytes).measurements().size(); });
        volatile double sink = 0;
        double float8 = rate([&] {
            Float8Columns f = BucketData::decode_float8(bytes, "t", {"v"});
            const Float8Column &c = f.fields[0];
            double sum = 0;
            for (size_t i = 0; i < c.size(); i++)
                sum += c.number(i);  // packed decimals decode here
            sink = sink + sum;
            return f.times.size();
        });
        std::printf("| %s | %.2f | %.3g | %.3g | %.3g |\n", column.name, per_value, encode, full,
                    float8);
    }
    fold_steps();
}
