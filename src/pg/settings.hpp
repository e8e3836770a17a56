// tscoll's GUCs (doc/REFERENCE.md §4, Settings).
#pragma once

namespace tscoll::pg {

extern int bucket_max_count;
extern int bucket_max_size;
extern int bucket_min_count;
extern int max_measurement_size;
extern int catalog_memory_limit_kb;
extern bool ttl_monitor_enabled;
extern int ttl_monitor_sleep_secs;
extern int ttl_batch_size;
extern bool enable_bucket_pruning;
extern bool enable_time_merge;
extern bool defer_inserts;

void define_settings();

}  // namespace tscoll::pg
