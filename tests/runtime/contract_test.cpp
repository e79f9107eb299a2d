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
  EXPECT_EQ(kind(Target::kGfx950, 16), TemplateKind::kGemv);
  EXPECT_EQ(kind(Target::kGfx950, 17), TemplateKind::kMma);
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

}  // namespace
}  // namespace gatejit
