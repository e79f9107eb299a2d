#include "plan/tuning_table.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <memory>
#include <mutex>

namespace gatejit::compiler {
namespace {

constexpr std::string_view kHeader = "rule\tm\tn\tk\tweight\twhen\tchoice\tat\tpredicted_us\tmeasured_us\trecord\tnote";
constexpr size_t kColumns = 12;

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  while (true) {
    const size_t at = s.find(sep);
    parts.push_back(s.substr(0, at));
    if (at == std::string_view::npos) return parts;
    s = s.substr(at + 1);
  }
}

std::vector<std::string_view> words(std::string_view s) {
  std::vector<std::string_view> out;
  for (std::string_view w : split(s, ' '))
    if (!w.empty()) out.push_back(w);
  return out;
}

bool parse_int(std::string_view s, int64_t &v) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return !s.empty() && ec == std::errc() && end == s.data() + s.size();
}

// "*", "7", "17-48", "65-", "-2048".
bool parse_range(std::string_view s, Range &r) {
  r = Range{};
  if (s == "*") return true;
  const size_t dash = s.find('-');
  if (dash == std::string_view::npos) {
    if (!parse_int(s, r.low)) return false;
    r.high = r.low;
    return true;
  }
  const std::string_view lo = s.substr(0, dash), hi = s.substr(dash + 1);
  if (lo.empty() && hi.empty()) return false;
  if (!lo.empty() && !parse_int(lo, r.low)) return false;
  if (!hi.empty() && !parse_int(hi, r.high)) return false;
  return r.low <= r.high;
}

bool weight_matches(std::string_view w, const Contract &c) {
  if (w == "*") return true;
  const bool fp8 = c.dtype_weight == DType::kFP8E4M3;
  if (w == "16bit") return !fp8;
  if (w == "fp8") return fp8;
  if (w == "fp8/block128") return fp8 && c.weight_scale == WeightScale::kBlock128;
  if (w == "fp8/per_channel") return fp8 && c.weight_scale == WeightScale::kPerChannel;
  return false;
}

bool catch_all(const TuningRow &r) {
  const Range any;
  auto open = [&](const Range &x) { return x.low == any.low && x.high == any.high; };
  return open(r.m) && open(r.n) && open(r.k) && r.weight == "*" && r.when.empty();
}

const RuleSpec *spec_of(std::string_view rule) {
  for (const RuleSpec &s : rule_specs())
    if (s.name == rule) return &s;
  return nullptr;
}

