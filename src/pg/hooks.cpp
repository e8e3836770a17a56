// The module: _PG_init, and every hook tscoll installs, each chained to
// the one installed before it and dispatching to the subsystems. A
// statement on a collection passes them in this order:
//
//   post_parse_analyze  dml/modify: UPDATE/DELETE of a view translated
//   planner             plan/read_plan: reads of views rewritten (pruning,
//                       lazy unpacking, aggregation in buckets); dml/modify:
//                       a translated statement's RETURNING; nodes/: the
//                       unpack scan and the time merge put in the plan
//   get_relation_info   storage/bucket_am: parallel scans sized by TOAST
//   ExecutorStart/End   write/insert: inserts with RETURNING noted;
//                       write/deferred: inserts deferred, or what they
//                       deferred written first
//   ExecutorRun         dml/modify: a translated statement counts and
//                       returns measurements
//   ExecutorFinish      dml/rule_fallback: a rule statement's matches checked;
//                       write/rollup_notes: changed bucket rows noted
//   ProcessUtility      write/deferred: deferred inserts written first;
//                       write/copy_from: COPY <collection> FROM STDIN;
//                       dml/copy_to: COPY <collection> TO; write/rollup_notes:
//                       TRUNCATE of a bucket table noted, notes flushed
//   shmem_request/startup  catalog/, ttl/: shared memory, when preloaded
extern "C" {
#include "postgres.h"
#include "executor/executor.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "optimizer/plancat.h"
#include "optimizer/planner.h"
#include "parser/analyze.h"
#include "storage/ipc.h"
#include "tcop/utility.h"

PG_MODULE_MAGIC;
void _PG_init(void);
}

#include "pg/catalog/catalog.hpp"
#include "pg/catalog/distribution.hpp"
#include "pg/dml/copy_to.hpp"
#include "pg/dml/modify.hpp"
#include "pg/dml/rule_fallback.hpp"
#include "pg/guard.hpp"
#include "pg/nodes/returning.hpp"
#include "pg/nodes/time_merge.hpp"
#include "pg/nodes/unpack_scan.hpp"
#include "pg/plan/read_plan.hpp"
#include "pg/settings.hpp"
#include "pg/storage/bucket_am.hpp"
#include "pg/ttl/ttl_monitor.hpp"
#include "pg/write/copy_from.hpp"
#include "pg/write/deferred.hpp"
#include "pg/write/insert.hpp"
#include "pg/write/rollup_notes.hpp"

