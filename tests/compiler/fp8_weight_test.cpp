// fp8 e4m3 weights with fp32 scales (issue 20) through the real pipeline:
// the gemv and the register-streamed mma compile for gfx950 and sm_90, both
// scale kinds, N and K not multiples of 128; their kernels declare, take and
// read the scale pointer, decode with the target's conversion, and (gfx950
// gemv) keep the loads of a K step in flight; the generic kernel serves the
// rest; gfx942 is refused, naming why.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/compiler_test_support.h"
#include "gatejit/compiler/compiler.h"
#include "gatejit/contract.h"
#include "gatejit/kernel_abi.h"
#include "gatejit/kernel_binary.h"

namespace gatejit {
namespace {

using namespace testing_support;

Contract fp8(Target t, WeightScale s, int64_t m, int64_t n = 1536, int64_t k = 7168) {
  Contract c;
  c.target = t;
  c.m = m;
  c.n = n;
  c.k = k;
  c.dtype_weight = DType::kFP8E4M3;
  c.weight_scale = s;
  return c;
}

std::string code_text(const compiler::CompiledKernel &k) {
  return std::string(k.binary.code.begin(), k.binary.code.end());
}

// Instructions of the report's histogram whose mnemonic starts with `prefix`.
int64_t histogram_prefix(const nlohmann::json &report, const std::string &prefix) {
  int64_t n = 0;
  for (const auto &[op, count] : report["instructions"]["histogram"].items())
    if (op.rfind(prefix, 0) == 0) n += count.get<int64_t>();
  return n;
}

// The target's exact e4m3 conversion: v_cvt_pk_f32_fp8 on gfx950 (the hsaco's
// disassembly), cvt.rn.f16x2.e4m3x2 on sm_90 (the PTX).
bool decodes_e4m3(const compiler::CompiledKernel &k) {
  if (k.binary.target == Target::kSm90) return code_text(k).find("cvt.rn.f16x2.e4m3x2") != std::string::npos;
  return histogram_prefix(k.report, "v_cvt_pk_f32_fp8") > 0;
}

// The kernel takes the scales as its 12th argument, after the classic 11:
// declared (the binary's list, the report's text) and in the code itself
// (the hsaco's kernarg segment, the PTX entry's parameters).
void expect_takes_the_scales(const compiler::CompiledKernel &k) {
  EXPECT_EQ(k.binary.abi, gate_abi(false, true));
  const std::string abi = k.report.value("abi", "");
  EXPECT_EQ(abi, abi_text(gate_abi(false, true)));
  EXPECT_EQ(abi.substr(abi.rfind(", ") + 2), "ptr weight_scale") << abi;
  if (k.binary.target == Target::kSm90) {
    const std::string ptx = code_text(k);
    EXPECT_NE(ptx.find(k.binary.symbol + "_param_11"), std::string::npos) << "no 12th parameter";
    EXPECT_EQ(ptx.find(k.binary.symbol + "_param_12"), std::string::npos) << "a 13th parameter";
  } else {
    EXPECT_EQ(k.report["kernels"][0].value("kernarg_bytes", 0), kKernelArgBytes + 8);
  }
}

struct Fp8Group {
  Target target;
  WeightScale scale;
};

std::string group_name(const testing::TestParamInfo<Fp8Group> &info) {
  std::string s = std::string(target_name(info.param.target)) + "_" + weight_scale_name(info.param.scale);
  for (char &ch : s)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

// Both targets, both scale kinds.
const auto kEveryGroup = testing::Values(Fp8Group{Target::kGfx950, WeightScale::kPerChannel},
                                         Fp8Group{Target::kGfx950, WeightScale::kBlock128},
                                         Fp8Group{Target::kSm90, WeightScale::kPerChannel},
                                         Fp8Group{Target::kSm90, WeightScale::kBlock128});

class Fp8Gemv : public testing::TestWithParam<Fp8Group> {};

// M = 1, 4, 16 at the seed shape and at N = 1000, K = 2064 (neither a
// multiple of 128: partial scale blocks in both directions, K = 129 vectors).
TEST_P(Fp8Gemv, CompilesAtDecodeMForEveryShape) {
  const Fp8Group g = GetParam();
  const std::string symbol =
      std::string("gatejit_gemv_bf16_wfp8_e4m3_") + weight_scale_name(g.scale) + "_sigmoid_boundary";
  for (int64_t m : {1, 4, 16})
    for (auto [n, k] : {std::pair<int64_t, int64_t>{1536, 7168}, {1000, 2064}}) {
      SCOPED_TRACE("m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k));
      Contract c = fp8(g.target, g.scale, m, n, k);
      c.template_kind = TemplateKind::kGemv;  // sm_90 takes the mma from M = 2 (Fp8Mma below)
      auto compiled = compiler::compile(c);
      ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
      const nlohmann::json &r = compiled->report;
      EXPECT_EQ(r.value("template", ""), "gemv") << r.value("reason", "");
      EXPECT_EQ(compiled->binary.symbol, symbol);
      EXPECT_NE(r.value("contract", "").find("dtype_weight=fp8_e4m3 weight_scale=" +
                                             std::string(weight_scale_name(g.scale))),
                std::string::npos)
          << r.value("contract", "");
      expect_takes_the_scales(*compiled);
      EXPECT_TRUE(decodes_e4m3(*compiled));
      EXPECT_GE(int64_t(r["grid"][0].get<uint32_t>()) * compiled->binary.geometry.n_per_block, n);
      EXPECT_EQ(r["kernels"][0].value("scratch_bytes", 0), 0);
    }
  // f16 activations, silu, fused rounding: another kernel of the same form.
  Contract c = fp8(g.target, g.scale, 8);
  c.template_kind = TemplateKind::kGemv;
  c.dtype_hidden = c.dtype_attn = c.dtype_out = DType::kF16;
  c.act = Activation::kSilu;
  c.rounding = Rounding::kFused;
  auto f16 = compiler::compile(c);
  ASSERT_TRUE(f16.ok()) << f16.status().to_string();
  EXPECT_EQ(f16->binary.symbol,
            std::string("gatejit_gemv_f16_wfp8_e4m3_") + weight_scale_name(g.scale) + "_silu_fused");
  expect_takes_the_scales(*f16);
  EXPECT_TRUE(decodes_e4m3(*f16));
}

INSTANTIATE_TEST_SUITE_P(Fp8, Fp8Gemv, kEveryGroup, group_name);

// A gemv K-split override (a sweep's gksplit) that would need more than
// 1024 threads a block halves, as the mma planner's does: the code object
// the compiler writes is one the loader accepts. v56's sweep asked for
// gksplit=14 (4 column groups of 14 warps) and got a bundle entry refused as
// "launch geometry out of range"; past 8 the key is now refused
// (tuning_override.h), and gfx950's 64-lane waves still halve 8.
TEST(Fp8Code, GemvSplitOverrideStaysWithinABlock) {
  ScopedMmaTuning scoped("");
  for (Target t : {Target::kSm90, Target::kGfx950})
    for (const char *tuning : {"gksplit=8", "gksplit=7", "gksplit=5"}) {
      SCOPED_TRACE(std::string(target_name(t)) + " " + tuning);
      scoped.set(tuning);
      auto compiled = compiler::compile(fp8(t, WeightScale::kBlock128, 1));
      ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
      EXPECT_LE(compiled->binary.geometry.block_x, 1024u);
      const int64_t ksplit = compiled->report["tuning"]["KSPLIT"];
      EXPECT_GE(ksplit, 1);
      EXPECT_EQ(7168 / 16 / target_wave_size(t) % ksplit, 0) << "a wave takes whole steps";
      const auto bytes = encode_kernel_binary(compiled->binary);
      auto decoded = decode_kernel_binary(bytes);
      EXPECT_TRUE(decoded.ok()) << decoded.status().to_string();
    }
}

// The mma form takes an e4m3 weight (v57): each lane loads 8-byte vectors
// (8 weights), decodes them into its 16-bit fragments and scales each step's
// products (weight_fragments_e4m3.mlir), on both targets, at every M bucket
// (M = 2 one hidden tile, 32 and 100 row blocks and, on gfx950, a K split
// across workgroups), N and K not multiples of 128. No scratch.
class Fp8Mma : public testing::TestWithParam<Fp8Group> {};

TEST_P(Fp8Mma, DecodesIntoFragmentsAtEveryM) {
  const Fp8Group g = GetParam();
  const std::string symbol =
      std::string("gatejit_mma_bf16_wfp8_e4m3_") + weight_scale_name(g.scale) + "_sigmoid_boundary";
  for (int64_t m : {2, 32, 100})
    for (auto [n, k] : {std::pair<int64_t, int64_t>{1536, 7168}, {1000, 2064}}) {
      SCOPED_TRACE("m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k));
      Contract c = fp8(g.target, g.scale, m, n, k);
      c.template_kind = TemplateKind::kMma;
      auto compiled = compiler::compile(c);
      ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
      const nlohmann::json &r = compiled->report;
      EXPECT_EQ(r.value("template_file", ""), "mma") << "the register-streamed form, never the tiled one";
      EXPECT_EQ(compiled->binary.symbol, symbol);
      expect_takes_the_scales(*compiled);
      EXPECT_TRUE(decodes_e4m3(*compiled));
      EXPECT_EQ(r["kernels"][0].value("scratch_bytes", 0), 0);
      // The scales are read, not only declared: the 12th argument's load
      // (LLVM drops it when no code uses the scales).
      if (g.target == Target::kSm90) {
        const std::string ptx = code_text(*compiled);
        EXPECT_NE(ptx.find("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"), std::string::npos);
        // A lane's two 8-byte vectors of a row load as one 16-byte run in
        // the grouped steps (v59); only the one-at-a-time tail step (RT x
        // VECS vectors) may keep 8-byte loads.
        const int64_t rt = r["tuning"].value("RT", 0), vecs = r["tuning"].value("VECS", 0);
        EXPECT_LE(count_of(ptx, "ld.global.v2.b32"), rt * vecs) << "8-byte weight loads in the grouped steps";
        EXPECT_NE(ptx.find("ld.param.b64 \t"), std::string::npos);
        EXPECT_NE(ptx.find(symbol + "_param_11]"), std::string::npos) << "the scales are never read";
      } else {
        // (LLVM merges a lane's two adjacent 8-byte vectors into one 16-byte load.)
        EXPECT_GT(histogram_prefix(r, "v_mfma_f32_16x16x32_bf16"), 0);
        auto isa = compiler::emit_stage(c, compiler::Stage::kIsa);
        ASSERT_TRUE(isa.ok()) << isa.status().to_string();
        EXPECT_NE(isa->find("s_load_dwordx2"), std::string::npos);
        EXPECT_NE(isa->find(", 0x58\n"), std::string::npos) << "the scales (kernarg offset 88) are never read";
        // M >= 32: the K split across workgroups, whose last block scales the sums.
        if (m >= 32) EXPECT_GT(r["tuning"].value("SPLITS", 0), 1);
      }
    }
}

INSTANTIATE_TEST_SUITE_P(Fp8, Fp8Mma, kEveryGroup, group_name);

// A block-scaled step must lie in one 128-wide K block (one scale per tile
// and step): a VECS override past 4 (KSTEP 256) is halved back to 4.
TEST(Fp8Code, Block128MmaStepsStayInOneScaleBlock) {
  ScopedMmaTuning scoped("vecs=8");
  for (Target t : {Target::kSm90, Target::kGfx950}) {
    Contract c = fp8(t, WeightScale::kBlock128, 4);
    c.template_kind = TemplateKind::kMma;
    auto compiled = compiler::compile(c);
    ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
    EXPECT_EQ(compiled->report["tuning"].value("VECS", 0), 4) << target_name(t);
    c.weight_scale = WeightScale::kPerChannel;
    compiled = compiler::compile(c);
    ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
    EXPECT_EQ(compiled->report["tuning"].value("VECS", 0), 8) << target_name(t);
  }
}

// The conversion in the code itself: the gfx950 ISA text and the sm_90 PTX
// have it for an fp8 weight, not for a bf16 one.
TEST(Fp8Code, DecodesWithTheTargetsConversion) {
  auto isa = compiler::emit_stage(fp8(Target::kGfx950, WeightScale::kPerChannel, 1), compiler::Stage::kIsa);
  ASSERT_TRUE(isa.ok()) << isa.status().to_string();
  EXPECT_NE(isa->find("v_cvt_pk_f32_fp8"), std::string::npos);
  auto bf16_isa = compiler::emit_stage(seed(Target::kGfx950), compiler::Stage::kIsa);
  ASSERT_TRUE(bf16_isa.ok()) << bf16_isa.status().to_string();
  EXPECT_EQ(bf16_isa->find("v_cvt_pk_f32_fp8"), std::string::npos);

  auto ptx = compiler::compile(fp8(Target::kSm90, WeightScale::kBlock128, 1));
  ASSERT_TRUE(ptx.ok()) << ptx.status().to_string();
  EXPECT_NE(code_text(*ptx).find("cvt.rn.f16x2.e4m3x2"), std::string::npos);
  auto bf16_ptx = compiler::compile(seed(Target::kSm90));
  ASSERT_TRUE(bf16_ptx.ok()) << bf16_ptx.status().to_string();
  EXPECT_EQ(code_text(*bf16_ptx).find("e4m3"), std::string::npos);
  EXPECT_EQ(bf16_ptx->report.value("abi", ""), abi_text(classic_abi(false)));  // 16-bit kernels keep the classic list
}

// A block's scale changes along K, so a block128 kernel loads scales in its
// K loop; a channel's does not (per_channel loads it once, outside the loop).
// The two kinds are different kernels.
TEST(Fp8Code, Block128KernelsLoadTheirScalesInTheKLoop) {
  for (Target t : {Target::kGfx950, Target::kSm90}) {
    SCOPED_TRACE(target_name(t));
    auto pc = compiler::compile(fp8(t, WeightScale::kPerChannel, 4));
    auto b128 = compiler::compile(fp8(t, WeightScale::kBlock128, 4));
    ASSERT_TRUE(pc.ok()) << pc.status().to_string();
    ASSERT_TRUE(b128.ok()) << b128.status().to_string();
    EXPECT_NE(pc->binary.code, b128->binary.code);
    const nlohmann::json &fp = pc->report["code_facts"], &fb = b128->report["code_facts"];
    EXPECT_GT(fb["loop_global_loads"].get<double>(), fp["loop_global_loads"].get<double>())
        << "per_channel " << fp.dump() << "\nblock128 " << fb.dump();
    EXPECT_GT(fb["loop_load_bytes_per_lane"].get<double>(), fp["loop_load_bytes_per_lane"].get<double>());
  }
}

// A regression guard for the load order of templates/gemv.mlir: every load of
// a K step (the weight vectors, then the hidden vectors) before the decode
// and the products. Before that order LLVM waited on each hidden load of the
// gfx950 fp8 gemv alone: 2 loads in flight at M = 4 with N = 1536 under the
// tuning of that time (10 with the order), and still 2 under today's tuning
// at M = 16 (a K loop of 4 steps; 33 with the order) and at M = 4 with
// N = 12288 (14 with it). At M = 4, N = 1536 today's tuning unrolls the whole
// row (7 steps, no loop), which keeps 10 or more in flight either way: the
// replay then reads the kernel's one region.
TEST(Fp8Code, Gfx950GemvKeepsAKStepsLoadsInFlight) {
  struct Case {
    WeightScale scale;
    int64_t m, n;
  } cases[] = {{WeightScale::kPerChannel, 4, 1536}, {WeightScale::kBlock128, 4, 1536},
               {WeightScale::kPerChannel, 16, 1536}, {WeightScale::kBlock128, 16, 1536},
               {WeightScale::kBlock128, 4, 12288}};
  for (const Case &c : cases) {
    SCOPED_TRACE(std::string(weight_scale_name(c.scale)) + " m=" + std::to_string(c.m) + " n=" + std::to_string(c.n));
    auto k = compiler::compile(fp8(Target::kGfx950, c.scale, c.m, c.n));
    ASSERT_TRUE(k.ok()) << k.status().to_string();
    ASSERT_EQ(k->report.value("template", ""), "gemv");
    const nlohmann::json &f = k->report["code_facts"];
    EXPECT_GE(f["max_loads_in_flight"].get<int64_t>(), 8) << f.dump();
    EXPECT_EQ(f["loop_single_load_waits"].get<double>(), 0) << f.dump();
  }
}

// The generic kernel takes an fp8 weight on both targets: forced, and where
// auto cannot take a specialised form. Its key has no shape, so the code
// must not depend on the shape it was compiled for.
TEST(Fp8Code, GenericKernelServesFp8OnBothTargets) {
  for (Target t : {Target::kGfx950, Target::kSm90}) {
    SCOPED_TRACE(target_name(t));
    Contract forced = fp8(t, WeightScale::kBlock128, 3);
    forced.template_kind = TemplateKind::kGeneric;
    auto g = compiler::compile(forced);
    ASSERT_TRUE(g.ok()) << g.status().to_string();
    EXPECT_EQ(g->report.value("template", ""), "generic");
    EXPECT_EQ(g->binary.symbol, "gatejit_generic_bf16_wfp8_e4m3_block128_sigmoid_boundary");
    expect_takes_the_scales(*g);
    EXPECT_TRUE(decodes_e4m3(*g));

    Contract tiny = forced;  // one scale, one element
    tiny.n = tiny.k = 1;
    auto g_tiny = compiler::compile(tiny);
    ASSERT_TRUE(g_tiny.ok()) << g_tiny.status().to_string();
    EXPECT_EQ(g_tiny->binary.key, g->binary.key);
    EXPECT_EQ(g_tiny->binary.code, g->binary.code) << "one key, two codes";

    // Where auto cannot take a specialised form (weight rows of 7160 bytes,
    // not whole 16-byte vectors): the same code.
    Contract odd = fp8(t, WeightScale::kBlock128, 32, 1536, 7160);
    auto m32 = compiler::compile(odd);
    ASSERT_TRUE(m32.ok()) << m32.status().to_string();
    EXPECT_EQ(m32->report.value("template", ""), "generic");
    EXPECT_NE(m32->report.value("reason", "").find("ld_weight = 7160"), std::string::npos) << m32->report.value("reason", "");
    EXPECT_EQ(m32->binary.code, g->binary.code);

    Contract pc = forced;
    pc.weight_scale = WeightScale::kPerChannel;
    auto g_pc = compiler::compile(pc);
    ASSERT_TRUE(g_pc.ok()) << g_pc.status().to_string();
    EXPECT_EQ(g_pc->binary.symbol, "gatejit_generic_bf16_wfp8_e4m3_per_channel_sigmoid_boundary");
    expect_takes_the_scales(*g_pc);
    EXPECT_NE(g_pc->binary.code, g->binary.code);
  }
}

// Refused before any code: gfx942 (its conversions read fnuz fp8).
// compile() and emit_stage() alike.
TEST(Fp8Code, Gfx942IsRefusedNamingWhy) {
  for (WeightScale s : {WeightScale::kPerChannel, WeightScale::kBlock128}) {
    const Contract c = fp8(Target::kGfx942, s, 1);
    auto compiled = compiler::compile(c);
    ASSERT_FALSE(compiled.ok());
    EXPECT_EQ(compiled.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(compiled.status().message().find("fnuz"), std::string::npos) << compiled.status().message();
    EXPECT_NE(compiled.status().message().find("gfx942"), std::string::npos) << compiled.status().message();
    auto text = compiler::emit_stage(c, compiler::Stage::kTemplate);
    ASSERT_FALSE(text.ok());
    EXPECT_NE(text.status().message().find("fnuz"), std::string::npos) << text.status().message();
  }
}

}  // namespace
}  // namespace gatejit
