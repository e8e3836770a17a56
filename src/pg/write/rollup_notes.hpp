// Writers note the buckets of a collection's rollups they change
// (doc/ARCHITECTURE.md, "Rollups"): a rollup stores the states of its
// buckets as of its last refresh, and reads compute from the source the
// buckets noted as changed since.
#pragma once

extern "C" {
#include "postgres.h"
#include "datatype/timestamp.h"
#include "nodes/parsenodes.h"
}

#include <vector>

#include "pg/catalog/collection.hpp"

namespace tscoll::pg {

// Notes, for each rollup of the collection `view`, its buckets that hold a
// time in [lo[i], hi[i]] for some i and are not noted yet. Takes each
// rollup's table of states in ROW EXCLUSIVE mode first, until the
// transaction ends, and looks for notes with the latest snapshot: a
// refresh (SHARE mode) cannot clear a note this writer relies on before it
// commits, and one that committed before is seen.
void note_rollup_changes(Oid view, const std::vector<TimestampTz> &lo,
                         const std::vector<TimestampTz> &hi);

// The same for the measurements' times of one write.
void note_rollup_times(Oid view, std::vector<TimestampTz> times);

// Before a write to the collection's buckets: takes its bucket table, then
// its rollups' tables, in ROW EXCLUSIVE mode (the order every writer and
// the TTL pass follow), with `info`'s rollups read again once the bucket
// table is held. Whether the collection has rollups.
bool lock_rollups_for_write(CollectionInfo &info);

// The access method's part: whether an UPDATE or DELETE of a row of
// `bucket_table` is to be noted (not for tscoll's own writers, which note
// what they insert by the measurements' times, nor for TTL expiry, which
// rollups outlive, nor without rollups), and the changed row's times,
// noted when the statement finishes (flush_rollup_notes, from ExecutorFinish and
// ProcessUtility, and before a commit or PREPARE).
bool tracks_bucket_rows(Oid bucket_table);
void note_bucket_row(Oid bucket_table, TimestampTz lo, TimestampTz hi);
void flush_rollup_notes();
void register_rollup_note_callbacks();
// Before a TRUNCATE: the buckets of the rows of the bucket tables it names.
void note_truncation(const TruncateStmt *statement);

}  // namespace tscoll::pg
