// The form decision, the compiler's alone (compiler/src/plan/form_choice.cpp,
// the rules "form" and "thin_rows" of compiler/tuning/<target>.tsv): which
// template serves a contract, and why.
#include <gtest/gtest.h>

#include "gatejit/compiler/compiler.h"
#include "gatejit/contract.h"
#include "gatejit/template_choice.h"
#include "plan/form_choice.h"
#include "support/seed_contract.h"

namespace gatejit {
namespace {

using testing_support::seed;

Contract fp8(WeightScale scale = WeightScale::kBlock128, Target t = Target::kGfx950) {
  Contract c = seed(t);
  c.dtype_weight = DType::kFP8E4M3;
  c.weight_scale = scale;
  return c;
}

// K the thin grid rows serve (N = 1536 takes 3 of them wherever they do).
bool served_k(int64_t k) { return compiler::thin_grid_rows(Target::kGfx950, 1536, k) == 3; }

TEST(TemplateChoice, GemvWhereItFitsGenericWithAReasonElsewhere) {
  auto gemv = compiler::choose_template(*normalize(seed()));
  ASSERT_TRUE(gemv.ok());
  EXPECT_EQ(gemv->kind, TemplateKind::kGemv);

  Contract c = seed();
  c.ld_weight = 7170;
  auto g = compiler::choose_template(*normalize(c));
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->kind, TemplateKind::kGeneric);
  EXPECT_NE(g->reason.find("ld_weight = 7170 is not 16-byte aligned"), std::string::npos) << g->reason;

  c = seed();
  c.m = 17;
  c.target = Target::kGfx942;  // no mma there: generic, naming both limits
  EXPECT_NE(compiler::choose_template(*normalize(c))->reason.find("m_max = 17"), std::string::npos);
  EXPECT_NE(compiler::choose_template(*normalize(c))->reason.find("gfx942"), std::string::npos);

  c = seed();
  c.align = 4;
  EXPECT_NE(compiler::choose_template(*normalize(c))->reason.find("align = 4"), std::string::npos);

