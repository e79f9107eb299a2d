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
bool mma_preferred(Target target, int64_t m_max, int64_t n, int64_t k, DType weight = DType::kBF16,
                   bool m_dynamic = false);

// gfx9's thin grid rows (perf-notes v83-v89): the mma's grid rows, one
// matrix tile of columns a workgroup, that fill every CU, where at most
// kMostThinGridRows do and more than one is needed, and K is one the thin
// rows serve (thin_rows_serve_k); 0 otherwise, and on sm_90. The planner
// cuts a fixed M of 15-32 into that many grid rows (past kThinMostK where
// each keeps at most kThinMostRowsPastK hidden rows), and M = 15-16 only
// where thin_decode says so (the loader then takes the mma
// for them; their grid rows are at most 8 rows).
// At most 4 (v86: N = 1024 at 4 grid rows predicts 4.35-4.91 µs at M =
// 16-32, every gate passing, against the split's 7.0 and the gemv's 4.47;
// from 6, at N <= 768, the in-flight gate fails).
inline constexpr int64_t kMostThinGridRows = 4;
// Up to K = 7168 a 16-wave workgroup's waves each take at most 7 K steps
// of 64, which LLVM unrolls whole with every step's loads in flight. Past
// it (v89) the plan pins the occupancy its grid needs (else LLVM unrolled
// the loop into 68-100 VGPRs, more than the 64 its placed waves allow:
// v87) and the loop keeps 2 steps a wave in flight. That needs an even
// number of whole steps a wave and no partial one: K a multiple of 2048
// (with an odd count UNROLL is 1, and a partial step adds a round trip:
// both failed the in-flight gate at N = 1280-1536, v89's review), and holds
// up to kThinMostKPinned (the range checked; N = 1024 failed the gate at
// K = 20480).
// A grid row then owns at most kThinMostRowsPastK hidden rows: with more,
// the weight in flight falls under the gate's bandwidth x latency (N =
// 1536 K = 8192 M = 32, 11 rows: 4.16 of 4.2 MB).
inline constexpr int64_t kThinMostK = 7168;
inline constexpr int64_t kThinMostKPinned = 16384;
inline constexpr int64_t kThinMostRowsPastK = 6;
bool thin_rows_serve_k(int64_t k);
// Whether `rows` grid rows of ceil(m / rows) hidden rows each are within
// kThinMostRowsPastK where K is past kThinMostK (always true up to it): the
// one rule of the loader (thin_decode, m = 16) and the planner.
bool thin_rows_hold(int64_t k, int64_t m, int64_t rows);

int64_t thin_grid_rows(Target target, int64_t n, int64_t k);
// M = 15-16 (v84, v87, v99): the thin grid rows where the gemv is L2-bound
// in the model: K >= kThinDecodeMinK (N = 1024 K = 2048: the gemv 2.55 µs,
// the thin rows 2.68; at N = 2048 the rows would win there too, 3.04
// against 3.18: not taken) and the rows' grid one workgroup a CU (N = 1024
// and 2048 on gfx950; between them two workgroups share some CUs, and the
// rows' epilogue attn round trip puts the gemv ahead: N = 1536 5.73 against
// 5.93, N = 1792 6.42 against 6.54; above N = 2048 the gemv is HBM-bound and
// the two tie, N = 3072: 9.06 both).
inline constexpr int64_t kThinDecodeFromM = 15;
inline constexpr int64_t kThinDecodeMinK = 3072;
bool thin_decode(Target target, int64_t n, int64_t k);

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
