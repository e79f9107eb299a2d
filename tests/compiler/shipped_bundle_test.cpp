// The shipped bundle as the build makes it (cmake/shipped_bundle.cmake):
// exactly the generic kernel set of gfx950, gfx942 and sm_90, and found by
// the real libgatejit.so beside itself, so that a runtime with the JIT off
// and an empty cache resolves every valid contract to it (resolution only:
// no GPU). The runtime is the shared library, dlopened as Python does, so
// the bundle is found from the library's own location.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "bundle.h"
#include "compiler/cli_run.h"
#include "gatejit/contract_json.h"
#include "gatejit/gatejit.h"
#include "gatejit/template_choice.h"
#include "generic_kernel_set.h"
#include "support/random_contract.h"

namespace gatejit {
namespace {

using namespace testing_support;

#ifdef GATEJIT_SHIPPED_BUNDLE_PATH

constexpr Target kTargets[] = {Target::kGfx950, Target::kGfx942, Target::kSm90};

TEST(ShippedBundle, HoldsExactlyTheGenericKernelSetOfTheThreeTargets) {
  auto bundle = Bundle::open(GATEJIT_SHIPPED_BUNDLE_PATH);
  ASSERT_TRUE(bundle.ok()) << bundle.status().message();
  std::set<std::string> expected;
  for (Target t : kTargets)
    for (const Contract &c : generic_kernel_contracts(t)) expected.insert(contract_key(c));
  std::set<std::string> held;
  for (const BundleEntryInfo &e : (*bundle)->entries()) {
    held.insert(e.key);
    auto kb = (*bundle)->find(e.key);
    ASSERT_TRUE(kb.ok()) << kb.status().message();
    EXPECT_NE(kb->contract_text.find(" template=generic "), std::string::npos) << kb->contract_text;
    EXPECT_EQ(kb->target, e.target);
  }
  EXPECT_EQ(held.size(), (*bundle)->size()) << "a key twice";
  EXPECT_EQ(held, expected);
  EXPECT_EQ(held.size(), 116u);  // 52 each on gfx950 and sm_90, 12 on gfx942
}

// The C API of the real libgatejit.so, dlopened.
class SharedRuntime {
 public:
  SharedRuntime() {
    lib_ = dlopen(GATEJIT_RUNTIME_LIBRARY_PATH, RTLD_NOW | RTLD_LOCAL);
    if (!lib_) return;
    create_ = reinterpret_cast<decltype(create_)>(dlsym(lib_, "gatejit_runtime_create"));
    destroy_ = reinterpret_cast<decltype(destroy_)>(dlsym(lib_, "gatejit_runtime_destroy"));
    resolve_ = reinterpret_cast<decltype(resolve_)>(dlsym(lib_, "gatejit_resolve_contract_json"));
    explain_ = reinterpret_cast<decltype(explain_)>(dlsym(lib_, "gatejit_explain_contract_json"));
    message_ = reinterpret_cast<decltype(message_)>(dlsym(lib_, "gatejit_status_message"));
    status_free_ = reinterpret_cast<decltype(status_free_)>(dlsym(lib_, "gatejit_status_free"));
    string_free_ = reinterpret_cast<decltype(string_free_)>(dlsym(lib_, "gatejit_string_free"));
  }
  ~SharedRuntime() {
    if (rt_) destroy_(rt_);
  }
  bool loaded() const { return lib_ && create_ && destroy_ && resolve_ && explain_ && message_; }
  std::string create(const gatejit_runtime_options_t &o) {
    if (rt_) destroy_(rt_), rt_ = nullptr;
    return take(create_(&o, &rt_));
  }
  // The explanation, or "error: <message>".
  std::string resolve(const std::string &json) { return text_of(resolve_, json); }
  std::string explain(const std::string &json) { return text_of(explain_, json); }

 private:
  std::string take(gatejit_status_t s) {
    std::string m = s ? message_(s) : "";
    if (s) status_free_(s);
    return m;
  }
  template <typename F>
  std::string text_of(F f, const std::string &json) {
    char *text = nullptr;
    const std::string error = take(f(rt_, json.c_str(), &text));
    const std::string out = error.empty() ? std::string(text ? text : "") : "error: " + error;
    string_free_(text);
    return out;
  }

