// The per-target tuning tables (compiler/tuning/*.tsv): every embedded table
// parses and holds the rules its target's forms read; a malformed row is an
// error naming its line and field; the first row that holds wins, with
// facts computed for the row being tested.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "gatejit/target_info.h"
#include "gatejit/template_choice.h"
#include "plan/tuning_table.h"

namespace gatejit::compiler {
namespace {

const std::string kHeader = "rule\tm\tn\tk\tweight\twhen\tchoice\tat\tpredicted_us\tmeasured_us\trecord\tnote\n";

std::string row(const std::string &rule, const std::string &m, const std::string &when, const std::string &choice) {
  return rule + "\t" + m + "\t*\t*\t*\t" + when + "\t" + choice + "\t-\t-\t-\t-\t-\n";
}

TEST(TuningTable, EveryTargetsTableParsesAndHoldsTheRulesItsFormsRead) {
  for (const TargetInfo &info : target_table()) {
    SCOPED_TRACE(info.name);
    auto table = tuning_table(info.target);
    ASSERT_TRUE(table.ok()) << table.status().message();
    std::vector<std::string> rules = {"gemv", "attn_load", "attn_prefetch"};
    if (mma_available(info.target))
      rules.insert(rules.end(), {"streamed", "streamed_poll", "streamed_weight_run", "tiled_shape", "tiled_defaults",
                                 "tiled_poll", "tiled_tail", "tiled_persistent"});
    for (const std::string &rule : rules) EXPECT_TRUE((*table)->has_rule(rule)) << rule;
  }
}

// A row's evidence is its decision record: the link must lead somewhere.
TEST(TuningTable, EveryRowLinksAnExistingDecisionRecord) {
  int rows = 0;
  for (const TargetInfo &info : target_table()) {
    auto table = tuning_table(info.target);
    ASSERT_TRUE(table.ok()) << table.status().message();
    for (const TuningRow &r : (*table)->rows()) {
      ++rows;
      EXPECT_EQ(r.record.rfind("research/decisions/", 0), 0u) << r.choice.source << ": " << r.record;
      EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(GATEJIT_SOURCE_DIR) / r.record))
          << r.choice.source << ": " << r.record;
    }
  }
  EXPECT_GT(rows, 0);
}

TEST(TuningTable, AMalformedRowNamesItsLineAndField) {
  struct Case {
    std::string text, want;
  };
  const Case cases[] = {
      {"rule\tm\n", "line 1: the header must be"},
      {kHeader + row("gemv", "*", "*", "rows=1") + "gemv\t*\t*\n", "line 3: 3 columns"},
      {kHeader + row("bogus", "*", "*", "rows=1"), "line 2: rule 'bogus' is unknown"},
      {kHeader + row("gemv", "9-3", "*", "rows=1"), "line 2: m '9-3' is not a range"},
      {kHeader + row("gemv", "x", "*", "rows=1"), "line 2: m 'x' is not a range"},
      {kHeader + row("gemv", "*", "*", "rows=two"), "line 2: choice 'rows=two' is not key=integer"},
      {kHeader + row("gemv", "*", "*", "tiles=2"), "line 2: rule gemv has no key 'tiles'"},
      {kHeader + row("gemv", "*", "thin_rows", "rows=1"), "line 2: rule gemv has no fact 'thin_rows'"},
      {kHeader + row("gemv", "*", "fill_rows=a", "rows=1"), "line 2: condition 'fill_rows=a'"},
      {kHeader + row("gemv", "1", "*", "rows=1"), "rule gemv must end with a row for every contract"},
      {"# only a comment\n", "no header line"},
  };
  for (const Case &c : cases) {
    auto t = TuningTable::parse("test", c.text);
    ASSERT_FALSE(t.ok()) << c.text;
    EXPECT_NE(t.status().message().find(c.want), std::string::npos) << t.status().message();
    EXPECT_NE(t.status().message().find("test.tsv"), std::string::npos) << t.status().message();
  }
}

TEST(TuningTable, TheFirstRowThatHoldsWinsWithFactsOfThatRow) {
  const std::string text = kHeader + row("gemv", "1", "*", "rows=1 unroll=8") +
                           row("gemv", "2-4", "fill_rows=2-", "rows=2") + row("gemv", "*", "!fill_rows", "rows=3") +
                           row("gemv", "*", "*", "rows=4");
  auto t = TuningTable::parse("test", text);
  ASSERT_TRUE(t.ok()) << t.status().message();
  Contract c;
  c.n = 1536;
  c.k = 7168;
  int64_t fill = 2;
  int64_t asked_rows = 0;
  const Facts facts = {{"fill_rows", [&](const Choice &r) {
                          asked_rows = r.get("rows", 0);
                          return fill;
                        }}};
  c.m_max = 1;
  EXPECT_EQ(t->choose("gemv", c, facts).get("unroll", 0), 8);
  EXPECT_EQ(t->choose("gemv", c, facts).source, "test.tsv:2");
  c.m_max = 3;
  EXPECT_EQ(t->choose("gemv", c, facts).get("rows", 0), 2);
  EXPECT_EQ(asked_rows, 2) << "the fact sees the row it is tested for";
  fill = 1;
  EXPECT_EQ(t->choose("gemv", c, facts).get("rows", 0), 4);
  fill = 0;
  EXPECT_EQ(t->choose("gemv", c, facts).get("rows", 0), 3);
  EXPECT_EQ(t->find("streamed", c, facts), nullptr);
}

}  // namespace
}  // namespace gatejit::compiler
