#include "pg/read/documents.hpp"

#include <algorithm>
#include <cstring>

#include "core/date.hpp"
#include "pg/guard.hpp"
#include "pg/types/jsonb_value.hpp"

namespace tscoll::pg {

namespace {

// jsonb's order of object keys (lengthCompareJsonbStringValue).
bool jsonb_key_less(const std::string &a, const std::string &b) {
    if (a.size() != b.size())
        return a.size() < b.size();
    return std::memcmp(a.data(), b.data(), a.size()) < 0;
}

}  // namespace

DocumentBuilder::DocumentBuilder(const BucketData &bucket, const std::string &time_field,
                                 const std::string &meta_field, const std::optional<Value> &meta) {
    if (meta && !meta_field.empty()) {
        keys_.push_back(Key{meta_field, nullptr, 0, false});
        meta_ = jsonb_value_of(*meta);
    }
    for (const BucketColumn &c : bucket.columns())
        keys_.push_back(Key{c.name, &c, 0, c.name == time_field});
    std::stable_sort(keys_.begin(), keys_.end(),
                     [](const Key &a, const Key &b) { return jsonb_key_less(a.name, b.name); });
    // A measurement never holds the meta field; were it there, the meta
    // would win, as in view_document().
    keys_.erase(std::unique(keys_.begin(), keys_.end(),
                            [](const Key &a, const Key &b) { return a.name == b.name; }),
                keys_.end());
    pairs_.reserve(keys_.size());
}

Jsonb *DocumentBuilder::build(uint32_t row) {
    pairs_.clear();
    for (Key &key : keys_) {
        JsonbPair pair;
        pair.key = string_value(key.name);
        pair.order = static_cast<uint32>(pairs_.size());
        if (key.column == nullptr) {
            pair.value = meta_;
        } else {
            const std::vector<uint32_t> &positions = key.column->positions;
            while (key.next < positions.size() && positions[key.next] < row)
                key.next++;
            if (key.next >= positions.size() || positions[key.next] != row)
                continue;
            const Value &v = key.column->values[key.next];
            if (key.is_time && v.is(Value::Kind::Date)) {
                time_text_ = format_canonical_date(v.as_date());
                pair.value = string_value(time_text_);
            } else {
                pair.value = jsonb_value_of(v);
            }
        }
        pairs_.push_back(pair);
    }
    JsonbValue object;
    object.type = jbvObject;
    object.val.object.nPairs = static_cast<int>(pairs_.size());
    object.val.object.pairs = pairs_.data();
    return pg_call([&] { return JsonbValueToJsonb(&object); });
}

}  // namespace tscoll::pg
