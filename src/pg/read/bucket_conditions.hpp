// What the planner's bucket conditions (plan/prune.cpp) share with the SQL
// functions that evaluate them when the query runs (bucket_conditions.cpp).
// Plain C-style code: PostgreSQL is called directly.
#pragma once

extern "C" {
#include "postgres.h"
#include "nodes/pg_list.h"
}

namespace tscoll::pg {

// The jsonb values whose ->> text is `text` (a List of Jsonb *): the string,
// and the number or boolean that jsonb prints as exactly `text`.
List *jsonb_spellings(const char *text);

}  // namespace tscoll::pg
