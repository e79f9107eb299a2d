// The planner's decisions as reviewed tables (tests/compiler/plan_golden/):
// each row is a contract and what the planner decides for it, planned again
// here and compared, so a tuning change shows as a diff of the table.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/compiler_test_support.h"
#include "plan/plan_table.h"

namespace gatejit::compiler {
namespace {

namespace fs = std::filesystem;

const fs::path kGoldenDir = fs::path(GATEJIT_SOURCE_DIR) / "tests" / "compiler" / "plan_golden";

std::vector<std::string> lines_of(const std::string &text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

// The rows that differ, as "- golden" / "+ now" pairs (rows never move:
// the contract column is kept, so line i of one is line i of the other).
std::string row_diff(const std::string &golden, const std::string &now) {
  const std::vector<std::string> a = lines_of(golden), b = lines_of(now);
  std::string diff;
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    const std::string &x = i < a.size() ? a[i] : "", &y = i < b.size() ? b[i] : "";
    if (x != y) diff += "  line " + std::to_string(i + 1) + "\n  - " + x + "\n  + " + y + "\n";
  }
  return diff;
}

std::string slurp(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(PlanGolden, EveryTargetHasATable) {
  for (const char *target : {"gfx950", "gfx942", "sm_90"})
    EXPECT_TRUE(fs::exists(kGoldenDir / (std::string(target) + ".tsv"))) << target;
}

TEST(PlanGolden, TheTablesHoldThePlannersDecisions) {
  int tables = 0;
  for (const auto &entry : fs::directory_iterator(kGoldenDir)) {
    if (entry.path().extension() != ".tsv") continue;
    ++tables;
    const std::string golden = slurp(entry.path());
    auto now = replan_table(golden);
    ASSERT_TRUE(now.ok()) << entry.path() << ": " << now.status().message();
    // Not EXPECT_EQ: the row diff below reads better than two whole tables.
    EXPECT_TRUE(golden == *now) << entry.path().filename().string() << ": the planner's decisions changed:\n"
                            << row_diff(golden, *now)
                            << "If the change is meant, review it and write the table again:\n"
                            << "  build/compiler/gatejit plan --table " << entry.path().string() << " --write";
  }
  EXPECT_GE(tables, 3);
}

TEST(PlanGolden, ABadContractColumnNamesTheLineAndTheKey) {
  auto r = replan_table("# header\ntarget=gfx950 m=4 n=1536 k=7168 bogus=1\t-\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("line 2"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("bogus"), std::string::npos) << r.status().message();
}

// `gatejit plan --json`: the schedule without compiling, on every target,
// as the golden rows see it; a bad contract is a usage error naming it.
TEST(PlanCommand, PrintsTheTypedScheduleForEveryTarget) {
  testing_support::TempDir dir;
  const struct {
    const char *target, *form;
  } cases[] = {{"gfx950", "tiled"}, {"sm_90", "tiled"}, {"gfx942", "generic"}};
  for (const auto &c : cases) {
    SCOPED_TRACE(c.target);
    const auto r = testing_support::gatejit_cli(dir, std::string("plan --target ") + c.target +
                                                         " --m 96 --n 1536 --k 7168 --json");
    ASSERT_EQ(r.rc, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j.at("target"), c.target);
    EXPECT_EQ(j.at("schedule").at("form"), c.form);
    EXPECT_FALSE(fs::exists(dir / "cache")) << "plan compiles nothing";
  }
  const auto bad = testing_support::gatejit_cli(dir, "plan --target gfx950 --m 4 --n 1536 --k 0 --json");
  EXPECT_EQ(bad.rc, 1);
  EXPECT_NE(bad.err.find("k = 0"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace gatejit::compiler
