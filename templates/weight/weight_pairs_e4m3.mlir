// kind: snippet
// param VEC: elements of a 16-byte weight vector (hidden: as many)
// param SCALE_PARAM: the weight snippets' scale parameters: the scales and their K blocks (empty for 16-bit weights)
// param PAIRS: element pairs of a 16-byte vector: VEC / 2
// param QUADS: groups of four elements of a 16-byte e4m3 vector: VEC / 4
// param S_SIZE: elements of an fp8 weight's scale memref
    // A 16-byte vector of e4m3 weights, decoded exactly to fp32 four at a
    // time (@decode_e4m3x4, the target's conversion), times its scale in
    // fp32: the contract's dequantised weight fl32(e4m3 x scale). The vector
    // lies in one 128-wide K block (K offsets are multiples of 16), so one
    // scale serves it (@scale_index: per channel, or per 128 x 128 block; a
    // per-channel index does not depend on k0, and LLVM hoists its load out
    // of the K loop).
    func.func private @weight_pairs(%w: vector<${VEC}xi8>, %col: index, %k0: index${SCALE_PARAM})
        -> vector<${PAIRS}x2xf32> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %quads = arith.constant ${QUADS} : index
      %w4 = vector.shape_cast %w : vector<${VEC}xi8> to vector<${QUADS}x4xi8>
      %zero = arith.constant dense<0.0> : vector<${QUADS}x4xf32>
      %d = scf.for %q = %c0 to %quads step %c1 iter_args(%acc = %zero) -> (vector<${QUADS}x4xf32>) {
        %x = vector.extract %w4[%q] : vector<4xi8> from vector<${QUADS}x4xi8>
        %f = func.call @decode_e4m3x4(%x) : (vector<4xi8>) -> vector<4xf32>
        %acc2 = vector.insert %f, %acc[%q] : vector<4xf32> into vector<${QUADS}x4xf32>
        scf.yield %acc2 : vector<${QUADS}x4xf32>
      } {gatejit.unroll}
      %at = func.call @scale_index(%col, %k0, %scale_kb) : (index, index, index) -> index
      %s = memref.load %weight_scale[%at] : memref<${S_SIZE}xf32, #gpu.address_space<global>>
      %sv = vector.broadcast %s : f32 to vector<${QUADS}x4xf32>
      %scaled = arith.mulf %d, %sv : vector<${QUADS}x4xf32>
      %p = vector.shape_cast %scaled : vector<${QUADS}x4xf32> to vector<${PAIRS}x2xf32>
      return %p : vector<${PAIRS}x2xf32>
    }
