// Folding tails (doc/ARCHITECTURE.md, "Tails"): a bucket's tail rows
// written into the bucket row, for buckets whose series stopped receiving
// measurements while the bucket was open (the insert path folds a bucket's
// tails itself when it closes, or when it has as many as max_tails allows).
extern "C" {
#include "postgres.h"
#include "catalog/pg_type_d.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
}

#include <string>
#include <utility>
#include <vector>

#include "core/bucket.hpp"
#include "pg/catalog/collection.hpp"
#include "pg/guard.hpp"
#include "pg/write/bucket_store.hpp"

namespace {

using tscoll::pg::pg_call;

// The buckets that have tails: their _id and their series' meta (nullptr:
// none), copied out of SPI's result.
std::vector<std::pair<tscoll::ObjectId, Jsonb *>> buckets_with_tails(
    const tscoll::pg::CollectionInfo &info) {
    std::string query = "SELECT DISTINCT control->'tail'->>'bucket', meta FROM " +
                        info.bucket_name + " WHERE control ? 'tail'";
    std::vector<std::pair<tscoll::ObjectId, Jsonb *>> result;
    pg_call([&] {
        if (SPI_execute(query.c_str(), true, 0) != SPI_OK_SELECT)
            elog(ERROR, "SPI_execute failed for \"%s\"", query.c_str());
    });
    for (uint64 i = 0; i < SPI_processed; i++) {
        bool isnull = false;
        HeapTuple row = SPI_tuptable->vals[i];
        char *hex = pg_call([&] { return SPI_getvalue(row, SPI_tuptable->tupdesc, 1); });
        Datum meta = SPI_getbinval(row, SPI_tuptable->tupdesc, 2, &isnull);
        result.emplace_back(tscoll::ObjectId::from_hex(hex ? hex : ""),
                            isnull ? nullptr : pg_call([&] { return DatumGetJsonbPCopy(meta); }));
    }
    return result;
}

}  // namespace

// tscoll._fold_tails(collection regclass) RETURNS bigint: folds the tails
// of every bucket that no other transaction is writing; returns how many
// buckets it folded. The caller checks ownership (tscoll.fold_tails).
TSCOLL_FUNCTION(tscoll_fold_tails) {
    tscoll::pg::CollectionInfo info = tscoll::pg::lookup_collection(PG_GETARG_OID(0));
    tscoll::pg::BucketStore store(info);
    int64 folded = 0;
    for (auto &[id, meta] : buckets_with_tails(info)) {
        std::optional<tscoll::pg::StoredBucket> stored =
            store.load(id, meta, [] { return tscoll::pg::catalog::OpenSummary{}; });
        if (!stored || stored->tails == 0)
            continue;
        std::optional<std::vector<tscoll::pg::StoredTail>> tails = store.load_tails(*stored, meta);
        if (!tails)
            continue;
        store.rewrite(*stored, *tails, tscoll::BucketData(), stored->state.full(), meta);
        folded++;
    }
    store.finish();
    PG_RETURN_INT64(folded);
}
