// A collection view as a query reads it, and what the planning of reads
// shares between read_plan.cpp (lazy unpacking), prune.cpp (bucket
// pruning), points.cpp (last and first points) and read_aggregate.cpp
// (aggregation in buckets). Internal to plan/.
#pragma once

extern "C" {
#include "postgres.h"
#include "nodes/parsenodes.h"
#include "nodes/primnodes.h"
}

#include "pg/plan/comparison.hpp"

namespace tscoll::pg::reads {

// Where a collection's view sits in one query, as the rewriter expanded it
// into the range table: SELECT m.time, b.meta, m.doc FROM buckets b,
// LATERAL _unpack(...) m. The collection's own facts are its descriptor
// (catalog/collection.hpp).
struct CollectionRead {
    Query *query;  // the query that reads the view
    Index view_rti;
    Query *view;
    Index bucket_rti;  // in view->rtable
    Index unpack_rti;
    AttrNumber time_column;  // the view's columns (0: none)
    AttrNumber meta_column;
    AttrNumber doc_column;
    Oid bucket_table;
};

// The text of a non-null text constant, else nullptr.
const char *const_text(Node *node);

// schema.name, as the parser's name lists have it.
List *qualified(const char *schema, const char *name);

// Whether `node` is the view's `column`, at the reading query's level.
bool is_column(Node *node, const CollectionRead &read, AttrNumber column);

// The key of doc->>'key' or doc->'key' on the view's doc column, else nullptr.
const char *field_key(Node *node, const CollectionRead &read, Oid funcid);

// The key of tscoll._as_<type>(doc->'key'), a typed field's column read
// through doc (typed_columns.hpp), and in *kind its TypedField letter;
// else nullptr.
const char *typed_field_key(Node *node, const CollectionRead &read, char *kind);

// Whether `node` reads no column but the view's meta (and nothing volatile).
bool reads_only_meta(Node *node, const CollectionRead &read);

// `condition` on the bucket table aliased b, analysed, for the view's WHERE;
// each %s in it is the bucket table; $1 and $2 are timestamptz parameters,
// $3 an interval and $4 a timestamptz (the first `params` of them).
Node *analysed_bucket_condition(const CollectionRead &read, const char *condition, int params = 0);

// The value of a LIMIT or OFFSET that folds to a constant, else -1.
int64 constant_count(Node *node);

// Whether `funcid` is tscoll.<name> with `nargs` arguments.
bool is_tscoll_function(Oid funcid, const char *name, int nargs);

// tscoll.<name>(types), or InvalidOid in a database whose tscoll lacks it.
Oid tscoll_function(const char *name, int nargs, const Oid *types);

// The arguments of the view's _unpack call.
List *unpack_arguments(const CollectionRead &read);

// A text[] constant of String nodes.
Const *text_array(List *strings);

// The view's unpacking becomes `call`, which returns time, doc and then a
// column per name; the view gets a matching column each, after its own.
void replace_unpacking(const CollectionRead &read, FuncExpr *call, List *names, List *types,
                       List *collations);

// Whether the view now reads the partial aggregates of its buckets
// (read_aggregate.cpp).
bool aggregate_in_buckets(const CollectionRead &read);

// The bucket table's column `name` as the view's bucket row has it.
Node *bucket_column(const CollectionRead &read, const char *name);

// The latest time of a bucket row's measurements: its max_time, but a
// tail's max_time is a bound that appends do not move
// (catalog/collection.hpp) and its latest time is in its control. As SQL on
// the bucket row aliased `alias` of a collection whose time field is
// `time_field`, and on the view's bucket row: each row's control is read
// (whether it is a tail), a tail's latest time only from a tail's.
char *latest_time_sql(const char *alias, const char *time_field);
Node *latest_time(const CollectionRead &read);

// Bucket pruning (prune.cpp): the query's conditions on the view give
// conditions on bucket rows, added to the view's WHERE.
void add_bucket_conditions(const CollectionRead &read);
// A condition on bucket rows implied by `qual`, or nullptr.
Node *bucket_condition(const CollectionRead &read, Node *qual, bool within_or = false);
// `node` with the view's meta column read from the bucket row.
Node *meta_of_buckets(Node *node, CollectionRead *read);

// The time window of _unpack and _unpack_fields (read_plan.cpp): the
// measurements at or after (upper: at or before) `bound`.
List *window_from(Node *bound, bool upper);

// Whether the view of range table entry `rti` is a collection's; fills `read`
// (read_plan.cpp).
bool recognise(Query *query, Index rti, CollectionRead *read);

// Subqueries and CTEs that project a collection view, merged into `query`
// (subqueries.cpp).
void merge_view_subqueries(Query *query);

// Last and first points (points.cpp).
bool selects_from_view_alone(const CollectionRead &read);
bool selects_by_meta_only(const CollectionRead &read);
// Whether the view now reads only the latest measurement of each bucket.
bool read_last_points_only(const CollectionRead &read);
// The window in which the first points asked for are, else NIL.
List *read_first_points_only(CollectionRead read);

}  // namespace tscoll::pg::reads
