// Typed field columns (doc/REFERENCE.md, Typed fields) seen through the
// doc column: a query's reference to the view's column for field f of type
// T becomes the column's definition, tscoll._as_T(doc -> 'f') (or
// doc -> 'f' for jsonb), on the view's doc column. Every rewrite that
// knows doc -> 'f' (pruning, lazy unpacking, aggregation in buckets,
// UPDATE/DELETE translation) then applies to typed columns as well.
#pragma once

extern "C" {
#include "postgres.h"
#include "nodes/parsenodes.h"
}

namespace tscoll::pg {

// In `query`, the references to relation `rti` (a collection's view, at
// the query's level or from its sublinks) of the typed columns that
// `view_targetlist` defines after `doc_column`. False, leaving the query
// as it was, when the view has none; else the query's range table is a
// copy.
bool read_typed_columns_through_doc(Query *query, Index rti, AttrNumber doc_column,
                                    List *view_targetlist);

}  // namespace tscoll::pg