namespace {

// Set in the postmaster and inherited by every backend it forks.
bool loaded_at_server_start = false;

shmem_request_hook_type prev_shmem_request = nullptr;
shmem_startup_hook_type prev_shmem_startup = nullptr;
post_parse_analyze_hook_type prev_post_parse_analyze = nullptr;
planner_hook_type prev_planner = nullptr;
get_relation_info_hook_type prev_get_relation_info = nullptr;
ExecutorStart_hook_type prev_executor_start = nullptr;
ExecutorRun_hook_type prev_executor_run = nullptr;
ExecutorFinish_hook_type prev_executor_finish = nullptr;
ExecutorEnd_hook_type prev_executor_end = nullptr;
ProcessUtility_hook_type prev_process_utility = nullptr;

void on_shmem_request() {
    if (prev_shmem_request)
        prev_shmem_request();
    tscoll::pg::catalog::request_shared_memory();
    tscoll::pg::request_ttl_shared_memory();
}

void on_shmem_startup() {
    if (prev_shmem_startup)
        prev_shmem_startup();
    tscoll::pg::catalog::attach_shared_memory();
    tscoll::pg::attach_ttl_shared_memory();
}

void on_post_parse_analyze(ParseState *pstate, Query *query, JumbleState *jstate) {
    if (prev_post_parse_analyze)
        prev_post_parse_analyze(pstate, query, jstate);
    tscoll::pg::translate_modification(query);
}

PlannedStmt *on_planner(Query *parse, const char *query_string, int cursor_options,
                        ParamListInfo params) {
    tscoll::pg::plan_collection_reads(parse);
    tscoll::pg::TranslatedReturning returning = tscoll::pg::take_returning(parse);
    PlannedStmt *result = prev_planner
                              ? prev_planner(parse, query_string, cursor_options, params)
                              : standard_planner(parse, query_string, cursor_options, params);
    tscoll::pg::finish_translated_plan(parse, result, returning);
    if (tscoll::pg::enable_bucket_pruning && tscoll::pg::use_unpack_scans(result, cursor_options) &&
        tscoll::pg::enable_time_merge)
        tscoll::pg::use_time_merges(result);
    return result;
}

void on_get_relation_info(PlannerInfo *root, Oid relid, bool inhparent, RelOptInfo *rel) {
    if (prev_get_relation_info)
        prev_get_relation_info(root, relid, inhparent, rel);
    tscoll::pg::size_parallel_scan(relid, rel);
}

void on_executor_start(QueryDesc *query, int eflags) {
    tscoll::pg::before_statement_start(query);
    if (prev_executor_start)
        prev_executor_start(query, eflags);
    else
        standard_ExecutorStart(query, eflags);
    tscoll::pg::note_statement_start(query);
    tscoll::pg::note_executor_start();
}

void run_executor(QueryDesc *query, ScanDirection direction, uint64 count, bool execute_once) {
    if (prev_executor_run)
        prev_executor_run(query, direction, count, execute_once);
    else
        standard_ExecutorRun(query, direction, count, execute_once);
}

void run_counting(QueryDesc *query, ScanDirection direction, bool execute_once,
                  DestReceiver *counter) {
    DestReceiver *client = query->dest;
    query->dest = counter;
    // Every row, whatever the caller's limit: the client gets none of them.
    PG_TRY();
    { run_executor(query, direction, 0, execute_once); }
    PG_CATCH();
    {
        query->dest = client;
        tscoll::pg::finish_counting_run(query, counter);
        PG_RE_THROW();
    }
    PG_END_TRY();
    query->dest = client;
    tscoll::pg::finish_counting_run(query, counter);
}

void on_executor_run(QueryDesc *query, ScanDirection direction, uint64 count, bool execute_once) {
    if (DestReceiver *counter = tscoll::pg::start_counting_run(query)) {
        run_counting(query, direction, execute_once, counter);
        return;
    }
    tscoll::pg::ModificationCount counted = {false, false, 0, nullptr};
    bool translated = tscoll::pg::start_translated_run(query, &counted);
    tscoll::pg::ModificationCount *saved = tscoll::pg::counted_modification;
    tscoll::pg::counted_modification = translated ? &counted : nullptr;
    PG_TRY();
    { run_executor(query, direction, count, execute_once); }
    PG_CATCH();
    {
        tscoll::pg::counted_modification = saved;
        if (translated)
            tscoll::pg::reword_moved_rows_error(query->estate->es_query_cxt);
        PG_RE_THROW();
    }
    PG_END_TRY();
    tscoll::pg::counted_modification = saved;
    if (translated)
        query->estate->es_processed = counted.measurements;
}

void on_executor_finish(QueryDesc *query) {
    if (prev_executor_finish)
        prev_executor_finish(query);
    else
        standard_ExecutorFinish(query);
    tscoll::pg::check_rule_matches(query);
    tscoll::pg::guarded([] { tscoll::pg::flush_rollup_notes(); });
}

void on_executor_end(QueryDesc *query) {
    tscoll::pg::after_statement_end();
    tscoll::pg::note_statement_end(query);
    tscoll::pg::note_executor_end();
    if (prev_executor_end)
        prev_executor_end(query);
    else
        standard_ExecutorEnd(query);
}

void run_utility(PlannedStmt *pstmt, const char *query_string, bool read_only_tree,
                 ProcessUtilityContext context, ParamListInfo params, QueryEnvironment *query_env,
                 DestReceiver *dest, QueryCompletion *qc) {
    if (tscoll::pg::copy_into_collection(pstmt, query_string, qc))
        return;
    if (IsA(pstmt->utilityStmt, TruncateStmt))
        tscoll::pg::guarded(
            [&] { tscoll::pg::note_truncation(castNode(TruncateStmt, pstmt->utilityStmt)); });
    if (PlannedStmt *copy_query = tscoll::pg::copy_to_as_query(pstmt)) {
        pstmt = copy_query;
        read_only_tree = false;
    }
    if (PlannedStmt *drop = tscoll::pg::drop_of_distributed_views(pstmt)) {
        pstmt = drop;
        read_only_tree = false;
    }
    if (prev_process_utility)
        prev_process_utility(pstmt, query_string, read_only_tree, context, params, query_env, dest,
                             qc);
    else
        standard_ProcessUtility(pstmt, query_string, read_only_tree, context, params, query_env,
                                dest, qc);
    tscoll::pg::guarded([] { tscoll::pg::flush_rollup_notes(); });
}

void on_process_utility(PlannedStmt *pstmt, const char *query_string, bool read_only_tree,
                        ProcessUtilityContext context, ParamListInfo params,
                        QueryEnvironment *query_env, DestReceiver *dest, QueryCompletion *qc) {
    tscoll::pg::before_utility(pstmt);
    PG_TRY();
    { run_utility(pstmt, query_string, read_only_tree, context, params, query_env, dest, qc); }
    PG_FINALLY();
    { tscoll::pg::after_utility(); }
    PG_END_TRY();
}

void install_hooks() {
    if (loaded_at_server_start) {
        prev_shmem_request = shmem_request_hook;
        shmem_request_hook = on_shmem_request;
        prev_shmem_startup = shmem_startup_hook;
        shmem_startup_hook = on_shmem_startup;
    }
    prev_post_parse_analyze = post_parse_analyze_hook;
    post_parse_analyze_hook = on_post_parse_analyze;
    prev_planner = planner_hook;
    planner_hook = on_planner;
    prev_get_relation_info = get_relation_info_hook;
    get_relation_info_hook = on_get_relation_info;
    prev_executor_start = ExecutorStart_hook;
    ExecutorStart_hook = on_executor_start;
    prev_executor_run = ExecutorRun_hook;
    ExecutorRun_hook = on_executor_run;
    prev_executor_finish = ExecutorFinish_hook;
    ExecutorFinish_hook = on_executor_finish;
    prev_executor_end = ExecutorEnd_hook;
    ExecutorEnd_hook = on_executor_end;
    prev_process_utility = ProcessUtility_hook;
    ProcessUtility_hook = on_process_utility;
}

}  // namespace

void _PG_init(void) {
    loaded_at_server_start = process_shared_preload_libraries_in_progress;
    tscoll::pg::define_settings();
    install_hooks();
    if (loaded_at_server_start)
        tscoll::pg::register_ttl_monitor();
    tscoll::pg::catalog::register_transaction_callbacks();
    tscoll::pg::register_insert_callbacks();
    tscoll::pg::register_deferred_callbacks();
    tscoll::pg::register_rollup_note_callbacks();
    tscoll::pg::register_rule_fallback();
    tscoll::pg::register_bucket_table_callbacks();
    tscoll::pg::register_unpack_scan();
    tscoll::pg::register_time_merge();
    tscoll::pg::register_returning_scan();
    // Statements parsed before tscoll was loaded in this session are
    // parsed again, now translated.
    if (!loaded_at_server_start)
        tscoll::pg::parse_cached_statements_again();
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
