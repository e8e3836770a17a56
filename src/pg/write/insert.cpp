// The insert path (doc/REFERENCE.md §3.2, INSERT): a row trigger on the
// view gathers each measurement of a statement in memory, grouped by
// series; a statement trigger then assigns them to buckets (core rules,
// catalog hints, the bucket table as the truth) and writes each touched
// bucket once.
extern "C" {
#include "postgres.h"
#include "access/htup_details.h"
#include "access/xact.h"
#include "commands/trigger.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "utils/rel.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"
}

#include <algorithm>
#include <ctime>
#include <map>
#include <memory>
#include <unordered_map>

#include "core/bucket.hpp"
#include "core/compare.hpp"
#include "core/error.hpp"
#include "core/measurement.hpp"
#include "pg/write/bucket_store.hpp"
#include "pg/write/deferred.hpp"
#include "pg/write/insert.hpp"
#include "pg/write/rollup_notes.hpp"
#include "pg/catalog/catalog.hpp"
#include "pg/guard.hpp"
#include "pg/types/jsonb_value.hpp"
#include "pg/pg_time.hpp"
#include "pg/read/typed_fields.hpp"
#include "pg/settings.hpp"

namespace tscoll::pg {

struct SeriesBatch {
    std::string key;
    std::optional<Value> meta;
    std::vector<Measurement> measurements;
};

// A statement's measurements are written when it ends, or earlier once
// they add up to this many BSON bytes, so that a huge COPY or INSERT ...
// SELECT runs in bounded memory. The buckets come out the same.
constexpr uint64_t kFlushBytes = 16 * 1024 * 1024;
// A bucket the statement created that is still open at a flush stays in
// memory for the next one, and is written once it closes or the statement
// ends: written at the flush, it would be written again with what the
// statement appends to it, and its first version left dead (the bucket
// table's TOAST holds it). Up to this many BSON bytes of such buckets are
// kept as values; past that, a bucket is kept packed (Bucket::pack: about
// its stored size), up to the second bound, so that a COPY over a thousand
// series writes each bucket once too.
constexpr uint64_t kCarriedBytes = 16 * 1024 * 1024;
constexpr uint64_t kCarriedPackedBytes = 64 * 1024 * 1024;
// What a carried bucket holds besides its measurements (its summaries,
// schema, series key and meta), counted against both bounds: a statement
// over a million series carries a million small buckets.
constexpr uint64_t kCarriedBucketBytes = 2048;

// A bucket this statement appends to: one it creates, built as it fills,
// or a stored one, known by its state, with what this statement appends.
struct TouchedBucket {
    std::optional<Bucket> created;
    std::optional<StoredBucket> stored;
    Jsonb *meta;          // the series' meta, for the bucket's rows
    BucketData appended;  // to a stored bucket
    UnixMicros appended_latest = 0;
    bool open = false;         // its series' open bucket when the statement ends
    bool closed_full = false;  // closed by size in this statement
    bool carried = false;      // created, and kept in memory past this flush
    bool kept_open_for_large = false;
    uint32_t statements = 0;  // the inserts whose measurements it took
    uint64_t last_statement = 0;
    std::optional<EncodedBucket> encoded;  // of `created`, before it is written

    const ObjectId &id() const { return created ? created->id() : stored->id; }
    const BucketState &state() const { return created ? created->state() : stored->state; }
    uint32_t appended_count() const { return created ? created->count() : appended.count(); }

    // Takes the measurement's values: the statement's batch is dropped
    // once its buckets are written. `schema_known` as decide() found it.
    void append(Measurement &&m, bool schema_known) {
        // A series' measurements come in the order of their inserts.
        if (statements == 0 || m.statement != last_statement) {
            statements++;
            last_statement = m.statement;
        }
        if (created) {
            created->append(std::move(m), schema_known);
            return;
        }
        stored->state.add(m.fields, m.bson_size, schema_known);
        appended_latest = std::max(appended_latest, m.time);
        appended.append(std::move(m.fields), m.bson_size);
    }
    void mark_full() {
        closed_full = true;
        if (created)
            created->mark_full();
        else
            stored->state.mark_full();
    }
};

// A bucket kept from one flush to the next, with its series.
struct CarriedBucket {
    std::unique_ptr<TouchedBucket> bucket;
    std::string series_key;
    std::optional<Value> meta;
};

// One statement's measurements for one collection.
struct PendingInsert {
    explicit PendingInsert(CollectionInfo collection) : info(std::move(collection)) {}

    CollectionInfo info;
    std::vector<SeriesBatch> series;
    std::unordered_map<std::string, size_t> index;  // by series key
    // By the spelling of the series' first meta: rows of one series mostly
    // spell their meta alike, and a spelling is found without building its
    // series key.
    std::unordered_multimap<size_t, size_t> by_spelling;
    uint64_t bytes = 0;
    std::vector<CarriedBucket> carried;
    // Metas numbered by the caller (MeasurementBatch::add): each with its
    // spelling_hash, for the statement; and its series, for this flush.
    std::vector<std::pair<Value, size_t>> spelled;
    std::vector<size_t> series_of_spelling;
    static constexpr size_t kNoSeries = SIZE_MAX;

    void add(PreparedMeasurement p) {
        size_t at = series_of(std::move(p.meta), p.meta_spelling);
        bytes += p.measurement.bson_size;
        series[at].measurements.push_back(std::move(p.measurement));
    }

