// The background JIT's bookkeeping, without a device: the worker pool (one
// job per key, a bounded queue whose refused jobs are queued again or
// compiled by a waiter, failures kept with their message, queued jobs
// failed at destruction), and the resolver in background mode (a miss is
// served at once by the generic kernel of a bundle while the specialised
// kernel compiles; later resolutions take it; nothing loadable means
// waiting, as sync mode does; a failed compile stays visible in explain).
// Swapping the kernel into a call (never inside a graph capture) needs a
// device: tests/gpu/background_jit_gpu_test.cpp.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <thread>

#include "background_jit.h"
#include "gatejit/gatejit.h"
#include "gatejit/jit_hook.h"
#include "gatejit/template_choice.h"
#include "resolver.h"
#include "support/scoped_env.h"

namespace gatejit {
namespace {

namespace fs = std::filesystem;
using State = BackgroundJob::State;

// Holds compiles until opened.
class Gate {
 public:
  void open() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }
  void pass() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return open_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

BackgroundResult result_named(const std::string &name) {
  BackgroundResult r;
  r.binary.symbol = name;
  r.explanation = name;
  return r;
}

// Waits (bounded) until `job` reaches `state`.
bool reaches(const BackgroundJob &job, State state) {
  for (int i = 0; i < 2000 && job.state() != state; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return job.state() == state;
}

TEST(BackgroundCompiler, OneJobPerKeyAndTheQueueIsBounded) {
  Gate gate;
  std::atomic<int> compiles{0};
  auto compile = [&](const std::string &name) {
    return [&, name]() -> StatusOr<BackgroundResult> {
      ++compiles;
      gate.pass();
      return result_named(name);
    };
  };
  BackgroundCompiler pool({/*threads=*/1, /*queue=*/2});
  auto a = pool.submit("a", "kernel a", compile("a"));
  ASSERT_TRUE(reaches(*a, State::kRunning));  // the one thread holds it
  EXPECT_EQ(pool.submit("a", "kernel a", compile("a-again")), a);
  auto b = pool.submit("b", "kernel b", compile("b"));
  auto c = pool.submit("c", "kernel c", compile("c"));
  auto d = pool.submit("d", "kernel d", compile("d"));
  EXPECT_EQ(b->state(), State::kQueued);
  EXPECT_EQ(c->state(), State::kQueued);
  EXPECT_EQ(d->state(), State::kRefused);  // the queue holds 2
  EXPECT_NE(d->describe().find("queue was full"), std::string::npos) << d->describe();
  EXPECT_FALSE(pool.retry(d));  // still full
  const auto counts = pool.counts();
  EXPECT_EQ(counts.running + counts.queued + counts.refused, 4u);
  gate.open();
  for (const auto &job : {a, b, c}) EXPECT_EQ(job->wait().value().binary.symbol, job->key());
  EXPECT_TRUE(pool.retry(d));  // room again: queued, then compiled
  EXPECT_EQ(d->wait().value().binary.symbol, "d");
  EXPECT_EQ(compiles.load(), 4);  // "a" once, though submitted twice
  EXPECT_EQ(pool.counts().done, 4u);
}

TEST(BackgroundCompiler, AWaiterCompilesWhatNoThreadHasStarted) {
  Gate gate;
  BackgroundCompiler pool({1, 1});
  auto busy = pool.submit("busy", "busy", [&]() -> StatusOr<BackgroundResult> {
    gate.pass();
    return result_named("busy");
  });
  ASSERT_TRUE(reaches(*busy, State::kRunning));
  std::thread::id compiled_on;
  auto compile_here = [&]() -> StatusOr<BackgroundResult> {
    compiled_on = std::this_thread::get_id();
    return result_named("x");
  };
  auto queued = pool.submit("queued", "queued", compile_here);
  auto refused = pool.submit("refused", "refused", compile_here);
  ASSERT_EQ(queued->state(), State::kQueued);
  ASSERT_EQ(refused->state(), State::kRefused);
  // The one thread is busy: prepare() compiles both itself instead of waiting.
  for (const auto &job : {queued, refused}) {
    compiled_on = {};
    ASSERT_TRUE(job->wait().ok());
    EXPECT_EQ(compiled_on, std::this_thread::get_id());
  }
  gate.open();
  EXPECT_TRUE(busy->wait().ok());
}

TEST(BackgroundCompiler, AFailureIsKeptWithItsMessage) {
  BackgroundCompiler pool({2, 4});
  int calls = 0;
  auto job = pool.submit("k", "specialised mma", [&]() -> StatusOr<BackgroundResult> {
    ++calls;
    return compile_error("llc said no");
  });
  EXPECT_FALSE(job->wait().ok());
  EXPECT_EQ(job->state(), State::kFailed);
  EXPECT_EQ(job->describe(), "failed: llc said no");
  EXPECT_EQ(pool.submit("k", "specialised mma", nullptr), job);  // not compiled again
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(pool.counts().failed, 1u);
}

TEST(BackgroundCompiler, DestructionFailsWhatNeverStarted) {
  Gate gate;
  std::shared_ptr<BackgroundJob> running, queued, refused;
  {
    BackgroundCompiler pool({1, 1});
    running = pool.submit("r", "r", [&]() -> StatusOr<BackgroundResult> {
      gate.pass();
      return result_named("r");
    });
    ASSERT_TRUE(reaches(*running, State::kRunning));
    queued = pool.submit("q", "q", [] { return StatusOr<BackgroundResult>(result_named("q")); });
    refused = pool.submit("f", "f", [] { return StatusOr<BackgroundResult>(result_named("f")); });
    std::thread opener([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      gate.open();
    });
    opener.detach();
  }  // joins the running compile
  EXPECT_EQ(running->state(), State::kDone);
  for (const auto &job : {queued, refused}) {
    EXPECT_EQ(job->state(), State::kFailed);
    EXPECT_NE(job->describe().find("destroyed before the background compile ran"), std::string::npos);
  }
}

TEST(JitMode, ParsesTheThreeModesAndNamesTheField) {
  EXPECT_EQ(*parse_jit_mode("sync", "GATEJIT_JIT"), JitMode::kSync);
  EXPECT_EQ(*parse_jit_mode("background", "GATEJIT_JIT"), JitMode::kBackground);
  EXPECT_EQ(*parse_jit_mode("off", "GATEJIT_JIT"), JitMode::kOff);
  auto bad = parse_jit_mode("lazy", "GATEJIT_JIT");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "GATEJIT_JIT = 'lazy': allowed are sync, background, off");
}

// ---- the resolver in background mode

Contract sm90(int64_t m, int64_t n = 4096) {
  Contract c;
  c.target = Target::kSm90;
  c.m = m;
  c.n = n;
  c.k = 7168;
  return *normalize(c);
}

KernelBinary binary_of(const Contract &compiled, const std::string &tag) {
  KernelBinary kb;
  kb.key = contract_key(compiled);
  kb.contract_text = canonical_text(compiled);
  kb.target = compiled.target;
  kb.format = BinaryFormat::kPtx;
  kb.symbol = "gatejit_" + tag;
  kb.geometry = {256, 8, false};
  kb.toolchain = "test-toolchain/1";
  kb.report_json = "{}";
  kb.code.assign(tag.begin(), tag.end());
  return kb;
}

// The form a compiler picks for `c` in these tests (sm_90 at N = 4096: the
// gemv at M = 1, the mma from M = 2), as the JIT hook tells explain.
TemplateKind form_of_test(const Contract &c) {
  if (c.template_kind != TemplateKind::kAuto) return c.template_kind;
  return c.m_max >= 2 ? TemplateKind::kMma : TemplateKind::kGemv;
}
StatusOr<std::string> fake_form(const Contract &c) { return std::string(template_name(form_of_test(c))); }

// What that compiler makes of `c`: keyed by the contract as asked, its text
// naming the form, as the real compiler stores it.
KernelBinary compiled_binary(const Contract &c, const std::string &tag) {
  Contract compiled = c;
  compiled.template_kind = form_of_test(c);
  KernelBinary kb = binary_of(compiled, tag);
  kb.key = contract_key(c);
  return kb;
}

class BackgroundResolverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gatejit-background-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  ResolverOptions options() {
    ResolverOptions o;
    o.disable_cache = true;  // the finished job itself serves the later resolutions
    o.background_jit = true;
    o.background = {2, 16};
    return o;
  }
  // A bundle "generic.gjb" with the generic kernel of `c`.
  std::string generic_bundle(const Contract &c) {
    BundleWriter w;
    EXPECT_TRUE(w.add(binary_of(generic_contract_for(c), "generic")).ok());
    const std::string path = dir_ + "/generic.gjb";
    EXPECT_TRUE(w.write(path, false).ok());
    return path;
  }
  // A JIT whose compiles wait for `gate_` and count.
  JitHook gated_jit(bool fail = false) {
    return JitHook{[this, fail](const Contract &c) -> StatusOr<KernelBinary> {
                     ++compiles_;
                     gate_.pass();
                     if (fail) return compile_error("the template does not instantiate");
                     return compiled_binary(c, "jit");
                   },
                   "test-toolchain/1", fake_form};
  }

