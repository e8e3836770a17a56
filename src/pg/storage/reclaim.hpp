// The space of rows a fold deletes, given back to the table before VACUUM
// comes (doc/ARCHITECTURE.md, "Tails"). A load that appends as tails folds
// them as it goes; without this, every tail it ever wrote would stay in the
// heap and in every index until the next VACUUM, and the table would grow
// to many times its data.
//
// Calls PostgreSQL directly: callers wrap these in pg_call.
#pragma once

extern "C" {
#include "postgres.h"
#include "storage/buf.h"
#include "storage/itemptr.h"
#include "utils/rel.h"
}

namespace tscoll::pg {

// Prunes the heap page in `buffer` (pinned, not locked) when its dead rows
// can go and it has less than `needed` bytes free: a row of about a tenth
// of a page written again finds no room for its new version on a page that
// heap_page_prune_opt, which waits for the page to look full, passes over.
void prune_page(Relation relation, Buffer buffer, Size needed);

// Notes rows of `relation` the current transaction is about to delete
// (while they are whole: their index keys are taken now).
void note_folded_rows(Relation relation, const ItemPointerData *rows, int count);

// Gives back the space of the rows noted in earlier transactions that are
// now dead to every snapshot: their index entries are marked dead (btree
// removes them before it splits a page), their heap pages pruned and the
// free space recorded in the free space map, where inserts find it.
void reclaim_folded_rows(Oid relid);

}  // namespace tscoll::pg
