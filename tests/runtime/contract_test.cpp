// Contracts: validation messages name the field, normalisation, canonical
// text and keys, JSON round trip, template choice and its reasons.
#include <gtest/gtest.h>

#include "gatejit/contract.h"
#include "gatejit/contract_json.h"
#include "gatejit/template_choice.h"
#include "support/seed_contract.h"

namespace gatejit {
namespace {

using testing_support::seed;

std::string error_of(const Contract &c) {
  Status s = validate(c);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  return s.message();
}

TEST(Contract, SeedIsValidAndNormalises) {
  auto n = normalize(seed());
  ASSERT_TRUE(n.ok()) << n.status().message();
  EXPECT_EQ(n->ld_hidden, 7168);
  EXPECT_EQ(n->ld_attn, 1536);
  EXPECT_EQ(n->m_max, 1);
}

TEST(Contract, InvalidFieldsAreNamed) {
  Contract c = seed();
  c.k = 0;
  EXPECT_NE(error_of(c).find("k = 0"), std::string::npos);
  c = seed();
  c.dtype_weight = DType::kF16;
  EXPECT_NE(error_of(c).find("mixed dtypes"), std::string::npos);
  c = seed();
  c.ld_weight = 7167;
  EXPECT_NE(error_of(c).find("ld_weight = 7167"), std::string::npos);
  c = seed();
  c.m = 32;
  c.m_max = 16;
  EXPECT_NE(error_of(c).find("m_max = 16"), std::string::npos);
  c = seed();
  c.align = 3;
  EXPECT_NE(error_of(c).find("align = 3"), std::string::npos);
  c = seed();
  c.m_dynamic = true;
  c.m_max = 0;
  EXPECT_NE(error_of(c).find("m_max"), std::string::npos);
  EXPECT_NE(parse_target("gfx1234").status().message().find("gfx1234"), std::string::npos);
}

TEST(Contract, KeyFollowsEveryFieldAndIgnoresUselessAlignment) {
  const Contract base = *normalize(seed());
  const std::string key = contract_key(base);
  EXPECT_EQ(key.size(), 32u);
  EXPECT_EQ(key, contract_key(*normalize(seed())));
  Contract other = seed();
  other.act = Activation::kSilu;
  EXPECT_NE(key, contract_key(*normalize(other)));
  other = seed();
  other.target = Target::kSm90;
  EXPECT_NE(key, contract_key(*normalize(other)));
  other = seed();
  other.align = 256;  // more than any template uses: same kernel, same key
  EXPECT_EQ(key, contract_key(*normalize(other)));
}

TEST(Contract, GenericKeyIgnoresTheShape) {
  Contract a = *normalize(seed()), b = seed();
  b.n = 1000;
  b.k = 999;
  b = *normalize(b);
  EXPECT_EQ(contract_key(generic_contract_for(a)), contract_key(generic_contract_for(b)));
  EXPECT_NE(contract_key(a), contract_key(b));
}

TEST(ContractJson, RoundTripsAndRejectsUnknownKeys) {
  auto c = contract_from_json_text(R"({"m": "dynamic", "m_max": 16, "n": 1536, "k": 7168, "dtype": "f16",
                                       "act": "silu", "target": "sm_90", "rounding": "fused"})");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_TRUE(c->m_dynamic);
  EXPECT_EQ(c->dtype_hidden, DType::kF16);
  auto back = contract_from_json(contract_to_json(*normalize(*c)));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(canonical_text(*normalize(*back)), canonical_text(*normalize(*c)));
  auto bad = contract_from_json_text(R"({"n": 1, "k": 1, "colour": "red"})");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("colour"), std::string::npos);
  auto wrong_type = contract_from_json_text(R"({"n": "many"})");
  ASSERT_FALSE(wrong_type.ok());
  EXPECT_NE(wrong_type.status().message().find("n = \"many\""), std::string::npos);
}

