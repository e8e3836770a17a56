// UPDATE and DELETE through a collection's view when the translation
// (modify.cpp) was not there: the statement was parsed before tscoll was
// loaded in the session. The view's rules then rewrite it into a statement
// on the bucket table joined with the measurements it matches (each pair
// of a bucket and a matched measurement of its series whose time lies in
// the bucket's range). tscoll._rule_match() counts, per bucket, the matched
// measurements that are its own; it is true once, for the pair that
// completes the bucket, so a bucket is deleted, or given the new meta, only
// when every measurement of it matches. When the statement ends, a bucket
// matched in part makes it fail: that takes the translation, which rewrites
// buckets. Meta-only conditions, the form
// SPEC §6 gives for meta updates and series deletes, always match whole
// buckets: they work without preloading, slower (every bucket is decoded
// once), with the same result.
extern "C" {
#include "postgres.h"
#include "access/xact.h"
#include "executor/executor.h"
#include "parser/parsetree.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/timestamp.h"
}

#include <optional>
#include <string>
#include <unordered_map>

#include "core/error.hpp"
#include "core/measurement.hpp"
#include "pg/write/bucket_store.hpp"
#include "pg/guard.hpp"
#include "pg/types/jsonb_value.hpp"
#include "pg/pg_time.hpp"
#include "pg/search_path.hpp"

namespace {

using tscoll::Error;
using tscoll::ErrorCode;
using tscoll::Value;

// A measurement's identity within its bucket: its time and its _id.
std::string measurement_key(tscoll::UnixMicros time, const Value *id) {
    std::optional<Value> key;
    if (id != nullptr)
        key = *id;
    return std::to_string(time) + "/" + tscoll::series_key(key);
}

struct BucketMatch {
    std::unordered_map<std::string, uint32_t> unmatched;  // key -> how many
    uint32_t count = 0;
    uint32_t matched = 0;
    std::string new_meta;  // series_key of the first new meta (UPDATE)
};

// The buckets the running rule statement has touched, by bucket table and
// _id; checked and emptied when the statement ends, and on abort.
std::unordered_map<Oid, std::unordered_map<std::string, BucketMatch>> touched;

void forget_touched(XactEvent event, void *) {
    if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT)
        touched.clear();
}

void forget_touched_sub(SubXactEvent event, SubTransactionId, SubTransactionId, void *) {
    if (event == SUBXACT_EVENT_ABORT_SUB)
        touched.clear();
}

BucketMatch read_bucket(const tscoll::ObjectId &id, bytea *data, const std::string &time_field) {
    BucketMatch match;
    for (const Value &m : tscoll::pg::decode_bucket(id, data).measurements()) {
        const Value *time = m.find(time_field);
        if (time == nullptr || !time->is(Value::Kind::Date))
            throw Error(ErrorCode::Corrupt, "bucket data is corrupt: a measurement has no time",
                        "Bucket _id " + id.to_hex() + ".");
        // The _id as the view's doc has it (an ObjectId becomes its hex text).
        const Value *raw_id = m.find("_id");
        std::optional<Value> id_as_shown;
        if (raw_id != nullptr)
            id_as_shown = tscoll::pg::jsonb_to_value(tscoll::pg::value_to_jsonb(*raw_id));
        match.unmatched[measurement_key(time->as_date(), id_as_shown ? &*id_as_shown : nullptr)]++;
        match.count++;
    }
    return match;
}

[[noreturn]] void refuse_without_translation(const char *what, Oid view) {
    std::string name = tscoll::pg::display_name(view);
    throw Error(ErrorCode::Unsupported,
                std::string(what) + " of time-series collection \"" + name +
                    "\" needs tscoll's translation, which this statement was parsed without",
                {},
                "tscoll is loaded now: run the statement again. Add tscoll to "
                "shared_preload_libraries so that every statement is translated.");
}

}  // namespace

