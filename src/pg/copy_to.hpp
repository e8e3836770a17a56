// COPY <collection> TO: what PostgreSQL refuses for any view (42809), run
// as COPY (SELECT ... FROM <collection>) TO, the form users write next.
#pragma once

namespace tscoll::pg {

// From _PG_init: the utility hook.
void register_copy_to_hook();

}  // namespace tscoll::pg
