#include "tuning_override.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <vector>

namespace gatejit::compiler {
namespace {

using K = TuningKeyKind;
using O = TuningOverride;

constexpr int64_t kPowersOfTwoTo8[] = {1, 2, 4, 8};
constexpr int64_t kPieceWidths[] = {4, 8};
constexpr int64_t kWgmmaAccumulators[] = {1, 2, 4};
constexpr int64_t kStageDepths[] = {64, 128};

// The ranges are what the planner can build on some target (1024 threads a
// workgroup, 255 registers a lane on sm_90, the tables' own largest tiles);
// within them the planner fits a value to the contract as its rules say
// (halving a split the block or K cannot take, clamping to the K tiles),
// and the report's "tuning" says what was built. tuning_override_test.cpp
// compiles every key at both ends of its range.
constexpr TuningKey kKeys[] = {
    // gemv
    {"grows", K::kSize, 1, 8, 1, kPowersOfTwoTo8,
     "gemv: weight rows a wave owns (ROWS); ROWS x M accumulators stay in a lane's registers", &O::grows},
    {"gunroll", K::kSize, 1, 16, 1, {}, "gemv: 16-byte steps of a row in flight before their products (UNROLL)",
     &O::gunroll},
    {"gksplit", K::kSize, 1, 8, 1, {},
     "gemv: waves splitting a column group's K (KSPLIT; halved until it divides the steps and fits 1024 threads)",
     &O::gksplit},
    {"gwfirst", K::kSwitch, 0, 1, 1, {}, "gemv: a step group's weight loads before its hidden loads", nullptr,
     &O::gwfirst},
    // the register-streamed mma
    {"rt", K::kSize, 1, 4, 1, {},
     "mma: weight tiles a wave multiplies per hidden fragment (RT); RT x MT x 4 accumulators in a lane's registers",
     &O::rt},
    {"ksplit", K::kSize, 1, 32, 1, {},
     "mma: waves splitting a row tile's K (KSPLIT; halved until the partials and 1024 threads fit)", &O::ksplit},
    {"budget", K::kSize, 1, 512, 1, {}, "mma: registers a wave spends on steps in flight (caps UNROLL)", &O::budget},
    {"vecs", K::kSize, 1, 8, 1, {}, "mma: 16-byte vectors a lane loads per row and step (VECS)", &O::vecs},
    {"groups", K::kSize, 1, 32, 1, {},
     "mma: column groups a workgroup (GROUPS; halved until 1024 threads and the partials fit)", &O::groups},
    {"mtiles", K::kSize, 1, 8, 1, {}, "mma: 16-row hidden tiles a workgroup at most (MT)", &O::mtiles},
    {"mstride", K::kSize, 1, 128, 1, {}, "mma: hidden rows a grid row owns (M_STRIDE; at most 16 x MT)",
     &O::mstride},
    {"mrows", K::kSize, 1, 128, 1, {}, "mma: grid rows M is cut into (M_STRIDE = ceil(M / mrows))", &O::mrows},
    {"unroll", K::kSize, 1, 16, 1, {}, "mma: steps a wave keeps in flight at most (UNROLL)", &O::unroll},
    {"vw", K::kSize, 4, 8, 1, kPieceWidths, "mma: columns of an epilogue piece (VW), where the tiles allow it",
     &O::vw},
    {"gfx950_plan", K::kSwitch, 1, 1, 1, {},
     "sm_90: gfx950's plan in sm_90's tiles (the GPU suite's mirror); leave it out for sm_90's own", nullptr,
     &O::gfx950_plan},
    // the K split across workgroups (both mma forms)
    {"splits", K::kSize, 1, 32, 1, {}, "mma: workgroups splitting K (SPLITS, grid z; the tiled form: at most its K tiles)",
     &O::splits},
    {"round", K::kSize, 1, 32, 1, {}, "tiled mma: splits whose partials the last workgroup loads at once",
     &O::round},
    {"poll", K::kSwitch, 0, 1, 1, {}, "mma: the K split meets by poll (1) or by arrival (0)", nullptr, &O::poll},
    {"oneround", K::kSwitch, 0, 1, 1, {}, "tiled mma: every split's partials in one round where registers allow",
     nullptr, &O::oneround},
    // the tiled mma
    {"tiled", K::kSwitch, 0, 1, 1, {}, "mma: the tiled form (1) or the register-streamed one (0)", nullptr, &O::tiled},
    {"tile128", K::kSwitch, 0, 1, 1, {}, "gfx950 tiled mma: its 128 x 128 tiles where they apply", nullptr,
     &O::tile128},
    {"wgmma", K::kSwitch, 0, 1, 1, {}, "sm_90 tiled mma: warpgroup MMA (1) or mma.sync fragments (0)", nullptr,
     &O::wgmma},
    {"tma", K::kSwitch, 0, 1, 1, {}, "sm_90 wgmma: stages copied by the tensor memory accelerator", nullptr, &O::tma},
    {"persistent", K::kSwitch, 0, 1, 1, {}, "tiled mma: a persistent grid looping over the tiles", nullptr,
     &O::persistent},
    {"refill", K::kSwitch, 0, 1, 1, {}, "tiled mma: every stage slot refilled each tile, past the end too", nullptr,
     &O::refill},
    {"drain", K::kSwitch, 0, 1, 1, {}, "tiled mma: the last ring peeled, nothing in flight after the K loop", nullptr,
     &O::drain},
    {"wg", K::kSize, 1, 2, 1, {}, "sm_90 wgmma: warpgroups a workgroup (64 hidden rows each)", &O::wg},
    {"pending", K::kSize, 0, 1, 1, {}, "sm_90 TMA: wgmma groups left running after a stage's products", &O::pending},
    {"accs", K::kSize, 1, 4, 1, kWgmmaAccumulators, "sm_90 wgmma: accumulators the K steps of a stage take in turn",
     &O::accs},
    {"bn", K::kSize, 8, 256, 8, {}, "tiled mma: weight rows a tile (BN; a shape the target cannot take keeps the table's)",
     &O::bn},
    {"bm", K::kSize, 16, 256, 16, {}, "tiled mma, fragments: hidden rows a tile (BM)", &O::bm},
    {"bk", K::kSize, 64, 128, 1, kStageDepths, "tiled mma: K a stage (BK; 128 where K is a multiple of 128)", &O::bk},
    {"waves", K::kSize, 1, 32, 1, {}, "tiled mma, fragments: waves a workgroup", &O::waves},
    {"warps_n", K::kSize, 1, 32, 1, {}, "tiled mma: waves side by side along the weight rows (WARPS_N)",
     &O::warps_n},
    {"stages", K::kSize, 2, 16, 1, {}, "tiled mma: stages in workgroup memory (fitted to what the workgroups hold)",
     &O::stages},
    {"bps", K::kSize, 1, 16, 1, {}, "tiled mma: workgroups a CU the K split counts on (fitted to memory and threads)",
     &O::bps},
    // the epilogue's attn load
    {"attn", K::kSize, 0, 2, 1, {}, "gemv and mma: attn loaded in the epilogue (0), after the K loop (1) or before it (2)",
     &O::attn},
    {"prefetch", K::kSwitch, 0, 1, 1, {}, "sm_90 mma: attn's lines asked into L2 at the kernel's start", nullptr,
     &O::prefetch},
    {"elements", K::kSwitch, 0, 1, 1, {},
     "mma: each wave finishes the outputs it sums (1) or the block finishes them in pieces (0); unsplit, 16-bit "
     "weights, an out in attn's dtype",
     nullptr, &O::elements},
};

const TuningKey *find_key(std::string_view name) {
  for (const TuningKey &k : kKeys)
    if (k.name == name) return &k;
  return nullptr;
}

bool allowed(const TuningKey &k, int64_t v) {
  if (!k.only.empty()) return std::find(k.only.begin(), k.only.end(), v) != k.only.end();
  return v >= k.min && v <= k.max && (v - k.min) % k.step == 0;
}

// Input echoed in a message: printable, and short.
std::string shown(std::string_view s) {
  constexpr size_t kMost = 40;
  std::string out;
  for (char ch : s.substr(0, kMost)) out += ch >= 0x20 && ch < 0x7f ? ch : '?';
  if (s.size() > kMost) out += "...";
  return out;
}

Status refused(std::string_view what, const TuningKey &k) {
  return invalid_argument(
      fmt::format("GATEJIT_MMA_TUNING: {}: {} takes {} ({})", what, k.name, allowed_values(k), k.meaning));
}

std::string key_names() {
  std::vector<std::string_view> names;
  for (const TuningKey &k : kKeys) names.push_back(k.name);
  std::sort(names.begin(), names.end());
  return fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace

std::span<const TuningKey> tuning_keys() { return kKeys; }

std::string allowed_values(const TuningKey &k) {
  if (!k.only.empty()) {
    std::string out;
    for (size_t i = 0; i < k.only.size(); ++i)
      out += fmt::format("{}{}", i == 0 ? "" : i + 1 == k.only.size() ? " or " : ", ", k.only[i]);
    return out;
  }
  if (k.min == k.max) return fmt::format("{}", k.min);
  if (k.max == k.min + k.step) return fmt::format("{} or {}", k.min, k.max);
  if (k.step > 1) return fmt::format("{}-{}, multiples of {}", k.min, k.max, k.step);
  return fmt::format("{}-{}", k.min, k.max);
}

StatusOr<TuningOverride> TuningOverride::parse(std::string_view text) {
  TuningOverride o;
  if (text.empty()) return o;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string_view item = text.substr(start, comma == std::string_view::npos ? text.npos : comma - start);
    const size_t eq = item.find('=');
    const std::string_view name = item.substr(0, eq);
    const TuningKey *key = find_key(name);
    if (!key) {
      if (item.empty())
        return invalid_argument(fmt::format("GATEJIT_MMA_TUNING: an empty item at character {} (items are "
                                            "key=value, separated by commas)", start + 1));
      return invalid_argument(fmt::format("GATEJIT_MMA_TUNING: unknown key '{}' (the keys: {})", shown(name),
                                          key_names()));
    }
    if (eq == std::string_view::npos) return refused(fmt::format("'{}' has no '=value'", key->name), *key);
    if (o.keys.count(key->name)) return refused(fmt::format("{} is given twice", key->name), *key);
    const std::string_view digits = item.substr(eq + 1);
    int64_t value = 0;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    const bool decimal = !digits.empty() && std::all_of(digits.begin(), digits.end(), [](char ch) {
      return ch >= '0' && ch <= '9';
    });
    if (!decimal) return refused(fmt::format("{}='{}' is not a decimal number", key->name, shown(digits)), *key);
    if (error != std::errc() || end != digits.data() + digits.size() || !allowed(*key, value))
      return refused(fmt::format("{}={} is out of range", key->name, shown(digits)), *key);
    o.set(*key, value);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return o;
}

void TuningOverride::set(const TuningKey &key, int64_t value) {
  if (key.size) this->*(key.size) = value;
  else this->*(key.flag) = value != 0;
  keys.emplace(std::string(key.name), value);
  text.clear();
  for (const auto &[name, v] : keys) text += fmt::format("{}{}={}", text.empty() ? "" : ",", name, v);
}

TuningOverride TuningOverride::subset(std::initializer_list<const char *> names) const {
  TuningOverride o;
  for (const char *name : names)
    if (const TuningKey *key = find_key(name); key && has(name)) o.set(*key, at(name));
  return o;
}

StatusOr<TuningOverride> TuningOverride::from_env() {
  const char *env = std::getenv("GATEJIT_MMA_TUNING");
  return parse(env ? env : "");
}

}  // namespace gatejit::compiler
