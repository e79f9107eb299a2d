// The static performance model: a kernel's time on its target's hardware,
// predicted from the plan (grid, tiles, splits, stages), the code object
// (loads in flight per wave from the replayed waits, round trips after the
// main loop, registers and workgroup memory) and the target table, as a
// range with the term that limits it. research/gfx950-model.md describes it and
// its calibration on the H200.
//
//   time = launch + latency x (1 + round trips after the loop)
//          + max(HBM bytes / bandwidth, L2 bytes / L2 bandwidth,
//                L2 bytes x latency / bytes in flight,  (Little's law)
//                products / matrix or vector rate,
//                q x (fragment bytes / workgroup memory bandwidth
//                     + products / matrix rate))        (tiled fragments)
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "code_facts.h"
#include "gatejit/contract.h"
#include "gatejit/target_info.h"
#include "plan_facts.h"

namespace gatejit::compiler {

struct ModelInput {
  const TargetInfo *target = nullptr;
  Contract contract;                 // with its shape (M, N, K), normalised
  PlanFacts plan;
  int64_t grid_blocks[3] = {1, 1, 1};  // the tiles: output columns, hidden rows, K splits
  // Workgroups launched: the tiles' count, or fewer for a persistent grid
  // (each loops over tiles); 0: one per tile.
  int64_t launched_workgroups = 0;
  int64_t block_threads = 0;
  int64_t registers_per_lane = 0;    // 0: not known (PTX: ptxas allocates)
  int64_t shared_bytes = 0;          // static + dynamic workgroup memory
  int64_t scratch_bytes = 0;
  CodeFacts code;
};

struct ModelTerm {
  std::string name;   // "hbm", "l2", "in_flight", "matrix", "vector", "shared_then_matrix"
  FactRange us;
};

struct Prediction {
  FactRange us;                      // fast-hardware end, slow-hardware end
  double point_us = 0;               // the table's middle figures
  std::string limiter;               // the largest term at the middle figures, or "latency chain"
  std::vector<ModelTerm> terms;
  FactRange serial_us;               // launch + fill + round trips after the loop
  FactRange ideal_read_us;           // launch + compulsory bytes / HBM read bandwidth
  // The facts the gates read.
  int64_t hbm_bytes = 0, l2_bytes = 0;
  int64_t workgroups = 0, resident_workgroups = 0;  // launched, and of them held at once
  int64_t tiles = 0;                 // work items (output tiles x K splits): a workgroup each, or a persistent grid's loop
  Occupancy occupancy;
  int64_t waves_per_simd_placed = 0;
  double bytes_in_flight = 0;        // GPU-wide, all loads
  double weight_bytes_in_flight = 0; // GPU-wide, the weight's share
  double bandwidth_latency_bytes = 0;// HBM read bandwidth x latency (middle figures)
  bool memory_bound = false;
};

Prediction predict(const ModelInput &in);

nlohmann::json prediction_json(const Prediction &p);

// The checks a plan must pass before it runs on the target (the gfx950
// issue's gates): each with its verdict and the figures behind it.
struct GateResult {
  std::string name;
  bool applies = true;
  bool passed = true;
  std::string detail;
};
std::vector<GateResult> plan_gates(const ModelInput &in, const Prediction &p);
nlohmann::json gates_json(const std::vector<GateResult> &gates);

}  // namespace gatejit::compiler
