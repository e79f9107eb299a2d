// GATEJIT_MMA_TUNING="rt=2,ksplit=4,budget=64": the development override of
// the planner's tuning tables, for sweeps (bench/mma_sweep.py). Parsed once
// per compile into one object that the planner reads and the compiler's
// fingerprint includes (it changes code: such kernels never share cache
// entries with normal ones).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace gatejit::compiler {

struct TuningOverride {
  std::string text;                                 // as given ("" for none)
  std::map<std::string, int64_t, std::less<>> keys;  // the items taken

  // "key=value" items separated by commas. Sizes take numbers > 0, the
  // switches (tiled, wgmma, tma, pending, attn, gwfirst, refill, prefetch,
  // persistent, oneround, drain, poll, tile128) also 0; other items are
  // ignored.
  static TuningOverride parse(std::string_view text);
  static TuningOverride from_env();  // GATEJIT_MMA_TUNING, or none

  bool has(std::string_view key) const { return keys.find(key) != keys.end(); }
  int64_t at(std::string_view key) const { return keys.find(key)->second; }
};

}  // namespace gatejit::compiler
