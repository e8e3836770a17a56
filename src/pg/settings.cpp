#include "pg/settings.hpp"

extern "C" {
#include "postgres.h"
#include "miscadmin.h"
#include "utils/guc.h"
}

namespace tscoll::pg {

int bucket_max_count = 1000;
int bucket_max_size = 128000;
int bucket_min_count = 10;
int max_measurement_size = 4 * 1024 * 1024;
int catalog_memory_limit_kb = 64 * 1024;
bool ttl_monitor_enabled = true;
int ttl_monitor_sleep_secs = 60;
int ttl_batch_size = 1000;
bool enable_bucket_pruning = true;
bool enable_time_merge = true;
bool defer_inserts = true;

void define_settings() {
    DefineCustomIntVariable(
        "tscoll.bucket_max_count", "Maximum number of measurements in a bucket.", nullptr,
        &bucket_max_count, 1000, 1, 1000000, PGC_SUSET, 0, nullptr, nullptr, nullptr);
    DefineCustomIntVariable("tscoll.bucket_max_size",
                            "Maximum data size of a bucket, as the sum of its measurements' "
                            "BSON sizes.",
                            nullptr, &bucket_max_size, 128000, 1000, 16 * 1024 * 1024, PGC_SUSET,
                            GUC_UNIT_BYTE, nullptr, nullptr, nullptr);
    DefineCustomIntVariable("tscoll.bucket_min_count",
                            "Number of measurements below which a bucket may exceed "
                            "tscoll.bucket_max_size (large measurements).",
                            nullptr, &bucket_min_count, 10, 1, 1000, PGC_SUSET, 0, nullptr, nullptr,
                            nullptr);
    DefineCustomIntVariable("tscoll.max_measurement_size", "Maximum size of one measurement.",
                            nullptr, &max_measurement_size, 4 * 1024 * 1024, 1024, 16 * 1024 * 1024,
                            PGC_SUSET, GUC_UNIT_BYTE, nullptr, nullptr, nullptr);
    // PostgreSQL allows server-start settings only while preloading; a
    // library loaded later keeps a per-session catalog and reads it on reload.
    DefineCustomIntVariable(
        "tscoll.catalog_memory_limit",
        "Memory above which the bucket catalog archives, then forgets, idle "
        "buckets.",
        nullptr, &catalog_memory_limit_kb, 64 * 1024, 1024, 64 * 1024 * 1024,
        process_shared_preload_libraries_in_progress ? PGC_POSTMASTER : PGC_SIGHUP, GUC_UNIT_KB,
        nullptr, nullptr, nullptr);
    DefineCustomBoolVariable("tscoll.ttl_monitor_enabled",
                             "Whether the TTL monitor deletes expired buckets.", nullptr,
                             &ttl_monitor_enabled, true, PGC_SIGHUP, 0, nullptr, nullptr, nullptr);
    DefineCustomIntVariable("tscoll.ttl_monitor_sleep_secs",
                            "Seconds between two passes of the TTL monitor.", nullptr,
                            &ttl_monitor_sleep_secs, 60, 1, 24 * 3600, PGC_SIGHUP, GUC_UNIT_S,
                            nullptr, nullptr, nullptr);
    DefineCustomIntVariable(
        "tscoll.ttl_batch_size", "Buckets the TTL monitor deletes per transaction.", nullptr,
        &ttl_batch_size, 1000, 1, 1000000, PGC_SIGHUP, 0, nullptr, nullptr, nullptr);
    DefineCustomBoolVariable(
        "tscoll.enable_bucket_pruning",
        "Whether queries on collections skip buckets that cannot match and decode only the "
        "fields they read.",
        "Off reads every bucket whole, for comparison.", &enable_bucket_pruning, true, PGC_USERSET,
        0, nullptr, nullptr, nullptr);
    DefineCustomBoolVariable(
        "tscoll.enable_time_merge",
        "Whether a query ordering a collection's measurements by time merges its buckets' "
        "rows in time order rather than sorting them all.",
        "Off sorts them, for comparison.", &enable_time_merge, true, PGC_USERSET, 0, nullptr,
        nullptr, nullptr);
    DefineCustomBoolVariable(
        "tscoll.defer_inserts",
        "Whether inserts into a collection inside a transaction block are written when the "
        "transaction commits, or before its next statement that is not such an insert.",
        "Off writes each statement's measurements when it ends.", &defer_inserts, true, PGC_USERSET,
        0, nullptr, nullptr, nullptr);
    MarkGUCPrefixReserved("tscoll");
}

}  // namespace tscoll::pg