  std::string dir_;
  Gate gate_;
  std::atomic<int> compiles_{0};
};

TEST_F(BackgroundResolverTest, AMissIsServedByTheGenericKernelWhileTheSpecialisedOneCompiles) {
  const Contract c = sm90(4);  // mma
  Resolver r(options());
  ASSERT_TRUE(r.add_bundle(generic_bundle(c), "the shipped bundle").ok());
  r.set_jit(gated_jit());
  // Returns while the compile is held: nobody waits for it.
  auto first = r.resolve(c);
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ(first->binary.symbol, "gatejit_generic");
  ASSERT_NE(first->pending, nullptr);
  EXPECT_EQ(first->explanation.rfind("generic (specialised mma compiles in the background: ", 0), 0u)
      << first->explanation;
  EXPECT_NE(first->explanation.find(") from the shipped bundle generic.gjb"), std::string::npos) << first->explanation;
  EXPECT_NE(r.explain(c)->find("specialised mma compiles in the background"), std::string::npos) << *r.explain(c);
  // Many callers meanwhile: one job, one compile.
  std::vector<std::thread> callers;
  for (int i = 0; i < 8; ++i)
    callers.emplace_back([&] {
      auto again = r.resolve(c);
      EXPECT_TRUE(again.ok() && again->pending == first->pending);
    });
  for (auto &t : callers) t.join();
  gate_.open();
  ASSERT_TRUE(first->pending->wait().ok());
  EXPECT_EQ(compiles_.load(), 1);
  // Later resolutions take the specialised kernel.
  auto later = r.resolve(c);
  ASSERT_TRUE(later.ok());
  EXPECT_EQ(later->binary.symbol, "gatejit_jit");
  EXPECT_EQ(later->pending, nullptr);
  EXPECT_EQ(later->explanation, "specialised mma compiled by the JIT (not cached) in the background");
  EXPECT_EQ(*r.explain(c), later->explanation);
  EXPECT_EQ(r.background_counts().done, 1u);
}

TEST_F(BackgroundResolverTest, WithNothingLoadableMeanwhileTheCallWaitsAsInSyncMode) {
  const Contract c = sm90(1);  // gemv
  Resolver r(options());
  r.set_jit(gated_jit());
  EXPECT_EQ(*r.explain(c), "specialised gemv compiled by the JIT (nothing else loadable meanwhile)");
  gate_.open();
  auto res = r.resolve(c);
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_EQ(res->binary.symbol, "gatejit_jit");
  EXPECT_EQ(res->pending, nullptr);
  EXPECT_NE(res->explanation.find("(waited: nothing else loadable meanwhile)"), std::string::npos) << res->explanation;
}

TEST_F(BackgroundResolverTest, AFailedCompileKeepsTheGenericKernelAndSaysWhy) {
  const Contract c = sm90(64);
  Resolver r(options());
  ASSERT_TRUE(r.add_bundle(generic_bundle(c), "the shipped bundle").ok());
  r.set_jit(gated_jit(/*fail=*/true));
  gate_.open();
  auto first = r.resolve(c);
  ASSERT_TRUE(first.ok());
  ASSERT_NE(first->pending, nullptr);
  EXPECT_FALSE(first->pending->wait().ok());
  const std::string why = "generic (specialised mma failed to compile in the background: the template does not "
                          "instantiate) from the shipped bundle generic.gjb";
  auto later = r.resolve(c);
  ASSERT_TRUE(later.ok());
  EXPECT_EQ(later->explanation, why);
  EXPECT_EQ(later->pending, nullptr);
  EXPECT_EQ(*r.explain(c), why);
  EXPECT_EQ(compiles_.load(), 1);
  // Without the generic kernel, the error itself, as sync mode gives it.
  Resolver bare(options());
  bare.set_jit(gated_jit(true));
  auto error = bare.resolve(c);
  ASSERT_FALSE(error.ok());
  EXPECT_EQ(error.status().message(), "the template does not instantiate");
}

TEST_F(BackgroundResolverTest, BundledKernelsAndAnOffJitStartNoJob) {
  const Contract c = sm90(4);
  ResolverOptions o = options();
  Resolver r(o);
  BundleWriter w;
  ASSERT_TRUE(w.add(compiled_binary(c, "bundled")).ok());
  ASSERT_TRUE(w.write(dir_ + "/k.gjb", false).ok());
  ASSERT_TRUE(r.add_bundle(dir_ + "/k.gjb").ok());
  r.set_jit(gated_jit());
  auto res = r.resolve(c);
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res->explanation, "specialised mma from bundle k.gjb");
  EXPECT_EQ(res->pending, nullptr);
  o.disable_jit = true;
  Resolver off(o);
  ASSERT_TRUE(off.add_bundle(generic_bundle(c), "the shipped bundle").ok());
  off.set_jit(gated_jit());
  res = off.resolve(c);
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res->explanation, "generic (no specialised kernel available) from the shipped bundle generic.gjb");
  EXPECT_EQ(res->pending, nullptr);
  EXPECT_EQ(compiles_.load(), 0);
  EXPECT_EQ(off.background_counts().queued + off.background_counts().done, 0u);
}

