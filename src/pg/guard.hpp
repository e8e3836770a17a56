// The C++ <-> PostgreSQL error boundary.
//
// PostgreSQL reports errors with longjmp, C++ with exceptions; neither may
// cross the other. Two tools keep them apart:
//
//  * guarded(body) wraps every SQL function, hook and callback: it catches
//    any C++ exception, lets every C++ object of the body be destroyed, and
//    only then raises the PostgreSQL error with its SQLSTATE
//    (doc/REFERENCE.md §5, Errors). Define SQL functions with
//    TSCOLL_FUNCTION, which does this.
//
//  * pg_call(f) runs PostgreSQL code that may ereport(ERROR) from C++: the
//    error is copied out and rethrown as a PgError, so C++ frames unwind
//    normally; guarded() re-raises the original error unchanged.
//
// Rule for glue code: a frame that owns an object with a non-trivial
// destructor calls PostgreSQL only through pg_call. A frame that owns none
// may call PostgreSQL directly (a longjmp past it skips nothing).
#pragma once

extern "C" {
#include "postgres.h"
#include "fmgr.h"
}

#include <exception>
#include <type_traits>

namespace tscoll::pg {

// A PostgreSQL error caught by pg_call, on its way to guarded().
class PgError final : public std::exception {
  public:
    explicit PgError(ErrorData *edata) : edata_(edata) {}
    ErrorData *edata() const { return edata_; }
    const char *what() const noexcept override { return edata_->message; }

  private:
    ErrorData *edata_;  // palloc'd in the memory context of the pg_call
};

// An exception turned into plain data that outlives the exception object.
struct ErrorReport {
    ErrorData *pg_error;  // set when the exception was a PgError
    int sqlstate;
    const char *message;
    const char *detail;  // nullptr when none
    const char *hint;    // nullptr when none
};

// Describes the exception being handled; call only inside a catch block.
// Copies into static buffers: it must not palloc, because a longjmp out of a
// catch block would leave the C++ runtime's exception state behind.
ErrorReport capture_current_exception() noexcept;

// Raises the report as a PostgreSQL error. Call with no C++ object alive.
[[noreturn]] void raise_report(const ErrorReport &report);

// Copies the error PostgreSQL is handling into `context` and clears it.
ErrorData *take_error(MemoryContext context);

template <typename F>
auto guarded(F &&body) -> decltype(body()) {
    ErrorReport report;
    try {
        return body();
    } catch (...) {
        report = capture_current_exception();
    }
    raise_report(report);
}

template <typename F>
auto pg_call(F &&f) -> decltype(f()) {
    using Result = decltype(f());
    static_assert(std::is_void_v<Result> || std::is_scalar_v<Result>,
                  "pg_call returns what PostgreSQL returns: scalars and pointers");
    MemoryContext context = CurrentMemoryContext;
    ErrorData *volatile error = nullptr;  // volatile: set after the longjmp
    if constexpr (std::is_void_v<Result>) {
        PG_TRY();
        { f(); }
        PG_CATCH();
        { error = take_error(context); }
        PG_END_TRY();
        if (error != nullptr)
            throw PgError(error);
    } else {
        volatile Result result{};
        PG_TRY();
        { result = f(); }
        PG_CATCH();
        { error = take_error(context); }
        PG_END_TRY();
        if (error != nullptr)
            throw PgError(error);
        return result;
    }
}

}  // namespace tscoll::pg

// Defines a SQL-callable C function whose body runs inside guarded().
#define TSCOLL_FUNCTION(name)                                                            \
    static Datum name##_body(FunctionCallInfo fcinfo);                                   \
    extern "C" {                                                                         \
    PG_FUNCTION_INFO_V1(name);                                                           \
    }                                                                                    \
    Datum name(PG_FUNCTION_ARGS) {                                                       \
        return tscoll::pg::guarded([fcinfo]() -> Datum { return name##_body(fcinfo); }); \
    }                                                                                    \
    static Datum name##_body(FunctionCallInfo fcinfo)
