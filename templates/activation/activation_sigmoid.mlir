// kind: snippet
    // act = sigmoid (the Kimi-K3 MLA output gate).
    func.func private @activation(%x: f32) -> f32 {
      %s = func.call @sigmoid(%x) : (f32) -> f32
      return %s : f32
    }
