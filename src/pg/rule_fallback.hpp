// UPDATE and DELETE through a collection's view without the translation:
// what the view's rules call (see rule_fallback.cpp).
#pragma once

namespace tscoll::pg {

// From _PG_init: the executor hook that refuses a rule statement that
// matched a bucket in part, and the callbacks that forget a failed one's.
void register_rule_fallback();

}  // namespace tscoll::pg