  void *lib_ = nullptr;
  gatejit_runtime_t rt_ = nullptr;
  decltype(&gatejit_runtime_create) create_ = nullptr;
  decltype(&gatejit_runtime_destroy) destroy_ = nullptr;
  decltype(&gatejit_resolve_contract_json) resolve_ = nullptr;
  decltype(&gatejit_explain_contract_json) explain_ = nullptr;
  decltype(&gatejit_status_message) message_ = nullptr;
  decltype(&gatejit_status_free) status_free_ = nullptr;
  decltype(&gatejit_string_free) string_free_ = nullptr;
};

// A spread of valid contracts over the three targets: every dtype
// combination, scale kind, activation and rounding, shapes from decode to
// prefill, dynamic M, padded and unaligned rows.
std::vector<Contract> spread(int count) {
  std::mt19937_64 rng(4646);
  std::vector<Contract> out;
  while (int(out.size()) < count) {
    auto c = normalize(random_contract(rng));
    if (c.ok()) out.push_back(*c);
  }
  return out;
}

class ShippedBundleRuntime : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("GATEJIT_CACHE_DIR", (dir_ / "cache").c_str(), 1);  // empty: never created
    unsetenv("GATEJIT_BUNDLE_PATH");
    unsetenv("GATEJIT_SHIPPED_BUNDLE");
    unsetenv("GATEJIT_DISABLE_JIT");
    ASSERT_TRUE(rt_.loaded()) << dlerror();
    options_.disable_jit = 1;
  }
  void TearDown() override { unsetenv("GATEJIT_SHIPPED_BUNDLE"); }

  TempDir dir_;
  SharedRuntime rt_;
  gatejit_runtime_options_t options_ = GATEJIT_RUNTIME_OPTIONS_INIT;
};

TEST_F(ShippedBundleRuntime, JitOffAndAnEmptyCacheServeEveryValidContractFromIt) {
  ASSERT_EQ(rt_.create(options_), "");
  std::set<Target> targets;
  for (const Contract &c : spread(400)) {
    targets.insert(c.target);
    const std::string json = contract_to_json(c).dump();
    const std::string how = rt_.resolve(json);
    EXPECT_NE(how.find("generic ("), std::string::npos) << json << "\n  " << how;
    EXPECT_NE(how.find(" from the shipped bundle gatejit-generic.gjb"), std::string::npos) << json << "\n  " << how;
    EXPECT_EQ(rt_.explain(json), how) << json;
  }
  EXPECT_EQ(targets.size(), 3u);
  // The cache was looked in (and so created), never written.
  for (const auto &e : fs::recursive_directory_iterator(dir_ / "cache"))
    EXPECT_FALSE(e.is_regular_file()) << "nothing compiled, nothing cached: " << e.path();
}

TEST_F(ShippedBundleRuntime, NamedBundlesComeFirstAndTheVariableLeavesItOut) {
  Contract c;
  c.target = Target::kGfx942;
  c.n = 1000;
  c.k = 999;  // not a whole number of 16-byte vectors: generic
  c = *normalize(c);
  const std::string json = contract_to_json(c).dump();
  // A bundle of the user's holding the same generic kernel is searched first.
  auto shipped = Bundle::open(GATEJIT_SHIPPED_BUNDLE_PATH);
  ASSERT_TRUE(shipped.ok());
  auto kb = (*shipped)->find(contract_key(generic_contract_for(c)));
  ASSERT_TRUE(kb.ok()) << kb.status().message();
  BundleWriter mine;
  ASSERT_TRUE(mine.add(*kb).ok());
  ASSERT_TRUE(mine.write((dir_ / "mine.gjb").string(), false).ok());
  setenv("GATEJIT_BUNDLE_PATH", (dir_ / "mine.gjb").c_str(), 1);
  ASSERT_EQ(rt_.create(options_), "");
  EXPECT_NE(rt_.resolve(json).find("from bundle mine.gjb"), std::string::npos) << rt_.resolve(json);
  unsetenv("GATEJIT_BUNDLE_PATH");
  // Left out: nothing serves the contract any more.
  setenv("GATEJIT_SHIPPED_BUNDLE", "0", 1);
  ASSERT_EQ(rt_.create(options_), "");
  EXPECT_NE(rt_.resolve(json).find("error: no kernel can serve"), std::string::npos) << rt_.resolve(json);
}

TEST(ShippedBundleTool, ExplainNamesTheShippedBundleAsTheSource) {
  TempDir dir;
  const CliResult r =
      gatejit_run(dir, "", "explain --no-jit --m 3 --n 1000 --k 999 --target sm_90 --dtype f16 --act silu --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("source"), "shipped_bundle") << r.out;
  EXPECT_EQ(j.at("kernel"), "generic") << r.out;
}

#else
TEST(ShippedBundle, NotBuilt) { GTEST_SKIP() << "built with -DGATEJIT_BUILD_SHIPPED_BUNDLE=OFF"; }
#endif

}  // namespace
}  // namespace gatejit
