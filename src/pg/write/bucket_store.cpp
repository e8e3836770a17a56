#include "pg/write/bucket_store.hpp"
#include "pg/write/bucket_rows.hpp"

#include "core/bucket_fold.hpp"

extern "C" {
#include "catalog/pg_type_d.h"
#include "common/hashfn.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "access/detoast.h"
#include "access/stratnum.h"
#include "utils/fmgrprotos.h"
#include "utils/jsonb.h"
#include "access/table.h"
#include "access/transam.h"
#include "storage/lwlock.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "utils/rel.h"
#include "utils/timestamp.h"
#include "storage/itemptr.h"
}

#include <algorithm>
#include <cstdio>
#include <functional>
#include <unordered_map>

#include "core/error.hpp"
#include "pg/guard.hpp"
#include "pg/storage/reclaim.hpp"
#include "pg/types/jsonb_value.hpp"
#include "pg/pg_time.hpp"
#include "pg/search_path.hpp"

namespace tscoll::pg {

namespace {

constexpr int kMaxReopenCandidates = 8;

// The insert path's SPI plans, kept for the session: a single-row INSERT
// would otherwise parse and plan each of its queries again. PostgreSQL
// revalidates a kept plan when what it reads changes. Keyed by the query's
// text, which names the bucket table.
std::unordered_map<std::string, SPIPlanPtr> plans;

SPIPlanPtr prepared(const char *query, int nargs, Oid *types) {
    if (auto it = plans.find(query); it != plans.end())
        return it->second;
    SPIPlanPtr plan = pg_call([&] {
        SPIPlanPtr p = SPI_prepare(query, nargs, types);
        if (p == nullptr)
            elog(ERROR, "SPI_prepare failed for \"%s\": %s", query,
                 SPI_result_code_string(SPI_result));
        if (SPI_keepplan(p) != 0)
            elog(ERROR, "SPI_keepplan failed for \"%s\"", query);
        return p;
    });
    plans.emplace(query, plan);
    return plan;
}

// Runs a query with the latest snapshot; returns the number of rows.
uint64 run(const char *query, int nargs, Oid *types, Datum *values, const char *nulls, int limit) {
    SPIPlanPtr plan = prepared(query, nargs, types);
    return pg_call([&] {
        int rc = SPI_execute_snapshot(plan, values, nulls, GetLatestSnapshot(), InvalidSnapshot,
                                      false, false, limit);
        if (rc < 0)
            elog(ERROR, "SPI_execute_snapshot failed for \"%s\": %s", query,
                 SPI_result_code_string(rc));
        return SPI_processed;
    });
}

// A column as text (nullopt for NULL): the output function may ereport.
std::optional<std::string> column_text(HeapTuple row, TupleDesc desc, int attnum) {
    char *text = pg_call([&] { return SPI_getvalue(row, desc, attnum); });
    if (text == nullptr)
        return std::nullopt;
    return std::string(text);
}

// A row version (ctid::text || xmin, as the queries spell it) from the
// columns ctid, xmin at `attnum`: Citus refuses that expression in a
// RETURNING clause, which must be immutable.
std::string returned_version(HeapTuple row, TupleDesc desc, int attnum) {
    return column_text(row, desc, attnum).value_or("") +
           column_text(row, desc, attnum + 1).value_or("");
}

Datum objectid_datum(const ObjectId &id, MemoryContext context = CurrentMemoryContext) {
    auto *copy = static_cast<ObjectId *>(
        pg_call([&] { return MemoryContextAlloc(context, sizeof(ObjectId)); }));
    *copy = id;
    return PointerGetDatum(copy);
}

}  // namespace

Datum bytea_datum(const std::string &bytes, MemoryContext context) {
    auto *result = static_cast<bytea *>(
        pg_call([&] { return MemoryContextAlloc(context, VARHDRSZ + bytes.size()); }));
    SET_VARSIZE(result, VARHDRSZ + bytes.size());
    memcpy(VARDATA(result), bytes.data(), bytes.size());
    return PointerGetDatum(result);
}

// control as jsonb, built in `context`.
Jsonb *control_jsonb(const Value &control, MemoryContext context) {
    MemoryContext old = MemoryContextSwitchTo(context);
    Jsonb *result = nullptr;
    try {
        result = value_to_jsonb(control);
    } catch (...) {
        MemoryContextSwitchTo(old);
        throw;
    }
    MemoryContextSwitchTo(old);
    return result;
}

namespace {

// Runs `decode`, naming the bucket in its errors (XX001, doc/REFERENCE.md
// §5, Errors).
template <typename Decode>
auto naming_bucket(const ObjectId &id, Decode decode) -> decltype(decode()) {
    try {
        return decode();
    } catch (const Error &e) {
        throw Error(e.code(), e.what(), "Bucket _id " + id.to_hex() + ".",
                    "Restore the bucket from a backup, or delete it from the bucket table.");
    }
}

std::string_view bytes_of(bytea *data) {
    return std::string_view(VARDATA_ANY(data), VARSIZE_ANY_EXHDR(data));
}

}  // namespace

BucketData decode_bucket(const ObjectId &id, bytea *data, const std::vector<std::string> *wanted,
                         const std::optional<BucketData::TimeWindow> &window) {
    return naming_bucket(id, [&] { return BucketData::decode(bytes_of(data), wanted, window); });
}

Float8Columns decode_bucket_float8(const ObjectId &id, bytea *data, const std::string &time_field,
                                   const std::vector<std::string> &fields) {
    return naming_bucket(
        id, [&] { return BucketData::decode_float8(bytes_of(data), time_field, fields); });
}

OwnerSession::OwnerSession(const CollectionInfo &info) {
    pg_call([&] {
        if (SPI_connect() != SPI_OK_CONNECT)
            elog(ERROR, "SPI_connect failed");
        GetUserIdAndSecContext(&saved_user_, &saved_security_);
        SetUserIdAndSecContext(info.owner, saved_security_ | SECURITY_LOCAL_USERID_CHANGE);
        search_path_level_ = push_catalog_search_path();
    });
}

void OwnerSession::finish() {
    pg_call([&] {
        pop_search_path(search_path_level_);
        SetUserIdAndSecContext(saved_user_, saved_security_);
        SPI_finish();
    });
}

// INSERT on the view was checked by the executor (or by insert_many).
BucketStore::BucketStore(const CollectionInfo &info) : info_(info), owner_(info) {
    if (!info.distributed())
        pg_call([&] { reclaim_folded_rows(info.bucket_table); });
    row_context_ = pg_call([] {
        return AllocSetContextCreate(CurrentMemoryContext, "tscoll bucket row",
                                     ALLOCSET_DEFAULT_SIZES);
    });
    new_rows_context_ = pg_call([] {
        return AllocSetContextCreate(CurrentMemoryContext, "tscoll new bucket rows",
                                     ALLOCSET_DEFAULT_SIZES);
    });
}

void BucketStore::finish() {
    insert_new_rows();
    owner_.finish();
}

Oid BucketStore::objectid_type() const {
    return pg_call([&] { return get_atttype(info_.bucket_table, 1); });
}

namespace {

// The states of stored buckets this session loaded, so that its next
// append to one decodes only the tails written since, not the bucket. An
// entry holds while the bucket's row and the tails it counted are the row
// versions they were (ctid and xmin: a fold or a modification changes
// them). Emptied at kMaxCachedStates entries, and when a (sub)transaction
// aborts: its tails are gone, and their seqs go to other writers' tails.
// The session's writes update it as they go (their row versions come
// back with RETURNING), so that a session appending to its own buckets
// reads neither them nor their tails again.
constexpr size_t kMaxCachedStates = 10000;
std::unordered_map<std::string, StoredBucket> cached_states;

std::string cache_key(Oid bucket_table, const ObjectId &id) {
    return std::string(reinterpret_cast<const char *>(&bucket_table), sizeof bucket_table) +
           std::string(reinterpret_cast<const char *>(id.bytes.data()), id.bytes.size());
}

void cache(Oid bucket_table, const StoredBucket &stored) {
    if (cached_states.size() >= kMaxCachedStates)
        cached_states.clear();
    cached_states.insert_or_assign(cache_key(bucket_table, stored.id), stored);
}

}  // namespace

void forget_bucket_states() {
    cached_states.clear();
}

namespace {

uint64_t row_stamp(const std::string &row) {
    return std::hash<std::string>{}(row);
}

// Where the version of the bucket's latest tail starts in
// `stored.tail_rows`, when `stored` knows it.
std::optional<size_t> latest_tail_version_at(const StoredBucket &stored) {
    if (stored.tails == 0 || stored.tail_versions != stored.tails || stored.tail_rows.empty())
        return std::nullopt;
    size_t end = stored.tail_rows.size() - 1;  // the last version's trailing space
    size_t start = end == 0 ? std::string::npos : stored.tail_rows.rfind(' ', end - 1);
    return start == std::string::npos ? 0 : start + 1;
}

// The version of the bucket's latest tail that `stored` knows, if any.
std::optional<std::string> latest_tail_version(const StoredBucket &stored) {
    std::optional<size_t> at = latest_tail_version_at(stored);
    if (!at)
        return std::nullopt;
    return stored.tail_rows.substr(*at, stored.tail_rows.size() - 1 - *at);
}

// Forgets the version of the bucket's latest tail that `stored` knows: an
// append since may have written it again in place (append_in_place).
void forget_latest_tail_version(StoredBucket &stored) {
    if (std::optional<size_t> at = latest_tail_version_at(stored)) {
        stored.tail_rows.erase(*at);
        stored.tail_versions--;
    }
}

// `stored` with the tails the shared catalog's summary counts beyond it,
// when the summary holds at least what `stored` does and the tails added
// no field to its schema (the fingerprints agree), so that the state with
// them is the summary's.
bool take_summary(StoredBucket &stored, const catalog::OpenSummary &known) {
    const BucketState &state = stored.state;
    if (known.tails < stored.tails || known.count < state.count() || known.size < state.size() ||
        known.schema != state.schema_fingerprint())
        return false;
    if (known.next_seq != stored.next_seq) {
        forget_latest_tail_version(stored);
        stored.latest_tail = known.latest_tail_offset == 0
                                 ? std::string()
                                 : "(" + std::to_string(known.latest_tail_block) + "," +
                                       std::to_string(known.latest_tail_offset) + ")";
    }
    stored.state.add_counted(known.count - state.count(), known.size - state.size());
    stored.next_seq = known.next_seq;
    stored.tails = known.tails;
    stored.stored_bytes = known.stored_bytes;
    return true;
}

// The tails appended since `stored` was cached, counted from the summary
// without being read: only when the summary is ahead of the state.
bool count_unread_tails(StoredBucket &stored, const catalog::OpenSummary &known) {
    return known.next_seq > stored.next_seq && take_summary(stored, known);
}

// A state read from the bucket row alone, with the row's tails counted
// from the summary without being read: only when the summary counts this
// very version of the row (every writer that appends to the bucket stores
// its summary while it holds the bucket's lock, and one that changes the
// row otherwise forgets the series).
bool count_all_tails(StoredBucket &stored, const catalog::OpenSummary &known) {
    return known.next_seq != 0 && known.row == row_stamp(stored.row) && take_summary(stored, known);
}

}  // namespace

void remember_chain(Oid bucket_table, const ObjectId &id, uint64_t chain) {
    auto it = cached_states.find(cache_key(bucket_table, id));
    if (it != cached_states.end())
        it->second.chain = chain;
}

catalog::OpenSummary summary_of(Oid bucket_table, const ObjectId &id) {
    auto it = cached_states.find(cache_key(bucket_table, id));
    if (it == cached_states.end())
        return {};
    const StoredBucket &s = it->second;
    catalog::OpenSummary summary;
    summary.next_seq = s.next_seq;
    summary.size = s.state.size();
    summary.stored_bytes = s.stored_bytes;
    summary.schema = s.state.schema_fingerprint();
    summary.row = row_stamp(s.row);
    summary.count = s.state.count();
    summary.tails = s.tails;
    if (std::optional<ItemPointerData> tail = version_tid(s.latest_tail)) {
        summary.latest_tail_block = ItemPointerGetBlockNumber(&*tail);
        summary.latest_tail_offset = ItemPointerGetOffsetNumber(&*tail);
    }
    summary.writer = GetCurrentFullTransactionIdIfAny();
    return summary;
}

namespace {

// Whether the (sub)transaction `writer` committed, or is this one. One
// whose status the commit log may no longer hold (before its truncation
// point, or 2^31 transactions ago, which 32 bits cannot tell apart) ended
// long before: had it aborted, the catalog would have forgotten its
// summary. Read under XactTruncationLock, as pg_xact_status does.
bool writer_committed(FullTransactionId writer) {
    TransactionId xid = XidFromFullTransactionId(writer);
    if (!TransactionIdIsNormal(xid))
        return false;
    if (TransactionIdIsCurrentTransactionId(xid))
        return true;
    uint64 age =
        U64FromFullTransactionId(ReadNextFullTransactionId()) - U64FromFullTransactionId(writer);
    if (age >= (uint64{1} << 31))
        return true;
    LWLockAcquire(XactTruncationLock, LW_SHARED);
    bool committed = TransactionIdPrecedes(xid, ShmemVariableCache->oldestClogXid) ||
                     TransactionIdDidCommit(xid);
    LWLockRelease(XactTruncationLock);
    return committed;
}

// The summary when its writer committed; else none but its chain, as
// once the catalog has forgotten it.
catalog::OpenSummary committed(const catalog::OpenSummary &known) {
    if (known.next_seq == 0 || pg_call([&] { return writer_committed(known.writer); }))
        return known;
    catalog::OpenSummary forgotten;
    forgotten.chain = known.chain;
    return forgotten;
}

}  // namespace

// Under REPEATABLE READ and SERIALIZABLE, whether the bucket row's latest
// version is the one the transaction's snapshot sees: a bucket written
// since is passed over, before it is locked, like a locked one. Written
// again by this transaction, the version its snapshot sees would stay
// visible to it beside the new one, and its reads would count those
// measurements twice.
bool BucketStore::in_transaction_snapshot(const ObjectId &id) {
    if (!IsolationUsesXactSnapshot())
        return true;
    std::string latest =
        "SELECT ctid, xmin FROM " + info_.bucket_name + " WHERE _id = $1" + shard_condition(3);
    Oid types[] = {objectid_type(), TIDOID, INT4OID};
    Datum values[] = {objectid_datum(id), 0, Int32GetDatum(id.series_hash())};
    const char nulls[] = {' ', 'n', ' '};  // $2 is the second query's
    if (run(latest.c_str(), 3, types, values, nulls, 1) != 1)
        return true;  // gone: load() finds out
    bool isnull = false;
    ItemPointerData latest_version = *reinterpret_cast<ItemPointer>(
        DatumGetPointer(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)));
    TransactionId writer = DatumGetTransactionId(
        SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
    // This transaction's own version, maybe of this very statement (a
    // shard's xmin is a worker's transaction id: not comparable).
    if (!info_.distributed() &&
        pg_call([&] { return TransactionIdIsCurrentTransactionId(writer); }))
        return true;
    values[1] = PointerGetDatum(&latest_version);
    std::string seen =
        "SELECT FROM " + info_.bucket_name + " WHERE _id = $1 AND ctid = $2" + shard_condition(3);
    return pg_call([&] {
        // The active snapshot: the transaction's.
        int rc = SPI_execute_with_args(seen.c_str(), 3, types, values, nullptr, true, 1);
        if (rc != SPI_OK_SELECT)
            elog(ERROR, "SPI_execute_with_args failed for \"%s\"", seen.c_str());
        return SPI_processed == 1;
    });
}

std::optional<BucketStore::LockedRow> BucketStore::lock_row(const ObjectId &id, Jsonb *meta) {
    if (!info_.distributed()) {
        bool direct = false;
        DirectRow row{};
        bool locked = pg_call([&] {
            return lock_row_directly(info_.bucket_table, objectid_datum(id), meta, &direct, &row);
        });
        if (direct && !locked)
            return std::nullopt;
        if (direct)
            return LockedRow{to_unix_micros(row.min_time), row.data, row.closed, row.version};
    }
    // The meta test: a concurrent UPDATE through the view may have moved
    // the bucket to another series since the catalog learnt of it.
    std::string query =
        "SELECT min_time, data, coalesce(control->'closed' = 'true', false), ctid::text || xmin "
        "FROM " +
        info_.bucket_name + " WHERE _id = $1 AND " + (meta ? "meta = $2" : "meta IS NULL") +
        shard_condition(3) + " FOR UPDATE SKIP LOCKED";
    Oid types[] = {objectid_type(), JSONBOID, INT4OID};
    Datum values[] = {objectid_datum(id), PointerGetDatum(meta), Int32GetDatum(id.series_hash())};
    const char nulls[] = {' ', meta ? ' ' : 'n', ' '};
    if (run(query.c_str(), 3, types, values, nulls, 1) != 1)
        return std::nullopt;
    HeapTuple row = SPI_tuptable->vals[0];
    TupleDesc desc = SPI_tuptable->tupdesc;
    bool isnull = false;
    return LockedRow{to_unix_micros(DatumGetTimestampTz(SPI_getbinval(row, desc, 1, &isnull))),
                     SPI_getbinval(row, desc, 2, &isnull),
                     DatumGetBool(SPI_getbinval(row, desc, 3, &isnull)),
                     column_text(row, desc, 4).value_or("")};
}

std::optional<StoredBucket> BucketStore::load(
    const ObjectId &id, Jsonb *meta, const std::function<catalog::OpenSummary()> &summary) {
    if (!in_transaction_snapshot(id))
        return std::nullopt;
    std::optional<LockedRow> row = lock_row(id, meta);
    if (!row || row->closed)
        return std::nullopt;
    UnixMicros min_time = row->min_time;
    Datum data = row->data;
    std::string version = std::move(row->version);

    std::string key = cache_key(info_.bucket_table, id);
    auto cached = cached_states.find(key);
    // Asked only now: the last writer stored it before it released the lock.
    catalog::OpenSummary known = committed(summary());
    // Read whole when the row changed, or when the series' catalog entry
    // was made anew since the state was cached: a tail it counted may be
    // gone, and its seq given to another.
    bool fresh = cached == cached_states.end() || cached->second.row != version ||
                 (known.next_seq != 0 && known.chain != cached->second.chain);
    // The state of the bucket row alone, its tails still to count.
    auto row_state = [&] {
        StoredBucket bucket{id, BucketState(min_time)};
        bucket.row = version;
        bucket.chain = known.chain;
        bucket.state.add(outline_stored(id, data));
        bucket.stored_bytes = pg_call([&] { return toast_raw_datum_size(data) - VARHDRSZ; });
        return bucket;
    };
    StoredBucket stored = fresh ? row_state() : cached->second;
    stored.row = version;
    stored.chain = known.chain;
    // The bucket's lock keeps other writers from its tails, so they are
    // read without locks of their own (which would cost a WAL record per
    // tail and append); a fold locks them (load_stored). Only the tails
    // appended since the state was cached are read: the others can only
    // have lost measurements since (DELETE, TTL, a meta update moving them
    // away), which leaves the state counting more than there is, never
    // less, and load_stored finds out.
    bool current = fresh ? count_all_tails(stored, known)
                         : (known.next_seq != 0 && known.next_seq == stored.next_seq) ||
                               count_unread_tails(stored, known);
    std::vector<TailRow> tails;
    if (!current)
        tails = tails_from(id, min_time, meta, stored.next_seq, {true, false});
    // An append since wrote a tail the state counted in part again, in
    // place: the state is read anew.
    if (!fresh && std::any_of(tails.begin(), tails.end(),
                              [&](const TailRow &tail) { return tail.first < stored.next_seq; })) {
        stored = row_state();
        tails = tails_from(id, min_time, meta, 1, {true, false});
    }
    bool all_versions = stored.tail_versions == stored.tails;
    for (const TailRow &tail : tails) {
        stored.next_seq = tail.seq + 1;
        stored.state.add(outline_stored(id, tail.data));
        stored.stored_bytes += pg_call([&] { return toast_raw_datum_size(tail.data) - VARHDRSZ; });
        if (all_versions) {
            stored.tail_rows += tail.version + ' ';
            stored.tail_versions++;
        }
        stored.latest_tail = tail.version;
    }
    stored.tails += static_cast<uint32_t>(tails.size());
    cache(info_.bucket_table, stored);
    return stored;
}

BucketStore::TailRow BucketStore::tail_row(const DirectTail &read) {
    return {*reinterpret_cast<const ObjectId *>(DatumGetPointer(read.id)),
            read.seq,
            read.first,
            read.count,
            to_unix_micros(read.latest),
            to_unix_micros(read.bound),
            read.data,
            read.version};
}

// The bucket's tail at seq `seq` with its data: where `stored` last saw
// its latest tail, when that is the one and was not written since (one
// heap fetch), else through an index (tails_from).
std::optional<BucketStore::TailRow> BucketStore::tail_at(const StoredBucket &stored, int64_t seq,
                                                         Jsonb *meta) {
    std::optional<ItemPointerData> tid = version_tid(stored.latest_tail);
    if (tid && seq == stored.next_seq - 1) {
        std::string hex = stored.id.to_hex();
        DirectTail read;
        if (pg_call([&] {
                return read_tail_version_directly(info_.bucket_table, *tid, hex.c_str(),
                                                  info_.time_field.c_str(), seq, &read);
            }))
            return tail_row(read);
    }
    std::vector<TailRow> found =
        tails_from(stored.id, stored.state.min_time(), meta, seq, {true, false});
    if (found.size() != 1 || found[0].seq != seq)
        return std::nullopt;
    return found[0];
}

// The tails of bucket `id` from `from_seq` on, in seq order, read as
// `reading` says (without the direct path, with their data in any case).
std::vector<BucketStore::TailRow> BucketStore::tails_from(const ObjectId &id, UnixMicros min_time,
                                                          Jsonb *meta, int64_t from_seq,
                                                          TailReading reading) {
    std::vector<TailRow> tails;
    if (info_.reopen_index && !info_.distributed()) {
        std::string hex = id.to_hex();
        DirectTail *rows = nullptr;
        int n = pg_call([&] {
            return read_tails_directly(info_.bucket_table, meta, to_timestamptz(min_time),
                                       hex.c_str(), info_.time_field.c_str(), from_seq, reading,
                                       &rows);
        });
        if (n >= 0) {
            for (int i = 0; i < n; i++)
                tails.push_back(tail_row(rows[i]));
            std::sort(tails.begin(), tails.end(),
                      [](const TailRow &a, const TailRow &b) { return a.seq < b.seq; });
            return tails;
        }
    }
    // A tail's latest time is in its control (its max_time is a bound).
    const char *time_field = pg_call([&] { return quote_literal_cstr(info_.time_field.c_str()); });
    std::string select = std::string(
                             "SELECT (control->'tail'->>'seq')::int8 AS seq, "
                             "(control->>'count')::int8, tscoll._control_time(control, "
                             "'latest', ") +
                         time_field +
                         "), data, ctid::text || xmin, _id, coalesce((control->'tail'->>'first')"
                         "::int8, (control->'tail'->>'seq')::int8), max_time FROM ";
    uint64 n = run_tails(select.c_str(),
                         reading.lock ? " ORDER BY seq FOR UPDATE SKIP LOCKED" : " ORDER BY seq",
                         id, min_time, meta, from_seq);
    for (uint64 i = 0; i < n; i++) {
        HeapTuple row = SPI_tuptable->vals[i];
        TupleDesc desc = SPI_tuptable->tupdesc;
        bool isnull = false;
        TailRow tail;
        tail.seq = DatumGetInt64(SPI_getbinval(row, desc, 1, &isnull));
        tail.count = DatumGetInt64(SPI_getbinval(row, desc, 2, &isnull));
        tail.latest = to_unix_micros(DatumGetTimestampTz(SPI_getbinval(row, desc, 3, &isnull)));
        tail.data = SPI_getbinval(row, desc, 4, &isnull);
        tail.version = column_text(row, desc, 5).value_or("");
        tail.id = *reinterpret_cast<const ObjectId *>(
            DatumGetPointer(SPI_getbinval(row, desc, 6, &isnull)));
        tail.first = DatumGetInt64(SPI_getbinval(row, desc, 7, &isnull));
        tail.bound = to_unix_micros(DatumGetTimestampTz(SPI_getbinval(row, desc, 8, &isnull)));
        tails.push_back(std::move(tail));
    }
    return tails;
}

namespace {

// A bucket's stored data, detoasted, copied out of the query's result.
std::string stored_data(Datum data) {
    bytea *raw = pg_call([&] { return DatumGetByteaPP(data); });
    return std::string(bytes_of(raw));
}

}  // namespace

std::optional<std::vector<StoredTail>> BucketStore::load_tails(const StoredBucket &stored,
                                                               Jsonb *meta) {
    std::vector<StoredTail> tails;
    if (stored.tails == 0)
        return tails;
    const ObjectId &id = stored.id;
    // Every tail locked, the first ones (whose versions the state counted)
    // unchanged; the others were counted from the shared catalog, and are
    // read as they are now.
    std::string versions;
    for (TailRow &row : tails_from(id, stored.state.min_time(), meta, 1, {true, true})) {
        StoredTail tail;
        tail.id = row.id;
        tail.seq = row.seq;
        tail.first = row.first;
        tail.count = static_cast<uint32_t>(row.count);
        tail.latest = row.latest;
        tail.data = stored_data(row.data);
        tail.version = std::move(row.version);
        versions += tail.version + ' ';
        tails.push_back(std::move(tail));
    }
    size_t n = tails.size();
    if (n != stored.tails || versions.compare(0, stored.tail_rows.size(), stored.tail_rows) != 0) {
        cached_states.erase(cache_key(info_.bucket_table, id));
        return std::nullopt;
    }
    return tails;
}

void BucketStore::rewrite(const StoredBucket &stored, const std::vector<StoredTail> &tails,
                          const BucketData &appended, bool full, Jsonb *meta) {
    const ObjectId &id = stored.id;
    UnixMicros start = stored.state.min_time();
    std::string query =
        "SELECT data FROM " + info_.bucket_name + " WHERE _id = $1" + shard_condition(2);
    Oid types[] = {objectid_type(), INT4OID};
    Datum values[] = {objectid_datum(id), Int32GetDatum(id.series_hash())};
    if (run(query.c_str(), 2, types, values, nullptr, 1) != 1)
        throw Error(ErrorCode::Internal, "bucket " + id.to_hex() + " vanished while locked");
    bool isnull = false;
    std::string bucket_data =
        stored_data(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
    std::vector<std::string_view> pieces{bucket_data};
    for (const StoredTail &tail : tails)
        pieces.push_back(tail.data);
    std::optional<FoldedBucket> folded = naming_stored(
        id, [&] { return fold_typed(pieces, appended, start, info_.time_field, full); });
    if (folded) {
        BucketState state(start);
        state.add(naming_stored(id, [&] { return BucketData::outline(folded->data); }));
        write_row(id, folded->data, folded->control, state, stored, meta);
        return;
    }
    BucketData data = naming_stored(id, [&] { return BucketData::decode(pieces[0]); });
    for (size_t i = 1; i < pieces.size(); i++)
        data.append(naming_stored(id, [&] { return BucketData::decode(pieces[i]); }));
    data.append(appended);
    Bucket bucket(id, start, info_.time_field, std::move(data));
    if (full)
        bucket.mark_full();
    write_row(id, bucket.encode(), bucket.control(), bucket.state(), stored, meta);
}

// `pieces` (tails' data) and `appended` after them, encoded as one tail:
// typed where the columns allow, through values otherwise (the same bytes).
std::string BucketStore::tail_data(const ObjectId &id, const std::vector<std::string_view> &pieces,
                                   const BucketData &appended) const {
    std::optional<std::string> folded =
        naming_stored(id, [&] { return fold_typed_data(pieces, appended, false); });
    if (folded)
        return std::move(*folded);
    BucketData values;
    for (std::string_view piece : pieces)
        values.append(naming_stored(id, [&] { return BucketData::decode(piece); }));
    values.append(appended);
    return values.encode();
}

// The merged tails are written as the first of them, their measurements
// in order, and the others deleted as a fold deletes them: a statement
// that waited for the merge and finds a merged tail deleted reaches its
// measurements through the first one's new version, as through the bucket
// row after a fold (doc/ARCHITECTURE.md, "Tails", Concurrency). The bucket
// row is written again as it is (its data's TOAST pointer kept): its new
// version tells every session whose state counted the merged tails to
// read the bucket anew.
void BucketStore::merge_tails(const StoredBucket &stored, const std::vector<StoredTail> &tails,
                              size_t first, const BucketData &appended, UnixMicros latest,
                              Jsonb *meta) {
    const ObjectId &id = stored.id;
    std::vector<std::string_view> pieces;
    uint64_t merged_bytes = 0;
    for (size_t i = first; i < tails.size(); i++) {
        pieces.push_back(tails[i].data);
        latest = std::max(latest, tails[i].latest);
        merged_bytes += tails[i].data.size();
    }
    std::string data = tail_data(id, pieces, appended);
    uint32_t count = naming_stored(id, [&] { return BucketData::outline(data); }).count;
    const StoredTail &kept_tail = tails[first];
    Value control = tail_control(
        info_.time_field, stored.state.min_time(), latest, count,
        TailRef{id, kept_tail.seq, span_end(stored.state.min_time()), kept_tail.first});
    StoredBucket kept = stored;
    kept.row = update_row(id, stored.row, nullptr, nullptr);
    kept.tails = static_cast<uint32_t>(first + 1);
    kept.tail_rows.clear();
    for (size_t i = 0; i < first; i++)
        kept.tail_rows += tails[i].version + ' ';
    kept.latest_tail = update_row(kept_tail.id, kept_tail.version, &control, &data);
    kept.tail_rows += kept.latest_tail + ' ';
    kept.tail_versions = kept.tails;
    kept.stored_bytes = kept.stored_bytes - std::min(kept.stored_bytes, merged_bytes) + data.size();
    if (first + 1 < tails.size())
        delete_folded_tails(id, stored.state.min_time(), tails[first + 1].seq,
                            static_cast<uint32_t>(tails.size() - first - 1), meta);
    cache(info_.bucket_table, kept);
}

// Runs `read` of stored data, its errors naming the bucket and the
// collection.
template <typename Read>
auto BucketStore::naming_stored(const ObjectId &id, Read read) const -> decltype(read()) {
    try {
        return naming_bucket(id, read);
    } catch (const Error &e) {
        throw Error(e.code(), e.what(),
                    "Bucket " + id.to_hex() + " of collection " + info_.view_name + ".");
    }
}

BucketOutline BucketStore::outline_stored(const ObjectId &id, Datum data) const {
    bytea *raw = pg_call([&] { return DatumGetByteaPP(data); });
    return naming_stored(id, [&] { return BucketData::outline(bytes_of(raw)); });
}

// Runs `select` over the tails of bucket `id`, then `rest`. An index on
// meta and min_time (or min_time) finds them; without one, the primary key
// does (tail_id).
uint64 BucketStore::run_tails(const char *select, const char *rest, const ObjectId &id,
                              UnixMicros min_time, Jsonb *meta, int64_t from_seq) {
    // Without the index, by _id: the bucket's time, or time 0 for tails
    // written while the collection had the index (tail_id).
    ObjectId low = id, high = id;
    std::fill(low.bytes.begin() + 4, low.bytes.end(), 0x00);
    std::fill(high.bytes.begin() + 4, high.bytes.end(), 0xFF);
    std::string query =
        std::string(select) + info_.bucket_name + " WHERE " +
        (info_.reopen_index ? ""
                            : "(_id >= $1 AND _id <= $2 OR _id >= $7 AND _id <= $8) "
                              "AND ") +
        "min_time = $3 AND control->'tail'->>'bucket' = $4 AND " +
        (meta ? "meta = $5" : "meta IS NULL") +
        (from_seq > 1 ? " AND (control->'tail'->>'seq')::int8 >= $6" : "") + shard_condition(9) +
        rest;
    Oid types[] = {objectid_type(), objectid_type(), TIMESTAMPTZOID,  TEXTOID, JSONBOID,
                   INT8OID,         objectid_type(), objectid_type(), INT4OID};
    std::string hex = id.to_hex();
    Datum values[] = {objectid_datum(low),
                      objectid_datum(high),
                      TimestampTzGetDatum(to_timestamptz(min_time)),
                      pg_call([&] { return CStringGetTextDatum(hex.c_str()); }),
                      PointerGetDatum(meta),
                      Int64GetDatum(from_seq),
                      objectid_datum(ObjectId::from_parts(0, 0)),
                      objectid_datum(ObjectId::from_parts(0, ~uint64_t{0})),
                      Int32GetDatum(id.series_hash())};
    const char nulls[] = {' ', ' ', ' ', ' ', meta ? ' ' : 'n', ' ', ' ', ' ', ' '};
    return run(query.c_str(), 9, types, values, nulls, 0);
}

std::vector<catalog::BucketRef> BucketStore::reopen_candidates(Jsonb *meta, UnixMicros t) {
    std::string query = "SELECT _id, min_time FROM " + info_.bucket_name + " WHERE " +
                        (meta ? "meta = $3" : "meta IS NULL") +
                        " AND min_time <= $1 AND min_time > $2 AND NOT control ? 'tail'" +
                        // not full: the format byte's flag (doc/BUCKET_FORMAT.md)
                        " AND get_byte(data, 4) < 128 ORDER BY min_time DESC LIMIT " +
                        std::to_string(kMaxReopenCandidates);
    Oid types[] = {TIMESTAMPTZOID, TIMESTAMPTZOID, JSONBOID};
    Datum values[] = {TimestampTzGetDatum(to_timestamptz(t)),
                      TimestampTzGetDatum(to_timestamptz(t - info_.max_span_seconds * 1000000)),
                      PointerGetDatum(meta)};
    uint64 rows = run(query.c_str(), meta ? 3 : 2, types, values, nullptr, 0);
    std::vector<catalog::BucketRef> refs;
    for (uint64 i = 0; i < rows; i++) {
        bool isnull = false;
        Datum id = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull);
        Datum min_time = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2, &isnull);
        refs.push_back({*reinterpret_cast<const ObjectId *>(DatumGetPointer(id)),
                        to_unix_micros(DatumGetTimestampTz(min_time))});
    }
    return refs;
}

