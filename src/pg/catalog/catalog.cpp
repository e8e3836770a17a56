// The bucket catalog's storage: two hash tables of fixed-size entries,
// series and collection counters, in shared memory under one LWLock when
// preloaded, or in the session's memory (no lock) otherwise. A series is
// identified by its collection and a 128-bit hash of its series key.
#include "pg/catalog/catalog.hpp"

extern "C" {
#include "access/xact.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
}

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "pg/guard.hpp"
#include "pg/settings.hpp"

namespace tscoll::pg::catalog {

namespace {

struct SeriesId {
    Oid db;
    Oid bucket_table;
    uint64 hash[2];
};

struct SeriesSlot {
    SeriesId id;  // the hash key: first
    uint64 last_used;
    bool has_open;
    uint8 n_archived;
    BucketRef open;
    OpenSummary open_summary;  // its chain kept while the slot lives
    BucketRef archived[kMaxArchived];
};

struct CollectionId {
    Oid db;
    Oid bucket_table;
};

struct CollectionSlot {
    CollectionId id;
    BucketCounters counters;
};

struct SharedHeader {
    uint64 clock;
};

// Collections whose counters are kept; more get none until a restart.
constexpr long kMaxCollections = 4096;
// Bytes charged per series against tscoll.catalog_memory_limit.
constexpr uint64 kSlotBytes = sizeof(SeriesSlot) + 32;
constexpr const char *kTranche = "tscoll_catalog";

LWLock *lock = nullptr;  // nullptr: the catalog is the session's own
SharedHeader *header = nullptr;
HTAB *series_table = nullptr;
HTAB *collection_table = nullptr;

long series_capacity() {
    return std::max<long>(64, static_cast<long>(catalog_memory_limit_kb * 1024L / kSlotBytes));
}

HASHCTL hash_info(size_t key_size, size_t entry_size) {
    HASHCTL info{};
    info.keysize = key_size;
    info.entrysize = entry_size;
    return info;
}

}  // namespace

void request_shared_memory() {
    RequestAddinShmemSpace(
        add_size(add_size(MAXALIGN(sizeof(SharedHeader)),
                          hash_estimate_size(series_capacity(), sizeof(SeriesSlot))),
                 hash_estimate_size(kMaxCollections, sizeof(CollectionSlot))));
    RequestNamedLWLockTranche(kTranche, 1);
}

void attach_shared_memory() {
    LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
    bool found = false;
    header = static_cast<SharedHeader *>(
        ShmemInitStruct("tscoll catalog", sizeof(SharedHeader), &found));
    if (!found)
        header->clock = 0;
    HASHCTL series_info = hash_info(sizeof(SeriesId), sizeof(SeriesSlot));
    series_table = ShmemInitHash("tscoll catalog series", series_capacity(), series_capacity(),
                                 &series_info, HASH_ELEM | HASH_BLOBS);
    HASHCTL collection_info = hash_info(sizeof(CollectionId), sizeof(CollectionSlot));
    collection_table = ShmemInitHash("tscoll catalog collections", kMaxCollections, kMaxCollections,
                                     &collection_info, HASH_ELEM | HASH_BLOBS);
    lock = &GetNamedLWLockTranche(kTranche)->lock;
    LWLockRelease(AddinShmemInitLock);
}

namespace {

// The session's own catalog, created on first use when not preloaded.
void ensure_tables() {
    if (series_table != nullptr)
        return;
    pg_call([] {
        MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);
        header = static_cast<SharedHeader *>(palloc0(sizeof(SharedHeader)));
        HASHCTL series_info = hash_info(sizeof(SeriesId), sizeof(SeriesSlot));
        series_table =
            hash_create("tscoll catalog series", 256, &series_info, HASH_ELEM | HASH_BLOBS);
        HASHCTL collection_info = hash_info(sizeof(CollectionId), sizeof(CollectionSlot));
        collection_table =
            hash_create("tscoll catalog collections", 16, &collection_info, HASH_ELEM | HASH_BLOBS);
        MemoryContextSwitchTo(old);
    });
}

// Holds the catalog's lock, if it has one, for a scope. Nothing in such a
// scope may throw: hash operations on shared tables never allocate.
class Locked {
  public:
    explicit Locked(LWLockMode mode) {
        ensure_tables();
        if (lock != nullptr)
            LWLockAcquire(lock, mode);
    }
    ~Locked() {
        if (lock != nullptr)
            LWLockRelease(lock);
    }
    Locked(const Locked &) = delete;
    Locked &operator=(const Locked &) = delete;
};

// An entry, created if missing; nullptr when a shared table is full. A
// session's own table allocates, and may throw (it holds no lock).
void *enter(HTAB *table, const void *key, bool *found) {
    if (lock != nullptr)
        return hash_search(table, key, HASH_ENTER_NULL, found);
    return pg_call([&] { return hash_search(table, key, HASH_ENTER, found); });
}

CollectionSlot *collection_slot(Oid bucket_table, Oid db = MyDatabaseId) {
    CollectionId id{db, bucket_table};
    bool found = false;
    auto *slot = static_cast<CollectionSlot *>(enter(collection_table, &id, &found));
    if (slot != nullptr && !found)
        slot->counters = BucketCounters{};
    return slot;
}

SeriesId series_id(Oid bucket_table, const std::string &key) {
    SeriesId id;
    memset(&id, 0, sizeof(id));
    id.db = MyDatabaseId;
    id.bucket_table = bucket_table;
    const auto *bytes = reinterpret_cast<const unsigned char *>(key.data());
    int length = static_cast<int>(key.size());
    id.hash[0] = hash_bytes_extended(bytes, length, 0x7473636f6c6c3031ULL);
    id.hash[1] = hash_bytes_extended(bytes, length, 0x62756b6574733032ULL);
    return id;
}

// Over the memory limit: forgets the least recently used eighth of the
// series (by use clock). Their open buckets count as archived, then closed;
// all stay reopenable through the bucket table. Called with the lock held.
void evict() {
    uint64 oldest = UINT64_MAX, newest = 0;
    HASH_SEQ_STATUS scan;
    hash_seq_init(&scan, series_table);
    while (auto *slot = static_cast<SeriesSlot *>(hash_seq_search(&scan))) {
        oldest = std::min(oldest, slot->last_used);
        newest = std::max(newest, slot->last_used);
    }
    uint64 cutoff = oldest + (newest - oldest) / 8;
    hash_seq_init(&scan, series_table);
    while (auto *slot = static_cast<SeriesSlot *>(hash_seq_search(&scan))) {
        if (slot->last_used > cutoff)
            continue;
        if (CollectionSlot *c = collection_slot(slot->id.bucket_table, slot->id.db)) {
            c->counters.numBucketsArchivedDueToMemoryThreshold += slot->has_open ? 1 : 0;
            c->counters.numBucketsClosedDueToMemoryThreshold +=
                slot->n_archived + (slot->has_open ? 1 : 0);
        }
        hash_search(series_table, &slot->id, HASH_REMOVE, nullptr);
    }
}

void remove_series(const SeriesId &id) {
    hash_search(series_table, &id, HASH_REMOVE, nullptr);
}

// What the current transaction changed, to undo or apply when it ends:
// once per series and (sub)transaction (a COPY stores its series at every
// flush), the open bucket the series had before it and the one it created.
struct Touched {
    SubTransactionId subxact;
    SeriesId id;
    std::optional<BucketRef> found_open;
    std::optional<BucketRef> created_open;  // while still the series' open bucket
};

struct PendingCounters {
    SubTransactionId subxact;
    Oid bucket_table;
    BucketCounters delta;
};

std::vector<Touched> touched;
std::unordered_map<std::string, size_t> touched_at;  // by touched_key
std::vector<PendingCounters> pending_counters;

std::string touched_key(SubTransactionId subxact, const SeriesId &id) {
    return std::string(reinterpret_cast<const char *>(&subxact), sizeof subxact) +
           std::string(reinterpret_cast<const char *>(&id), sizeof id);
}

bool same_bucket(const std::optional<BucketRef> &a, const BucketRef &b) {
    return a && a->id.bytes == b.id.bytes;
}

void note_touched(const SeriesId &id, const std::optional<BucketRef> &found_open,
                  const std::optional<BucketRef> &open, bool open_created) {
    SubTransactionId subxact = GetCurrentSubTransactionId();
    auto [at, added] = touched_at.try_emplace(touched_key(subxact, id), touched.size());
    if (added)
        touched.push_back(Touched{subxact, id, found_open, std::nullopt});
    Touched &t = touched[at->second];
    if (open && open_created)
        t.created_open = open;
    else if (!open || !same_bucket(t.created_open, *open))
        t.created_open.reset();
}

// A series an aborted (sub)transaction stored keeps its buckets, but not
// its summary, which counts the aborted tails; its chain is new, as the
// aborted tails' seqs go to other writers' tails. An open bucket it
// created (gone now) gives way to the one the series had before. Forgetting
// the series instead would have its next writer open a bucket where none
// can be found again (a collection without a meta field has no index to
// reopen through).
void take_back(const Touched &t) {
    auto *slot = static_cast<SeriesSlot *>(hash_search(series_table, &t.id, HASH_FIND, nullptr));
    if (slot == nullptr)
        return;
    slot->open_summary = OpenSummary{};
    slot->open_summary.chain = ++header->clock;
    if (slot->has_open && same_bucket(t.created_open, slot->open)) {
        slot->has_open = t.found_open.has_value();
        if (t.found_open)
            slot->open = *t.found_open;
    }
}

// Where subtransaction `mine`'s entries start: they are the last ones,
// as only the current (deepest) subtransaction stores, and a committed
// one's entries become its parent's as it ends.
size_t first_touched_by(SubTransactionId mine) {
    size_t first = touched.size();
    while (first > 0 && touched[first - 1].subxact == mine)
        first--;
    return first;
}

// Takes back what the aborted (sub)transaction stored: every entry for
// the transaction (nullopt), else the subtransaction's.
void forget_touched(std::optional<SubTransactionId> subxact) {
    size_t first = subxact ? first_touched_by(*subxact) : 0;
    {
        Locked guard(LW_EXCLUSIVE);
        for (size_t i = first; i < touched.size(); i++)
            take_back(touched[i]);
    }
    for (size_t i = first; i < touched.size(); i++)
        touched_at.erase(touched_key(touched[i].subxact, touched[i].id));
    touched.resize(first);
    auto aborted = [&](const auto &t) { return !subxact || t.subxact == *subxact; };
    pending_counters.erase(
        std::remove_if(pending_counters.begin(), pending_counters.end(), aborted),
        pending_counters.end());
}

// A committed subtransaction's series become its parent's; one both
// touched keeps the parent's entry (its found open bucket), with the
// subtransaction's created bucket if it made one.
void hand_touched_to(SubTransactionId mine, SubTransactionId parent) {
    size_t first = first_touched_by(mine);
    size_t kept = first;
    for (size_t i = first; i < touched.size(); i++) {
        Touched t = std::move(touched[i]);
        touched_at.erase(touched_key(mine, t.id));
        auto [at, added] = touched_at.try_emplace(touched_key(parent, t.id), kept);
        if (added) {
            t.subxact = parent;
            touched[kept++] = std::move(t);
        } else if (t.created_open) {
            touched[at->second].created_open = t.created_open;
        }
    }
    touched.resize(kept);
}

void apply_pending_counters() {
    Locked guard(LW_EXCLUSIVE);
    for (const PendingCounters &p : pending_counters)
        if (CollectionSlot *c = collection_slot(p.bucket_table))
            c->counters.add(p.delta);
}

void on_xact(XactEvent event, void *) {
    try {
        if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_PARALLEL_COMMIT)
            apply_pending_counters();
        else if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT)
            forget_touched(std::nullopt);
        // PREPARE: the transaction may yet commit, keeping its buckets and
        // summaries; should it roll back, readers pass over its summaries
        // (OpenSummary::writer), and its buckets are gone like any other.
        else if (event != XACT_EVENT_PREPARE)
            return;
    } catch (...) {
        // Only a session's own table allocates; a lost hint or counter is
        // not an error.
    }
    touched.clear();
    touched_at.clear();
    pending_counters.clear();
}

