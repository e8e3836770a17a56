// The TTL monitor. Plain PostgreSQL C style throughout: worker mains use
// PG_TRY and longjmp, so no C++ object with a destructor lives here.
#include "pg/ttl/ttl_monitor.hpp"

extern "C" {
#include "postgres.h"
#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_class.h"
#include "catalog/pg_database.h"
#include "catalog/pg_type_d.h"
#include "commands/dbcommands.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "tcop/tcopprot.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

PGDLLEXPORT void tscoll_ttl_launcher_main(Datum);
PGDLLEXPORT void tscoll_ttl_database_main(Datum);
PGDLLEXPORT Datum tscoll_expire_as_owner(PG_FUNCTION_ARGS);
PG_FUNCTION_INFO_V1(tscoll_expire_as_owner);
}

#include "pg/guard.hpp"
#include "pg/search_path.hpp"
#include "pg/settings.hpp"

namespace {

constexpr int kMaxDatabases = 64;

struct DatabaseStatus {
    Oid db;
    TimestampTz pass_start;
    TimestampTz pass_end;
    int64 buckets_deleted;  // in the last pass
    int64 errors;           // in the last pass
    char last_error[256];
};

struct TtlShared {
    LWLock *lock;
    DatabaseStatus databases[kMaxDatabases];
};

TtlShared *shared = nullptr;

// While tscoll._expire_as_owner runs.
bool expiring = false;

}  // namespace

namespace tscoll::pg {

bool expiring_buckets() {
    return expiring;
}

void request_ttl_shared_memory() {
    RequestAddinShmemSpace(MAXALIGN(sizeof(TtlShared)));
    RequestNamedLWLockTranche("tscoll_ttl", 1);
}

void attach_ttl_shared_memory() {
    LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
    bool found = false;
    shared = static_cast<TtlShared *>(ShmemInitStruct("tscoll ttl", sizeof(TtlShared), &found));
    if (!found) {
        memset(shared, 0, sizeof(TtlShared));
        shared->lock = &GetNamedLWLockTranche("tscoll_ttl")->lock;
    }
    LWLockRelease(AddinShmemInitLock);
}

}  // namespace tscoll::pg

namespace {

// The status slot of a database (a free one, or the oldest, when new).
DatabaseStatus *status_slot(Oid db) {
    DatabaseStatus *oldest = &shared->databases[0];
    for (DatabaseStatus &s : shared->databases) {
        if (s.db == db)
            return &s;
        if (s.db == InvalidOid || s.pass_end < oldest->pass_end)
            oldest = &s;
    }
    memset(oldest, 0, sizeof(*oldest));
    oldest->db = db;
    return oldest;
}

// Databases that accept connections (templates excluded).
List *database_list() {
    List *dbs = NIL;
    StartTransactionCommand();
    Relation rel = table_open(DatabaseRelationId, AccessShareLock);
    TableScanDesc scan = table_beginscan_catalog(rel, 0, nullptr);
    HeapTuple tuple;
    while ((tuple = heap_getnext(scan, ForwardScanDirection)) != nullptr) {
        auto *db = reinterpret_cast<Form_pg_database>(GETSTRUCT(tuple));
        if (db->datallowconn && !db->datistemplate) {
            MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);
            dbs = lappend_oid(dbs, db->oid);
            MemoryContextSwitchTo(old);
        }
    }
    table_endscan(scan);
    table_close(rel, AccessShareLock);
    CommitTransactionCommand();
    return dbs;
}

// Starts the worker of one database and waits for its pass to end.
void run_database_pass(Oid db) {
    BackgroundWorker worker;
    memset(&worker, 0, sizeof(worker));
    worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
    worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
    worker.bgw_restart_time = BGW_NEVER_RESTART;
    snprintf(worker.bgw_library_name, BGW_MAXLEN, "tscoll");
    snprintf(worker.bgw_function_name, BGW_MAXLEN, "tscoll_ttl_database_main");
    snprintf(worker.bgw_name, BGW_MAXLEN, "tscoll TTL worker for database %u", db);
    snprintf(worker.bgw_type, BGW_MAXLEN, "tscoll TTL worker");
    worker.bgw_main_arg = ObjectIdGetDatum(db);
    worker.bgw_notify_pid = MyProcPid;
    BackgroundWorkerHandle *handle = nullptr;
    if (!RegisterDynamicBackgroundWorker(&worker, &handle)) {
        ereport(LOG, (errmsg("tscoll TTL monitor: no background worker slot for database %u", db),
                      errhint("Raise max_worker_processes.")));
        return;
    }
    pid_t pid;
    if (WaitForBackgroundWorkerStartup(handle, &pid) == BGWH_STARTED)
        WaitForBackgroundWorkerShutdown(handle);
    pfree(handle);
}

