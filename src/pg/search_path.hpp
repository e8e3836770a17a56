// tscoll's own SQL (SPI queries, parsed templates, the TTL worker) resolves
// names in pg_catalog alone: through the caller's search_path, a schema of
// theirs could put operators, functions or types named like the built-ins
// in place of the ones tscoll means. Relations in that SQL are named
// schema-qualified; the user's own expressions are analysed in the
// caller's path before tscoll sees them, and keep resolving as written.
#pragma once

extern "C" {
#include "postgres.h"
}

#include <string>

namespace tscoll::pg {

// Sets search_path to "pg_catalog, pg_temp" until pop_search_path(level).
// An error in between restores it with the (sub)transaction's abort. For
// frames that call PostgreSQL directly.
int push_catalog_search_path();
void pop_search_path(int level);

// The same for a C++ scope.
class CatalogSearchPath {
  public:
    CatalogSearchPath();
    ~CatalogSearchPath();
    CatalogSearchPath(const CatalogSearchPath &) = delete;
    CatalogSearchPath &operator=(const CatalogSearchPath &) = delete;

  private:
    int level_;
};

// A relation's name as regclass prints it in the current search_path
// (qualified only when not visible): for messages.
std::string display_name(Oid relation);
// Always schema-qualified and quoted: for SQL.
std::string qualified_name(Oid relation);

}  // namespace tscoll::pg
