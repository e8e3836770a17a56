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
// buckets. Meta-only conditions, the form meta updates and series deletes
// take (doc/REFERENCE.md §3.5, UPDATE; §3.6, DELETE), always match whole
// buckets: they work without preloading (§3.9), slower (every bucket is
// decoded once), with the same result.
extern "C" {
#include "postgres.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "executor/executor.h"
#include "storage/itemptr.h"
#include "parser/parsetree.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/timestamp.h"
}

#include <algorithm>
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

// A measurement as the view's doc shows it, without the meta field: the
// same key for a measurement read from its bucket and from the view.
std::string measurement_key(Value doc, const std::string &meta_field) {
    if (!meta_field.empty()) {
        auto &members = doc.as_object();
        members.erase(std::remove_if(members.begin(), members.end(),
                                     [&](const tscoll::Member &m) { return m.key == meta_field; }),
                      members.end());
    }
    return tscoll::series_key(std::optional<Value>(std::move(doc)));
}

struct BucketMatch {
    std::string version;                                  // the row's ctid when read
    std::unordered_map<std::string, uint32_t> unmatched;  // key -> how many
    uint32_t count = 0;
    uint32_t matched = 0;
    std::string new_meta;  // series_key of the first new meta (UPDATE)
};

// The buckets a running rule statement has touched, by bucket table and
// _id, and where that statement runs: checked and emptied when it
// finishes, emptied when its (sub)transaction aborts or commits.
struct Touched {
    std::unordered_map<Oid, std::unordered_map<std::string, BucketMatch>> buckets;
    int depth = 0;  // the executor nesting level of the rule statement
    SubTransactionId subxact = InvalidSubTransactionId;
};
Touched touched;
int executor_depth = 0;  // statements started and not ended, as the hooks saw them

void forget_touched(XactEvent event, void *) {
    if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT ||
        event == XACT_EVENT_COMMIT) {
        touched = Touched{};
        executor_depth = 0;
    }
}

void forget_touched_sub(SubXactEvent event, SubTransactionId subxact, SubTransactionId, void *) {
    if (event == SUBXACT_EVENT_ABORT_SUB && touched.subxact == subxact)
        touched = Touched{};
}

BucketMatch read_bucket(const tscoll::ObjectId &id, bytea *data,
                        const tscoll::pg::CollectionInfo &info) {
    BucketMatch match;
    for (Value &m : tscoll::pg::decode_bucket(id, data).measurements()) {
        // As the view shows it: the time field as text, an ObjectId as hex.
        Value shown = tscoll::pg::jsonb_to_value(tscoll::pg::value_to_jsonb(
            tscoll::view_document(std::move(m), info.time_field, {}, std::nullopt)));
        match.unmatched[measurement_key(std::move(shown), {})]++;
        match.count++;
    }
    return match;
}

[[noreturn]] void refuse_without_translation(const std::string &what, Oid view) {
    std::string name = tscoll::pg::display_name(view);
    throw Error(ErrorCode::Unsupported,
                what + " of time-series collection \"" + name +
                    "\" needs tscoll's translation, which this statement did not get",
                {},
                "It was parsed before tscoll was loaded in the session (run it again: tscoll is "
                "loaded now), or it went through another view (run it on the collection). Add "
                "tscoll to shared_preload_libraries so that every statement is translated.");
}

std::optional<Value> jsonb_arg(FunctionCallInfo fcinfo, int n) {
    if (PG_ARGISNULL(n))
        return std::nullopt;
    return tscoll::pg::jsonb_to_value(tscoll::pg::pg_call([&] { return PG_GETARG_JSONB_P(n); }));
}

}  // namespace