    void add(PreparedMeasurement p, uint32_t spelling) {
        if (p.meta) {
            if (spelling != spelled.size())
                throw Error(ErrorCode::Internal, "a meta spelling numbered out of order");
            spelled.emplace_back(*p.meta, p.meta_spelling);
            series_of_spelling.push_back(kNoSeries);
        } else if (spelling >= spelled.size()) {
            throw Error(ErrorCode::Internal, "a meta spelling not numbered before");
        }
        size_t &at = series_of_spelling[spelling];
        if (at == kNoSeries) {
            const auto &[meta, hash] = spelled[spelling];
            at = series_of(p.meta ? std::move(p.meta) : std::optional<Value>(meta), hash);
        }
        bytes += p.measurement.bson_size;
        series[at].measurements.push_back(std::move(p.measurement));
    }

    size_t series_of(std::optional<Value> meta, size_t spelling) {
        auto [first, last] = by_spelling.equal_range(spelling);
        for (auto it = first; it != last; ++it) {
            const std::optional<Value> &known = series[it->second].meta;
            if (known.has_value() == meta.has_value() && (!meta || spelled_alike(*known, *meta)))
                return it->second;
        }
        std::string key = series_key(meta);
        auto [it, inserted] = index.try_emplace(key, series.size());
        if (inserted) {
            series.push_back(SeriesBatch{std::move(key), std::move(meta), {}});
            by_spelling.emplace(spelling, it->second);
        }
        return it->second;
    }

    // Writes what was gathered (defined below, with the writer); at the
    // statement's end, also every bucket carried.
    void flush(bool end);
    void flush_when_full() {
        if (bytes >= kFlushBytes)
            flush(false);
    }
};

namespace {

// Keyed by view and by the subtransaction whose statement gathers them:
// a statement's rows are gathered and written at one level, while a
// function it calls may run statements of its own (into the same view
// too) in subtransactions that abort, and must take only their own rows
// with them. Emptied by each statement's flush and by the aborts.
using PendingKey = std::pair<Oid, SubTransactionId>;
std::map<PendingKey, PendingInsert> pending;

PendingKey pending_key(Oid view) {
    return {view, GetCurrentSubTransactionId()};
}

// Statements running that insert with RETURNING (also in a WITH): while
// there is one, the row trigger returns each measurement as stored, which
// costs a document per row that no other insert needs.
int returning_inserts = 0;

void discard_pending(XactEvent event, void *) {
    if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT) {
        pending.clear();
        TrustedBucketWrites::reset();
    }
    // A prepared transaction may yet roll back, with no word to this session.
    if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT ||
        event == XACT_EVENT_PREPARE)
        forget_bucket_states();
    if (event == XACT_EVENT_ABORT || event == XACT_EVENT_COMMIT)
        returning_inserts = 0;
}

bool inserts_returning(const Plan *plan) {
    if (plan == nullptr || !IsA(plan, ModifyTable))
        return false;
    auto *modify = reinterpret_cast<const ModifyTable *>(plan);
    return modify->operation == CMD_INSERT && modify->returningLists != NIL;
}

// A ModifyTable is the root of the statement's plan or of a WITH's.
bool inserts_returning(const PlannedStmt *stmt) {
    if (inserts_returning(stmt->planTree))
        return true;
    ListCell *lc;
    foreach (lc, stmt->subplans)
        if (inserts_returning(static_cast<const Plan *>(lfirst(lc))))
            return true;
    return false;
}

// Subtransaction ids grow within a transaction: those at or past `mine`
// are the aborted one's and its children's. A statement ends in the
// subtransaction it started in, so a committed one leaves nothing; were
// anything left under its id, its parent's abort (a smaller id) would
// still take it, and the commit write it (write/deferred).
void discard_pending_sub(SubXactEvent event, SubTransactionId mine, SubTransactionId, void *) {
    if (event != SUBXACT_EVENT_ABORT_SUB)
        return;
    for (auto it = pending.begin(); it != pending.end();)
        it = it->first.second >= mine ? pending.erase(it) : std::next(it);
    forget_bucket_states();
}

std::optional<Value> jsonb_column(HeapTuple tuple, TupleDesc desc, int attnum) {
    bool isnull = false;
    Datum d = heap_getattr(tuple, attnum, desc, &isnull);
    if (isnull)
        return std::nullopt;
    return jsonb_to_value(pg_call([&] { return DatumGetJsonbP(d); }));
}

std::string bucket_key(const std::string &series_key, const ObjectId &id) {
    return series_key + '\0' + id.to_hex();
}

BucketingLimits limits_for(const CollectionInfo &info) {
    BucketingLimits limits;
    limits.max_span_seconds = info.max_span_seconds;
    limits.rounding_seconds = info.rounding_seconds;
    limits.max_count = bucket_max_count;
    limits.max_size = bucket_max_size;
    limits.min_count = bucket_min_count;
    return limits;
}

CollectionFields fields_of(const CollectionInfo &info) {
    return CollectionFields{info.view_name, info.time_field, info.meta_field,
                            info.rounding_seconds};
}

