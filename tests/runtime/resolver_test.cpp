// The resolution order (bundles -> disk cache -> JIT -> generic ->
// unsupported) and the explanation of each path, over real bundle files and
// a real cache directory. The JIT here is a counting compile function that
// returns a well-formed KernelBinary: the real compiler behind the same hook
// is exercised in tests/compiler/jit_test.cpp.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "bundle.h"
#include "disk_cache.h"
#include "gatejit/template_choice.h"
#include "resolver.h"

namespace gatejit {
namespace {

namespace fs = std::filesystem;

Contract normalized(int64_t m, int64_t ld_weight = 0) {
  Contract c;
  c.target = Target::kSm90;
  c.m = m;
  c.n = 4096;  // M = 1 takes gemv at this N, M >= 2 mma (template_choice.cpp)
  c.k = 7168;
  c.ld_weight = ld_weight;
  return *normalize(c);
}

// The form a compiler picks for `c` in these tests: sm_90's crossover at N =
// 4096, the gemv at M = 1 and the mma from M = 2 (a contract that names a
// template keeps it). The runtime never decides it: it reads it from the
// kernel's contract text, or asks the JIT hook.
TemplateKind fake_form(const Contract &c) {
  if (c.template_kind != TemplateKind::kAuto) return c.template_kind;
  return c.m_max >= 2 ? TemplateKind::kMma : TemplateKind::kGemv;
}

// What the compiler would produce for `c`, with placeholder code bytes:
// keyed by the contract as asked, its text naming the form it took.
KernelBinary binary_for(const Contract &c, const std::string &toolchain, const std::string &tag) {
  Contract compiled = c;
  compiled.template_kind = fake_form(c);
  KernelBinary kb;
  kb.key = contract_key(c);
  kb.contract_text = canonical_text(compiled);
  kb.target = c.target;
  kb.format = target_is_amdgpu(c.target) ? BinaryFormat::kHsaco : BinaryFormat::kPtx;
  kb.symbol = "gatejit_" + tag;
  kb.geometry = {256, 8, false};
  kb.toolchain = toolchain;
  kb.report_json = "{}";
  kb.code.assign(tag.begin(), tag.end());
  return kb;
}

// `c` as the dynamic-M bucket of `kind` up to `m_max`.
Contract bucket(const Contract &c, TemplateKind kind, int64_t m_max) {
  Contract b = c;
  b.template_kind = kind;
  b.m_dynamic = true;
  b.m = 0;
  b.m_max = m_max;
  return b;
}

// The 16-bucket of `c` as asked.
Contract bucket_of(const Contract &c) { return bucket(c, c.template_kind, kGemvMaxM); }

class ResolverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gatejit-resolver-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write_bundle(const std::string &name, const std::vector<KernelBinary> &kernels) {
    BundleWriter w;
    for (const auto &kb : kernels) EXPECT_TRUE(w.add(kb).ok());
    const std::string path = dir_ + "/" + name;
    EXPECT_TRUE(w.write(path, false).ok());
    return path;
  }

  ResolverOptions options(bool disable_jit = false) {
    ResolverOptions o;
    o.cache.dir = dir_ + "/cache";
    o.disable_jit = disable_jit;
    return o;
  }

  JitHook counting_jit() {
    return JitHook{[this](const Contract &c) -> StatusOr<KernelBinary> {
                     ++compiles_;
                     return binary_for(c, kToolchain, "jit");
                   },
                   kToolchain,
                   [](const Contract &c) -> StatusOr<std::string> { return std::string(template_name(fake_form(c))); }};
  }

  static constexpr const char *kToolchain = "test-toolchain/1";
  std::string dir_;
  int compiles_ = 0;
};

TEST_F(ResolverTest, NothingAvailableIsUnsupportedAndSaysWhatWasTried) {
  Resolver r(options());
  auto res = r.resolve(normalized(1));
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.status().code(), StatusCode::kUnsupported);
  const std::string &m = res.status().message();
  EXPECT_NE(m.find("specialised: not in 0 bundle(s)"), std::string::npos) << m;  // the form unknown: no compiler
  EXPECT_NE(m.find("specialised gemv: not in 0 bundle(s)"), std::string::npos) << m;  // the gemv's own key
  EXPECT_NE(m.find("JIT not attached"), std::string::npos) << m;
  EXPECT_NE(m.find("generic"), std::string::npos) << m;
}

