// UPDATE and DELETE through a collection's view without the translation:
// what the view's rules call (see rule_fallback.cpp).
#pragma once

namespace tscoll::pg {

// From _PG_init: forgets a failed statement's matches.
void register_rule_fallback();

}  // namespace tscoll::pg