// A stored bucket takes appends as tails (doc/ARCHITECTURE.md, "Tails")
// from this size of its data or this many measurements on: below both,
// writing the bucket again (decoding and encoding each measurement) costs
// about what a tail row costs. Compact buckets (regular times, readings
// that barely move) stay under the size for hundreds of measurements.
constexpr uint64_t kTailMinBytes = 512;
constexpr uint32_t kTailMinCount = 32;
// Tails are merged rather than folded only into a bucket row whose data is
// TOASTed (past about 2 kB): written inline, the row costs about what the
// merge's own writes do (the merged tail, and the bucket row written again
// to mark the merge, BucketStore::merge_tails).
constexpr uint64_t kMergeMinRowBytes = 2048;
// A bucket keeps at most this many tails (the next append merges or folds
// them, core::first_tail_to_merge; it folds them too when it stops being
// its series' open bucket), so that a read of an open bucket meets a
// bounded number of rows, and so that the entries of one bucket's tails in
// an index on the meta field stay within part of an index page: a bucket
// whose entries spill onto a page of their own leaves that page behind,
// all but empty, once it is folded (the dead entries are given back only
// where inserts still go, reclaim.hpp). The tails every series holds at
// once are also the heap's high-water mark, which later loads reuse but
// which stays: three eighths of a page (11 tails of TSBS's 230-byte tags)
// rather than half (15) took the 1,000-row INSERTs over 100 series from
// 25.2 to 24.5 bytes per measurement after the fold and VACUUM with no
// more CPU per row, where 12 or 13 tails saved nothing and 9 or 10 no
// more. Appends of a few measurements (single rows) keep half as many:
// their tails are written again in place (BucketStore::append_in_place),
// each on a page kept roomy for it, so that their pages, more than their
// entries, are the space the series holds until the fold; folding them
// twice as often costs those appends nothing measurable, and appends of
// more measurements 9% more CPU.
uint32_t max_tails(const Jsonb *meta, uint32_t appended) {
    uint32_t entry = (meta ? VARSIZE(meta) : 0) + 32;  // times, tuple header, line pointer
    uint32_t part_page = std::clamp<uint32_t>(BLCKSZ * 3 / 8 / entry, 8, 64);
    return BucketStore::grows_in_place(appended) ? part_page / 2 : part_page;
}

// Assigns one statement's measurements to buckets (doc/REFERENCE.md,
// Bucketing) and writes each touched bucket once.
class BucketWriter {
  public:
    explicit BucketWriter(const CollectionInfo &info) : info_(info), limits_(limits_for(info)) {}

    // Assigns and writes `series`, with the buckets `carried` from the
    // last flush; returns the buckets to carry to the next (none at the
    // statement's end).
    std::vector<CarriedBucket> run(std::vector<SeriesBatch> &series,
                                   std::vector<CarriedBucket> carried, bool end) {
        BucketStore store(info_);
        store_ = &store;
        for (CarriedBucket &c : carried) {
            by_id_[bucket_key(c.series_key, c.bucket->id())] = c.bucket.get();
            carried_of_[c.series_key].push_back(c.bucket.get());
            series_of_[c.bucket.get()] = c.series_key;
            meta_of_series_.emplace(c.series_key, std::move(c.meta));
            touched_.push_back(std::move(c.bucket));
        }
        for (SeriesBatch &batch : series)
            assign(batch);
        if (!end)
            carry_open_buckets();
        std::vector<TouchedBucket *> written;
        for (const auto &t : touched_) {
            if (t->carried)
                continue;
            if (t->created && t->meta == nullptr)
                t->meta = meta_of(*t);
            written.push_back(t.get());
        }
        encode_created(written);
        for (TouchedBucket *t : written)
            write(*t);
        store.finish();
        // Once the rows are written: the session's cache then holds the
        // open buckets as this flush left them (locked until it commits).
        for (AssignedSeries &a : assigned_) {
            bool written = a.open != nullptr && !a.open->carried;
            a.state.open_summary =
                written ? summary_of(info_.bucket_table, a.open->id()) : catalog::OpenSummary{};
            uint64_t chain = catalog::store_series(info_.bucket_table, *a.key, a.read, a.state,
                                                   a.open != nullptr && a.open->created);
            if (written)
                remember_chain(info_.bucket_table, a.open->id(), chain);
        }
        catalog::count(info_.bucket_table, counters_);
        return still_carried();
    }

  private:
    // The meta of a bucket carried from the last flush whose series this
    // flush did not see (nullptr: none).
    Jsonb *meta_of(const TouchedBucket &t) {
        const std::optional<Value> &meta = meta_of_series_.at(series_of_.at(&t));
        return meta ? value_to_jsonb(*meta) : nullptr;
    }
    std::vector<CarriedBucket> still_carried();
    static void encode_created(const std::vector<TouchedBucket *> &written);
    void carry_open_buckets();
    void assign(SeriesBatch &batch);
    static void archive(catalog::SeriesState &state, const catalog::BucketRef &ref);
    void append(TouchedBucket &t, Measurement &m, const BucketState::Decision &d);
    bool reopenable(const TouchedBucket &t, const Measurement &m) const;
    bool full_for_good(const TouchedBucket &t) const;
    TouchedBucket *reopen(catalog::SeriesState &state, const Measurement &m);
    TouchedBucket *use(const ObjectId &id);
    catalog::OpenSummary known_summary(const ObjectId &id) const;
    TouchedBucket &create(const Measurement &m, size_t room);
    void count_rollover(Rollover reason);
    void write(TouchedBucket &t);
    void write_stored(TouchedBucket &t, uint32_t appended);