void on_subxact(SubXactEvent event, SubTransactionId mine, SubTransactionId parent, void *) {
    try {
        if (event == SUBXACT_EVENT_COMMIT_SUB) {
            hand_touched_to(mine, parent);
            for (PendingCounters &p : pending_counters)
                if (p.subxact == mine)
                    p.subxact = parent;
        } else if (event == SUBXACT_EVENT_ABORT_SUB) {
            forget_touched(mine);
        }
    } catch (...) {
        touched.clear();
        touched_at.clear();
        pending_counters.clear();
    }
}

}  // namespace

bool shared() {
    return lock != nullptr;
}

SeriesState series(Oid bucket_table, const std::string &key) {
    SeriesId id = series_id(bucket_table, key);
    SeriesState state;
    state.archived.reserve(kMaxArchived);
    Locked guard(LW_EXCLUSIVE);
    auto *slot = static_cast<SeriesSlot *>(hash_search(series_table, &id, HASH_FIND, nullptr));
    if (slot == nullptr)
        return state;
    slot->last_used = ++header->clock;
    if (slot->has_open) {
        state.open = slot->open;
        state.open_summary = slot->open_summary;
    }
    state.archived.assign(slot->archived, slot->archived + slot->n_archived);
    return state;
}

namespace {

bool names(const SeriesState &state, const ObjectId &id) {
    return (state.open && state.open->id.bytes == id.bytes) ||
           std::any_of(state.archived.begin(), state.archived.end(),
                       [&](const BucketRef &r) { return r.id.bytes == id.bytes; });
}

// The slot's buckets that another writer stored since `read`: a bucket it
// opened while this writer held the series' open one (or the other way
// round). Kept as archived, so that neither is forgotten by the last
// writer to store and writers of one series keep to a few buckets.
// At most `capacity`. Called with the lock held.
size_t stored_by_others(const SeriesSlot &slot, const SeriesState &read, const SeriesState &state,
                        BucketRef *others, size_t capacity) {
    size_t n = 0;
    auto keep = [&](const BucketRef &ref) {
        if (n < capacity && !names(read, ref.id) && !names(state, ref.id))
            others[n++] = ref;
    };
    for (uint8 i = 0; i < slot.n_archived; i++)
        keep(slot.archived[i]);
    if (slot.has_open)
        keep(slot.open);
    return n;
}

// store_series's change to the slot; sets `found_open` to the slot's open
// bucket before it.
uint64_t store_slot(const SeriesId &id, const SeriesState &read, const SeriesState &state,
                    std::optional<BucketRef> &found_open) {
    Locked guard(LW_EXCLUSIVE);
    if (hash_get_num_entries(series_table) >= series_capacity())
        evict();
    bool found = false;
    auto *slot = static_cast<SeriesSlot *>(enter(series_table, &id, &found));
    if (slot == nullptr)
        return 0;
    if (found && slot->has_open)
        found_open = slot->open;
    // Others' first, so the oldest: each is also its writer's own, which
    // that writer stores again.
    BucketRef archived[2 * kMaxArchived + 1];
    size_t n = found ? stored_by_others(*slot, read, state, archived, kMaxArchived + 1) : 0;
    size_t own = std::min(state.archived.size(), kMaxArchived);
    std::copy(state.archived.end() - static_cast<std::ptrdiff_t>(own), state.archived.end(),
              archived + n);
    n += own;
    size_t n_archived = std::min(n, kMaxArchived);
    slot->last_used = ++header->clock;
    uint64 chain = found ? slot->open_summary.chain : slot->last_used;
    slot->has_open = state.open.has_value();
    if (state.open)
        slot->open = *state.open;
    slot->open_summary = state.open ? state.open_summary : OpenSummary{};
    slot->open_summary.chain = chain;
    slot->n_archived = static_cast<uint8>(n_archived);
    std::copy(archived + (n - n_archived), archived + n, slot->archived);
    return chain;
}

}  // namespace

