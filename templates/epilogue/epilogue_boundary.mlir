// kind: snippet
// param T: the contract's element type: hidden, attn and the gated value (bf16 | f16 | f32)
    // Epilogue, rounding policy "boundary": exactly the unfused PyTorch
    // expression act(linear(h, W)) * attn in storage dtype ${T}:
    // the projection, the activation and the product are each rounded to ${T};
    // each step computes in fp32 from the rounded operands.
    func.func private @gate_epilogue(%dot: f32, %attn: ${T}) -> ${T} {
      %proj = func.call @from_f32(%dot) : (f32) -> ${T}
      %proj_f = func.call @to_f32(%proj) : (${T}) -> f32
      %g = func.call @activation(%proj_f) : (f32) -> f32
      %g_t = func.call @from_f32(%g) : (f32) -> ${T}
      %g_f = func.call @to_f32(%g_t) : (${T}) -> f32
      %attn_f = func.call @to_f32(%attn) : (${T}) -> f32
      %prod = arith.mulf %g_f, %attn_f : f32
      %out = func.call @from_f32(%prod) : (f32) -> ${T}
      return %out : ${T}
    }
