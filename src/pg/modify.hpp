// UPDATE and DELETE through a collection's view (SPEC §6).
#pragma once

namespace tscoll::pg {

// From _PG_init: the parse-analysis, planner and executor hooks.
void register_modify_hooks();

}  // namespace tscoll::pg
