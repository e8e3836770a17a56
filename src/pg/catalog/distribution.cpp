// Collections distributed with Citus (doc/ARCHITECTURE.md, Scale-out): the
// shard key of their buckets, for tscoll.distribute_collection(), and DROP
// VIEW of their views.
extern "C" {
#include "postgres.h"
#include "catalog/namespace.h"
#include "commands/extension.h"
#include "fmgr.h"
#include "nodes/makefuncs.h"
#include "utils/jsonb.h"
}

#include <optional>

#include "core/measurement.hpp"
#include "core/objectid.hpp"
#include "pg/catalog/collection.hpp"
#include "pg/catalog/distribution.hpp"
#include "pg/guard.hpp"
#include "pg/node_trees.hpp"
#include "pg/types/jsonb_value.hpp"
#include "pg/write/bucket_store.hpp"

namespace {

const tscoll::ObjectId *arg_objectid(FunctionCallInfo fcinfo, int n) {
    return reinterpret_cast<const tscoll::ObjectId *>(PG_GETARG_POINTER(n));
}

}  // namespace

// tscoll._series_hash(_id tscoll.objectid) RETURNS int4: the shard key an
// _id carries.
TSCOLL_FUNCTION(tscoll_series_hash) {
    PG_RETURN_INT32(arg_objectid(fcinfo, 0)->series_hash());
}

// tscoll._with_series_hash(_id tscoll.objectid, meta jsonb) RETURNS
// tscoll.objectid: the _id a bucket of the series `meta` gets when its
// collection is distributed, as the insert path makes it.
TSCOLL_FUNCTION(tscoll_with_series_hash) {
    if (PG_ARGISNULL(0))
        PG_RETURN_NULL();
    // meta's value is alive here: PostgreSQL is called through pg_call.
    std::optional<tscoll::Value> meta;
    if (!PG_ARGISNULL(1))
        meta =
            tscoll::pg::jsonb_to_value(tscoll::pg::pg_call([&] { return PG_GETARG_JSONB_P(1); }));
    auto *result = static_cast<tscoll::ObjectId *>(
        tscoll::pg::pg_call([] { return palloc(sizeof(tscoll::ObjectId)); }));
    *result = arg_objectid(fcinfo, 0)->with_series_hash(
        tscoll::pg::series_hash_of(tscoll::series_key(meta)));
    PG_RETURN_POINTER(result);
}

// Citus repeats a DROP VIEW of a distributed view on the workers after the
// local drop, whose sql_drop trigger has dropped the collection's bucket
// table by then, and with its shell tables the workers' copies of the view.
PlannedStmt *tscoll::pg::drop_of_distributed_views(PlannedStmt *pstmt) {
    if (!IsA(pstmt->utilityStmt, DropStmt))
        return nullptr;
    auto *drop = castNode(DropStmt, pstmt->utilityStmt);
    if (drop->removeType != OBJECT_VIEW || drop->missing_ok || creating_extension ||
        !OidIsValid(get_extension_oid("tscoll", true)))
        return nullptr;
    bool distributed = false;
    ListCell *cell = nullptr;
    foreach (cell, drop->objects) {
        Oid view =
            RangeVarGetRelid(makeRangeVarFromNameList(castNode(List, lfirst(cell))), NoLock, true);
        if (!OidIsValid(view))
            return nullptr;  // PostgreSQL words the error
        distributed |= guarded([&] {
            std::optional<CollectionInfo> info = find_collection(view);
            return info && info->distributed();
        });
    }
    if (!distributed)
        return nullptr;
    // The workers' statement says IF EXISTS; the local one finds every view.
    PlannedStmt *copy = copy_node(pstmt);
    castNode(DropStmt, copy->utilityStmt)->missing_ok = true;
    return copy;
}
