// Determinism: a code object is a pure function of (contract, toolchain).
// Cache keys and bundles depend on it, and compile() promises thread safety
// (each call has its own MLIR and LLVM contexts).
#include <gtest/gtest.h>

#include <cstdlib>
#include <latch>
#include <regex>
#include <thread>
#include <vector>

#include "compiler/compiler_test_support.h"
#include "gatejit/compiler/compiler.h"
#include "gatejit/contract.h"

namespace gatejit {
namespace {

using namespace testing_support;


// The report minus the wall-clock times, which legitimately vary.
nlohmann::json stable_report(nlohmann::json r) {
  r.erase("compile_ms");
  r.erase("compile_phases_ms");
  return r;
}

// A spread of contracts: every target, both templates, both dtypes and
// activations, fixed and dynamic M.
std::vector<Contract> varied_contracts() {
  std::vector<Contract> v;
  v.push_back(seed(Target::kGfx950));
  v.push_back(seed(Target::kGfx942));
  v.push_back(seed(Target::kSm90));
  Contract a = seed(Target::kGfx950);
  a.m_dynamic = true, a.m = 0, a.m_max = 16;
  a.dtype_hidden = a.dtype_weight = a.dtype_attn = a.dtype_out = DType::kF16;
  a.act = Activation::kSilu;
  v.push_back(a);
  Contract b = seed(Target::kGfx942);
  b.template_kind = TemplateKind::kGeneric;
  b.act = Activation::kSilu;
  v.push_back(b);
  Contract d = seed(Target::kSm90);
  d.m = 8, d.n = 4096, d.k = 2048;
  d.dtype_hidden = d.dtype_weight = d.dtype_attn = d.dtype_out = DType::kF16;
  v.push_back(d);
  Contract e = seed(Target::kGfx950);
  e.n = 1000, e.k = 1000, e.m = 4;
  v.push_back(e);
  Contract f = seed(Target::kSm90);
  f.template_kind = TemplateKind::kGeneric;
  v.push_back(f);
  return v;
}

class SameContractTwice : public testing::TestWithParam<Target> {};

TEST_P(SameContractTwice, ByteIdenticalCodeObjects) {
  const Contract c = seed(GetParam());
  auto first = compiler::compile(c);
  auto second = compiler::compile(c);
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  ASSERT_TRUE(second.ok()) << second.status().to_string();
  EXPECT_EQ(first->binary.code, second->binary.code);
  EXPECT_EQ(first->binary.symbol, second->binary.symbol);
  EXPECT_EQ(first->binary.key, second->binary.key);
  EXPECT_EQ(first->binary.contract_text, second->binary.contract_text);
  EXPECT_EQ(stable_report(first->report), stable_report(second->report));
  // The encoded cache/bundle blob embeds the report (with its timing), so
  // compare it with the timing equalised.
  KernelBinary a = first->binary, b = second->binary;
  a.report_json = b.report_json = "";
  EXPECT_EQ(encode_kernel_binary(a), encode_kernel_binary(b));
}

INSTANTIATE_TEST_SUITE_P(Targets, SameContractTwice, testing::Values(Target::kGfx950, Target::kGfx942, Target::kSm90),
                         [](const auto &info) { return std::string(target_name(info.param)); });

TEST(Determinism, EmittedIrIsStable) {
  const Contract c = seed(Target::kGfx950);
  for (compiler::Stage s : {compiler::Stage::kTemplate, compiler::Stage::kLlvm, compiler::Stage::kIsa}) {
    auto a = compiler::emit_stage(c, s);
    auto b = compiler::emit_stage(c, s);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(*a, *b);
  }
}

// Threads compiling different contracts at once get exactly what a lone
// compile gets. Each thread compiles its contract several times, and all
// threads start together, so the compiles really overlap.
TEST(Determinism, ConcurrentCompilesMatchSingleThreaded) {
  const std::vector<Contract> contracts = varied_contracts();
  std::vector<std::vector<uint8_t>> reference;
  std::vector<nlohmann::json> reference_reports;
  for (const Contract &c : contracts) {
    auto r = compiler::compile(c);
    ASSERT_TRUE(r.ok()) << canonical_text(c) << ": " << r.status().to_string();
    reference.push_back(r->binary.code);
    reference_reports.push_back(stable_report(r->report));
  }
  // Distinct contracts give distinct code (otherwise the comparison below
  // could not notice results being swapped between threads) - except that
  // the generic kernel for a target is shape-free, so compare only gemv ones.
  EXPECT_NE(reference[0], reference[1]);
  EXPECT_NE(reference[0], reference[3]);
  EXPECT_NE(reference[2], reference[5]);

  constexpr int kRounds = 3;
  const size_t n = contracts.size();
  std::vector<std::vector<std::vector<uint8_t>>> got(n);
  std::vector<std::vector<nlohmann::json>> got_reports(n);
  std::vector<std::string> errors(n);
  std::latch start{static_cast<ptrdiff_t>(n)};
  std::vector<std::thread> threads;
  for (size_t i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      for (int round = 0; round < kRounds; ++round) {
        auto r = compiler::compile(contracts[i]);
        if (!r.ok()) {
          errors[i] = r.status().to_string();
          return;
        }
        got[i].push_back(r->binary.code);
        got_reports[i].push_back(stable_report(r->report));
      }
    });
  }
  for (auto &t : threads) t.join();
  for (size_t i = 0; i < n; ++i) {
    SCOPED_TRACE(canonical_text(contracts[i]));
    ASSERT_EQ(errors[i], "");
    ASSERT_EQ(got[i].size(), size_t(kRounds));
    for (int round = 0; round < kRounds; ++round) {
      EXPECT_EQ(got[i][round], reference[i]) << "round " << round;
      EXPECT_EQ(got_reports[i][round], reference_reports[i]) << "round " << round;
    }
  }
}

