// What a code object's instructions say about how the kernel moves memory,
// read by replaying its waits: the main loop's loads and round trips per
// iteration, the loads in flight when a wave stalls, the round trips after
// the loop (epilogue, K-split reduction) and the width of every global
// access. The performance model (perf_model.h) and the gfx950 gates read it.
//
// hsaco: the loop is the backward branch whose body holds the most 16-byte
// global loads; `s_waitcnt vmcnt(N)` retires all but the N newest memory
// operations (gfx9 counts loads and stores in one counter, in order).
// PTX: the loop is the backward `bra` with the most 16-byte `ld.global`s;
// a load is waited for where an instruction first reads its registers (the
// scoreboard), which retires it and every older load (they return about in
// order); cp.async groups are retired by `cp.async.wait_group`. PTX is not
// what runs (ptxas schedules again), so its figures are the program order's.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>

#include "gatejit/status.h"

namespace gatejit::compiler {

struct CodeFacts {
  std::string format;                 // "hsaco" | "ptx"
  bool loop_found = false;            // false: straight-line code (K fully unrolled)
  int64_t loop_instructions = 0;      // the main region's instructions
  // Per iteration of the steady state (a pipelined loop waits a whole
  // round trip once every few iterations: fractions).
  double loop_global_loads = 0;       // loads from global memory
  double loop_load_bytes = 0;         // per lane
  double loop_round_trips = 0;        // waits that needed a load issued since the last round trip
  double loop_single_load_waits = 0;  // of them, waits with exactly one load outstanding
  double loop_async_copies = 0;       // global -> workgroup memory copies (global_load_lds, cp.async, TMA)
  bool tensor_memory_copies = false;  // TMA (cp.async.bulk.tensor): one thread copies for the block
  int64_t max_loads_in_flight = 0;    // per lane, steady state
  double bytes_in_flight_at_wait = 0; // per lane: load bytes outstanding when a wave waits, mean
  int64_t tail_round_trips = 0;       // after the main region: waits that retire memory operations
  int64_t narrow_global_loads = 0;    // whole kernel: global loads under 4 bytes
  int64_t narrow_global_stores = 0;   // whole kernel: global stores under 4 bytes
  int64_t wide_global_stores = 0;     // whole kernel: global stores of 8 or 16 bytes
};

// `cpu` names the AMDGPU processor of an hsaco ("gfx950"); unused for PTX.
StatusOr<CodeFacts> read_code_facts(std::span<const uint8_t> bytes, const std::string &cpu);

nlohmann::json code_facts_json(const CodeFacts &facts);

}  // namespace gatejit::compiler
