// Measurement fields as the view's expressions see them: doc->>'f' and
// (doc->>'f')::float8, for the functions that read fields out of buckets.
#pragma once

extern "C" {
#include "postgres.h"
#include "fmgr.h"
}

#include <optional>
#include <string>
#include <vector>

#include "core/number.hpp"
#include "core/value.hpp"

namespace tscoll::pg {

std::string text_arg(FunctionCallInfo fcinfo, int n);

// A text[] argument; a NULL element is an error (22023).
std::vector<std::string> text_array_arg(FunctionCallInfo fcinfo, int n);

// What `doc->>'f'` gives for the value `v` of f: jsonb's text of it.
std::string field_text(const Value &v);

// The double that float8 reads from the text of `n`, when that text is
// what doc->>'f' gives too (no exponent, no "-0": see field_text).
std::optional<double> plain_double(const Number &n);

// (doc->>'f')::float8 for the value `v` of f; nullopt for JSON null. Text
// that float8 does not read fails as the cast fails (22P02).
std::optional<double> field_float8(const Value &v);

}  // namespace tscoll::pg
