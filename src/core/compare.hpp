// MongoDB's order and sizes for measurement values: the type classes
// (null < number < string < object < array < objectid < boolean < date;
// doc/REFERENCE.md, Bucketing), comparison by value, and the length of a
// value's BSON encoding.
#pragma once

#include <cstddef>
#include <string_view>

#include "core/value.hpp"

namespace tscoll {

// The canonical type class: all numbers are one class, null its own.
int type_class(const Value &v);

// <0, 0, >0 in MongoDB's order (type class first, then by value).
int compare_values(const Value &a, const Value &b);

// Bytes of the value's BSON payload (without type byte and key).
size_t bson_value_size(const Value &v);

// Bytes of an object encoded as a BSON document, leaving out the top-level
// member `skip_key` (the meta field) when it is not empty.
size_t bson_document_size(const Value &object, std::string_view skip_key = {});

// Nesting depth: 0 for a scalar, 1 for a flat object or array.
size_t nesting_depth(const Value &v);

}  // namespace tscoll