TEST(TemplateChoice, GemvWhereItFitsGenericWithAReasonElsewhere) {
  auto gemv = choose_template(*normalize(seed()));
  ASSERT_TRUE(gemv.ok());
  EXPECT_EQ(gemv->kind, TemplateKind::kGemv);

  Contract c = seed();
  c.ld_weight = 7170;
  auto g = choose_template(*normalize(c));
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->kind, TemplateKind::kGeneric);
  EXPECT_NE(g->reason.find("ld_weight = 7170 is not 16-byte aligned"), std::string::npos) << g->reason;

  c = seed();
  c.m = 17;
  c.target = Target::kGfx942;  // no mma there: generic, naming both limits
  EXPECT_NE(choose_template(*normalize(c))->reason.find("m_max = 17"), std::string::npos);
  EXPECT_NE(choose_template(*normalize(c))->reason.find("gfx942"), std::string::npos);

  c = seed();
  c.align = 4;
  EXPECT_NE(choose_template(*normalize(c))->reason.find("align = 4"), std::string::npos);

  c = seed();
  c.ld_weight = 7170;
  c.template_kind = TemplateKind::kGemv;  // forced, but impossible
  auto forced = choose_template(*normalize(c));
  ASSERT_FALSE(forced.ok());
  EXPECT_NE(forced.status().message().find("template = gemv"), std::string::npos);
}