// Writes a bucket row. A btree entry holds about 2.7 kB: a larger meta
// value, or control value of an indexed field, cannot be indexed (btree
// names the index; an index entry past 8 kB even compressed fails before
// btree sees it, naming none), and PostgreSQL's own message names neither
// the collection nor what to do.
template <typename Write>
auto BucketStore::guarding_index_size(Write write) -> decltype(write()) {
    try {
        return write();
    } catch (const PgError &e) {
        if (e.edata()->sqlerrcode != ERRCODE_PROGRAM_LIMIT_EXCEEDED)
            throw;
        std::string hint = "Index entries hold at most 2704 bytes; keep large values out of ";
        hint += info_.meta_field.empty()
                    ? "indexed fields."
                    : "the meta field \"" + info_.meta_field + "\" and out of indexed fields.";
        std::string what = e.edata()->constraint_name ? std::string("too large for its index \"") +
                                                            e.edata()->constraint_name + "\""
                                                      : std::string("too large to be stored");
        throw Error(ErrorCode::TooLarge,
                    "a bucket of time-series collection \"" + info_.view_name + "\" is " + what,
                    e.edata()->message, hint);
    }
}

uint64 BucketStore::write(const char *query, int nargs, Oid *types, Datum *values,
                          const char *nulls) {
    return guarding_index_size([&] { return run(query, nargs, types, values, nulls, 0); });
}

