// Invalid contracts: each is refused with invalid_argument, a message that
// names the offending field, and no output - from compile(), emit_stage() and
// the gatejit command line alike.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "compiler/compiler_test_support.h"
#include "gatejit/compiler/compiler.h"
#include "gatejit/contract.h"
#include "gatejit/contract_json.h"

namespace gatejit {
namespace {

using namespace testing_support;

namespace fs = std::filesystem;
using testing::HasSubstr;


struct InvalidCase {
  const char *name;
  Contract contract;
  std::vector<std::string> must_mention;  // field name (and value) the message must contain
};

std::vector<InvalidCase> invalid_cases() {
  std::vector<InvalidCase> v;
  Contract c = seed();
  c.k = 0;
  v.push_back({"k_zero", c, {"k = 0"}});
  c = seed();
  c.n = 0;
  v.push_back({"n_zero", c, {"n = 0"}});
  c = seed();
  c.dtype_weight = DType::kF16;
  // The mixed-dtype message names the dtype field and the odd one out.
  v.push_back({"mixed_dtypes", c, {"dtype", "weight=f16"}});
  c = seed();
  c.ld_weight = c.k - 1;
  v.push_back({"ld_weight_below_k", c, {"ld_weight = 7167"}});
  c = seed();
  c.ld_hidden = c.k - 1;
  v.push_back({"ld_hidden_below_k", c, {"ld_hidden = 7167"}});
  c = seed();
  c.m = 20;
  c.m_max = 16;
  v.push_back({"m_above_m_max", c, {"m = 20", "m_max"}});
  c = seed();
  c.m_dynamic = true;
  c.m = 0;
  c.m_max = 0;
  v.push_back({"dynamic_m_without_m_max", c, {"m_max"}});
  c = seed();
  c.align = 3;
  v.push_back({"align_not_power_of_two", c, {"align = 3"}});
  c = seed();
  c.ld_weight = c.k + 2;  // valid, but gemv cannot serve it
  c.template_kind = TemplateKind::kGemv;
  v.push_back({"gemv_forced_on_unaligned_ld", c, {"template", "ld_weight"}});
  return v;
}

class InvalidContract : public testing::TestWithParam<InvalidCase> {};

TEST_P(InvalidContract, CompileRefusesAndNamesTheField) {
  const InvalidCase &p = GetParam();
  auto compiled = compiler::compile(p.contract);
  ASSERT_FALSE(compiled.ok()) << "compiled an invalid contract";
  EXPECT_EQ(compiled.status().code(), StatusCode::kInvalidArgument) << compiled.status().to_string();
  for (const std::string &s : p.must_mention) EXPECT_THAT(compiled.status().message(), HasSubstr(s));
}

TEST_P(InvalidContract, EmitStageRefusesWithTheSameError) {
  const InvalidCase &p = GetParam();
  auto compiled = compiler::compile(p.contract);
  ASSERT_FALSE(compiled.ok());
  for (compiler::Stage s : {compiler::Stage::kTemplate, compiler::Stage::kGpu, compiler::Stage::kIsa}) {
    auto text = compiler::emit_stage(p.contract, s);
    ASSERT_FALSE(text.ok()) << "emitted IR for an invalid contract";
    EXPECT_EQ(text.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(text.status().message(), compiled.status().message());
  }
}

INSTANTIATE_TEST_SUITE_P(Fields, InvalidContract, testing::ValuesIn(invalid_cases()),
                         [](const auto &info) { return std::string(info.param.name); });

TEST(InvalidTarget, ParseTargetNamesTheField) {
  auto t = parse_target("gfx1234");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(t.status().message(), HasSubstr("target"));
  EXPECT_THAT(t.status().message(), HasSubstr("gfx1234"));
  // And the allowed ones are accepted, so the refusal is about the value.
  for (const char *ok : {"gfx950", "gfx942", "sm_90"}) EXPECT_TRUE(parse_target(ok).ok()) << ok;
}

TEST(InvalidTarget, ContractJsonNamesTheField) {
  auto c = contract_from_json_text(R"({"m": 1, "n": 1536, "k": 7168, "dtype": "bf16", "act": "sigmoid",
                                       "target": "gfx1234"})");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(c.status().message(), HasSubstr("target"));
  EXPECT_THAT(c.status().message(), HasSubstr("gfx1234"));
}

TEST(InvalidJson, MixedDtypesThroughJsonAreRefusedByCompile) {
  auto c = contract_from_json_text(R"({"m": 1, "n": 1536, "k": 7168, "dtype": "bf16", "dtype_weight": "f16",
                                       "target": "gfx950"})");
  ASSERT_TRUE(c.ok()) << c.status().to_string();  // parsing does not validate
  auto compiled = compiler::compile(*c);
  ASSERT_FALSE(compiled.ok());
  EXPECT_EQ(compiled.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(compiled.status().message(), HasSubstr("dtype"));
}

TEST(InvalidJson, UnknownKeyIsNamed) {
  auto c = contract_from_json_text(R"({"m": 1, "n": 1536, "kk": 7168})");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(c.status().message(), HasSubstr("kk"));
}

// --- the command line -------------------------------------------------------





struct CliInvalidCase {
  const char *name;
  const char *flags;      // replaces the seed's flags where given
  const char *mentioned;  // the field the message must name
};

class InvalidContractCli : public testing::TestWithParam<CliInvalidCase> {};

TEST_P(InvalidContractCli, ExitsNonZeroWithTheMessageAndNoFile) {
  const CliInvalidCase &p = GetParam();
  TempDir dir;
  const fs::path output = dir / "kernel.hsaco";
  const CliResult r = gatejit_cli(dir, std::string("compile ") + p.flags + " -o " + output.string());
  EXPECT_NE(r.rc, 0);
  EXPECT_THAT(r.err, HasSubstr(p.mentioned));
  EXPECT_THAT(r.err, HasSubstr("error"));
  EXPECT_FALSE(fs::exists(output)) << "an output file was created for an invalid contract";
  // Nothing else (no temporary or partial file, no cache entry) was left
  // behind either.
  for (const auto &e : fs::recursive_directory_iterator(dir.path())) {
    const std::string name = e.path().filename().string();
    if (e.is_regular_file() && name != "stdout.txt" && name != "stderr.txt")
      ADD_FAILURE() << "left behind: " << e.path();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Flags, InvalidContractCli,
    testing::Values(
        CliInvalidCase{"k_zero", "--m 1 --n 1536 --k 0 --dtype bf16 --act sigmoid --target gfx950", "k = 0"},
        CliInvalidCase{"unknown_target", "--m 1 --n 1536 --k 7168 --dtype bf16 --act sigmoid --target gfx1234",
                       "target"},
        CliInvalidCase{"mixed_dtypes", "--m 1 --n 1536 --k 7168 --dtype bf16 --dtype_weight f16 --target gfx950",
                       "dtype"},
        CliInvalidCase{"ld_weight_below_k", "--m 1 --n 1536 --k 7168 --ld_weight 7167 --target gfx950",
                       "ld_weight"},
        CliInvalidCase{"m_above_m_max", "--m 20 --m_max 16 --n 1536 --k 7168 --target gfx950", "m_max"}),
    [](const auto &info) { return std::string(info.param.name); });

}  // namespace
}  // namespace gatejit
