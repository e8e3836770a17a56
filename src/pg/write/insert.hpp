// The insert path's per-statement buffers (insert.cpp).
#pragma once

extern "C" {
#include "postgres.h"
#include "executor/execdesc.h"
}

#include <memory>

#include "core/measurement.hpp"
#include "pg/catalog/collection.hpp"

namespace tscoll::pg {

struct PendingInsert;

// The measurements of one statement that inserts without the view's
// triggers (COPY's own path, insert_many): prepared as the row trigger
// prepares them, gathered by series, written once they add up to the
// flush size and at finish(). INSERT on the view is the caller's to check.
class MeasurementBatch {
  public:
    explicit MeasurementBatch(Oid view);
    ~MeasurementBatch();
    const CollectionInfo &collection() const;
    void add(MeasurementInput input);
    void finish();

  private:
    std::unique_ptr<PendingInsert> pending_;
};

// From the executor's start and end hooks: while a statement that inserts
// with RETURNING runs, the row trigger returns each measurement as stored.
void note_statement_start(const QueryDesc *query);
void note_statement_end(const QueryDesc *query);

// Discards gathered measurements when a (sub)transaction aborts.
void register_insert_callbacks();

}  // namespace tscoll::pg
