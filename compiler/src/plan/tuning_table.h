// The per-target tuning tables (compiler/tuning/<target>.tsv, embedded at
// build time): the planner's choices as data, each row with the contract
// range it covers, the choice, and its evidence (the model's and the H200's
// µs, a decision record). compiler/tuning/README.md describes the format.
//
// A rule (e.g. "streamed") is an ordered list of rows; the first row whose
// ranges and conditions hold gives the choice. Conditions name facts the
// planner computes from the target's hardware (target_info) and, where a
// fact depends on the choice (the tiles a shape makes), from the row itself.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gatejit/contract.h"
#include "gatejit/status.h"

namespace gatejit::compiler {

// One row's choice: named integer values ("rt=2 ksplit=16").
struct Choice {
  std::map<std::string, int64_t, std::less<>> values;
  std::string source;  // "sm_90.tsv:42", for messages and `gatejit plan`
  int64_t get(std::string_view key, int64_t otherwise) const {
    auto it = values.find(key);
    return it == values.end() ? otherwise : it->second;
  }
  bool flag(std::string_view key) const { return get(key, 0) != 0; }
};

// An inclusive integer range; an open end is the type's limit.
struct Range {
  int64_t low = INT64_MIN, high = INT64_MAX;
  bool holds(int64_t v) const { return v >= low && v <= high; }
};

// A condition of a row's `when` column: the named fact in `range`
// ("name" alone: the fact is non-zero; "!name": it is zero).
struct Condition {
  std::string fact;
  Range range;
  bool nonzero = false, zero = false;
};

struct TuningRow {
  std::string rule;
  Range m, n, k;
  std::string weight;  // "*", "16bit", "fp8", "fp8/block128", "fp8/per_channel"
  std::vector<Condition> when;
  Choice choice;
  // Evidence, carried for readers and `gatejit plan`: not read by the planner.
  std::string at, predicted_us, measured_us, record, note;
};

// What a rule's rows may name: its choice keys and the facts of its
// conditions (tuning_rules.cpp declares every rule).
struct RuleSpec {
  std::string_view name;
  std::vector<std::string_view> keys;
  std::vector<std::string_view> facts;
  bool total;  // every contract must find a row: the table ends the rule with a catch-all row
};
std::span<const RuleSpec> rule_specs();

// A fact's value for the row being tested (its choice may shape the fact).
using FactFn = std::function<int64_t(const Choice &row)>;
using Facts = std::map<std::string_view, FactFn, std::less<>>;

class TuningTable {
 public:
  // Parses and checks a table: every rule, key and fact known, every total
  // rule ending with a catch-all row. Errors name the line and the field.
  static StatusOr<TuningTable> parse(std::string_view name, std::string_view text);

  // The first row of `rule` that holds for `c` (M is m_max) and `facts`,
  // or null where none does.
  const Choice *find(std::string_view rule, const Contract &c, const Facts &facts = {}) const;
  // A total rule's row (the table's checks guarantee one).
  const Choice &choose(std::string_view rule, const Contract &c, const Facts &facts = {}) const;
  bool has_rule(std::string_view rule) const;

  const std::string &name() const { return name_; }
  const std::vector<TuningRow> &rows() const { return rows_; }

 private:
  std::string name_;
  std::vector<TuningRow> rows_;
};

// The embedded table of `t` (compiler/tuning/<name>.tsv), parsed once.
StatusOr<const TuningTable *> tuning_table(Target t);

// The tables as the build embeds them (cmake/embed_tuning.cmake); the
// fingerprint hashes their files.
struct EmbeddedTuningTable {
  const char *name;  // file name without .tsv: the target's name
  const char *text;
};
extern const EmbeddedTuningTable kEmbeddedTuningTables[];
extern const size_t kEmbeddedTuningTableCount;

}  // namespace gatejit::compiler
