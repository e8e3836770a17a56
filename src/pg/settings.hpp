// tscoll's GUCs (SPEC §13).
#pragma once

namespace tscoll::pg {

extern int bucket_max_count;
extern int bucket_max_size;
extern int bucket_min_count;
extern int max_measurement_size;
extern int catalog_memory_limit_kb;

void define_settings();

}  // namespace tscoll::pg