// Runs one statement returning one bigint (NULL counting as 0).
int64 run_bigint(const char *query, int nargs, Oid *types, Datum *values, const char *nulls) {
    if (SPI_connect() != SPI_OK_CONNECT)
        elog(ERROR, "SPI_connect failed");
    int search_path = tscoll::pg::push_catalog_search_path();
    int64 result = 0;
    if (SPI_execute_with_args(query, nargs, types, values, nulls, false, 0) == SPI_OK_SELECT &&
        SPI_processed == 1) {
        bool isnull = false;
        Datum d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
        result = isnull ? 0 : DatumGetInt64(d);
    }
    tscoll::pg::pop_search_path(search_path);
    SPI_finish();
    return result;
}

// The same, in a transaction of its own, READ COMMITTED whatever the
// database's default: a rollup's refresh must see the writers it waited
// for (tscoll._refresh_rollup).
int64 run_in_transaction(const char *query, int nargs, Oid *types, Datum *values) {
    SetCurrentStatementStartTimestamp();
    StartTransactionCommand();
    XactIsoLevel = XACT_READ_COMMITTED;
    PushActiveSnapshot(GetTransactionSnapshot());
    int64 result = run_bigint(query, nargs, types, values, nullptr);
    PopActiveSnapshot();
    CommitTransactionCommand();
    return result;
}

// The oids of the collections with an expiry rule; empty without tscoll.
// Also copies the database's name (catalogs are read in transactions only).
List *expiring_collections(char *db_name) {
    List *views = NIL;
    SetCurrentStatementStartTimestamp();
    StartTransactionCommand();
    PushActiveSnapshot(GetTransactionSnapshot());
    strlcpy(db_name, get_database_name(MyDatabaseId), NAMEDATALEN);
    if (OidIsValid(get_extension_oid("tscoll", true))) {
        SPI_connect();
        if (SPI_execute("SELECT v::oid FROM tscoll._expiring_collections() v", true, 0) ==
            SPI_OK_SELECT) {
            for (uint64 i = 0; i < SPI_processed; i++) {
                bool isnull = false;
                Datum d = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull);
                MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);
                views = lappend_oid(views, DatumGetObjectId(d));
                MemoryContextSwitchTo(old);
            }
        }
        SPI_finish();
    }
    PopActiveSnapshot();
    CommitTransactionCommand();
    return views;
}

// Expires one collection batch by batch; returns buckets deleted. An error
// is logged and recorded, and ends this collection's turn only.
int64 expire_collection(Oid view, TimestampTz now, int64 *errors, char *last_error) {
    volatile int64 total = 0;
    Oid types[] = {OIDOID, TIMESTAMPTZOID, INT4OID};
    Datum values[] = {ObjectIdGetDatum(view), TimestampTzGetDatum(now),
                      Int32GetDatum(tscoll::pg::ttl_batch_size)};
    MemoryContext context = CurrentMemoryContext;
    for (;;) {
        volatile int64 deleted = 0;
        PG_TRY();
        {
            deleted = run_in_transaction("SELECT tscoll._expire_as_owner($1::regclass, $2, $3)", 3,
                                         types, values);
        }
        PG_CATCH();
        {
            MemoryContextSwitchTo(context);
            ErrorData *error = CopyErrorData();
            FlushErrorState();
            AbortCurrentTransaction();
            ereport(LOG, (errmsg("tscoll TTL monitor: expiring collection %u failed: %s", view,
                                 error->message)));
            (*errors)++;
            strlcpy(last_error, error->message, sizeof(DatabaseStatus::last_error));
            FreeErrorData(error);
            return total;
        }
        PG_END_TRY();
        total += deleted;
        if (deleted == 0)
            return total;
        CHECK_FOR_INTERRUPTS();
    }
}

