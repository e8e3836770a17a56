// Module entry: library load, and whether it was preloaded.
extern "C" {
#include "postgres.h"
#include "fmgr.h"
#include "miscadmin.h"

PG_MODULE_MAGIC;
void _PG_init(void);
}

#include "pg/catalog.hpp"
#include "pg/bucket_am.hpp"
#include "pg/copy_to.hpp"
#include "pg/guard.hpp"
#include "pg/insert.hpp"
#include "pg/modify.hpp"
#include "pg/read_plan.hpp"
#include "pg/returning.hpp"
#include "pg/rule_fallback.hpp"
#include "pg/settings.hpp"
#include "pg/ttl_monitor.hpp"
#include "pg/time_merge.hpp"
#include "pg/unpack_scan.hpp"

namespace {

// Set in the postmaster and inherited by every backend it forks.
bool loaded_at_server_start = false;

}  // namespace

void _PG_init(void) {
    loaded_at_server_start = process_shared_preload_libraries_in_progress;
    tscoll::pg::define_settings();
    if (loaded_at_server_start) {
        tscoll::pg::catalog::request_shared_memory();
        tscoll::pg::register_ttl_monitor();
    }
    tscoll::pg::catalog::register_transaction_callbacks();
    tscoll::pg::register_insert_callbacks();
    tscoll::pg::register_modify_hooks();
    tscoll::pg::register_read_plan_callbacks();
    tscoll::pg::register_unpack_scan();
    tscoll::pg::register_time_merge();
    tscoll::pg::register_bucket_table_hooks();
    tscoll::pg::register_copy_to_hook();
    tscoll::pg::register_returning_scan();
    tscoll::pg::register_rule_fallback();
}

// Called by CREATE EXTENSION: collections work without preloading, but the
// TTL monitor and the shared bucket catalog need it.
TSCOLL_FUNCTION(tscoll_check_preloaded) {
    if (!loaded_at_server_start)
        ereport(WARNING,
                (errmsg("tscoll is not in shared_preload_libraries"),
                 errdetail("Collections work, but the TTL monitor does not run and each session "
                           "keeps its own bucket catalog."),
                 errhint("Add tscoll to shared_preload_libraries in postgresql.conf and restart "
                         "the server.")));
    PG_RETURN_BOOL(loaded_at_server_start);
}