// The crossover (docs/templates.md): sm_90 takes mma from M = 2 (at M = 1
// only where 2048 < N <= 3072, v51), gfx950 above M = 16; forcing a template that cannot serve is an error naming it.
TEST(TemplateChoice, MmaCrossoverPerTarget) {
  auto kind = [](Target t, int64_t m) {
    Contract c = seed();
    c.target = t;
    c.m = m;
    return choose_template(*normalize(c))->kind;
  };
  EXPECT_EQ(kind(Target::kSm90, 1), TemplateKind::kGemv);  // N = 1536: the gemv at M = 1 (v51)
  {
    Contract wide = seed();
    wide.target = Target::kSm90;
    wide.n = 12288;  // N alone fills the GPU: gemv keeps M = 1
    EXPECT_EQ(choose_template(*normalize(wide))->kind, TemplateKind::kGemv);
  }
  EXPECT_EQ(kind(Target::kSm90, 2), TemplateKind::kMma);
  EXPECT_EQ(kind(Target::kSm90, 2048), TemplateKind::kMma);
  // gfx950 (v84, v99): the gemv to M = 14; at a fixed M = 15-16 the mma's
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
      EXPECT_EQ(choose_template(*normalize(two_rows))->kind, TemplateKind::kMma) << m;
    }
  }
  {
    Contract dynamic = seed();
    dynamic.m_dynamic = true;
    dynamic.m = 0;
    dynamic.m_max = 16;
    EXPECT_EQ(choose_template(*normalize(dynamic))->kind, TemplateKind::kGemv);
    Contract narrow = seed();
    narrow.m = 16;
    narrow.n = 768;
    EXPECT_EQ(choose_template(*normalize(narrow))->kind, TemplateKind::kGemv);
  }
  EXPECT_EQ(thin_grid_rows(Target::kGfx950, 1536, 7168), 3);
  EXPECT_EQ(thin_grid_rows(Target::kGfx950, 2048, 7168), 2);
  EXPECT_EQ(thin_grid_rows(Target::kGfx950, 1024, 7168), 4);
  EXPECT_EQ(thin_grid_rows(Target::kGfx950, 768, 7168), 0);   // 6 grid rows: more re-reads than allowed
  EXPECT_EQ(thin_grid_rows(Target::kGfx950, 4096, 7168), 0);  // one grid row fills the CUs
  EXPECT_EQ(thin_grid_rows(Target::kGfx950, 1536, 8192), 3);  // v89: past kThinMostK too (occupancy pinned)
  EXPECT_EQ(thin_grid_rows(Target::kSm90, 1536, 7168), 0);
  // v87: the decode rows only where the gemv is L2-bound in the model: not
  // at K = 2048, nor at N = 3072 (the two tie there).
  EXPECT_TRUE(thin_decode(Target::kGfx950, 1024, 7168));
  EXPECT_TRUE(thin_decode(Target::kGfx950, 2048, 3072));
  // v99: 3 grid rows of 96 column tiles put two workgroups on some CUs.
  EXPECT_FALSE(thin_decode(Target::kGfx950, 1536, 7168));
  EXPECT_FALSE(thin_decode(Target::kGfx950, 1280, 7168));
  EXPECT_FALSE(thin_decode(Target::kGfx950, 1536, 2048));
  EXPECT_FALSE(thin_decode(Target::kGfx950, 3072, 7168));
  // v89 (after its review): past K = 7168 only K a multiple of 2048 up to
  // 16384, and only where M = 16 keeps at most 6 rows a grid row (N = 2048:
  // 2 grid rows of 8 -> the gemv), the same rule the planner applies.
  EXPECT_TRUE(thin_rows_serve_k(7168));
  EXPECT_FALSE(thin_rows_serve_k(7232));  // 7 whole steps a wave and a partial one
  EXPECT_TRUE(thin_rows_serve_k(8192));
  EXPECT_FALSE(thin_rows_serve_k(9216));   // an odd count of steps a wave: UNROLL 1
  EXPECT_FALSE(thin_rows_serve_k(8256));   // a partial step
  EXPECT_FALSE(thin_rows_serve_k(18432));  // past the range checked
  struct KCase {
    int64_t n, k;
    TemplateKind expected;
  };
  // (N = 1536 past K = 7168 took the thin rows until v99: now the gemv, as
  // at K = 7168; N = 1024's grid of 64 x 4 keeps them.)
  for (const KCase &kc : {KCase{1536, 2048, TemplateKind::kGemv}, KCase{1536, 8192, TemplateKind::kGemv},
                          KCase{1024, 8192, TemplateKind::kMma}, KCase{1024, 16384, TemplateKind::kMma},
                          KCase{1024, 9216, TemplateKind::kGemv},
                          KCase{2048, 8192, TemplateKind::kGemv}, KCase{2048, 7168, TemplateKind::kMma}}) {
    Contract other_k = seed();
    other_k.m = 16;
    other_k.n = other_k.ld_attn = other_k.ld_out = kc.n;
    other_k.k = other_k.ld_hidden = other_k.ld_weight = kc.k;
    EXPECT_EQ(choose_template(*normalize(other_k))->kind, kc.expected) << kc.n << " " << kc.k;
  }
  EXPECT_EQ(kind(Target::kGfx942, 16), TemplateKind::kGemv);
  EXPECT_EQ(kind(Target::kGfx942, 17), TemplateKind::kGeneric);

  Contract c = seed();
  c.target = Target::kGfx942;
  c.m = 32;
  c.template_kind = TemplateKind::kMma;
  auto forced = choose_template(*normalize(c));
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
  auto g = choose_template(*normalize(c));
  EXPECT_EQ(g->kind, TemplateKind::kGeneric);
  EXPECT_EQ(g->reason.find("generic: leading dimension ld_weight = 7170"), 0u) << g->reason;
}

// --- fp8 e4m3 weights (issue 20) ---------------------------------------------

Contract fp8(WeightScale scale = WeightScale::kBlock128, Target t = Target::kGfx950) {
  Contract c = seed(t);
  c.dtype_weight = DType::kFP8E4M3;
  c.weight_scale = scale;
  return c;
}

