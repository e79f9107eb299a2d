    // One e4m3 weight element of the generic kernel times its 128 x 128
    // block's scale, in fp32 (the contract's dequantised weight).
    func.func private @weight_to_f32(%w: i8, %col: index, %k: index${SCALE_PARAM}) -> f32 {
      %block = arith.constant 128 : index
      %z = arith.constant dense<0> : vector<4xi8>
      %v = vector.insert %w, %z[0] : i8 into vector<4xi8>
      %f = func.call @decode_e4m3x4(%v) : (vector<4xi8>) -> vector<4xf32>
      %x = vector.extract %f[0] : f32 from vector<4xf32>
      %nb = arith.divui %col, %block : index
      %kb = arith.divui %k, %block : index
      %row = arith.muli %nb, %scale_kb : index
      %at = arith.addi %row, %kb : index
      %s = memref.load %weight_scale[%at] : memref<${S_SIZE}xf32, #gpu.address_space<global>>
      %r = arith.mulf %x, %s : f32
      return %r : f32
    }
