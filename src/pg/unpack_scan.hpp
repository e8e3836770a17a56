// The unpack scan: a custom scan node that reads each bucket the view
// unpacks, in place of PostgreSQL's Function Scan (SPEC §5).
#pragma once

extern "C" {
#include "postgres.h"
#include "nodes/plannodes.h"
}

namespace tscoll::pg {

void register_unpack_scan();

// Puts an unpack scan in place of every Function Scan of one of tscoll's
// unpacking functions in a planned read-only statement.
void use_unpack_scans(PlannedStmt *stmt, int cursor_options);

}  // namespace tscoll::pg