uint64_t store_series(Oid bucket_table, const std::string &key, const SeriesState &read,
                      const SeriesState &state, bool open_created) {
    SeriesId id = series_id(bucket_table, key);
    std::optional<BucketRef> found_open;
    uint64_t chain = store_slot(id, read, state, found_open);
    // After the store: should this fail, the summary names a writer that
    // did not commit, which readers check (OpenSummary::writer).
    note_touched(id, found_open, state.open, open_created);
    return chain;
}

void forget_series(Oid bucket_table) {
    Locked guard(LW_EXCLUSIVE);
    HASH_SEQ_STATUS scan;
    hash_seq_init(&scan, series_table);
    while (auto *slot = static_cast<SeriesSlot *>(hash_seq_search(&scan)))
        if (slot->id.db == MyDatabaseId && slot->id.bucket_table == bucket_table)
            remove_series(slot->id);
}

void forget_collection(Oid bucket_table) {
    forget_series(bucket_table);
    CollectionId id{MyDatabaseId, bucket_table};
    Locked guard(LW_EXCLUSIVE);
    hash_search(collection_table, &id, HASH_REMOVE, nullptr);
}

void count(Oid bucket_table, const BucketCounters &delta) {
    pending_counters.push_back(PendingCounters{GetCurrentSubTransactionId(), bucket_table, delta});
}

BucketCounters counters(Oid bucket_table) {
    CollectionId id{MyDatabaseId, bucket_table};
    Locked guard(LW_SHARED);
    auto *slot =
        static_cast<CollectionSlot *>(hash_search(collection_table, &id, HASH_FIND, nullptr));
    return slot == nullptr ? BucketCounters{} : slot->counters;
}

Usage usage() {
    Usage u;
    Locked guard(LW_SHARED);
    HASH_SEQ_STATUS scan;
    hash_seq_init(&scan, series_table);
    while (auto *slot = static_cast<SeriesSlot *>(hash_seq_search(&scan))) {
        u.open_buckets += slot->has_open ? 1 : 0;
        u.archived_buckets += slot->n_archived;
        u.memory += kSlotBytes;
    }
    return u;
}

void register_transaction_callbacks() {
    RegisterXactCallback(on_xact, nullptr);
    RegisterSubXactCallback(on_subxact, nullptr);
}

}  // namespace tscoll::pg::catalog
