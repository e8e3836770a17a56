// Conversions between jsonb and the core's Value. Every PostgreSQL call in
// them goes through pg_call: the Values they build have destructors.
#pragma once

extern "C" {
#include "postgres.h"
#include "utils/jsonb.h"
}

#include <string>

#include "core/value.hpp"

namespace tscoll::pg {

Value jsonb_to_value(Jsonb *jsonb);
// Dates become {"$date": "<canonical text>"}, ObjectIds 24 hex digits.
Jsonb *value_to_jsonb(const Value &value);
// A jsonb string of `s`, which must outlive the jsonb built with it.
JsonbValue string_value(const std::string &s);
// `value` as a JsonbValue for JsonbValueToJsonb, containers built with
// their keys in jsonb's order; strings point into `value`, which must
// outlive it.
JsonbValue jsonb_value_of(const Value &value);

}  // namespace tscoll::pg