// tscoll._rule_match(view regclass, bucket_table regclass, _id objectid,
// data bytea, time timestamptz, doc jsonb, new_meta jsonb, only_meta
// boolean) RETURNS boolean: called by the view's rules for each pair of a
// bucket and a measurement the statement matched; true for the pair that
// completes the bucket. new_meta: the meta the UPDATE assigns (NULL for a
// DELETE); only_meta: whether the UPDATE leaves time and doc as they are.
TSCOLL_FUNCTION(tscoll_rule_match) {
    Oid view = PG_GETARG_OID(0);
    Oid bucket_table = PG_GETARG_OID(1);
    const auto *id = reinterpret_cast<const tscoll::ObjectId *>(PG_GETARG_POINTER(2));
    if (!PG_GETARG_BOOL(7))
        refuse_without_translation("UPDATE of a field other than the meta field", view);
    auto &buckets = touched[bucket_table];
    auto it = buckets.find(id->to_hex());
    if (it == buckets.end()) {
        bytea *data = tscoll::pg::pg_call([&] { return PG_GETARG_BYTEA_PP(3); });
        tscoll::pg::CollectionInfo info = tscoll::pg::lookup_collection(view);
        it = buckets.emplace(id->to_hex(), read_bucket(*id, data, info.time_field)).first;
    }
    BucketMatch &match = it->second;
    std::optional<Value> new_meta;
    if (!PG_ARGISNULL(6))
        new_meta =
            tscoll::pg::jsonb_to_value(tscoll::pg::pg_call([&] { return PG_GETARG_JSONB_P(6); }));
    std::string new_meta_key = tscoll::series_key(new_meta);
    if (match.matched == 0)
        match.new_meta = new_meta_key;
    else if (new_meta_key != match.new_meta)
        refuse_without_translation("UPDATE with a meta value read from measurements", view);
    Value doc =
        tscoll::pg::jsonb_to_value(tscoll::pg::pg_call([&] { return PG_GETARG_JSONB_P(5); }));
    auto member = match.unmatched.find(
        measurement_key(tscoll::pg::to_unix_micros(PG_GETARG_TIMESTAMPTZ(4)), doc.find("_id")));
    if (member == match.unmatched.end() || member->second == 0)
        PG_RETURN_BOOL(false);  // of an overlapping bucket of the series
    member->second--;
    PG_RETURN_BOOL(++match.matched == match.count);
}

namespace {

// A rule statement ends: refused if it matched a bucket in part.
void check_matches(const QueryDesc *query) {
    PlannedStmt *stmt = query->plannedstmt;
    if (touched.empty() || (stmt->commandType != CMD_UPDATE && stmt->commandType != CMD_DELETE) ||
        stmt->resultRelations == NIL)
        return;
    Oid bucket_table = rt_fetch(linitial_int(stmt->resultRelations), stmt->rtable)->relid;
    auto it = touched.find(bucket_table);
    if (it == touched.end())
        return;
    bool partial = false;
    for (const auto &[id, match] : it->second)
        partial |= match.matched > 0 && match.matched < match.count;
    touched.erase(it);
    if (partial)
        throw Error(ErrorCode::Unsupported,
                    std::string(stmt->commandType == CMD_DELETE ? "DELETE" : "UPDATE") +
                        " of measurements of " + tscoll::pg::display_name(bucket_table) +
                        " matched part of a bucket: that needs tscoll's translation, which this "
                        "statement was parsed without",
                    {},
                    "tscoll is loaded now: run the statement again. Add tscoll to "
                    "shared_preload_libraries so that every statement is translated.");
}

}  // namespace

namespace tscoll::pg {

void register_rule_fallback() {
    RegisterXactCallback(forget_touched, nullptr);
    RegisterSubXactCallback(forget_touched_sub, nullptr);
}

void check_rule_matches(const QueryDesc *query) {
    guarded([&] { check_matches(query); });
}

}  // namespace tscoll::pg
