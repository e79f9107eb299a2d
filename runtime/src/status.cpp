#include "gatejit/status.h"

namespace gatejit {

const char *status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kInvalidArgument: return "invalid_argument";
    case StatusCode::kUnsupported: return "unsupported";
    case StatusCode::kNotFound: return "not_found";
    case StatusCode::kCorrupt: return "corrupt";
    case StatusCode::kIoError: return "io_error";
    case StatusCode::kPermissionDenied: return "permission_denied";
    case StatusCode::kCompileError: return "compile_error";
    case StatusCode::kDeviceError: return "device_error";
    case StatusCode::kInternal: return "internal";
  }
  return "unknown";
}

std::string Status::to_string() const {
  if (ok()) return "ok";
  return std::string(status_code_name(code_)) + ": " + message_;
}

}  // namespace gatejit