TEST(ContractFp8, Fp8WeightsWithScalesAreValidOnGfx950AndSm90) {
  for (Target t : {Target::kGfx950, Target::kSm90})
    for (WeightScale s : {WeightScale::kPerChannel, WeightScale::kBlock128})
      for (DType d : {DType::kBF16, DType::kF16}) {
        Contract c = fp8(s, t);
        c.dtype_hidden = c.dtype_attn = c.dtype_out = d;
        auto n = normalize(c);
        ASSERT_TRUE(n.ok()) << n.status().message();
        EXPECT_EQ(n->dtype_weight, DType::kFP8E4M3);
        EXPECT_EQ(n->weight_scale, s);
        EXPECT_EQ(n->ld_weight, 7168);  // elements (bytes) of the weight row
      }
  EXPECT_EQ(dtype_bytes(DType::kFP8E4M3), 1);
  EXPECT_STREQ(dtype_name(DType::kFP8E4M3), "fp8_e4m3");
}

// An fp8 out (issue 20): e4m3 with scales per token group of 128 columns,
// written by the kernel. Its key names it; keys of other contracts are as
// before (the seed's is pinned by Contract.KeyIsStable).
Contract fp8_out(Target t = Target::kGfx950) {
  Contract c = seed();
  c.target = t;
  c.dtype_out = DType::kFP8E4M3;
  c.out_scale = OutScale::kPerTokenGroup128;
  return c;
}

TEST(ContractFp8Out, ValidNormalisesAndIsNamedInTheKey) {
  for (Target t : {Target::kGfx950, Target::kSm90}) {
    auto n = normalize(fp8_out(t));
    ASSERT_TRUE(n.ok()) << n.status().message();
    EXPECT_EQ(n->dtype(), DType::kBF16);  // the gated value's dtype: attn's
    EXPECT_TRUE(n->fp8_out());
    const std::string text = canonical_text(*n);
    EXPECT_NE(text.find(" dtype=bf16 "), std::string::npos) << text;
    EXPECT_NE(text.find(" dtype_out=fp8_e4m3 out_scale=per_token_group128"), std::string::npos) << text;
    auto plain = normalize(seed());
    plain->target = t;
    EXPECT_NE(contract_key(*n), contract_key(*plain));
    EXPECT_EQ(canonical_text(*plain).find("out_scale"), std::string::npos);
    // With an fp8 weight too: both named.
    Contract both = fp8_out(t);
    both.dtype_weight = DType::kFP8E4M3;
    both.weight_scale = WeightScale::kBlock128;
    auto b = normalize(both);
    ASSERT_TRUE(b.ok()) << b.status().message();
    EXPECT_NE(canonical_text(*b).find("dtype_weight=fp8_e4m3 weight_scale=block128 dtype_out=fp8_e4m3"),
              std::string::npos)
        << canonical_text(*b);
  }
}

TEST(ContractFp8Out, InvalidFp8OutContractsNameTheField) {
  Contract c = fp8_out();
  c.out_scale = OutScale::kNone;
  std::string m = error_of(c);
  EXPECT_EQ(m.find("out_scale = none"), 0u) << m;
  c = seed();
  c.out_scale = OutScale::kPerTokenGroup128;
  m = error_of(c);
  EXPECT_EQ(m.find("out_scale = per_token_group128"), 0u) << m;
  EXPECT_NE(m.find("bf16"), std::string::npos) << m;
  c = fp8_out();
  c.n = 1000;
  m = error_of(c);
  EXPECT_EQ(m.find("n = 1000"), 0u) << m;
  EXPECT_NE(m.find("multiple of 128"), std::string::npos) << m;
  c = fp8_out();
  c.dtype_hidden = c.dtype_attn = c.dtype_weight = DType::kF32;
  m = error_of(c);
  EXPECT_EQ(m.find("dtype_attn = f32"), 0u) << m;
  m = error_of(fp8_out(Target::kGfx942));
  EXPECT_NE(m.find("fnuz"), std::string::npos) << m;
  EXPECT_NE(m.find("dtype_out = fp8_e4m3"), std::string::npos) << m;
  // hidden and attn stay one dtype.
  c = fp8_out();
  c.dtype_hidden = DType::kF16;
  EXPECT_NE(error_of(c).find("mixed dtypes"), std::string::npos);
  EXPECT_FALSE(parse_out_scale("per_token").ok());
  EXPECT_NE(parse_out_scale("per_token").status().message().find("allowed are none, per_token_group128"),
            std::string::npos);
}