void apply_pending_reload() {
    if (ConfigReloadPending) {
        ConfigReloadPending = false;
        ProcessConfigFile(PGC_SIGHUP);
    }
}

}  // namespace

// The worker of one database: one pass, then exit.
void tscoll_ttl_database_main(Datum arg) {
    Oid db = DatumGetObjectId(arg);
    pqsignal(SIGTERM, die);
    BackgroundWorkerUnblockSignals();
    BackgroundWorkerInitializeConnectionByOid(db, InvalidOid, 0);
    // The worker runs tscoll's SQL only: no name through the database's path.
    SetConfigOption("search_path", "pg_catalog, pg_temp", PGC_USERSET, PGC_S_SESSION);
    pgstat_report_appname("tscoll TTL worker");
    TimestampTz start = GetCurrentTimestamp();
    int64 deleted = 0, errors = 0;
    char last_error[sizeof(DatabaseStatus::last_error)] = "";
    char db_name[NAMEDATALEN] = "";
    List *volatile views = NIL;
    MemoryContext context = CurrentMemoryContext;
    PG_TRY();
    { views = expiring_collections(db_name); }
    PG_CATCH();
    {
        MemoryContextSwitchTo(context);
        ErrorData *error = CopyErrorData();
        FlushErrorState();
        AbortCurrentTransaction();
        ereport(LOG,
                (errmsg("tscoll TTL monitor: reading the collections of database %u failed: %s", db,
                        error->message)));
        errors++;
        strlcpy(last_error, error->message, sizeof(last_error));
    }
    PG_END_TRY();
    ListCell *cell;
    foreach (cell, views)
        deleted += expire_collection(lfirst_oid(cell), start, &errors, last_error);
    if (deleted > 0)
        ereport(LOG, (errmsg("tscoll TTL monitor: deleted %lld expired buckets in database \"%s\"",
                             static_cast<long long>(deleted), db_name)));
    LWLockAcquire(shared->lock, LW_EXCLUSIVE);
    DatabaseStatus *s = status_slot(db);
    s->pass_start = start;
    s->pass_end = GetCurrentTimestamp();
    s->buckets_deleted = deleted;
    s->errors = errors;
    strlcpy(s->last_error, last_error, sizeof(s->last_error));
    LWLockRelease(shared->lock);
    proc_exit(0);
}

// The launcher: a pass over every database, then sleep.
void tscoll_ttl_launcher_main(Datum) {
    pqsignal(SIGHUP, SignalHandlerForConfigReload);
    pqsignal(SIGTERM, die);
    BackgroundWorkerUnblockSignals();
    BackgroundWorkerInitializeConnection(nullptr, nullptr, 0);
    pgstat_report_appname("tscoll TTL monitor");
    for (;;) {
        if (tscoll::pg::ttl_monitor_enabled) {
            List *dbs = database_list();
            ListCell *cell;
            foreach (cell, dbs) {
                CHECK_FOR_INTERRUPTS();
                run_database_pass(lfirst_oid(cell));
            }
            list_free(dbs);
        }
        // Waiting for a worker consumes latch wake-ups, a reload's too: a
        // pending reload is applied before choosing how long to sleep.
        apply_pending_reload();
        (void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
                        tscoll::pg::ttl_monitor_sleep_secs * 1000L, PG_WAIT_EXTENSION);
        ResetLatch(MyLatch);
        CHECK_FOR_INTERRUPTS();
        apply_pending_reload();
    }
}

// The owner of a relation; InvalidOid when it is gone.
static Oid relation_owner(Oid relation) {
    HeapTuple tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relation));
    if (!HeapTupleIsValid(tuple))
        return InvalidOid;
    Oid owner = reinterpret_cast<Form_pg_class>(GETSTRUCT(tuple))->relowner;
    ReleaseSysCache(tuple);
    return owner;
}

static int64 expire_collection_now(Datum view, Datum now, Datum batch_size, bool batch_null) {
    Oid types[] = {REGCLASSOID, TIMESTAMPTZOID, INT4OID};
    Datum values[] = {view, now, batch_size};
    const char nulls[] = {' ', ' ', batch_null ? 'n' : ' '};
    return run_bigint("SELECT tscoll._expire_collection($1, $2, $3)", 3, types, values, nulls);
}