TEST_F(ResolverTest, BundleServesTheSpecialisedKernel) {
  Resolver r(options());
  ASSERT_TRUE(r.add_bundle(write_bundle("kernels.gjb", {binary_for(normalized(1), "x", "bundled")})).ok());
  r.set_jit(counting_jit());
  auto res = r.resolve(normalized(1));
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_EQ(res->explanation, "specialised gemv from bundle kernels.gjb");
  EXPECT_EQ(res->binary.symbol, "gatejit_bundled");
  EXPECT_EQ(compiles_, 0);
  EXPECT_EQ(*r.explain(normalized(1)), "specialised gemv from bundle kernels.gjb");
}

// A contract that asks for a template is served by the kernel of the same
// contract left to the compiler, when the compiler took that template (a
// bundle built from auto contracts); a kernel of another form is not.
TEST_F(ResolverTest, AnAskedTemplateIsServedByTheSameFormLeftToTheCompiler) {
  Resolver r(options(/*disable_jit=*/true));
  // M = 1 takes the gemv here, M = 2 the mma: both keyed as auto contracts.
  ASSERT_TRUE(r.add_bundle(write_bundle("auto.gjb", {binary_for(normalized(1), "x", "auto_gemv"),
                                                     binary_for(normalized(2), "x", "auto_mma"),
                                                     binary_for(generic_contract_for(normalized(2)), "x", "generic")}))
                  .ok());
  auto asked = [](int64_t m, TemplateKind kind) {
    Contract c = normalized(m);
    c.template_kind = kind;
    return c;
  };
  auto gemv = r.resolve(asked(1, TemplateKind::kGemv));
  ASSERT_TRUE(gemv.ok()) << gemv.status().message();
  EXPECT_EQ(gemv->binary.symbol, "gatejit_auto_gemv");
  EXPECT_EQ(gemv->explanation, "specialised gemv from bundle auto.gjb");
  auto mma = r.resolve(asked(2, TemplateKind::kMma));
  ASSERT_TRUE(mma.ok()) << mma.status().message();
  EXPECT_EQ(mma->binary.symbol, "gatejit_auto_mma");
  // The gemv asked for at M = 2 is not the mma the compiler took there.
  auto other = r.resolve(asked(2, TemplateKind::kGemv));
  ASSERT_TRUE(other.ok()) << other.status().message();
  EXPECT_EQ(other->binary.symbol, "gatejit_generic") << other->explanation;
}

// The buckets: the smallest power of two from 16 to 4096 that holds M, then
// (M > 16) the larger ones; whichever form the compiler gave the bucket (here
// the mma's, as for the M = 2 it stands for), it serves every M it holds.
TEST_F(ResolverTest, MmaBucketsServeBatchM) {
  auto mma_bucket = [](int64_t m_max) { return bucket(normalized(2), TemplateKind::kAuto, m_max); };
  Resolver r(options(/*disable_jit=*/true));
  ASSERT_TRUE(r.add_bundle(write_bundle("b.gjb", {binary_for(mma_bucket(64), "x", "b64"),
                                                  binary_for(mma_bucket(16), "x", "b16")}))
                  .ok());
  auto res = r.resolve(normalized(40));
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_EQ(res->explanation, "specialised mma (dynamic-M bucket, m_max 64) from bundle b.gjb");
  // M = 1 would take the gemv at this N, but the 16-bucket (an mma) serves it.
  res = r.resolve(normalized(1));
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_EQ(res->explanation, "specialised mma (dynamic-M bucket, m_max 16) from bundle b.gjb");
  // M = 100: the 128- to 4096-buckets were tried (not in the bundle);
  // smaller buckets never serve a larger M.
  auto none = r.resolve(normalized(100));
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("m_max 128"), std::string::npos) << none.status().message();
  EXPECT_NE(none.status().message().find("m_max 4096"), std::string::npos) << none.status().message();
  EXPECT_EQ(none.status().message().find("m_max 64)"), std::string::npos) << none.status().message();
  // A prefill bucket serves every M above 16 up to it: M = 700 and, with
  // no 128-bucket, M = 100 take the 1024-bucket; past 4096 there is none.
  ASSERT_TRUE(r.add_bundle(write_bundle("p.gjb", {binary_for(mma_bucket(1024), "x", "b1024")})).ok());
  res = r.resolve(normalized(700));
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_EQ(res->explanation, "specialised mma (dynamic-M bucket, m_max 1024) from bundle p.gjb");
  res = r.resolve(normalized(100));
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_EQ(res->explanation, "specialised mma (dynamic-M bucket, m_max 1024) from bundle p.gjb");
  // M <= 16 keeps to the 16-buckets (decode: a prefill plan is no decode kernel).
  res = r.resolve(normalized(1));
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_EQ(res->explanation, "specialised mma (dynamic-M bucket, m_max 16) from bundle b.gjb");
  auto past = r.resolve(normalized(5000));
  ASSERT_FALSE(past.ok());
  EXPECT_EQ(past.status().message().find("dynamic-M bucket"), std::string::npos) << past.status().message();
}

