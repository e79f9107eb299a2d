// GATEJIT_MMA_TUNING="rt=2,ksplit=4,budget=64": the development override of
// the planner's tuning tables, for sweeps (bench/mma_sweep.py). Parsed once
// per compile, strictly, into one typed object that the planner reads and
// the compiler's fingerprint includes (it changes code: such kernels never
// share cache entries with normal ones).
//
// Every key the planner reads is declared once, in tuning_keys() (its name,
// kind, allowed values and meaning; docs/runtime.md prints the same table).
// A value inside a key's range either builds or fails the compile with a
// Status; anything else (an unknown key, a value that is not a plain
// decimal number, one out of range, a key given twice, an item without '=')
// is refused at parse time, naming the key and what it takes.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "gatejit/status.h"

namespace gatejit::compiler {

struct TuningOverride;

enum class TuningKeyKind {
  kSize,    // a count: min..max in steps of `step`, or one of `only`
  kSwitch,  // 0 or 1 (off or on)
};

// One key of the override: its typed field and what it may hold.
struct TuningKey {
  std::string_view name;
  TuningKeyKind kind;
  int64_t min = 0, max = 1, step = 1;
  // The only values taken, where not every one of min..max is (empty: all).
  std::span<const int64_t> only;
  std::string_view meaning;
  // The field it fills: sizes are numbers, switches booleans.
  std::optional<int64_t> TuningOverride::*size = nullptr;
  std::optional<bool> TuningOverride::*flag = nullptr;
};

// Every key, by name.
std::span<const TuningKey> tuning_keys();
// What a key takes, as its errors and the docs say it: "1-8", "4 or 8",
// "8-256, multiples of 8", "0 or 1".
std::string allowed_values(const TuningKey &key);

struct TuningOverride {
  // gemv (templates/gemv.mlir)
  std::optional<int64_t> grows, gunroll, gksplit;
  std::optional<bool> gwfirst;
  // the register-streamed mma (templates/mma.mlir)
  std::optional<int64_t> rt, ksplit, budget, vecs, groups, mtiles, mstride, mrows, unroll, vw;
  std::optional<bool> gfx950_plan, elements;
  // the K split across workgroups (both mma forms)
  std::optional<int64_t> splits, round;
  std::optional<bool> poll, oneround;
  // the tiled mma (templates/mma_tiled.mlir)
  std::optional<bool> tiled, tile128, wgmma, tma, persistent, refill, drain;
  std::optional<int64_t> wg, pending, accs, bn, bm, bk, waves, warps_n, stages, bps;
  // the epilogue's attn load (gemv and mma)
  std::optional<int64_t> attn;
  std::optional<bool> prefetch;

  // The canonical text: the keys given, by name, "key=value" joined by
  // commas ("" for none). The fingerprint includes it.
  std::string text;
  // The same keys and values (switches as 0 or 1), by name: what the
  // planner reads through has() and at().
  std::map<std::string, int64_t, std::less<>> keys;

  // "key=value" items separated by commas; "" is no override.
  static StatusOr<TuningOverride> parse(std::string_view text);
  // GATEJIT_MMA_TUNING, or none where it is unset or empty.
  static StatusOr<TuningOverride> from_env();

  // The same override with only the keys named (those of them given): what
  // a part of the planner reads.
  TuningOverride subset(std::initializer_list<const char *> names) const;

  bool has(std::string_view key) const { return keys.find(key) != keys.end(); }
  int64_t at(std::string_view key) const { return keys.find(key)->second; }

 private:
  void set(const TuningKey &key, int64_t value);  // the field, `keys` and `text`
};

}  // namespace gatejit::compiler