// tscoll._expire_as_owner(collection regclass, now timestamptz, batch_size
// integer): one collection's expiry, run as the collection's owner in a
// security-restricted context, as VACUUM and REFRESH MATERIALIZED VIEW run
// as a table's owner: whatever the owner attached to the bucket table
// (triggers, rules, policies) never runs with the rights of the superuser
// TTL monitor or of a superuser calling run_ttl_pass(). Only those with the
// owner's privileges may call it: `now` decides what expires.
Datum tscoll_expire_as_owner(PG_FUNCTION_ARGS) {
    if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
        PG_RETURN_NULL();
    Oid view = PG_GETARG_OID(0);
    Oid owner = relation_owner(view);
    if (!OidIsValid(owner))
        PG_RETURN_INT64(0);
    if (!has_privs_of_role(GetUserId(), owner))
        ereport(ERROR,
                (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                 errmsg("must be owner of time-series collection %s",
                        DatumGetCString(DirectFunctionCall1(regclassout, ObjectIdGetDatum(view)))),
                 errhint("Expired measurements are removed by tscoll.run_ttl_pass() and the "
                         "TTL monitor.")));
    Oid saved_user;
    int saved_context;
    GetUserIdAndSecContext(&saved_user, &saved_context);
    SetUserIdAndSecContext(
        owner, saved_context | SECURITY_LOCAL_USERID_CHANGE | SECURITY_RESTRICTED_OPERATION);
    volatile int64 deleted = 0;
    PG_TRY();
    {
        expiring = true;
        deleted = expire_collection_now(PG_GETARG_DATUM(0), PG_GETARG_DATUM(1), PG_GETARG_DATUM(2),
                                        PG_ARGISNULL(2));
    }
    PG_FINALLY();
    {
        expiring = false;
        SetUserIdAndSecContext(saved_user, saved_context);
    }
    PG_END_TRY();
    PG_RETURN_INT64(deleted);
}

// tscoll.ttl_status() RETURNS TABLE (database name, last_pass_start
// timestamptz, last_pass_end timestamptz, buckets_deleted bigint, errors
// bigint, last_error text): one row per database the monitor has visited.
TSCOLL_FUNCTION(tscoll_ttl_status) {
    auto *rsinfo = reinterpret_cast<ReturnSetInfo *>(fcinfo->resultinfo);
    tscoll::pg::pg_call([&] {
        InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
        if (shared == nullptr)
            return;
        DatabaseStatus copy[kMaxDatabases];
        LWLockAcquire(shared->lock, LW_SHARED);
        memcpy(copy, shared->databases, sizeof(copy));
        LWLockRelease(shared->lock);
        for (const DatabaseStatus &s : copy) {
            if (s.db == InvalidOid)
                continue;
            char *name = get_database_name(s.db);
            if (name == nullptr)
                continue;
            Datum values[6] = {CStringGetDatum(name),           TimestampTzGetDatum(s.pass_start),
                               TimestampTzGetDatum(s.pass_end), Int64GetDatum(s.buckets_deleted),
                               Int64GetDatum(s.errors),         CStringGetTextDatum(s.last_error)};
            NameData db_name;
            namestrcpy(&db_name, name);
            values[0] = NameGetDatum(&db_name);
            bool nulls[6] = {false, false, false, false, false, s.last_error[0] == '\0'};
            tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
        }
    });
    return PointerGetDatum(nullptr);
}

namespace tscoll::pg {

void register_ttl_monitor() {
    BackgroundWorker worker;
    memset(&worker, 0, sizeof(worker));
    worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
    worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
    worker.bgw_restart_time = 10;
    snprintf(worker.bgw_library_name, BGW_MAXLEN, "tscoll");
    snprintf(worker.bgw_function_name, BGW_MAXLEN, "tscoll_ttl_launcher_main");
    snprintf(worker.bgw_name, BGW_MAXLEN, "tscoll TTL monitor");
    snprintf(worker.bgw_type, BGW_MAXLEN, "tscoll TTL monitor");
    RegisterBackgroundWorker(&worker);
}

}  // namespace tscoll::pg
