// A JIT library that misbehaves on purpose, for the runtime's hostile-plugin
// tests (tests/runtime/jit_plugin_hostile_test.cpp): it exports the plugin
// interface of gatejit/jit_plugin.h, and $GATEJIT_FAKE_PLUGIN_MODE, read at
// each call, picks what goes wrong:
//   null_fingerprint     gatejit_jit_fingerprint() returns NULL
//   long_fingerprint     ... returns 1 MiB of text
//   forged_fingerprint   ... returns text with a line break and an escape
//   null_blob_huge_size  compile succeeds with blob NULL, size SIZE_MAX
//   huge_size            compile succeeds with a 16-byte blob, size SIZE_MAX
//   garbage_blob         compile succeeds with 64 bytes that are no kernel
//   null_message         compile fails with a status whose message is NULL
//                        and whose code is no gatejit code
//   (anything else)      a well-behaved plugin that compiles nothing
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "gatejit/jit_plugin.h"

struct gatejit_status_s {
  int code;
  const char *message;
};

namespace {

std::string mode() {
  const char *m = std::getenv("GATEJIT_FAKE_PLUGIN_MODE");
  return m ? m : "";
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int gatejit_jit_plugin_version(void) { return GATEJIT_JIT_PLUGIN_VERSION; }

__attribute__((visibility("default"))) const char *gatejit_jit_fingerprint(void) {
  static const std::string kLong(1 << 20, 'f');
  const std::string m = mode();
  if (m == "null_fingerprint") return nullptr;
  if (m == "long_fingerprint") return kLong.c_str();
  if (m == "forged_fingerprint") return "fake\ngatejit: warning: \x1b[2Jforged";
  return "fake-plugin/1";
}

__attribute__((visibility("default"))) gatejit_status_t gatejit_jit_compile(const char *, uint8_t **out_blob,
                                                                             size_t *out_size) {
  const std::string m = mode();
  if (m == "null_blob_huge_size") {
    *out_blob = nullptr;
    *out_size = SIZE_MAX;
    return nullptr;
  }
  if (m == "huge_size" || m == "garbage_blob") {
    const size_t n = m == "huge_size" ? 16 : 64;
    *out_blob = static_cast<uint8_t *>(std::calloc(n, 1));
    *out_size = m == "huge_size" ? SIZE_MAX : n;
    return nullptr;
  }
  static gatejit_status_s null_message{12345, nullptr};
  static gatejit_status_s nothing{GATEJIT_UNSUPPORTED, "the fake plugin compiles nothing"};
  return m == "null_message" ? &null_message : &nothing;
}

__attribute__((visibility("default"))) void gatejit_jit_blob_free(uint8_t *blob) { std::free(blob); }

__attribute__((visibility("default"))) gatejit_status_code_t gatejit_status_code(gatejit_status_t s) {
  return s ? static_cast<gatejit_status_code_t>(s->code) : GATEJIT_OK;
}
__attribute__((visibility("default"))) const char *gatejit_status_message(gatejit_status_t s) {
  return s ? s->message : "";
}
// The statuses are static: nothing to free.
__attribute__((visibility("default"))) void gatejit_status_free(gatejit_status_t) {}

}  // extern "C"
