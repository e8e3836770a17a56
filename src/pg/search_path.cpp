#include "pg/search_path.hpp"

extern "C" {
#include "catalog/namespace.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
}

#include "pg/guard.hpp"

namespace tscoll::pg {

int push_catalog_search_path() {
    int level = NewGUCNestLevel();
    (void)set_config_option("search_path", "pg_catalog, pg_temp", PGC_USERSET, PGC_S_SESSION,
                            GUC_ACTION_SAVE, true, 0, false);
    return level;
}

void pop_search_path(int level) {
    AtEOXact_GUC(true, level);
}

CatalogSearchPath::CatalogSearchPath() : level_(pg_call(push_catalog_search_path)) {}

CatalogSearchPath::~CatalogSearchPath() {
    pop_search_path(level_);
}

std::string display_name(Oid relation) {
    return pg_call([&] {
        char *name = get_rel_name(relation);
        if (name == nullptr)
            return psprintf("%u", relation);
        if (RelationIsVisible(relation))
            return const_cast<char *>(quote_identifier(name));
        return quote_qualified_identifier(get_namespace_name(get_rel_namespace(relation)), name);
    });
}

std::string qualified_name(Oid relation) {
    return pg_call([&] {
        char *name = get_rel_name(relation);
        if (name == nullptr)
            elog(ERROR, "relation %u does not exist", relation);
        return quote_qualified_identifier(get_namespace_name(get_rel_namespace(relation)), name);
    });
}

}  // namespace tscoll::pg
