// The planner's decisions as reviewed tables (tests/compiler/plan_golden/):
// each row is a contract and what the planner decides for it, planned again
// here and compared, so a tuning change shows as a diff of the table.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

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

}  // namespace
}  // namespace gatejit::compiler
