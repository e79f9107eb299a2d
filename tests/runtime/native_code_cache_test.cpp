// The native-code cache (native_code_cache.h; the runtime asks it only with
// GATEJIT_NATIVE_CODE=1, env_flag_test.cpp) with a scripted backend and a
// real disk cache in a fresh directory: a PTX kernel's machine code is
// compiled once and found by a later "process" (a new DiskCache on the same
// directory); a new driver (tag) compiles again; backends without native
// compilation, failed compiles, no cache and a read-only cache all fall back
// to the kernel's own code. On the H200 the CUDA driver's linker makes the
// cubins (scripts/device_jit.sh checks the warm GPU suite loads only them).
#include "native_code_cache.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace gatejit {
namespace {

using testing::HasSubstr;

class ScriptedBackend final : public DeviceBackend {
 public:
  std::string tag = "cuda-driver-13000/sm_90";
  Status compile_status;
  int compiles = 0;

  const char *name() const override { return "scripted"; }
  Status available() override { return Status::Ok(); }
  StatusOr<DeviceInfo> device_info(int) override { return DeviceInfo{"scripted", "sm_90", Target::kSm90}; }
  StatusOr<FunctionHandle> load_function(int, std::span<const uint8_t>, const std::string &, uint32_t,
                                         ModuleHandle *) override {
    return unsupported("not loaded here");
  }
  void unload_module(int, ModuleHandle) override {}
  Status launch(int, FunctionHandle, std::array<uint32_t, 3>, std::array<uint32_t, 3>, uint32_t, void *,
                void **) override {
    return unsupported("not launched here");
  }
  StatusOr<std::string> native_tag(int) override { return tag; }
  // "Machine code" that names its source and the tag, so a test sees which
  // compile made what it got.
  StatusOr<std::vector<uint8_t>> compile_native(int, std::span<const uint8_t> code) override {
    ++compiles;
    if (!compile_status.ok()) return compile_status;
    std::vector<uint8_t> out = {0x7f, 'E', 'L', 'F'};
    out.insert(out.end(), code.begin(), code.end());
    out.insert(out.end(), tag.begin(), tag.end());
    return out;
  }
};

KernelBinary ptx_kernel() {
  KernelBinary kb;
  kb.key = std::string(32, 'a');
  kb.contract_text = "gatejit-contract/1 target=sm_90";
  kb.target = Target::kSm90;
  kb.format = BinaryFormat::kPtx;
  kb.symbol = "gatejit_mma_bf16_sigmoid_boundary";
  kb.geometry.block_x = 128;
  kb.geometry.n_per_block = 64;
  kb.toolchain = "gatejit-test/toolchain";
  kb.report_json = "{}";
  kb.code = {'.', 'v', 'e', 'r', 's', 'i', 'o', 'n'};
  return kb;
}

std::vector<uint8_t> expected_cubin(const KernelBinary &kb, const std::string &tag) {
  std::vector<uint8_t> out = {0x7f, 'E', 'L', 'F'};
  out.insert(out.end(), kb.code.begin(), kb.code.end());
  out.insert(out.end(), tag.begin(), tag.end());
  return out;
}

class NativeCodeCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gatejit-native-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr) << std::strerror(errno);
    root_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  std::unique_ptr<DiskCache> open(bool read_only = false) {
    DiskCacheOptions o;
    o.dir = root_ + "/cache";
    o.read_only = read_only;
    auto c = DiskCache::open(o);
    EXPECT_TRUE(c.ok()) << c.status().to_string();
    return c.ok() ? std::move(*c) : nullptr;
  }
  size_t entries() const {
    size_t n = 0;
    for (const auto &e : std::filesystem::recursive_directory_iterator(root_))
      n += e.path().extension() == ".gjk";
    return n;
  }
  std::string root_;
};