void BucketStore::insert(const Bucket &bucket, Jsonb *meta) {
    insert(bucket, meta, EncodedBucket{bucket.encode(), bucket.control()});
}

void BucketStore::insert(const Bucket &bucket, Jsonb *meta, EncodedBucket encoded) {
    StoredBucket cached{bucket.id(), bucket.state()};
    cached.stored_bytes = encoded.data.size();
    insert_row(bucket.id(), meta, control_jsonb(encoded.control, new_rows_context_), encoded.data,
               std::move(cached), false);
}

namespace {

// A tail's _id. Time-ordered ids would put each tail's entry in the _id
// index after every other, on pages no later insert reaches; with time
// component 0 and 8 random bytes, they share pages with the entries of
// tails already folded, which reclaim.hpp gives back. Without an index to
// find a bucket's tails by meta and start, tails are found by an _id range
// (run_tails): they then carry their bucket's time, as its _id does.
// A distributed collection's tail carries its bucket's series hash, so that
// it lives in its bucket's shard. With the index, its other bytes stay
// time 0 (run_tails finds such tails by that if the index is dropped) and
// 4 random bytes: tails of one series, only a few of them live at once,
// are told apart by 32 random bits.
ObjectId tail_id(const CollectionInfo &info, const ObjectId &bucket) {
    ObjectId id;
    if (!info.reopen_index) {
        id = ObjectId::generate(bucket.seconds());
    } else {
        uint64_t bits = 0;
        if (!pg_strong_random(&bits, sizeof bits))
            throw Error(ErrorCode::Internal, "could not generate random bytes for a tail's _id");
        id = ObjectId::from_parts(0, bits);
    }
    return info.distributed() ? id.with_series_hash(bucket.series_hash()) : id;
}

}  // namespace

