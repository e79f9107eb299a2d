#include "op_table.h"

#include "launch.h"

namespace gatejit::emulator {

const OpTable &op_table() {
  static const OpTable table = [] {
    OpTable t;
    add_scalar_ops(t);
    add_vector_int_ops(t);
    add_vector_float_ops(t);
    add_packed_ops(t);
    add_matrix_ops(t);
    add_lds_ops(t);
    add_memory_ops(t);
    return t;
  }();
  return table;
}

void op_unimplemented(Wave &w, const Inst &in) {
  fail("instruction not implemented by the emulator: " + w.launch->program->mnemonics[in.mnemonic_id] +
       " (" + w.launch->program->texts[in.text_id] + ")");
}

}  // namespace gatejit::emulator
