#include "jit_library.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "file_io.h"
#include "gatejit/contract_json.h"
#include "gatejit/jit_plugin.h"
#include "input_echo.h"
#include "input_limits.h"
#include "log.h"
#include "self_location.h"

namespace gatejit {
namespace {

// The plugin's entry points, resolved once per library.
struct Plugin {
  std::string path;
  decltype(&gatejit_jit_compile) compile = nullptr;
  decltype(&gatejit_jit_blob_free) blob_free = nullptr;
  decltype(&gatejit_status_message) status_message = nullptr;
  decltype(&gatejit_status_code) status_code = nullptr;
  decltype(&gatejit_status_free) status_free = nullptr;
  decltype(&gatejit_jit_template) form = nullptr;  // optional
};

bool is_file(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

template <typename F>
Status resolve(void *handle, const std::string &path, const char *name, F *out) {
  *out = reinterpret_cast<F>(::dlsym(handle, name));
  if (!*out) return not_found(path + ": not a gatejit JIT library (it has no " + name + ")");
  return Status::Ok();
}

// The most of a plugin's status message that is read: the plugin's own text
// is not trusted to end.
constexpr size_t kMaxPluginMessageBytes = 64 * 1024;

// A plugin's failure as a Status: its code where it is one of ours, its
// message where it gave one.
Status plugin_failure(const Plugin &p, gatejit_status_t s) {
  const int raw = int(p.status_code(s));
  const StatusCode code = raw > int(StatusCode::kOk) && raw <= int(StatusCode::kInternal) ? StatusCode(raw)
                                                                                          : StatusCode::kInternal;
  const char *message = p.status_message(s);
  Status status = message ? Status(code, std::string(message, ::strnlen(message, kMaxPluginMessageBytes)))
                          : Status(code, p.path + ": the JIT library failed without a message (status code " +
                                             std::to_string(raw) + ", no message)");
  p.status_free(s);
  return status;
}

StatusOr<KernelBinary> compile_through(const Plugin &p, const Contract &c) {
  const std::string json = contract_to_json(c).dump();
  uint8_t *blob = nullptr;
  size_t size = 0;
  if (gatejit_status_t s = p.compile(json.c_str(), &blob, &size)) return plugin_failure(p, s);
  // Success must come with a kernel, and no kernel is larger than a cache
  // entry may be: anything else is not read at all.
  if (!blob)
    return corrupt(p.path + ": the JIT library reported success but returned no kernel (a NULL blob of " +
                   std::to_string(size) + " bytes)");
  if (size > limits::kCacheEntryBytes) {
    p.blob_free(blob);
    return corrupt(p.path + ": the JIT library returned a kernel of " + std::to_string(size) +
                   " bytes, more than any kernel (" + std::to_string(limits::kCacheEntryBytes) + " bytes)");
  }
  auto kb = decode_kernel_binary({blob, size});
  p.blob_free(blob);
  if (!kb.ok()) return corrupt(p.path + ": the JIT library returned a kernel that does not decode: " + kb.status().message());
  if (kb->key != contract_key(c))
    return internal_error(p.path + ": the JIT library compiled " + kb->contract_text + " when asked for " +
                          canonical_text(c));
  return kb;
}

}  // namespace

std::optional<JitLibraryLocation> find_jit_library() {
  if (const char *env = std::getenv("GATEJIT_JIT_LIBRARY"); env && *env) return JitLibraryLocation{env, true};
  const std::string folder = folder_of_runtime_binary();
  if (folder.empty()) return std::nullopt;
  for (const char *name : {"libgatejit_jit.so.0", "libgatejit_jit.so"}) {
    const std::string path = folder + "/" + name;
    if (is_file(path)) return JitLibraryLocation{path, false};
  }
  return std::nullopt;
}

StatusOr<JitHook> load_jit_library(const std::string &path) {
  // dlopen reads whatever the path names: a FIFO would block it forever, a
  // device would feed it without end. Only a regular file (links followed)
  // goes on to dlopen.
  const std::string cannot = escape_input(path) + ": cannot load the JIT library: ";
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    const int e = errno;
    if (e == ENOENT) return not_found(cannot + "no such file");
    return io_error(cannot + std::strerror(e));
  }
  if (!S_ISREG(st.st_mode))
    return invalid_argument(cannot + "it is " + file_type_name(st.st_mode) + ", not a regular file");
  void *handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = ::dlerror();
    return not_found(path + ": cannot load the JIT library: " + (why ? why : "unknown error"));
  }
  // Never dlclosed: hooks holding its functions may outlive every runtime.
  auto plugin = std::make_shared<Plugin>();
  plugin->path = path;
  decltype(&gatejit_jit_plugin_version) version = nullptr;
  decltype(&gatejit_jit_fingerprint) fingerprint = nullptr;
  GATEJIT_RETURN_IF_ERROR(resolve(handle, path, "gatejit_jit_plugin_version", &version));
  GATEJIT_RETURN_IF_ERROR(resolve(handle, path, "gatejit_jit_fingerprint", &fingerprint));
  GATEJIT_RETURN_IF_ERROR(resolve(handle, path, "gatejit_jit_compile", &plugin->compile));
  GATEJIT_RETURN_IF_ERROR(resolve(handle, path, "gatejit_jit_blob_free", &plugin->blob_free));
  GATEJIT_RETURN_IF_ERROR(resolve(handle, path, "gatejit_status_message", &plugin->status_message));
  GATEJIT_RETURN_IF_ERROR(resolve(handle, path, "gatejit_status_code", &plugin->status_code));
  GATEJIT_RETURN_IF_ERROR(resolve(handle, path, "gatejit_status_free", &plugin->status_free));
  if (version() != GATEJIT_JIT_PLUGIN_VERSION)
    return unsupported(path + ": JIT plugin interface version " + std::to_string(version()) + ", this runtime speaks " +
                       std::to_string(GATEJIT_JIT_PLUGIN_VERSION));
  // The fingerprint keys the disk cache and is recorded in it: one line of
  // printable text, read no further than its bound.
  const char *fp = fingerprint();
  if (!fp) return unsupported(path + ": gatejit_jit_fingerprint returned NULL; not a usable JIT library");
  const size_t fp_len = ::strnlen(fp, limits::kToolchainBytes + 1);
  const std::string_view fp_text(fp, fp_len);
  if (fp_len == 0 || fp_len > limits::kToolchainBytes ||
      !std::all_of(fp_text.begin(), fp_text.end(), [](char ch) { return ch >= 0x20 && ch < 0x7f; }))
    return unsupported(path + ": gatejit_jit_fingerprint returned " + quote_input(fp_text) +
                       ", not one line of 1-" + std::to_string(limits::kToolchainBytes) +
                       " printable bytes; not a usable JIT library");
  JitHook hook;
  hook.fingerprint = std::string(fp_text);
  hook.compile = [plugin](const Contract &c) { return compile_through(*plugin, c); };
  plugin->form = reinterpret_cast<decltype(&gatejit_jit_template)>(::dlsym(handle, "gatejit_jit_template"));
  if (plugin->form)
    hook.form = [plugin](const Contract &c) -> StatusOr<std::string> {
      const char *name = plugin->form(contract_to_json(c).dump().c_str());
      if (!name) return invalid_argument("the JIT library picks no template for " + canonical_text(c));
      return std::string(name);
    };
  log::info("JIT library " + path + " attached (compiler " + hook.fingerprint + ")");
  return hook;
}

}  // namespace gatejit
