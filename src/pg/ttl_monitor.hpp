// The TTL monitor (SPEC §9): a launcher background worker that, every
// tscoll.ttl_monitor_sleep_secs, starts one short-lived worker per database
// in turn; each deletes expired buckets in batches, each its own
// transaction, and records its pass for tscoll.ttl_status().
#pragma once

namespace tscoll::pg {

// From _PG_init while preloading.
void register_ttl_monitor();

}  // namespace tscoll::pg
