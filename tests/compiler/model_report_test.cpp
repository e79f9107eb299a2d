// The compile report carries the model's fields for every target, and the
// text report (compile, inspect) shows them.
#include <gtest/gtest.h>

#include "code_object_report.h"
#include "gatejit/compiler/compiler.h"

namespace gatejit::compiler {
namespace {

class ModelReport : public ::testing::TestWithParam<Target> {};

TEST_P(ModelReport, CompileReportHasPlanFactsCodeFactsModelAndGates) {
  Contract c;
  c.target = GetParam();
  c.m = 4;
  c.n = 1536;
  c.k = 7168;
  auto kernel = compile(c);
  ASSERT_TRUE(kernel.ok()) << kernel.status().message();
  const nlohmann::json &r = kernel->report;
  for (const char *field : {"plan_facts", "code_facts", "model", "gates"}) EXPECT_TRUE(r.contains(field)) << field;
  const nlohmann::json &m = r.at("model");
  const double point = m.at("predicted_us").get<double>();
  EXPECT_GT(point, 0);
  EXPECT_LE(m.at("range_us")[0].get<double>(), point);
  EXPECT_GE(m.at("range_us")[1].get<double>(), point);
  EXPECT_FALSE(m.at("limiter").get<std::string>().empty());
  EXPECT_EQ(m.at("hbm_bytes").get<int64_t>(), 2 * (4 * 7168 + 1536 * 7168 + 2 * 4 * 1536));
  EXPECT_EQ(r.at("code_facts").at("format"), c.target == Target::kSm90 ? "ptx" : "hsaco");
  // The stored report (cache entries, bundles) is the same JSON.
  EXPECT_EQ(nlohmann::json::parse(kernel->binary.report_json).at("model"), m);
  const std::string text = format_report(r);
  EXPECT_NE(text.find("  model "), std::string::npos) << text;
  EXPECT_NE(text.find("  gate no_scratch"), std::string::npos) << text;
}

INSTANTIATE_TEST_SUITE_P(Targets, ModelReport, ::testing::Values(Target::kGfx950, Target::kGfx942, Target::kSm90),
                         [](const auto &info) { return std::string(target_name(info.param)); });

// A generic kernel takes its shape at launch: the model reads the contract
// it was compiled for.
TEST(ModelReport, GenericKernelsArePredictedForTheirContractsShape) {
  Contract c;
  c.target = Target::kGfx950;
  c.m = 3;
  c.n = 1000;
  c.k = 1000;
  c.template_kind = TemplateKind::kGeneric;
  auto kernel = compile(c);
  ASSERT_TRUE(kernel.ok()) << kernel.status().message();
  EXPECT_EQ(kernel->report.at("plan_facts").at("form"), "generic");
  EXPECT_EQ(kernel->report.at("model").at("hbm_bytes").get<int64_t>(), 2 * (3 * 1000 + 1000 * 1000 + 2 * 3 * 1000));
}

}  // namespace
}  // namespace gatejit::compiler
