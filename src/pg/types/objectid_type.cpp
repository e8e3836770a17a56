// The SQL type tscoll.objectid: 12 bytes, text I/O as 24 hex digits,
// btree and hash support, and its time component as a timestamptz.
extern "C" {
#include "postgres.h"
#include "common/hashfn.h"
#include "datatype/timestamp.h"
#include "libpq/pqformat.h"
#include "utils/timestamp.h"
}

#include <cstring>

#include "core/objectid.hpp"
#include "pg/guard.hpp"
#include "pg/pg_time.hpp"

using tscoll::ObjectId;

namespace {

ObjectId *new_objectid(const ObjectId &value) {
    auto *result = static_cast<ObjectId *>(palloc(sizeof(ObjectId)));
    std::memcpy(result, &value, sizeof(ObjectId));
    return result;
}

const ObjectId *arg_objectid(FunctionCallInfo fcinfo, int n) {
    return reinterpret_cast<const ObjectId *>(PG_GETARG_POINTER(n));
}

// -1, 0 or 1 in byte order.
int compare(FunctionCallInfo fcinfo) {
    int c = std::memcmp(arg_objectid(fcinfo, 0)->bytes.data(),
                        arg_objectid(fcinfo, 1)->bytes.data(), ObjectId::kSize);
    return (c > 0) - (c < 0);
}

}  // namespace

static_assert(sizeof(ObjectId) == ObjectId::kSize, "objectid is stored as its 12 bytes");

TSCOLL_FUNCTION(tscoll_objectid_in) {
    const char *text = PG_GETARG_CSTRING(0);
    return PointerGetDatum(new_objectid(ObjectId::from_hex(text)));
}

TSCOLL_FUNCTION(tscoll_objectid_out) {
    char *text = static_cast<char *>(palloc(ObjectId::kHexLength + 1));
    arg_objectid(fcinfo, 0)->write_hex(text);
    PG_RETURN_CSTRING(text);
}

TSCOLL_FUNCTION(tscoll_objectid_recv) {
    StringInfo buffer = reinterpret_cast<StringInfo>(PG_GETARG_POINTER(0));
    ObjectId value;
    pq_copymsgbytes(buffer, reinterpret_cast<char *>(value.bytes.data()), ObjectId::kSize);
    return PointerGetDatum(new_objectid(value));
}

TSCOLL_FUNCTION(tscoll_objectid_send) {
    StringInfoData buffer;
    pq_begintypsend(&buffer);
    pq_sendbytes(&buffer, reinterpret_cast<const char *>(arg_objectid(fcinfo, 0)->bytes.data()),
                 ObjectId::kSize);
    PG_RETURN_BYTEA_P(pq_endtypsend(&buffer));
}

TSCOLL_FUNCTION(tscoll_objectid_cmp) {
    PG_RETURN_INT32(compare(fcinfo));
}
TSCOLL_FUNCTION(tscoll_objectid_eq) {
    PG_RETURN_BOOL(compare(fcinfo) == 0);
}
TSCOLL_FUNCTION(tscoll_objectid_ne) {
    PG_RETURN_BOOL(compare(fcinfo) != 0);
}
TSCOLL_FUNCTION(tscoll_objectid_lt) {
    PG_RETURN_BOOL(compare(fcinfo) < 0);
}
TSCOLL_FUNCTION(tscoll_objectid_le) {
    PG_RETURN_BOOL(compare(fcinfo) <= 0);
}
TSCOLL_FUNCTION(tscoll_objectid_gt) {
    PG_RETURN_BOOL(compare(fcinfo) > 0);
}
TSCOLL_FUNCTION(tscoll_objectid_ge) {
    PG_RETURN_BOOL(compare(fcinfo) >= 0);
}

TSCOLL_FUNCTION(tscoll_objectid_smaller) {
    return compare(fcinfo) <= 0 ? PG_GETARG_DATUM(0) : PG_GETARG_DATUM(1);
}
TSCOLL_FUNCTION(tscoll_objectid_larger) {
    return compare(fcinfo) >= 0 ? PG_GETARG_DATUM(0) : PG_GETARG_DATUM(1);
}

TSCOLL_FUNCTION(tscoll_objectid_hash) {
    return hash_any(arg_objectid(fcinfo, 0)->bytes.data(), ObjectId::kSize);
}

TSCOLL_FUNCTION(tscoll_objectid_hash_extended) {
    return hash_any_extended(arg_objectid(fcinfo, 0)->bytes.data(), ObjectId::kSize,
                             PG_GETARG_INT64(1));
}

// The 4-byte time component, read as unsigned seconds since 1970.
TSCOLL_FUNCTION(tscoll_objectid_time) {
    int64 unix_seconds = arg_objectid(fcinfo, 0)->seconds();
    PG_RETURN_TIMESTAMPTZ(tscoll::pg::to_timestamptz(unix_seconds * USECS_PER_SEC));
}
