    // One e4m3 weight element of the generic kernel, decoded exactly to fp32
    // (per-channel scales multiply the finished sum: @scale_sum).
    func.func private @weight_to_f32(%w: i8, %col: index, %k: index${SCALE_PARAM}) -> f32 {
      %z = arith.constant dense<0> : vector<4xi8>
      %v = vector.insert %w, %z[0] : i8 into vector<4xi8>
      %f = func.call @decode_e4m3x4(%v) : (vector<4xi8>) -> vector<4xf32>
      %x = vector.extract %f[0] : f32 from vector<4xf32>
      return %x : f32
    }
