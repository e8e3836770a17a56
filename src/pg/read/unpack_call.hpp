// The calls that unpack a bucket, as the planner writes them (plan/) and
// the functions (read/) and the unpack scan (nodes/unpack_scan.cpp) read
// them: the argument positions of each SQL function, and what the unpack
// scan keeps of its call. One place, so that neither side counts.
#pragma once

namespace tscoll::pg::unpack_call {

// Arguments every unpacking function starts with (sql/tscoll--*.sql).
enum Common : int { kId = 0, kMeta = 1, kData = 2, kTimeField = 3, kMetaField = 4 };

// tscoll._unpack(..., [lower, lower_strict, upper, upper_strict, [filters,
// filter_bounds]]).
enum Unpack : int {
    kUnpackWindow = 5,
    kUnpackArgsWithWindow = 9,
    kUnpackFilters = 9,
    kUnpackArgsWithFilters = 11,
};

// tscoll._unpack_fields(..., fields, lower, lower_strict, upper,
// upper_strict, [filters, filter_bounds]).
enum UnpackFields : int {
    kFields = 5,
    kFieldsWindow = 6,
    kFilters = 10,
    kFilterBounds = 11,
    kFieldsArgsWithFilters = 12,
};

// How _unpack_fields returns each field of its `fields` argument
// ("<kind><name>"): doc->>'f' as text, doc->'f' as jsonb, or for
// (doc->>'f')::float8 its numbers as float8 and its other values as text;
// or a typed field's column, by its TypedField letter (typed_fields.hpp).
enum FieldKind : char { kText = 't', kJsonb = 'j', kNumber = 'f', kNotNumber = 'o' };

// An aggregate of _unpack_groups is "<Float8Aggregate letter><field>" for
// (doc->>'field')::float8, or with this prefix for a float8 typed field's
// column: its numbers, other values left out as NULL.
constexpr char kNumbersOnly = '~';

// The Float8Aggregate letter of an aggregate spec.
inline char aggregate_letter(const char *spec) {
    return spec[0] == kNumbersOnly ? spec[1] : spec[0];
}
// The field of a field or aggregate spec, after its letters.
inline const char *spec_field(const char *spec) {
    return spec + (spec[0] == kNumbersOnly ? 2 : 1);
}

// tscoll._unpack_groups(..., unit, aggregates, lower, lower_strict, upper,
// upper_strict, [stride, origin, [zone]]).
enum UnpackGroups : int {
    kUnit = 5,
    kAggregates = 6,
    kGroupsWindow = 7,
    kGroupsStride = 11,
    kGroupsOrigin = 12,
    kGroupsZone = 13,
};

// The unpack scan's custom_private, by position: which unpacking (its
// index in the scan's table), the function and its input collation, the
// bucket table read, and each bucket's first rows only (a count, 0 for
// all; and whether the latest).
enum ScanPrivate : int {
    kUnpacking = 0,
    kFunction = 1,
    kCollation = 2,
    kBucketTable = 3,
    kFirstCount = 4,
    kFirstLatest = 5,
};

}  // namespace tscoll::pg::unpack_call
