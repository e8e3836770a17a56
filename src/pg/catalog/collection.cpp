#include "pg/catalog/collection.hpp"

extern "C" {
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type_d.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/array.h"
#include "utils/snapmgr.h"
}

#include <unordered_map>

#include "core/error.hpp"
#include "pg/guard.hpp"
#include "pg/search_path.hpp"

namespace tscoll::pg {

namespace {

// By view; view_name is printed on each lookup (it depends on the caller's
// search_path).
std::unordered_map<Oid, CollectionInfo> by_view;
std::unordered_map<Oid, Oid> view_of_bucket_table;
bool callback_registered = false;

void forget(Datum, Oid relid) {
    if (!OidIsValid(relid)) {
        by_view.clear();
        view_of_bucket_table.clear();
        return;
    }
    auto bucket = view_of_bucket_table.find(relid);
    Oid view = bucket != view_of_bucket_table.end() ? bucket->second : relid;
    auto it = by_view.find(view);
    if (it == by_view.end())
        return;
    view_of_bucket_table.erase(it->second.bucket_table);
    by_view.erase(it);
}

std::string text_column(HeapTuple row, TupleDesc desc, int column) {
    bool isnull = false;
    Datum d = pg_call([&] { return SPI_getbinval(row, desc, column, &isnull); });
    if (isnull)
        return {};
    return pg_call([&] { return TextDatumGetCString(d); });
}

int64_t int_column(HeapTuple row, TupleDesc desc, int column) {
    bool isnull = false;
    Datum d = pg_call([&] { return SPI_getbinval(row, desc, column, &isnull); });
    return isnull ? 0 : DatumGetInt64(d);
}

// The catalog row of the collection whose `key` column ("view" or
// "bucket_table") is `relid`, read with search_path pinned.
std::optional<CollectionInfo> read_collection_row(const char *key, Oid relid) {
    CatalogSearchPath pinned;
    pg_call([] {
        if (SPI_connect() != SPI_OK_CONNECT)
            elog(ERROR, "SPI_connect failed");
    });
    // tscoll.rollups is missing while an update from 0.1.0 is pending.
    bool rollups_exist = pg_call(
        [] { return OidIsValid(get_relname_relid("rollups", get_namespace_oid("tscoll", true))); });
    std::string query =
        "SELECT c.view::oid, c.bucket_table::oid, r.relowner, "
        "       c.time_field, c.meta_field, c.bucket_max_span_seconds::int8, "
        "       c.bucket_rounding_seconds::int8, "
        "       EXISTS (SELECT FROM pg_catalog.pg_index i "
        "                WHERE i.indrelid = r.oid AND i.indisvalid AND i.indpred IS NULL "
        "                  AND (i.indkey[0] = 5 OR (c.meta_field IS NOT NULL "
        "                       AND i.indkey[0] = 2 AND i.indkey[1] = 5))), "
        "       " +
        std::string(rollups_exist ? "ARRAY(SELECT x.storage::oid FROM tscoll.rollups x "
                                    "       WHERE x.collection = c.view ORDER BY 1)"
                                  : "'{}'::pg_catalog.oid[]") +
        "  FROM tscoll.collections c JOIN pg_catalog.pg_class r ON r.oid = c.bucket_table "
        " WHERE c." +
        std::string(key) + " = $1";
    Oid types[] = {OIDOID};
    Datum values[] = {ObjectIdGetDatum(relid)};
    // The latest snapshot: a descriptor outlives the transaction that reads
    // it, and one read with a snapshot older than the lock its reader waited
    // for (a REPEATABLE READ transaction's, a statement's taken before
    // create_rollup committed) would miss rollups for good.
    uint64 rows = pg_call([&] {
        SPIPlanPtr plan = SPI_prepare(query.c_str(), 1, types);
        if (plan == nullptr)
            elog(ERROR, "SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
        // (A parallel worker cannot take a snapshot: it reads the leader's.)
        Snapshot snapshot = IsInParallelMode() ? GetActiveSnapshot() : GetLatestSnapshot();
        int rc =
            SPI_execute_snapshot(plan, values, nullptr, snapshot, InvalidSnapshot, true, false, 1);
        if (rc != SPI_OK_SELECT)
            elog(ERROR, "reading tscoll.collections failed: %s", SPI_result_code_string(rc));
        return SPI_processed;
    });
    if (rows != 1) {
        pg_call([] { SPI_finish(); });
        return std::nullopt;
    }
    HeapTuple row = SPI_tuptable->vals[0];
    TupleDesc desc = SPI_tuptable->tupdesc;
    CollectionInfo info;
    info.view = static_cast<Oid>(int_column(row, desc, 1) & 0xFFFFFFFF);
    info.bucket_table = static_cast<Oid>(int_column(row, desc, 2) & 0xFFFFFFFF);
    info.owner = static_cast<Oid>(int_column(row, desc, 3) & 0xFFFFFFFF);
    info.time_field = text_column(row, desc, 4);
    info.meta_field = text_column(row, desc, 5);
    info.max_span_seconds = int_column(row, desc, 6);
    info.rounding_seconds = int_column(row, desc, 7);
    bool isnull = false;
    info.reopen_index = DatumGetBool(SPI_getbinval(row, desc, 8, &isnull));
    Datum *storages = nullptr;
    int count = 0;
    pg_call([&] {
        deconstruct_array(DatumGetArrayTypeP(SPI_getbinval(row, desc, 9, &isnull)), OIDOID,
                          sizeof(Oid), true, TYPALIGN_INT, &storages, nullptr, &count);
    });
    for (int i = 0; i < count; i++)
        info.rollup_storages.push_back(DatumGetObjectId(storages[i]));
    pg_call([] { SPI_finish(); });
    return info;
}

std::optional<CollectionInfo> cached(Oid view) {
    auto it = by_view.find(view);
    if (it == by_view.end())
        return std::nullopt;
    CollectionInfo info = it->second;
    info.view_name = display_name(view);
    return info;
}

// Reads and keeps a row (a collection unknown now is asked again next time).
std::optional<CollectionInfo> load(const char *key, Oid relid) {
    if (!callback_registered) {
        pg_call([] { CacheRegisterRelcacheCallback(forget, 0); });
        callback_registered = true;
    }
    std::optional<CollectionInfo> info = read_collection_row(key, relid);
    if (!info)
        return std::nullopt;
    info->bucket_name = qualified_name(info->bucket_table);
    pg_call([&] {
        info->view_time_column = get_attnum(info->view, info->time_field.c_str());
        if (!info->meta_field.empty())
            info->view_meta_column = get_attnum(info->view, info->meta_field.c_str());
        info->view_doc_column = get_attnum(info->view, "doc");
        info->bucket_meta_column = get_attnum(info->bucket_table, "meta");
        info->bucket_min_time_column = get_attnum(info->bucket_table, "min_time");
        info->bucket_max_time_column = get_attnum(info->bucket_table, "max_time");
        info->bucket_series_hash_column = get_attnum(info->bucket_table, "series_hash");
    });
    view_of_bucket_table[info->bucket_table] = info->view;
    by_view[info->view] = *info;
    return cached(info->view);
}

}  // namespace

std::optional<CollectionInfo> find_collection(Oid view) {
    if (std::optional<CollectionInfo> info = cached(view))
        return info;
    return load("view", view);
}

std::optional<CollectionInfo> find_collection_of_bucket_table(Oid bucket_table) {
    if (auto it = view_of_bucket_table.find(bucket_table); it != view_of_bucket_table.end())
        return cached(it->second);
    return load("bucket_table", bucket_table);
}

CollectionInfo lookup_collection(Oid view) {
    std::optional<CollectionInfo> info = find_collection(view);
    if (!info) {
        const char *name = pg_call([&] { return get_rel_name(view); });
        throw Error(
            ErrorCode::NoSuchCollection,
            "time-series collection \"" + std::string(name ? name : "?") + "\" does not exist");
    }
    return std::move(*info);
}

void check_view_privilege(const CollectionInfo &info, AclMode mode) {
    pg_call([&] {
        if (pg_class_aclcheck(info.view, GetUserId(), mode) != ACLCHECK_OK)
            ereport(ERROR,
                    (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                     errmsg("permission denied for view %s", info.view_name.c_str()),
                     errhint("The collection's owner can GRANT %s ON %s.",
                             mode == ACL_SELECT ? "SELECT" : "INSERT", info.view_name.c_str())));
    });
}

}  // namespace tscoll::pg