  c = seed();
  c.ld_weight = 7170;
  c.template_kind = TemplateKind::kGemv;  // forced, but impossible
  auto forced = compiler::choose_template(*normalize(c));
  ASSERT_FALSE(forced.ok());
  EXPECT_NE(forced.status().message().find("template = gemv"), std::string::npos);
}

// The crossover (docs/templates.md): sm_90 takes mma from M = 2 (at M = 1
// only where 2048 < N <= 3072), gfx950 above M = 16; forcing a template that cannot serve is an error naming it.
TEST(TemplateChoice, MmaCrossoverPerTarget) {
  auto kind = [](Target t, int64_t m) {
    Contract c = seed();
    c.target = t;
    c.m = m;
    return compiler::choose_template(*normalize(c))->kind;
  };
  EXPECT_EQ(kind(Target::kSm90, 1), TemplateKind::kGemv);  // N = 1536: the gemv at M = 1
  {
    Contract wide = seed();
    wide.target = Target::kSm90;
    wide.n = 12288;  // N alone fills the GPU: gemv keeps M = 1
    EXPECT_EQ(compiler::choose_template(*normalize(wide))->kind, TemplateKind::kGemv);
  }
  EXPECT_EQ(kind(Target::kSm90, 2), TemplateKind::kMma);
  EXPECT_EQ(kind(Target::kSm90, 2048), TemplateKind::kMma);
  // gfx950: the gemv to M = 14; at a fixed M = 15-16 the mma's
  // thin grid rows where 2-4 of them fill the CUs one workgroup a CU (N =
  // 2048: 2 x 128), the gemv elsewhere (N = 1536: 3 x 96 puts two on some
  // CUs; N = 768: 6 would be needed) and for a dynamic M.
  EXPECT_EQ(kind(Target::kGfx950, 14), TemplateKind::kGemv);
  EXPECT_EQ(kind(Target::kGfx950, 15), TemplateKind::kGemv);
  EXPECT_EQ(kind(Target::kGfx950, 16), TemplateKind::kGemv);
  EXPECT_EQ(kind(Target::kGfx950, 17), TemplateKind::kMma);
  {
    Contract two_rows = seed();
    two_rows.n = 2048;
    for (int64_t m : {15, 16}) {
      two_rows.m = m;
      EXPECT_EQ(compiler::choose_template(*normalize(two_rows))->kind, TemplateKind::kMma) << m;
    }
  }
  {
    Contract dynamic = seed();
    dynamic.m_dynamic = true;
    dynamic.m = 0;
    dynamic.m_max = 16;
    EXPECT_EQ(compiler::choose_template(*normalize(dynamic))->kind, TemplateKind::kGemv);
    Contract narrow = seed();
    narrow.m = 16;
    narrow.n = 768;
    EXPECT_EQ(compiler::choose_template(*normalize(narrow))->kind, TemplateKind::kGemv);
  }
  EXPECT_EQ(compiler::thin_grid_rows(Target::kGfx950, 1536, 7168), 3);
  EXPECT_EQ(compiler::thin_grid_rows(Target::kGfx950, 2048, 7168), 2);
  EXPECT_EQ(compiler::thin_grid_rows(Target::kGfx950, 1024, 7168), 4);
  EXPECT_EQ(compiler::thin_grid_rows(Target::kGfx950, 768, 7168), 0);   // 6 grid rows: more re-reads than allowed
  EXPECT_EQ(compiler::thin_grid_rows(Target::kGfx950, 4096, 7168), 0);  // one grid row fills the CUs
  EXPECT_EQ(compiler::thin_grid_rows(Target::kGfx950, 1536, 8192), 3);  // past the rule's most_k too (occupancy pinned)
  EXPECT_EQ(compiler::thin_grid_rows(Target::kSm90, 1536, 7168), 0);
  // The decode rows only where the gemv is L2-bound in the model: not
  // at K = 2048, nor at N = 3072 (the two tie there).
  EXPECT_TRUE(compiler::thin_decode(Target::kGfx950, 1024, 7168));
  EXPECT_TRUE(compiler::thin_decode(Target::kGfx950, 2048, 3072));
  // 3 grid rows of 96 column tiles put two workgroups on some CUs.
  EXPECT_FALSE(compiler::thin_decode(Target::kGfx950, 1536, 7168));
  EXPECT_FALSE(compiler::thin_decode(Target::kGfx950, 1280, 7168));
  EXPECT_FALSE(compiler::thin_decode(Target::kGfx950, 1536, 2048));
  EXPECT_FALSE(compiler::thin_decode(Target::kGfx950, 3072, 7168));
  // Past K = 7168 only K a multiple of 2048 up to
  // 16384, and only where M = 16 keeps at most 6 rows a grid row (N = 2048:
  // 2 grid rows of 8 -> the gemv), the same rule the planner applies.
  EXPECT_TRUE(served_k(7168));
  EXPECT_FALSE(served_k(7232));  // 7 whole steps a wave and a partial one
  EXPECT_TRUE(served_k(8192));
  EXPECT_FALSE(served_k(9216));   // an odd count of steps a wave: UNROLL 1
  EXPECT_FALSE(served_k(8256));   // a partial step
  EXPECT_FALSE(served_k(18432));  // past the range checked
  struct KCase {
    int64_t n, k;
    TemplateKind expected;
  };
  // (N = 1536 past K = 7168 took the thin rows once: now the gemv, as
  // at K = 7168; N = 1024's grid of 64 x 4 keeps them.)
  for (const KCase &kc : {KCase{1536, 2048, TemplateKind::kGemv}, KCase{1536, 8192, TemplateKind::kGemv},
                          KCase{1024, 8192, TemplateKind::kMma}, KCase{1024, 16384, TemplateKind::kMma},
                          KCase{1024, 9216, TemplateKind::kGemv},
                          KCase{2048, 8192, TemplateKind::kGemv}, KCase{2048, 7168, TemplateKind::kMma}}) {
    Contract other_k = seed();
    other_k.m = 16;
    other_k.n = other_k.ld_attn = other_k.ld_out = kc.n;
    other_k.k = other_k.ld_hidden = other_k.ld_weight = kc.k;
    EXPECT_EQ(compiler::choose_template(*normalize(other_k))->kind, kc.expected) << kc.n << " " << kc.k;
  }
  EXPECT_EQ(kind(Target::kGfx942, 16), TemplateKind::kGemv);
  EXPECT_EQ(kind(Target::kGfx942, 17), TemplateKind::kGeneric);

  Contract c = seed();
  c.target = Target::kGfx942;
  c.m = 32;
  c.template_kind = TemplateKind::kMma;
  auto forced = compiler::choose_template(*normalize(c));
  ASSERT_FALSE(forced.ok());
  EXPECT_NE(forced.status().message().find("template = mma"), std::string::npos) << forced.status().message();

  c = seed();
  c.dtype_hidden = c.dtype_weight = c.dtype_attn = c.dtype_out = DType::kF32;
  c.template_kind = TemplateKind::kMma;
  auto f32 = normalize(c);
  ASSERT_FALSE(f32.ok());
  EXPECT_NE(f32.status().message().find("template = mma"), std::string::npos) << f32.status().message();

  c = seed();
  c.m = 64;
  c.ld_weight = 7170;
  auto g = compiler::choose_template(*normalize(c));
  EXPECT_EQ(g->kind, TemplateKind::kGeneric);
  EXPECT_EQ(g->reason.find("generic: leading dimension ld_weight = 7170"), 0u) << g->reason;
}

// An fp8 weight takes the template a 16-bit weight of the same shape takes:
// the gemv where bf16 takes it, the mma elsewhere (every target
// above M = 16), which decodes the weight into 16-bit fragments; the
// generic kernel only where the layout refuses both. Two exceptions: sm_90
// at N <= 2048 keeps the gemv up to M = 2 (the H200's measurement), and
// gfx950 keeps it at M = 15-16, where a 16-bit weight takes the mma's thin
// grid rows (the unsplit rules exclude fp8 weights).
TEST(TemplateChoiceFp8, SameTemplateAsASixteenBitWeight) {
  for (Target t : {Target::kGfx950, Target::kSm90})
    for (WeightScale s : {WeightScale::kPerChannel, WeightScale::kBlock128})
      for (int64_t m : {1, 2, 4, 16, 32, 512}) {
        SCOPED_TRACE(std::string(target_name(t)) + " " + weight_scale_name(s) + " m=" + std::to_string(m));
        Contract c = fp8(s, t);
        c.m = m;
        Contract bf16 = seed(t);
        bf16.m = m;
        auto choice = compiler::choose_template(*normalize(c));
        ASSERT_TRUE(choice.ok()) << choice.status().message();
        // gfx950 M = 15-16: the thin grid rows are 16-bit weights'.
        const bool keeps_gemv = (t == Target::kSm90 && m <= 2) || (t == Target::kGfx950 && m == 16);
        const TemplateKind want = keeps_gemv ? TemplateKind::kGemv : compiler::choose_template(*normalize(bf16))->kind;
        ASSERT_NE(want, TemplateKind::kGeneric);
        EXPECT_EQ(choice->kind, want) << choice->reason;
        EXPECT_EQ(choice->contract.template_kind, want);
        EXPECT_EQ(choice->contract.weight_scale, s);
      }
  // The sides of the sm_90 boundary, named.
  Contract m1 = fp8(WeightScale::kPerChannel, Target::kSm90);
  m1.m = 1;
  EXPECT_EQ(compiler::choose_template(*normalize(m1))->kind, TemplateKind::kGemv);
  m1.m = 2;
  EXPECT_EQ(compiler::choose_template(*normalize(m1))->kind, TemplateKind::kGemv);
  m1.m = 3;
  EXPECT_EQ(compiler::choose_template(*normalize(m1))->kind, TemplateKind::kMma);
  m1.n = 3072;  // above N = 2048, as bf16: the mma from M = 2
  m1.m = 2;
  m1.ld_attn = m1.ld_out = 3072;
  EXPECT_EQ(compiler::choose_template(*normalize(m1))->kind, TemplateKind::kMma);
  Contract dynamic = fp8(WeightScale::kPerChannel, Target::kGfx950);
  dynamic.m_dynamic = true;
  dynamic.m = 0;
  dynamic.m_max = 16;
  EXPECT_EQ(compiler::choose_template(*normalize(dynamic))->kind, TemplateKind::kGemv);

  for (Target t : {Target::kGfx950, Target::kSm90}) {
    Contract c = fp8(WeightScale::kPerChannel, t);
    c.m = 4;
    c.template_kind = TemplateKind::kMma;
    EXPECT_EQ(compiler::choose_template(*normalize(c))->kind, TemplateKind::kMma);
    c.template_kind = TemplateKind::kGemv;
    c.m = 16;
    EXPECT_EQ(compiler::choose_template(*normalize(c))->kind, TemplateKind::kGemv);
    // A weight row that is not whole 16-byte vectors: generic, saying why.
    c = fp8(WeightScale::kBlock128, t);
    c.m = 32;
    c.k = c.ld_weight = 7160;
    c.ld_hidden = 7160;
    auto g = compiler::choose_template(*normalize(c));
    ASSERT_TRUE(g.ok()) << g.status().message();
    EXPECT_EQ(g->kind, TemplateKind::kGeneric);
    EXPECT_NE(g->reason.find("ld_weight = 7160"), std::string::npos) << g->reason;
  }
}

// The weight's row is one byte an element: 16-byte vectors need K and
// ld_weight to be multiples of 16 (of 8 for the 16-bit hidden).
TEST(TemplateChoiceFp8, RowsOfNoWholeSixteenBytesTakeTheGenericKernel) {
  Contract c = fp8();
  c.m = 4;
  c.k = 7176;  // a multiple of 8: bf16 rows of 16-byte vectors, fp8 rows not
  auto g = compiler::choose_template(*normalize(c));
  EXPECT_EQ(g->kind, TemplateKind::kGeneric);
  EXPECT_NE(g->reason.find("ld_weight = 7176 is not 16-byte aligned"), std::string::npos) << g->reason;
  c.ld_hidden = c.ld_weight = 7184;  // aligned strides: K itself is what is left
  g = compiler::choose_template(*normalize(c));
  EXPECT_EQ(g->kind, TemplateKind::kGeneric);
  EXPECT_NE(g->reason.find("k = 7176 is not a multiple of 16 elements"), std::string::npos) << g->reason;
  c.template_kind = TemplateKind::kGemv;
  EXPECT_FALSE(compiler::choose_template(*normalize(c)).ok());

  Contract bf16 = seed();
  bf16.m = 4;
  bf16.k = 7176;
  EXPECT_EQ(compiler::choose_template(*normalize(bf16))->kind, TemplateKind::kGemv);  // 14352-byte rows: whole vectors

  c = fp8();
  c.ld_weight = 7168 + 8;
  g = compiler::choose_template(*normalize(c));
  EXPECT_EQ(g->kind, TemplateKind::kGeneric);
  EXPECT_NE(g->reason.find("ld_weight = 7176"), std::string::npos) << g->reason;
  c.ld_weight = 7168 + 16;
  EXPECT_EQ(compiler::choose_template(*normalize(c))->kind, TemplateKind::kGemv);
  c.ld_weight = 0;
  c.k = 2064;  // 129 vectors: partial 128-blocks are fine
  EXPECT_EQ(compiler::choose_template(*normalize(c))->kind, TemplateKind::kGemv);
}

}  // namespace
}  // namespace gatejit

