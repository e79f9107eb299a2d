// kind: snippet
// param T_WEIGHT: the weight's storage type (the 16-bit type, or i8 for e4m3)
// param SCALE_PARAM: the weight snippets' scale parameters: the scales and their K blocks (empty for 16-bit weights)
    // One weight element of the generic kernel, to fp32 (16/32-bit storage).
    func.func private @weight_to_f32(%w: ${T_WEIGHT}, %col: index, %k: index${SCALE_PARAM}) -> f32 {
      %f = func.call @to_f32(%w) : (${T_WEIGHT}) -> f32
      return %f : f32
    }
