// Reading and writing bucket rows and their tails for the insert path,
// through SPI, as the bucket table's owner and with the latest snapshot: a
// bucket is a shared container, so appending to it must see every committed
// measurement, in any isolation level. Rows are locked with SKIP LOCKED: a
// bucket another transaction is writing is passed over, never waited for
// (doc/REFERENCE.md, Bucketing). A stored bucket is read as its state,
// which the session caches (doc/ARCHITECTURE.md, "Tails").
#pragma once

extern "C" {
#include "postgres.h"
#include "nodes/parsenodes.h"
#include "storage/itemptr.h"
#include "utils/jsonb.h"
}

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/bucket.hpp"
#include "pg/write/bucket_rows.hpp"
#include "pg/write/encode_threads.hpp"
#include "pg/storage/bucket_am.hpp"
#include "pg/catalog/catalog.hpp"
#include "pg/catalog/collection.hpp"

namespace tscoll::pg {

// Connects to SPI and acts as the bucket table's owner until finish(): the
// caller's privilege on the view is what counts (doc/REFERENCE.md,
// Privileges), the bucket table is then read and written with its owner's
// rights, and tscoll's SQL resolves names in pg_catalog alone. An error
// restores both.
class OwnerSession {
  public:
    explicit OwnerSession(const CollectionInfo &info);
    void finish();

  private:
    Oid saved_user_ = InvalidOid;
    int saved_security_ = 0;
    int search_path_level_ = 0;
};

// A bucket row's data and control (or any value as jsonb), built in
// `context`.
Datum bytea_datum(const std::string &bytes, MemoryContext context);
Jsonb *control_jsonb(const Value &control, MemoryContext context);

// A bucket row's data; errors name the bucket (XX001, doc/REFERENCE.md §5,
// Errors).
// `wanted` and `window` as BucketData::decode has them.
BucketData decode_bucket(const ObjectId &id, bytea *data,
                         const std::vector<std::string> *wanted = nullptr,
                         const std::optional<BucketData::TimeWindow> &window = std::nullopt);

// The same, for BucketData::decode_float8.
Float8Columns decode_bucket_float8(const ObjectId &id, bytea *data, const std::string &time_field,
                                   const std::vector<std::string> &fields);

// A stored bucket, its tails included, as the rollover rules see it.
struct StoredBucket {
    ObjectId id;
    BucketState state;
    uint32_t tails = 0;          // tail rows
    int64_t next_seq = 1;        // the seq of the next tail
    uint64_t stored_bytes = 0;   // data bytes of the row and its tails
    std::string tail_rows;       // the row versions (ctid, xmin) of its first tails, in order
    uint32_t tail_versions = 0;  // how many tails tail_rows holds (tails, unless some
                                 // were counted from the shared catalog)
    std::string row;             // the bucket row's version
    std::string latest_tail;     // the version of its latest tail, when known (or "")
    uint64_t chain = 0;          // of the series' catalog entry it agrees with
};

// A tail row of a bucket, as a fold or a merge reads it.
struct StoredTail {
    ObjectId id;
    int64_t seq;
    int64_t first;  // the seq of its first append
    uint32_t count;
    UnixMicros latest;
    std::string data;
    std::string version;  // ctid::text || xmin
};

// The open bucket `id` as this session's writes left it, for the shared
// catalog (zeros when the session does not know it).
catalog::OpenSummary summary_of(Oid bucket_table, const ObjectId &id);
// Records that the session's state of bucket `id` agrees with the series'
// catalog entry `chain` (what store_series returned).
void remember_chain(Oid bucket_table, const ObjectId &id, uint64_t chain);
// Forgets every bucket state the session keeps: a (sub)transaction that
// aborts takes back tails the states count, whose seqs other writers then
// use again.
void forget_bucket_states();

// The shard key of a distributed collection's new buckets of a series
// (ObjectId::series_hash): a hash of its series key, so that a series'
// buckets share a shard.
int32_t series_hash_of(const std::string &series_key);

class BucketStore {
  public:
    // Acts as the bucket table's owner until finish(), which inserts the
    // new rows (buckets and tails) in one statement.
    explicit BucketStore(const CollectionInfo &info);
    void finish();