TEST(ContractFp8, InvalidFp8ContractsNameTheField) {
  Contract c = fp8(WeightScale::kNone);
  std::string m = error_of(c);
  EXPECT_NE(m.find("weight_scale"), std::string::npos) << m;

  for (WeightScale s : {WeightScale::kPerChannel, WeightScale::kBlock128}) {
    c = seed();  // a bf16 weight
    c.weight_scale = s;
    m = error_of(c);
    EXPECT_EQ(m.find("weight_scale = " + std::string(weight_scale_name(s))), 0u) << m;
  }

  // Only the weight and out may be fp8: hidden and attn are named on their own.
  for (const char *field : {"dtype_hidden", "dtype_attn"}) {
    c = fp8();
    DType &d = std::string(field) == "dtype_hidden" ? c.dtype_hidden : c.dtype_attn;
    d = DType::kFP8E4M3;
    m = error_of(c);
    EXPECT_EQ(m.find(std::string(field) + " = fp8_e4m3"), 0u) << m;
  }

  // fp8 weights take 16-bit activations.
  c = fp8();
  c.dtype_hidden = c.dtype_attn = c.dtype_out = DType::kF32;
  m = error_of(c);
  EXPECT_NE(m.find("f32"), std::string::npos) << m;
  EXPECT_NE(m.find("fp8_e4m3"), std::string::npos) << m;
  // ... the same 16-bit dtype for all three.
  c = fp8();
  c.dtype_hidden = DType::kF16;
  EXPECT_NE(error_of(c).find("mixed dtypes"), std::string::npos);

  // gfx942 converts the fnuz variant only.
  for (WeightScale s : {WeightScale::kPerChannel, WeightScale::kBlock128}) {
    m = error_of(fp8(s, Target::kGfx942));
    EXPECT_NE(m.find("fnuz"), std::string::npos) << m;
    EXPECT_NE(m.find("gfx942"), std::string::npos) << m;
  }

  // `align` covers hidden and weight: an fp8 weight's element is one byte
  // (an odd K gives 1-byte row strides, which the generic kernel serves),
  // while a 16-bit contract still needs 2.
  c = fp8();
  c.align = 1;
  EXPECT_TRUE(validate(c).ok()) << validate(c).message();
  Contract bf16 = c;
  bf16.dtype_weight = DType::kBF16;
  bf16.weight_scale = WeightScale::kNone;
  m = error_of(bf16);
  EXPECT_NE(m.find("align = 1"), std::string::npos) << m;
}

// Every key from before fp8 stays what it was: the text of the seed contract
// (and of a generic one) is pinned, and has no weight fields.
TEST(ContractFp8, Bf16CanonicalTextAndKeyAreUnchanged) {
  const Contract c = *normalize(seed());
  EXPECT_EQ(canonical_text(c),
            "gatejit-contract/1 target=gfx950 template=auto dtype=bf16 act=sigmoid rounding=boundary m=1 m_max=1 "
            "n=1536 k=7168 ld_hidden=7168 ld_weight=7168 ld_attn=1536 ld_out=1536 align=16");
  EXPECT_EQ(contract_key(c), "90286f522602a56fa823865f3a6221db");
  EXPECT_EQ(canonical_text(generic_contract_for(c)),
            "gatejit-contract/1 target=gfx950 template=generic dtype=bf16 act=sigmoid rounding=boundary");
  Contract f16 = seed(Target::kSm90);
  f16.dtype_hidden = f16.dtype_weight = f16.dtype_attn = f16.dtype_out = DType::kF16;
  for (const Contract &plain : {c, *normalize(f16)}) {
    const std::string text = canonical_text(plain);
    EXPECT_EQ(text.find("dtype_weight"), std::string::npos) << text;
    EXPECT_EQ(text.find("weight_scale"), std::string::npos) << text;
    const std::string json = contract_to_json(plain).dump();
    EXPECT_EQ(json.find("dtype_weight"), std::string::npos) << json;
    EXPECT_EQ(json.find("weight_scale"), std::string::npos) << json;
  }
}

