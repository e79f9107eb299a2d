// GATEJIT_MMA_TUNING, parsed once per compile (tuning_override.h): every
// key at both ends of its range and just past them, every malformed item
// refused with the key and what it takes, the canonical text, and that the
// planner reads the object it is given, not the environment (the
// fingerprint and the plan must see the same override).
#include <gtest/gtest.h>

#include <set>

#include "compiler/compiler_test_support.h"
#include "kernel_plan.h"
#include "tuning_override.h"

namespace gatejit::compiler {
namespace {

using namespace testing_support;

std::string item(const TuningKey &k, int64_t v) { return std::string(k.name) + "=" + std::to_string(v); }

// The parse error of `text`, or "" where it parses.
std::string error_of(const std::string &text) {
  auto o = TuningOverride::parse(text);
  return o.ok() ? "" : o.status().message();
}

// A refusal names the key and what it takes.
void expect_refused(const TuningKey &k, const std::string &text) {
  const std::string e = error_of(text);
  EXPECT_NE(e, "") << text << " was taken";
  EXPECT_NE(e.find(std::string(k.name) + " takes " + allowed_values(k)), std::string::npos) << text << ": " << e;
}

// The first value below `v` (or above, `dir` = +1) that the key does not take.
int64_t next_refused(const TuningKey &k, int64_t v, int dir) {
  for (int64_t x = v + dir;; x += dir) {
    auto o = TuningOverride::parse(item(k, x));
    if (x < 0 || !o.ok()) return x;
  }
}

TEST(TuningOverride, EveryKeyTakesItsRangeAndRefusesPastIt) {
  ASSERT_EQ(tuning_keys().size(), 39u);
  for (const TuningKey &k : tuning_keys()) {
    SCOPED_TRACE(std::string(k.name));
    const int64_t lo = k.only.empty() ? k.min : k.only.front(), hi = k.only.empty() ? k.max : k.only.back();
    for (int64_t v : {lo, hi}) {
      auto o = TuningOverride::parse(item(k, v));
      ASSERT_TRUE(o.ok()) << o.status().message();
      EXPECT_EQ(o->text, item(k, v));
      EXPECT_TRUE(o->has(k.name));
      EXPECT_EQ(o->at(k.name), v);
      // The typed field holds it, and no other field is set.
      if (k.size) EXPECT_EQ(*((*o).*(k.size)), v);
      else EXPECT_EQ(*((*o).*(k.flag)), v != 0);
      for (const TuningKey &other : tuning_keys())
        if (&other != &k) EXPECT_FALSE(other.size ? ((*o).*(other.size)).has_value() : ((*o).*(other.flag)).has_value());
    }
    // Below the least: the number before it, or (at 0) a sign, which is not
    // a decimal number.
    if (lo > 0) expect_refused(k, item(k, lo - 1));
    expect_refused(k, std::string(k.name) + "=-" + std::to_string(lo + 1));
    expect_refused(k, item(k, hi + 1));
    expect_refused(k, item(k, next_refused(k, lo, +1)));  // a gap inside, for stepped or listed values
    for (const char *bad : {"", "x", "1x", " 1", "1 ", "+1", "1.0", "0x10", "99999999999999999999", "2147483648"})
      expect_refused(k, std::string(k.name) + "=" + bad);
    expect_refused(k, std::string(k.name));                                   // no '='
    expect_refused(k, item(k, lo) + "," + item(k, lo));                       // twice
  }
}

TEST(TuningOverride, TheHostKillerIsAnErrorNamingTheKeyAndItsRange) {
  EXPECT_EQ(error_of("rt=2147483648"),
            "GATEJIT_MMA_TUNING: rt=2147483648 is out of range: rt takes 1-4 (mma: weight tiles a wave multiplies "
            "per hidden fragment (RT); RT x MT x 4 accumulators in a lane's registers)");
  for (const char *text : {"rt=65536", "vecs=65536", "splits=65536", "vecs=2147483648", "splits=2147483648"})
    EXPECT_NE(error_of(text).find("is out of range"), std::string::npos) << text;
}

TEST(TuningOverride, UnknownKeysAndEmptyItemsAreRefused) {
  EXPECT_NE(error_of("bogus=1").find("unknown key 'bogus' (the keys: accs, attn, bk,"), std::string::npos)
      << error_of("bogus=1");
  EXPECT_NE(error_of("RT=2").find("unknown key 'RT'"), std::string::npos);
  EXPECT_NE(error_of("=3").find("unknown key ''"), std::string::npos);
  EXPECT_NE(error_of("rt=2,").find("an empty item at character 6"), std::string::npos) << error_of("rt=2,");
  EXPECT_NE(error_of(",rt=2").find("an empty item at character 1"), std::string::npos);
  EXPECT_NE(error_of("rt=2,,tiled=0").find("an empty item"), std::string::npos);
  // Input is echoed printable and short.
  const std::string e = error_of(std::string("k\x01\n") + std::string(200, 'y') + "=1");
  EXPECT_EQ(e.find('\n'), std::string::npos);
  EXPECT_LT(e.size(), 1000u);
}

TEST(TuningOverride, CanonicalTextSortsTheKeysAndDropsLeadingZeros) {
  auto o = TuningOverride::parse("splits=04,tiled=0,rt=2");
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->text, "rt=2,splits=4,tiled=0");
  EXPECT_EQ(o->rt, 2);
  EXPECT_EQ(o->splits, 4);
  EXPECT_EQ(o->tiled, false);
  EXPECT_FALSE(o->ksplit.has_value());
  const std::map<std::string, int64_t, std::less<>> want = {{"rt", 2}, {"splits", 4}, {"tiled", 0}};
  EXPECT_EQ(o->keys, want);
  auto none = TuningOverride::parse("");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->keys.empty());
  EXPECT_EQ(none->text, "");
}

