// A thin C++ wrapper over the C API (gatejit.h): RAII for the runtime handle,
// errors as gatejit::Error exceptions carrying the status code and message.
// Header-only; everything crosses the stable C ABI.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

#include "gatejit/gatejit.h"

namespace gatejit {

class Error : public std::runtime_error {
 public:
  Error(gatejit_status_code_t code, const std::string &message) : std::runtime_error(message), code_(code) {}
  gatejit_status_code_t code() const { return code_; }

 private:
  gatejit_status_code_t code_;
};

// Throws gatejit::Error for a non-null status (and frees it).
inline void check(gatejit_status_t status) {
  if (!status) return;
  const gatejit_status_code_t code = gatejit_status_code(status);
  std::string message = gatejit_status_message(status);
  gatejit_status_free(status);
  throw Error(code, message);
}

class Runtime {
 public:
  explicit Runtime(const gatejit_runtime_options_t *options = nullptr) { check(gatejit_runtime_create(options, &rt_)); }
  ~Runtime() { gatejit_runtime_destroy(rt_); }
  Runtime(Runtime &&other) noexcept : rt_(std::exchange(other.rt_, nullptr)) {}
  Runtime &operator=(Runtime &&other) noexcept {
    std::swap(rt_, other.rt_);
    return *this;
  }
  Runtime(const Runtime &) = delete;
  Runtime &operator=(const Runtime &) = delete;

  gatejit_runtime_t handle() const { return rt_; }

  void load_bundle(const std::string &path) { check(gatejit_runtime_load_bundle(rt_, path.c_str())); }
  // Needs libgatejit_compiler linked in.
  void attach_jit() { check(gatejit_runtime_attach_jit(rt_)); }

  void gate_epilogue(const gatejit_gate_args_t &args) { check(gatejit_gate_epilogue(rt_, &args)); }
  void prepare(const gatejit_gate_args_t &args) { check(gatejit_prepare(rt_, &args)); }

  std::string explain(const gatejit_gate_args_t &args) const {
    char *text = nullptr;
    check(gatejit_explain(rt_, &args, &text));
    return take(text);
  }
  std::string explain(const std::string &contract_json) const {
    char *text = nullptr;
    check(gatejit_explain_contract_json(rt_, contract_json.c_str(), &text));
    return take(text);
  }
  std::string resolve(const std::string &contract_json) {
    char *text = nullptr;
    check(gatejit_resolve_contract_json(rt_, contract_json.c_str(), &text));
    return take(text);
  }

 private:
  static std::string take(char *text) {
    std::string s = text ? text : "";
    gatejit_string_free(text);
    return s;
  }
  gatejit_runtime_t rt_ = nullptr;
};

}  // namespace gatejit
