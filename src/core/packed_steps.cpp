#include "core/packed_steps.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

namespace tscoll::codec {

namespace {

constexpr unsigned kMaxWidth = 56;      // a word load at any bit offset holds a slot
constexpr unsigned kMaxCodedWidth = 4;  // a prefix code has at most 16 symbols
constexpr unsigned kMaxCodeLength = 8;  // so that a table of 256 entries decodes it
constexpr uint8_t kCoded = 0x80;        // in the width byte
constexpr size_t kSymbols = size_t{1} << kMaxCodedWidth;

using Lengths = std::array<uint8_t, kSymbols>;
using Counts = std::array<uint64_t, kSymbols>;
using Exceptions = std::vector<std::pair<uint64_t, int64_t>>;  // (step index, step)

// How a column's steps are written: those in [base, base + 2^width) as
// their offset from base, in `width` bits or in the prefix code of
// `lengths`; the others listed apart.
struct StepPlan {
    int64_t base = 0;
    unsigned width = 0;
    bool coded = false;
    Lengths lengths{};
    Exceptions exceptions;
    size_t size = 0;  // of the bytes after the first value
};

// The steps k[i] - k[i-1]; nullopt when one leaves int64.
std::optional<std::vector<int64_t>> steps_of(const std::vector<int64_t> &ks) {
    std::vector<int64_t> steps;
    steps.reserve(ks.empty() ? 0 : ks.size() - 1);
    for (size_t i = 1; i < ks.size(); i++) {
        __int128 step = static_cast<__int128>(ks[i]) - ks[i - 1];
        if (step < std::numeric_limits<int64_t>::min() ||
            step > std::numeric_limits<int64_t>::max())
            return std::nullopt;
        steps.push_back(static_cast<int64_t>(step));
    }
    return steps;
}

// From base up, the difference of two int64 is exact as uint64.
bool in_frame(int64_t step, int64_t base, unsigned width) {
    return step >= base &&
           (static_cast<uint64_t>(step) - static_cast<uint64_t>(base)) >> width == 0;
}

uint64_t offset_of(int64_t step, int64_t base) {
    return static_cast<uint64_t>(step) - static_cast<uint64_t>(base);
}

// The code lengths of a Huffman code for `counts` over `symbols` symbols
// (none for a symbol that does not occur); nullopt when fewer than two
// occur or a code would be longer than kMaxCodeLength.
std::optional<Lengths> huffman_lengths(const Counts &counts, size_t symbols) {
    struct Node {
        uint64_t weight;
        int parent;
    };
    std::vector<Node> nodes;
    std::vector<int> roots;
    std::array<int, kSymbols> leaf;
    leaf.fill(-1);
    for (size_t s = 0; s < symbols; s++)
        if (counts[s] > 0) {
            leaf[s] = static_cast<int>(nodes.size());
            roots.push_back(leaf[s]);
            nodes.push_back({counts[s], -1});
        }
    if (roots.size() < 2)
        return std::nullopt;
    while (roots.size() > 1) {
        // The two lightest roots last (ties by age: the code is deterministic).
        std::sort(roots.begin(), roots.end(), [&](int a, int b) {
            return nodes[a].weight != nodes[b].weight ? nodes[a].weight > nodes[b].weight : a > b;
        });
        int a = roots.back();
        roots.pop_back();
        int b = roots.back();
        roots.pop_back();
        nodes[a].parent = nodes[b].parent = static_cast<int>(nodes.size());
        roots.push_back(static_cast<int>(nodes.size()));
        nodes.push_back({nodes[a].weight + nodes[b].weight, -1});
    }
    Lengths lengths{};
    for (size_t s = 0; s < symbols; s++) {
        unsigned depth = 0;
        for (int n = leaf[s]; n >= 0 && nodes[n].parent >= 0; n = nodes[n].parent)
            depth++;
        if (depth > kMaxCodeLength)
            return std::nullopt;
        lengths[s] = static_cast<uint8_t>(depth);
    }
    return lengths;
}

// The canonical code of `lengths`, each code bit-reversed (the stream is
// read least significant bit first); nullopt when the lengths hold more
// codes than their bits can.
std::optional<std::array<uint16_t, kSymbols>> canonical_codes(const Lengths &lengths,
                                                              size_t symbols) {
    std::array<uint16_t, kSymbols> codes{};
    uint32_t code = 0;
    for (unsigned length = 1; length <= kMaxCodeLength; length++, code <<= 1)
        for (size_t s = 0; s < symbols; s++) {
            if (lengths[s] != length)
                continue;
            if (code >> length)
                return std::nullopt;
            uint16_t reversed = 0;
            for (unsigned b = 0; b < length; b++)
                reversed = static_cast<uint16_t>(reversed | (code >> b & 1) << (length - 1 - b));
            codes[s] = reversed;
            code++;
        }
    return codes;
}

// The plan for one frame: the smaller way to write the steps in it, and
// its size; the exceptions are left for the plan that wins.
StepPlan frame_plan(const std::vector<int64_t> &steps, int64_t base, unsigned width) {
    StepPlan plan;
    plan.base = base;
    plan.width = width;
    Counts counts{};
    size_t exceptions = 0, listed = 0;
    uint64_t previous = 0;
    for (size_t i = 0; i < steps.size(); i++) {
        if (in_frame(steps[i], base, width)) {
            if (width <= kMaxCodedWidth)
                counts[offset_of(steps[i], base)]++;
            continue;
        }
        exceptions++;
        listed += varint_size(i - previous) + varint_size(zigzag(steps[i]));
        previous = i + 1;
    }
    size_t head = varint_size(zigzag(base)) + 1 + varint_size(exceptions) + listed;
    plan.size = head + ((steps.size() - exceptions) * width + 7) / 8;
    if (width == 0 || width > kMaxCodedWidth)
        return plan;
    size_t symbols = size_t{1} << width;
    std::optional<Lengths> lengths = huffman_lengths(counts, symbols);
    if (!lengths)
        return plan;
    uint64_t bits = 0;
    for (size_t s = 0; s < symbols; s++)
        bits += counts[s] * (*lengths)[s];
    size_t bytes = (bits + 7) / 8;
    size_t coded = head + (symbols + 1) / 2 + varint_size(bytes) + bytes;
    if (coded < plan.size) {
        plan.coded = true;
        plan.lengths = *lengths;
        plan.size = coded;
    }
    return plan;
}

// A column's steps in order of value, each distinct value with its count.
struct Distinct {
    int64_t value;
    uint64_t count;
};

std::vector<Distinct> distinct_steps(const std::vector<int64_t> &steps) {
    auto [low, high] = std::minmax_element(steps.begin(), steps.end());
    // Readings walk by small steps: counted in place of a sort when the
    // steps span no more than a few times their number.
    if (static_cast<unsigned __int128>(static_cast<__int128>(*high) - *low) <
        4 * steps.size() + 64) {
        std::vector<uint32_t> counts(static_cast<size_t>(*high - *low) + 1);
        for (int64_t step : steps)
            counts[static_cast<size_t>(step - *low)]++;
        std::vector<Distinct> distinct;
        distinct.reserve(std::min(counts.size(), steps.size()));
        for (size_t i = 0; i < counts.size(); i++)
            if (counts[i] != 0)
                distinct.push_back({*low + static_cast<int64_t>(i), counts[i]});
        return distinct;
    }
    std::vector<int64_t> sorted(steps);
    std::sort(sorted.begin(), sorted.end());
    std::vector<Distinct> distinct;
    distinct.reserve(sorted.size());
    for (int64_t step : sorted)
        if (distinct.empty() || distinct.back().value != step)
            distinct.push_back({step, 1});
        else
            distinct.back().count++;
    return distinct;
}

// About the size of the frame of `width` bits that holds the most steps,
// from the counts alone (an exception's position is taken to cost the
// varint of the mean gap); its base in `base`.
size_t estimated_size(const std::vector<Distinct> &distinct, uint64_t n, unsigned width,
                      int64_t &base) {
    uint64_t most = 0, held = 0;
    size_t from = 0;
    for (size_t i = 0, j = 0; i < distinct.size(); i++) {
        for (; j < distinct.size() && in_frame(distinct[j].value, distinct[i].value, width); j++)
            held += distinct[j].count;
        if (held > most) {
            most = held;
            from = i;
        }
        held -= distinct[i].count;
    }
    base = distinct[from].value;
    uint64_t exceptions = n - most;
    size_t size = varint_size(zigzag(base)) + 1 + varint_size(exceptions) +
                  exceptions * varint_size(n / (exceptions + 1));
    Counts counts{};
    for (const Distinct &d : distinct)
        if (in_frame(d.value, base, width)) {
            if (width <= kMaxCodedWidth)
                counts[offset_of(d.value, base)] = d.count;
        } else {
            size += d.count * varint_size(zigzag(d.value));
        }
    size_t fixed = (most * width + 7) / 8;
    if (width == 0 || width > kMaxCodedWidth)
        return size + fixed;
    size_t symbols = size_t{1} << width;
    std::optional<Lengths> lengths = huffman_lengths(counts, symbols);
    if (!lengths)
        return size + fixed;
    uint64_t bits = 0;
    for (size_t s = 0; s < symbols; s++)
        bits += counts[s] * (*lengths)[s];
    return size + std::min(fixed, (symbols + 1) / 2 + 1 + (bits + 7) / 8);
}

constexpr size_t kSearchedSteps = 32;

// Frames of a few widths are weighed by their counts: those a prefix code
// may serve, and the few just narrower than the frame that holds every
// step (rare wide steps listed apart). The lightest is planned exactly and
// kept if smaller than the frame that holds every step.
StepPlan plan_steps(const std::vector<int64_t> &steps) {
    if (steps.empty())
        return frame_plan(steps, 0, 0);
    std::vector<Distinct> distinct = distinct_steps(steps);
    auto spread = static_cast<unsigned __int128>(static_cast<__int128>(distinct.back().value) -
                                                 distinct.front().value);
    unsigned full = 0;
    while (full < kMaxWidth && spread >> full != 0)
        full++;
    StepPlan best = frame_plan(steps, distinct.front().value, full);
    std::optional<std::pair<size_t, unsigned>> lightest;
    int64_t lightest_base = 0;
    // Each run narrows the frame while that makes it lighter: a narrower
    // frame only lists more steps apart.
    unsigned coded_from = std::min(kMaxCodedWidth, full == 0 ? 0 : full - 1);
    unsigned near_from = full == 0 ? 0 : full - 1;
    // What a narrower frame saves on a few steps (a tail, a small bucket)
    // is a few bytes, not worth the search.
    bool searched = steps.size() >= kSearchedSteps;
    for (unsigned from : {near_from, coded_from}) {
        std::optional<size_t> previous;
        for (unsigned width = from + 1; searched && width-- > 0;) {
            if (width + 4 < full && width > kMaxCodedWidth)
                break;
            int64_t base;
            size_t size = estimated_size(distinct, steps.size(), width, base);
            if (previous && size >= *previous)
                break;
            previous = size;
            if (!lightest || size < lightest->first) {
                lightest = {size, width};
                lightest_base = base;
            }
        }
    }
    if (lightest) {
        StepPlan plan = frame_plan(steps, lightest_base, lightest->second);
        if (plan.size < best.size)
            best = plan;
    }
    for (size_t i = 0; i < steps.size(); i++)
        if (!in_frame(steps[i], best.base, best.width))
            best.exceptions.emplace_back(i, steps[i]);
    return best;
}

// Bits least significant first, values of at most 56 bits.
class BitWriter {
  public:
    void put(uint64_t value, unsigned bits) {
        pending_ |= value << filled_;
        for (filled_ += bits; filled_ >= 8; filled_ -= 8, pending_ >>= 8)
            out_.push_back(static_cast<char>(pending_ & 0xFF));
    }
    std::string take() {
        if (filled_ > 0)
            out_.push_back(static_cast<char>(pending_));
        return std::move(out_);
    }

