    // The finished fp32 sum of column `col` needs no scale: 16-bit weights,
    // or scales applied to the weights themselves (block128).
    func.func private @scale_sum(%dot: f32, %col: index${SCALE_PARAM}) -> f32 {
      return %dot : f32
    }
