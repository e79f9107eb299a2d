#include "kernel_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "gatejit/target_info.h"
#include "gatejit/template_choice.h"

namespace gatejit::compiler {
namespace {

const char *mlir_type(DType d) {
  switch (d) {
    case DType::kBF16: return "bf16";
    case DType::kF16: return "f16";
    case DType::kF32: return "f32";
    case DType::kFP8E4M3: return "i8";  // the storage byte; the weight snippets decode it
  }
  return "?";
}

// How the weight snippets receive an fp8 weight's scales (templates/gemv.mlir
// and generic.mlir document the parameters): the kernel's last argument,
// passed on with the number of 128-wide K blocks. Empty for 16-bit weights,
// whose kernels keep the classic argument list.
// `scale_extent`: the scale buffer's elements as the kernel declares them
// (the contract's count, or the generic kernel's nominal span: its key has
// no shape).
void set_weight_params(TemplateParams &P, const Contract &c, const std::string &scale_extent) {
  P["T_WEIGHT"] = mlir_type(c.dtype_weight);
  const bool scaled = c.weight_scale != WeightScale::kNone;
  const std::string memref = fmt::format("memref<{}xf32, #gpu.address_space<global>>", scale_extent);
  if (scaled) P["S_SIZE"] = scale_extent;
  P["KERNEL_SCALE_PARAM"] = scaled ? ", %weight_scale: " + memref : "";
  P["SCALE_PARAM"] = scaled ? ", %weight_scale: " + memref + ", %scale_kb: index" : "";
  P["SCALE_ARG"] = scaled ? ", %weight_scale, %scale_kb" : "";
  P["SCALE_TYPE"] = scaled ? ", " + memref + ", index" : "";
}

// The weight parameters of the forms that stream a shaped contract's weight
// (gemv, mma): the scale buffer at the contract's count, the number of
// 128-wide K blocks of a block-scaled weight, and a zero of the weight's
// storage type.
void set_streamed_weight_params(TemplateParams &P, const Contract &c) {
  set_weight_params(P, c, fmt::format("{}", std::max<int64_t>(1, weight_scale_count(c))));
  P["SCALE_KB"] = fmt::format("{}", scale_blocks(c.k));
  P["W_ZERO"] = c.dtype_weight == DType::kFP8E4M3 ? "0" : "0.0";
}

// The out's epilogue entry points (templates/finish_piece_*.mlir,
// out_groups_*.mlir, finish_element_*.mlir): an out in attn's dtype stores
// each output; an fp8 out stages them and quantises each group of 128
// columns once it is complete. `block_cols` x `row_block`: the outputs a
// workgroup of the shaped forms finishes (block_cols divides 128);
// `threads`: its size. The scales are the kernel's last argument.
void set_out_params(KernelPlan &p, const std::string &scale_extent, int64_t block_cols, int64_t row_block,
                    int64_t threads) {
  const Contract &c = p.contract;
  auto &P = p.params;
  const bool fp8 = c.fp8_out();
  const std::string memref = fmt::format("memref<{}xf32, #gpu.address_space<global>>", scale_extent);
  P["T_OUT"] = fp8 ? "i8" : mlir_type(c.dtype());
  P["KERNEL_OUT_SCALE_PARAM"] = fp8 ? ", %out_scale: " + memref : "";
  P["OUT_SCALE_ARG"] = fp8 ? ", %out_scale" : "";
  P["OUT_SCALE_TYPE"] = fp8 ? ", " + memref : "";
  if (p.kind == TemplateKind::kGeneric) {
    p.snippets.push_back(fp8 ? "finish_element_group" : "finish_element_store");
    if (fp8) {
      const int64_t wave = target_wave_size(c.target);
      P["WAVE"] = fmt::format("{}", wave);
      P["BLOCK_WAVES"] = fmt::format("{}", threads / wave);
      P["GROUP_WAVES"] = fmt::format("{}", kOutGroup / wave);
    }
  } else {
    p.snippets.push_back(fp8 ? "finish_piece_stage" : "finish_piece_store");
    p.snippets.push_back(fp8 ? "out_groups_quantise" : "out_groups_none");
  }
  if (fp8 && p.kind != TemplateKind::kGeneric) {
    P["OS_SIZE"] = scale_extent;
    P["DEVICE_SCOPE"] = target_is_amdgpu(c.target) ? "agent" : "device";
    const int64_t row_blocks = (c.m_max + row_block - 1) / row_block;
    P["STAGE_SIZE"] = fmt::format("{}", c.m_max * c.n);
    P["BANDS"] = fmt::format("{}", c.n / kOutGroup);
    P["OUT_BLOCK_COLS"] = fmt::format("{}", block_cols);
    P["OUT_ROW_BLOCK"] = fmt::format("{}", row_block);
    P["GROUP_COUNTERS"] = fmt::format("{}", std::max<int64_t>(1, row_blocks * (c.n / kOutGroup)));
    // The band's quantisation: a row OUT_ROW_LANES lanes of OUT_VEC
    // values, every row of the block's band read at once. 4 values a lane
    // (32 lanes a row) where one pass holds the block's rows: fewer values a
    // lane, a shorter quantisation (v66 measured 16 lanes of 8 at M <= 16
    // up to 7% slower); else 8 (16 bytes, 16 lanes a row: more rows a pass).
    const int64_t vec = row_block * (kOutGroup / 4) <= threads ? 4 : 16 / dtype_bytes(c.dtype());
    const int64_t row_lanes = kOutGroup / vec;
    const int64_t pass_rows = threads / row_lanes;
    P["OUT_VEC"] = fmt::format("{}", vec);
    P["OUT_VEC_BYTES"] = fmt::format("{}", vec * dtype_bytes(c.dtype()));
    P["OUT_ROW_LANES"] = fmt::format("{}", row_lanes);
    P["OUT_PASS_ROWS"] = fmt::format("{}", pass_rows);
    P["OUT_PASSES"] = fmt::format("{}", (row_block + pass_rows - 1) / pass_rows);
    // Whole stores need every row's codes on OUT_VEC bytes: ld_out a
    // multiple of it, or a single row (M = 1, whose stride never applies).
    P["OUT_LDO_WIDE"] = c.m_max == 1 || c.ld_out % vec == 0 ? "true" : "false";
  }
  if (fp8) p.snippets.push_back("encode_e4m3");
}

// The target's exact e4m3 conversion (@decode_e4m3x4).
const char *decode_e4m3_snippet(Target t) { return target_is_amdgpu(t) ? "decode_e4m3_gfx950" : "decode_e4m3_sm90"; }

// The snippets that read the weight: as it is (16-bit), or e4m3 decoded by
// the target's conversion and multiplied by the scale @scale_index finds.
std::vector<std::string> weight_snippets(const Contract &c, const char *element_snippet) {
  const std::string base = element_snippet;
  if (c.weight_scale == WeightScale::kNone) return {base + "_plain"};
  return {base + "_e4m3", c.weight_scale == WeightScale::kPerChannel ? "scale_index_per_channel" : "scale_index_block128",
          decode_e4m3_snippet(c.target)};
}

// Column groups per workgroup for gemv: 4 (4 waves of 64 = the seed kernel's
// 256 threads on gfx9xx; 4 warps of 32 on sm_90, where smaller blocks spread a
// small N more evenly over the 132 SMs: v4 in docs/perf-notes.md).
constexpr int64_t kGemvGroupsPerBlock = 4;

// The gemv tuning table (docs/perf-notes.md has the measurements behind it).
// ROWS: weight rows per wave; every hidden vector loaded serves ROWS rows, so
// L1 traffic per weight byte falls from (1 + M) to (1 + M / ROWS) vectors.
// UNROLL: 16-byte loads per row in flight before their FMAs.
struct GemvTuning {
  int64_t rows, unroll, ksplit = 1;
};
// KSPLIT: waves that split one group's K range (partials combined through
// workgroup memory). Fewer rows for small N, to fill the grid, was measured
// worse (v2 in docs/perf-notes.md).
// gfx9xx gemv, M = 3-16: the fewest rows per wave that still give about two
// workgroups of 4 waves per CU, N / (8 x CUs) as a power of 2 in 1-4.
int64_t amd_gemv_rows(int64_t n, Target target) {
  const int64_t cus = target_info(target).compute_units;
  int64_t rows = 1;
  while (rows < 4 && n > rows * kGemvGroupsPerBlock * 2 * cus) rows *= 2;
  return rows;
}

GemvTuning gemv_tuning(int64_t m_max, int64_t n, Target target, int64_t weight_bytes) {
  // sm_90, M = 1, small N: 4 warps per row (v5: 9.2 -> 8.8 us at N = 1536;
  // slower at N = 3072 and 12288, where N warps already fill the GPU).
  // gfx9xx keeps the seed's one wave per row and no LDS (unmeasured there).
  if (m_max == 1 && n <= 2048 && target == Target::kSm90) return {1, 8, 4};
  if (m_max == 1) return {1, 8};
  // sm_90, fp8 weights above M = 1 (v55, first measured in the run that
  // introduced them): a row has half the 16-byte steps of a bf16 row and
  // each byte twice the arithmetic. One or two rows a wave and two waves a
  // row keep 1536 or more warps at N = 1536; the bf16 rows below launch 384
  // (4 rows a wave above M = 4). Up to M = 8 every step of a wave's half row
  // is in flight (v56, measured in one sweep, block128: M = 2 7.72 -> 7.06 µs,
  // M = 4 16.2 -> 10.8, M = 8 19.9 -> 18.7; at M = 16 UNROLL 7 took 36.6
  // against 33.0). KSPLIT 7 was 1.2-14x slower at every M.
  if (target == Target::kSm90 && weight_bytes == 1) return {m_max <= 4 ? 1 : 2, m_max <= 8 ? 8 : 2, 2};
  // gfx9xx, fp8 weights above M = 1 (v55, the model's choice): a step
  // carries half the weight bytes and each hidden row 32, so fewer rows a
  // wave than the bf16 table (at most 2; half the table's up to M = 4) and
  // more steps in flight: a one-row wave holds every step of its row up to
  // M = 4 (N = 1536 block128 predicted M = 4 4.78 -> 3.82 µs, M = 16 5.89 ->
  // 5.32; N = 12288 M = 16 31.9 -> 19.2).
  if (target_is_amdgpu(target) && weight_bytes == 1) {
    const int64_t rows = amd_gemv_rows(n, target);
    const int64_t fp8_rows = std::clamp<int64_t>(m_max <= 4 ? rows / 2 : rows, 1, 2);
    return {fp8_rows, fp8_rows == 1 && m_max <= 4 ? 8 : 4};
  }
  if (m_max <= 2) return {1, 4};  // UNROLL 8 measured slower at M = 2 (v4)
  if (target_is_amdgpu(target)) {
    // gfx9xx, M = 3-16 (v40, the model's choice: no AMD GPU to time it): the
    // fewest rows per wave that still give about two workgroups of 4 waves
    // per CU, N / (8 x CUs) as a power of 2 in 1-4 (N = 1536: 1, 3072: 2,
    // 12288: 4), scheduled for the waves that places (v38). UNROLL 2, but 1
    // with 4 rows up to M = 8 (LLVM then chained the loads: 41 against 32 µs
    // predicted at N = 12288, M = 8).
    // One row a wave at M = 4 takes UNROLL 3 (v54): with 2 LLVM kept 10
    // loads in flight (3.8 MB GPU-wide, under bandwidth x latency), with 3 it
    // keeps 26 (N = 1536: 5.65 -> 5.31 µs predicted, the in-flight gate
    // passes). At M = 3 and 5-16 UNROLL 3 predicted the same or slower.
    const int64_t rows = amd_gemv_rows(n, target);
    if (rows == 1 && m_max == 4) return {1, 3};
    return {rows, rows == 4 && m_max <= 8 ? 1 : 2};
  }
  if (m_max <= 4) return {2, 2};
  return {4, 1};
}
constexpr int kGenericBlock = 256;

// The problem as the specialised templates (gemv, mma) see it: sizes, leading
// dimensions and each buffer's extent in elements.
void plan_problem(KernelPlan &p) {
  const Contract &c = p.contract;
  auto set = [&](const char *name, int64_t v) { p.params[name] = fmt::format("{}", v); };
  set("M_MAX", c.m_max);
  set("N", c.n);
  set("N_LAST", c.n - 1);
  if (p.kind != TemplateKind::kGemv) set("K", c.k);  // gemv counts K in vectors (KVECS)
  set("LDH", c.ld_hidden);
  set("LDW", c.ld_weight);
  set("LDA", c.ld_attn);
  set("LDO", c.ld_out);
  set("H_SIZE", (c.m_max - 1) * c.ld_hidden + c.k);
  set("W_SIZE", (c.n - 1) * c.ld_weight + c.k);
  set("A_SIZE", (c.m_max - 1) * c.ld_attn + c.n);
  set("O_SIZE", (c.m_max - 1) * c.ld_out + c.n);
}

// The products of gemv: gfx950's packed dot instructions take the 16-bit pair
// as it is (v_dot2c_f32_bf16 / v_dot2_f32_f16, fp32 accumulate); elsewhere
// two fp32 FMAs. (gfx942 keeps FMAs: its bf16 dot is not the same instruction.)
std::string dot2_snippet(const Contract &c) {
  if (c.dtype_weight == DType::kFP8E4M3) return "dot2_f32_fma";  // decoded fp32 weights, 16-bit hidden
  if (c.target == Target::kGfx950) return c.dtype_weight == DType::kBF16 ? "dot2_amdgcn_bf16" : "dot2_amdgcn_f16";
  return "dot2_fma";
}

// What templates/epilogue_pieces.mlir needs: the piece width and whether
// the strides keep every row's pieces aligned (M = 1 has no second row).
void set_piece_params(TemplateParams &P, const Contract &c, int64_t vw) {
  const int64_t eb = dtype_bytes(c.dtype());  // the piece's attn load (and out store, but for an fp8 out)
  P["VW"] = fmt::format("{}", vw);
  P["VW_BYTES"] = fmt::format("{}", vw * eb);
  P["VW_ELEMENT_BYTES"] = fmt::format("{}", eb);
  P["VW_BYTES_MASK"] = fmt::format("{}", vw * eb - 1);
  P["WIDE_STRIDES"] = c.m_max == 1 || (c.ld_attn % vw == 0 && c.ld_out % vw == 0) ? "true" : "false";
  P["WIDE_PATH"] = target_info(c.target).unaligned_global_vectors ? "false" : "true";
  P["PIECES_WHOLE"] = c.n % vw == 0 ? "true" : "false";
}

// The target's @prefetch_l2 (ATTN_PREFETCH): PTX's L2 prefetch on sm_90;
// nothing on gfx9 (no plan there asks for it: plan_attn_load).
const char *prefetch_snippet(Target t) { return t == Target::kSm90 ? "prefetch_l2_sm90" : "prefetch_l2_none"; }

void plan_gemv(KernelPlan &p) {
  const Contract &c = p.contract;
  const int64_t eb = dtype_bytes(c.dtype_weight);  // the 16-byte weight vectors (hidden: as many elements)
  const int64_t vec = 16 / eb;
  const int64_t wave = target_wave_size(c.target);
  const int64_t waves = kGemvGroupsPerBlock;
  const int64_t kvecs = c.k / vec;
  GemvTuning t = gemv_tuning(c.m_max, c.n, c.target, eb);
  // Sweep keys of the development override (tuning_override.h): grows,
  // gunroll, gksplit replace the table's ROWS, UNROLL and KSPLIT.
  const auto &o = p.tuning.keys;
  if (o.count("grows")) t.rows = o.at("grows");
  if (o.count("gunroll")) t.unroll = o.at("gunroll");
  if (o.count("gksplit")) t.ksplit = o.at("gksplit");
  // gfx9 fp8 (v55f, the model's choice): a group's weight loads all go out
  // before its first hidden load; LLVM otherwise put each step's 2 x M_MAX
  // hidden loads between them (N = 1536 M = 2: 3.55 -> 3.45 µs, the
  // in-flight gate passes; M = 4: 3.82 -> 3.75). bf16/f16 keep the per-step
  // order (unmeasured either way).
  bool weights_first = target_is_amdgpu(c.target) && eb == 1;
  if (o.count("gwfirst")) weights_first = o.at("gwfirst") != 0;
  const int64_t k_full_all = kvecs / wave;
  // Each wave takes whole steps: the largest split that divides them, halving
  // the table's (an fp8 row has half the 16-byte steps of a bf16 row), in a
  // block of at most 1024 threads (an override may ask for more; the loader
  // refuses a larger one).
  while (t.ksplit > 1 && (k_full_all % t.ksplit != 0 || waves * t.ksplit * wave > 1024)) t.ksplit /= 2;
  const int64_t k_full = k_full_all / t.ksplit;
  t.unroll = std::max<int64_t>(1, std::min(t.unroll, k_full));  // a group fits in a wave's range
  const int64_t k_groups = k_full / t.unroll;
  auto &P = p.params;
  P["ROWS"] = fmt::format("{}", t.rows);
  P["KSPLIT"] = fmt::format("{}", t.ksplit);
  P["GROUP_WEIGHTS_FIRST"] = weights_first ? "true" : "false";
  P["K_FULL_ALL"] = fmt::format("{}", k_full_all);
  P["UNROLL"] = fmt::format("{}", t.unroll);
  // Up to 8 partial sums per accumulator, within 64 accumulator registers:
  // enough independent FMA chains to hide FMA latency at small M.
  const int64_t acc = t.rows * c.m_max;
  const int64_t part = std::clamp<int64_t>(64 / acc, 1, vec / 2);
  P["PAIRS"] = fmt::format("{}", vec / 2);
  if (c.weight_scale != WeightScale::kNone) P["QUADS"] = fmt::format("{}", vec / 4);  // e4m3 decodes 4 at a time
  P["T_HIDDEN"] = mlir_type(c.dtype_hidden);
  P["T_DOT"] = c.dtype_weight == DType::kFP8E4M3 ? "f32" : mlir_type(c.dtype_weight);
  set_streamed_weight_params(P, c);
  P["ACC"] = fmt::format("{}", acc);
  P["OWN_SLOTS"] = fmt::format("{}", (acc + wave - 1) / wave);
  P["PART"] = fmt::format("{}", part);
  P["ACC_LEN"] = fmt::format("{}", acc * part);
  P["K_GROUPS"] = fmt::format("{}", k_groups);
  P["K_REM"] = fmt::format("{}", k_groups * t.unroll);
  P["WAVE"] = fmt::format("{}", wave);
  P["VEC"] = fmt::format("{}", vec);
  P["KVECS"] = fmt::format("{}", kvecs);
  P["K_FULL"] = fmt::format("{}", k_full);
  P["K_ITERS"] = fmt::format("{}", (kvecs + wave - 1) / wave);
  // Blocks of WAVES column groups, each group KSPLIT waves.
  const int64_t block_waves = waves * t.ksplit;
  P["WAVES"] = fmt::format("{}", block_waves);
  P["BLOCK"] = fmt::format("{}", wave * block_waves);
  if (t.ksplit > 1) P["PARTIALS"] = fmt::format("{}", block_waves * acc);  // combine_workgroup's
  // The epilogue's pieces: VW consecutive columns of one row of the
  // workgroup's WAVES x ROWS columns (16 bytes where the block is that wide).
  const int64_t block_cols = waves * t.rows;
  const int64_t vw = std::min<int64_t>(8, block_cols);
  set_piece_params(P, c, vw);
  const int64_t pieces = c.m_max * (block_cols / vw);
  P["BLOCK_COLS"] = fmt::format("{}", block_cols);
  P["ROW_PIECES"] = fmt::format("{}", block_cols / vw);
  P["PIECES"] = fmt::format("{}", pieces);
  P["PIECE_SLOTS"] = fmt::format("{}", (pieces + wave * block_waves - 1) / (wave * block_waves));
  P["SUMS"] = fmt::format("{}", c.m_max * block_cols);
  p.snippets = {dot2_snippet(c), t.ksplit > 1 ? "combine_workgroup" : "combine_none", "epilogue_pieces",
                prefetch_snippet(c.target)};
  for (std::string &name : weight_snippets(c, "weight_pairs")) p.snippets.push_back(std::move(name));
  set_out_params(p, fmt::format("{}", c.m_max * (c.n / kOutGroup)), block_cols, c.m_max, wave * block_waves);
  p.tuning_choices = {{"ROWS", t.rows}, {"UNROLL", t.unroll}, {"PART", part}, {"KSPLIT", t.ksplit}};
  p.geometry = {uint32_t(wave * block_waves), uint32_t(waves * t.rows), false};
  p.facts = {.form = "gemv", .weight_rows_per_block = waves * t.rows, .hidden_rows_per_block = c.m_max};
}

// The mma tuning table (docs/perf-notes.md, v8 on). The tile shapes come from
// the instruction: TILE_W weight rows per tile (mma.sync n8 on sm_90, MFMA n16
// on gfx950), 16 hidden rows per tile. One wave: RT weight tiles x MT hidden
// tiles, 1 / KSPLIT of the K steps.
// The fragment snippet's shape (mma_sm90 / mma_gfx950; the layouts are in
// compiler/src/mma_layout.cpp): TILE_W weight rows per tile, and per 16-row
// hidden tile H_LOADS 16-byte loads per lane, H_STRIDE rows apart.
struct FragmentShape {
  int64_t tile_w, h_loads, h_stride;
};
FragmentShape fragment_shape(Target t) {
  // TILE_W is the instruction's n (the target table's matrix instruction);
  // the hidden loads follow the fragment snippet's layout.
  const int64_t tile_w = target_info(t).matrix.n;
  if (target_is_amdgpu(t)) return {tile_w, 1, 16};  // MFMA 16x16x32: lane l, row l % 16 of both
  return {tile_w, 2, 8};                            // mma.sync m16n8k16: weight row g, hidden rows g, g + 8
}

struct MmaTuning {
  FragmentShape frag;
  int64_t rt = 1, ksplit = 1, unroll = 1;          // unroll: the cap before the divisor rule
  int64_t vecs = 1;  // 16-byte vectors per lane and row in one step (K run of 16 * vecs bytes)
  int64_t groups = 1;  // column groups per block: their warps with the same K slice share hidden loads in L1
  int64_t max_mt = 8;  // hidden tiles per block at most (16 rows each); grid y tiles the rest of M
  int64_t mt = 1;      // hidden tiles per block: min(ceil(M_MAX / 16), max_mt)
  // Hidden rows a grid row owns (the rest of its MT x 16-row tiles are
  // clamped copies, never stored); 0: all 16 MT (v83).
  int64_t m_stride = 0;
  int64_t splits = 1;  // K split across workgroups (grid z), meeting in a workspace
  bool poll = false;   // the split's meeting by poll, not by arrival (split_poll.mlir)
  bool grid_resident = false;  // KernelPlan::grid_resident (the unsplit rows)
};
constexpr int64_t kMmaInstrK = 32;  // K per vector column: two m16n8k16, or one 16x16x32

// The mma epilogue's piece: VW consecutive columns of one row, at most 8
// (16 bytes of a 16-bit out), within a column group's weight rows.
int64_t mma_piece_width(const MmaTuning &t) { return std::min<int64_t>(8, t.rt * t.frag.tile_w); }

// With a K split the last block loads each of its pieces' partials from
// every split at once: SPLITS x VW fp32 registers. Where that is more than
// half of what a lane holds at the waves the grid places, the piece is
// halved, down to 4 columns (8 bytes of a 16-bit out, still no access under
// 4 bytes). v81: gfx950 at M = 17-32 and 96 (7 splits of 8-column pieces:
// 56 of its 64 registers at 8 waves a SIMD) issued the attn load and the
// last partials after the first wait, a second round trip in the tail; with
// 4 columns all go out together (8.23 -> 7.65 µs predicted at M = 17).
constexpr int64_t kMinSplitPieceWidth = 4;
// The registers a lane holds at the waves a grid of `workgroups` places.
int64_t lane_registers_placed(Target target, int64_t workgroups, int64_t block) {
  const TargetInfo &info = target_info(target);
  const int64_t waves = std::max<int64_t>(1, waves_per_simd_placed(info, workgroups, block));
  return std::min<int64_t>(info.registers_per_lane, info.registers_per_simd / (waves * info.wave_size));
}
int64_t split_piece_width(const Contract &c, const MmaTuning &t, int64_t workgroups, int64_t block) {
  int64_t vw = mma_piece_width(t);
  if (t.splits <= 1) return vw;
  const int64_t lane_registers = lane_registers_placed(c.target, workgroups, block);
  while (vw > kMinSplitPieceWidth && t.splits * vw > lane_registers / 2) vw /= 2;
  return vw;
}

// The development override (tuning_override.h) of the mma tables below.
// `attn` (0 in the epilogue, 1 after the main loop, 2 before it:
// plan_attn_load) applies to gemv too, and the gemv has its own keys:
// `grows`, `gunroll`, `gksplit` (its table's ROWS, UNROLL, KSPLIT) and
// `gwfirst` (GROUP_WEIGHTS_FIRST).
using TuningKeys = std::map<std::string, int64_t, std::less<>>;
void apply_tuning_override(const TuningKeys &o, MmaTuning &t, int64_t &budget) {
  for (const auto &[key, value] : o) {
    if (key == "rt") t.rt = value;
    else if (key == "ksplit") t.ksplit = value;
    else if (key == "budget") budget = value;
    else if (key == "vecs") t.vecs = value;
    else if (key == "groups") t.groups = value;
    else if (key == "mtiles") t.max_mt = value;
    else if (key == "splits") t.splits = value;
    else if (key == "unroll") t.unroll = value;
    else if (key == "mstride") t.m_stride = value;
  }
}

// gfx950 from M = 17 (v45, v48): K split across workgroups (grid z) where
// the row tiles alone leave CUs idle (48 workgroups for 256 CUs at N = 1536,
// M = 32), and at least `min_splits`: the fewest splits that cover every CU
// (or min_splits), or up to twice that where one of those divides the K
// steps evenly among all waves (no wave takes a partial share), else twice
// that (two workgroups a CU, what their workgroup memory allows), but no more
// than one round of the workgroups the GPU holds. At least one step per wave.
constexpr int64_t kAmdMidMinSplits = 4;  // gfx950 M = 17-256: at most 2 of 112 steps a wave at K = 7168
constexpr int64_t kAmdEightWaveMinSplits = 5;  // the 8-wave form above M = 64: at most 3 steps a wave (v53)
// Workgroups of `waves_per_group` waves the GPU holds at once, by waves
// alone (the plans these serve keep 64 VGPRs: the full wave count fits).
int64_t workgroups_held(const TargetInfo &ti, int64_t waves_per_group) {
  return ti.compute_units *
         std::max<int64_t>(1, ti.simds_per_cu * ti.max_waves_per_simd / std::max<int64_t>(1, waves_per_group));
}
// The register-streamed grid's blocks before a K split (grid x times grid y).
int64_t streamed_tiles(const Contract &c, const MmaTuning &t) {
  const int64_t n_per_block = t.groups * t.rt * t.frag.tile_w;
  return (c.n + n_per_block - 1) / n_per_block * ((c.m_max + t.m_stride - 1) / t.m_stride);
}
// The split grid fits one round of the workgroups the GPU holds.
bool split_fits_a_round(const Contract &c, const MmaTuning &t) {
  return streamed_tiles(c, t) * t.splits <= workgroups_held(target_info(c.target), t.groups * t.ksplit);
}
int64_t amd_k_splits(const Contract &c, const MmaTuning &t, int64_t cus, int64_t min_splits) {
  const int64_t tiles = streamed_tiles(c, t);
  const int64_t steps = (c.k + kMmaInstrK * t.vecs - 1) / (kMmaInstrK * t.vecs);
  const int64_t most = std::max<int64_t>(1, steps / t.ksplit);
  const int64_t cover = (cus + tiles - 1) / tiles;  // splits that cover every CU
  const int64_t fewest = std::min(std::max(cover, min_splits), most);
  if (fewest <= 1) return 1;
  // (v67 capped this at the partials the last workgroup reads at once,
  // 7 -> 6 splits at N = 1536 M = 17-32, from the model alone; the same
  // template on the H200 measured 6 splits 24% slower than 7 at M = 17,
  // which the model predicted equal: reverted, perf-notes v68.)
  int64_t splits = cover > min_splits ? std::min(2 * fewest, most) : fewest;
  for (int64_t s = fewest; s <= 2 * fewest && s <= most; ++s)
    if (steps % (t.ksplit * s) == 0) {
      splits = s;
      break;
    }
  // No more workgroups than the GPU holds at once, down to min_splits: each
  // round of workgroups past the first waits for its own meeting (v52; the
  // H200 measured 4.1 µs for three rounds against 1.6 for one). gfx950 N =
  // 1536: M = 64 7 -> 5 splits (9.67 -> 7.24 µs predicted), M = 128 7 -> 4.
  const int64_t held = workgroups_held(target_info(c.target), t.groups * t.ksplit);
  return std::max(std::min(splits, held / tiles), std::min(min_splits, splits));
}

// The contract as gfx950 plans it (gfx950_plan=1 mirrors those plans on sm_90).
Contract as_gfx950(Contract c) {
  c.target = Target::kGfx950;
  return c;
}

// v83-v84: the grid rows a fixed M of 15-32 (16-bit weights) is cut into
// where its 16-row blocks of one 16-column tile leave CUs idle
// (thin_grid_rows: 2-4 of them fill the CUs), or 0.
int64_t amd_thin_grid_rows(const Contract &c) {
  if (c.m_dynamic || c.dtype_weight == DType::kFP8E4M3 || c.m_max < kThinDecodeFromM || c.m_max > 32) return 0;
  if (c.m_max <= kGemvMaxM && !thin_decode(c.target, c.n, c.k)) return 0;  // the loader's gemv rows
  const int64_t rows = thin_grid_rows(c.target, c.n, c.k);
  // Past kThinMostK a grid row owns at most kThinMostRowsPastK hidden rows
  // (the weight in flight; template_choice.h).
  if (!thin_rows_hold(c.k, c.m_max, rows)) return 0;
  return rows > (c.m_max + 15) / 16 ? rows : 0;
}

MmaTuning mma_tuning(const Contract &c, const TuningKeys &overrides) {
  // The table, from the sm_90 sweeps (v9-v10 in docs/perf-notes.md, N = 1536):
  //  - VECS 2: each lane loads 32 contiguous bytes per row, so the lanes that
  //    share a row fill whole 128-byte lines (v10: 11.2 -> 8.4 us at M <= 8
  //    together with KSPLIT 16).
  //  - KSPLIT: more warps per row tile, more bytes in flight per SM: sized
  //    for about 6144 warps in all (32 warps, 1024 threads, at N = 1536).
  //  - RT 2 above M = 16: each hidden fragment serves two weight tiles, which
  //    halves the hidden traffic from L2 that dominates there (M = 64: 56 -> 23 us).
  // gfx950 (unmeasured: no AMD GPU here) takes the same VECS and RT reasoning
  // with the seed's 256-thread workgroups.
  MmaTuning t;
  if (target_is_amdgpu(c.target)) {
    t = {.frag = fragment_shape(c.target), .rt = 1, .ksplit = 4, .unroll = 8, .vecs = 2};
  } else {
    t = {.frag = fragment_shape(c.target), .rt = 1, .ksplit = 16, .unroll = 8, .vecs = 2};
  }
  // RT 2 above M = 16 on every target (v49 on gfx950 above M = 256: 168
  // VGPRs, 3 waves a SIMD, but half the hidden traffic from L2; the model
  // puts N = 1536 M = 512 / 2048 at 22.7 / 69.3 µs against RT 1's 41.5 /
  // 121.6, no gate failing that RT 1 passed).
  if (c.m_max > 16) t.rt = 2;
  // gfx950, M = 17-256 (v43, v48; the model's choice: no AMD GPU to time
  // it): the structure the H200 measured best for this template at M =
  // 17-32 (v17 and v43's sweep): RT 2, 16 waves a row tile (1024-thread
  // workgroups) and blocks of 32 hidden rows, grid y tiling M; with one step
  // in flight a wave (UNROLL 1) and K split across workgroups (at least 4,
  // amd_k_splits), so that a wave's whole K range (at most 2 steps) stays in
  // 64 VGPRs and two such workgroups share a CU. Was 4 waves and up to
  // 128-row blocks (48 workgroups for 256 CUs, a chain of round trips an
  // iteration), then (v44) 8 waves and 16-row blocks above M = 64 (each
  // block re-reading the weight from L2). Only where the row tiles do not
  // outnumber the CUs (N <= 8192): at N = 12288 two such workgroups a CU do
  // not fit, and M = 17-32 got slower.
  const int64_t amd_row_tiles = (c.n + 2 * t.frag.tile_w - 1) / (2 * t.frag.tile_w);
  const int64_t cus = target_info(c.target).compute_units;
  // v83-v84: a fixed M of 15-32 (16-bit weights) whose 16-row blocks leave
  // CUs idle cuts its grid rows thinner (the rule below, thin_grid_rows);
  // at M = 15-16 the loader takes the mma for it (template_choice.cpp), in
  // the structure of M = 17-256 that follows.
  const int64_t amd_thin = amd_thin_grid_rows(c);
  const bool amd_thin_rows = amd_thin > 0;
  const bool amd_mid = target_is_amdgpu(c.target) && ((c.m_max > 16 && c.m_max <= 256) || amd_thin_rows) &&
                       amd_row_tiles <= cus;
  // Above M = 64, 8 waves a row tile where that runs in one round (v53):
  // four 512-thread workgroups a CU hold twice the workgroups of two
  // 1024-thread ones, so 5 splits (at most 3 K steps a wave, 64 VGPRs)
  // still fit (N = 1536 M = 96 / 128: 8.61 / 10.26 µs predicted, against 16
  // waves' 4 splits in two rounds, 10.90 / 12.62). With 4 splits a wave held
  // 3.5 steps in 88 VGPRs, and the occupancy gate failed.
  const int64_t amd_m_tiles = (c.m_max + 31) / 32;
  const bool amd_eight_waves = c.m_max > 64 && amd_row_tiles * amd_m_tiles * kAmdEightWaveMinSplits <=
                                                   workgroups_held(target_info(c.target), 8);
  if (amd_mid) {
    t.ksplit = amd_eight_waves ? 8 : 16;
    t.max_mt = 2;
  }
  // gfx950 M = 17-48, 16-bit weights (v70): no K split where blocks of one
  // 16-column tile and 16 hidden rows already fill the CUs. RT 1 and one
  // 16-row tile a block multiply the blocks by 2 x ceil(M / 16) without the
  // meeting's 3 round trips (N = 1536 M = 33-48: 7.71-7.76 -> 6.56 µs
  // predicted; N = 3072 M = 17-48: 11.37-14.51 -> 9.07-11.53; N = 4096-8192
  // M = 17-48: 13.84-32.99 -> 11.54-28.08). The H200
  // timed this template both ways (perf-notes v70). N = 1536 M = 17-32 keeps
  // the split: there the same blocks are 192 for 256 CUs, which the
  // workgroups_fill_cus gate refuses although the model predicts them
  // faster (6.01 µs against 8.23-8.28).
  // (A dynamic M must fill them from M = 17, its smallest launch above 16.)
  const int64_t amd_col_tiles = (c.n + t.frag.tile_w - 1) / t.frag.tile_w;
  const int64_t amd_fill_rows = c.m_dynamic ? 17 : c.m_max;
  // v83: where those 16-row blocks leave CUs idle (N = 1536 M = 17-32: 96 x
  // 2 for 256), a fixed M's grid rows each take fewer hidden rows instead of
  // splitting K: ceil(CUs / column tiles) grid rows of ceil(M / that) rows
  // (N = 1536: 3 grid rows, 288 workgroups). The weight streams through L2
  // once a grid row, with no meeting in series. At most kMostThinGridRows
  // (weight re-reads); a dynamic M keeps 16-row blocks (its grid rows follow
  // the launch's M).
  // Both keep their grid resident at once (v89: the plan pins that
  // occupancy). Past kThinMostK only the thin rows of at most
  // kThinMostRowsPastK rows (amd_thin_grid_rows): 16-row blocks there kept
  // too little weight in flight (template_choice.h).
  const bool amd_unsplit = amd_mid && c.m_max <= 48 && c.dtype_weight != DType::kFP8E4M3 &&
                           ((c.k <= kThinMostK && amd_col_tiles * ((amd_fill_rows + 15) / 16) >= cus) ||
                            amd_thin_rows);
  if (amd_unsplit) {
    t.rt = 1;
    t.max_mt = 1;
    t.grid_resident = true;
    if (amd_thin_rows) t.m_stride = (c.m_max + amd_thin - 1) / amd_thin;
  }
  // gfx950 M = 17-128 where the row tiles outnumber the CUs (N > 8192; v58,
  // the model's choice): the 4-wave blocks of 32-128 hidden rows kept too few
  // weight bytes in flight or waited on single loads (N = 12288). Blocks of
  // 16 rows up to M = 32 (grid y 2: M = 32 38.8 -> 31.5 µs predicted), 8
  // waves a row tile up to M = 64 (33.9 -> 31.9), and twice the register
  // budget for steps in flight up to M = 128 (38.2 -> 34.9). 16-bit weights
  // only: the decoded fp8 fragments then need more registers than a SIMD's
  // placed waves have (occupancy gate; M = 32 16.7 -> 17.3 µs).
  const bool amd_wide = target_is_amdgpu(c.target) && c.m_max > 16 && c.m_max <= 128 && !amd_mid &&
                        c.dtype_weight != DType::kFP8E4M3;
  if (amd_wide && c.m_max <= 32) t.max_mt = 1;
  else if (amd_wide && c.m_max <= 64) t.ksplit = 8;
  if (!target_is_amdgpu(c.target)) {
    // sm_90 KSPLIT, measured per grid size (warps per row tile; not a smooth
    // function of N, v11-v15 in docs/perf-notes.md): 24 up to 192 row tiles
    // (N = 1536: 3-7% ahead of 32), 14 up to 512 (N = 3072 and 4096: 4% and
    // 12% ahead of 12, 16 and 8), 8 beyond (N = 12288: fewer cost 12%, 16 the
    // same). From M = 16 on (two hidden loads per step): 16 up to 192 tiles
    // (24 cost 16%), 12 up to 512 (N = 3072: 13.6 us, where 14 took 18.5 and
    // 16 took 14.8), 8 beyond.
    const int64_t tiles_n = (c.n + t.rt * t.frag.tile_w - 1) / (t.rt * t.frag.tile_w);
    if (c.m_max <= 8) t.ksplit = tiles_n <= 192 ? 24 : tiles_n <= 512 ? 14 : 8;
    else t.ksplit = tiles_n <= 192 ? 16 : tiles_n <= 512 ? 12 : 8;
    // Above M = 32: blocks of 32 hidden rows (grid y tiles M), KSPLIT 8 up
    // to M = 64 and 4 beyond (v17, N = 1536: M = 64 22.7 -> 18.5 us, M = 128
    // 57.8 -> 30.9, M = 512 117 -> 92; M = 2048 the same, 345 -> 349).
    // 128-row blocks held one warp's 8 x 2 tiles of partials per K slice, so
    // the workgroup-memory cap left 4 warps per block and 96 blocks in all.
    if (c.m_max > 32) {
      t.max_mt = 2;
      t.ksplit = std::min<int64_t>(t.ksplit, c.m_max <= 64 ? 8 : 4);
    }
    // e4m3 with 128 x 128 block scales (v61, N = 1536, swept twice): each
    // step folds its products in with its tiles' scales, so fewer, longer
    // steps up to M = 8 (VECS 4, KSPLIT 12: M = 4 10.1 -> 7.9 µs, M = 8
    // 10.3 -> 8.7) and twice the warps above M = 32 (KSPLIT 16: M = 64 22.5
    // -> 18.3, M = 128 41.9 -> 27.3). Per-channel scales lose with either
    // (M = 4 7.2 -> 7.9; M = 128 25.2 -> 31.4) and keep the bf16 rows.
    // Then (v62, a third sweep): two weight tiles a hidden fragment and 32
    // warps a row tile, for block128 up to M = 8 (M = 8 8.78 -> 7.92) and
    // for per-channel at M = 9-16 (M = 16 8.92 -> 7.71). RT 4 lost at
    // every M (48 row tiles for 132 SMs).
    // Only where measured: up to 192 row tiles (N <= 1536).
    const bool fp8_rows = tiles_n <= 192;
    if (fp8_rows && c.weight_scale == WeightScale::kBlock128 && c.m_max <= 8) t.vecs = 4, t.ksplit = 32, t.rt = 2;
    if (fp8_rows && c.weight_scale == WeightScale::kPerChannel && c.m_max > 8 && c.m_max <= 16) t.ksplit = 32, t.rt = 2;
    if (fp8_rows && c.weight_scale == WeightScale::kBlock128 && c.m_max > 32) t.ksplit = 16;
  }
  // UNROLL: steps whose loads are in flight together. Registers per step: RT
  // weight vectors and the live hidden vectors per VECS, 4 registers each,
  // within a budget of 128 (v10: 64 and 192 measured the same).
  int64_t budget = amd_mid ? 32 : amd_wide && c.m_max > 64 ? 256 : 128;
  apply_tuning_override(overrides, t, budget);
  // A block-scaled weight's step lies in one 128-wide K block (one scale per
  // weight tile and step: weight_fragments_e4m3.mlir).
  if (c.weight_scale == WeightScale::kBlock128)
    while (t.vecs > 1 && 128 % (kMmaInstrK * t.vecs) != 0) t.vecs /= 2;
  t.mt = std::min((c.m_max + 15) / 16, t.max_mt);
  const int64_t mt = t.mt;
  // gfx950_plan=1 on sm_90: gfx950's thin grid rows and K split, in sm_90's
  // tiles (the GPU suite runs the gfx950-plan bundle on the H200: the split's
  // meeting and, for an fp8 out, the band count after it).
  if (c.target == Target::kSm90 && overrides.count("gfx950_plan")) {
    const Contract amd = as_gfx950(c);
    if (const int64_t rows = amd_thin_grid_rows(amd); rows > 0) t.m_stride = (c.m_max + rows - 1) / rows;
    if (!overrides.contains("splits")) t.splits = mma_tuning(amd, {}).splits;
  }
  // mrows=R (sweeps): R grid rows of ceil(M_MAX / R) rows, as v83's rule.
  if (auto it = overrides.find("mrows"); it != overrides.end()) t.m_stride = (c.m_max + it->second - 1) / it->second;
  t.m_stride = t.m_stride > 0 ? std::min(t.m_stride, 16 * mt) : 16 * mt;
  // The K-split partials (KSPLIT waves x tiles x 4 x WAVE fp32) must fit the
  // workgroup memory a kernel gets without opting in (the target table's
  // static budget: 48 KiB static shared memory on sm_90; 64 KiB of gfx950's
  // 160, to leave room for two workgroups).
  const int64_t wave = target_wave_size(c.target);
  const int64_t smem_limit = target_info(c.target).shared_static_budget;
  while (t.ksplit > 1 && t.groups * t.ksplit * t.rt * mt * 4 * wave * 4 > smem_limit) t.ksplit /= 2;
  // At most 1024 threads per block (an override may ask for more).
  while (t.ksplit > 1 && t.ksplit * wave > 1024) t.ksplit /= 2;
  while (t.groups > 1 && t.groups * t.ksplit * wave > 1024) t.groups /= 2;
  // The K split across workgroups, for the block the caps above left.
  if (target_is_amdgpu(c.target) && c.m_max > 16 && !amd_unsplit && !overrides.contains("splits"))
    t.splits = amd_k_splits(c, t, cus, !amd_mid ? 1 : amd_eight_waves ? kAmdEightWaveMinSplits : kAmdMidMinSplits);
  // The split meets by poll (split_poll.mlir) where its grid fits one round
  // of the workgroups the GPU holds (by waves): every split the polling one
  // waits for is then running beside it. Session 18, the H200, same plans:
  // gfx950's plans at M = 49-96 in one round 3-13% faster than the arrival
  // (a forced 4-way split from -19% to +1.5%), 1.45 rounds 11% faster, 2.9
  // rounds 34% slower (the polls spin beside splits still streaming); one
  // round is the conservative side of that crossover. Not by
  // default with an e4m3 weight: its block scales leave the polls no room in
  // 64 VGPRs (gfx950 N = 1536 M = 64: 68, 7.11 -> 8.46 µs predicted). poll=0
  // keeps the arrival; poll=1 asks for it with any weight.
  const auto poll_asked = overrides.find("poll");
  const bool poll_default = c.dtype_weight != DType::kFP8E4M3;
  t.poll = t.splits > 1 && split_fits_a_round(c, t) &&
           (poll_asked == overrides.end() ? poll_default : poll_asked->second != 0);
  const int64_t live_h_loads = std::min(mt * t.frag.h_loads, (c.m_max + t.frag.h_stride - 1) / t.frag.h_stride);
  // A weight vector is 8 elements: 4 registers (16-bit) or 2 (e4m3).
  const int64_t regs_per_step = t.vecs * (t.rt * 2 * dtype_bytes(c.dtype_weight) + 4 * live_h_loads);
  const int64_t cap = std::clamp<int64_t>(budget / regs_per_step, 1, t.unroll);
  // The largest UNROLL <= cap that divides each wave's full steps: no step
  // falls to the one-at-a-time tail loop.
  const int64_t j_full = c.k / (kMmaInstrK * t.vecs) / (t.ksplit * t.splits);
  t.unroll = 1;
  for (int64_t u = cap; u >= 1; --u)
    if (j_full % u == 0) { t.unroll = u; break; }
  return t;
}

// The per-target fragment snippet of both mma forms, and what it needs.
const char *fragment_snippet(Target t) { return target_is_amdgpu(t) ? "mma_gfx950" : "mma_sm90"; }
// The target's @element_wise_fallback: a mark the code facts find in the code object.
const char *fallback_mark_snippet(Target t) {
  return target_is_amdgpu(t) ? "fallback_mark_amdgcn" : "fallback_mark_nvptx";
}
void set_fragment_params(TemplateParams &P, const Contract &c) {
  const FragmentShape f = fragment_shape(c.target);
  P["TILE_W"] = fmt::format("{}", f.tile_w);
  P["H_LOADS"] = fmt::format("{}", f.h_loads);
  P["H_STRIDE"] = fmt::format("{}", f.h_stride);
  if (target_is_amdgpu(c.target)) return;
  // mma.sync takes bf16 pairs as i32 (with the PTX type named), f16 pairs as
  // vector<2xf16>. The fragments have the hidden's type (an e4m3 weight is
  // decoded to it).
  const bool bf16 = c.dtype_hidden == DType::kBF16;
  P["PAIRS_OP"] = bf16 ? "vector.bitcast" : "vector.shape_cast";
  P["PAIRS_TYPE"] = bf16 ? "vector<4xi32>" : "vector<4x2xf16>";
  P["PAIR"] = bf16 ? "i32" : "vector<2xf16>";
  P["MMA_PTX_TYPES"] =
      bf16 ? "multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>," : "";
}

void plan_mma(KernelPlan &p) {
  const Contract &c = p.contract;
  const int64_t wave = target_wave_size(c.target);
  MmaTuning t = mma_tuning(c, p.tuning.keys);
  p.grid_resident = t.grid_resident && t.splits == 1;
  const int64_t mt = t.mt;
  const int64_t m_block = mt * 16;
  const int64_t m_stride = t.m_stride;  // hidden rows a grid row owns (<= m_block)
  const int64_t kstep = kMmaInstrK * t.vecs;
  const int64_t s_all = (c.k + kstep - 1) / kstep;
  const int64_t s_full = c.k / kstep;
  const int64_t ksplit_all = t.ksplit * t.splits;
  const int64_t j_full = s_full / ksplit_all;
  t.unroll = std::max<int64_t>(1, std::min(t.unroll, j_full));
  const int64_t j_groups = j_full / t.unroll;
  const int64_t groups = t.groups;
  const int64_t tiles = t.rt * mt;
  const int64_t block = wave * t.ksplit * groups;
  const int64_t w_rows = t.rt * t.frag.tile_w;  // weight rows (output columns) of a column group
  const int64_t n_per_block = groups * w_rows;
  auto &P = p.params;
  auto set = [&](const char *name, int64_t v) { P[name] = fmt::format("{}", v); };
  set("WAVE", wave);
  P["DEVICE_SCOPE"] = target_is_amdgpu(c.target) ? "agent" : "device";
  set("KSPLIT", t.ksplit);
  set("GROUPS", groups);
  set("BLOCK", block);
  set("RT", t.rt);
  set("MT", mt);
  set("TILES", tiles);
  set("W_ROWS", w_rows);
  set("M_BLOCK", m_block);
  set("M_STRIDE", m_stride);
  P["THIN_ROWS"] = m_stride < m_block ? "true" : "false";
  set("H_LIVE_ROWS", std::min(c.m_max, m_stride));
  set("KSTEP", kstep);
  set("VECS", t.vecs);
  set("S_ALL", s_all);
  set("UNROLL", t.unroll);
  set("J_GROUPS", j_groups);
  set("J_REM", j_groups * t.unroll);
  set("J_ITERS", (s_all + ksplit_all - 1) / ksplit_all);
  set("PARTIALS", t.ksplit * groups * tiles * 4 * wave);
  set("ELEMENTS", tiles * 4);
  set("ELEMENTS_LAST", tiles * 4 - 1);
  set("OWN", (tiles * 4 + t.ksplit - 1) / t.ksplit);
  const int64_t tiles_n = (c.n + n_per_block - 1) / n_per_block;
  const int64_t tiles_m = c.m_max > m_stride ? (c.m_max + m_stride - 1) / m_stride : 1;
  set("SPLITS", t.splits);
  set("SPLITS_LAST", t.splits - 1);
  set("KSPLIT_ALL", ksplit_all);
  P["SPLIT_K"] = t.splits > 1 ? "true" : "false";
  const bool poll = t.splits > 1 && t.poll;
  P["SPLIT_POLL"] = poll ? "1" : "0";
  set("POLL_OTHERS", std::max<int64_t>(1, t.splits - 1));
  // The poll meeting reads zero as "not yet": its workspace starts zeroed
  // (the polling split zeroes what it read).
  P["WS_INIT"] = poll ? "dense<0.0>" : "uninitialized";
  set("TILES_N", tiles_n);
  // The epilogue's pieces: VW consecutive columns of one row (16 bytes),
  // thread tid taking pieces tid, tid + BLOCK, ... of the rows a block can
  // have; wide where the strides (known here) and the base pointers (checked
  // at run time) allow.
  int64_t vw = split_piece_width(c, t, tiles_n * tiles_m * t.splits, block);
  // vw=4|8 (sweeps, and the H200's check of the narrower pieces), where the
  // tiles allow it: a piece's sums stay whole 16-byte vectors of fp32 (the
  // template's loads of them say so). Other values are ignored; the
  // report's VW says what was built.
  if (p.tuning.has("vw") && (p.tuning.at("vw") == 4 || p.tuning.at("vw") == 8) &&
      mma_piece_width(t) % p.tuning.at("vw") == 0)
    vw = p.tuning.at("vw");
  const int64_t group_outputs = m_block * w_rows;
  const int64_t live_rows = std::min(c.m_max, m_stride);
  const int64_t pieces = groups * live_rows * (w_rows / vw);
  set_piece_params(P, c, vw);
  set("ROW_PIECES", w_rows / vw);
  set("GROUP_PIECES", live_rows * (w_rows / vw));
  set("PIECES", pieces);
  set("PIECE_SLOTS", (pieces + block - 1) / block);
  set("GROUP_OUTPUTS", group_outputs);
  set("BLOCK_OUTPUTS", groups * group_outputs);
  set("SUMS", groups * group_outputs);
  // Without a split the workspace is folded away; one element keeps the
  // declarations well-formed.
  set("WS_SIZE", t.splits > 1 ? tiles_n * tiles_m * t.splits * groups * group_outputs : 1);
  set("WS_TILES", t.splits > 1 ? tiles_n * tiles_m : 1);
  set_fragment_params(P, c);
  // The weight's entry points: @accumulate_step (16-bit fragments as
  // loaded, or e4m3 decoded to the hidden's type, block scales per step)
  // and the epilogue's @scale_sums (per-channel scales on the sums).
  const bool fp8 = c.dtype_weight == DType::kFP8E4M3;
  set_streamed_weight_params(P, c);
  set("W_VEC_ALIGN", 8 * dtype_bytes(c.dtype_weight));
  // sm_90, e4m3: a lane's VECS vectors of a row are one run of 8 VECS bytes
  // at a 16-byte multiple (K offset 16 t VECS; rows 16-byte aligned), loaded
  // at once, so a step's weight moves in 16-byte loads like bf16's (v59: the
  // PTX had kept two 8-byte loads). gfx950's LLVM merges the two into one
  // dwordx4 already; asking for the run there scheduled worse in the model
  // (N = 1536 M = 4 3.96 -> 5.40 µs).
  P["W_RUN_LOAD"] = fp8 && !target_is_amdgpu(c.target) ? "true" : "false";
  set("W_RUN", 8 * t.vecs);
  set("W_RUN_ALIGN", std::min<int64_t>(16, 8 * t.vecs * dtype_bytes(c.dtype_weight)));
  p.snippets = {fragment_snippet(c.target), "mma_tiles", "epilogue_pieces", "split_arrival", "split_poll", "split_poll_pieces",
                prefetch_snippet(c.target)};
  const bool per_channel = c.weight_scale == WeightScale::kPerChannel;
  p.snippets.push_back(per_channel ? "scale_sums_per_channel" : "scale_sums_none");
  if (c.weight_scale != WeightScale::kBlock128) p.snippets.push_back("step_scales_none");
  if (!fp8) p.snippets.push_back("weight_fragments_plain");
  else
    p.snippets.insert(p.snippets.end(), {"weight_fragments_e4m3",
                                         per_channel ? "accumulate_per_channel" : "accumulate_block128",
                                         decode_e4m3_snippet(c.target)});
  set_out_params(p, fmt::format("{}", c.m_max * (c.n / kOutGroup)), n_per_block, m_stride, block);
  p.tuning_choices = {{"RT", t.rt},         {"MT", mt},         {"M_STRIDE", m_stride}, {"KSPLIT", t.ksplit},
                      {"VECS", t.vecs},     {"UNROLL", t.unroll}, {"GROUPS", groups},     {"SPLITS", t.splits},
                      {"SPLIT_POLL", poll}, {"VW", vw}};
  p.facts = {.form = "mma", .weight_rows_per_block = n_per_block, .hidden_rows_per_block = m_stride,
             .product_rows_per_block = m_block,
             .splits = t.splits, .split_poll = poll, .reduction_rounds = t.splits > 1 ? 1 : 0, .matrix = true};
  p.geometry = {uint32_t(block), uint32_t(n_per_block), false,
                uint32_t(c.m_max > m_stride ? m_stride : 0), uint32_t(t.splits)};
}

// mma_tiled (templates/mma_tiled.mlir): the GEMM-shaped form of mma, on
// sm_90 from M = 17 on (docs/perf-notes.md, v20-v26); on gfx950 when asked. Block tiles of BN weight rows x BM hidden rows
// stream K through workgroup memory in STAGES tiles of BK; grid z splits K
// into SPLITS blocks that meet in a workspace.
constexpr int64_t kTiledBk = 64;                // K per stage (the table's): 128-byte rows, 8 chunks
constexpr int64_t kTiledWaves = 4;              // per block; a copy pass covers BLOCK / 8 rows
constexpr int64_t kTiledMinKTilesPerSplit = 4;  // enough K tiles for the pipeline to fill
constexpr int64_t kStageObjects = 8;           // gfx950: stage globals in async_copy_gfx950.mlir
constexpr int64_t kWgmmaM = 64;                 // wgmma's m: hidden rows per block
constexpr int64_t kWgmmaMaxN = 256;             // wgmma's largest n: weight rows per block
constexpr int64_t kWgmmaMaxAccRegisters = 192;  // of a thread's 255, for its accumulators
constexpr int64_t kEarlyAttnRegisterBudget = 192;  // accumulators + attn pieces held across the K loop
constexpr int64_t kMbarrierBytes = 8;           // TMA: a stage's mbarrier, after the stages
constexpr int64_t kSlotCounterBytes = 4;        // TMA: a slot's release counter, after the barriers
constexpr int64_t kStageBarrierBytes = kMbarrierBytes + kSlotCounterBytes;
constexpr int64_t kMaxStages = 16;              // TMA: the barriers' room the stage fit reserves

// What the tiled form needs to know about a target: the target table's
// facts, and the table's own choices (the stages' budget, the blocks per CU
// the K split aims for).
constexpr int64_t kDynamicSharedDeclarationBytes = 128;  // the 1-byte static declaration behind gpu.dynamic_shared_memory
struct TiledTarget {
  int64_t compute_units;  // SMs / CUs
  int64_t smem_table;     // workgroup memory the table's stages stay within
  int64_t smem_limit;     // what an override may take
  int64_t blocks_per_cu;  // the K split's target (and, on sm_90, the occupancy asked of ptxas)
  int64_t smem_per_cu;    // workgroup memory of one SM / CU
  int64_t smem_reserved;  // of it, taken per block besides the stages
  int64_t threads_per_cu;
};
// gfx950's tiled shapes below 128 x 64's three a CU (amd_tile_shape): two
// workgroups a CU, up to 80 KiB of stages each in 160 KiB of LDS; 64 x 64
// where only asked (tiled=1).
constexpr int64_t kAmdTileRows = 64, kAmdTiledWorkgroupsPerCu = 2;

TiledTarget tiled_target(Target t) {
  const TargetInfo &info = target_info(t);
  // gfx950 (MI355X): the table stays within its static budget of 64 KiB,
  // two workgroups per CU, both counted for the K split (v76: counting one
  // left N = 1536 M = 512 at 192 workgroups for 256 CUs).
  // sm_90 (H100 / H200 SXM): 48 KiB of stages let 4 blocks share an SM; an
  // override may opt in to 227 KiB. 3 blocks per SM: at most 168 registers
  // per thread. Per block besides the stages: what the hardware reserves,
  // and the 128-byte allocation unit the one-byte static declaration behind
  // gpu.dynamic_shared_memory takes.
  const int64_t blocks_per_cu = info.amdgpu ? kAmdTiledWorkgroupsPerCu : 3;
  const int64_t reserved = info.amdgpu ? 0 : info.shared_reserved_per_workgroup + kDynamicSharedDeclarationBytes;
  return {info.compute_units, info.shared_static_budget, info.shared_per_workgroup_max, blocks_per_cu,
          info.shared_per_cu, reserved, info.max_threads_per_cu};
}

struct TiledTuning {
  int64_t bn = 64, bm = 32, warps_n = 2, stages = 4, splits = 1;
  int64_t bk = kTiledBk;  // K per stage: 64 or 128 (override bk=128 where K allows)
  int64_t blocks_per_cu = 1;
  int64_t weight_bytes = 2, hidden_bytes = 2;  // element bytes of the staged tensors (the contract's dtypes)
  // sm_90a warpgroup MMA (templates/tile_products_wgmma.mlir): one
  // warpgroup, 64 hidden rows (the instruction's m), BN weight rows (its n),
  // 64-K stages (the 128-byte swizzle's row).
  bool wgmma = false;
  // sm_90 with wgmma: stages copied by the tensor memory accelerator
  // (templates/async_copy_sm90_tma.mlir), one thread per stage, instead of
  // 16-byte cp.async chunks by every thread.
  bool tma = false;
  // gfx950's K loop on sm_90 (gfx950_plan=1): the ring unrolled by STAGES
  // and every slot refilled, past the end with the last tile again.
  bool gfx950_loop = false;
  // TMA: wgmma groups left running after a stage's products are issued.
  // 1 keeps the tensor cores fed across stages; 0 (override pending=0)
  // waits for them and frees the stage just used at once, so one more
  // stage of each block's shared memory is in flight.
  int64_t wgmma_pending = 1;
  // wgmma: accumulators per warpgroup, the K steps of a stage taking them
  // in turn (1, 2 or 4; override accs=N). A chain of instructions on one
  // accumulator advances one instruction per wgmma latency, whatever its
  // n; more chains keep the tensor cores busy with narrow tiles.
  int64_t accs = 1;
  int64_t waves = kTiledWaves;  // per block (wgmma: 4 per warpgroup, one warpgroup per 64 hidden rows)
  // A persistent grid (tile_order.mlir): at most this many workgroups, each
  // looping over tiles, in bands of `dies` and groups of `tile_group_m` tile
  // rows; 0: a workgroup per tile.
  int64_t persistent_workgroups = 0, dies = 1, tile_group_m = 1;
  bool poll = false;  // the K split may meet by poll (split_poll_tile.mlir; plan_mma_tiled counts its rounds)
};

// gfx950's tiled shapes (weight rows x hidden rows, 2 x 2 waves but for
// 128 x 128's 2 x 4), the first that applies; none: the register-streamed
// form. Each keeps its grid to whole rounds of the workgroups a CU holds:
//  - 128 x 64, 2 stages, three a CU (v74), where those tiles fill the CUs
//    three times over: their bytes in flight then cover the latency. The
//    H200 ran this shape of the template (g4, v72) within 4% of the model.
//    Predicted 1.6x the register-streamed form (N = 1536 M = 4096 134.7 ->
//    86.5 us).
//  - 128 x 128, 8 waves of 64 x 32, 4 stages, one a CU (v96), from M =
//    256 and K = 4096 where M fills its 128-row tiles at least 7/8 and a K
//    split of 2-5 fills one round: half the L2 and LDS bytes a product of
//    64 x 64 tiles (N = 1536 M = 512 18.12 -> 14.44 us, M = 768 32.33 ->
//    21.22; N = 3072 M = 256 18.12 -> 14.44). The H200 ran this block
//    (v72's f8, and the
//    mirror at 10 rows in v96) within 10% of the model, where 8-wave
//    64 x 128 blocks ran 24-43% over it (session 17). Where M leaves a
//    quarter of the last tile row empty (N = 3072 M = 192, 320) or the
//    split exceeds 5 (N = 1536 M = 256: 10 splits, whose polls would take
//    5 rounds) the 64 x 64 tiles predict faster.
//  - from M = 128 (two full 64-row hidden tiles), where the tiles fit one
//    round of two a CU: each weight row crosses HBM into LDS once per
//    hidden tile, where the register-streamed form reads it again from L2
//    for every 32 rows:
//    - 64 x 128, 3 stages (v77), where those tiles fill that round at
//      least three quarters (N = 1536 M = 2048, N = 3072 M = 1024,
//      N = 12288 M = 256: 68.1 -> 58.4 us; a round 56% full at N = 3072
//      M = 768 was 13% slower than the register-streamed form);
//    - 64 x 64, 4 stages, the K split filling the round (v76: 1.1-2.2x,
//      e.g. N = 3072 M = 256 46.4 -> 21.0 us; M = 65-96 at N = 1536 and
//      12288 were 3-10% slower; a second round lost 26% at N = 3072
//      M = 768).
//    The H200 ran 64 x 64 and the register-streamed form side by side
//    (v76): each within 30% of the model, ranked as it ranks them.
//  - M = 97-127 (v82: the second 64-row hidden tile at least half full),
//    64 x 64 tiles where they fill at most half that round, so a K split
//    fills the rest: N = 1536 / 3072 M = 112 10.83 / 23.64 -> 9.71 / 13.52
//    us predicted, and the in-flight gate passes where the register-streamed
//    form failed it. N = 12288 (384 tiles, no split) keeps the
//    register-streamed form (M = 97 32.2 us against 34.1).
//  - M = 65-96 (v98), the same 64 x 64 tiles where they fill at most half
//    that round, their K split fills 7/8 of it with at least two rings of
//    K tiles a split, and meets by poll (amd_tiled_applies): N =
//    1536 M = 80 / 96 7.62 / 8.04 -> 6.72 / 6.78 us, N = 2048 9.13 / 9.68 ->
//    7.98 / 8.04. The H200 ran gfx950's two plans mirrored 5-14% apart the
//    same way (N = 1536 M = 65-96). N = 1024 (16 splits, by arrival) keeps
//    the register-streamed form.
//  - M = 49-96 (v85), the same 64 x 64 tiles where the register-streamed
//    form's K split needs more than one round of the workgroups the GPU
//    holds (each round past the first waits for its own meeting, v52):
//    N = 3072 M = 49 / 65 / 96 14.51 / 18.59 / 20.21 -> 13.24 / 13.31 /
//    13.45 us predicted, N = 4096-8192 likewise. N = 1536 (one round: 480
//    or 1008 workgroups) keeps the register-streamed form, which predicts
//    faster there (M = 64 7.82 against 12.42).
struct AmdTileShape {
  int64_t bn = 0, bm = 0, stages = 0;
  int64_t waves = kTiledWaves, blocks_per_cu = kAmdTiledWorkgroupsPerCu;
  bool only_polled = false;  // taken only where its K split meets by poll (amd_tiled_applies)
};
constexpr int64_t kAmdTiledFromM = 128;
constexpr int64_t kAmdSplitTiledFromM = 97;
constexpr int64_t kAmdRoundsTiledFromM = 49;  // v85: below, v70's and v83's unsplit rows
constexpr int64_t kAmdPolledTiledFromM = 65;  // v98: the second 64-row tile begun
// v96: the 128 x 128 tiles from M = 256, with a K split of 2-5 in one
// round of one a CU, where M fills its 128-row tiles at least 7/8, from
// K = 4096 (shorter, a split's K loop is short against its meeting, and
// the 64 x 64 tiles, with fewer splits or none, predict faster at some
// rows: K = 512-2048).
constexpr int64_t kAmdWideTiledFromM = 256, kAmdWideTiledFromK = 4096, kAmdWideTileRows = 128, kAmdWideTileWaves = 8;
constexpr int64_t kAmdWideSplitsMin = 2, kAmdWideSplitsMax = 5;
// The register-streamed plan's K split needs more than one round of the
// workgroups the GPU holds.
bool streamed_split_exceeds_a_round(const Contract &c) {
  const MmaTuning t = mma_tuning(c, {});
  return t.splits > 1 && !split_fits_a_round(c, t);
}
std::optional<AmdTileShape> amd_tile_shape(const Contract &c, bool wide_tiles = true) {
  if (!target_is_amdgpu(c.target)) return std::nullopt;
  const int64_t cus = target_info(c.target).compute_units;
  auto tiles = [&](int64_t bn, int64_t bm) { return ((c.n + bn - 1) / bn) * ((c.m_max + bm - 1) / bm); };
  if (tiles(128, 64) >= 3 * cus) return AmdTileShape{128, 64, 2};
  // The K split tiled_tuning gives a grid of `t` tiles in a round of
  // `held`: as many as fill it, each split a few K tiles long.
  const int64_t max_splits = std::max<int64_t>(1, (c.k / kTiledBk) / kTiledMinKTilesPerSplit);
  auto splits = [&](int64_t t, int64_t held) { return std::clamp<int64_t>(held / t, 1, max_splits); };
  const int64_t wide = tiles(kAmdWideTileRows, kAmdWideTileRows);
  const int64_t wide_m = (c.m_max + kAmdWideTileRows - 1) / kAmdWideTileRows * kAmdWideTileRows;
  if (wide_tiles && c.m_max >= kAmdWideTiledFromM && c.k >= kAmdWideTiledFromK && 8 * c.m_max >= 7 * wide_m &&
      splits(wide, cus) >= kAmdWideSplitsMin && splits(wide, cus) <= kAmdWideSplitsMax)
    return AmdTileShape{kAmdWideTileRows, kAmdWideTileRows, 4, kAmdWideTileWaves, 1};
  const int64_t round = kAmdTiledWorkgroupsPerCu * cus;
  if (c.m_max < kAmdTiledFromM) {
    if (c.m_max >= kAmdSplitTiledFromM && 2 * tiles(64, 64) <= round) return AmdTileShape{64, 64, 4};
    if (c.m_max >= kAmdRoundsTiledFromM && 2 * tiles(64, 64) <= round && streamed_split_exceeds_a_round(c))
      return AmdTileShape{64, 64, 4};
    // (v98: where they fill at least 7/8 of the round with their split, and
    // each split's K loop is at least two rings of the 4 stages long: with
    // shorter loops (K = 1024-4096 at N = 1280-4096) the register-streamed
    // form predicts faster.)
    const int64_t polled_splits = splits(tiles(64, 64), round);
    if (c.m_max >= kAmdPolledTiledFromM && 2 * tiles(64, 64) <= round &&
        8 * tiles(64, 64) * polled_splits >= 7 * round && c.k / kTiledBk >= 2 * 4 * polled_splits)
      return AmdTileShape{64, 64, 4, kTiledWaves, kAmdTiledWorkgroupsPerCu, true};
    return std::nullopt;
  }
  if (4 * tiles(64, 128) >= 3 * round && tiles(64, 128) <= round) return AmdTileShape{64, 128, 3};
  if (tiles(64, 64) <= round) return AmdTileShape{64, 64, 4};
  return std::nullopt;
}

// tile128=0 keeps gfx950 off its 128 x 128 tiles (the sweeps' other arm).
bool wide_tiles(const TuningKeys &o) {
  const auto it = o.find("tile128");
  return it == o.end() || it->second != 0;
}

TiledTuning tiled_tuning(const Contract &c, const TuningKeys &o);
bool tiled_split_polls(const Contract &c, const TiledTuning &t, const TuningKeys &o);

// gfx950's tiled form: one of its shapes, and where the shape asks, a K
// split that meets by poll in gfx950's own default plan (v98: at M = 65-96
// the tiles' split by arrival, N = 1024's 16 splits, predicts slower than
// the register-streamed form).
bool amd_tiled_applies(const Contract &c, const TuningKeys &o) {
  const auto shape = amd_tile_shape(c, wide_tiles(o));
  if (!shape) return false;
  if (!shape->only_polled) return true;
  // The keys that decide the shape, the split and its poll rounds.
  TuningKeys keys;
  for (const char *key : {"tile128", "splits", "oneround", "round", "poll"})
    if (auto it = o.find(key); it != o.end()) keys[key] = it->second;
  return tiled_split_polls(c, tiled_tuning(c, keys), keys);
}

bool mma_tiled_applies(const Contract &c, const TuningKeys &o) {
  // The tiled form stages 16-bit tiles; an e4m3 weight takes the
  // register-streamed form, which decodes each lane's fragments.
  // An fp8 out's groups are finished by the register-streamed form's
  // epilogue entry points, which the tiled form does not call.
  if (!mma_available(c.target) || c.k % kTiledBk != 0 || c.dtype_weight == DType::kFP8E4M3 || c.fp8_out())
    return false;
  if (auto it = o.find("tiled"); it != o.end()) return it->second != 0;
  // gfx950_plan=1 on sm_90: the form gfx950 takes for this contract
  // (tiled_tuning mirrors its shape).
  if (c.target == Target::kSm90 && o.count("gfx950_plan")) return amd_tiled_applies(as_gfx950(c), o);
  // sm_90 from M = 17: with 128-K stages the tiled form took M = 32 in
  // 11.4 us against the register-streamed 12.9 (v25). gfx950 where one of
  // its shapes applies (amd_tile_shape); elsewhere the register-streamed
  // form predicts faster.
  return (c.target == Target::kSm90 && c.m_max > 16) || (target_is_amdgpu(c.target) && amd_tiled_applies(c, o));
}

// One stage in workgroup memory: BN weight rows and BM hidden rows of BK
// elements each, at their tensors' element bytes.
int64_t stage_bytes(const TiledTuning &t) { return (t.bn * t.weight_bytes + t.bm * t.hidden_bytes) * t.bk; }

// The staged epilogue's tile (mma_tiled.mlir): BM rows of BN products,
// EPI_LD = BN + pad floats apart, EPI_LD = 8 mod 32 (below).
int64_t epilogue_tile_ld(const TiledTuning &t) { return t.bn + ((8 - t.bn) % 32 + 32) % 32; }
// The tile in parts, part i over stage slot i: the whole tile where one
// stage holds it, else the largest power of two of rows that one does (the
// division by it that finds a row's part folds to a shift), or as many as
// fit where a power of two would need more parts than there are stages.
// {0, 0}: not even one row fits a stage.
struct EpilogueParts {
  int64_t rows = 0, count = 0;
};
EpilogueParts epilogue_parts(const TiledTuning &t) {
  const int64_t row_bytes = epilogue_tile_ld(t) * 4;
  const int64_t fit = stage_bytes(t) / row_bytes;
  if (fit == 0) return {0, 0};
  if (t.bm <= fit) return {t.bm, 1};
  int64_t rows = 1;
  while (rows * 2 <= fit) rows *= 2;
  if ((t.bm + rows - 1) / rows > t.stages) rows = fit;
  return {rows, (t.bm + rows - 1) / rows};
}
// Where its 8-element row pieces are whole 16-byte accesses: N and the attn
// and out row strides multiples of 8 (the base pointers are checked at run
// time).
bool epilogue_staging_shape(const Contract &c, const TiledTuning &t) {
  return c.n % 8 == 0 && c.ld_attn % 8 == 0 && c.ld_out % 8 == 0 && t.bn % 8 == 0;
}

bool tiled_shape_ok(const TiledTuning &t, Target target, const TiledTarget &tt) {
  const int64_t wave = target_wave_size(target);
  const int64_t warps_m = t.waves / t.warps_n;
  const int64_t rows_per_pass = wave * t.waves / (t.bk / 8);
  return t.warps_n >= 1 && t.waves % t.warps_n == 0 && wave * t.waves <= 1024 && t.bn % rows_per_pass == 0 &&
         t.bm % rows_per_pass == 0 && t.bn % (fragment_shape(target).tile_w * t.warps_n) == 0 && t.bm % (16 * warps_m) == 0 &&
         (t.wgmma ? 3 : 2) * stage_bytes(t) <= tt.smem_limit &&
         (!t.wgmma || (t.bm == kWgmmaM * t.waves / 4 && t.bk == 64 && t.warps_n == 1 && t.bn <= kWgmmaMaxN &&
                       t.accs * t.bn / 2 <= kWgmmaMaxAccRegisters));
}

// Workgroups of the tiled plan `t` one CU holds at once, by workgroup
// memory and threads (the registers are the code's: the
// occupancy_holds_the_grid gate checks them).
int64_t tiled_workgroups_per_cu(const TiledTuning &t, const TiledTarget &tt, int64_t wave) {
  const int64_t per_block = t.stages * stage_bytes(t) + tt.smem_reserved + (t.tma ? kStageBarrierBytes * t.stages : 0);
  return std::max<int64_t>(1, std::min(tt.smem_per_cu / per_block, tt.threads_per_cu / (wave * t.waves)));
}

// The tiled grid (with its K split) fits one round of the workgroups the
// target's CUs hold, by workgroup memory and threads.
bool tiled_fits_a_round(const Contract &c, const TiledTuning &t, const TiledTarget &tt) {
  const int64_t tiles = ((c.n + t.bn - 1) / t.bn) * ((c.m_max + t.bm - 1) / t.bm);
  return tiles * t.splits <= tiled_workgroups_per_cu(t, tt, target_wave_size(c.target)) * tt.compute_units;
}

// The height, in tile rows, of the persistent order's groups: the power of
// two (up to the tile rows) that makes one die's band of a round (grid /
// dies tiles) read the fewest weight and hidden rows. For 128 x 64 tiles
// and 96 tiles a band: 16 tile rows of 6 columns, 1792 rows (8: 2048; a
// whole row of tiles at N = 12288: 12352).
int64_t band_group_tile_rows(const TiledTuning &t, int64_t band, int64_t tiles_m) {
  int64_t best = 1, best_rows = INT64_MAX;
  for (int64_t g = 1; g <= std::max<int64_t>(1, tiles_m); g *= 2) {
    const int64_t rows = std::min(g, tiles_m) * t.bm + (band + g - 1) / g * t.bn;
    if (rows < best_rows) best = g, best_rows = rows;
  }
  return best;
}

// gfx950 (v79): where the tiles at M's largest outnumber what the GPU holds
// at once (N = 3072 M = 4096, N = 12288 M >= 1024: the prefill tiles, three
// workgroups a CU), launch that many workgroups and loop each over tiles,
// instead of a grid of several rounds: every workgroup is placed at once
// (the occupancy_holds_the_grid gate), and the tile order is the kernel's,
// banded by die (tile_order.mlir). Not with a K split (its meeting is per
// launch) or TMA (its barriers' phases would run on across tiles).
// persistent=0|1 overrides; on sm_90 with its own facts (one die).
void plan_persistent_grid(const Contract &c, const TiledTarget &tt, const TuningKeys &o, TiledTuning &t) {
  const TargetInfo &info = target_info(c.target);
  const int64_t held = tiled_workgroups_per_cu(t, tt, info.wave_size) * tt.compute_units;
  const int64_t tiles_n = (c.n + t.bn - 1) / t.bn, tiles_m = (c.m_max + t.bm - 1) / t.bm;
  bool persistent = info.amdgpu && tiles_n * tiles_m > held;
  if (auto it = o.find("persistent"); it != o.end()) persistent = it->second != 0;
  if (!persistent || t.splits > 1 || t.tma) return;
  t.persistent_workgroups = std::min(held, tiles_n * tiles_m);
  t.dies = info.dies;
  t.tile_group_m = band_group_tile_rows(t, std::max<int64_t>(1, t.persistent_workgroups / t.dies), tiles_m);
}

// Splits whose partials the K split's last block loads together, one L2
// round trip a round (templates/mma_tiled.mlir, @combine_splits): every
// split in one round where their registers fit in what a lane holds at the
// waves the grid places (the target's own facts), beside
// kTailOtherRegisters for the rest of the tail; else rounds of 64
// registers (v80). On gfx950 LLVM had already issued a 3-round loop's loads
// at once (N = 1536 M = 128: 40 loads, one wait chain), so its plan now
// says what its code does and the model no longer charges rounds that never
// ran. On the H200 the same template with 5 splits in one round instead of
// 4 + 1 ran 3.9% faster (N = 1536 M = 64: 11.98 -> 11.51 us; the sm_90
// model predicted 4.6%; the rows whose code did not change moved -0.7% to
// +0.2%). oneround=0 keeps the rounds of 64 registers; round=N (sweeps)
// asks for N splits a round.
// The rest of the tail, a 4-wave block's: gfx950's code objects held 62
// registers beside 9 splits' polls (N = 1536 M = 128). An 8-wave block's
// tail held about twice that (M = 640: 214 with 3 splits' 96; 5 splits in
// one round spilled at M = 512), so the rest scales with the waves.
constexpr int64_t kTailOtherRegisters = 64;
// The most rounds a tiled split's poll meeting takes by default (v94).
constexpr int64_t kTiledPollRoundsMax = 2;
int64_t split_round(const Contract &c, const TiledTuning &t, const TuningKeys &o, int64_t workgroups, int64_t block,
                    int64_t registers_per_split) {
  if (t.splits <= 1) return 1;
  if (auto it = o.find("round"); it != o.end()) return std::clamp<int64_t>(it->second, 1, t.splits);  // sweeps
  bool one_round = true;
  if (auto it = o.find("oneround"); it != o.end()) one_round = it->second != 0;
  if (one_round) {
    const int64_t rest = kTailOtherRegisters * (target_is_amdgpu(c.target) ? std::max<int64_t>(1, t.waves / kTiledWaves) : 1);
    if (t.splits * registers_per_split <= lane_registers_placed(c.target, workgroups, block) - rest) return t.splits;
  }
  return std::clamp<int64_t>(64 / registers_per_split, 1, t.splits);
}

// The poll's rounds of the tiled split `t`: the arrival's register budget
// (split_round), over the splits the last one polls.
struct TiledPollRounds {
  int64_t split_round = 1, poll_round = 1, rounds = 1, others = 1;
};
TiledPollRounds tiled_poll_rounds(const Contract &c, const TiledTuning &t, const TuningKeys &o) {
  const int64_t block = target_wave_size(c.target) * t.waves;
  const int64_t warps_m = t.waves / t.warps_n;
  const int64_t rt = t.bn / (fragment_shape(c.target).tile_w * t.warps_n);
  const int64_t mt = t.bm / (16 * warps_m);
  const int64_t tiles = ((c.n + t.bn - 1) / t.bn) * ((c.m_max + t.bm - 1) / t.bm);
  TiledPollRounds r;
  r.split_round = split_round(c, t, o, tiles * t.splits, block, rt * mt * 4);
  r.others = std::max<int64_t>(1, t.splits - 1);
  r.poll_round = std::min(r.split_round, r.others);
  r.rounds = (r.others + r.poll_round - 1) / r.poll_round;
  return r;
}
// The tiled split `t` meets by poll, as plan_mma_tiled decides it: its
// grid fits a round and its polls take at most kTiledPollRoundsMax rounds
// (each round of polls waits for its own loads, where the arrival's rounds
// may share one wait: the H200 ran gfx950's 10-way split mirrored in 5
// rounds 4-5% slower than the arrival, and 1-2 rounds 4-7% faster, v94;
// 3 rounds ran level with it), or poll=1 asks.
bool tiled_split_polls(const Contract &c, const TiledTuning &t, const TuningKeys &o) {
  return t.poll && (o.count("poll") || tiled_poll_rounds(c, t, o).rounds <= kTiledPollRoundsMax);
}

// The sm_90 table, from the v25 sweeps on the H200 (N = 1536, K = 7168;
// docs/perf-notes.md, v20-v25). Up to M = 256 the tiles are small and the
// K split spreads them over one wave of about 3 blocks per SM; beyond, the
// bytes read from L2 per product bound the kernel and the tiles grow:
//  - M <= 32: mma.sync, 32 x 32 tiles, 128-K stages in 64 KiB (M = 32: 11.4 us;
//    register-streamed 12.9)
//  - M <= 64: wgmma, 32 weight rows x 64 hidden rows, 8 stages, 2 blocks per
//    SM (M = 64: 13.4; 3 blocks of 5 stages 14.2; mma.sync tiles 14.9)
//  - M <= 256: wgmma, 32 x 64, 5 stages (M = 128: 17.1-17.5, M = 256: 25.7;
//    mma.sync tiles 20.6 / 34.3)
//  - M <= 512: wgmma, 64 x 64, 4 stages (M = 512: 37.8; 49.2)
//  - beyond: wgmma, two warpgroups, 192 weight rows x 128 hidden rows, 4
//    stages, one block per SM (M = 2048: 79.0; 184.0. v35, with the staged
//    epilogue: M = 1024 45.0 against 64 x 64's 53.5; 5 stages measured
//    67.0-73.6 at M = 2048 against 67.8-68.5 for 4)
// gfx950 (unmeasured): amd_tile_shape's tiles (128 x 64, 64 x 128,
// 64 x 64 in 2 x 2 waves; 128 x 128 in 2 x 4), whose copy passes (rows of
// the block's lanes) and 16-row MFMA tiles they fit (the staged epilogue's
// tile lies over the stages, v75).
TiledTuning tiled_tuning(const Contract &c, const TuningKeys &o) {
  const TiledTarget tt = tiled_target(c.target);
  TiledTuning t;
  t.blocks_per_cu = tt.blocks_per_cu;
  t.weight_bytes = dtype_bytes(c.dtype_weight);
  t.hidden_bytes = dtype_bytes(c.dtype_hidden);
  int64_t budget = tt.smem_table;  // the stages' workgroup memory
  const bool k128 = c.k % 128 == 0;
  auto use_wgmma = [](TiledTuning &u, int64_t warpgroups) {
    u.wgmma = true, u.tma = true;
    u.warps_n = 1, u.bk = 64;
    u.waves = 4 * warpgroups;
    u.bm = kWgmmaM * warpgroups;
  };
  if (target_is_amdgpu(c.target)) {
    // Its shape where one applies; 64 x 64 where only asked (tiled=1).
    const AmdTileShape shape = amd_tile_shape(c, wide_tiles(o)).value_or(AmdTileShape{kAmdTileRows, kAmdTileRows, 4});
    t.bn = shape.bn, t.bm = shape.bm, t.waves = shape.waves, t.blocks_per_cu = shape.blocks_per_cu;
    budget = shape.stages * stage_bytes(t);  // (the blocks a CU, below, may hold fewer)
  } else if (c.m_max <= 32) {
    t.bn = 32, t.bm = 32, t.bk = k128 ? 128 : 64, budget = 64 * 1024;
  } else if (c.m_max <= 64) {
    use_wgmma(t, 1), t.bn = 32, budget = 96 * 1024, t.blocks_per_cu = 2;
  } else if (c.m_max <= 256) {
    use_wgmma(t, 1), t.bn = 32, budget = 60 * 1024;
  } else if (c.m_max <= 512) {
    use_wgmma(t, 1), t.bn = 64, budget = 64 * 1024;
  } else {
    use_wgmma(t, 2), t.bn = 192, budget = 160 * 1024, t.blocks_per_cu = 1;
  }
  // gfx950_plan=1 (sm_90 only): gfx950's own tiled plan for this contract
  // (its shape, stages, waves and K split, in the fragment form), so the
  // H200 runs, in the GPU suite, the plans gfx950 takes (v78).
  // Its K loop too (the ring of STAGES slots, the refill past the end);
  // only its LDS globals and their select stay gfx950's. Other keys do not
  // apply with it; a shape sm_90 cannot take keeps sm_90's table.
  // (persistent=0|1, poll=0|1 and tile128=0|1 apply to it too: the H200
  // times gfx950's grid, meeting and tiles both ways.)
  if (c.target == Target::kSm90 && o.count("gfx950_plan")) {
    TuningKeys gfx950_keys;
    for (const char *key : {"persistent", "poll", "tile128", "splits"})
      if (auto it = o.find(key); it != o.end()) gfx950_keys[key] = it->second;
    TiledTuning mirrored = tiled_tuning(as_gfx950(c), gfx950_keys);
    mirrored.gfx950_loop = true;
    if (tiled_shape_ok(mirrored, c.target, tt)) {
      // The poll's one round is this GPU's: the H200 holds 3 x 132 of the
      // 64 x 64 blocks where gfx950 holds 2 x 256 (N = 1536 M = 256: 480).
      if (!o.count("poll")) mirrored.poll = mirrored.poll && tiled_fits_a_round(c, mirrored, tt);
      return mirrored;
    }
  }
  TiledTuning asked = t;
  auto take = [&](const char *key, int64_t &field) {
    if (auto it = o.find(key); it != o.end()) field = it->second;
  };
  // wgmma=1 / wg=1|2 / wgmma=0 switch the form; the shape keys refine it.
  int64_t wgmma = t.wgmma, warpgroups = t.waves / 4;
  take("wgmma", wgmma);
  take("wg", warpgroups);
  if (wgmma && c.target == Target::kSm90) {
    use_wgmma(asked, std::clamp<int64_t>(warpgroups, 1, 2));
  } else if (asked.wgmma) {
    // Fragments where the table has wgmma: the fragment form's own large-M
    // shape (v24), which the shape keys may refine.
    asked.wgmma = false, asked.tma = false, asked.waves = kTiledWaves, asked.warps_n = 2;
    asked.bn = 64, asked.bm = 64, asked.bk = k128 ? 128 : 64, budget = 64 * 1024;
    asked.blocks_per_cu = tt.blocks_per_cu;
  }
  if (asked.wgmma) {
    int64_t tma = asked.tma;
    take("tma", tma);
    asked.tma = tma != 0;
  }
  // 1 in every row: 0 (one more stage in flight) measured no faster where
  // blocks share an SM and slower with one block per SM (v32).
  take("pending", asked.wgmma_pending);
  asked.wgmma_pending = asked.tma ? std::clamp<int64_t>(asked.wgmma_pending, 0, 1) : 1;
  take("accs", asked.accs);
  if (!asked.wgmma || (asked.accs != 1 && asked.accs != 2 && asked.accs != 4)) asked.accs = 1;
  take("bn", asked.bn);
  if (!asked.wgmma) take("bm", asked.bm);
  if (!asked.wgmma) take("waves", asked.waves);  // the fragment form's waves a block (sweeps)
  take("warps_n", asked.warps_n);
  take("bk", asked.bk);
  if (asked.bk != 64 && (asked.bk != 128 || !k128)) asked.bk = kTiledBk;
  if (tiled_shape_ok(asked, c.target, tt)) t = asked;  // an impossible override keeps the table's shape
  t.stages = std::min<int64_t>(8, budget / stage_bytes(t));
  take("stages", t.stages);
  take("bps", t.blocks_per_cu);
  t.blocks_per_cu = std::clamp<int64_t>(t.blocks_per_cu, 1,
                                        tt.threads_per_cu / (target_wave_size(c.target) * t.waves));
  // The blocks per SM the K split counts on must fit together (per-SM
  // workgroup memory, less what the hardware reserves per block), each with
  // the pipeline's fewest stages (wgmma keeps one more in use); fewer
  // blocks where they do not.
  const int64_t min_stages = t.wgmma ? 3 : 2;
  auto fitting = [&](int64_t blocks) {
    const int64_t per_block = std::min(tt.smem_limit, tt.smem_per_cu / blocks - tt.smem_reserved);
    return (per_block - (t.tma ? kStageBarrierBytes * kMaxStages : 0)) / stage_bytes(t);
  };
  while (t.blocks_per_cu > 1 && fitting(t.blocks_per_cu) < min_stages) --t.blocks_per_cu;
  t.stages = std::clamp<int64_t>(t.stages, min_stages, std::max(min_stages, fitting(t.blocks_per_cu)));
  if (t.tma) t.stages = std::min(t.stages, kMaxStages);
  // gfx950 keeps each stage in its own global, of which the copy snippet
  // declares kStageObjects.
  if (target_is_amdgpu(c.target)) t.stages = std::min(t.stages, kStageObjects);
  // As many K splits as keep every block in one wave of blocks_per_cu per
  // SM / CU, each split at least a few K tiles long.
  const int64_t kt = c.k / t.bk;
  const int64_t tiles = ((c.n + t.bn - 1) / t.bn) * ((c.m_max + t.bm - 1) / t.bm);
  const int64_t max_splits = std::max<int64_t>(1, kt / kTiledMinKTilesPerSplit);
  t.splits = std::clamp<int64_t>(t.blocks_per_cu * tt.compute_units / tiles, 1, max_splits);
  take("splits", t.splits);
  t.splits = std::clamp<int64_t>(t.splits, 1, kt);
  plan_persistent_grid(c, tt, o, t);
  // The split may meet by poll where its grid fits one round of the
  // workgroups the CUs hold, by workgroup memory and threads as the split
  // count is planned (the rule of the register-streamed form's poll, v93:
  // every split the polling one waits for has then started; registers are
  // the occupancy gate's to check); plan_mma_tiled then counts the poll's
  // rounds. A persistent grid has no split. poll=0 keeps the arrival;
  // poll=1 polls any split grid, one round or not (unlike the
  // register-streamed form's: the sweeps, and the GPU suite's mirror of
  // gfx950's splits, which the H200 holds in 1.2 rounds; progress past one
  // round rests on in-order dispatch).
  t.poll = t.splits > 1 && t.persistent_workgroups == 0 && tiled_fits_a_round(c, t, tt);
  if (auto it = o.find("poll"); it != o.end()) t.poll = t.splits > 1 && t.persistent_workgroups == 0 && it->second != 0;
  return t;
}

// wgmma's accumulator is a struct of BN / 2 f32 registers; the template's
// is TILES x 4 (the mma.sync C layout per 8 weight rows, the same order).
// Struct fields take constant positions only, so the conversions are
// written out here, one line per register.
void set_wgmma_params(TemplateParams &P, const Contract &c, const TiledTuning &t) {
  const int64_t regs = t.bn / 2, tiles = t.bn / 8;
  std::string fields, pack, unpack;
  for (int64_t i = 0; i < regs; ++i) fields += i ? ", f32" : "f32";
  const std::string acc = fmt::format("!llvm.struct<({})>", fields);
  const std::string vec = fmt::format("vector<{}x4xf32>", tiles);
  for (int64_t i = 0; i < regs; ++i) {
    pack += fmt::format("      %x{0} = vector.extract %acc[{1}, {2}] : f32 from {3}\n"
                        "      %s{4} = llvm.insertvalue %x{0}, %s{0}[{0}] : {5}\n",
                        i, i / 4, i % 4, vec, i + 1, acc);
    unpack += fmt::format("      %y{0} = llvm.extractvalue %s[{0}] : {1}\n"
                          "      %v{2} = vector.insert %y{0}, %v{0} [{3}, {4}] : f32 into {5}\n",
                          i, acc, i + 1, i / 4, i % 4, vec);
  }
  pack += fmt::format("      return %s{} : {}", regs, acc);
  unpack += fmt::format("      return %v{} : {}", regs, vec);
  P["WGMMA_ACC"] = acc;
  P["WGMMA_PACK"] = pack;
  P["WGMMA_UNPACK"] = unpack;
  // ACCS accumulators (an array: the ACC parameter), K step s of a stage
  // into accumulator s mod ACCS; begun as zeros and summed in array order.
  const std::string accs = fmt::format("!llvm.array<{} x {}>", t.accs, acc);
  std::string begin = fmt::format("      %a0 = llvm.mlir.poison : {}\n", accs);
  std::string end = fmt::format("      %e0 = llvm.extractvalue %d[0] : {}\n"
                                "      %sum0 = func.call @struct_to_acc(%e0) : ({}) -> {}\n",
                                accs, acc, vec);
  for (int64_t a = 0; a < t.accs; ++a) {
    begin += fmt::format("      %a{0} = llvm.insertvalue %s, %a{1}[{1}] : {2}\n", a + 1, a, accs);
    if (a == 0) continue;
    end += fmt::format("      %e{0} = llvm.extractvalue %d[{0}] : {1}\n"
                       "      %v{0} = func.call @struct_to_acc(%e{0}) : ({2}) -> {3}\n"
                       "      %sum{0} = arith.addf %sum{4}, %v{0} : {3}\n",
                       a, accs, acc, vec, a - 1);
  }
  begin += fmt::format("      return %a{} : {}", t.accs, accs);
  end += fmt::format("      return %sum{} : {}", t.accs - 1, vec);
  P["ACC"] = accs;
  P["WGMMA_ACCS_BEGIN"] = begin;
  P["WGMMA_ACCS_END"] = end;
  for (int64_t s = 0; s < 4; ++s) P[fmt::format("WGMMA_ACC_OF_K{}", s)] = fmt::format("{}", s % t.accs);
  P["WGMMA_TYPE"] = c.dtype_weight == DType::kBF16 ? "bf16" : "f16";
}

// The epilogue staged through workgroup memory (mma_tiled.mlir,
// tile_output_places.mlir), where 8-element row pieces are whole 16-byte
// accesses (epilogue_staging_shape). The BM x BN f32 tile lies over the
// stages, which are free after the K loop, in parts (epilogue_parts), part
// i over stage slot i: on gfx950 each slot is its own global, and on sm_90
// the same parts keep the same slots so the H200 runs the split (v75:
// before, gfx950's tile took memory of its own and did not fit beside the
// prefill tiles' stages). Rows EPI_LD = BN + pad
// floats apart, EPI_LD = 8 mod 32: a lane's two neighbouring products go
// out as one 8-byte store, and the 16 lanes of a half warp (4 rows x 4
// lanes) then cover the 32 banks once.
void set_staged_epilogue_params(TemplateParams &P, std::map<std::string, int64_t> &choices, const Contract &c,
                                const TiledTuning &t, int64_t block) {
  const int64_t ld = epilogue_tile_ld(t);
  const EpilogueParts parts = epilogue_parts(t);
  const int64_t per_row = t.bn / 8;
  const int64_t pieces = t.bm * per_row;
  const int64_t pieces_per_thread = (pieces + block - 1) / block;
  const bool staged = epilogue_staging_shape(c, t) && parts.rows > 0 && parts.count <= t.stages;
  // attn loaded before the K loop (4 registers a piece, held across it)
  // unless the accumulators, and with a K split the partials loaded back
  // beside them, leave too few: M = 1024's 192 x 128 split tiles spilled.
  // With a K split every block of a tile loads its pieces, and only the
  // last uses them: v35 measured it worth that at M = 64-128.
  const int64_t acc_registers = t.accs * t.bn * t.bm / block + (t.splits > 1 ? t.bn * t.bm / block : 0);
  // Not in a persistent grid (v79): its code must fit the waves it places
  // (168 registers at gfx950's three 128 x 64 workgroups a CU), and the
  // held pieces spilled there; the other workgroups of the CU cover the
  // epilogue's attn round trip.
  const bool early = staged && acc_registers + 4 * pieces_per_thread <= kEarlyAttnRegisterBudget &&
                     t.persistent_workgroups == 0;
  const int64_t part_count = std::max<int64_t>(1, parts.count), part_rows = std::max<int64_t>(1, parts.rows);
  P["EPI_STAGED"] = staged ? "1" : "0";
  P["EPI_ATTN_EARLY"] = early ? "1" : "0";
  P["EPI_LD"] = fmt::format("{}", ld);
  P["EPI_PARTS"] = fmt::format("{}", part_count);
  P["EPI_PART_ROWS"] = fmt::format("{}", part_rows);
  P["EPI_PART_FLOATS"] = fmt::format("{}", part_rows * ld);
  choices.insert({{"EPI_STAGED", staged}, {"EPI_ATTN_EARLY", early}, {"EPI_PARTS", part_count},
                  {"EPI_PART_ROWS", part_rows}});
  P["EPI_PIECES"] = fmt::format("{}", pieces);
  P["EPI_PIECES_PER_ROW"] = fmt::format("{}", per_row);
  P["EPI_PIECES_PER_THREAD"] = fmt::format("{}", pieces_per_thread);
}

void plan_mma_tiled(KernelPlan &p) {
  const Contract &c = p.contract;
  const bool amd = target_is_amdgpu(c.target);
  const TiledTuning t = tiled_tuning(c, p.tuning.keys);
  const int64_t wave = target_wave_size(c.target);
  const int64_t block = wave * t.waves;
  const int64_t warps_m = t.waves / t.warps_n;
  const int64_t rt = t.bn / (fragment_shape(c.target).tile_w * t.warps_n);
  const int64_t mt = t.bm / (16 * warps_m);
  const int64_t tiles_n = (c.n + t.bn - 1) / t.bn;
  const int64_t tiles_m = (c.m_max + t.bm - 1) / t.bm;
  const int64_t w_cpt = t.bn * (t.bk / 8) / block;
  const int64_t h_cpt = t.bm * (t.bk / 8) / block;
  auto &P = p.params;
  auto set = [&](const char *name, int64_t v) { P[name] = fmt::format("{}", v); };
  set("WAVE", wave);
  set("BLOCK", block);
  set("WARPS_N", t.warps_n);
  set("RT", rt);
  set("MT", mt);
  set("TILES", rt * mt);
  set("BN", t.bn);
  set("BM", t.bm);
  set("ROWS", t.bn + t.bm);
  set("BK", t.bk);
  set("CHUNKS", t.bk / 8);
  set("KSUB", t.bk / 64);
  set("VECS", 2);  // a lane's chunks per row in one 64-K part (KSTEP 64 of the register-streamed form)
  set("STAGES", t.stages);
  // Tiles in flight ahead of the one in use: STAGES - 1, or STAGES - 2
  // with wgmma, whose products of a stage are still running while the next
  // stage's start (the slot refilled is the one used two tiles back).
  // TMA refills the slot of tile i - 1 after tile i's products are issued
  // and tile i - 1's are complete: STAGES - 1 ahead again.
  // With WGMMA_PENDING = 0 the slot of tile i itself is free after its
  // products: STAGES ahead.
  const int64_t ahead = !t.wgmma ? t.stages - 1 : !t.tma ? t.stages - 2 : t.stages - t.wgmma_pending;
  set("STAGES_AHEAD", ahead);
  // In flight while the oldest stage is used: STAGES - 2 later stages, as
  // copy groups (sm_90) or as each thread's loads (gfx950 counts loads).
  set("PENDING", amd ? (ahead - 1) * (w_cpt + h_cpt) : ahead - 1);
  set("STAGES_PENDING", ahead - 1);
  set("KT", c.k / t.bk);
  set("SPLITS", t.splits);
  set("SPLITS_LAST", t.splits - 1);
  P["SPLIT_K"] = t.splits > 1 ? "true" : "false";
  set("TILES_N", tiles_n);
  set("W_CPT", w_cpt);
  set("H_CPT", h_cpt);
  const TiledPollRounds rounds = tiled_poll_rounds(c, t, p.tuning.keys);
  const int64_t round = rounds.split_round, others = rounds.others, poll_round = rounds.poll_round,
                poll_rounds = rounds.rounds;
  set("SPLIT_ROUND", round);
  set("SPLIT_ROUNDS_END", (t.splits + round - 1) / round * round);
  const bool poll = tiled_split_polls(c, t, p.tuning.keys);
  P["SPLIT_POLL"] = poll ? "1" : "0";
  P["WS_INIT"] = poll ? "dense<0.0>" : "uninitialized";
  set("POLL_OTHERS", others);
  set("POLL_OTHERS_LAST", others - 1);
  set("POLL_ROUND", poll_round);
  set("POLL_ROUNDS_END", poll_rounds * poll_round);
  set("TILE_PAIRS", rt * mt * 2);
  set("BLOCK_WAVES", t.waves);
  P["DEVICE_SCOPE"] = amd ? "agent" : "device";  // the poll's accesses (split_poll.mlir)
  // Without a split the workspace is folded away; one element keeps the
  // declarations well-formed.
  set("WS_SIZE", t.splits > 1 ? t.splits * tiles_n * tiles_m * rt * mt * 4 * block : 1);
  set("WS_TILES", t.splits > 1 ? tiles_n * tiles_m : 1);
  set_fragment_params(P, c);
  if (t.wgmma) set_wgmma_params(P, c, t);
  if (t.wgmma) {
    set("WGMMA_PENDING", t.wgmma_pending);
    P["GENERIC_PROXY_COPIES"] = t.tma ? "false" : "true";
  }
  if (!t.wgmma) P["ACC"] = fmt::format("vector<{}x4xf32>", rt * mt);
  P["SWIZZLE_SOURCE"] = amd ? "true" : "false";
  P["KERNEL_ATTRS"] = amd ? "" : fmt::format(", nvvm.minctasm = {} : i32", t.blocks_per_cu);
  P["STAGE_MEMREF"] = fmt::format("memref<{}x{}x{}, strided<[{}, 1], offset: ?>, #gpu.address_space<workgroup>>",
                                  t.bn + t.bm, t.bk, P["T"], t.bk);
  // Where the stages live (templates/stage_pick_*.mlir): sm_90 in the
  // dynamic workgroup memory, a slot per tile i mod STAGES; gfx950 a
  // workgroup global per stage, the K loop unrolled by STAGES so that every
  // slot is a constant.
  set("SLOT_RING", amd || t.gfx950_loop ? t.stages : 1);
  p.body_fragments["PICK_STAGE"] = amd ? "stage_pick_gfx950" : "stage_pick_sm90";
  p.body_fragments["PICK_EPILOGUE_PART"] = amd ? "epilogue_part_gfx950" : "epilogue_part_sm90";
  // What the copies read: two tensor maps passed by value (TMA, made
  // 128-byte grid constants by the mark-tensor-map-args pass), or the
  // weight and hidden memrefs.
  set("STAGE_BYTES", stage_bytes(t));
  if (t.tma) {
    set("BARRIERS", t.stages * stage_bytes(t));
    set("COUNTERS_AFTER_BARRIERS", t.stages * kMbarrierBytes);
    set("WARPGROUPS", t.waves / 4);
  }
  P["REFILL_EARLY"] = t.tma ? "false" : "true";
  // gfx950 refills a slot every tile, past the end with the last tile again
  // (v63): a refill under a branch made the backend wait for every LDS-DMA
  // load in flight before each tile's reads, and the stages never overlapped.
  // sm_90 counts copy groups and keeps the branch; `refill=0|1` overrides
  // (not with TMA, whose repeated copies nothing would wait for).
  const bool refill_always = !t.tma && (p.tuning.has("refill") ? p.tuning.at("refill") != 0 : amd || t.gfx950_loop);
  // v95: where every split has more than STAGES tiles (two rings at least),
  // the ring is laid so that the last tile takes the last slot and that
  // ring is peeled (DRAIN): no copy past the end, so nothing is in flight
  // when the K loop ends and the meeting or the epilogue starts at once;
  // the first positions of the first ring are idle instead (no copy, no
  // wait). Not with two stages: every tile then waits for its own
  // copies alone, and the peeled rings cost gfx950's 128 x 64 prefill tiles
  // their third workgroup a CU (178 VGPRs against 134). `drain=0|1`
  // overrides; an explicit `refill` keeps its own loop (the v72
  // calibration sweeps ran refill=1).
  const int64_t k_tiles = c.k / t.bk;
  const int64_t fewest_tiles = k_tiles / t.splits;  // split SPLITS - 1's
  const bool drain_fits = !t.tma && !t.wgmma && (amd || t.gfx950_loop) && fewest_tiles > t.stages;
  const bool drain_pays = t.stages > 2;
  const bool drain =
      drain_fits && (p.tuning.has("drain") ? p.tuning.at("drain") != 0 : drain_pays && !p.tuning.has("refill"));
  P["REFILL_ALWAYS"] = refill_always && !drain ? "true" : "false";
  P["DRAIN"] = drain ? "true" : "false";
  // Where the splits divide the K tiles evenly, every split has the same
  // idle positions: a constant, so the first ring's checks fold away
  // (N = 1536 M = 512 / 1024: 166 / 186 -> 146 VGPRs). Uneven splits keep
  // them dynamic (a first ring for each count measured 200-226 VGPRs
  // against 158-206).
  const bool even_split = k_tiles % t.splits == 0;
  P["DRAIN_S0_KNOWN"] = even_split ? "true" : "false";
  set("DRAIN_S0", even_split ? (t.stages - fewest_tiles % t.stages) % t.stages : 0);
  // gfx950's wait for a tile with `younger` tiles issued after it: a case
  // each (this thread's loads of that many stages), none for 0.
  std::string wait_cases;
  for (int64_t y = 1; y < ahead; ++y)
    wait_cases += fmt::format("      case {} {{\n        amdgpu.memory_counter_wait load({})\n        scf.yield\n      }}\n",
                              y, y * (w_cpt + h_cpt));
  if (amd) P["WAIT_YOUNGER_CASES"] = wait_cases;
  if (t.tma) {
    P["COPY_ARGS"] = ", %w_src: !llvm.ptr, %h_src: !llvm.ptr";
    P["COPY_SRC"] = "!llvm.ptr";
    P["KERNEL_ATTRS"] += fmt::format(", gatejit.tensor_maps = {} : i32", kTensorMapArgCount);
  } else {
    P["COPY_ARGS"] = "";
    P["COPY_SRC"] = fmt::format("memref<?x{}, #gpu.address_space<global>>", P["T"]);
  }
  p.body_fragments["COPY_SOURCES"] = t.tma ? "copy_sources_tensor_map" : "copy_sources_memref";
  set_staged_epilogue_params(P, p.tuning_choices, c, t, block);
  p.template_file = "mma_tiled";
  P["PERSISTENT"] = t.persistent_workgroups > 0 ? "true" : "false";
  set("DIES", t.dies);
  set("TILE_GROUP_M", t.tile_group_m);
  set("PERSISTENT_WORKGROUPS", t.persistent_workgroups);
  p.snippets = {fragment_snippet(c.target), "tile_output_places", "split_arrival", "split_poll", "split_poll_tile",
                "tile_order", fallback_mark_snippet(c.target)};
  if (t.tma) p.snippets.push_back("async_copy_sm90_tma");
  else p.snippets.insert(p.snippets.end(), {amd ? "async_copy_gfx950" : "async_copy_sm90", "stage_copy_chunks"});
  if (t.wgmma) p.snippets.push_back("tile_products_wgmma");
  else p.snippets.insert(p.snippets.end(), {"mma_tiles", "tile_products_fragments"});
  p.tuning_choices.insert({{"BN", t.bn},
                           {"BM", t.bm},
                           {"BK", t.bk},
                           {"STAGES", t.stages},
                           {"SPLITS", t.splits},
                           {"WARPS_N", t.warps_n},
                           {"WGMMA", t.wgmma},
                           {"TMA", t.tma},
                           {"WGMMA_PENDING", t.wgmma_pending},
                           {"ACCS", t.accs},
                           {"PERSISTENT_WORKGROUPS", t.persistent_workgroups},
                           {"TILE_GROUP_M", t.tile_group_m},
                           {"SPLIT_ROUND", round},
                           {"SPLIT_POLL", poll}});
  // Dynamic workgroup memory: the stages on sm_90; on gfx950 (stages in
  // globals, counted in the code object's LDS) the K-split flag alone.
  const int64_t dynamic_bytes = !amd ? t.stages * stage_bytes(t) + (t.tma ? t.stages * kStageBarrierBytes : 0)
                                     : (t.splits > 1 ? 16 : 0);
  p.geometry = {uint32_t(block), uint32_t(t.bn), false, uint32_t(t.bm), uint32_t(t.splits), uint32_t(dynamic_bytes)};
  if (t.tma) p.geometry.tensor_maps = {uint32_t(t.bk), uint32_t(t.bn), uint32_t(t.bm)};
  p.geometry.persistent_workgroups = uint32_t(t.persistent_workgroups);
  p.facts = {.form = "mma_tiled", .weight_rows_per_block = t.bn, .hidden_rows_per_block = t.bm,
             .splits = t.splits, .split_poll = poll, .stages_ahead = ahead, .stage_bytes = stage_bytes(t),
             .reduction_rounds = t.splits <= 1 ? 0 : poll ? poll_rounds : (t.splits + round - 1) / round,
             .matrix = true,
             .warpgroup_matrix = t.wgmma,
             // Fragments: each weight row of a stage is read by the WARPS_M
             // warps of its column, each hidden row by the WARPS_N of its row,
             // over the K tiles of the busiest split.
             .shared_operand_bytes = t.wgmma ? 0
                                             : (warps_m * t.bn * t.weight_bytes + t.warps_n * t.bm * t.hidden_bytes) *
                                                   ((c.k / t.bk + t.splits - 1) / t.splits * t.bk)};
}

void plan_generic(KernelPlan &p) {
  p.params["BLOCK"] = fmt::format("{}", kGenericBlock);
  // Nominal extent: sizes arrive at launch; 2^40 elements bounds every index.
  p.params["SPAN"] = "1099511627776";
  // K arrives at launch: the kernel computes its 128-wide blocks (%scale_kb).
  set_weight_params(p.params, p.contract, p.params["SPAN"]);
  p.snippets = weight_snippets(p.contract, "weight_element");
  set_out_params(p, p.params["SPAN"], kGenericBlock, 1, kGenericBlock);
  p.geometry = {uint32_t(kGenericBlock), uint32_t(kGenericBlock), true};
  p.facts = {.form = "generic"};
}


// Where the gemv and mma epilogues load attn (v51): 0 in the epilogue, 1
// right after the main loop (in flight while the block reduces), 2 before
// the loop (off the critical path, but held across it). attn does not depend
// on the sums, so its round trip need not wait for them.
// - gfx9: 2. The model drops the epilogue's attn round trip (gfx950 N = 1536
//   M = 1 5.87 -> 5.30 µs, M = 8 5.90 -> 5.32) for 0-2 VGPRs; 1 made LLVM
//   hold up to 180 VGPRs through the reduction. Plans scheduled for the most
//   waves a SIMD (64 VGPRs, which LLVM fills) keep 0 above M = 1: the held
//   values cost them a wave (N = 12288, M = 2: 65 VGPRs).
// - sm_90, measured (one sweep, docs/perf-notes.md v51): 1, except the mma
//   with one step in flight (UNROLL 1, N = 1536 M = 16: 9.49 µs with 2, 10.34
//   with 1, 10.52 with 0). 2 elsewhere cost 0.2-3.5 µs where ptxas sits at
//   the register budget (N = 3072 and 12288, the gemv at M >= 4).
// With a K split any block of the row tile may finish: the epilogue loads
// attn after the meeting.
void plan_attn_load(KernelPlan &p) {
  if (p.facts.form != "gemv" && p.facts.form != "mma") return;  // the tiled form has its own epilogue
  const TargetInfo &t = target_info(p.contract.target);
  int64_t at = 1;
  if (t.amdgpu) {
    at = p.max_waves_per_simd >= t.max_waves_per_simd && p.contract.m_max > 1 ? 0 : 2;
  } else {
    const auto unroll = p.params.find("UNROLL");
    if (p.facts.form == "mma" && unroll != p.params.end() && unroll->second == "1") at = 2;
  }
  if (p.tuning.has("attn")) at = std::clamp<int64_t>(p.tuning.at("attn"), 0, 2);
  if (p.facts.splits > 1) at = 0;
  p.params["ATTN_AFTER_LOOP"] = at == 1 ? "true" : "false";
  p.params["ATTN_BEFORE_LOOP"] = at == 2 ? "true" : "false";
  // sm_90, attn loaded after the main loop: its lines asked into L2 at the
  // kernel's start (v69, measured twice in one session, µs). The mma at N =
  // 3072 gained at M = 1 (13.07 -> 12.70) and M = 16 (14.45 -> 13.77); it
  // lost 0.5-0.8% at M = 2-8 there, 1.3% in the gemv at N = 1536 M = 1, and
  // 0.7-1.3% at N = 1536 M = 8 and N = 12288 M = 16. Only the measured kind
  // takes it: a fixed M of 1 or 9-16, 2048 < N <= 3072, 16-bit weight and
  // out (prefetch=0|1 overrides; ignored where attn is loaded before the
  // loop).
  const Contract &c = p.contract;
  bool prefetch = p.facts.form == "mma" && c.n > 2048 && c.n <= 3072 && !c.m_dynamic &&
                  (c.m_max == 1 || (c.m_max > 8 && c.m_max <= 16)) && c.dtype_weight != DType::kFP8E4M3 &&
                  !c.fp8_out();
  if (p.tuning.has("prefetch")) prefetch = p.tuning.at("prefetch") != 0;
  prefetch = prefetch && c.target == Target::kSm90 && at != 2;
  p.params["ATTN_PREFETCH"] = prefetch ? "true" : "false";
}

// AMDGPU kernels are scheduled for the waves per SIMD their grid places
// (issue 16; docs/gfx950-model.md): LLVM otherwise schedules for the most
// waves a SIMD can hold, reuses the load registers and keeps few loads in
// flight, although the grid never places those waves (the gfx950 gemv at
// M = 16: one wave per SIMD, each hidden load waited for alone).
void plan_occupancy(KernelPlan &p, int64_t m) {
  const TargetInfo &t = target_info(p.contract.target);
  if (!t.amdgpu || p.kind == TemplateKind::kGeneric) return;
  const LaunchGeometry &g = p.geometry;
  const std::array<uint32_t, 3> grid = g.launch_grid(p.contract.n, m);
  const int64_t workgroups = int64_t(grid[0]) * grid[1] * grid[2];
  p.max_waves_per_simd = std::clamp<int64_t>(waves_per_simd_placed(t, workgroups, g.block_x), 1, t.max_waves_per_simd);
  p.tuning_choices["WAVES_PER_EU"] = p.max_waves_per_simd;
  if (g.persistent_workgroups > 0 || p.grid_resident) {
    p.min_waves_per_simd = p.max_waves_per_simd;
    p.tuning_choices["MIN_WAVES_PER_EU"] = p.min_waves_per_simd;
  }
}

}  // namespace

StatusOr<KernelPlan> plan_kernel(const Contract &c, const TuningOverride &tuning) {
  auto choice = choose_template(c);
  if (!choice.ok()) return choice.status();
  KernelPlan p;
  p.kind = choice->kind;
  p.reason = choice->reason;
  p.contract = choice->contract;
  p.tuning = tuning;
  // An fp8 weight and its scale kind are in the name: "gatejit_gemv_bf16_wfp8_e4m3_block128_sigmoid_boundary".
  const std::string weight = c.dtype_weight == c.dtype()
                                 ? std::string()
                                 : fmt::format("_w{}_{}", dtype_name(c.dtype_weight), weight_scale_name(c.weight_scale));
  // And an fp8 out's: "..._ofp8_e4m3_per_token_group128".
  const std::string out =
      c.fp8_out() ? fmt::format("_o{}_{}", dtype_name(c.dtype_out), out_scale_name(c.out_scale)) : std::string();
  p.symbol = fmt::format("gatejit_{}_{}{}{}_{}_{}", template_name(p.kind), dtype_name(c.dtype()), weight, out,
                         activation_name(c.act), rounding_name(c.rounding));
  p.params["SYMBOL"] = p.symbol;
  p.template_file = template_name(p.kind);
  p.params["T"] = mlir_type(c.dtype());
  p.params["T_OUT"] = mlir_type(c.dtype());  // the shaped forms' set_out_params: i8 for an fp8 out
  switch (p.kind) {
    case TemplateKind::kGemv:
      plan_problem(p);
      plan_gemv(p);
      break;
    case TemplateKind::kMma:
      plan_problem(p);
      if (mma_tiled_applies(p.contract, p.tuning.keys)) plan_mma_tiled(p);
      else plan_mma(p);
      break;
    default: plan_generic(p); break;
  }
  plan_occupancy(p, c.m_dynamic ? c.m_max : c.m);
  plan_attn_load(p);
  if (c.fp8_out() && p.kind != TemplateKind::kGeneric) {
    const int64_t cols = p.facts.weight_rows_per_block;  // the block's output columns (OUT_BLOCK_COLS)
    if (kOutGroup % cols != 0)
      return internal_error(fmt::format("plan: {} workgroups of {} output columns do not tile the fp8 out's "
                                        "128-column groups", p.symbol, cols));
  }
  p.abi = gate_abi(p.geometry.tensor_maps.any(), c.weight_scale != WeightScale::kNone, c.fp8_out());
  return p;
}

}  // namespace gatejit::compiler