  private:
    std::string out_;
    uint64_t pending_ = 0;  // the bits not yet in out_
    unsigned filled_ = 0;
};

// The 8 bytes from bit `bit` of `bits` on, as a word whose bit 0 is it.
uint64_t word_at(const std::string &bits, uint64_t bit) {
    uint64_t word;
    std::memcpy(&word, bits.data() + bit / 8, sizeof word);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    word = __builtin_bswap64(word);
#endif
    return word >> (bit % 8);
}

// `bytes` of the input, followed by `words` words of zeros for whole-word
// loads past them.
std::string padded(ByteReader &r, uint64_t bytes, size_t words = 1) {
    std::string bits(r.bytes(bytes));
    bits.append(words * sizeof(uint64_t), '\0');
    return bits;
}

void read_fixed(ByteReader &r, unsigned width, uint64_t m, uint64_t base, uint64_t *to) {
    std::string bits = padded(r, (m * width + 7) / 8);
    uint64_t mask = (uint64_t{1} << width) - 1;
    for (uint64_t i = 0, bit = 0; i < m; i++, bit += width)
        to[i] = base + (word_at(bits, bit) & mask);
}

void read_coded(ByteReader &r, unsigned width, uint64_t m, uint64_t base, uint64_t *to) {
    size_t symbols = size_t{1} << width;
    Lengths lengths{};
    for (size_t s = 0; s < symbols; s += 2) {
        uint8_t pair = r.byte();
        lengths[s] = pair & 0xF;
        lengths[s + 1] = static_cast<uint8_t>(pair >> 4);
        if (lengths[s] > kMaxCodeLength || lengths[s + 1] > kMaxCodeLength)
            corrupt("packed deltas code length out of range");
    }
    std::optional<std::array<uint16_t, kSymbols>> codes = canonical_codes(lengths, symbols);
    if (!codes)
        corrupt("packed deltas code over-subscribed");
    struct Entry {
        uint8_t symbol = 0, length = 0;  // length 0: no code starts so
    };
    std::array<Entry, size_t{1} << kMaxCodeLength> table{};
    for (size_t s = 0; s < symbols; s++)
        if (lengths[s] > 0)
            for (size_t i = (*codes)[s]; i < table.size(); i += size_t{1} << lengths[s])
                table[i] = {static_cast<uint8_t>(s), lengths[s]};
    uint64_t bytes = r.varint();
    if (bytes > r.remaining() || m > bytes * 8)  // each step takes a bit at least
        corrupt("packed deltas code stream out of range");
    // The stream goes through a word of bits, refilled a whole number of
    // bytes at a time: the loads run at most 9 bytes past the stream's end
    // (a step starts before it), inside the 16 bytes of padding.
    std::string bits = padded(r, bytes, 2);
    uint64_t bit = 0, next_byte = 0, buffer = 0;
    unsigned held = 0;
    for (uint64_t i = 0; i < m; i++) {
        // A step takes up to 8 bits: the stream must not be read past.
        if (bit >= bytes * 8)
            corrupt("packed deltas code stream too short");
        if (held < kMaxCodeLength) {
            unsigned loaded = (63 - held) / 8;
            buffer |= word_at(bits, next_byte * 8) << held;
            next_byte += loaded;
            held += loaded * 8;
        }
        Entry e = table[buffer & (table.size() - 1)];
        if (e.length == 0)
            corrupt("packed deltas code unknown");
        to[i] = base + e.symbol;
        buffer >>= e.length;
        held -= e.length;
        bit += e.length;
    }
    if (bit > bytes * 8)
        corrupt("packed deltas code stream too short");
}

}  // namespace

std::optional<std::string> packed_steps(const std::vector<int64_t> &ks) {
    std::optional<std::vector<int64_t>> steps = steps_of(ks);
    if (!steps || ks.empty())
        return std::nullopt;
    StepPlan plan = plan_steps(*steps);
    ByteWriter w;
    w.varint(zigzag(ks[0]));
    w.varint(zigzag(plan.base));
    w.byte(static_cast<uint8_t>(plan.width | (plan.coded ? kCoded : 0)));
    w.varint(plan.exceptions.size());
    uint64_t previous = 0;
    for (auto [index, step] : plan.exceptions) {
        w.varint(index - previous);
        w.varint(zigzag(step));
        previous = index + 1;
    }
    std::array<uint16_t, kSymbols> codes{};
    if (plan.coded) {
        size_t symbols = size_t{1} << plan.width;
        for (size_t s = 0; s < symbols; s += 2)
            w.byte(static_cast<uint8_t>(plan.lengths[s] | plan.lengths[s + 1] << 4));
        codes = *canonical_codes(plan.lengths, symbols);
    }
    BitWriter bits;
    auto exception = plan.exceptions.begin();
    for (size_t i = 0; i < steps->size(); i++) {
        if (exception != plan.exceptions.end() && exception->first == i) {
            ++exception;
            continue;
        }
        uint64_t offset = offset_of((*steps)[i], plan.base);
        if (plan.coded)
            bits.put(codes[offset], plan.lengths[offset]);
        else
            bits.put(offset, plan.width);
    }
    std::string packed = bits.take();
    if (plan.coded)
        w.varint(packed.size());
    w.bytes(packed);
    return w.take();
}

void read_packed_deltas(ByteReader &r, uint64_t n, std::vector<int64_t> &out) {
    if (n == 0)
        return;
    auto first = static_cast<uint64_t>(unzigzag(r.varint()));
    auto base = static_cast<uint64_t>(unzigzag(r.varint()));
    uint8_t head = r.byte();
    bool coded = head & kCoded;
    unsigned width = head & ~kCoded;
    uint64_t exceptions = r.varint();
    // Each exception takes two bytes at least: the list is bounded by the
    // input, as the steps are by the bucket's count (the reader's bound).
    if (width > kMaxWidth || (coded && (width == 0 || width > kMaxCodedWidth)) ||
        exceptions > n - 1 || exceptions > r.remaining() / 2)
        corrupt("packed deltas out of range");
    Exceptions patches(exceptions);
    for (uint64_t e = 0, index = 0; e < exceptions; e++, index++) {
        uint64_t gap = r.varint();
        if (gap >= n - 1 - index)
            corrupt("packed deltas exception out of range");
        index += gap;
        patches[e] = {index + 1, unzigzag(r.varint())};
    }
    // The steps in the frame go to the end of `out`, then move forward
    // around the listed ones; then their running sum.
    size_t at = out.size();
    out.resize(at + n);
    auto *steps = reinterpret_cast<uint64_t *>(out.data() + at);
    uint64_t in_frame_steps = n - 1 - exceptions;
    if (coded)
        read_coded(r, width, in_frame_steps, base, steps + 1 + exceptions);
    else
        read_fixed(r, width, in_frame_steps, base, steps + 1 + exceptions);
    if (exceptions > 0) {
        auto patch = patches.begin();
        for (uint64_t i = 1, from = 1 + exceptions; i < n; i++)
            if (patch != patches.end() && patch->first == i)
                steps[i] = static_cast<uint64_t>((patch++)->second);
            else
                steps[i] = steps[from++];
    }
    steps[0] = first;
    for (uint64_t i = 1; i < n; i++)
        steps[i] += steps[i - 1];
}

}  // namespace tscoll::codec