    const CollectionInfo &info_;
    BucketingLimits limits_;
    BucketStore *store_ = nullptr;
    std::vector<std::unique_ptr<TouchedBucket>> touched_;
    // By series and id (bucket_key): a bucket moved to another series by
    // a meta UPDATE is not the same bucket to both.
    std::unordered_map<std::string, TouchedBucket *> by_id_;
    // Buckets this statement created for the series being assigned: not on
    // disk yet, yet as reopenable as if an earlier statement had written them.
    std::vector<TouchedBucket *> created_;
    Jsonb *series_meta_ = nullptr;
    const std::string *series_key_ = nullptr;
    BucketCounters counters_;
    // Each series' new state, stored in the catalog once its buckets are
    // written, so that it has the open bucket's next seq.
    struct AssignedSeries {
        const std::string *key;
        catalog::SeriesState read;  // as the catalog had it
        catalog::SeriesState state;
        TouchedBucket *open;
    };
    std::vector<AssignedSeries> assigned_;
    // Carried buckets by series, each carried or created bucket's series,
    // and the meta of every series seen or carried.
    std::unordered_map<std::string, std::vector<TouchedBucket *>> carried_of_;
    std::unordered_map<const TouchedBucket *, std::string> series_of_;
    std::unordered_map<std::string, std::optional<Value>> meta_of_series_;
};

std::vector<CarriedBucket> BucketWriter::still_carried() {
    std::vector<CarriedBucket> result;
    for (auto &t : touched_) {
        if (!t->carried)
            continue;
        const std::string &key = series_of_.at(t.get());
        t->meta = nullptr;  // built in this flush's memory
        t->carried = false;
        result.push_back(CarriedBucket{std::move(t), key, meta_of_series_.at(key)});
    }
    return result;
}

// Which open buckets created in this statement are kept to the next
// flush: as values while they fit, else packed while the packed ones fit
// (each also counts what it holds besides its measurements). Packing is
// shared with a second thread (pack_buckets); a bucket packed that then
// does not fit is written as it is.
void BucketWriter::carry_open_buckets() {
    uint64_t carried_bytes = 0, packed_bytes = 0;
    std::vector<TouchedBucket *> packing;
    std::vector<Bucket *> to_pack;
    for (const auto &t : touched_) {
        if (!t->created || !t->open)
            continue;
        Bucket &bucket = *t->created;
        uint64_t as_values = bucket.state().size() + kCarriedBucketBytes;
        if (bucket.packed_bytes() == 0 && carried_bytes + as_values <= kCarriedBytes) {
            carried_bytes += as_values;
            t->carried = true;
            continue;
        }
        // Packing does not make a bucket smaller than what it has packed.
        uint64_t at_least = bucket.packed_bytes() + kCarriedBucketBytes;
        if (packed_bytes + at_least > kCarriedPackedBytes)
            continue;
        packed_bytes += at_least;
        packing.push_back(t.get());
        to_pack.push_back(&bucket);
    }
    pack_buckets(to_pack);
    packed_bytes = 0;
    for (TouchedBucket *t : packing) {
        uint64_t packed = t->created->packed_bytes() + kCarriedBucketBytes;
        if (packed_bytes + packed > kCarriedPackedBytes)
            continue;
        packed_bytes += packed;
        t->carried = true;
    }
}

void BucketWriter::assign(SeriesBatch &batch) {
    series_meta_ = batch.meta ? value_to_jsonb(*batch.meta) : nullptr;
    meta_of_series_[batch.key] = batch.meta;
    created_.clear();
    // The series' buckets carried from the last flush: this statement's,
    // not on disk; the one still open is found through the catalog.
    for (TouchedBucket *t : carried_of_[batch.key]) {
        t->meta = series_meta_;
        t->open = false;
        created_.push_back(t);
    }
    catalog::SeriesState read = catalog::series(info_.bucket_table, batch.key);
    catalog::SeriesState state = read;
    series_key_ = &batch.key;
    TouchedBucket *current = state.open ? use(state.open->id) : nullptr;
    if (state.open && current == nullptr)  // most likely another writer's: kept for later
        archive(state, *state.open);
    if (current != nullptr && current->state().full())  // closed by size in another catalog
        current = nullptr;
    size_t unreserved = batch.measurements.size();
    for (size_t i = 0; i < batch.measurements.size(); i++) {
        Measurement &m = batch.measurements[i];
        Rollover reason = Rollover::None;
        if (current != nullptr) {
            BucketState::Decision d = current->state().decide(m, limits_);
            if (d.reason == Rollover::None) {
                append(*current, m, d);
                continue;
            }
            reason = d.reason;
            count_rollover(reason);
            if (reason == Rollover::Size)
                current->mark_full();
            if (reason == Rollover::TimeBackward)
                archive(state, {current->id(), current->state().min_time()});
        }
        current = reopen(state, m);
        if (current != nullptr) {
            counters_.numBucketsReopened++;
        } else {
            // Room for what it may take of the measurements to come; in
            // all, never more than the series has in this flush.
            size_t room = std::min({batch.measurements.size() - i, unreserved,
                                    static_cast<size_t>(limits_.max_count)});
            unreserved -= room;
            current = &create(m, room);
            if (reason == Rollover::None)
                counters_.numBucketsOpenedDueToMetadata++;
        }
        state.open = catalog::BucketRef{current->id(), current->state().min_time()};
        append(*current, m, current->state().decide(m, limits_));
    }
    if (current == nullptr)
        state.open.reset();
    else
        current->open = true;
    assigned_.push_back(AssignedSeries{&batch.key, std::move(read), std::move(state), current});
}