bool listed(const std::vector<std::string_view> &names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

StatusOr<TuningTable> TuningTable::parse(std::string_view name, std::string_view text) {
  TuningTable table;
  table.name_ = std::string(name);
  bool header = false;
  int line_no = 0;
  for (std::string_view line : split(text, '\n')) {
    ++line_no;
    auto fail = [&](const std::string &what) {
      return invalid_argument(fmt::format("tuning table {}.tsv line {}: {}", name, line_no, what));
    };
    if (line.empty() || line[0] == '#') continue;
    if (!header) {
      if (line != kHeader) return fail(fmt::format("the header must be '{}'", kHeader));
      header = true;
      continue;
    }
    const std::vector<std::string_view> col = split(line, '\t');
    if (col.size() != kColumns) return fail(fmt::format("{} columns, the header has {}", col.size(), kColumns));
    TuningRow row;
    row.rule = std::string(col[0]);
    const RuleSpec *spec = spec_of(row.rule);
    if (!spec) return fail(fmt::format("rule '{}' is unknown", row.rule));
    if (!parse_range(col[1], row.m)) return fail(fmt::format("m '{}' is not a range (*, 7, 17-48, 65-, -2048)", col[1]));
    if (!parse_range(col[2], row.n)) return fail(fmt::format("n '{}' is not a range (*, 7, 17-48, 65-, -2048)", col[2]));
    if (!parse_range(col[3], row.k)) return fail(fmt::format("k '{}' is not a range (*, 7, 17-48, 65-, -2048)", col[3]));
    row.weight = std::string(col[4]);
    if (row.weight != "*" && row.weight != "16bit" && row.weight != "fp8" && row.weight != "fp8/block128" &&
        row.weight != "fp8/per_channel")
      return fail(fmt::format("weight '{}': allowed are *, 16bit, fp8, fp8/block128, fp8/per_channel", row.weight));
    if (col[5] != "*")
      for (std::string_view w : words(col[5])) {
        Condition cond;
        if (w[0] == '!') {
          cond.zero = true;
          w.remove_prefix(1);
        }
        const size_t eq = w.find('=');
        cond.fact = std::string(w.substr(0, eq));
        if (eq == std::string_view::npos) cond.nonzero = !cond.zero;
        else if (cond.zero || !parse_range(w.substr(eq + 1), cond.range))
          return fail(fmt::format("condition '{}' is not name, !name or name=range", w));
        if (!listed(spec->facts, cond.fact))
          return fail(fmt::format("rule {} has no fact '{}' (its facts: {})", row.rule, cond.fact,
                                  fmt::join(spec->facts, ", ")));
        row.when.push_back(std::move(cond));
      }
    for (std::string_view item : words(col[6])) {
      const size_t eq = item.find('=');
      int64_t value = 0;
      if (eq == std::string_view::npos || !parse_int(item.substr(eq + 1), value))
        return fail(fmt::format("choice '{}' is not key=integer", item));
      const std::string_view key = item.substr(0, eq);
      if (!listed(spec->keys, key))
        return fail(fmt::format("rule {} has no key '{}' (its keys: {})", row.rule, key, fmt::join(spec->keys, ", ")));
      row.choice.values[std::string(key)] = value;
    }
    row.choice.source = fmt::format("{}.tsv:{}", name, line_no);
    row.at = std::string(col[7]);
    row.predicted_us = std::string(col[8]);
    row.measured_us = std::string(col[9]);
    row.record = std::string(col[10]);
    row.note = std::string(col[11]);
    table.rows_.push_back(std::move(row));
  }
  if (!header) return invalid_argument(fmt::format("tuning table {}.tsv: no header line", name));
  // A total rule must serve every contract: its last row catches all.
  for (const RuleSpec &s : rule_specs()) {
    const TuningRow *last = nullptr;
    for (const TuningRow &r : table.rows_)
      if (r.rule == s.name) last = &r;
    if (s.total && last && !catch_all(*last))
      return invalid_argument(fmt::format("tuning table {}.tsv: rule {} must end with a row for every contract "
                                          "(*, no condition): {}", name, s.name, last->choice.source));
  }
  return table;
}

const Choice *TuningTable::find(std::string_view rule, const Contract &c, const Facts &facts) const {
  for (const TuningRow &r : rows_) {
    if (r.rule != rule || !r.m.holds(c.m_max) || !r.n.holds(c.n) || !r.k.holds(c.k) || !weight_matches(r.weight, c))
      continue;
    bool holds = true;
    for (const Condition &cond : r.when) {
      const auto fact = facts.find(cond.fact);
      // A fact the planner does not supply here is false (a rule's rows
      // name only its declared facts).
      const int64_t v = fact == facts.end() ? 0 : fact->second(r.choice);
      holds = cond.nonzero ? v != 0 : cond.zero ? v == 0 : cond.range.holds(v);
      if (!holds) break;
    }
    if (holds) return &r.choice;
  }
  return nullptr;
}

const Choice &TuningTable::choose(std::string_view rule, const Contract &c, const Facts &facts) const {
  static const Choice kNone;
  const Choice *found = find(rule, c, facts);
  return found ? *found : kNone;
}

bool TuningTable::has_rule(std::string_view rule) const {
  return std::any_of(rows_.begin(), rows_.end(), [&](const TuningRow &r) { return r.rule == rule; });
}

StatusOr<const TuningTable *> tuning_table(Target t) {
  static std::mutex mu;
  static std::map<Target, std::unique_ptr<TuningTable>> parsed;
  std::lock_guard lock(mu);
  if (auto it = parsed.find(t); it != parsed.end()) return it->second.get();
  const std::string_view name = target_name(t);
  for (size_t i = 0; i < kEmbeddedTuningTableCount; ++i) {
    if (name != kEmbeddedTuningTables[i].name) continue;
    auto table = TuningTable::parse(name, kEmbeddedTuningTables[i].text);
    if (!table.ok()) return internal_error(table.status().message());
    auto &slot = parsed[t];
    slot = std::make_unique<TuningTable>(std::move(*table));
    return slot.get();
  }
  return internal_error(fmt::format("no tuning table for target {} (compiler/tuning/{}.tsv)", name, name));
}

}  // namespace gatejit::compiler