UnixMicros BucketStore::span_end(UnixMicros start) const {
    return start + info_.max_span_seconds * 1000000;
}

void BucketStore::insert_tail(const StoredBucket &appended, const BucketData &data,
                              UnixMicros latest, Jsonb *meta) {
    TailRef ref{appended.id, appended.next_seq, span_end(appended.state.min_time())};
    Value control =
        tail_control(info_.time_field, appended.state.min_time(), latest, data.count(), ref);
    std::string encoded = data.encode();
    StoredBucket cached = appended;
    cached.tails++;
    cached.next_seq++;
    cached.stored_bytes += encoded.size();
    // Room to grow for a tail that the next append of as many measurements
    // would be written into (append_in_place).
    insert_row(tail_id(info_, appended.id), meta, control_jsonb(control, new_rows_context_),
               encoded, std::move(cached), grows_in_place(data.count()));
}

bool BucketStore::append_in_place(const StoredBucket &appended, const BucketData &data,
                                  UnixMicros latest, Jsonb *meta) {
    // Under REPEATABLE READ and SERIALIZABLE, the transaction's snapshot
    // may see an older version of the tail than the latest: writing the
    // latest again would leave both visible to it.
    if (appended.tails == 0 || info_.distributed() || IsolationUsesXactSnapshot() ||
        data.count() >= kMaxInPlaceCount)
        return false;
    const ObjectId &id = appended.id;
    UnixMicros start = appended.state.min_time();
    int64_t seq = appended.next_seq;
    std::optional<TailRow> latest_tail = tail_at(appended, seq - 1, meta);
    if (!latest_tail)
        return false;
    const TailRow &tail = *latest_tail;
    bytea *raw = pg_call([&] { return DatumGetByteaPP(tail.data); });
    std::string_view stored_tail = bytes_of(raw);
    if (tail.count + data.count() > kMaxInPlaceCount || latest >= tail.bound)
        return false;
    std::string written = tail_data(id, {stored_tail}, data);
    Value control = tail_control(info_.time_field, start, std::max(latest, tail.latest),
                                 static_cast<uint32_t>(tail.count + data.count()),
                                 TailRef{id, seq, tail.bound, tail.first});
    std::optional<std::string> version =
        update_row_without_query(tail.id, tail.version, &control, &written, false);
    if (!version)
        return false;
    StoredBucket cached = appended;
    bool knew_it = latest_tail_version(cached) == tail.version;
    forget_latest_tail_version(cached);
    if (knew_it) {
        cached.tail_rows += *version + ' ';
        cached.tail_versions++;
    }
    cached.latest_tail = *version;
    cached.next_seq++;
    cached.stored_bytes +=
        written.size() - std::min<uint64_t>(cached.stored_bytes, stored_tail.size());
    cache(info_.bucket_table, cached);
    return true;
}

