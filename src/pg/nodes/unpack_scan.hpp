// The unpack scan: a custom scan node that reads each bucket the view
// unpacks, in place of PostgreSQL's Function Scan (doc/REFERENCE.md §6,
// Custom Scan (TscollUnpack)).
#pragma once

extern "C" {
#include "postgres.h"
#include "nodes/plannodes.h"
}

namespace tscoll::pg {

void register_unpack_scan();

// Puts an unpack scan in place of every Function Scan of one of tscoll's
// unpacking functions in a planned read-only statement.
// Returns whether the statement may use them (a read-only statement, not
// for a scrolling cursor).
bool use_unpack_scans(PlannedStmt *stmt, int cursor_options);

// The bucket table that `plan` reads when it is an unpack scan of _unpack
// or _unpack_fields, whose column 1 is each measurement's time; otherwise
// InvalidOid.
Oid measurement_unpack_source(const Plan *plan);

// Has the unpack scan `plan` (of measurement_unpack_source) return only
// each bucket's `count` earliest measurements (latest with `latest`) and
// those tied with them. False, and nothing changed, when the scan filters
// its rows: then the rows wanted may come after.
bool keep_first_rows(Plan *plan, int count, bool latest);

}  // namespace tscoll::pg
