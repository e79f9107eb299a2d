// Status and StatusOr: every fallible call in gatejit returns one of these, so
// an error always carries a message that names the field and what is allowed.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace gatejit {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument = 1,  // a contract or descriptor field is invalid
  kUnsupported = 2,      // valid, but nothing can serve it
  kNotFound = 3,         // no such entry / file
  kCorrupt = 4,          // a file failed a checksum or format check
  kIoError = 5,          // the file system said no
  kPermissionDenied = 6, // refused for safety (ownership, permissions)
  kCompileError = 7,     // the compiler pipeline failed
  kDeviceError = 8,      // the device library failed or is missing
  kInternal = 9,
};

const char *status_code_name(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status Ok() { return {}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string &message() const { return message_; }
  // "invalid_argument: k = 0: must be at least 1"
  std::string to_string() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status invalid_argument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
inline Status unsupported(std::string m) { return {StatusCode::kUnsupported, std::move(m)}; }
inline Status not_found(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status corrupt(std::string m) { return {StatusCode::kCorrupt, std::move(m)}; }
inline Status io_error(std::string m) { return {StatusCode::kIoError, std::move(m)}; }
inline Status permission_denied(std::string m) { return {StatusCode::kPermissionDenied, std::move(m)}; }
inline Status compile_error(std::string m) { return {StatusCode::kCompileError, std::move(m)}; }
inline Status device_error(std::string m) { return {StatusCode::kDeviceError, std::move(m)}; }
inline Status internal_error(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : v_(std::move(value)) {}
  StatusOr(Status status) : v_(std::move(status)) { assert(!std::get<Status>(v_).ok()); }

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status &status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T &value() & { return std::get<T>(v_); }
  const T &value() const & { return std::get<T>(v_); }
  T &&value() && { return std::get<T>(std::move(v_)); }
  T *operator->() { return &value(); }
  const T *operator->() const { return &value(); }
  T &operator*() { return value(); }
  const T &operator*() const { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace gatejit

#define GATEJIT_RETURN_IF_ERROR(expr)            \
  do {                                           \
    ::gatejit::Status gatejit_status_ = (expr);  \
    if (!gatejit_status_.ok()) return gatejit_status_; \
  } while (0)
