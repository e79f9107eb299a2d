// kind: snippet
// param O_SIZE: elements of the out memref
// param T_OUT: the element type of out (T, or i8 for an fp8 out)
    // @out_groups_done for an out in attn's dtype: every output is final
    // once @finish_piece stored it.
    func.func private @out_groups_done(%out: memref<${O_SIZE}x${T_OUT}, #gpu.address_space<global>>,
                                       %tid: index, %col0: index, %mrow0: index, %m_i: index) {
      return
    }
