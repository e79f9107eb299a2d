// kind: snippet
// param T: the contract's element type: hidden, attn and the gated value (bf16 | f16 | f32)
    // Epilogue, rounding policy "fused": fp32 from the accumulator to the
    // store, one rounding to ${T} at the end. (For f32 storage this is also
    // what "boundary" means: every rounding to f32 is the identity.)
    func.func private @gate_epilogue(%dot: f32, %attn: ${T}) -> ${T} {
      %g = func.call @activation(%dot) : (f32) -> f32
      %attn_f = func.call @to_f32(%attn) : (${T}) -> f32
      %prod = arith.mulf %g, %attn_f : f32
      %out = func.call @from_f32(%prod) : (f32) -> ${T}
      return %out : ${T}
    }
