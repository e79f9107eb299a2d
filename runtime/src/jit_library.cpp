#include "jit_library.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "file_io.h"
#include "gatejit/contract_json.h"
#include "gatejit/jit_plugin.h"
#include "input_echo.h"
#include "log.h"

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
};

bool is_file(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string folder_of_this_binary() {
  Dl_info info{};
  if (!::dladdr(reinterpret_cast<void *>(&find_jit_library), &info) || !info.dli_fname) return "";
  const std::string self = info.dli_fname;
  const size_t slash = self.rfind('/');
  return slash == std::string::npos ? "." : self.substr(0, slash);
}

template <typename F>
Status resolve(void *handle, const std::string &path, const char *name, F *out) {
  *out = reinterpret_cast<F>(::dlsym(handle, name));
  if (!*out) return not_found(path + ": not a gatejit JIT library (it has no " + name + ")");
  return Status::Ok();
}

StatusOr<KernelBinary> compile_through(const Plugin &p, const Contract &c) {
  const std::string json = contract_to_json(c).dump();
  uint8_t *blob = nullptr;
  size_t size = 0;
  if (gatejit_status_t s = p.compile(json.c_str(), &blob, &size)) {
    const Status status(StatusCode(int(p.status_code(s))), p.status_message(s));
    p.status_free(s);
    return status;
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
  const std::string folder = folder_of_this_binary();
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
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    const int e = errno;
    if (e == ENOENT) return not_found(escape_input(path) + ": no such file");
    return io_error(escape_input(path) + ": cannot look at it: " + std::strerror(e));
  }
  if (!S_ISREG(st.st_mode))
    return invalid_argument(escape_input(path) + ": is " + file_type_name(st.st_mode) +
                            ", not a regular file; refusing to load it as the JIT library");
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
  JitHook hook;
  hook.fingerprint = fingerprint();
  hook.compile = [plugin](const Contract &c) { return compile_through(*plugin, c); };
  log::info("JIT library " + path + " attached (compiler " + hook.fingerprint + ")");
  return hook;
}

}  // namespace gatejit
