#include "plan/template_params.h"

#include <fmt/format.h>

#include <algorithm>

#include "gatejit/target_info.h"
#include "plan/fragment.h"

namespace gatejit::compiler {

const char *mlir_type(DType d) {
  switch (d) {
    case DType::kBF16: return "bf16";
    case DType::kF16: return "f16";
    case DType::kF32: return "f32";
    case DType::kFP8E4M3: return "i8";  // the storage byte; the weight snippets decode it
  }
  return "?";
}

void set_problem_params(TemplateParams &P, const Contract &c) {
  auto set = [&](const char *name, int64_t v) { P[name] = fmt::format("{}", v); };
  set("N", c.n);
  set("LDA", c.ld_attn);
  set("LDO", c.ld_out);
  set("H_SIZE", (c.m_max - 1) * c.ld_hidden + c.k);
  set("W_SIZE", (c.n - 1) * c.ld_weight + c.k);
  set("A_SIZE", (c.m_max - 1) * c.ld_attn + c.n);
  set("O_SIZE", (c.m_max - 1) * c.ld_out + c.n);
}

void set_operand_params(TemplateParams &P, const Contract &c) {
  P["N_LAST"] = fmt::format("{}", c.n - 1);
  P["LDH"] = fmt::format("{}", c.ld_hidden);
  P["LDW"] = fmt::format("{}", c.ld_weight);
}

// An fp8 weight's scales are the kernel's last argument, passed on with the
// number of 128-wide K blocks; 16-bit weights keep the classic argument list.
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

void set_streamed_weight_params(TemplateParams &P, const Contract &c) {
  set_weight_params(P, c, fmt::format("{}", std::max<int64_t>(1, weight_scale_count(c))));
  P["SCALE_KB"] = fmt::format("{}", scale_blocks(c.k));
  P["W_ZERO"] = c.dtype_weight == DType::kFP8E4M3 ? "0" : "0.0";
}

// An out in attn's dtype stores each output; an fp8 out stages them and
// quantises each group of 128 columns once it is complete.
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
  // The rest is the fp8 out's: its snippets' parameters.
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
    // The band's quantisation, every row of the block's band read at once:
    // 4 values a lane where one pass holds the block's rows (a shorter
    // quantisation: 16 lanes of 8 measured slower at M <= 16), else 8
    // (16 bytes, more rows a pass).
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

// The piece width and whether the strides keep every row's pieces aligned
// (M = 1 has no second row).
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

std::vector<std::string> weight_snippets(const Contract &c, const char *element_snippet) {
  const std::string base = element_snippet;
  if (c.weight_scale == WeightScale::kNone) return {base + "_plain"};
  return {base + "_e4m3", c.weight_scale == WeightScale::kPerChannel ? "scale_index_per_channel" : "scale_index_block128",
          decode_e4m3_snippet(c.target)};
}

// The target's exact e4m3 conversion (@decode_e4m3x4).
const char *decode_e4m3_snippet(Target t) { return target_is_amdgpu(t) ? "decode_e4m3_gfx950" : "decode_e4m3_sm90"; }
// The target's @prefetch_l2: PTX's L2 prefetch on sm_90, nothing on gfx9.
const char *prefetch_snippet(Target t) { return t == Target::kSm90 ? "prefetch_l2_sm90" : "prefetch_l2_none"; }
// The per-target fragment snippet of both mma forms.
const char *fragment_snippet(Target t) { return target_is_amdgpu(t) ? "mma_gfx950" : "mma_sm90"; }
// The target's @element_wise_fallback: a mark the code facts find in the code object.
const char *fallback_mark_snippet(Target t) {
  return target_is_amdgpu(t) ? "fallback_mark_amdgcn" : "fallback_mark_nvptx";
}

}  // namespace gatejit::compiler