// Bundles whose keys name the template (written while the runtime decided
// the form, or for a contract that asked for one) still serve: after the
// contract as asked and its buckets, the gemv's keys, then the mma's. gfx950
// at a fixed M = 16 (N = 2048) compiles to the mma's thin grid rows, which
// only that fixed M gets; without the exact kernel the gemv's 16-bucket
// serves, before the mma's planned for any M up to 16.
TEST_F(ResolverTest, BundlesKeyedByTheirTemplateStillServe) {
  Contract c;
  c.target = Target::kGfx950;
  c.m = 16;
  c.n = 2048;
  c.k = 7168;
  const Contract fixed = *normalize(c);
  Resolver r(options(/*disable_jit=*/true));
  ASSERT_TRUE(r.add_bundle(write_bundle("b.gjb", {binary_for(bucket(fixed, TemplateKind::kMma, kGemvMaxM), "x", "m16"),
                                                  binary_for(bucket(fixed, TemplateKind::kGemv, kGemvMaxM), "x", "g16")}))
                  .ok());
  auto res = r.resolve(fixed);
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_EQ(res->explanation, "specialised gemv (dynamic-M bucket, m_max 16) from bundle b.gjb");
  // The exact kernel keyed by its template comes before any bucket of the gemv's.
  Contract as_mma = fixed;
  as_mma.template_kind = TemplateKind::kMma;
  ASSERT_TRUE(r.add_bundle(write_bundle("old.gjb", {binary_for(as_mma, "x", "thin-old")})).ok());
  res = r.resolve(fixed);
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_EQ(res->explanation, "specialised mma from bundle old.gjb");
  // And the exact kernel keyed by the contract as asked comes first of all.
  ASSERT_TRUE(r.add_bundle(write_bundle("x.gjb", {binary_for(fixed, "x", "thin")})).ok());
  res = r.resolve(fixed);
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_EQ(res->explanation, "specialised mma from bundle x.gjb");
  EXPECT_EQ(res->binary.symbol, "gatejit_thin");
}

// With a compiler that may build it, an auto contract is served only by the
// kernels of the form the compiler picks: a gemv compiled because a contract
// asked for it (a test, an A/B) does not stand in for the mma the compiler
// would build. Without one (the JIT off) any form beats the generic.
TEST_F(ResolverTest, AnAutoContractTakesOnlyTheCompilersFormFromFormKeys) {
  const Contract c = normalized(4);  // fake_form: the mma
  Contract as_gemv = c, as_mma = c;
  as_gemv.template_kind = TemplateKind::kGemv;
  as_mma.template_kind = TemplateKind::kMma;
  const std::string gemv_bundle = write_bundle("g.gjb", {binary_for(as_gemv, "x", "asked-gemv")});
  {
    Resolver off(options(/*disable_jit=*/true));
    ASSERT_TRUE(off.add_bundle(gemv_bundle).ok());
    off.set_jit(counting_jit());
    auto res = off.resolve(c);
    ASSERT_TRUE(res.ok()) << res.status().message();
    EXPECT_EQ(res->explanation, "specialised gemv from bundle g.gjb");
  }
  Resolver r(options());
  ASSERT_TRUE(r.add_bundle(gemv_bundle).ok());
  r.set_jit(counting_jit());
  // The compiler picks the mma: the gemv's key is passed over, the mma compiled.
  auto res = r.resolve(c);
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_EQ(res->explanation, "specialised mma compiled by the JIT");
  EXPECT_EQ(compiles_, 1);
  // A kernel of the compiler's form under its own key serves without a compile
  // (a cache of its own: the one above now holds the compiled mma).
  ResolverOptions fresh = options();
  fresh.cache.dir = dir_ + "/cache-fresh";
  Resolver with_mma(fresh);
  ASSERT_TRUE(with_mma.add_bundle(gemv_bundle).ok());
  ASSERT_TRUE(with_mma.add_bundle(write_bundle("m.gjb", {binary_for(as_mma, "x", "asked-mma")})).ok());
  with_mma.set_jit(counting_jit());
  res = with_mma.resolve(c);
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_EQ(res->explanation, "specialised mma from bundle m.gjb");
  EXPECT_EQ(compiles_, 1);
}

