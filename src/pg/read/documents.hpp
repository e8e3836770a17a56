// The view's documents of one bucket's measurements, built as jsonb from
// the bucket's columns: the keys are put in jsonb's order once per bucket
// and the meta field converted once, so that a document costs the
// conversion of its own values and not a parse of its tokens.
#pragma once

extern "C" {
#include "postgres.h"
#include "utils/jsonb.h"
}

#include <optional>
#include <string>
#include <vector>

#include "core/bucket_data.hpp"
#include "core/value.hpp"

namespace tscoll::pg {

class DocumentBuilder {
  public:
    // `bucket` and `meta` must outlive the builder.
    DocumentBuilder(const BucketData &bucket, const std::string &time_field,
                    const std::string &meta_field, const std::optional<Value> &meta);
    // The document of measurement `row`: its fields, the time field as its
    // canonical text, and the meta field. Rows must not decrease from one
    // call to the next.
    Jsonb *build(uint32_t row);

  private:
    struct Key {
        std::string name;
        const BucketColumn *column = nullptr;  // nullptr: the meta field
        size_t next = 0;                       // cursor into column->positions
        bool is_time = false;
    };
    std::vector<Key> keys_;  // in jsonb's order: shorter first, then bytewise
    JsonbValue meta_{};
    std::vector<JsonbPair> pairs_;
    std::string time_text_;
};

}  // namespace tscoll::pg
