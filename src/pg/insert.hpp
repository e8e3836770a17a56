// The insert path's per-statement buffers (src/pg/insert.cpp).
#pragma once

namespace tscoll::pg {

// Discards gathered measurements when a (sub)transaction aborts.
void register_insert_callbacks();

}  // namespace tscoll::pg