TEST(ContractFp8, CanonicalTextAndKeyNameTheWeightAndItsScales) {
  const Contract bf16 = *normalize(seed());
  const Contract pc = *normalize(fp8(WeightScale::kPerChannel));
  const Contract b128 = *normalize(fp8(WeightScale::kBlock128));
  EXPECT_NE(canonical_text(pc).find(" dtype_weight=fp8_e4m3 weight_scale=per_channel "), std::string::npos)
      << canonical_text(pc);
  EXPECT_NE(canonical_text(b128).find(" dtype_weight=fp8_e4m3 weight_scale=block128 "), std::string::npos)
      << canonical_text(b128);
  EXPECT_NE(contract_key(pc), contract_key(b128));
  EXPECT_NE(contract_key(pc), contract_key(bf16));
  EXPECT_NE(contract_key(b128), contract_key(bf16));
  // The generic kernel's key has no shape, but it has the weight and scales.
  const std::string g_pc = contract_key(generic_contract_for(pc)), g_b128 = contract_key(generic_contract_for(b128));
  EXPECT_NE(g_pc, g_b128);
  EXPECT_NE(g_b128, contract_key(generic_contract_for(bf16)));
  Contract other_shape = fp8(WeightScale::kBlock128);
  other_shape.n = 1000;
  other_shape.k = 2064;
  EXPECT_EQ(contract_key(generic_contract_for(*normalize(other_shape))), g_b128);
  EXPECT_NE(contract_key(*normalize(other_shape)), contract_key(b128));
  // f16 activations with an fp8 weight are another kernel.
  Contract f16 = fp8(WeightScale::kBlock128);
  f16.dtype_hidden = f16.dtype_attn = f16.dtype_out = DType::kF16;
  EXPECT_NE(contract_key(*normalize(f16)), contract_key(b128));
}

TEST(ContractFp8, JsonRoundTripKeepsTheWeightAndItsScales) {
  for (WeightScale s : {WeightScale::kPerChannel, WeightScale::kBlock128}) {
    Contract c = fp8(s, Target::kSm90);
    c.dtype_hidden = c.dtype_attn = c.dtype_out = DType::kF16;
    const Contract n = *normalize(c);
    const nlohmann::json j = contract_to_json(n);
    EXPECT_EQ(j.value("dtype_weight", ""), "fp8_e4m3") << j.dump();
    EXPECT_EQ(j.value("weight_scale", ""), weight_scale_name(s)) << j.dump();
    auto back = contract_from_json(j);
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_EQ(back->dtype_weight, DType::kFP8E4M3);
    EXPECT_EQ(back->dtype_hidden, DType::kF16);
    EXPECT_EQ(back->weight_scale, s);
    EXPECT_EQ(*normalize(*back), n);
    EXPECT_EQ(canonical_text(*normalize(*back)), canonical_text(n));
  }
  // The names torch and others use for the dtype.
  for (const char *name : {"fp8_e4m3", "float8_e4m3fn", "e4m3"}) {
    auto c = contract_from_json_text(std::string(R"({"n": 1536, "k": 7168, "dtype_weight": ")") + name +
                                     R"(", "weight_scale": "per_channel"})");
    ASSERT_TRUE(c.ok()) << name << ": " << c.status().message();
    EXPECT_EQ(c->dtype_weight, DType::kFP8E4M3) << name;
    EXPECT_EQ(c->dtype_hidden, DType::kBF16) << name;
    EXPECT_TRUE(validate(*c).ok()) << validate(*c).message();
  }
}

