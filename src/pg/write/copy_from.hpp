// COPY <collection> [(columns)] FROM STDIN in text or CSV: read by tscoll
// itself rather than row by row through the view's triggers, with the
// documents parsed straight into core values (core/json_text) instead of
// into jsonb first. Anything else (binary, files and programs, WHERE,
// FORCE_NULL/FORCE_NOT_NULL, column defaults on the view, triggers of the
// user's own, a caller without INSERT on the whole view) takes PostgreSQL's
// path, with the same result.
#pragma once

extern "C" {
#include "postgres.h"
#include "nodes/plannodes.h"
#include "tcop/cmdtag.h"
}

namespace tscoll::pg {

// For the utility hook: runs the COPY and returns true when it is one this
// path takes.
bool copy_into_collection(PlannedStmt *pstmt, const char *query_string, QueryCompletion *qc);

}  // namespace tscoll::pg
