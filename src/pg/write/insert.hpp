// The insert path's per-statement buffers (insert.cpp).
#pragma once

extern "C" {
#include "postgres.h"
#include "executor/execdesc.h"
}

namespace tscoll::pg {

// From the executor's start and end hooks: while a statement that inserts
// with RETURNING runs, the row trigger returns each measurement as stored.
void note_statement_start(const QueryDesc *query);
void note_statement_end(const QueryDesc *query);

// Discards gathered measurements when a (sub)transaction aborts.
void register_insert_callbacks();

}  // namespace tscoll::pg
