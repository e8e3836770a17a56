// UPDATE ... RETURNING and DELETE ... RETURNING through a collection's view
// (doc/REFERENCE.md §3.7, UPDATE/DELETE ... RETURNING). The translated
// statement (dml/modify.cpp) changes bucket rows; RETURNING reads the
// measurements it changed, as the view shows them: a meta update's, with
// the new meta; a delete's, as they were. The bucket table's access method
// hands each changed bucket row to return_measurements(); a custom scan
// above the statement's ModifyTable (TscollReturning) runs it to the end,
// then returns those measurements through the user's RETURNING list.
#pragma once

extern "C" {
#include "postgres.h"
#include "executor/execdesc.h"
#include "executor/tuptable.h"
#include "nodes/execnodes.h"
#include "nodes/plannodes.h"
}

namespace tscoll::pg {

// The measurements a running statement returns.
struct ReturnedMeasurements;

// For a translated statement that returns measurements, their store, in
// the statement's memory; nullptr for any other statement. `view` is the
// collection's.
ReturnedMeasurements *start_returning(QueryDesc *query, Oid view);

// Adds the measurements of the bucket row `bucket` to `returned`: all of
// them, or, with `kept`, those the bucket row `kept` (its new version) no
// longer holds.
void return_measurements(ReturnedMeasurements *returned, TupleTableSlot *bucket,
                         TupleTableSlot *kept);

// Puts TscollReturning above the planned statement's ModifyTable, to
// return `returning` (the user's list, over the columns of the view at
// range table index `view_rti`). Raises 0A000 for what it cannot return.
void plan_returning(PlannedStmt *stmt, List *returning, Index view_rti, Oid view);

// From _PG_init.
void register_returning_scan();

}  // namespace tscoll::pg
