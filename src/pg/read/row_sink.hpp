// Where the unpacking functions put the rows they make of a bucket: the
// tuplestore of a set-returning call, or the buffer of the unpack scan
// (nodes/unpack_scan.cpp), which calls the same code without a tuplestore.
#pragma once

extern "C" {
#include "postgres.h"
#include "fmgr.h"
#include "access/tupdesc.h"
}

namespace tscoll::pg {

// Which of a bucket's measurements a reader wants: with a count, only the
// `count` earliest (latest, with `latest`) within the time bounds, and
// those tied with the last of them. A time merge under a LIMIT returns no
// other (nodes/time_merge_exec.cpp).
struct FirstRows {
    int64 count = 0;
    bool latest = false;
};

class RowSink {
  public:
    virtual ~RowSink() = default;
    FirstRows first;
    // The rows' columns.
    virtual TupleDesc desc() const = 0;
    // By-reference values stay in CurrentMemoryContext.
    virtual void put(const Datum *values, const bool *nulls) = 0;
};

// The set-returning call's result, materialized with the expected columns.
class TuplestoreSink final : public RowSink {
  public:
    explicit TuplestoreSink(FunctionCallInfo fcinfo);
    TupleDesc desc() const override;
    void put(const Datum *values, const bool *nulls) override;

  private:
    FunctionCallInfo fcinfo_;
};

}  // namespace tscoll::pg
