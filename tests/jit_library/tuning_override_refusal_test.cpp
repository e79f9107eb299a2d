// A GATEJIT_MMA_TUNING the compiler refuses is INVALID_ARGUMENT through the
// C API, naming the key and its range, on both ways the JIT comes to a
// host: a runtime without the compiler dlopening libgatejit_jit.so, and the
// JIT library's own C API. rt=2147483648 killed the host with SIGFPE there,
// splits=65536 hung it.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <type_traits>

#include "gatejit/gatejit.h"

namespace {

const char *kMma = R"({"m": 64, "n": 1536, "k": 7168, "dtype": "bf16", "act": "silu", "target": "sm_90"})";

struct Refusals {
  const char *tuning, *says;
};
constexpr Refusals kRefusals[] = {
    {"rt=2147483648", "GATEJIT_MMA_TUNING: rt=2147483648 is out of range: rt takes 1-4"},
    {"splits=65536", "splits=65536 is out of range: splits takes 1-32"},
    {"rt=0", "rt=0 is out of range: rt takes 1-4"},
    {"colour=1", "unknown key 'colour'"},
};

// Each test's own cache folder, no bundles, the JIT on.
class TuningOverrideRefusal : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("GATEJIT_CACHE_DIR", (dir_.string() + "/cache").c_str(), 1);
    unsetenv("GATEJIT_DISABLE_JIT");
    unsetenv("GATEJIT_BUNDLE_PATH");
  }
  void TearDown() override {
    unsetenv("GATEJIT_MMA_TUNING");
    unsetenv("GATEJIT_JIT_LIBRARY");
    std::filesystem::remove_all(dir_);
  }
  const std::filesystem::path dir_ =
      std::filesystem::temp_directory_path() / ("gatejit-tuning-" + std::to_string(getpid()));
};

// The C API entry points a host calls: the runtime's own (linked), or the
// JIT library's (dlsym). `attach`: null where creation attaches the JIT.
struct CApi {
  decltype(&gatejit_runtime_create) create;
  decltype(&gatejit_runtime_attach_jit) attach;
  decltype(&gatejit_resolve_contract_json) resolve;
  decltype(&gatejit_status_code) code;
  decltype(&gatejit_status_message) message;
  decltype(&gatejit_status_free) status_free;
  decltype(&gatejit_runtime_destroy) destroy;
};

void expect_refusals(const CApi &api) {
  for (const Refusals &r : kRefusals) {
    SCOPED_TRACE(r.tuning);
    setenv("GATEJIT_MMA_TUNING", r.tuning, 1);
    gatejit_runtime_t rt = nullptr;
    ASSERT_EQ(api.create(nullptr, &rt), nullptr);
    if (api.attach) ASSERT_EQ(api.attach(rt), nullptr);
    char *text = nullptr;
    gatejit_status_t s = api.resolve(rt, kMma, &text);
    ASSERT_NE(s, nullptr) << "resolved: " << (text ? text : "");
    EXPECT_EQ(api.code(s), GATEJIT_INVALID_ARGUMENT);
    EXPECT_NE(std::string(api.message(s)).find(r.says), std::string::npos) << api.message(s);
    api.status_free(s);
    api.destroy(rt);
  }
}

TEST_F(TuningOverrideRefusal, RuntimeWithTheJitLibraryAttached) {
  setenv("GATEJIT_JIT_LIBRARY", GATEJIT_JIT_LIBRARY_PATH, 1);
  expect_refusals({gatejit_runtime_create, nullptr, gatejit_resolve_contract_json, gatejit_status_code,
                   gatejit_status_message, gatejit_status_free, gatejit_runtime_destroy});
}

TEST_F(TuningOverrideRefusal, TheJitLibrarysOwnCApi) {
  void *lib = dlopen(GATEJIT_JIT_LIBRARY_PATH, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  auto get = [&](auto &fn, const char *name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
  };
  CApi api{};
  get(api.create, "gatejit_runtime_create");
  get(api.attach, "gatejit_runtime_attach_jit");
  get(api.resolve, "gatejit_resolve_contract_json");
  get(api.code, "gatejit_status_code");
  get(api.message, "gatejit_status_message");
  get(api.status_free, "gatejit_status_free");
  get(api.destroy, "gatejit_runtime_destroy");
  ASSERT_TRUE(api.create && api.attach && api.resolve && api.code && api.message && api.status_free && api.destroy);
  expect_refusals(api);
}

}  // namespace