TEST_F(NativeCodeCacheTest, CompiledOnceThenLoadedByALaterProcess) {
  ScriptedBackend backend;
  const KernelBinary kb = ptx_kernel();
  {
    auto cache = open();
    NativeCode first = native_code_for(backend, 0, kb, cache.get());
    EXPECT_EQ(first.how, "compiled, cached");
    EXPECT_EQ(first.code, expected_cubin(kb, backend.tag));
    // The entry is a checksummed cubin entry with the PTX entry's metadata.
    const std::string toolchain = native_toolchain(kb, backend.tag);
    auto stored = cache->get(cache_key(kb.key, toolchain), kb.key, toolchain);
    ASSERT_TRUE(stored.ok()) << stored.status().to_string();
    EXPECT_EQ(stored->format, BinaryFormat::kCubin);
    EXPECT_EQ(stored->symbol, kb.symbol);
    EXPECT_EQ(stored->geometry.block_x, kb.geometry.block_x);
  }
  auto later = open();  // a fresh process on the same directory
  NativeCode again = native_code_for(backend, 0, kb, later.get());
  EXPECT_EQ(again.how, "cache hit");
  EXPECT_EQ(again.code, expected_cubin(kb, backend.tag));
  EXPECT_EQ(backend.compiles, 1);
  EXPECT_EQ(entries(), 1u);
}

TEST_F(NativeCodeCacheTest, ANewDriverCompilesAgainBesideTheOldEntry) {
  ScriptedBackend backend;
  const KernelBinary kb = ptx_kernel();
  auto cache = open();
  native_code_for(backend, 0, kb, cache.get());
  backend.tag = "cuda-driver-13010/sm_90";
  NativeCode updated = native_code_for(backend, 0, kb, cache.get());
  EXPECT_EQ(updated.how, "compiled, cached");
  EXPECT_EQ(updated.code, expected_cubin(kb, backend.tag));
  EXPECT_EQ(backend.compiles, 2);
  EXPECT_EQ(entries(), 2u);
}

TEST_F(NativeCodeCacheTest, MachineCodeAndBackendsWithoutNativeCompilationLoadAsTheyAre) {
  ScriptedBackend backend;
  auto cache = open();
  KernelBinary hsaco = ptx_kernel();
  hsaco.target = Target::kGfx950;
  hsaco.format = BinaryFormat::kHsaco;
  NativeCode as_is = native_code_for(backend, 0, hsaco, cache.get());
  EXPECT_EQ(as_is.code, hsaco.code);
  EXPECT_THAT(as_is.how, HasSubstr("machine code already"));
  backend.tag = "";  // a backend that loads its code objects as they are
  NativeCode untagged = native_code_for(backend, 0, ptx_kernel(), cache.get());
  EXPECT_EQ(untagged.code, ptx_kernel().code);
  EXPECT_EQ(backend.compiles, 0);
  EXPECT_EQ(entries(), 0u);
}

TEST_F(NativeCodeCacheTest, AFailedCompileFallsBackToThePtxAndCachesNothing) {
  ScriptedBackend backend;
  backend.compile_status = device_error("cuLinkComplete failed: CUDA error 218");
  auto cache = open();
  NativeCode got = native_code_for(backend, 0, ptx_kernel(), cache.get());
  EXPECT_EQ(got.code, ptx_kernel().code);
  EXPECT_THAT(got.how, HasSubstr("cuLinkComplete failed"));
  EXPECT_EQ(entries(), 0u);
}

TEST_F(NativeCodeCacheTest, NoCacheOrAReadOnlyOneCompilesEveryTimeAndWritesNothing) {
  ScriptedBackend backend;
  const KernelBinary kb = ptx_kernel();
  NativeCode uncached = native_code_for(backend, 0, kb, nullptr);
  EXPECT_EQ(uncached.how, "compiled, not cached: no disk cache");
  EXPECT_EQ(uncached.code, expected_cubin(kb, backend.tag));
  open();  // creates the directory
  auto read_only = open(/*read_only=*/true);
  NativeCode ro = native_code_for(backend, 0, kb, read_only.get());
  EXPECT_THAT(ro.how, HasSubstr("not cached"));
  EXPECT_EQ(ro.code, expected_cubin(kb, backend.tag));
  EXPECT_EQ(backend.compiles, 2);
  EXPECT_EQ(entries(), 0u);
}

}  // namespace
}  // namespace gatejit
