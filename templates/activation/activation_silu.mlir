// kind: snippet
    // act = silu(x) = x * sigmoid(x) (SwiGLU-style gates).
    func.func private @activation(%x: f32) -> f32 {
      %s = func.call @sigmoid(%x) : (f32) -> f32
      %y = arith.mulf %x, %s : f32
      return %y : f32
    }
