    // One weight element of the generic kernel, to fp32 (16/32-bit storage).
    func.func private @weight_to_f32(%w: ${T_WEIGHT}, %col: index, %k: index${SCALE_PARAM}) -> f32 {
      %f = func.call @to_f32(%w) : (${T_WEIGHT}) -> f32
      return %f : f32
    }