namespace gatejit {
namespace {

// A kernel is stored under the contract as asked, not the form the compiler
// picked (a bundle finds it whatever crossover built it); its contract text
// records the form. A contract no specialised template serves is keyed by
// the generic kernel's own contract, which the runtime asks for.
TEST(FormChoice, AKernelIsKeyedByTheContractAsAskedNotByItsForm) {
  for (int64_t m : {1, 32}) {
    Contract c = seed(Target::kSm90);
    c.m = m;
    c.n = c.ld_attn = c.ld_out = 256;
    c.k = c.ld_hidden = c.ld_weight = 256;
    const Contract asked = *normalize(c);
    auto kernel = compiler::compile(asked);
    ASSERT_TRUE(kernel.ok()) << kernel.status().to_string();
    const auto choice = compiler::choose_template(asked);
    ASSERT_TRUE(choice.ok());
    ASSERT_NE(choice->kind, TemplateKind::kGeneric);
    EXPECT_EQ(kernel->binary.key, contract_key(asked)) << m;
    EXPECT_NE(kernel->binary.key, contract_key(choice->contract)) << m;
    EXPECT_NE(kernel->binary.contract_text.find(std::string(" template=") + template_name(choice->kind) + " "),
              std::string::npos)
        << kernel->binary.contract_text;
    auto planned = compiler::planned_template(asked);
    ASSERT_TRUE(planned.ok());
    EXPECT_EQ(*planned, choice->kind);
  }
  Contract odd = seed(Target::kSm90);
  odd.ld_weight = 7170;
  const Contract asked = *normalize(odd);
  auto kernel = compiler::compile(asked);
  ASSERT_TRUE(kernel.ok()) << kernel.status().to_string();
  EXPECT_EQ(kernel->binary.key, contract_key(generic_contract_for(asked)));
}

}  // namespace
}  // namespace gatejit
