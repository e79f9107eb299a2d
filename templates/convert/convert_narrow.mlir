// kind: snippet
// param T: the contract's element type: hidden, attn and the gated value (bf16 | f16 | f32)
    // Storage <-> fp32 for 16-bit storage types: exact widening, and
    // round-to-nearest-even narrowing (what PyTorch's .to(dtype) does).
    func.func private @to_f32(%x: ${T}) -> f32 {
      %y = arith.extf %x : ${T} to f32
      return %y : f32
    }
    func.func private @from_f32(%x: f32) -> ${T} {
      %y = arith.truncf %x : f32 to ${T}
      return %y : ${T}
    }
