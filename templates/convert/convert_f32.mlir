// kind: snippet
    // Storage <-> fp32 for f32 storage: the identity.
    func.func private @to_f32(%x: f32) -> f32 {
      return %x : f32
    }
    func.func private @from_f32(%x: f32) -> f32 {
      return %x : f32
    }
