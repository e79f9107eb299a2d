// A GATEJIT_MMA_TUNING the compiler refuses is INVALID_ARGUMENT through the
// C API, naming the key and its range, on both ways the JIT comes to a
// host: a runtime without the compiler dlopening libgatejit_jit.so, and the
// JIT library's own C API. rt=2147483648 killed the host with SIGFPE there,
// splits=65536 hung it.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

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

class TuningOverrideRefusal : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "gatejit-tuning-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    setenv("GATEJIT_CACHE_DIR", (dir_ + "/cache").c_str(), 1);
    unsetenv("GATEJIT_DISABLE_JIT");
    unsetenv("GATEJIT_BUNDLE_PATH");
  }
  void TearDown() override {
    unsetenv("GATEJIT_MMA_TUNING");
    unsetenv("GATEJIT_JIT_LIBRARY");
    std::filesystem::remove_all(dir_);
  }
  std::string dir_;
};

TEST_F(TuningOverrideRefusal, RuntimeWithTheJitLibraryAttached) {
  setenv("GATEJIT_JIT_LIBRARY", GATEJIT_JIT_LIBRARY_PATH, 1);
  for (const Refusals &r : kRefusals) {
    SCOPED_TRACE(r.tuning);
    setenv("GATEJIT_MMA_TUNING", r.tuning, 1);
    gatejit_runtime_t rt = nullptr;
    ASSERT_EQ(gatejit_runtime_create(nullptr, &rt), nullptr);
    char *text = nullptr;
    gatejit_status_t s = gatejit_resolve_contract_json(rt, kMma, &text);
    ASSERT_NE(s, nullptr) << "resolved: " << (text ? text : "");
    EXPECT_EQ(gatejit_status_code(s), GATEJIT_INVALID_ARGUMENT);
    EXPECT_NE(std::string(gatejit_status_message(s)).find(r.says), std::string::npos) << gatejit_status_message(s);
    gatejit_status_free(s);
    gatejit_runtime_destroy(rt);
  }
}

TEST_F(TuningOverrideRefusal, TheJitLibrarysOwnCApi) {
  void *lib = dlopen(GATEJIT_JIT_LIBRARY_PATH, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  auto create = reinterpret_cast<decltype(&gatejit_runtime_create)>(dlsym(lib, "gatejit_runtime_create"));
  auto attach = reinterpret_cast<decltype(&gatejit_runtime_attach_jit)>(dlsym(lib, "gatejit_runtime_attach_jit"));
  auto resolve_json = reinterpret_cast<decltype(&gatejit_resolve_contract_json)>(dlsym(lib, "gatejit_resolve_contract_json"));
  auto destroy = reinterpret_cast<decltype(&gatejit_runtime_destroy)>(dlsym(lib, "gatejit_runtime_destroy"));
  auto code = reinterpret_cast<decltype(&gatejit_status_code)>(dlsym(lib, "gatejit_status_code"));
  auto message = reinterpret_cast<decltype(&gatejit_status_message)>(dlsym(lib, "gatejit_status_message"));
  auto status_free = reinterpret_cast<decltype(&gatejit_status_free)>(dlsym(lib, "gatejit_status_free"));
  ASSERT_TRUE(create && attach && resolve_json && destroy && code && message && status_free);
  for (const Refusals &r : kRefusals) {
    SCOPED_TRACE(r.tuning);
    setenv("GATEJIT_MMA_TUNING", r.tuning, 1);
    gatejit_runtime_t rt = nullptr;
    ASSERT_EQ(create(nullptr, &rt), nullptr);
    ASSERT_EQ(attach(rt), nullptr);
    char *text = nullptr;
    gatejit_status_t s = resolve_json(rt, kMma, &text);
    ASSERT_NE(s, nullptr) << "resolved: " << (text ? text : "");
    EXPECT_EQ(code(s), GATEJIT_INVALID_ARGUMENT);
    EXPECT_NE(std::string(message(s)).find(r.says), std::string::npos) << message(s);
    status_free(s);
    destroy(rt);
  }
}

}  // namespace