// Rows are inserted together when the store finishes: one statement for
// all of them, not one per bucket.
void BucketStore::insert_row(const ObjectId &id, Jsonb *meta, Jsonb *control,
                             const std::string &data, StoredBucket cached, bool growing) {
    new_rows_.ids.push_back(objectid_datum(id, new_rows_context_));
    new_rows_.metas.push_back(PointerGetDatum(meta));
    new_rows_.meta_nulls.push_back(meta == nullptr);
    new_rows_.controls.push_back(PointerGetDatum(control));
    new_rows_.data.push_back(bytea_datum(data, new_rows_context_));
    new_rows_.cached.push_back(std::move(cached));
    new_rows_.growing.push_back(growing);
}

namespace {

// What the bucket table's generated expressions compute, by expression
// text: parsing and planning them at each write (ExecSimpleRelationInsert
// does) was 2.7% of the backends' samples on the 8-client single-row load.
struct ControlTime {
    std::string bound, field;
};
std::unordered_map<std::string, std::optional<ControlTime>> control_times;

// A bucket table's GeneratedTimes and the strings they point into (not
// copied: `c` points into `times`).
struct KnownTimes {
    std::vector<ControlTime> times;
    GeneratedTimes c{-1, {}, {}, {}};
};

void known_times(Oid bucket_table, KnownTimes &known) {
    AttrNumber columns[kMaxGeneratedTimes];
    char *expressions[kMaxGeneratedTimes];
    int n = pg_call([&] {
        return generated_expressions(bucket_table, columns, expressions, kMaxGeneratedTimes);
    });
    for (int i = 0; i < n; i++) {
        auto cached = control_times.find(expressions[i]);
        if (cached == control_times.end()) {
            char *bound = nullptr, *field = nullptr;
            std::optional<ControlTime> time;
            if (pg_call([&] { return parse_control_time(expressions[i], &bound, &field); }))
                time = ControlTime{bound, field};
            if (control_times.size() >= 1000)
                control_times.clear();
            cached = control_times.emplace(expressions[i], std::move(time)).first;
        }
        if (!cached->second)
            return;
        known.times.push_back(*cached->second);
    }
    if (n < 0)
        return;
    known.c.count = n;
    for (int i = 0; i < n; i++) {
        known.c.column[i] = columns[i];
        known.c.bound[i] = known.times[i].bound.c_str();
        known.c.field[i] = known.times[i].field.c_str();
    }
}

}  // namespace