TEST(TuningOverride, TheTableNamesEachKeyOnceAndEachFieldOnce) {
  std::set<std::string_view> names;
  for (const TuningKey &k : tuning_keys()) {
    EXPECT_TRUE(names.insert(k.name).second) << k.name;
    EXPECT_NE(!k.size, !k.flag) << k.name << ": one field";
    EXPECT_EQ(k.kind == TuningKeyKind::kSwitch, k.flag != nullptr) << k.name;
    EXPECT_LE(k.min, k.max) << k.name;
    EXPECT_FALSE(k.meaning.empty()) << k.name;
  }
  EXPECT_EQ(allowed_values(tuning_keys()[0]), "1, 2, 4 or 8");  // grows
}

// docs/runtime.md's table of the keys is this table.
TEST(TuningOverride, TheDocsListEveryKeyAsTheTableDeclaresIt) {
  const std::string docs = slurp(fs::path(GATEJIT_SOURCE_DIR) / "docs" / "runtime.md");
  ASSERT_FALSE(docs.empty());
  for (const TuningKey &k : tuning_keys()) {
    const std::string row =
        "| `" + std::string(k.name) + "` | " + allowed_values(k) + " | " + std::string(k.meaning) + " |\n";
    EXPECT_NE(docs.find(row), std::string::npos) << "docs/runtime.md lacks the row\n" << row;
  }
}

TEST(TuningOverride, FromEnvRefusesWhatParseRefuses) {
  ScopedMmaTuning scoped("rt=0");
  auto o = TuningOverride::from_env();
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.status().code(), StatusCode::kInvalidArgument);
  scoped.set("");
  ASSERT_TRUE(TuningOverride::from_env().ok());
}

TEST(TuningOverride, CompileAndEmitStageRefuseABadOverrideWithInvalidArgument) {
  ScopedMmaTuning scoped("rt=2147483648");
  const Contract c = seed();
  auto compiled = compile(c);
  ASSERT_FALSE(compiled.ok());
  EXPECT_EQ(compiled.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(compiled.status().message().find("rt takes 1-4"), std::string::npos) << compiled.status().message();
  auto ir = emit_stage(c, Stage::kTemplate);
  ASSERT_FALSE(ir.ok());
  EXPECT_EQ(ir.status().code(), StatusCode::kInvalidArgument);
  // Its fingerprint is none that a valid override (or none) has.
  const std::string refused = fingerprint();
  scoped.set("");
  EXPECT_NE(refused, fingerprint());
  EXPECT_NE(refused.find("/mma-tuning-refused"), std::string::npos) << refused;
}

TEST(TuningOverride, PlannerReadsTheObjectItIsGivenNotTheEnvironment) {
  ScopedMmaTuning scoped("ksplit=2");
  Contract c;  // the seed's shape, M = 4 on sm_90: the mma
  c.target = Target::kSm90;
  c.m = 4;
  c.n = 1536;
  c.k = 7168;
  auto normal = normalize(c);
  ASSERT_TRUE(normal.ok()) << normal.status().message();
  c = *normal;
  auto from_table = plan_kernel(c, TuningOverride{});
  ASSERT_TRUE(from_table.ok()) << from_table.status().to_string();
  EXPECT_NE(from_table->params.at("KSPLIT"), "2") << "the table's split, whatever the environment says";
  auto env = TuningOverride::from_env();
  ASSERT_TRUE(env.ok()) << env.status().message();
  auto overridden = plan_kernel(c, *env);
  ASSERT_TRUE(overridden.ok()) << overridden.status().to_string();
  EXPECT_EQ(overridden->params.at("KSPLIT"), "2");
  EXPECT_EQ(overridden->tuning.text, "ksplit=2");
}

}  // namespace
}  // namespace gatejit::compiler