void BucketWriter::archive(catalog::SeriesState &state, const catalog::BucketRef &ref) {
    state.archived.push_back(ref);
    if (state.archived.size() > catalog::kMaxArchived)
        state.archived.erase(state.archived.begin());
}

void BucketWriter::append(TouchedBucket &t, Measurement &m, const BucketState::Decision &d) {
    if (d.kept_open_for_large_measurements && !t.kept_open_for_large) {
        t.kept_open_for_large = true;
        counters_.numBucketsKeptOpenDueToLargeMeasurements++;
    }
    t.append(std::move(m), d.schema_known);
}

// A bucket is reopened only while under the maximum size, even one that
// the size rule's exception for buckets under tscoll.bucket_min_count let
// grow past it, never once closed by size, and when it takes m
// (doc/REFERENCE.md, Bucketing).
bool BucketWriter::reopenable(const TouchedBucket &t, const Measurement &m) const {
    return !t.state().full() && t.state().size() < static_cast<uint64_t>(limits_.max_size) &&
           t.state().decide(m, limits_).reason == Rollover::None;
}

// Whether a bucket takes no measurement any more, whatever its time.
bool BucketWriter::full_for_good(const TouchedBucket &t) const {
    return t.state().full() || t.state().size() >= static_cast<uint64_t>(limits_.max_size) ||
           t.state().count() >= static_cast<uint32_t>(limits_.max_count);
}

// An archived bucket of the series that fits, else one found on disk.
TouchedBucket *BucketWriter::reopen(catalog::SeriesState &state, const Measurement &m) {
    int64_t span = info_.max_span_seconds * 1000000;
    for (size_t i = state.archived.size(); i-- > 0;) {
        const catalog::BucketRef ref = state.archived[i];
        if (m.time < ref.min_time || m.time - ref.min_time >= span)
            continue;
        // One that cannot be used now stays archived, for later
        // statements (most likely another writer's, locked or not yet
        // committed: a bucket gone for good is never loaded again, and
        // leaves once 8 newer archived buckets come); one full for good
        // leaves.
        TouchedBucket *t = use(ref.id);
        if (t != nullptr && (reopenable(*t, m) || full_for_good(*t))) {
            state.archived.erase(state.archived.begin() + static_cast<std::ptrdiff_t>(i));
            if (reopenable(*t, m))
                return t;
        }
    }
    if (!info_.reopen_index)
        return nullptr;
    // Latest start first, as the query orders the buckets on disk.
    std::vector<catalog::BucketRef> candidates = store_->reopen_candidates(series_meta_, m.time);
    for (const TouchedBucket *t : created_)
        if (m.time >= t->state().min_time() && m.time - t->state().min_time() < span)
            candidates.push_back({t->id(), t->state().min_time()});
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const catalog::BucketRef &a, const catalog::BucketRef &b) {
                         return a.min_time > b.min_time;
                     });
    for (const catalog::BucketRef &ref : candidates) {
        TouchedBucket *t = use(ref.id);
        if (t != nullptr && reopenable(*t, m))
            return t;
    }
    return nullptr;
}

// The bucket as this statement knows it for the series being assigned,
// loading it if needed; nullptr when it cannot be used (gone, closed, of
// another series now, or locked by another transaction).
TouchedBucket *BucketWriter::use(const ObjectId &id) {
    std::string key = bucket_key(*series_key_, id);
    if (auto it = by_id_.find(key); it != by_id_.end())
        return it->second;
    std::optional<StoredBucket> stored =
        store_->load(id, series_meta_, [&] { return known_summary(id); });
    if (!stored)
        return by_id_[key] = nullptr;  // not asked again in this statement
    touched_.push_back(std::make_unique<TouchedBucket>(
        TouchedBucket{std::nullopt, std::move(stored), series_meta_}));
    return by_id_[key] = touched_.back().get();
}

// The bucket as the shared catalog knows it, when it is the series' open
// bucket there; else zeros. A session's own catalog does not see other
// sessions' tails.
catalog::OpenSummary BucketWriter::known_summary(const ObjectId &id) const {
    if (!catalog::shared())
        return {};
    catalog::SeriesState state = catalog::series(info_.bucket_table, *series_key_);
    return state.open && state.open->id.bytes == id.bytes ? state.open_summary
                                                          : catalog::OpenSummary{};
}

// With room for `room` measurements in its columns (BucketData::reserve).
TouchedBucket &BucketWriter::create(const Measurement &m, size_t room) {
    UnixMicros start = bucket_start(m.time, info_.rounding_seconds);
    ObjectId id = ObjectId::generate(floor_div(start, 1000000));
    if (info_.distributed())
        id = id.with_series_hash(series_hash_of(*series_key_));
    touched_.push_back(std::make_unique<TouchedBucket>(
        TouchedBucket{Bucket(id, start, info_.time_field), std::nullopt, series_meta_}));
    touched_.back()->created->reserve(static_cast<uint32_t>(room));
    created_.push_back(touched_.back().get());
    series_of_[touched_.back().get()] = *series_key_;
    return *(by_id_[bucket_key(*series_key_, id)] = touched_.back().get());
}