void BucketStore::insert_new_rows() {
    if (new_rows_.ids.empty())
        return;
    if (!info_.distributed() && insert_new_rows_directly())
        return;
    // A distributed collection's rows carry their shard key, the series
    // hash of their _id, for Citus to route them; Citus returns the rows
    // shard by shard, so they are matched by _id.
    bool keyed = info_.distributed();
    std::string query = "INSERT INTO " + info_.bucket_name + " (_id, meta, control, data" +
                        (keyed ? ", series_hash" : "") + ") SELECT * FROM unnest($1, $2, $3, $4" +
                        (keyed ? ", $5" : "") + ") RETURNING _id::text, ctid, xmin";
    int n = static_cast<int>(new_rows_.ids.size());
    std::vector<Datum> hashes(n);
    for (int i = 0; i < n; i++)
        hashes[i] = Int32GetDatum(
            reinterpret_cast<const ObjectId *>(DatumGetPointer(new_rows_.ids[i]))->series_hash());
    Oid objectid = objectid_type();
    Oid types[5];
    Datum values[5];
    pg_call([&] {
        types[0] = get_array_type(objectid);
        types[1] = types[2] = JSONBARRAYOID;
        types[3] = BYTEAARRAYOID;
        types[4] = INT4ARRAYOID;
        int lbound = 1;
        std::vector<bool> &nulls = new_rows_.meta_nulls;
        bool *meta_nulls = static_cast<bool *>(palloc(sizeof(bool) * n));
        for (int i = 0; i < n; i++)
            meta_nulls[i] = nulls[i];
        values[0] = PointerGetDatum(construct_array(new_rows_.ids.data(), n, objectid,
                                                    ObjectId::kSize, false, TYPALIGN_CHAR));
        values[1] = PointerGetDatum(construct_md_array(new_rows_.metas.data(), meta_nulls, 1, &n,
                                                       &lbound, JSONBOID, -1, false, TYPALIGN_INT));
        values[2] = PointerGetDatum(
            construct_array(new_rows_.controls.data(), n, JSONBOID, -1, false, TYPALIGN_INT));
        values[3] = PointerGetDatum(
            construct_array(new_rows_.data.data(), n, BYTEAOID, -1, false, TYPALIGN_INT));
        values[4] = PointerGetDatum(
            construct_array(hashes.data(), n, INT4OID, sizeof(int32), true, TYPALIGN_INT));
    });
    uint64 written = write(query.c_str(), keyed ? 5 : 4, types, values, nullptr);
    // The cache must hold every bucket as written: the shared catalog's
    // summaries are taken from it (summary_of).
    if (written != new_rows_.cached.size())
        throw Error(ErrorCode::Internal, "bucket rows inserted but not all returned");
    std::unordered_map<std::string, std::string> versions;
    for (uint64 i = 0; i < written; i++)
        versions[column_text(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1).value_or("")] =
            returned_version(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2);
    for (int i = 0; i < n; i++) {
        std::string id =
            reinterpret_cast<const ObjectId *>(DatumGetPointer(new_rows_.ids[i]))->to_hex();
        remember_new_row(new_rows_.cached[i], versions[id]);
    }
    new_rows_ = NewRows();
    pg_call([&] { MemoryContextReset(new_rows_context_); });
}

