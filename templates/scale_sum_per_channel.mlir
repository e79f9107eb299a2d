    // Per-channel scales multiply the finished fp32 sum of column `col` (in
    // bounds: callers clamp it) once, not every weight.
    func.func private @scale_sum(%dot: f32, %col: index${SCALE_PARAM}) -> f32 {
      %s = memref.load %weight_scale[%col] : memref<${S_SIZE}xf32, #gpu.address_space<global>>
      %r = arith.mulf %dot, %s : f32
      return %r : f32
    }