void BucketWriter::count_rollover(Rollover reason) {
    switch (reason) {
        case Rollover::TimeForward:
            counters_.numBucketsClosedDueToTimeForward++;
            break;
        case Rollover::TimeBackward:
            counters_.numBucketsArchivedDueToTimeBackward++;
            break;
        case Rollover::Count:
            counters_.numBucketsClosedDueToCount++;
            break;
        case Rollover::Size:
            counters_.numBucketsClosedDueToSize++;
            break;
        case Rollover::SchemaChange:
            counters_.numBucketsClosedDueToSchemaChange++;
            break;
        case Rollover::None:
            break;
    }
}

// The new buckets among `written`, encoded together (on two threads when
// they are many).
void BucketWriter::encode_created(const std::vector<TouchedBucket *> &written) {
    std::vector<const Bucket *> buckets;
    for (const TouchedBucket *t : written)
        if (t->created)
            buckets.push_back(&*t->created);
    std::vector<EncodedBucket> encoded = encode_buckets(buckets);
    size_t next = 0;
    for (TouchedBucket *t : written)
        if (t->created)
            t->encoded = std::move(encoded[next++]);
}

// A new bucket is inserted. A stored bucket that stays open takes this
// statement's measurements as a tail when it is large enough: into its
// latest tail in place while that one is small, else as a tail of their
// own when it has room for one; with as many tails as it may keep, they are merged with some of
// them, or folded into it with every tail (core::first_tail_to_merge);
// otherwise it is written again, its tails folded in, as is a bucket with
// tails that stops being open (its row then grows no more). Tails that
// another transaction is changing are neither merged nor folded: the
// measurements then go to a tail all the same.
void BucketWriter::write(TouchedBucket &t) {
    uint32_t appended = t.appended_count();
    if (t.created) {
        store_->insert(*t.created, t.meta, std::move(*t.encoded));
        t.encoded.reset();
        counters_.numBucketInserts++;
        // Each later insert it took measurements of would have updated it.
        counters_.numBucketUpdates += t.statements - 1;
    } else {
        write_stored(t, appended);
        counters_.numBucketUpdates += t.statements;
    }
    // Only its full mark changed, or its tails folded: a row written, not a commit.
    if (appended == 0)
        return;
    counters_.numCommits += t.statements;
    counters_.numMeasurementsCommitted += appended;
}

void BucketWriter::write_stored(TouchedBucket &t, uint32_t appended) {
    const StoredBucket &stored = *t.stored;
    bool large =
        stored.stored_bytes >= kTailMinBytes || stored.state.count() - appended >= kTailMinCount;
    bool appending = appended > 0 && t.open && large;
    if (appending && store_->append_in_place(stored, t.appended, t.appended_latest, t.meta))
        return;
    if (appending && stored.tails + 1 < max_tails(t.meta, appended))
        return store_->insert_tail(stored, t.appended, t.appended_latest, t.meta);
    if (appended == 0 && !t.closed_full && (stored.tails == 0 || t.open))
        return;
    std::optional<std::vector<StoredTail>> tails = store_->load_tails(stored, t.meta);
    if (!tails) {
        if (appended > 0)
            store_->insert_tail(stored, t.appended, t.appended_latest, t.meta);
        return;
    }
    std::vector<uint32_t> counts;
    uint64_t in_tails = 0, tail_bytes = 0;
    for (const StoredTail &tail : *tails) {
        counts.push_back(tail.count);
        in_tails += tail.count;
        tail_bytes += tail.data.size();
    }
    if (appending && stored.stored_bytes >= tail_bytes + kMergeMinRowBytes) {
        uint64_t in_row =
            stored.state.count() - std::min<uint64_t>(stored.state.count(), in_tails + appended);
        if (std::optional<size_t> first = first_tail_to_merge(counts, in_row, appended))
            return store_->merge_tails(stored, *tails, *first, t.appended, t.appended_latest,
                                       t.meta);
    }
    store_->rewrite(stored, *tails, t.appended, t.closed_full, t.meta);
}

}  // namespace

void PendingInsert::flush(bool end) {
    std::vector<TimestampTz> times;
    if (lock_rollups_for_write(info))
        for (const SeriesBatch &s : series)
            for (const Measurement &m : s.measurements)
                times.push_back(to_timestamptz(m.time));
    carried = BucketWriter(info).run(series, std::move(carried), end);
    note_rollup_times(info.view, std::move(times));
    series.clear();
    index.clear();
    by_spelling.clear();
    std::fill(series_of_spelling.begin(), series_of_spelling.end(), kNoSeries);
    bytes = 0;
}