bool BucketStore::insert_new_rows_directly() {
    int n = static_cast<int>(new_rows_.ids.size());
    KnownTimes times;
    known_times(info_.bucket_table, times);
    std::vector<char> meta_nulls(new_rows_.meta_nulls.begin(), new_rows_.meta_nulls.end());
    char **versions = guarding_index_size([&] {
        return pg_call([&] {
            return insert_rows_directly(
                info_.bucket_table, &times.c, n, new_rows_.ids.data(), new_rows_.metas.data(),
                reinterpret_cast<const bool *>(meta_nulls.data()), new_rows_.controls.data(),
                new_rows_.data.data(), reinterpret_cast<const bool *>(new_rows_.growing.data()));
        });
    });
    if (versions == nullptr)
        return false;
    for (int i = 0; i < n; i++)
        remember_new_row(new_rows_.cached[i], versions[i]);
    new_rows_ = NewRows();
    pg_call([&] { MemoryContextReset(new_rows_context_); });
    return true;
}

// The session's state of a row just inserted (a new bucket, or a tail of
// a bucket whose state counts it), at version `version`.
void BucketStore::remember_new_row(StoredBucket &cached, std::string version) {
    if (cached.row.empty()) {
        cached.row = std::move(version);  // a new bucket's own row
    } else {
        if (cached.tail_versions + 1 == cached.tails) {
            cached.tail_rows += version + ' ';
            cached.tail_versions++;
        }
        cached.latest_tail = std::move(version);
    }
    cache(info_.bucket_table, cached);
}

void BucketStore::write_row(const ObjectId &id, const std::string &data, const Value &control,
                            const BucketState &state, const StoredBucket &stored, Jsonb *meta) {
    StoredBucket cached{id, state};
    cached.stored_bytes = data.size();
    cached.row = update_row(id, stored.row, &control, &data);
    if (stored.tails > 0)
        delete_folded_tails(id, state.min_time(), 1, stored.tails, meta);
    cache(info_.bucket_table, cached);
}

