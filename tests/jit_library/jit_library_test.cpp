// libgatejit_jit.so from a runtime that has no compiler in it: this test links
// only the static runtime, so every compile here goes through the real
// library, dlopened by gatejit_runtime_create (GATEJIT_JIT_LIBRARY) or
// directly. It also checks that such a runtime reads the disk cache under the
// toolchain the compiler recorded there, and never an entry of another one.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gatejit/gatejit.h"

namespace {

const char *kGemv = R"({"m": 1, "n": 1536, "k": 7168, "dtype": "bf16", "act": "sigmoid", "target": "gfx950"})";
const char *kMma = R"({"m": 64, "n": 1536, "k": 7168, "dtype": "bf16", "act": "silu", "target": "sm_90"})";

std::string take(gatejit_status_t s) {
  std::string m = s ? gatejit_status_message(s) : "";
  gatejit_status_free(s);
  return m;
}

class JitLibraryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "gatejit-jitlib-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    setenv("GATEJIT_CACHE_DIR", (dir_ + "/cache").c_str(), 1);
    unsetenv("GATEJIT_DISABLE_JIT");
    unsetenv("GATEJIT_BUNDLE_PATH");
  }
  void TearDown() override {
    unsetenv("GATEJIT_JIT_LIBRARY");
    for (gatejit_runtime_t rt : runtimes_) gatejit_runtime_destroy(rt);
    std::filesystem::remove_all(dir_);
  }
  // A runtime made with `jit_library` in GATEJIT_JIT_LIBRARY ("" = unset).
  gatejit_runtime_t runtime(const std::string &jit_library) {
    if (jit_library.empty()) unsetenv("GATEJIT_JIT_LIBRARY");
    else setenv("GATEJIT_JIT_LIBRARY", jit_library.c_str(), 1);
    gatejit_runtime_t rt = nullptr;
    EXPECT_EQ(take(gatejit_runtime_create(nullptr, &rt)), "");
    if (rt) runtimes_.push_back(rt);
    return rt;
  }
  static std::string resolve(gatejit_runtime_t rt, const char *contract) {
    char *text = nullptr;
    const std::string error = take(gatejit_resolve_contract_json(rt, contract, &text));
    const std::string out = error.empty() ? std::string(text ? text : "") : "error: " + error;
    gatejit_string_free(text);
    return out;
  }
  static std::string explain(gatejit_runtime_t rt, const char *contract) {
    char *text = nullptr;
    const std::string error = take(gatejit_explain_contract_json(rt, contract, &text));
    const std::string out = error.empty() ? std::string(text ? text : "") : "error: " + error;
    gatejit_string_free(text);
    return out;
  }
  std::string toolchain_file() const { return dir_ + "/cache/v1/toolchain"; }

  std::string dir_;
  std::vector<gatejit_runtime_t> runtimes_;
};

TEST_F(JitLibraryTest, RuntimeWithoutCompilerCompilesThroughTheLibrary) {
  gatejit_runtime_t rt = runtime(GATEJIT_JIT_LIBRARY_PATH);
  ASSERT_NE(rt, nullptr);
  EXPECT_NE(explain(rt, kGemv).find("compiled by the JIT"), std::string::npos) << explain(rt, kGemv);
  const std::string how = resolve(rt, kGemv);
  EXPECT_NE(how.find("specialised gemv compiled by the JIT"), std::string::npos) << how;
  EXPECT_NE(resolve(rt, kMma).find("specialised mma compiled by the JIT"), std::string::npos);
  // The compiler's fingerprint is recorded beside the entries.
  std::ifstream recorded(toolchain_file());
  std::string line;
  ASSERT_TRUE(std::getline(recorded, line)) << toolchain_file();
  EXPECT_EQ(line.rfind("gatejit-", 0), 0u) << line;
}

TEST_F(JitLibraryTest, RuntimeWithoutCompilerReadsTheCacheUnderTheRecordedToolchain) {
  ASSERT_EQ(resolve(runtime(GATEJIT_JIT_LIBRARY_PATH), kGemv).find("error"), std::string::npos);
  gatejit_runtime_t plain = runtime("");  // no JIT library: bundles and the cache only
  const std::string how = resolve(plain, kGemv);
  EXPECT_NE(how.find("specialised gemv from the disk cache (no compiler attached"), std::string::npos) << how;
  // A contract nobody compiled is not there, and nothing can compile it.
  const std::string miss = resolve(plain, kMma);
  EXPECT_NE(miss.find("JIT not attached"), std::string::npos) << miss;

  // Another toolchain recorded (as after a compiler upgrade): the old entry
  // is stale and is not loaded.
  {
    std::ofstream(toolchain_file(), std::ios::trunc) << "gatejit-9.9.9/generator-other\n";
  }
  const std::string stale = explain(runtime(""), kGemv);
  EXPECT_EQ(stale.find("disk cache (no compiler"), std::string::npos) << stale;
}

