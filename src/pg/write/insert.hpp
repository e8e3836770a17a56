// The insert path's per-statement buffers (insert.cpp).
#pragma once

extern "C" {
#include "postgres.h"
#include "executor/execdesc.h"
#include "utils/rel.h"
}

#include <memory>

#include "core/measurement.hpp"
#include "pg/catalog/collection.hpp"

namespace tscoll::pg {

struct PendingInsert;

// The measurements of one statement that inserts without the view's
// triggers (COPY's own path, insert_many): prepared as the row trigger
// prepares them and gathered by series. INSERT on the view is the
// caller's to check.
class MeasurementBatch {
  public:
    explicit MeasurementBatch(Oid view);
    ~MeasurementBatch();
    const CollectionInfo &collection() const;
    // Throws the measurement's own errors only.
    void add(MeasurementInput input);
    // A measurement prepared elsewhere with fields() and
    // max_measurement_size (copy_parse.hpp).
    void add(PreparedMeasurement prepared);
    // The same, its meta numbered by the caller among the spellings it has
    // seen (0, 1, ... in order; spelling_hash and spelled_alike): the meta
    // comes with the first measurement of each number only.
    void add(PreparedMeasurement prepared, uint32_t spelling);
    CollectionFields fields() const;
    // Writes what was gathered once it adds up to the flush size, so that
    // memory stays bounded; at the end, finish() writes the rest.
    void flush_when_full();
    void finish();

  private:
    std::unique_ptr<PendingInsert> pending_;
};

// Only tscoll's own triggers on a collection's view: no user's trigger
// sees its rows.
bool has_only_own_triggers(Relation view);

// Whether statements left measurements gathered.
bool measurements_gathered();
// Writes the measurements every statement left gathered (statements
// deferred to the transaction's end, write/deferred.hpp).
void write_gathered_measurements();

// From the executor's start and end hooks: while a statement that inserts
// with RETURNING runs, the row trigger returns each measurement as stored.
void note_statement_start(const QueryDesc *query);
void note_statement_end(const QueryDesc *query);

// Discards gathered measurements when a (sub)transaction aborts.
void register_insert_callbacks();

}  // namespace tscoll::pg