// Writes the row `id` (bucket or tail) at version `version` again, with
// `control` and `data` or, for nullptr, as they are, through the access
// method (update_row_directly); returns its new version.
std::optional<std::string> BucketStore::update_row_without_query(const ObjectId &id,
                                                                 const std::string &version,
                                                                 const Value *control,
                                                                 const std::string *data,
                                                                 bool wait) {
    std::optional<ItemPointerData> tid = info_.distributed() ? std::nullopt : version_tid(version);
    if (!tid)
        return std::nullopt;
    Datum new_control = control ? PointerGetDatum(control_jsonb(*control, row_context_)) : 0;
    Datum new_data = data ? bytea_datum(*data, row_context_) : 0;
    Datum id_datum = objectid_datum(id, row_context_);
    KnownTimes times;
    known_times(info_.bucket_table, times);
    bool hot = false;
    char *written = guarding_index_size([&] {
        return pg_call([&] {
            return update_row_directly(info_.bucket_table, &times.c, id_datum, *tid, new_control,
                                       new_data, wait, &hot);
        });
    });
    std::optional<std::string> result;
    if (written != nullptr)
        result = std::string(written);
    pg_call([&] { MemoryContextReset(row_context_); });
    // A heap-only version shares the old one's index entries, and pruning
    // frees the old one's bytes when its page fills: nothing to reclaim.
    if (result && !hot)
        note_replaced_row(version);
    return result;
}

// The same, waiting for other writers of the row, through an UPDATE when
// the table needs the statement.
std::string BucketStore::update_row(const ObjectId &id, const std::string &version,
                                    const Value *control, const std::string *data) {
    if (std::optional<std::string> written =
            update_row_without_query(id, version, control, data, true))
        return *written;
    note_replaced_row(version);
    std::string query = "UPDATE " + info_.bucket_name + " SET " +
                        (control ? "control = $2, data = $3" : "control = control") +
                        " WHERE _id = $1" + shard_condition(4) + " RETURNING ctid, xmin";
    Oid types[] = {objectid_type(), JSONBOID, BYTEAOID, INT4OID};
    Datum values[] = {objectid_datum(id, row_context_),
                      control ? PointerGetDatum(control_jsonb(*control, row_context_)) : 0,
                      data ? bytea_datum(*data, row_context_) : 0, Int32GetDatum(id.series_hash())};
    const char nulls[] = {' ', control ? ' ' : 'n', data ? ' ' : 'n', ' '};
    if (write(query.c_str(), 4, types, values, nulls) != 1)
        throw Error(ErrorCode::Internal, "bucket row " + id.to_hex() + " vanished while locked");
    std::string written = returned_version(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
    MemoryContextReset(row_context_);
    return written;
}

// The version `row` (ctid::text || xmin) of a bucket row, about to be
// written again, for reclaim.hpp.
void BucketStore::note_replaced_row(const std::string &row) {
    if (info_.distributed())
        return;  // the rows are in the workers' shards
    std::optional<ItemPointerData> version = version_tid(row);
    if (!version)
        return;
    pg_call([&] {
        Relation relation = table_open(info_.bucket_table, RowExclusiveLock);
        note_folded_rows(relation, &*version, 1);
        table_close(relation, NoLock);
    });
}

// A folded tail is deleted as a row moved elsewhere, as PostgreSQL deletes
// a row an UPDATE moves to another partition: a DELETE through the view
// that read the tail before the fold committed, and waited for it, then
// fails with a serialization failure (40001) to be retried, rather than
// skip the tail and leave its measurements, now in the bucket row, alone.
void BucketStore::delete_folded_tails(const ObjectId &id, UnixMicros start, int64_t from_seq,
                                      uint32_t tails, Jsonb *meta) {
    std::vector<ItemPointerData> rows;
    for (const TailRow &tail : tails_from(id, start, meta, from_seq, {false, false}))
        if (std::optional<ItemPointerData> row = version_tid(tail.version))
            rows.push_back(*row);
    if (rows.size() != tails)
        throw Error(ErrorCode::Internal,
                    "a tail of bucket " + id.to_hex() + " changed while locked");
    // The tails' measurements move; they are not those of a translated
    // statement being counted (one that called this insert, say).
    struct NotCounted {
        ModificationCount *saved = counted_modification;
        NotCounted() { counted_modification = nullptr; }
        ~NotCounted() { counted_modification = saved; }
    } not_counted;
    if (info_.distributed()) {
        delete_shard_rows(id.series_hash(), rows);
        return;
    }
    pg_call([&] {
        Relation relation = table_open(info_.bucket_table, RowExclusiveLock);
        note_folded_rows(relation, rows.data(), static_cast<int>(rows.size()));
        for (ItemPointerData &row : rows) {
            TM_FailureData failure;
            TM_Result result =
                table_tuple_delete(relation, &row, GetCurrentCommandId(true), GetActiveSnapshot(),
                                   InvalidSnapshot, true, &failure, true);
            if (result != TM_Ok)
                elog(ERROR, "a tail of a bucket being folded changed while locked");
        }
        table_close(relation, NoLock);
        CommandCounterIncrement();
    });
}

// The rows at `rows` of the shard of `series_hash`, deleted through Citus:
// the coordinator holds none of them. A DELETE through the view waiting for
// a folded tail then skips it, as it skips any row deleted under it
// (doc/ARCHITECTURE.md, Scale-out).
void BucketStore::delete_shard_rows(int32_t series_hash, const std::vector<ItemPointerData> &rows) {
    std::string query =
        "DELETE FROM " + info_.bucket_name + " WHERE series_hash = $1 AND ctid = ANY($2)";
    Oid types[] = {INT4OID, TIDARRAYOID};
    Datum values[2];
    std::vector<Datum> tids;
    for (const ItemPointerData &row : rows)
        tids.push_back(PointerGetDatum(&row));
    pg_call([&] {
        values[0] = Int32GetDatum(series_hash);
        values[1] =
            PointerGetDatum(construct_array(tids.data(), static_cast<int>(tids.size()), TIDOID,
                                            sizeof(ItemPointerData), false, TYPALIGN_SHORT));
    });
    if (write(query.c_str(), 2, types, values, nullptr) != rows.size())
        throw Error(ErrorCode::Internal, "a tail of a bucket being folded changed while locked");
}

int32_t series_hash_of(const std::string &series_key) {
    return static_cast<int32_t>(
        hash_bytes(reinterpret_cast<const unsigned char *>(series_key.data()),
                   static_cast<int>(series_key.size())));
}

// " AND series_hash = $<param>" for a distributed collection, which routes
// the query to the bucket's shard; nothing otherwise.
std::string BucketStore::shard_condition(int param) const {
    return info_.distributed() ? " AND series_hash = $" + std::to_string(param) : "";
}

}  // namespace tscoll::pg
