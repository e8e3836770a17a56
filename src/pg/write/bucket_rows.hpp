// Bucket table rows read, locked and written without planning and running
// a query, as logical replication applies changes: on single-row appends,
// a statement's executor start and end cost more than its row
// (doc/ARCHITECTURE.md, "Tails", Writing). PostgreSQL code on plain data:
// call it through pg_call (guard.hpp). The reads and writes answer "the
// query is needed" (`*direct` false, nullptr or -1) for a bucket table
// with triggers, rules, row security or columns of its own, which
// BucketStore then reads or writes by SPI.
#pragma once

extern "C" {
#include "postgres.h"
#include "access/tupdesc.h"
#include "datatype/timestamp.h"
#include "storage/itemptr.h"
#include "utils/jsonb.h"
#include "utils/rel.h"
}

#include <optional>
#include <string>

namespace tscoll::pg {

// A locked bucket row's columns that BucketStore::load reads.
struct DirectRow {
    TimestampTz min_time;
    Datum data;
    bool closed;
    char *version;  // `ctid::text || xmin`, as the queries spell it
};

// How BucketStore reads tails: with their data or only their row
// versions, and whether each is locked (FOR UPDATE SKIP LOCKED).
struct TailReading {
    bool data;
    bool lock;
};

// A tail read by read_tails_directly, in the caller's memory context.
struct DirectTail {
    int64 seq;
    int64 first;         // the seq of its first append (seq, unless appended to in place)
    int64 count;         // control.count
    TimestampTz latest;  // control.max of the time field
    TimestampTz bound;   // its max_time (control.tail.until, or its latest)
    Datum id;            // a copy
    Datum data;          // detoasted, or 0 when not read
    char *version;       // as in DirectRow
};

// The generated columns of a bucket table as a writer computes them: each
// control.<bound>.<field> as tscoll._control_time reads it (min_time and
// max_time), or none known (count -1): some other expression generates a
// column. Plain data, passed into PostgreSQL code (pg_call).
constexpr int kMaxGeneratedTimes = 2;
struct GeneratedTimes {
    int count;
    AttrNumber column[kMaxGeneratedTimes];
    const char *bound[kMaxGeneratedTimes];
    const char *field[kMaxGeneratedTimes];
};

// Whether a bucket table's rows can be inserted without the executor: no
// trigger, rule or row security, and its columns _id, meta, control and
// data followed by generated ones only (a column added by hand may have a
// default, which only an INSERT fills in).
bool inserts_directly(Relation rel);

bool lock_row_directly(Oid bucket_table, Datum id, Jsonb *meta, bool *direct, DirectRow *row);
char **insert_rows_directly(Oid bucket_table, const GeneratedTimes *times, int n, const Datum *ids,
                            const Datum *metas, const bool *meta_nulls, const Datum *controls,
                            const Datum *data, const bool *growing);
char *update_row_directly(Oid bucket_table, const GeneratedTimes *times, Datum id,
                          ItemPointerData version, Datum control, Datum data, bool wait, bool *hot);
int read_tails_directly(Oid bucket_table, Jsonb *meta, TimestampTz min_time, const char *bucket,
                        const char *time_field, int64 from_seq, TailReading reading,
                        DirectTail **tails);
bool read_tail_version_directly(Oid bucket_table, ItemPointerData version, const char *bucket,
                                const char *time_field, int64 seq, DirectTail *tail);
int generated_expressions(Oid bucket_table, AttrNumber *columns, char **expressions, int max);
bool parse_control_time(const char *expression, char **bound, char **field);

// The ctid of a row version as the queries spell it.
std::optional<ItemPointerData> version_tid(const std::string &version);

}  // namespace tscoll::pg
