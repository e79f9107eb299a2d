// What the runtime knows of the kernel templates: which of them can serve a
// contract at all (its layout, the target's instructions, the gemv's rows).
// Which one serves it best is the compiler's decision alone (the crossover
// in its per-target tuning tables, compiler/src/plan/form_choice.cpp); the
// runtime finds a kernel by the contract as asked, whichever form built it.
#pragma once

#include <optional>
#include <string>

#include "gatejit/contract.h"

namespace gatejit {

// The gemv template's most hidden rows (its accumulators); the mma template
// serves any M (grid y tiles M past one block's rows), on sm_90 and gfx950.
inline constexpr int64_t kGemvMaxM = 16;

// Whether `target` has the mma template's instruction (gfx942's MFMA shapes
// differ: no mma there).
bool mma_available(Target target);

// Why the specialised template `kind` (gemv or mma) cannot serve `c` (the
// layout first: it is what the caller can change), or nothing when it can.
// `c` must be normalised.
std::optional<std::string> template_refusal(const Contract &c, TemplateKind kind);

// Why no specialised template can serve `c` (each reason once, the mma's
// first where M is past the gemv's rows), or nothing when one can.
std::optional<std::string> specialised_refusal(const Contract &c);

// Whether a contract that asks for a template (`template = gemv | mma`) can
// have it: an invalid_argument naming the template and why not, else ok.
Status check_requested_template(const Contract &c);

// The shape-agnostic contract of the generic kernel that can serve `c`.
Contract generic_contract_for(const Contract &c);

}  // namespace gatejit
