// Inserts deferred to the end of their transaction (deferred.hpp).
//
// Why the rules below keep every observer of a collection seeing what the
// transaction inserted:
//  * Only statements the client runs are deferred or write what was
//    deferred: not those run by a function or inside a utility command (a
//    DO block, CALL, EXECUTE), which may run in subtransactions. A
//    deferred measurement must be written in the transaction level that
//    gathered it, or a rolled back subtransaction would take it along.
//    Deferred measurements exist only at the top level: SAVEPOINT, like
//    any utility command, writes them first.
//  * A deferrable insert calls no function but PostgreSQL's own (a user's
//    function could read the collection, or start a subtransaction) and
//    reads no bucket table; its view has no trigger but tscoll's; its
//    bucket table is written without the executor (no trigger, rule or
//    row security of the user's, which must not run at the commit, after
//    PostgreSQL's deferred triggers); the collection is not distributed
//    (Citus prepares its remote transactions at the commit).
//  * Any other statement of the client writes the deferred measurements
//    before it starts, and its snapshot then takes them in (as
//    PostgreSQL's own UpdateActiveSnapshotCommandId does between the
//    statements of a multi-statement portal).
extern "C" {
#include "postgres.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/pg_class.h"
#include "nodes/parsenodes.h"
#include "parser/parsetree.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
}

#include "core/error.hpp"
#include "pg/catalog/collection.hpp"
#include "pg/guard.hpp"
#include "pg/settings.hpp"
#include "pg/storage/bucket_am.hpp"
#include "pg/write/bucket_rows.hpp"
#include "pg/write/deferred.hpp"
#include "pg/write/insert.hpp"
#include "pg/write/rollup_notes.hpp"