TEST(ContractFp8, UnknownWeightScaleIsRefusedListingTheAllowedValues) {
  auto bad = contract_from_json_text(
      R"({"n": 1536, "k": 7168, "dtype_weight": "fp8_e4m3", "weight_scale": "block64"})");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  const std::string m = bad.status().message();
  EXPECT_NE(m.find("weight_scale"), std::string::npos) << m;
  EXPECT_NE(m.find("block64"), std::string::npos) << m;
  EXPECT_NE(m.find("none, per_channel, block128"), std::string::npos) << m;
  auto number = contract_from_json_text(R"({"n": 1536, "k": 7168, "weight_scale": 128})");
  ASSERT_FALSE(number.ok());
  EXPECT_NE(number.status().message().find("weight_scale"), std::string::npos) << number.status().message();
  for (const char *name : {"none", "per_channel", "block128"}) {
    auto parsed = parse_weight_scale(name);
    ASSERT_TRUE(parsed.ok()) << name;
    EXPECT_STREQ(weight_scale_name(*parsed), name);
  }
  // fp8 is a weight dtype: the dtype list says so.
  auto dtype = parse_dtype("fp8", "dtype_weight");
  ASSERT_FALSE(dtype.ok());
  EXPECT_NE(dtype.status().message().find("fp8_e4m3"), std::string::npos) << dtype.status().message();
}

// [N] per channel, [ceil(N/128) x ceil(K/128)] per block: N and K need not
// be multiples of 128.
TEST(ContractFp8, WeightScaleCountPerKind) {
  struct Shape {
    int64_t n, k, blocks;
  } shapes[] = {{1000, 2064, 8 * 17}, {1536, 7168, 12 * 56}, {1, 1, 1}, {128, 128, 1}, {129, 129, 4},
                {127, 257, 3}, {12289, 1, 97}};
  for (const Shape &s : shapes) {
    SCOPED_TRACE(std::to_string(s.n) + " x " + std::to_string(s.k));
    Contract c = fp8(WeightScale::kPerChannel);
    c.n = s.n;
    c.k = s.k;
    EXPECT_EQ(weight_scale_count(c), s.n);
    c.weight_scale = WeightScale::kBlock128;
    EXPECT_EQ(weight_scale_count(c), s.blocks);
    c = seed();
    c.n = s.n;
    c.k = s.k;
    EXPECT_EQ(weight_scale_count(c), 0);
  }
}

