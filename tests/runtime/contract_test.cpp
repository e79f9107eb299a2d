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

// What the runtime knows of the templates: which can serve a contract at
// all, never which is faster (the compiler's tests/compiler/form_choice_test.cpp).
TEST(TemplateCapability, RefusalsNameTheLayoutTheTargetAndTheGemvRows) {
  EXPECT_FALSE(template_refusal(*normalize(seed()), TemplateKind::kGemv));
  EXPECT_FALSE(specialised_refusal(*normalize(seed())));

  Contract c = seed();
  c.ld_weight = 7170;
  EXPECT_NE(specialised_refusal(*normalize(c)).value_or("").find("ld_weight = 7170 is not 16-byte aligned"),
            std::string::npos);

  c = seed();
  c.m = 17;
  c.target = Target::kGfx942;  // no mma there, the gemv's rows past: both named, the mma's first
  const std::string both = specialised_refusal(*normalize(c)).value_or("");
  EXPECT_EQ(both.find("target gfx942"), 0u) << both;
  EXPECT_NE(both.find("m_max = 17 exceeds the gemv limit of 16"), std::string::npos) << both;
  c.m = 16;
  EXPECT_FALSE(specialised_refusal(*normalize(c))) << "the gemv serves it";

  c = seed();
  c.align = 4;
  EXPECT_NE(specialised_refusal(*normalize(c)).value_or("").find("align = 4"), std::string::npos);

  c = seed();
  c.ld_weight = 7170;
  c.template_kind = TemplateKind::kGemv;  // asked for, but impossible
  const Status forced = check_requested_template(*normalize(c));
  ASSERT_FALSE(forced.ok());
  EXPECT_NE(forced.message().find("template = gemv cannot serve this contract: leading dimension ld_weight"),
            std::string::npos)
      << forced.message();
  c.template_kind = TemplateKind::kAuto;
  EXPECT_TRUE(check_requested_template(*normalize(c)).ok());
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

}  // namespace
}  // namespace gatejit
