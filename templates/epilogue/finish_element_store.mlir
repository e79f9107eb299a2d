// kind: snippet
// param SPAN: the generic kernel's nominal extent of every buffer (sizes come at launch)
// param T_OUT: the element type of out (T, or i8 for an fp8 out)
// param T: the contract's element type: hidden, attn and the gated value (bf16 | f16 | f32)
    // The generic template's epilogue entry points for an out in attn's
    // dtype: each thread stores its own output (@finish_element, called
    // under the thread's bounds check) and nothing waits for the workgroup
    // (@finish_elements, called by every thread).
    func.func private @finish_element(%out: memref<${SPAN}x${T_OUT}, #gpu.address_space<global>>, %o: ${T},
                                      %o_idx: index, %tid: index) {
      memref.store %o, %out[%o_idx] : memref<${SPAN}x${T_OUT}, #gpu.address_space<global>>
      return
    }
    func.func private @finish_elements(%out: memref<${SPAN}x${T_OUT}, #gpu.address_space<global>>, %tid: index,
                                       %ok: i1, %o_idx: index, %row: index, %col: index, %n: index) {
      return
    }
