// The JIT library's plugin entry points (gatejit/jit_plugin.h): the compiler
// behind a plain C interface, for a runtime that dlopens libgatejit_jit.so.
#include "gatejit/jit_plugin.h"

#include <cstdlib>
#include <cstring>

#include "gatejit/compiler/compiler.h"
#include "gatejit/contract_json.h"
#include "gatejit/jit_hook.h"

namespace {

gatejit::Status compile_to_blob(const char *contract_json, uint8_t **out_blob, size_t *out_size) {
  auto parsed = gatejit::contract_from_json_text(contract_json);
  if (!parsed.ok()) return parsed.status();
  auto c = gatejit::normalize(*parsed);
  if (!c.ok()) return c.status();
  auto compiled = gatejit::compiler::compile(*c);
  if (!compiled.ok()) return compiled.status();
  const std::vector<uint8_t> bytes = gatejit::encode_kernel_binary(compiled->binary);
  auto *blob = static_cast<uint8_t *>(std::malloc(bytes.size()));
  if (!blob) return gatejit::internal_error("out of memory for a " + std::to_string(bytes.size()) + "-byte kernel");
  std::memcpy(blob, bytes.data(), bytes.size());
  *out_blob = blob;
  *out_size = bytes.size();
  return gatejit::Status::Ok();
}

}  // namespace

extern "C" {

int gatejit_jit_plugin_version(void) { return GATEJIT_JIT_PLUGIN_VERSION; }

const char *gatejit_jit_fingerprint(void) {
  static const std::string fingerprint = gatejit::compiler::fingerprint();
  return fingerprint.c_str();
}

gatejit_status_t gatejit_jit_compile(const char *contract_json, uint8_t **out_blob, size_t *out_size) {
  if (!contract_json || !out_blob || !out_size)
    return gatejit::to_c_status(gatejit::invalid_argument(
        std::string(!contract_json ? "contract_json" : !out_blob ? "out_blob" : "out_size") + " is NULL"));
  *out_blob = nullptr;
  *out_size = 0;
  try {
    return gatejit::to_c_status(compile_to_blob(contract_json, out_blob, out_size));
  } catch (const std::exception &e) {
    return gatejit::to_c_status(gatejit::internal_error(std::string("unexpected exception: ") + e.what()));
  }
}

void gatejit_jit_blob_free(uint8_t *blob) { std::free(blob); }

const char *gatejit_jit_template(const char *contract_json) {
  if (!contract_json) return nullptr;
  try {
    auto parsed = gatejit::contract_from_json_text(contract_json);
    if (!parsed.ok()) return nullptr;
    auto c = gatejit::normalize(*parsed);
    if (!c.ok()) return nullptr;
    auto kind = gatejit::compiler::planned_template(*c);
    return kind.ok() ? gatejit::template_name(*kind) : nullptr;
  } catch (const std::exception &) {
    return nullptr;
  }
}

}  // extern "C"