TEST_F(ResolverTest, DynamicBucketServesOtherM) {
  Resolver r(options(/*disable_jit=*/true));
  ASSERT_TRUE(r.add_bundle(write_bundle("b.gjb", {binary_for(bucket_of(normalized(3)), "x", "bucket")})).ok());
  auto res = r.resolve(normalized(3));
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_NE(res->explanation.find("dynamic-M bucket, m_max 16"), std::string::npos) << res->explanation;
}

TEST_F(ResolverTest, GenericFromBundleWhenNoSpecialisedKernel) {
  Resolver r(options(/*disable_jit=*/true));
  const Contract generic = generic_contract_for(normalized(1));
  ASSERT_TRUE(r.add_bundle(write_bundle("g.gjb", {binary_for(generic, "x", "generic")})).ok());
  EXPECT_EQ(*r.explain(normalized(1)), "generic (no specialised kernel available) from bundle g.gjb");
  // A contract gemv refuses names its reason.
  EXPECT_EQ(*r.explain(normalized(2, 7170)),
            "generic (leading dimension ld_weight = 7170 is not 16-byte aligned) from bundle g.gjb");
}

TEST_F(ResolverTest, JitCompilesOnceThenTheCacheServes) {
  {
    Resolver r(options());
    r.set_jit(counting_jit());
    EXPECT_EQ(*r.explain(normalized(4)), "specialised mma compiled by the JIT (not in any bundle or the cache)");
    EXPECT_EQ(compiles_, 0) << "explain must not compile";
    auto res = r.resolve(normalized(4));
    ASSERT_TRUE(res.ok()) << res.status().message();
    EXPECT_EQ(res->explanation, "specialised mma compiled by the JIT");
    EXPECT_EQ(compiles_, 1);
  }
  Resolver again(options());  // a new process, in effect
  again.set_jit(counting_jit());
  auto res = again.resolve(normalized(4));
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res->explanation, "specialised mma from the disk cache");
  EXPECT_EQ(compiles_, 1);
}

TEST_F(ResolverTest, BundlesComeBeforeTheCache) {
  {
    Resolver warm(options());
    warm.set_jit(counting_jit());
    ASSERT_TRUE(warm.resolve(normalized(1)).ok());  // now cached
  }
  Resolver r(options());
  r.set_jit(counting_jit());
  ASSERT_TRUE(r.add_bundle(write_bundle("k.gjb", {binary_for(normalized(1), "x", "bundled")})).ok());
  EXPECT_EQ(r.resolve(normalized(1))->binary.symbol, "gatejit_bundled");
}

TEST_F(ResolverTest, DisabledJitFallsBackToGenericAndNeverCompiles) {
  Resolver r(options(/*disable_jit=*/true));
  r.set_jit(counting_jit());
  auto res = r.resolve(normalized(1));
  ASSERT_FALSE(res.ok());
  EXPECT_NE(res.status().message().find("JIT disabled"), std::string::npos);
  EXPECT_EQ(compiles_, 0);
}

