// UPDATE and DELETE through a collection's view (doc/REFERENCE.md §3.5,
// UPDATE; §3.6, DELETE): what the hooks (hooks.cpp) call at each stage of a
// statement.
#pragma once

extern "C" {
#include "postgres.h"
#include "executor/execdesc.h"
#include "nodes/parsenodes.h"
#include "nodes/plannodes.h"
}

#include "pg/storage/bucket_am.hpp"

namespace tscoll::pg {

// After parse analysis: an UPDATE or DELETE of a collection's view becomes
// a statement on its bucket table; INSERT ... ON CONFLICT, and UPDATE or
// DELETE in WITH, of a view are refused (0A000).
void translate_modification(Query *query);

// A translated statement's RETURNING reads measurements, which the bucket
// table's ModifyTable cannot return: it is taken off the query before
// PostgreSQL plans it, and planned above the ModifyTable after
// (nodes/returning.hpp). Zeros when there is none. A translated UPDATE or
// DELETE of a distributed collection without one gets tscoll's own
// instead (`counting`), which counts its measurements.
struct TranslatedReturning {
    Index view_rti;
    Index returned_rti;  // the range table entry its columns read
    List *returning;
    bool counting;
};
TranslatedReturning take_returning(Query *parse);
void finish_translated_plan(Query *parse, PlannedStmt *result, const TranslatedReturning &r);

// Before a translated statement runs: the catalog forgets the collection's
// series, and `counted` is set up for the access method to count (and
// return) measurements. False for any other statement.
bool start_translated_run(QueryDesc *query, ModificationCount *counted);

// A translated UPDATE or DELETE of a distributed collection counts by
// tscoll's own RETURNING list (dml/modify.cpp), which take_returning gives
// it before it is planned: while it runs, its rows go to the receiver
// start_counting_run returns (nullptr for any other statement) in place of
// the client's, and finish_counting_run makes their sum the statement's
// count.
DestReceiver *start_counting_run(QueryDesc *query);
void finish_counting_run(QueryDesc *query, DestReceiver *counter);

// Called while a translated statement's error is being raised (in a
// PG_CATCH, `context` not ErrorContext): a statement that waited for a
// fold of the tails it read finds them deleted as rows moved elsewhere
// (write/bucket_store.cpp), which PostgreSQL words as a row moved to
// another partition; that error is raised again in the collection's words,
// with its SQLSTATE (40001). Any other error is left to be re-thrown.
void reword_moved_rows_error(MemoryContext context);

// When the library is loaded after a session has parsed statements.
void parse_cached_statements_again();

}  // namespace tscoll::pg
