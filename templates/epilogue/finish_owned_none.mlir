// kind: snippet
// param OWN: accumulator elements a wave finishes: ceil(ELEMENTS / KSPLIT)
// param A_SIZE: elements of the attn memref
// param O_SIZE: elements of the out memref
// param T: the contract's element type: hidden, attn and the gated value (bf16 | f16 | f32)
// param T_OUT: the element type of out (T, or i8 for an fp8 out)
    // The mma's element-wise finish is off (ELEMENT_FINISH false: the block
    // finishes its sums in pieces, epilogue_pieces.mlir); the kernel's
    // branch that would call these folds away.
    func.func private @load_owned_attn(%attn: memref<${A_SIZE}x${T}, #gpu.address_space<global>>,
                                       %kp: index, %lane: index, %wrow0: index, %mrow0: index, %m_i: index)
        -> vector<${OWN}x${T}> {
      %az = arith.constant dense<0.0> : vector<${OWN}x${T}>
      return %az : vector<${OWN}x${T}>
    }
    func.func private @finish_owned(%out: memref<${O_SIZE}x${T_OUT}, #gpu.address_space<global>>,
                                    %dots: vector<${OWN}xf32>, %a: vector<${OWN}x${T}>,
                                    %kp: index, %lane: index, %wrow0: index, %mrow0: index, %m_i: index) {
      return
    }