// tscoll._rule_match(view regclass, bucket_table regclass, _id objectid,
// ctid tid, bucket_meta jsonb, min_time timestamptz, max_time timestamptz,
// data bytea, time timestamptz, meta jsonb, doc jsonb, new_meta jsonb,
// only_meta boolean) RETURNS boolean: called by the view's rules for each
// pair of a bucket row and a measurement the statement matched (time,
// meta, doc); true for the pair that completes the bucket. new_meta: the
// meta the UPDATE assigns (NULL for a DELETE); only_meta: whether the
// UPDATE leaves time and doc as they are. Pairs of another series or time
// range are false here whatever order the planner checks conditions in.
TSCOLL_FUNCTION(tscoll_rule_match) {
    for (int arg : {0, 1, 2, 3, 5, 6, 7, 8, 10, 12})
        if (PG_ARGISNULL(arg))
            tscoll::pg::pg_call([&] {
                ereport(ERROR,
                        (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
                         errmsg("tscoll._rule_match: argument %d must not be NULL", arg + 1)));
            });
    Oid view = PG_GETARG_OID(0);
    Oid bucket_table = PG_GETARG_OID(1);
    const auto *id = reinterpret_cast<const tscoll::ObjectId *>(PG_GETARG_POINTER(2));
    auto *ctid = reinterpret_cast<ItemPointer>(PG_GETARG_POINTER(3));
    if (!PG_GETARG_BOOL(12))
        refuse_without_translation("UPDATE of a field other than the meta field", view);
    TimestampTz time = PG_GETARG_TIMESTAMPTZ(8);
    if (time < PG_GETARG_TIMESTAMPTZ(5) || time > PG_GETARG_TIMESTAMPTZ(6) ||
        tscoll::series_key(jsonb_arg(fcinfo, 4)) != tscoll::series_key(jsonb_arg(fcinfo, 9)))
        PG_RETURN_BOOL(false);  // another bucket's measurement
    tscoll::pg::CollectionInfo info = tscoll::pg::lookup_collection(view);
    std::string version = std::to_string(ItemPointerGetBlockNumber(ctid)) + "/" +
                          std::to_string(ItemPointerGetOffsetNumber(ctid));
    if (touched.buckets.empty()) {
        touched.depth = executor_depth;
        touched.subxact = GetCurrentSubTransactionId();
    }
    auto &buckets = touched.buckets[bucket_table];
    auto it = buckets.find(id->to_hex());
    if (it == buckets.end()) {
        bytea *data = tscoll::pg::pg_call([&] { return PG_GETARG_BYTEA_PP(7); });
        it = buckets.emplace(id->to_hex(), read_bucket(*id, data, info)).first;
        it->second.version = version;
    } else if (it->second.version != version) {
        // A concurrent write, seen by EvalPlanQual: what was counted of the
        // bucket no longer holds.
        std::string message = "bucket " + id->to_hex() + " of time-series collection \"" +
                              info.view_name + "\" changed while an untranslated statement read it";
        tscoll::pg::pg_call([&] {
            ereport(ERROR, (errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
                            errmsg("%s", message.c_str()), errhint("Run the statement again.")));
        });
    }
    BucketMatch &match = it->second;
    std::string new_meta_key = tscoll::series_key(jsonb_arg(fcinfo, 11));
    if (match.matched == 0)
        match.new_meta = new_meta_key;
    else if (new_meta_key != match.new_meta)
        refuse_without_translation("UPDATE with a meta value read from measurements", view);
    auto member = match.unmatched.find(measurement_key(
        tscoll::pg::jsonb_to_value(tscoll::pg::pg_call([&] { return PG_GETARG_JSONB_P(10); })),
        info.meta_field));
    if (member == match.unmatched.end() || member->second == 0)
        PG_RETURN_BOOL(false);  // of an overlapping bucket of the series
    member->second--;
    PG_RETURN_BOOL(++match.matched == match.count);
}

namespace {

// What a rule statement may read: the bucket table twice (the statement's
// target, and the view's read of it), the view's unpacking (one subquery
// and one function call), and views (entries for their privileges). With
// anything more (another table, a subquery over the collection again, a
// set-returning function, VALUES), PostgreSQL may join it above the pairs
// _rule_match counts, which would then count measurements the statement
// does not match.
bool reads_only_the_collection(const PlannedStmt *stmt, Oid bucket_table) {
    int bucket_reads = 0, subqueries = 0, functions = 0;
    ListCell *lc;
    foreach (lc, stmt->rtable) {
        RangeTblEntry *rte = lfirst_node(RangeTblEntry, lc);
        if (rte->rtekind == RTE_RELATION && rte->relkind == RELKIND_VIEW)
            continue;
        if (rte->rtekind == RTE_RELATION && rte->relid == bucket_table)
            bucket_reads++;
        else if (rte->rtekind == RTE_SUBQUERY)
            subqueries++;
        else if (rte->rtekind == RTE_FUNCTION)
            functions++;
        else
            return false;
    }
    return bucket_reads <= 2 && subqueries <= 1 && functions <= 1;
}

// The rule statement finishes: refused if it matched a bucket in part, or
// read more than the collection.
void check_matches(const QueryDesc *query) {
    if (touched.buckets.empty() || executor_depth != touched.depth)
        return;
    Touched done = std::move(touched);
    touched = Touched{};
    for (const auto &[bucket_table, buckets] : done.buckets) {
        bool partial = false;
        for (const auto &[id, match] : buckets)
            partial |= match.matched > 0 && match.matched < match.count;
        if (partial)
            throw Error(ErrorCode::Unsupported,
                        "a statement on the measurements of " +
                            tscoll::pg::display_name(bucket_table) +
                            " matched part of a bucket: that needs tscoll's translation, which "
                            "this statement did not get",
                        {},
                        "It was parsed before tscoll was loaded in the session (run it again: "
                        "tscoll is loaded now), or it went through another view (run it on the "
                        "collection). Add tscoll to shared_preload_libraries so that every "
                        "statement is translated.");
        if (!reads_only_the_collection(query->plannedstmt, bucket_table))
            throw Error(ErrorCode::Unsupported,
                        "a statement on the measurements of " +
                            tscoll::pg::display_name(bucket_table) +
                            " that reads other tables or subqueries needs tscoll's translation, "
                            "which this statement did not get",
                        {},
                        "It was parsed before tscoll was loaded in the session (run it again: "
                        "tscoll is loaded now), or it went through another view (run it on the "
                        "collection). Add tscoll to shared_preload_libraries so that every "
                        "statement is translated.");
    }
}

}  // namespace

namespace tscoll::pg {

void register_rule_fallback() {
    RegisterXactCallback(forget_touched, nullptr);
    RegisterSubXactCallback(forget_touched_sub, nullptr);
}

void note_executor_start() {
    executor_depth++;
}

void note_executor_end() {
    executor_depth = std::max(executor_depth - 1, 0);
}

void check_rule_matches(const QueryDesc *query) {
    guarded([&] { check_matches(query); });
}

}  // namespace tscoll::pg
