// Instantiation checks its parameters both ways against what the templates
// declare: each rule on a small synthetic set, then on real plans, and every
// plan of the code-object invariant grid (all forms and targets) without
// error.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

#include "invariant/codegen_grid.h"
#include "kernel_plan.h"
#include "template_instantiate.h"

namespace gatejit::compiler {
namespace {

Template parsed(const char *path, const char *text) {
  auto t = parse_template(path, text);
  EXPECT_TRUE(t.ok()) << t.status().message();
  return t.ok() ? *t : Template{};
}

// A kernel that pastes one snippet and takes one fragment.
struct SyntheticSet {
  Template kernel = parsed("kernels/k",
                           "// kind: kernel\n"
                           "// param EPILOGUE: the snippets\n"
                           "// param SYMBOL: the kernel's symbol\n"
                           "// param PICK: a fragment\n"
                           "module {\n${EPILOGUE}  gpu.func @${SYMBOL}() {\n${PICK}  }\n}\n");
  Template snippet = parsed("epilogue/s",
                            "// kind: snippet\n"
                            "// param T: the element type\n"
                            "  func.func private @f(%x: ${T})\n");
  Template fragment = parsed("copy/f",
                             "// kind: fragment\n"
                             "// param N: a count\n"
                             "    %n = arith.constant ${N} : index\n");
  TemplateParams params = {{"SYMBOL", "k0"}, {"T", "f32"}, {"N", "4"}};

  TemplateSet set() const { return {&kernel, {&snippet}, {{"PICK", &fragment}}}; }
  std::string error() const {
    auto text = instantiate_set(set(), params);
    return text.ok() ? "" : text.status().message();
  }
};

TEST(TemplateInstantiate, FillsTheKernelSnippetsAndFragments) {
  SyntheticSet s;
  auto text = instantiate_set(s.set(), s.params);
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(*text,
            "module {\n  func.func private @f(%x: f32)\n  gpu.func @k0() {\n"
            "    %n = arith.constant 4 : index\n  }\n}\n");
}

TEST(TemplateInstantiate, ParamSetButTakenByNoneIsAnError) {
  SyntheticSet s;
  s.params["EXTRA"] = "1";
  EXPECT_EQ(s.error(),
            "plan sets ${EXTRA}, which none of the templates instantiated together takes "
            "(kernel k; snippets s; fragments PICK = f)");
  s.params["ANOTHER"] = "2";
  EXPECT_NE(s.error().find("plan sets ${ANOTHER}, ${EXTRA}, which none"), std::string::npos) << s.error();
}

TEST(TemplateInstantiate, ParamTakenButUnsetIsAnError) {
  SyntheticSet s;
  s.params.erase("N");
  EXPECT_EQ(s.error(), "template copy/f takes ${N} (a count), which the plan does not set");
  s.params["N"] = "4";
  s.params.erase("SYMBOL");
  EXPECT_EQ(s.error(), "template kernels/k takes ${SYMBOL} (the kernel's symbol), which the plan does not set");
}

TEST(TemplateInstantiate, ParamsTheInstantiationFillsAreNotThePlans) {
  SyntheticSet s;
  s.params["EPILOGUE"] = "";
  EXPECT_EQ(s.error(), "plan sets ${EPILOGUE}, which the instantiation fills in (kernel k; snippets s; fragments PICK = f)");
  SyntheticSet t;
  TemplateSet set = t.set();
  set.fragments = {{"OTHER", &t.fragment}};
  auto text = instantiate_set(set, t.params);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().message(),
            "kernel kernels/k does not take ${OTHER}, which the instantiation fills in "
            "(kernel k; snippets s; fragments OTHER = f)");
}

TEST(TemplateInstantiate, EachPlaceTakesItsKind) {
  SyntheticSet s;
  TemplateSet set = s.set();
  set.kernel = &s.snippet;
  EXPECT_EQ(instantiate_set(set, s.params).status().message(), "template epilogue/s is a snippet, used as a kernel");
  set = s.set();
  set.snippets = {&s.fragment};
  EXPECT_EQ(instantiate_set(set, s.params).status().message(), "template copy/f is a fragment, used as a snippet");
  set = s.set();
  set.fragments = {{"PICK", &s.snippet}};
  EXPECT_EQ(instantiate_set(set, s.params).status().message(), "template epilogue/s is a snippet, used as a fragment");
}

KernelPlan real_plan(Target target, int64_t m) {
  Contract c;
  c.target = target;
  c.m = m;
  c.n = 1536;
  c.k = 7168;
  auto normal = normalize(c);
  EXPECT_TRUE(normal.ok()) << normal.status().message();
  auto plan = plan_kernel(*normal);
  EXPECT_TRUE(plan.ok()) << plan.status().message();
  return *plan;
}

// A real plan: a parameter the plan sets that its templates do not take, or
// one they take that it does not set, stops the instantiation, named.
TEST(TemplateInstantiate, RealPlanWithAnUntakenParamIsRefused) {
  KernelPlan gemv = real_plan(Target::kGfx950, 1);
  ASSERT_EQ(gemv.template_file, "gemv");
  ASSERT_TRUE(instantiate(gemv).ok());
  gemv.params["BARRIERS"] = "0";  // the TMA copies' parameter, taken by none of gemv's templates
  auto text = instantiate(gemv);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().message().rfind(
                "plan sets ${BARRIERS}, which none of the templates instantiated together takes (kernel gemv; snippets "
                "epilogue_boundary, activation_sigmoid, sigmoid, convert_narrow, ",
                0),
            0u)
      << text.status().message();
}

TEST(TemplateInstantiate, RealPlanMissingATakenParamIsRefused) {
  KernelPlan tiled = real_plan(Target::kSm90, 512);
  ASSERT_EQ(tiled.template_file, "mma_tiled");
  ASSERT_TRUE(instantiate(tiled).ok());
  tiled.params.erase("STAGES");
  auto text = instantiate(tiled);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().message(),
            "template kernels/mma_tiled takes ${STAGES} (stages in the ring), which the plan does not set");
}

// Every plan of the invariant grid (every form, target, dtype, epilogue,
// and the development overrides) instantiates: the planner sets exactly
// what its templates take.
TEST(TemplateInstantiate, EveryPlanOfTheInvariantGrid) {
  const std::vector<invariant::GridCase> grid = invariant::codegen_grid();
  std::set<std::string> files;
  for (const invariant::GridCase &g : grid) {
    SCOPED_TRACE(canonical_text(g.contract) + (g.tuning.empty() ? "" : " tuning " + g.tuning));
    if (g.tuning.empty()) unsetenv("GATEJIT_MMA_TUNING");
    else setenv("GATEJIT_MMA_TUNING", g.tuning.c_str(), 1);
    auto normal = normalize(g.contract);
    ASSERT_TRUE(normal.ok()) << normal.status().message();
    auto tuning = TuningOverride::from_env();
    ASSERT_TRUE(tuning.ok()) << tuning.status().message();
    auto plan = plan_kernel(*normal, *tuning);
    ASSERT_TRUE(plan.ok()) << plan.status().message();
    auto text = instantiate(*plan);
    EXPECT_TRUE(text.ok()) << text.status().message();
    files.insert(plan->template_file);
  }
  unsetenv("GATEJIT_MMA_TUNING");
  EXPECT_GT(grid.size(), 300u);
  EXPECT_EQ(files, (std::set<std::string>{"gemv", "generic", "mma", "mma_tiled"}));
}

}  // namespace
}  // namespace gatejit::compiler
