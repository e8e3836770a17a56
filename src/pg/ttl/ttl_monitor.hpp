// The TTL monitor (doc/REFERENCE.md §2.6, TTL): a launcher background
// worker that, every tscoll.ttl_monitor_sleep_secs, starts one short-lived
// worker per database in turn; each deletes expired buckets in batches,
// each its own transaction, and records its pass for tscoll.ttl_status().
#pragma once

namespace tscoll::pg {

// From _PG_init while preloading: the launcher worker.
void register_ttl_monitor();
// The shared memory hooks' work: the monitor's status per database.
void request_ttl_shared_memory();
void attach_ttl_shared_memory();
// Whether expiry is deleting buckets: rollups keep what their collection
// expires (doc/REFERENCE.md §2.8).
bool expiring_buckets();

}  // namespace tscoll::pg
