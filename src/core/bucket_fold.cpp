#include "core/bucket_fold.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <unordered_map>

#include "core/bucket_bytes.hpp"
#include "core/column_codec.hpp"
#include "core/number.hpp"

namespace tscoll {

using namespace bucket_bytes;

namespace {

enum class Kind { Dates, ObjectIds, Numbers };

// A number as a bucket reads it back: an integer (of the integer codecs,
// or a whole double) or a double, with the scale its text shows and the
// one it reads back with (the pair DisplayScales weighs). An appended
// number keeps its value, whose text stands as it is.
struct TypedNumber {
    bool integral = false;
    int64_t integer = 0;
    double real = 0;
    int64_t scale = 0;
    int64_t back = 0;
    const Value *original = nullptr;
};

// Room in `v` for `more` values, growing it as push_back would: each
// piece's values are read at once, not one reallocation at a time.
template <typename T>
void make_room(std::vector<T> &v, size_t more) {
    if (v.capacity() - v.size() < more)
        v.reserve(std::max(v.size() + more, 2 * v.capacity()));
}

struct TypedColumn {
    std::string name;
    Kind kind;
    std::vector<uint32_t> positions;
    std::vector<int64_t> dates;
    std::vector<ObjectId> ids;
    std::vector<TypedNumber> numbers;

    // Room for a piece's `values` of the column's kind at `positions`.
    void make_room_for(size_t values, size_t positions_in_piece) {
        make_room(positions, positions_in_piece);
        if (kind == Kind::Dates)
            make_room(dates, values);
        else if (kind == Kind::ObjectIds)
            make_room(ids, values);
        else
            make_room(numbers, values);
    }
};

template <typename T>
int compare_scalars(const T &a, const T &b) {
    return (b < a) - (a < b);
}

// As compare_values orders two numbers: an integer against a double by
// value, which a long double holds exactly for both.
int compare_numbers(const TypedNumber &a, const TypedNumber &b) {
    if (a.integral && b.integral)
        return compare_scalars(a.integer, b.integer);
    if (!a.integral && !b.integral)
        return compare_scalars(a.real, b.real);
    auto wide = [](const TypedNumber &n) {
        return n.integral ? static_cast<long double>(n.integer) : static_cast<long double>(n.real);
    };
    return compare_scalars(wide(a), wide(b));
}

// The scale the shortest text of k / 10^s (a double of a decimal codec)
// has: k's digits less its trailing zeros. Decimals of up to 15 digits
// read back as themselves, so that holds for them; past that, the text
// tells.
int64_t decimal_back_scale(double d, int64_t s) {
    double k = std::nearbyint(d * codec::power_of_ten(static_cast<uint8_t>(s)));
    if (!(std::fabs(k) < 1e15))
        return display_scale(shortest_text(d));
    auto digits = static_cast<int64_t>(k);
    int64_t scale = s;
    while (scale > 0 && digits % 10 == 0) {
        digits /= 10;
        scale--;
    }
    return scale;
}

// A stored double as Number::of makes it: a whole one is an integer.
TypedNumber stored_double(double d, int64_t s) {
    if (!std::isfinite(d))
        corrupt("a number that is not finite");
    TypedNumber n;
    constexpr double kTwo63 = 9223372036854775808.0;
    if (d == std::trunc(d) && d >= -kTwo63 && d < kTwo63) {
        n.integral = true;
        n.integer = static_cast<int64_t>(d);
    } else {
        n.real = d;
        n.back = decimal_back_scale(d, s);
    }
    n.scale = n.back;
    return n;
}

class Folder {
  public:
    bool add_stored(std::string_view bytes);
    bool add_appended(const BucketData &data);
    std::optional<FoldedBucket> finish(UnixMicros start, const std::string &time_field,
                                       bool full) const;
    // The data alone, for a tail or a packed bucket, whose control is not
    // the bucket's summary: building the summaries was about 8% of the
    // backend's CPU where every append writes a tail again.
    std::optional<std::string> finish_data(bool full) const;

  private:
    std::optional<std::vector<ColumnBlock>> blocks() const;
    TypedColumn *column(std::string_view name, Kind kind, size_t hint);
    TypedColumn *find(std::string_view name);
    bool read_numbers(Reader &block, uint64_t n, TypedColumn &c) const;
    std::optional<std::string> encode(const TypedColumn &c) const;
    Value summary(const TypedColumn &c, int direction) const;

