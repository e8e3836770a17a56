// UPDATE and DELETE through a collection's view without the translation:
// what the view's rules call (see rule_fallback.cpp).
#pragma once

extern "C" {
#include "postgres.h"
#include "executor/execdesc.h"
}

namespace tscoll::pg {

// From the executor's hooks: how deep statements nest, and, when a rule
// statement finishes, its refusal if it matched a bucket in part or read
// more than the collection.
void note_executor_start();
void note_executor_end();
void check_rule_matches(const QueryDesc *query);

// From _PG_init: forgets a failed statement's matches.
void register_rule_fallback();

}  // namespace tscoll::pg