    // The bucket of the series `meta` (nullptr: no meta) with its tails,
    // its row locked; nullopt when it is gone, of another series now,
    // locked by another transaction or closed for good.
    // `summary`, asked once the bucket is locked, gives the bucket as the
    // shared catalog knows it: a cached state that reached it reads no
    // tail, nor one behind it by tails that added no field to the schema.
    std::optional<StoredBucket> load(const ObjectId &id, Jsonb *meta,
                                     const std::function<catalog::OpenSummary()> &summary);
    // Buckets of the series that could hold a measurement at `t`, latest
    // first (needs info.reopen_index).
    std::vector<catalog::BucketRef> reopen_candidates(Jsonb *meta, UnixMicros t);
    void insert(const Bucket &bucket, Jsonb *meta);
    // The same, with the bucket encoded already (encode_threads.hpp).
    void insert(const Bucket &bucket, Jsonb *meta, EncodedBucket encoded);
    // The tails of a loaded bucket, in order, locked for a fold or a merge;
    // nullopt when one is locked by another transaction or changed since
    // load().
    std::optional<std::vector<StoredTail>> load_tails(const StoredBucket &stored, Jsonb *meta);
    // Writes the bucket's row again: its data and its tails' (`tails`, as
    // load_tails gave them) with `appended` after them, full when `full`
    // or already, the tails deleted. Typed where the columns allow
    // (core/bucket_fold.hpp), through values otherwise: the same bytes.
    void rewrite(const StoredBucket &stored, const std::vector<StoredTail> &tails,
                 const BucketData &appended, bool full, Jsonb *meta);
    // Writes the tails from `tails[first]` on, with `appended` after them,
    // as one tail (core::first_tail_to_merge). `latest` is the latest time
    // of `appended`.
    void merge_tails(const StoredBucket &stored, const std::vector<StoredTail> &tails, size_t first,
                     const BucketData &appended, UnixMicros latest, Jsonb *meta);
    // Appends `data` to the stored bucket `bucket` as its tail `ref.seq`.
    // `appended` is the bucket as the tail leaves it (its state with the
    // tail's measurements), for the session's cache.
    void insert_tail(const StoredBucket &appended, const BucketData &data, UnixMicros latest,
                     Jsonb *meta);
    // The same, written into the bucket's latest tail in place when it
    // holds few enough measurements: the tail takes the seq, keeps its
    // row's max_time (a bound), and so its index entries when its page has
    // room (a HOT update). False, with nothing written, when it cannot:
    // no such tail, a tail being changed or locked by another transaction
    // (not waited for), a page without room for the tail's new version,
    // or a transaction snapshot (REPEATABLE READ).
    bool append_in_place(const StoredBucket &appended, const BucketData &data, UnixMicros latest,
                         Jsonb *meta);
    // A tail that appends are written into in place holds at most this
    // many measurements: writing it again costs its size in WAL.
    static constexpr uint32_t kMaxInPlaceCount = 16;
    // A tail of `count` measurements takes the next append of as many in
    // place: appends of that size grow their tails where they are.
    static constexpr bool grows_in_place(uint32_t count) { return 2 * count <= kMaxInPlaceCount; }

  private:
    bool in_transaction_snapshot(const ObjectId &id);
    uint64 write(const char *query, int nargs, Oid *types, Datum *values, const char *nulls);
    // `growing`: a tail that appends will be written into, placed with
    // room for it (insert_rows_directly).
    void insert_row(const ObjectId &id, Jsonb *meta, Jsonb *control, const std::string &data,
                    StoredBucket cached, bool growing);
    void insert_new_rows();
    bool insert_new_rows_directly();
    void remember_new_row(StoredBucket &cached, std::string version);
    // Runs `write`; PostgreSQL's error for an index entry too large becomes
    // tscoll's 54000 naming the collection and the meta field.
    template <typename Write>
    auto guarding_index_size(Write write) -> decltype(write());
    // A bucket row's columns that load() reads, the row locked.
    struct LockedRow {
        UnixMicros min_time;
        Datum data;
        bool closed;  // control.closed
        std::string version;
    };
    std::optional<LockedRow> lock_row(const ObjectId &id, Jsonb *meta);
    // A tail as tails_from reads it; `data` is valid for the flush.
    struct TailRow {
        ObjectId id;
        int64_t seq;
        int64_t first;  // the seq of its first append
        int64_t count;
        UnixMicros latest;
        UnixMicros bound;  // its max_time
        Datum data;
        std::string version;
    };
    std::vector<TailRow> tails_from(const ObjectId &id, UnixMicros min_time, Jsonb *meta,
                                    int64_t from_seq, TailReading reading);
    void note_replaced_row(const std::string &row);
    void delete_folded_tails(const ObjectId &id, UnixMicros start, int64_t from_seq, uint32_t tails,
                             Jsonb *meta);
    void write_row(const ObjectId &id, const std::string &data, const Value &control,
                   const BucketState &state, const StoredBucket &stored, Jsonb *meta);
    static TailRow tail_row(const DirectTail &read);
    std::optional<TailRow> tail_at(const StoredBucket &stored, int64_t seq, Jsonb *meta);
    std::string update_row(const ObjectId &id, const std::string &version, const Value *control,
                           const std::string *data);
    // The same without a query, waiting for a concurrent writer of the row
    // when `wait`; nullopt when not written (the table needs the query,
    // `version` is not the latest, or without `wait` another transaction
    // holds the row).
    std::optional<std::string> update_row_without_query(const ObjectId &id,
                                                        const std::string &version,
                                                        const Value *control,
                                                        const std::string *data, bool wait);
    std::string tail_data(const ObjectId &id, const std::vector<std::string_view> &pieces,
                          const BucketData &appended) const;
    template <typename Read>
    auto naming_stored(const ObjectId &id, Read read) const -> decltype(read());
    void delete_shard_rows(int32_t series_hash, const std::vector<ItemPointerData> &rows);
    std::string shard_condition(int param) const;
    // Enough of it for the bucket's state (BucketData::outline).
    BucketOutline outline_stored(const ObjectId &id, Datum data) const;
    uint64 run_tails(const char *select, const char *rest, const ObjectId &id, UnixMicros min_time,
                     Jsonb *meta, int64_t from_seq);
    Oid objectid_type() const;
    // The end of the span of a bucket starting at `start` (a tail's until).
    UnixMicros span_end(UnixMicros start) const;

    const CollectionInfo &info_;
    TrustedBucketWrites trusted_;
    OwnerSession owner_;
    MemoryContext row_context_ = nullptr;
    // Rows to insert when the store finishes, built in new_rows_context_.
    struct NewRows {
        std::vector<Datum> ids, metas, controls, data;
        std::vector<bool> meta_nulls;
        std::vector<char> growing;  // as bools
        // What the session caches once the row's version is known.
        std::vector<StoredBucket> cached;
    };
    NewRows new_rows_;
    MemoryContext new_rows_context_ = nullptr;
};

}  // namespace tscoll::pg
