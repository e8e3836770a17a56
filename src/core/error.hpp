// Errors raised by the core. The core knows MongoDB's error classes, not
// SQLSTATEs: src/pg/guard.cpp maps each class to its SQLSTATE
// (doc/REFERENCE.md §5, Errors).
#pragma once

#include <stdexcept>
#include <string>

namespace tscoll {

enum class ErrorCode {
    InvalidOptions,    // MongoDB InvalidOptions (72)      -> 22023
    BadValue,          // MongoDB BadValue (2)             -> 22023
    TypeMismatch,      // MongoDB TypeMismatch (14)        -> 42804
    NamespaceExists,   // MongoDB NamespaceExists (48)     -> 42P07
    NoSuchCollection,  // MongoDB NamespaceNotFound (26)   -> 42P01
    NameTooLong,       // identifier over 63 bytes         -> 42622
    Unsupported,       // operation not supported          -> 0A000
    BadDate,           // bad time value                   -> 22007
    TooLarge,          // measurement over a size limit    -> 54000
    InvalidText,       // a type's text input is malformed -> 22P02
    OutOfRange,        // a float8 result overflows        -> 22003
    Corrupt,           // stored data fails to decode      -> XX001
    Internal,          // a broken invariant               -> XX000
};

class Error : public std::runtime_error {
  public:
    Error(ErrorCode code, const std::string &message, std::string detail = {},
          std::string hint = {})
        : std::runtime_error(message),
          code_(code),
          detail_(std::move(detail)),
          hint_(std::move(hint)) {}

    ErrorCode code() const { return code_; }
    const std::string &detail() const { return detail_; }
    const std::string &hint() const { return hint_; }

  private:
    ErrorCode code_;
    std::string detail_;
    std::string hint_;
};

}  // namespace tscoll
