#include "pg/guard.hpp"

extern "C" {
#include "utils/elog.h"
#include "utils/memutils.h"
}

#include <cstdio>
#include <new>

#include "core/error.hpp"

namespace tscoll::pg {

namespace {

int sqlstate_of(ErrorCode code) {
    switch (code) {
        case ErrorCode::InvalidOptions:
        case ErrorCode::BadValue:
            return ERRCODE_INVALID_PARAMETER_VALUE;
        case ErrorCode::TypeMismatch:
            return ERRCODE_DATATYPE_MISMATCH;
        case ErrorCode::NamespaceExists:
            return ERRCODE_DUPLICATE_TABLE;
        case ErrorCode::NoSuchCollection:
            return ERRCODE_UNDEFINED_TABLE;
        case ErrorCode::NameTooLong:
            return ERRCODE_NAME_TOO_LONG;
        case ErrorCode::Unsupported:
            return ERRCODE_FEATURE_NOT_SUPPORTED;
        case ErrorCode::BadDate:
            return ERRCODE_INVALID_DATETIME_FORMAT;
        case ErrorCode::TooLarge:
            return ERRCODE_PROGRAM_LIMIT_EXCEEDED;
        case ErrorCode::InvalidText:
            return ERRCODE_INVALID_TEXT_REPRESENTATION;
        case ErrorCode::OutOfRange:
            return ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE;
        case ErrorCode::Corrupt:
            return ERRCODE_DATA_CORRUPTED;
        case ErrorCode::Internal:
            return ERRCODE_INTERNAL_ERROR;
    }
    return ERRCODE_INTERNAL_ERROR;
}

// One buffer per part of the report; a backend raises one error at a time.
char message_buffer[4096];
char detail_buffer[2048];
char hint_buffer[2048];

const char *copy(char *buffer, size_t size, const char *text) {
    std::snprintf(buffer, size, "%s", text);
    return buffer;
}

const char *copy_optional(char *buffer, size_t size, const std::string &text) {
    return text.empty() ? nullptr : copy(buffer, size, text.c_str());
}

}  // namespace

ErrorReport capture_current_exception() noexcept {
    ErrorReport r{nullptr, ERRCODE_INTERNAL_ERROR, nullptr, nullptr, nullptr};
    try {
        throw;
    } catch (const PgError &e) {
        r.pg_error = e.edata();
    } catch (const Error &e) {
        r.sqlstate = sqlstate_of(e.code());
        r.message = copy(message_buffer, sizeof message_buffer, e.what());
        r.detail = copy_optional(detail_buffer, sizeof detail_buffer, e.detail());
        r.hint = copy_optional(hint_buffer, sizeof hint_buffer, e.hint());
    } catch (const std::bad_alloc &) {
        r.sqlstate = ERRCODE_OUT_OF_MEMORY;
        r.message = "out of memory";
    } catch (const std::exception &e) {
        r.message = copy(message_buffer, sizeof message_buffer, e.what());
    } catch (...) {
        r.message = "unknown C++ exception";
    }
    return r;
}

void raise_report(const ErrorReport &r) {
    if (r.pg_error != nullptr)
        ReThrowError(r.pg_error);
    ereport(ERROR, (errcode(r.sqlstate), errmsg_internal("%s", r.message),
                    r.detail ? errdetail_internal("%s", r.detail) : 0,
                    r.hint ? errhint("%s", r.hint) : 0));
    pg_unreachable();
}

ErrorData *take_error(MemoryContext context) {
    MemoryContextSwitchTo(context);
    ErrorData *error = CopyErrorData();
    FlushErrorState();
    return error;
}

}  // namespace tscoll::pg