    static constexpr size_t kIndexedColumns = 32;
    uint32_t count_ = 0;
    uint64_t size_ = 0;
    bool full_ = false;
    bool first_ = true;
    std::vector<TypedColumn> columns_;
    std::unordered_map<std::string, size_t> index_;  // past kIndexedColumns
};

// The column of that name, made when new; nullptr when it holds another
// kind. Pieces mostly list their columns in one order: the column at
// `hint` is tried first.
TypedColumn *Folder::column(std::string_view name, Kind kind, size_t hint) {
    TypedColumn *c =
        hint < columns_.size() && columns_[hint].name == name ? &columns_[hint] : find(name);
    if (c == nullptr) {
        if (!index_.empty())
            index_.emplace(std::string(name), columns_.size());
        columns_.push_back(TypedColumn{std::string(name), kind, {}, {}, {}, {}});
        c = &columns_.back();
    }
    return c->kind == kind ? c : nullptr;
}

// A few columns (a TSBS row has 12) are searched in place, which allocates
// nothing; past kIndexedColumns they are indexed by name, so that a piece
// of thousands of sparse columns is not searched once per column.
TypedColumn *Folder::find(std::string_view name) {
    if (columns_.size() <= kIndexedColumns) {
        for (TypedColumn &c : columns_)
            if (c.name == name)
                return &c;
        return nullptr;
    }
    if (index_.empty())
        for (size_t i = 0; i < columns_.size(); i++)
            index_.emplace(columns_[i].name, i);
    auto it = index_.find(std::string(name));
    return it == index_.end() ? nullptr : &columns_[it->second];
}

Kind kind_of(uint8_t codec) {
    switch (static_cast<Codec>(codec)) {
        case Codec::Dates:
        case Codec::PackedDates:
            return Kind::Dates;
        case Codec::ObjectIds:
        case Codec::PackedObjectIds:
            return Kind::ObjectIds;
        default:
            return Kind::Numbers;
    }
}

// A stored column of numbers after its display scales, if any; false for
// the codecs left to the values (XOR, tagged).
bool Folder::read_numbers(Reader &block, uint64_t n, TypedColumn &c) const {
    std::optional<DisplayScales> scales;
    if (block.peek() == static_cast<uint8_t>(Codec::Scaled)) {
        block.byte();
        scales = DisplayScales::read(block, n);
    }
    size_t from = c.numbers.size();
    auto codec = static_cast<Codec>(block.byte());
    if (codec == Codec::Integers || codec == Codec::PackedIntegerDeltas) {
        std::vector<int64_t> integers;
        integers.reserve(n);
        read_integer_column(block, codec, n, integers);
        for (int64_t i : integers)
            c.numbers.push_back(TypedNumber{true, i, 0, 0, 0, nullptr});
    } else if (codec == Codec::Decimals || codec == Codec::PackedDecimalDeltas ||
               codec == Codec::PackedDecimals) {
        int64_t s = block.peek();  // each begins with its scale
        std::vector<double> doubles;
        doubles.reserve(n);
        if (codec == Codec::Decimals) {
            codec::read_decimals(block, n, doubles);
        } else if (codec == Codec::PackedDecimalDeltas) {
            codec::read_packed_decimal_deltas(block, n, doubles);
        } else {
            codec::PackedDecimals packed = codec::read_packed_decimals(block, n);
            for (size_t i = 0; i < packed.size(); i++)
                doubles.push_back(packed.at(i));
        }
        for (double d : doubles)
            c.numbers.push_back(stored_double(d, s));
    } else {
        return false;
    }
    if (scales) {
        // As DisplayScales::apply shows number i.
        size_t next = 0;
        for (size_t i = 0; i < n; i++) {
            TypedNumber &number = c.numbers[from + i];
            while (next < scales->others.size() && scales->others[next].first < i)
                next++;
            number.scale = next < scales->others.size() && scales->others[next].first == i
                               ? scales->others[next].second
                               : std::max(number.back, scales->common);
            if (number.scale < number.back)
                corrupt("a display scale below the number's own");
        }
    }
    return true;
}

bool Folder::add_stored(std::string_view bytes) {
    Body b = open_body(bytes);
    if (b.version != 2)
        return false;
    if (first_)
        full_ = b.full;  // the bucket's own mark; its tails have none
    first_ = false;
    std::vector<std::string_view> seen;
    seen.reserve(b.columns);
    uint64_t densest = 0;
    for (uint64_t i = 0; i < b.columns; i++) {
        ColumnHead head = next_column(b);
        Reader block(head.block);
        std::vector<uint32_t> positions = read_positions(block, head.n, b.count, head.name);
        bool repeated = std::find(seen.begin(), seen.end(), head.name) != seen.end();
        if (head.n == 0 || block.at_end() || repeated)
            return false;
        seen.push_back(head.name);
        densest = std::max(densest, head.n);
        uint8_t codec = block.peek();
        TypedColumn *c = column(head.name, kind_of(codec), i);
        if (c == nullptr)
            return false;
        c->make_room_for(head.n, positions.size());
        if (c->kind == Kind::Dates) {
            if (codec == static_cast<uint8_t>(Codec::Dates)) {
                block.byte();
                codec::read_dates(block, head.n, c->dates);
            } else {
                block.byte();
                codec::read_packed_dates(block, head.n, c->dates);
            }
        } else if (c->kind == Kind::ObjectIds) {
            block.byte();
            if (codec == static_cast<uint8_t>(Codec::ObjectIds))
                codec::read_objectids(block, head.n, c->ids);
            else
                codec::read_packed_objectids(block, head.n, c->ids);
        } else if (!read_numbers(block, head.n, *c)) {
            return false;
        }
        if (!block.at_end())
            return false;
        for (uint32_t position : positions)
            c->positions.push_back(count_ + position);
    }
    if (!b.reader.at_end() || densest != b.count)
        return false;
    count_ += b.count;
    size_ += b.size;
    return true;
}

bool Folder::add_appended(const BucketData &data) {
    for (size_t i = 0; i < data.columns().size(); i++) {
        const BucketColumn &from = data.columns()[i];
        if (from.values.empty())
            return false;
        Value::Kind first = from.values.front().kind();
        Kind kind = first == Value::Kind::Date       ? Kind::Dates
                    : first == Value::Kind::ObjectId ? Kind::ObjectIds
                                                     : Kind::Numbers;
        TypedColumn *c = column(from.name, kind, i);
        if (c == nullptr)
            return false;
        c->make_room_for(from.values.size(), from.positions.size());
        for (const Value &v : from.values) {
            if (v.kind() != first)
                return false;
            if (kind == Kind::Dates) {
                c->dates.push_back(v.as_date());
            } else if (kind == Kind::ObjectIds) {
                c->ids.push_back(v.as_objectid());
            } else if (first != Value::Kind::Number) {
                return false;
            } else {
                const std::string &text = v.as_number().text;
                ExactNumber exact = v.as_number().exact();
                if (!exact.integer && !exact.real)
                    return false;
                TypedNumber n{exact.integer.has_value(),
                              exact.integer.value_or(0),
                              exact.real.value_or(0),
                              display_scale(text),
                              0,
                              &v};
                n.back = may_keep_zeros(text) ? read_back_scale(text, exact) : n.scale;
                c->numbers.push_back(n);
            }
        }
        for (uint32_t position : from.positions)
            c->positions.push_back(count_ + position);
    }
    count_ += data.count();
    size_ += data.size();
    return true;
}

// The column's block, as BucketData::encode writes it; nullopt for numbers
// it would write tagged.
std::optional<std::string> Folder::encode(const TypedColumn &c) const {
    Writer w;
    write_positions(w, c.positions, count_);
    if (c.kind == Kind::Dates) {
        write_date_column(w, c.dates);
    } else if (c.kind == Kind::ObjectIds) {
        write_objectid_column(w, c.ids);
    } else {
        NumberColumn numbers;
        numbers.doubles.reserve(c.numbers.size());
        numbers.integers.reserve(c.numbers.size());
        std::vector<std::pair<int64_t, int64_t>> scales;
        scales.reserve(c.numbers.size());
        for (const TypedNumber &n : c.numbers) {
            if (n.integral)
                numbers.add_integer(n.integer);
            else
                numbers.add_real(n.real);
            scales.emplace_back(n.scale, n.back);
        }
        if (!write_number_column(w, numbers, DisplayScales::of(scales)))
            return std::nullopt;
    }
    return w.take();
}

// The column's least (direction -1) or greatest (+1) value as decode gives
// it, the first of equal ones, as Bucket::summarise keeps it.
Value Folder::summary(const TypedColumn &c, int direction) const {
    size_t best = 0;
    if (c.kind == Kind::Dates) {
        for (size_t i = 1; i < c.dates.size(); i++)
            if (compare_scalars(c.dates[i], c.dates[best]) * direction > 0)
                best = i;
        return Value::date(c.dates[best]);
    }
    if (c.kind == Kind::ObjectIds) {
        for (size_t i = 1; i < c.ids.size(); i++)
            if (std::memcmp(c.ids[i].bytes.data(), c.ids[best].bytes.data(), ObjectId::kSize) *
                    direction >
                0)
                best = i;
        return Value::objectid(c.ids[best]);
    }
    for (size_t i = 1; i < c.numbers.size(); i++)
        if (compare_numbers(c.numbers[i], c.numbers[best]) * direction > 0)
            best = i;
    const TypedNumber &n = c.numbers[best];
    if (n.original != nullptr)
        return *n.original;
    Value v = n.integral ? integer_value(n.integer) : double_value(n.real);
    if (n.scale != n.back)
        v.as_number().text = with_scale(v.as_number().text, n.scale);
    return v;
}

// Each column encoded typed; nullopt when one cannot be.
std::optional<std::vector<ColumnBlock>> Folder::blocks() const {
    std::vector<ColumnBlock> blocks;
    blocks.reserve(columns_.size());
    for (const TypedColumn &c : columns_) {
        std::optional<std::string> block = encode(c);
        if (!block)
            return std::nullopt;
        blocks.push_back({c.name, c.positions.size(), std::move(*block)});
    }
    return blocks;
}

std::optional<std::string> Folder::finish_data(bool full) const {
    std::optional<std::vector<ColumnBlock>> encoded = blocks();
    if (!encoded)
        return std::nullopt;
    return write_bucket(count_, size_, full_ || full, *encoded);
}

std::optional<FoldedBucket> Folder::finish(UnixMicros start, const std::string &time_field,
                                           bool full) const {
    std::optional<std::string> data = finish_data(full);
    if (!data)
        return std::nullopt;
    Value min = Value::object();
    Value max = Value::object();
    for (const TypedColumn &c : columns_) {
        // As Bucket::control writes the time field.
        min.add(c.name, c.name == time_field ? Value::string(format_canonical_date(start))
                                             : summary(c, -1));
        Value latest = summary(c, +1);
        if (c.name == time_field && latest.is(Value::Kind::Date))
            latest = Value::string(format_canonical_date(latest.as_date()));
        max.add(c.name, std::move(latest));
    }
    FoldedBucket folded;
    folded.data = std::move(*data);
    folded.control = Value::object();
    folded.control.add("version", Value::number(static_cast<int64_t>(BucketData::kFormatVersion)));
    folded.control.add("min", std::move(min));
    folded.control.add("max", std::move(max));
    folded.control.add("count", Value::number(static_cast<int64_t>(count_)));
    return folded;
}

// The pieces, then `appended`, read typed; nullopt when one cannot be.
std::optional<Folder> folder_of(const std::vector<std::string_view> &stored,
                                const BucketData &appended) {
    Folder folder;
    for (std::string_view piece : stored)
        if (!folder.add_stored(piece))
            return std::nullopt;
    if (!folder.add_appended(appended))
        return std::nullopt;
    return folder;
}

}  // namespace

std::optional<FoldedBucket> fold_typed(const std::vector<std::string_view> &stored,
                                       const BucketData &appended, UnixMicros start,
                                       const std::string &time_field, bool full) {
    std::optional<Folder> folder = folder_of(stored, appended);
    return folder ? folder->finish(start, time_field, full) : std::nullopt;
}

std::optional<std::string> fold_typed_data(const std::vector<std::string_view> &stored,
                                           const BucketData &appended, bool full) {
    std::optional<Folder> folder = folder_of(stored, appended);
    return folder ? folder->finish_data(full) : std::nullopt;
}

}  // namespace tscoll
