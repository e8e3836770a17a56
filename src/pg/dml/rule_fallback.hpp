// UPDATE and DELETE through a collection's view without the translation:
// what the view's rules call (see rule_fallback.cpp).
#pragma once

extern "C" {
#include "postgres.h"
#include "executor/execdesc.h"
}

namespace tscoll::pg {

// From the executor's finish hook: refuses a rule statement that matched
// a bucket in part.
void check_rule_matches(const QueryDesc *query);

// From _PG_init: forgets a failed statement's matches.
void register_rule_fallback();

}  // namespace tscoll::pg
