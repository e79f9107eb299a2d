// Every rule a tuning table may hold: the keys of its choice and the facts
// its rows' conditions may name (each planner computes them).
#include "plan/tuning_table.h"

namespace gatejit::compiler {

std::span<const RuleSpec> rule_specs() {
  static const RuleSpec kRules[] = {
      // form_choice.cpp: whether the mma serves a contract rather than the gemv.
      {"form", {"mma"}, {"wide_n", "thin_decode"}, true},
      // form_choice.cpp: gfx9's thin grid rows (M and K they serve, how many).
      {"thin_rows",
       {"most_rows", "most_k", "most_k_pinned", "pinned_k_multiple", "most_rows_past_k", "decode_from_m",
        "decode_min_k", "most_m"},
       {},
       false},
      // gemv.cpp: weight rows a wave, loads in flight, K split over waves.
      {"gemv", {"rows", "unroll", "ksplit", "weights_first"}, {"fill_rows"}, true},
      // streamed.cpp: the register-streamed mma's blocks and K split.
      {"streamed",
       {"rt", "ksplit", "mtiles", "vecs", "unroll", "budget", "splits_min", "unsplit", "thin"},
       {"thin_rows", "row_tiles_fit_cus", "blocks_fill_cus", "min_split_fits_a_round"},
       true},
      {"streamed_poll", {"poll"}, {}, true},
      {"streamed_weight_run", {"run_load"}, {}, true},
      // streamed.cpp: whether each wave finishes the outputs it sums (not the block, in pieces).
      {"streamed_epilogue", {"elements"}, {}, false},
      // tiled.cpp: the tiled form's block tile, where it applies at all.
      {"tiled_shape",
       {"bn", "bm", "bk", "stages", "stage_budget", "waves", "per_cu", "wgmma", "asked_only", "only_polled"},
       {"tiles_per_cu", "in_round", "half_round", "round_three_quarters", "m_fill_eighths", "round_splits",
        "split_round_fill_eighths", "split_rings", "streamed_split_exceeds_a_round", "tile128_allowed"},
       false},
      {"tiled_defaults", {"per_cu"}, {}, true},
      {"tiled_poll", {"rounds_max"}, {}, true},
      // The tail of a K split's last block besides the partials: registers,
      // and whether they grow with the block's waves (per 4).
      {"tiled_tail", {"registers", "per_four_waves"}, {}, true},
      {"tiled_persistent", {"persistent"}, {"tiles_exceed_a_round"}, true},
      // epilogue_placement.cpp: where the gemv's and the streamed mma's epilogue loads attn.
      {"attn_load", {"at"}, {"streamed", "unroll", "full_waves"}, true},
      {"attn_prefetch", {"prefetch"}, {"streamed", "m_dynamic", "fp8_out"}, true},
  };
  return kRules;
}

}  // namespace gatejit::compiler
