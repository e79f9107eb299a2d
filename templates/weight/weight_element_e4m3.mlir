// kind: snippet
// param SCALE_PARAM: the weight snippets' scale parameters: the scales and their K blocks (empty for 16-bit weights)
// param S_SIZE: elements of an fp8 weight's scale memref
    // One e4m3 weight element of the generic kernel, decoded exactly to fp32,
    // times its scale in fp32 (the contract's dequantised weight).
    func.func private @weight_to_f32(%w: i8, %col: index, %k: index${SCALE_PARAM}) -> f32 {
      %z = arith.constant dense<0> : vector<4xi8>
      %v = vector.insert %w, %z[0] : i8 into vector<4xi8>
      %f = func.call @decode_e4m3x4(%v) : (vector<4xi8>) -> vector<4xf32>
      %x = vector.extract %f[0] : f32 from vector<4xf32>
      %at = func.call @scale_index(%col, %k, %scale_kb) : (index, index, index) -> index
      %s = memref.load %weight_scale[%at] : memref<${S_SIZE}xf32, #gpu.address_space<global>>
      %r = arith.mulf %x, %s : f32
      return %r : f32
    }
