// What the translation of UPDATE and DELETE (modify.cpp) and of DELETE
// with a condition on measurements (delete.cpp) share. Internal to dml/.
// Plain data and C-style tree surgery: PostgreSQL is called directly.
#pragma once

extern "C" {
#include "postgres.h"
#include "nodes/parsenodes.h"
#include "nodes/primnodes.h"
}

namespace tscoll::pg::dml {

// The collection's descriptor (catalog/collection.hpp) copied into the
// statement's memory: the translation (C-style tree surgery) calls
// PostgreSQL directly, and any such call may drop the cached descriptor.
struct Collection {
    Oid bucket_table;
    Oid owner;
    char *name;         // the view, as regclass text, for messages
    char *bucket_name;  // schema-qualified and quoted, for SQL
    char *time_field;
    char *meta_field;                                 // nullptr when none
    AttrNumber time_column, meta_column, doc_column;  // in the view; meta 0 when none
    AttrNumber bucket_meta, bucket_min_time, bucket_max_time;
    bool distributed;  // with Citus (CollectionInfo::distributed)
};

// The collection whose view `rte` is, or nullptr.
Collection *collection_of(RangeTblEntry *rte);

// Raises 0A000 with `message` and `hint`.
[[noreturn]] void refuse(const char *message, const char *hint);

// Columns of the view a query reads.
struct ColumnUse {
    Index view_rti;
    int depth;  // levels below the query the view belongs to
    Bitmapset *columns;
    bool whole_row;
    bool current_of;
};
ColumnUse columns_read(Node *node, Index view_rti);

// Moving an expression over the view onto the bucket table: the meta
// column becomes the bucket's meta, time and doc the unpacked
// measurement's.
struct ColumnMap {
    const Collection *c;
    Index view_rti;
    int depth;              // levels below the expression's root
    Index measurement_rti;  // the unpacked measurement, at the root level (0: none)
    Index bucket_rti;       // the bucket row ...
    int bucket_levels;      // ... this many levels above the root
};
Node *map_columns(Node *node, ColumnMap *map);

// tscoll._placeholder(n) marks where the translation puts conditions.
enum Placeholder { kMayMatch = 0, kAllMatch = 1, kMatches = 2, kReturned = 3 };
Oid placeholder_function();

// Moves `from`'s RETURNING onto `to` (nodes/returning.hpp).
void move_returning(Query *from, Index view_rti, Oid view, Query *to);

// The statement's target, the view, becomes the bucket table.
void retarget(Query *q, const Collection *c);

// DELETE FROM <view> (delete.cpp): onto the bucket table, as a DELETE of
// buckets or a MERGE that rewrites those matched in part.
void translate_delete(Query *q, const Collection *c);

}  // namespace tscoll::pg::dml