namespace tscoll::pg {

namespace {

int executor_depth = 0;  // statements started and not ended
int utility_depth = 0;   // utility commands running
bool writing = false;    // deferred measurements being written
bool deferring = false;  // the client's statement running is deferred
uint64_t client_statements = 0;

bool run_by_client() {
    return executor_depth == 0 && utility_depth == 0 && !writing;
}

bool calls_own_functions_only(const PlannedStmt *stmt) {
    // The planner records a dependency on every function that is not
    // PostgreSQL's own (setrefs.c, record_plan_function_dependency),
    // inlined SQL functions included.
    ListCell *lc;
    foreach (lc, stmt->invalItems)
        if (static_cast<const PlanInvalItem *>(lfirst(lc))->cacheId == PROCOID)
            return false;
    return true;
}

bool reads_bucket_tables(const PlannedStmt *stmt, Oid target) {
    ListCell *lc;
    foreach (lc, stmt->rtable) {
        auto *rte = static_cast<const RangeTblEntry *>(lfirst(lc));
        if (rte->rtekind == RTE_RELATION && rte->relid != target && is_bucket_table(rte->relid))
            return true;
    }
    return false;
}

// The view's and bucket table's part of the rules (PostgreSQL calls).
bool writes_plainly(Oid view, Oid bucket_table) {
    Relation v = table_open(view, AccessShareLock);
    bool plain = has_only_own_triggers(v);
    table_close(v, AccessShareLock);
    if (!plain)
        return false;
    Relation b = table_open(bucket_table, AccessShareLock);
    plain = inserts_directly(b);
    table_close(b, AccessShareLock);
    return plain;
}

// A transaction block, or statements of the extended protocol sent
// together before a Sync: from the second, PostgreSQL knows that the
// transaction goes on past the statement (XACT_FLAGS_PIPELINING).
bool more_statements_follow() {
    return IsTransactionBlock() || (MyXactFlags & XACT_FLAGS_PIPELINING) != 0;
}

bool deferrable(const QueryDesc *query) {
    const PlannedStmt *stmt = query->plannedstmt;
    if (!defer_inserts || query->operation != CMD_INSERT || stmt->hasModifyingCTE ||
        list_length(stmt->resultRelations) != 1 || !more_statements_follow() ||
        GetCurrentTransactionNestLevel() != 1 || !calls_own_functions_only(stmt))
        return false;
    const RangeTblEntry *target_entry = rt_fetch(linitial_int(stmt->resultRelations), stmt->rtable);
    if (target_entry->relkind != RELKIND_VIEW)
        return false;
    Oid target = target_entry->relid;
    if (pg_call([&] { return reads_bucket_tables(stmt, target); }))
        return false;
    std::optional<CollectionInfo> info = find_collection(target);
    if (!info || info->distributed())
        return false;
    return pg_call([&] { return writes_plainly(info->view, info->bucket_table); });
}

// Writes what the client's earlier statements deferred; whether there
// was any. Never in a subtransaction (see above): reaching one with
// measurements deferred would be a broken rule, and an error is better
// than measurements lost with a subtransaction.
bool write_deferred() {
    if (!measurements_gathered())
        return false;
    if (GetCurrentTransactionNestLevel() != 1)
        throw Error(ErrorCode::Internal,
                    "deferred measurements reached a subtransaction unwritten");
    // A COMMIT or a PREPARE runs without a snapshot; an error aborts the
    // transaction, which pops it.
    bool pushed = !ActiveSnapshotSet();
    if (pushed)
        pg_call([] { PushActiveSnapshot(GetTransactionSnapshot()); });
    writing = true;
    try {
        write_gathered_measurements();
    } catch (...) {
        writing = false;
        throw;
    }
    writing = false;
    if (pushed)
        pg_call([] { PopActiveSnapshot(); });
    return true;
}

// A snapshot taken before the deferred measurements were written sees
// them once it has the command id that follows their writes; only a
// snapshot no one else holds is changed.
void see_written(Snapshot snapshot, int registrations) {
    CommandCounterIncrement();
    if (snapshot != nullptr && IsMVCCSnapshot(snapshot) &&
        snapshot->regd_count == static_cast<uint32>(registrations) && snapshot->active_count <= 1)
        snapshot->curcid = GetCurrentCommandId(false);
}

void on_transaction_end(XactEvent event, void *) {
    if (event == XACT_EVENT_PRE_COMMIT || event == XACT_EVENT_PRE_PREPARE) {
        guarded([] {
            bool wrote = write_deferred();
            // Whichever of the callbacks runs first, the notes of the
            // buckets written here reach the rollups.
            if (wrote)
                flush_rollup_notes();
        });
        return;
    }
    // An error ends statements without their ExecutorEnd or the utility
    // hook's cleanup. (A procedure's own ROLLBACK comes here too, with its
    // CALL running: the rest of it then counts as the client's, in a
    // transaction that is no transaction block, so nothing of it is
    // deferred.)
    if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT) {
        executor_depth = 0;
        utility_depth = 0;
        writing = false;
        deferring = false;
    }
}

}  // namespace

void before_statement_start(QueryDesc *query) {
    bool by_client = run_by_client();
    executor_depth++;
    if (!by_client)
        return;
    client_statements++;
    guarded([&] {
        deferring = deferrable(query);
        if (!deferring && write_deferred())
            pg_call([&] { see_written(query->snapshot, 1); });
    });
}

void after_statement_end() {
    if (executor_depth > 0)
        executor_depth--;
}

void before_utility(const PlannedStmt *pstmt) {
    bool by_client = run_by_client();
    utility_depth++;
    if (!by_client)
        return;
    deferring = false;
    // A ROLLBACK discards them with the rest.
    if (IsA(pstmt->utilityStmt, TransactionStmt) &&
        castNode(TransactionStmt, pstmt->utilityStmt)->kind == TRANS_STMT_ROLLBACK)
        return;
    guarded([] {
        if (write_deferred())
            pg_call([] { see_written(ActiveSnapshotSet() ? GetActiveSnapshot() : nullptr, 0); });
    });
}

void after_utility() {
    if (utility_depth > 0)
        utility_depth--;
}

void write_at_statement_end() {
    deferring = false;
}

bool statement_deferred() {
    return deferring && executor_depth == 1 && GetCurrentTransactionNestLevel() == 1;
}

uint64_t statement_number() {
    return client_statements;
}

void register_deferred_callbacks() {
    RegisterXactCallback(on_transaction_end, nullptr);
}

}  // namespace tscoll::pg