// Many threads on the same contract: still one answer.
TEST(Determinism, ConcurrentCompilesOfOneContractAgree) {
  const Contract c = seed(Target::kGfx950);
  auto ref = compiler::compile(c);
  ASSERT_TRUE(ref.ok()) << ref.status().to_string();
  constexpr int kThreads = 6;
  std::vector<std::vector<uint8_t>> got(kThreads);
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      auto r = compiler::compile(c);
      if (r.ok()) got[i] = r->binary.code;
    });
  for (auto &t : threads) t.join();
  for (int i = 0; i < kThreads; ++i) EXPECT_EQ(got[i], ref->binary.code) << "thread " << i;
}

}  // namespace
}  // namespace gatejit

namespace gatejit {
namespace {

// The fingerprint that keys the disk cache names everything that shapes the
// code: the generator's own sources (a new tuning table must not reuse old
// entries), the templates, LLVM and the codegen options; a tuning override
// (GATEJIT_MMA_TUNING) is added to it.
TEST(Fingerprint, NamesGeneratorTemplatesLlvmAndOverrides) {
  const std::string fp = compiler::fingerprint();
  EXPECT_TRUE(std::regex_search(fp, std::regex("/generator-[0-9a-f]{16}/"))) << fp;
  EXPECT_TRUE(std::regex_search(fp, std::regex("/templates-[0-9a-f]{16}/"))) << fp;
  EXPECT_TRUE(std::regex_search(fp, std::regex("/llvm-22\\."))) << fp;
  setenv("GATEJIT_MMA_TUNING", "ksplit=4", 1);
  const std::string tuned = compiler::fingerprint();
  unsetenv("GATEJIT_MMA_TUNING");
  EXPECT_NE(tuned, fp);
  EXPECT_NE(tuned.find("mma-tuning:ksplit=4"), std::string::npos) << tuned;
  EXPECT_EQ(compiler::fingerprint(), fp);
}

}  // namespace
}  // namespace gatejit
