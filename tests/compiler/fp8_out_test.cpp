// An fp8 e4m3 out quantised per token group of 128 columns (issue 20)
// through the real pipeline: the gemv, the register-streamed mma and the
// generic kernel compile for gfx950 and sm_90, 16-bit and fp8 weights; each
// declares and writes the scales (its last argument), stages the gated
// values and lets the last workgroup of a group's band quantise it (one
// arrival atomic, ties-to-even rounding, an IEEE division), and calls no
// device library. The tiled form never takes an fp8 out.
#include <gtest/gtest.h>

#include <string>

#include "compiler/compiler_test_support.h"
#include "gatejit/compiler/compiler.h"
#include "gatejit/contract.h"
#include "gatejit/kernel_abi.h"
#include "gatejit/kernel_binary.h"

namespace gatejit {
namespace {

using namespace testing_support;

Contract fp8_out(Target t, TemplateKind tk, int64_t m, int64_t n = 1536, int64_t k = 7168) {
  Contract c;
  c.target = t;
  c.m = m;
  c.n = n;
  c.k = k;
  c.dtype_out = DType::kFP8E4M3;
  c.out_scale = OutScale::kPerTokenGroup128;
  c.template_kind = tk;
  return c;
}

struct Form {
  Target target;
  TemplateKind kind;
};

std::string form_name(const testing::TestParamInfo<Form> &info) {
  return std::string(target_name(info.param.target)) + "_" + template_name(info.param.kind);
}

class Fp8OutForm : public testing::TestWithParam<Form> {};

// Every M bucket the form serves (mma: one row block, and grid y tiling M
// at 100), N = 1536 and 12288 (12 and 96 groups a row), K = 1040 (a partial
// step), a 16-bit and an e4m3 weight.
TEST_P(Fp8OutForm, DeclaresAndWritesTheScales) {
  const Form f = GetParam();
  const bool generic = f.kind == TemplateKind::kGeneric;
  for (int64_t m : {1, 4, 16, 100}) {
    if (f.kind == TemplateKind::kGemv && m > 16) continue;
    for (auto [n, k] : {std::pair<int64_t, int64_t>{1536, 7168}, {12288, 7168}, {1024, 1040}})
      for (bool fp8_weight : {false, true}) {
        SCOPED_TRACE("m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k) +
                     (fp8_weight ? " fp8 weight" : ""));
        Contract c = fp8_out(f.target, f.kind, m, n, k);
        if (fp8_weight) c.dtype_weight = DType::kFP8E4M3, c.weight_scale = WeightScale::kBlock128;
        auto compiled = compiler::compile(c);
        ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
        const nlohmann::json &r = compiled->report;
        EXPECT_EQ(r.value("template_file", ""), template_name(f.kind)) << "never the tiled form";
        EXPECT_NE(compiled->binary.symbol.find("_ofp8_e4m3_per_token_group128_"), std::string::npos)
            << compiled->binary.symbol;
        EXPECT_EQ(compiled->binary.abi, gate_abi(false, fp8_weight, true));
        const std::string abi = r.value("abi", "");
        EXPECT_EQ(abi.substr(abi.rfind(", ") + 2), "ptr out_scale") << abi;
        EXPECT_EQ(r["kernels"][0].value("scratch_bytes", 0), 0);
        if (m != 4 || n != 1536) continue;  // the code itself, once per form
        const std::string isa = isa_of(c);
        if (f.target == Target::kSm90) {
          // The scales parameter is the last, and it is written.
          const int last = fp8_weight ? 12 : 11;
          EXPECT_NE(isa.find(compiled->binary.symbol + "_param_" + std::to_string(last) + "]"), std::string::npos)
              << "the out scales are never read";
          EXPECT_EQ(isa.find(compiled->binary.symbol + "_param_" + std::to_string(last + 1)), std::string::npos);
          // Ties to even through cvt.rni (the subnormal quanta), y / s and
          // the scale itself by IEEE division.
          EXPECT_GT(count_of(isa, "cvt.rni.f32.f32"), 0);
          EXPECT_GT(count_of(isa, "div.rn.f32"), 0);
          if (generic) {
            EXPECT_GT(count_of(isa, "st.global.b8"), 0);  // one code a thread
          } else {
            // The band's codes: bytes one by one only where out does not
            // allow a lane's 4 codes at once (Fp8OutPlan.BandCodesAreStoredWhole).
            EXPECT_EQ(count_of(isa, "st.global.b8"), 4);
          }
          EXPECT_EQ(isa.find("div.approx"), std::string::npos);
          EXPECT_EQ(isa.find("call"), std::string::npos) << "a device-library call";
          // The shaped forms count each workgroup into its band once; the
          // generic kernel quantises within its workgroup (no atomic).
          EXPECT_EQ(count_of(isa, "atom.global.add.u32"), generic ? 0 : 1);
          EXPECT_EQ(count_of(isa, "gatejit_out_stage") > 0, !generic);
        } else {
          EXPECT_GT(count_of(isa, "v_rndne_f32"), 0);
          if (generic) {
            // One code a thread; neighbours' bytes may merge into a 2-byte store.
            EXPECT_GT(count_of(isa, "global_store_byte") + count_of(isa, "global_store_short"), 0);
          } else {
            // The band's codes, 4 bytes a lane (the byte-by-byte fallback
            // merges into the same unaligned store on gfx950).
            EXPECT_EQ(count_of(isa, "global_store_byte") + count_of(isa, "global_store_short"), 0);
          }
          EXPECT_EQ(isa.find("s_swappc"), std::string::npos) << "a call";
          EXPECT_EQ(count_of(isa, "global_atomic_add"), generic ? 0 : 1);
        }
      }
  }
}

INSTANTIATE_TEST_SUITE_P(Fp8Out, Fp8OutForm,
                         testing::Values(Form{Target::kGfx950, TemplateKind::kGemv},
                                         Form{Target::kGfx950, TemplateKind::kMma},
                                         Form{Target::kGfx950, TemplateKind::kGeneric},
                                         Form{Target::kSm90, TemplateKind::kGemv},
                                         Form{Target::kSm90, TemplateKind::kMma},
                                         Form{Target::kSm90, TemplateKind::kGeneric}),
                         form_name);

// sm_90 takes the tiled form from M = 17 for a bf16 out; an fp8 out stays
// on the register-streamed form, whose epilogue entry points finish its
// groups.
TEST(Fp8OutPlan, NeverTheTiledForm) {
  for (int64_t m : {32, 64, 512}) {
    Contract c = fp8_out(Target::kSm90, TemplateKind::kAuto, m);
    auto compiled = compiler::compile(c);
    ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
    EXPECT_EQ(compiled->report.value("template_file", ""), "mma") << "m=" << m;
    Contract bf16 = c;
    bf16.dtype_out = DType::kBF16;
    bf16.out_scale = OutScale::kNone;
    auto plain = compiler::compile(bf16);
    ASSERT_TRUE(plain.ok()) << plain.status().to_string();
    EXPECT_EQ(plain->report.value("template_file", ""), "mma_tiled") << "m=" << m;
  }
}

// v88: with a K split, the split's last block counts its band in
// (@out_groups_done, two barriers) right after resetting the split counter
// under `tid == 0`. LLVM saw the helper as non-convergent and jump-threaded
// that branch through it, so thread 0 and the rest of its warp reached two
// different copies of each barrier: 7 barriers for the template's 5, a
// hang on the H200, and the same code on gfx950. Every barrier of the
// template must stay one instruction: the count in the code equals the
// count after inlining (each helper is called once in this kernel), and no
// helper is left as a call.
TEST(Fp8OutPlan, KSplitKeepsEachBarrierOneInstruction) {
  struct Case {
    Target target;
    int64_t m;
    const char *tuning;  // sm_90's own plans never split this form
    const char *barrier;
  };
  for (const Case &k : {Case{Target::kSm90, 2, "tiled=0,splits=3", "\tbar.sync"},
                        Case{Target::kSm90, 64, "tiled=0,splits=3", "\tbar.sync"},
                        Case{Target::kGfx950, 64, "", "\ts_barrier"},
                        Case{Target::kGfx950, 100, "", "\ts_barrier"},
                        Case{Target::kGfx950, 512, "", "\ts_barrier"}}) {
   // Both meetings: the arrival (poll=0) and, where the grid fits one
   // round, the poll (v93), whose polling split has the barriers.
   for (const bool poll : {false, true}) {
    const std::string tuning_text = std::string(k.tuning) + (poll ? "" : (*k.tuning ? ",poll=0" : "poll=0"));
    SCOPED_TRACE(std::string(target_name(k.target)) + " m=" + std::to_string(k.m) + " " + tuning_text);
    ScopedMmaTuning tuning{tuning_text.c_str()};
    const Contract c = fp8_out(k.target, TemplateKind::kMma, k.m);
    auto compiled = compiler::compile(c);
    ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
    ASSERT_GT(compiled->report["tuning"].value("SPLITS", 1), 1) << "the case must split K";
    const bool polls = compiled->report["tuning"].value("SPLIT_POLL", 0) == 1;
    if (!poll) ASSERT_FALSE(polls);
    auto gpu = compiler::emit_stage(c, compiler::Stage::kGpu);
    ASSERT_TRUE(gpu.ok()) << gpu.status().to_string();
    const int template_barriers = count_of(*gpu, "gpu.barrier");
    ASSERT_EQ(count_of(*gpu, "call @out_groups_done"), 1);
    ASSERT_EQ(count_of(*gpu, "call @split_arrive"), polls ? 0 : 1);
    const std::string isa = isa_of(c);
    EXPECT_EQ(count_of(isa, k.barrier), template_barriers);
    // And no helper left as a call: a duplicated call to a helper with a
    // barrier would keep the count (before v88, M = 512 kept
    // @out_groups_done as a call on gfx950).
    EXPECT_EQ(count_of(isa, k.target == Target::kGfx950 ? "s_swappc_b64" : "\tcall"), 0);
   }
  }
}

// The band's quantisation (v66): a lane's codes go out in one store where
// out allows, 8 of them where a pass needs 16 lanes a row (the block's rows
// past 32 lanes each), 4 otherwise; the fallback stores them byte by byte.
// Before v66 a wave took a row and a lane stored its 4 (sm_90) or 2
// (gfx950) codes one by one.
TEST(Fp8OutPlan, BandCodesAreStoredWhole) {
  struct Case {
    Target target;
    TemplateKind kind;
    int64_t m;
    const char *whole;     // the lane's codes in one store
    int64_t bytes_stored;  // stores of one code (the fallback, in each pass)
  };
  for (const Case &k : {Case{Target::kSm90, TemplateKind::kMma, 64, "st.global.v2.b32", 16},
                        Case{Target::kSm90, TemplateKind::kGemv, 1, "st.global.b32", 4},
                        Case{Target::kGfx950, TemplateKind::kGemv, 16, "global_store_dwordx2", 0},
                        Case{Target::kGfx950, TemplateKind::kGemv, 1, "global_store_dword", 0}}) {
    SCOPED_TRACE(std::string(target_name(k.target)) + " m=" + std::to_string(k.m));
    const std::string isa = isa_of(fp8_out(k.target, k.kind, k.m));
    EXPECT_GT(count_of(isa, k.whole), 0);
    if (k.target == Target::kSm90) {
      EXPECT_EQ(count_of(isa, "st.global.b8"), k.bytes_stored);
    } else {
      EXPECT_EQ(count_of(isa, "global_store_byte") + count_of(isa, "global_store_short"), 0);
    }
  }
}

// A padded out row (ld_out not a multiple of a lane's codes) keeps the
// codes byte by byte where a second row exists; at M = 1 the stride never
// applies and the lane's 4 codes go out whole.
TEST(Fp8OutPlan, OneRowStoresWholeWhateverItsStride) {
  for (int64_t m : {1, 2}) {
    SCOPED_TRACE("m=" + std::to_string(m));
    const Contract packed = fp8_out(Target::kSm90, TemplateKind::kGemv, m);
    Contract padded = packed;
    padded.ld_out = packed.n + 1;
    // The lane's whole store is one of the kernel's b32 stores (beside the
    // scale's and the counter's): there with a packed out, and with a padded
    // one only at M = 1.
    const int64_t whole_packed = count_of(isa_of(packed), "st.global.b32");
    const std::string isa = isa_of(padded);
    if (m == 1) EXPECT_EQ(count_of(isa, "st.global.b32"), whole_packed);
    else EXPECT_LT(count_of(isa, "st.global.b32"), whole_packed);
    EXPECT_GT(count_of(isa, "st.global.b8"), 0);  // the fallback for an out pointer off 4 bytes
  }
}

}  // namespace
}  // namespace gatejit