namespace {

PendingInsert &pending_for(Oid view) {
    auto it = pending.find(pending_key(view));
    if (it == pending.end()) {
        CollectionInfo info = lookup_collection(view);
        it = pending.emplace(pending_key(view), PendingInsert(std::move(info))).first;
    }
    return it->second;
}

// The row as the view will show it once stored, for INSERT ... RETURNING:
// the _id filled in, the time as stored, the meta field in doc, the typed
// fields read from it.
HeapTuple stored_row(const PreparedMeasurement &p, const CollectionInfo &info, TupleDesc desc) {
    std::vector<Datum> values(desc->natts, 0);
    std::vector<bool> nulls(desc->natts, false);
    values[info.view_time_column - 1] = TimestampTzGetDatum(to_timestamptz(p.measurement.time));
    if (info.view_meta_column != 0) {
        nulls[info.view_meta_column - 1] = !p.meta.has_value();
        if (p.meta)
            values[info.view_meta_column - 1] = PointerGetDatum(value_to_jsonb(*p.meta));
    }
    Value doc = view_document(p.measurement.fields, info.time_field, info.meta_field, p.meta);
    values[info.view_doc_column - 1] = PointerGetDatum(value_to_jsonb(doc));
    for (int i = info.view_doc_column; i < desc->natts; i++) {
        Form_pg_attribute column = TupleDescAttr(desc, i);
        bool null = false;
        values[i] = typed_column_datum(doc.find(NameStr(column->attname)), column->atttypid, &null);
        nulls[i] = null;
    }
    bool *null_flags = static_cast<bool *>(pg_call([&] { return palloc(desc->natts); }));
    std::copy(nulls.begin(), nulls.end(), null_flags);
    return pg_call([&] { return heap_form_tuple(desc, values.data(), null_flags); });
}

// Typed fields given as columns (doc/REFERENCE.md, Typed fields) are the
// measurement's fields, as the time and meta columns are; doc may hold a
// value that reads as the column's (then doc's is kept: INSERT ... SELECT *
// from a collection copies it whole), not another.
void typed_columns_into_doc(HeapTuple tuple, TupleDesc desc, const CollectionInfo &info,
                            MeasurementInput &input) {
    for (int i = info.view_doc_column; i < desc->natts; i++) {
        bool isnull = false;
        Datum d = heap_getattr(tuple, i + 1, desc, &isnull);
        if (isnull)
            continue;
        Form_pg_attribute column = TupleDescAttr(desc, i);
        const char *name = NameStr(column->attname);
        Value value = typed_field_value(d, column->atttypid);
        if (!input.doc)
            input.doc = Value::object();
        if (!input.doc->is(Value::Kind::Object))
            return;  // refused as it is
        if (const Value *given = input.doc->find(name); given != nullptr) {
            if (!typed_values_agree(*given, value, column->atttypid))
                throw Error(ErrorCode::BadValue,
                            std::string("the column \"") + name +
                                "\" and doc give different values for '" + name + "'",
                            "Collection \"" + info.view_name + "\".",
                            "Give the field in one place only.");
            continue;
        }
        input.doc->add(name, std::move(value));
    }
}

// The _id of a measurement whose doc has none, from a maker of this
// process's own (made again in a process forked after it was made).
ObjectId generated_id() {
    static std::unique_ptr<ObjectIdMaker> maker;
    static int maker_pid = 0;
    if (maker_pid != MyProcPid) {
        maker = std::make_unique<ObjectIdMaker>();
        maker_pid = MyProcPid;
    }
    return maker->make(static_cast<int64_t>(std::time(nullptr)));
}

TriggerData *trigger_data(FunctionCallInfo fcinfo, bool row_level) {
    auto *td = reinterpret_cast<TriggerData *>(fcinfo->context);
    if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_BY_INSERT(td->tg_event) ||
        (TRIGGER_FIRED_FOR_ROW(td->tg_event) != 0) != row_level)
        throw Error(ErrorCode::Internal,
                    "tscoll's insert triggers fire only on a collection's view");
    return td;
}

// MongoDB's error code for a refused measurement, for insert_many.
// Whether no index entry of a bucket holding the measurement can pass
// btree's 2,704 bytes: an entry holds the meta and, for an indexed field,
// its minimum and maximum, each at most a measurement's size. A statement
// with a larger one is not deferred, so that the error of a value too
// large for its index (54000) is the statement's own.
bool fits_any_index_entry(const PreparedMeasurement &p) {
    constexpr uint64_t kIndexEntryBytes = 2600;  // btree's limit, less the times and headers
    uint64_t meta = p.meta ? bson_value_size(*p.meta) : 0;
    return 2 * p.measurement.bson_size + meta <= kIndexEntryBytes;
}

int mongo_code(ErrorCode code) {
    switch (code) {
        case ErrorCode::TypeMismatch:
            return 14;
        case ErrorCode::TooLarge:
            return 10334;
        default:
            return 2;
    }
}

}  // namespace

bool measurements_gathered() {
    return !pending.empty();
}

void write_gathered_measurements() {
    // Taken out first: an error leaves none of them behind, whatever the
    // transaction does next.
    std::map<PendingKey, PendingInsert> gathered = std::move(pending);
    pending.clear();
    for (auto &[key, p] : gathered)
        p.flush(true);
}

bool has_only_own_triggers(Relation view) {
    TriggerDesc *triggers = view->trigdesc;
    if (triggers == nullptr || triggers->numtriggers != 2)
        return false;
    for (int i = 0; i < triggers->numtriggers; i++) {
        const char *name = triggers->triggers[i].tgname;
        if (strcmp(name, "gather_measurements") != 0 && strcmp(name, "write_buckets") != 0)
            return false;
    }
    return true;
}

void note_statement_start(const QueryDesc *query) {
    if (inserts_returning(query->plannedstmt))
        returning_inserts++;
}

