// The C API over RuntimeCore: status objects carry a code and a message;
// no C++ exception or type crosses the boundary.
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <new>
#include <utility>

#include "gatejit/contract_json.h"
#include "gatejit/gatejit.h"
#include "gatejit/jit_hook.h"
#include "input_echo.h"
#include "runtime_core.h"

struct gatejit_status_s {
  gatejit_status_code_t code;
  std::string message;
};

struct gatejit_runtime_s {
  std::unique_ptr<gatejit::RuntimeCore> core;
};

namespace {

// Out of memory while reporting an error: this static status still says so,
// and gatejit_status_free leaves it alone.
gatejit_status_s g_out_of_memory{GATEJIT_INTERNAL, "out of memory"};

gatejit_status_t make_status(const gatejit::Status &s) noexcept {
  if (s.ok()) return nullptr;
  try {
    // One bounded message without control bytes, whatever input it echoes.
    return new gatejit_status_s{gatejit_status_code_t(int(s.code())), gatejit::bounded_message(s.message())};
  } catch (...) {
    return &g_out_of_memory;
  }
}

gatejit_status_t null_arg(const char *name) noexcept {
  try {
    return make_status(gatejit::invalid_argument(std::string(name) + " is NULL"));
  } catch (...) {
    return &g_out_of_memory;
  }
}

char *copy_string(const std::string &s) {
  char *out = static_cast<char *>(std::malloc(s.size() + 1));
  if (out) std::memcpy(out, s.c_str(), s.size() + 1);
  return out;
}

// Runs `f`, turning any escaping C++ exception into an internal status.
template <typename F>
gatejit_status_t guarded(F &&f) {
  try {
    return make_status(f());
  } catch (const std::exception &e) {
    return make_status(gatejit::internal_error(std::string("unexpected exception: ") + e.what()));
  } catch (...) {
    return make_status(gatejit::internal_error("unexpected exception"));
  }
}

// A C caller may store any integer in an enum field, and C++ may not even
// load one outside the enumeration's range: the fields are read here as
// integers, through memcpy, and checked before the core sees them.
template <typename Enum>
gatejit::Status check_enum(const Enum &field, const char *name, std::initializer_list<int> allowed,
                           const char *names) {
  static_assert(sizeof(Enum) == sizeof(int), "a C enum field is int-sized");
  int raw;  // as the C caller wrote it (a C enum is compatible with int)
  std::memcpy(&raw, &field, sizeof raw);
  for (int a : allowed)
    if (raw == a) return gatejit::Status::Ok();
  return gatejit::invalid_argument(std::string(name) + " = " + std::to_string(raw) + ": allowed values are " + names);
}

// The struct's size as the caller's gatejit.h has it (API version 2 on).
// Version 2 is the first layout with the field, so a size smaller than every
// known layout is a caller that did not set it; a larger one, a newer header
// than this library. (read_args accepts version 2's gate-argument size too.)
gatejit::Status check_struct_size(size_t size, size_t known, const char *field, const char *type, const char *init) {
  if (size == known) return gatejit::Status::Ok();
  const std::string got = std::string(field) + " = " + std::to_string(size) + ": ";
  if (size < known)
    return gatejit::invalid_argument(got + "set it to sizeof(" + type + ") = " + std::to_string(known) + " (" + init +
                                     "; gatejit API version " + std::to_string(GATEJIT_API_VERSION) + ")");
  return gatejit::invalid_argument(got + "larger than this library's " + type + " (" + std::to_string(known) +
                                   " bytes): the caller was built against a newer gatejit.h");
}

// API version 2's gatejit_gate_args_t: everything before weight_scale;
// version 3's: everything before out_scale.
constexpr size_t kGateArgsV2Size = offsetof(gatejit_gate_args_t, weight_scale);
constexpr size_t kGateArgsV3Size = offsetof(gatejit_gate_args_t, out_scale);
// API versions 2-4's gatejit_runtime_options_t: everything before record_path.
constexpr size_t kRuntimeOptionsV4Size = offsetof(gatejit_runtime_options_t, record_path);

// The caller's arguments as this library's struct: a version-2 or -3
// caller's smaller struct is copied and the fields it lacks are zero (no weight
// scales). Nothing past the caller's struct_size is read.
gatejit::StatusOr<gatejit_gate_args_t> read_args(const gatejit_gate_args_t *args) {
  size_t size;
  std::memcpy(&size, args, sizeof size);
  if (size != kGateArgsV2Size && size != kGateArgsV3Size)
    GATEJIT_RETURN_IF_ERROR(check_struct_size(size, sizeof(gatejit_gate_args_t), "args.struct_size",
                                              "gatejit_gate_args_t", "GATEJIT_GATE_ARGS_INIT"));
  gatejit_gate_args_t a{};
  std::memcpy(&a, args, size);
  a.struct_size = sizeof a;
  return a;
}

gatejit::Status check_args(const gatejit_gate_args_t &a) {
  const std::pair<const gatejit_tensor_t *, const char *> tensors[] = {{&a.hidden, "hidden.dtype"},
                                                                       {&a.weight, "weight.dtype"},
                                                                       {&a.attn, "attn.dtype"},
                                                                       {&a.out, "out.dtype"},
                                                                       {&a.weight_scale, "weight_scale.dtype"},
                                                                       {&a.out_scale, "out_scale.dtype"}};
  for (const auto &[t, name] : tensors)
    GATEJIT_RETURN_IF_ERROR(check_enum(t->dtype, name, {GATEJIT_BF16, GATEJIT_F16, GATEJIT_F32, GATEJIT_FP8_E4M3},
                                       "GATEJIT_BF16 (0), GATEJIT_F16 (1), GATEJIT_F32 (2), GATEJIT_FP8_E4M3 (3)"));
  GATEJIT_RETURN_IF_ERROR(check_enum(a.act, "act", {GATEJIT_SIGMOID, GATEJIT_SILU}, "GATEJIT_SIGMOID (0), GATEJIT_SILU (1)"));
  GATEJIT_RETURN_IF_ERROR(check_enum(a.rounding, "rounding", {GATEJIT_ROUNDING_BOUNDARY, GATEJIT_ROUNDING_FUSED},
                                     "GATEJIT_ROUNDING_BOUNDARY (0), GATEJIT_ROUNDING_FUSED (1)"));
  return check_enum(a.device_kind, "device_kind", {GATEJIT_DEVICE_CUDA, GATEJIT_DEVICE_HIP},
                    "GATEJIT_DEVICE_CUDA (1), GATEJIT_DEVICE_HIP (2)");
}

gatejit::StatusOr<gatejit::Contract> parse_contract(const char *json) {
  auto c = gatejit::contract_from_json_text(json);
  if (!c.ok()) return c.status();
  return gatejit::normalize(*c);
}

}  // namespace