// An fp8 weight takes the template a 16-bit weight of the same shape takes
// (v57): the gemv where bf16 takes it, the mma elsewhere (every target
// above M = 16), which decodes the weight into 16-bit fragments; the
// generic kernel only where the layout refuses both. Two exceptions: sm_90
// at N <= 2048 keeps the gemv up to M = 2 (the H200's measurement), and
// gfx950 keeps it at M = 15-16, where a 16-bit weight takes the mma's thin
// grid rows (v84: v70's unsplit rules exclude fp8 weights).
TEST(TemplateChoiceFp8, SameTemplateAsASixteenBitWeight) {
  for (Target t : {Target::kGfx950, Target::kSm90})
    for (WeightScale s : {WeightScale::kPerChannel, WeightScale::kBlock128})
      for (int64_t m : {1, 2, 4, 16, 32, 512}) {
        SCOPED_TRACE(std::string(target_name(t)) + " " + weight_scale_name(s) + " m=" + std::to_string(m));
        Contract c = fp8(s, t);
        c.m = m;
        Contract bf16 = seed(t);
        bf16.m = m;
        auto choice = choose_template(*normalize(c));
        ASSERT_TRUE(choice.ok()) << choice.status().message();
        // gfx950 M = 15-16: the thin grid rows are 16-bit weights' (v84).
        const bool keeps_gemv = (t == Target::kSm90 && m <= 2) || (t == Target::kGfx950 && m == 16);
        const TemplateKind want = keeps_gemv ? TemplateKind::kGemv : choose_template(*normalize(bf16))->kind;
        ASSERT_NE(want, TemplateKind::kGeneric);
        EXPECT_EQ(choice->kind, want) << choice->reason;
        EXPECT_EQ(choice->contract.template_kind, want);
        EXPECT_EQ(choice->contract.weight_scale, s);
      }
  // The sides of the sm_90 boundary, named.
  Contract m1 = fp8(WeightScale::kPerChannel, Target::kSm90);
  m1.m = 1;
  EXPECT_EQ(choose_template(*normalize(m1))->kind, TemplateKind::kGemv);
  m1.m = 2;
  EXPECT_EQ(choose_template(*normalize(m1))->kind, TemplateKind::kGemv);
  m1.m = 3;
  EXPECT_EQ(choose_template(*normalize(m1))->kind, TemplateKind::kMma);
  m1.n = 3072;  // above N = 2048, as bf16: the mma from M = 2
  m1.m = 2;
  m1.ld_attn = m1.ld_out = 3072;
  EXPECT_EQ(choose_template(*normalize(m1))->kind, TemplateKind::kMma);
  Contract dynamic = fp8(WeightScale::kPerChannel, Target::kGfx950);
  dynamic.m_dynamic = true;
  dynamic.m = 0;
  dynamic.m_max = 16;
  EXPECT_EQ(choose_template(*normalize(dynamic))->kind, TemplateKind::kGemv);

  for (Target t : {Target::kGfx950, Target::kSm90}) {
    Contract c = fp8(WeightScale::kPerChannel, t);
    c.m = 4;
    c.template_kind = TemplateKind::kMma;
    EXPECT_EQ(choose_template(*normalize(c))->kind, TemplateKind::kMma);
    c.template_kind = TemplateKind::kGemv;
    c.m = 16;
    EXPECT_EQ(choose_template(*normalize(c))->kind, TemplateKind::kGemv);
    // A weight row that is not whole 16-byte vectors: generic, saying why.
    c = fp8(WeightScale::kBlock128, t);
    c.m = 32;
    c.k = c.ld_weight = 7160;
    c.ld_hidden = 7160;
    auto g = choose_template(*normalize(c));
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
  auto g = choose_template(*normalize(c));
  EXPECT_EQ(g->kind, TemplateKind::kGeneric);
  EXPECT_NE(g->reason.find("ld_weight = 7176 is not 16-byte aligned"), std::string::npos) << g->reason;
  c.ld_hidden = c.ld_weight = 7184;  // aligned strides: K itself is what is left
  g = choose_template(*normalize(c));
  EXPECT_EQ(g->kind, TemplateKind::kGeneric);
  EXPECT_NE(g->reason.find("k = 7176 is not a multiple of 16 elements"), std::string::npos) << g->reason;
  c.template_kind = TemplateKind::kGemv;
  EXPECT_FALSE(choose_template(*normalize(c)).ok());

  Contract bf16 = seed();
  bf16.m = 4;
  bf16.k = 7176;
  EXPECT_EQ(choose_template(*normalize(bf16))->kind, TemplateKind::kGemv);  // 14352-byte rows: whole vectors

  c = fp8();
  c.ld_weight = 7168 + 8;
  g = choose_template(*normalize(c));
  EXPECT_EQ(g->kind, TemplateKind::kGeneric);
  EXPECT_NE(g->reason.find("ld_weight = 7176"), std::string::npos) << g->reason;
  c.ld_weight = 7168 + 16;
  EXPECT_EQ(choose_template(*normalize(c))->kind, TemplateKind::kGemv);
  c.ld_weight = 0;
  c.k = 2064;  // 129 vectors: partial 128-blocks are fine
  EXPECT_EQ(choose_template(*normalize(c))->kind, TemplateKind::kGemv);
}

}  // namespace
}  // namespace gatejit
