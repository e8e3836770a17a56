// The bucket catalog, kept per session for now (see doc/ARCHITECTURE.md).
#include "pg/catalog.hpp"

extern "C" {
#include "access/xact.h"
}

#include <algorithm>
#include <unordered_map>

#include "pg/settings.hpp"

namespace tscoll::pg::catalog {

namespace {

struct SeriesEntry {
    SeriesState state;
    uint64_t last_used = 0;
};

struct CollectionEntry {
    std::unordered_map<std::string, SeriesEntry> series;
    BucketCounters counters;
};

struct Touched {
    SubTransactionId subxact;
    Oid bucket_table;
    std::string key;
};

struct PendingCounters {
    SubTransactionId subxact;
    Oid bucket_table;
    BucketCounters delta;
};

std::unordered_map<Oid, CollectionEntry> collections;
std::vector<Touched> touched;
std::vector<PendingCounters> pending_counters;
uint64_t clock = 0;

uint64_t entry_memory(const std::string &key, const SeriesEntry &e) {
    return sizeof(SeriesEntry) + key.size() + e.state.archived.size() * sizeof(BucketRef) + 64;
}

uint64_t memory_used() {
    uint64_t total = 0;
    for (const auto &[oid, c] : collections)
        for (const auto &[key, e] : c.series)
            total += entry_memory(key, e);
    return total;
}

// Over the memory limit, archives the least recently used open buckets,
// then forgets archived ones: both stay reopenable from the bucket table.
void enforce_memory_limit() {
    uint64_t limit = static_cast<uint64_t>(catalog_memory_limit_kb) * 1024;
    uint64_t used = memory_used();
    if (used <= limit)
        return;
    std::vector<std::pair<uint64_t, std::pair<Oid, const std::string *>>> by_age;
    for (auto &[oid, c] : collections)
        for (auto &[key, e] : c.series)
            by_age.push_back({e.last_used, {oid, &key}});
    std::sort(by_age.begin(), by_age.end());
    std::vector<std::pair<Oid, std::string>> victims;
    for (const auto &[age, where] : by_age) {
        if (used <= limit)
            break;
        CollectionEntry &c = collections[where.first];
        SeriesEntry &e = c.series[*where.second];
        used -= entry_memory(*where.second, e);
        if (e.state.open)
            c.counters.numBucketsArchivedDueToMemoryThreshold++;
        c.counters.numBucketsClosedDueToMemoryThreshold +=
            e.state.archived.size() + (e.state.open ? 1 : 0);
        victims.emplace_back(where.first, *where.second);
    }
    for (const auto &[oid, key] : victims)
        collections[oid].series.erase(key);
}

void forget_touched(std::optional<SubTransactionId> subxact) {
    auto aborted = [&](const Touched &t) { return !subxact || t.subxact == *subxact; };
    for (const Touched &t : touched) {
        if (!aborted(t))
            continue;
        auto c = collections.find(t.bucket_table);
        if (c != collections.end())
            c->second.series.erase(t.key);
    }
    touched.erase(std::remove_if(touched.begin(), touched.end(), aborted), touched.end());
}

void on_xact(XactEvent event, void *) {
    try {
        if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_PARALLEL_COMMIT) {
            for (const PendingCounters &p : pending_counters)
                collections[p.bucket_table].counters.add(p.delta);
        } else if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT) {
            forget_touched(std::nullopt);
        } else {
            return;
        }
    } catch (...) {
        // Only allocation can fail here; a lost hint or counter is not an error.
        collections.clear();
    }
    touched.clear();
    pending_counters.clear();
}

void on_subxact(SubXactEvent event, SubTransactionId mine, SubTransactionId parent, void *) {
    try {
        if (event == SUBXACT_EVENT_COMMIT_SUB) {
            for (Touched &t : touched)
                if (t.subxact == mine)
                    t.subxact = parent;
            for (PendingCounters &p : pending_counters)
                if (p.subxact == mine)
                    p.subxact = parent;
        } else if (event == SUBXACT_EVENT_ABORT_SUB) {
            forget_touched(mine);
            pending_counters.erase(
                std::remove_if(pending_counters.begin(), pending_counters.end(),
                               [&](const PendingCounters &p) { return p.subxact == mine; }),
                pending_counters.end());
        }
    } catch (...) {
        collections.clear();
        touched.clear();
        pending_counters.clear();
    }
}

}  // namespace

SeriesState series(Oid bucket_table, const std::string &key) {
    auto c = collections.find(bucket_table);
    if (c == collections.end())
        return {};
    auto e = c->second.series.find(key);
    if (e == c->second.series.end())
        return {};
    e->second.last_used = ++clock;
    return e->second.state;
}

void store_series(Oid bucket_table, const std::string &key, SeriesState state) {
    touched.push_back(Touched{GetCurrentSubTransactionId(), bucket_table, key});
    SeriesEntry &e = collections[bucket_table].series[key];
    e.state = std::move(state);
    e.last_used = ++clock;
    enforce_memory_limit();
}

void forget_collection(Oid bucket_table) {
    auto c = collections.find(bucket_table);
    if (c != collections.end())
        c->second.series.clear();
}

void count(Oid bucket_table, const BucketCounters &delta) {
    pending_counters.push_back(PendingCounters{GetCurrentSubTransactionId(), bucket_table, delta});
}

BucketCounters counters(Oid bucket_table) {
    auto c = collections.find(bucket_table);
    return c == collections.end() ? BucketCounters{} : c->second.counters;
}

Usage usage() {
    Usage u;
    for (const auto &[oid, c] : collections)
        for (const auto &[key, e] : c.series) {
            u.open_buckets += e.state.open ? 1 : 0;
            u.archived_buckets += e.state.archived.size();
        }
    u.memory = memory_used();
    return u;
}

void register_transaction_callbacks() {
    RegisterXactCallback(on_xact, nullptr);
    RegisterSubXactCallback(on_subxact, nullptr);
}

}  // namespace tscoll::pg::catalog