TEST_F(ResolverTest, CompileErrorsAreReportedNotHidden) {
  Resolver r(options());
  r.set_jit(JitHook{[](const Contract &) -> StatusOr<KernelBinary> { return compile_error("boom"); }, kToolchain});
  auto res = r.resolve(normalized(1));
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.status().code(), StatusCode::kCompileError);
}

TEST_F(ResolverTest, MalformedBundleIsRefusedAtLoad) {
  const std::string path = dir_ + "/bad.gjb";
  FILE *f = fopen(path.c_str(), "wb");
  fputs("GJBUNDLE but not really", f);
  fclose(f);
  Resolver r(options());
  Status s = r.add_bundle(path);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("bad.gjb"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace gatejit

namespace gatejit {
namespace {

// A compile in one thread does not hold up resolution of other contracts.
TEST_F(ResolverTest, SlowCompileDoesNotBlockOtherContracts) {
  Resolver r(options());
  ASSERT_TRUE(r.add_bundle(write_bundle("k.gjb", {binary_for(normalized(1), "x", "bundled")})).ok());
  r.set_jit(counting_jit());
  ASSERT_TRUE(r.resolve(normalized(2)).ok());  // M = 2 now in the disk cache
  std::atomic<bool> compiling{false}, release{false};
  r.set_jit(JitHook{[&](const Contract &c) -> StatusOr<KernelBinary> {
                      compiling = true;
                      while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
                      return binary_for(c, kToolchain, "slow");
                    },
                    kToolchain});
  std::thread slow([&] { EXPECT_TRUE(r.resolve(normalized(8)).ok()); });
  while (!compiling) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  // While the JIT is stuck on M = 8, the bundled M = 1 kernel and the cached
  // M = 2 kernel resolve.
  auto fast = r.resolve(normalized(1));
  EXPECT_TRUE(fast.ok());
  EXPECT_EQ(fast->binary.symbol, "gatejit_bundled");
  auto cached = r.resolve(normalized(2));
  ASSERT_TRUE(cached.ok());
  EXPECT_EQ(cached->explanation, "specialised mma from the disk cache");
  release = true;
  slow.join();
}

}  // namespace
}  // namespace gatejit

namespace gatejit {
namespace {

// Issue 19, point 8: explain checks an entry (checksum, decode) before
// naming it; a damaged entry is passed over by explain and resolve alike.
TEST_F(ResolverTest, ExplainNeverNamesADamagedBundleEntry) {
  const std::string path = write_bundle("damaged.gjb", {binary_for(normalized(1), kToolchain, "bundled")});
  // The last byte is inside the only payload (the blob's own checksum).
  {
    FILE *f = fopen(path.c_str(), "r+b");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(fseek(f, -1, SEEK_END), 0);
    const int c = fgetc(f);
    ASSERT_EQ(fseek(f, -1, SEEK_END), 0);
    fputc(c ^ 0x40, f);
    fclose(f);
  }
  Resolver r(options());
  ASSERT_TRUE(r.add_bundle(path).ok());  // the index is intact; the entry is checked when used
  r.set_jit(counting_jit());
  auto explained = r.explain(normalized(1));
  ASSERT_TRUE(explained.ok()) << explained.status().message();
  EXPECT_EQ(explained->find("from bundle"), std::string::npos) << *explained;
  EXPECT_EQ(*explained, "specialised gemv compiled by the JIT (not in any bundle or the cache)");
  auto resolved = r.resolve(normalized(1));
  ASSERT_TRUE(resolved.ok()) << resolved.status().message();
  EXPECT_EQ(resolved->binary.symbol, "gatejit_jit");
}

// Issue 19, point 6: a JIT compile whose entry could not be stored says so.
TEST_F(ResolverTest, JitExplanationSaysWhenTheKernelWasNotStored) {
  ResolverOptions o = options();
  o.cache.max_bytes = 16;  // smaller than any entry
  Resolver r(o);
  r.set_jit(counting_jit());
  auto res = r.resolve(normalized(1));
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_NE(res->explanation.find("compiled by the JIT (not stored in the disk cache:"), std::string::npos)
      << res->explanation;
  EXPECT_NE(res->explanation.find("more than the cache limit of 16 bytes"), std::string::npos) << res->explanation;
}

}  // namespace
}  // namespace gatejit
