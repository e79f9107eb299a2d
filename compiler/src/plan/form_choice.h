// Which kernel template serves a contract, and why: of the templates that
// can serve it (the runtime's capabilities, template_choice.h), the one the
// target's tuning table prefers (rule "form"; gfx9's thin grid rows, rule
// "thin_rows", decide the decode M it hands to the mma). The only place the
// form is decided: the runtime finds kernels by the contract as asked.
#pragma once

#include <string>

#include "gatejit/contract.h"

namespace gatejit::compiler {

struct TemplateChoice {
  TemplateKind kind = TemplateKind::kGeneric;
  std::string reason;  // one sentence: why this template
  Contract contract;   // what gets compiled: for generic, the shape-free contract
};

// `c` must be normalised. A forced template that cannot serve the contract is
// an invalid_argument error; kAuto always succeeds.
StatusOr<TemplateChoice> choose_template(const Contract &c);

// The contract a compiled kernel of `asked` is stored and found under: the
// contract as asked, whichever form the crossover picked (a bundle finds its
// kernel whatever crossover built it), or the generic kernel's own contract
// where no specialised template can serve it. The binary records its form
// in its contract text.
inline Contract keyed_contract(const Contract &asked, const TemplateChoice &choice) {
  return choice.kind == TemplateKind::kGeneric ? choice.contract : asked;
}

// The thin grid rows (the table's rule "thin_rows"): the mma's grid rows,
// one matrix tile of columns a workgroup, that fill every CU, where at most
// most_rows do and more than one is needed, and K is one they serve; 0
// otherwise, and on a target whose table has no such rule.
int64_t thin_grid_rows(Target t, int64_t n, int64_t k);
// Whether `rows` grid rows of ceil(m / rows) hidden rows each stay within
// the rule's rows past its K limit (always, up to it).
bool thin_rows_hold(Target t, int64_t k, int64_t m, int64_t rows);
// Whether the gemv's largest decode M takes the thin grid rows instead: K
// long enough and the rows' grid one workgroup a CU.
bool thin_decode(Target t, int64_t n, int64_t k);
// The fewest and the most hidden rows the thin grid rows serve (0: none on
// this target).
int64_t thin_rows_from_m(Target t);
int64_t thin_rows_most_m(Target t);

}  // namespace gatejit::compiler