TEST_F(JitLibraryTest, WithoutARecordedToolchainTheExplanationSaysWhyTheCacheIsUnread) {
  std::filesystem::create_directories(dir_ + "/cache");
  std::filesystem::permissions(dir_ + "/cache", std::filesystem::perms::owner_all);
  const std::string miss = explain(runtime(""), kGemv);
  EXPECT_NE(miss.find("the disk cache is not read without a compiler"), std::string::npos) << miss;
}

TEST_F(JitLibraryTest, NamedLibraryThatCannotLoadIsAnErrorNamingTheVariable) {
  setenv("GATEJIT_JIT_LIBRARY", (dir_ + "/missing.so").c_str(), 1);
  gatejit_runtime_t rt = nullptr;
  const std::string error = take(gatejit_runtime_create(nullptr, &rt));
  EXPECT_EQ(rt, nullptr);
  EXPECT_NE(error.find("GATEJIT_JIT_LIBRARY: " + dir_ + "/missing.so: cannot load"), std::string::npos) << error;
  // The runtime-only library is a library, but not a JIT library.
  setenv("GATEJIT_JIT_LIBRARY", GATEJIT_RUNTIME_LIBRARY_PATH, 1);
  const std::string wrong = take(gatejit_runtime_create(nullptr, &rt));
  EXPECT_NE(wrong.find("not a gatejit JIT library"), std::string::npos) << wrong;
  // Disabled JIT: the variable is not even read.
  setenv("GATEJIT_DISABLE_JIT", "1", 1);
  EXPECT_EQ(take(gatejit_runtime_create(nullptr, &rt)), "");
  gatejit_runtime_destroy(rt);
  unsetenv("GATEJIT_DISABLE_JIT");
}

// The library on its own, as Python or any dlopen user sees it: its C API
// creates a runtime, attaches its own compiler and compiles.
TEST_F(JitLibraryTest, LibraryServesItsOwnCApi) {
  void *lib = dlopen(GATEJIT_JIT_LIBRARY_PATH, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  auto create = reinterpret_cast<decltype(&gatejit_runtime_create)>(dlsym(lib, "gatejit_runtime_create"));
  auto attach = reinterpret_cast<decltype(&gatejit_runtime_attach_jit)>(dlsym(lib, "gatejit_runtime_attach_jit"));
  auto resolve_json = reinterpret_cast<decltype(&gatejit_resolve_contract_json)>(dlsym(lib, "gatejit_resolve_contract_json"));
  auto string_free = reinterpret_cast<decltype(&gatejit_string_free)>(dlsym(lib, "gatejit_string_free"));
  auto destroy = reinterpret_cast<decltype(&gatejit_runtime_destroy)>(dlsym(lib, "gatejit_runtime_destroy"));
  auto status_free = reinterpret_cast<decltype(&gatejit_status_free)>(dlsym(lib, "gatejit_status_free"));
  ASSERT_TRUE(create && attach && resolve_json && string_free && destroy && status_free);
  // Its internals are not visible: only gatejit_* is exported.
  EXPECT_EQ(dlsym(lib, "LLVMInitializeNVPTXTarget"), nullptr);
  EXPECT_EQ(dlsym(lib, "_ZN7gatejit8normalizeENS_8ContractE"), nullptr);
  unsetenv("GATEJIT_JIT_LIBRARY");
  gatejit_runtime_t rt = nullptr;
  ASSERT_EQ(create(nullptr, &rt), nullptr);
  ASSERT_EQ(attach(rt), nullptr);
  char *text = nullptr;
  gatejit_status_t s = resolve_json(rt, kMma, &text);
  EXPECT_EQ(s, nullptr);
  status_free(s);
  EXPECT_NE(std::string(text ? text : "").find("specialised mma compiled by the JIT"), std::string::npos)
      << (text ? text : "");
  string_free(text);
  destroy(rt);
}

}  // namespace
