// Template parameters every shaped form shares: the problem's sizes, the
// weight's and the out's entry points, the epilogue's pieces, the target's
// snippets. Each form's *_params.cpp adds its own.
#pragma once

#include <string>
#include <vector>

#include "gatejit/contract.h"
#include "kernel_plan.h"

namespace gatejit::compiler {

const char *mlir_type(DType d);

// The problem as the shaped templates see it: N, the epilogue's strides and
// each buffer's extent.
void set_problem_params(TemplateParams &P, const Contract &c);
// What the forms that read the operands by address take besides: their
// strides and the last weight row (not the TMA form: its tensor maps carry them).
void set_operand_params(TemplateParams &P, const Contract &c);
// The weight's types and scale arguments; `scale_extent`: the scale buffer's
// elements as the kernel declares them.
void set_weight_params(TemplateParams &P, const Contract &c, const std::string &scale_extent);
// ... and, for the forms that stream a shaped contract's weight, its count
// of 128-wide K blocks and a zero of its storage type.
void set_streamed_weight_params(TemplateParams &P, const Contract &c);
// The out's epilogue entry points; `block_cols` x `row_block` outputs a
// workgroup of `threads` finishes (shaped forms).
void set_out_params(KernelPlan &p, const std::string &scale_extent, int64_t block_cols, int64_t row_block,
                    int64_t threads);
// templates/epilogue_pieces.mlir: pieces of `vw` columns.
void set_piece_params(TemplateParams &P, const Contract &c, int64_t vw);
// The matrix fragment's shape and types (mma_sm90 / mma_gfx950).
void set_fragment_params(TemplateParams &P, const Contract &c);

// The snippets that read the weight (16-bit as it is, or e4m3 decoded and scaled).
std::vector<std::string> weight_snippets(const Contract &c, const char *element_snippet);
const char *decode_e4m3_snippet(Target t);
const char *prefetch_snippet(Target t);
const char *fragment_snippet(Target t);
const char *fallback_mark_snippet(Target t);

}  // namespace gatejit::compiler
