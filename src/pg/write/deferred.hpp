// Inserts deferred to the end of their transaction (doc/ARCHITECTURE.md,
// "Deferred inserts"). Inside a transaction block, a statement that only
// inserts into a collection leaves its measurements gathered, and the
// next statement that is not such an insert, a PREPARE or the commit
// writes them: a client that sends one row per statement in a
// transaction (JDBC's executeBatch, psycopg's executemany, a script of
// INSERTs) writes each bucket once, as one multi-row INSERT would. The
// buckets are the same (SPEC §4.1: batching does not change them), and
// so are the counters: each statement still counts a commit per bucket it
// appended to.
#pragma once

extern "C" {
#include "postgres.h"
#include "executor/execdesc.h"
#include "nodes/plannodes.h"
}

#include <cstdint>

namespace tscoll::pg {

// From the ExecutorStart hook, before the executor starts: a statement
// run by the client (not from a function or a utility command) that is
// not a deferrable insert first has the deferred measurements written,
// and its snapshot made to see them.
void before_statement_start(QueryDesc *query);
// From the ExecutorEnd hook.
void after_statement_end();
// From the ProcessUtility hook, around the command: the deferred
// measurements are written before any command but ROLLBACK.
void before_utility(const PlannedStmt *pstmt);
void after_utility();

// Whether the statement whose statement trigger runs leaves its
// measurements gathered.
bool statement_deferred();
// The statement running writes what was deferred, and its own
// measurements, when it ends (a measurement that might not fit an index).
void write_at_statement_end();
// The number of the client's statement running, which tags the
// measurements it gathers (Measurement::statement).
uint64_t statement_number();

void register_deferred_callbacks();

}  // namespace tscoll::pg