extern "C" {

int gatejit_api_version(void) { return GATEJIT_API_VERSION; }

gatejit_status_code_t gatejit_status_code(gatejit_status_t s) { return s ? s->code : GATEJIT_OK; }
const char *gatejit_status_message(gatejit_status_t s) { return s ? s->message.c_str() : ""; }
void gatejit_status_free(gatejit_status_t s) {
  if (s != &g_out_of_memory) delete s;
}

gatejit_status_t gatejit_runtime_create(const gatejit_runtime_options_t *options, gatejit_runtime_t *out) {
  if (!out) return null_arg("out_runtime");
  *out = nullptr;
  return guarded([&]() -> gatejit::Status {
    // An older caller's smaller struct: the fields it lacks are zero.
    gatejit_runtime_options_t full{};
    if (options) {
      if (options->struct_size != kRuntimeOptionsV4Size)
        GATEJIT_RETURN_IF_ERROR(check_struct_size(options->struct_size, sizeof(gatejit_runtime_options_t),
                                                  "options.struct_size", "gatejit_runtime_options_t",
                                                  "GATEJIT_RUNTIME_OPTIONS_INIT"));
      std::memcpy(&full, options, options->struct_size);
    }
    auto rt = std::make_unique<gatejit_runtime_s>();
    rt->core = std::make_unique<gatejit::RuntimeCore>(gatejit::runtime_options_from(options ? &full : nullptr));
    GATEJIT_RETURN_IF_ERROR(rt->core->init());
    *out = rt.release();
    return gatejit::Status::Ok();
  });
}

void gatejit_runtime_destroy(gatejit_runtime_t rt) { delete rt; }

gatejit_status_t gatejit_runtime_load_bundle(gatejit_runtime_t rt, const char *path) {
  if (!rt) return null_arg("runtime");
  if (!path) return null_arg("path");
  return guarded([&] { return rt->core->resolver().add_bundle(path); });
}

gatejit_status_t gatejit_gate_epilogue(gatejit_runtime_t rt, const gatejit_gate_args_t *args) {
  if (!rt) return null_arg("runtime");
  if (!args) return null_arg("args");
  return guarded([&]() -> gatejit::Status {
    auto a = read_args(args);
    if (!a.ok()) return a.status();
    GATEJIT_RETURN_IF_ERROR(check_args(*a));
    return rt->core->launch(*a);
  });
}

gatejit_status_t gatejit_prepare(gatejit_runtime_t rt, const gatejit_gate_args_t *args) {
  if (!rt) return null_arg("runtime");
  if (!args) return null_arg("args");
  return guarded([&]() -> gatejit::Status {
    auto a = read_args(args);
    if (!a.ok()) return a.status();
    GATEJIT_RETURN_IF_ERROR(check_args(*a));
    return rt->core->prepare(*a);
  });
}

gatejit_status_t gatejit_explain(gatejit_runtime_t rt, const gatejit_gate_args_t *args, char **out_text) {
  if (!rt) return null_arg("runtime");
  if (!args) return null_arg("args");
  if (!out_text) return null_arg("out_text");
  return guarded([&]() -> gatejit::Status {
    auto a = read_args(args);
    if (!a.ok()) return a.status();
    GATEJIT_RETURN_IF_ERROR(check_args(*a));
    auto text = rt->core->explain(*a);
    if (!text.ok()) return text.status();
    *out_text = copy_string(*text);
    return *out_text ? gatejit::Status::Ok() : gatejit::internal_error("out of memory");
  });
}

gatejit_status_t gatejit_explain_contract_json(gatejit_runtime_t rt, const char *json, char **out_text) {
  if (!rt) return null_arg("runtime");
  if (!json) return null_arg("contract_json");
  if (!out_text) return null_arg("out_text");
  return guarded([&]() -> gatejit::Status {
    auto c = parse_contract(json);
    if (!c.ok()) return c.status();
    auto text = rt->core->resolver().explain(*c);
    if (!text.ok()) return text.status();
    *out_text = copy_string(*text);
    return *out_text ? gatejit::Status::Ok() : gatejit::internal_error("out of memory");
  });
}

gatejit_status_t gatejit_resolve_contract_json(gatejit_runtime_t rt, const char *json, char **out_text) {
  if (!rt) return null_arg("runtime");
  if (!json) return null_arg("contract_json");
  return guarded([&]() -> gatejit::Status {
    auto c = parse_contract(json);
    if (!c.ok()) return c.status();
    auto r = rt->core->resolver().resolve(*c);
    if (!r.ok()) return r.status();
    if (out_text) *out_text = copy_string(r->explanation);
    return gatejit::Status::Ok();
  });
}

void gatejit_string_free(char *text) { std::free(text); }

}  // extern "C"

namespace gatejit {

gatejit_status_t to_c_status(const Status &s) { return make_status(s); }

Status runtime_set_jit(gatejit_runtime_t rt, JitHook hook) {
  if (!rt) return invalid_argument("runtime is NULL");
  rt->core->resolver().set_jit(std::move(hook));
  return Status::Ok();
}

}  // namespace gatejit
