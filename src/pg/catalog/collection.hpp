// A collection's descriptor: its row of tscoll.collections and what
// follows from it, one per collection for every reader (the insert path,
// the access method, the planner, UPDATE/DELETE, the SQL functions). Read
// once per session and kept until a relcache invalidation of its view or
// bucket table (renames, owner and index changes, coll_mod, DROP) drops it.
#pragma once

extern "C" {
#include "postgres.h"
#include "datatype/timestamp.h"
#include "nodes/parsenodes.h"
#include "utils/jsonb.h"
}

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tscoll::pg {

struct CollectionInfo {
    Oid view = InvalidOid;
    Oid bucket_table = InvalidOid;
    Oid owner = InvalidOid;
    std::string view_name;    // as regclass prints it in the caller's path, for messages
    std::string bucket_name;  // schema-qualified, for queries
    std::string time_field;
    std::string meta_field;  // empty when none
    int64_t max_span_seconds = 0;
    int64_t rounding_seconds = 0;
    bool reopen_index = false;  // an index leads with (meta, min_time) or min_time
    // The tables of its rollups' stored states, by oid: writers lock them
    // (write/rollup_notes.hpp).
    std::vector<Oid> rollup_storages;
    // Attribute numbers in the view (meta 0 when none) and in the bucket
    // table; a change of either relation drops the descriptor.
    AttrNumber view_time_column = 0, view_meta_column = 0, view_doc_column = 0;
    AttrNumber bucket_meta_column = 0, bucket_min_time_column = 0, bucket_max_time_column = 0;
    // The shard key of a collection distributed with Citus (0 otherwise):
    // the bucket's series hash, as its _id carries it (ObjectId::series_hash).
    AttrNumber bucket_series_hash_column = 0;
    bool distributed() const { return bucket_series_hash_column != 0; }
};

// The collection whose view is `view`; throws (42P01) when there is none.
CollectionInfo lookup_collection(Oid view);
// The same, nullopt when `view` is not a collection's view.
std::optional<CollectionInfo> find_collection(Oid view);
// The collection whose bucket table is `bucket_table`, or nullopt (also
// while tscoll.collections does not know it yet, as during a restore).
std::optional<CollectionInfo> find_collection_of_bucket_table(Oid bucket_table);

// Raises 42501 unless the current user holds `mode` on the collection's view.
void check_view_privilege(const CollectionInfo &info, AclMode mode);

// control.<bound>.<field> as a timestamptz: what the bucket table's
// generated min_time and max_time hold (tscoll._control_time). A tail's
// max_time is its control.tail.until, its bucket's start plus the span
// when it was written: a bound that no append moves, so that a tail
// written again in place keeps its index entries (a HOT update), and that
// keeps max_time - min_time within the span, as pruning needs. Its latest
// time is bound "latest" (control.max). Raises 22023 when it is not
// a date in the canonical form, 22008 out of range.
TimestampTz control_time(Jsonb *control, const char *bound, const char *field);

}  // namespace tscoll::pg