// ---- the mode from the environment and the C API option

TEST(JitModeOption, BadValuesAreErrorsNamingTheirSource) {
  gatejit_runtime_t rt = nullptr;
  setenv("GATEJIT_JIT", "eager", 1);
  gatejit_status_t s = gatejit_runtime_create(nullptr, &rt);
  ASSERT_NE(s, nullptr);
  EXPECT_STREQ(gatejit_status_message(s), "GATEJIT_JIT = 'eager': allowed are sync, background, off");
  gatejit_status_free(s);
  unsetenv("GATEJIT_JIT");
  gatejit_runtime_options_t o = GATEJIT_RUNTIME_OPTIONS_INIT;
  o.disable_cache = 1;
  o.jit_mode = gatejit_jit_mode_t(9);
  s = gatejit_runtime_create(&o, &rt);
  ASSERT_NE(s, nullptr);
  EXPECT_NE(std::string(gatejit_status_message(s)).find("options.jit_mode = 9: allowed values are"), std::string::npos)
      << gatejit_status_message(s);
  gatejit_status_free(s);
  EXPECT_EQ(rt, nullptr);
}

// With a JIT attached (a stand-in compile: no device, no compiler here),
// explain tells the three modes apart; GATEJIT_JIT=off and disable_jit agree,
// and the option wins over the variable.
TEST(JitModeOption, TheModeComesFromTheOptionElseTheVariable) {
  // Only GATEJIT_JIT varies: no bundle, no JIT switch from where the tests run.
  ScopedEnv bundles("GATEJIT_BUNDLE_PATH"), disabled("GATEJIT_DISABLE_JIT");
  bundles.unset();
  disabled.unset();
  const char *contract = R"({"m": 1, "n": 1536, "k": 7168, "target": "sm_90"})";
  auto explain_with = [&](const char *env, gatejit_jit_mode_t mode) {
    if (env) setenv("GATEJIT_JIT", env, 1);
    else unsetenv("GATEJIT_JIT");
    gatejit_runtime_options_t o = GATEJIT_RUNTIME_OPTIONS_INIT;
    o.disable_cache = 1;
    o.disable_shipped_bundle = 1;
    o.jit_mode = mode;
    gatejit_runtime_t rt = nullptr;
    gatejit_status_t s = gatejit_runtime_create(&o, &rt);
    std::string out = s ? std::string("create: ") + gatejit_status_message(s) : "";
    gatejit_status_free(s);
    if (rt) {
      EXPECT_TRUE(runtime_set_jit(rt, JitHook{[](const Contract &) -> StatusOr<KernelBinary> {
                                                return compile_error("not in this test");
                                              },
                                              "test-toolchain/1", fake_form})
                      .ok());
      char *text = nullptr;
      s = gatejit_explain_contract_json(rt, contract, &text);
      out = s ? gatejit_status_message(s) : text;
      gatejit_status_free(s);
      gatejit_string_free(text);
      gatejit_runtime_destroy(rt);
    }
    unsetenv("GATEJIT_JIT");
    return out;
  };
  const std::string sync = "specialised gemv compiled by the JIT (not in any bundle or the cache)";
  const std::string background = "specialised gemv compiled by the JIT (nothing else loadable meanwhile)";
  const std::string off = "JIT disabled (GATEJIT_DISABLE_JIT=1, GATEJIT_JIT=off or disable_jit)";
  EXPECT_EQ(explain_with(nullptr, GATEJIT_JIT_DEFAULT), sync);
  EXPECT_EQ(explain_with("background", GATEJIT_JIT_DEFAULT), background);
  EXPECT_NE(explain_with("off", GATEJIT_JIT_DEFAULT).find(off), std::string::npos);
  EXPECT_NE(explain_with(nullptr, GATEJIT_JIT_OFF).find(off), std::string::npos);
  EXPECT_EQ(explain_with("off", GATEJIT_JIT_BACKGROUND), background);
  EXPECT_EQ(explain_with("background", GATEJIT_JIT_SYNC), sync);
}

}  // namespace
}  // namespace gatejit
