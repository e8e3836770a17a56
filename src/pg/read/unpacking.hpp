// The unpacking functions' bodies, callable with any RowSink: the SQL
// functions (tscoll._unpack, _unpack_fields, _unpack_groups, _bucket_slots,
// _bucket_ends) call them with a TuplestoreSink, the unpack scan
// (nodes/unpack_scan.cpp) with its own buffer. Their arguments are those
// of the SQL functions (unpack_call.hpp names the positions).
#pragma once

extern "C" {
#include "postgres.h"
#include "fmgr.h"
}

#include "pg/read/row_sink.hpp"

namespace tscoll::pg {

void unpack_rows(FunctionCallInfo fcinfo, RowSink &sink);         // read/unpack.cpp
void unpack_fields_rows(FunctionCallInfo fcinfo, RowSink &sink);  // read/unpack.cpp
void unpack_groups_rows(FunctionCallInfo fcinfo, RowSink &sink);  // read/unpack_groups.cpp
void bucket_slots_rows(FunctionCallInfo fcinfo, RowSink &sink);   // read/unpack.cpp
void bucket_ends_rows(FunctionCallInfo fcinfo, RowSink &sink);    // read/unpack.cpp

}  // namespace tscoll::pg