void note_statement_end(const QueryDesc *query) {
    if (inserts_returning(query->plannedstmt) && returning_inserts > 0)
        returning_inserts--;
}

MeasurementBatch::MeasurementBatch(Oid view)
    : pending_(std::make_unique<PendingInsert>(lookup_collection(view))) {}

MeasurementBatch::~MeasurementBatch() = default;

const CollectionInfo &MeasurementBatch::collection() const {
    return pending_->info;
}

void MeasurementBatch::add(MeasurementInput input) {
    PendingInsert &p = *pending_;
    p.add(prepare_measurement(std::move(input), fields_of(p.info),
                              static_cast<uint64_t>(max_measurement_size), generated_id()));
}

void MeasurementBatch::add(PreparedMeasurement prepared) {
    pending_->add(std::move(prepared));
}

void MeasurementBatch::add(PreparedMeasurement prepared, uint32_t spelling) {
    pending_->add(std::move(prepared), spelling);
}

CollectionFields MeasurementBatch::fields() const {
    return fields_of(pending_->info);
}

void MeasurementBatch::flush_when_full() {
    pending_->flush_when_full();
}

void MeasurementBatch::finish() {
    pending_->flush(true);
}

void register_insert_callbacks() {
    RegisterXactCallback(discard_pending, nullptr);
    RegisterSubXactCallback(discard_pending_sub, nullptr);
    // Loaded by a statement already running (not preloaded): it may be an
    // INSERT ... RETURNING that the hook below did not see start.
    if (!process_shared_preload_libraries_in_progress)
        returning_inserts = 1;
}

}  // namespace tscoll::pg

using namespace tscoll;
using namespace tscoll::pg;

// tscoll._insert_measurement(): INSTEAD OF INSERT ... FOR EACH ROW on a
// collection's view. Columns: time, [meta,] doc.
TSCOLL_FUNCTION(tscoll_insert_measurement) {
    TriggerData *td = trigger_data(fcinfo, true);
    PendingInsert &p = pending_for(RelationGetRelid(td->tg_relation));
    TupleDesc desc = RelationGetDescr(td->tg_relation);
    HeapTuple tuple = td->tg_trigtuple;
    MeasurementInput input;
    bool isnull = false;
    Datum time = heap_getattr(tuple, 1, desc, &isnull);
    if (!isnull) {
        input.time = time_field_value(DatumGetTimestampTz(time));
        if (!input.time)
            throw_bad_date(fields_of(p.info));
    }
    if (!p.info.meta_field.empty())
        input.meta = jsonb_column(tuple, desc, 2);
    input.doc = jsonb_column(tuple, desc, p.info.view_doc_column);
    typed_columns_into_doc(tuple, desc, p.info, input);
    PreparedMeasurement prepared =
        prepare_measurement(std::move(input), fields_of(p.info),
                            static_cast<uint64_t>(max_measurement_size), generated_id());
    prepared.measurement.statement = statement_number();
    if (statement_deferred() && !fits_any_index_entry(prepared))
        write_at_statement_end();
    if (returning_inserts > 0)
        tuple = stored_row(prepared, p.info, desc);
    p.add(std::move(prepared));
    p.flush_when_full();
    return PointerGetDatum(tuple);
}

// tscoll._write_buckets(): AFTER INSERT ... FOR EACH STATEMENT on a
// collection's view: writes what the statement gathered.
TSCOLL_FUNCTION(tscoll_write_buckets) {
    TriggerData *td = trigger_data(fcinfo, false);
    auto it = pending.find(pending_key(RelationGetRelid(td->tg_relation)));
    if (it == pending.end() || statement_deferred())
        return PointerGetDatum(nullptr);
    PendingInsert p = std::move(it->second);
    pending.erase(it);
    p.flush(true);
    return PointerGetDatum(nullptr);
}

// tscoll.insert_many(collection regclass, docs jsonb, ordered boolean)
// RETURNS jsonb: MongoDB's insertMany, answered in its shape.
TSCOLL_FUNCTION(tscoll_insert_many) {
    Oid view = PG_GETARG_OID(0);
    Jsonb *docs = PG_GETARG_JSONB_P(1);
    bool ordered = PG_GETARG_BOOL(2);
    MeasurementBatch batch(view);
    check_view_privilege(batch.collection(), ACL_INSERT);
    Value array = jsonb_to_value(docs);
    if (!array.is(Value::Kind::Array))
        throw Error(ErrorCode::BadValue, "insert_many takes a JSON array of documents");
    Value errors = Value::array();
    int64_t inserted = 0;
    const Value::Array &elements = array.as_array();
    for (size_t i = 0; i < elements.size(); i++) {
        try {
            MeasurementInput input;
            input.doc = elements[i];
            batch.add(std::move(input));
            inserted++;
        } catch (const Error &e) {
            Value error = Value::object();
            error.add("index", Value::number(static_cast<int64_t>(i)));
            error.add("code", Value::number(mongo_code(e.code())));
            error.add("errmsg", Value::string(e.what()));
            errors.as_array().push_back(std::move(error));
            if (ordered)
                break;
        }
        batch.flush_when_full();
    }
    batch.finish();
    Value result = Value::object();
    result.add("nInserted", Value::number(inserted));
    result.add("writeErrors", std::move(errors));
    PG_RETURN_JSONB_P(value_to_jsonb(result));
}
