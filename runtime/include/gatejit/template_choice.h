// Which kernel template serves a contract, and why. Pure logic, shared by the
// compiler (what to generate) and the runtime (what to explain / fall back to).
#pragma once

#include <string>

#include "gatejit/contract.h"

namespace gatejit {

// The gemv template serves decode-sized M (up to 16); the mma template any M
// (grid y tiles M past one block's rows), on sm_90 and gfx950.
inline constexpr int64_t kGemvMaxM = 16;

// Whether `target` has the mma template's instruction (gfx942's MFMA shapes
// differ: no mma there).
bool mma_available(Target target);

// Whether `auto` picks mma over gemv for this target, M bound, N and weight
// type, and whether M is dynamic (the crossover, from measurements and, on
// gfx9, the model: docs/perf-notes.md).
bool mma_preferred(Target target, int64_t m_max, int64_t n, DType weight = DType::kBF16, bool m_dynamic = false);

// gfx9's thin grid rows (perf-notes v83-v84): the mma's grid rows, one
// matrix tile of columns a workgroup, that fill every CU, where at most
// kMostThinGridRows do and more than one is needed (0 otherwise, and on
// sm_90). The planner cuts a fixed M into that many grid rows; the loader
// takes the mma for them from kThinDecodeFromM.
// At most 4 (v86: N = 1024 at 4 grid rows predicts 4.35-4.91 µs at M =
// 16-32, every gate passing, against the split's 7.0 and the gemv's 4.47;
// from 6, at N <= 768, the in-flight gate fails).
inline constexpr int64_t kMostThinGridRows = 4;
inline constexpr int64_t kThinDecodeFromM = 15;
int64_t thin_grid_rows(Target target, int64_t n);

struct TemplateChoice {
  TemplateKind kind = TemplateKind::kGeneric;
  std::string reason;  // one sentence: why this template
  Contract contract;   // what gets compiled: for generic, the shape-free contract
};

// `c` must be normalised. A forced template that cannot serve the contract is
// an invalid_argument error; kAuto always succeeds.
StatusOr<TemplateChoice> choose_template(const Contract &c);

// The shape-agnostic contract of the generic kernel that can serve `c`.
Contract generic_contract_for(const Contract &c);

}  // namespace gatejit
