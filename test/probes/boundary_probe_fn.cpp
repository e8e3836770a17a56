// Entry points for the error-boundary tests, in a library of their own
// (tscoll_probes): sql/boundary.sql declares them itself.
extern "C" {
#include "postgres.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"

PG_MODULE_MAGIC;
}

#include <cstring>

#include "boundary_probe.hpp"
#include "core/error.hpp"
#include "pg/guard.hpp"

// probe_throw(kind text, depth int): a C++ exception `depth` frames down.
TSCOLL_FUNCTION(tscoll_probe_throw) {
    const char *kind = text_to_cstring(PG_GETARG_TEXT_PP(0));
    int depth = PG_GETARG_INT32(1);
    tscoll::ProbeFailure failure = tscoll::ProbeFailure::CoreError;
    if (std::strcmp(kind, "bad_alloc") == 0)
        failure = tscoll::ProbeFailure::BadAlloc;
    else if (std::strcmp(kind, "std") == 0)
        failure = tscoll::ProbeFailure::StdException;
    tscoll::fail_at_depth(depth, failure);
}

// probe_pg_error(input text, depth int): parses `input` as int4 from under
// `depth` C++ frames; a PostgreSQL error there must unwind them all.
TSCOLL_FUNCTION(tscoll_probe_pg_error) {
    const char *input = text_to_cstring(PG_GETARG_TEXT_PP(0));
    int depth = PG_GETARG_INT32(1);
    int32 parsed = 0;
    size_t held = tscoll::call_at_depth(depth, [&] {
        parsed = tscoll::pg::pg_call(
            [&] { return DatumGetInt32(DirectFunctionCall1(int4in, CStringGetDatum(input))); });
    });
    PG_RETURN_INT64(static_cast<int64>(held) + parsed);
}
