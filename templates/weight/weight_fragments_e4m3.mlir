// kind: snippet
// param RT: weight tiles a wave (TILE_W rows each)
// param VECS: 16-byte vectors a lane takes of each row in one step
// param T_WEIGHT: the weight's storage type (the 16-bit type, or i8 for e4m3)
// param MT: hidden tiles a wave (16 rows each)
// param H_LOADS: 16-byte hidden loads a lane makes for one hidden tile
// param T: the contract's element type: hidden, attn and the gated value (bf16 | f16 | f32)
// param TILES: tiles a wave multiplies: RT x MT
    // One K step of the mma form with an e4m3 weight: each lane's 8-byte
    // vectors decoded exactly to the hidden's type (every e4m3 value is a
    // bf16 and an f16 value), then the step's products and their scales
    // (@accumulate_decoded: per channel on the finished sums, per 128 x 128
    // block on each step's products, with the scales @step_scales loaded).
    func.func private @accumulate_step(%w: vector<${RT}x${VECS}x8x${T_WEIGHT}>, %h: vector<${MT}x${VECS}x${H_LOADS}x8x${T}>,
                                       %acc: vector<${TILES}x4xf32>, %scales: vector<${RT}xf32>) -> vector<${TILES}x4xf32> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %rt = arith.constant ${RT} : index
      %vecs = arith.constant ${VECS} : index
      %dzero = arith.constant dense<0.0> : vector<${RT}x${VECS}x8x${T}>
      %decoded = scf.for %r = %c0 to %rt step %c1 iter_args(%d = %dzero) -> (vector<${RT}x${VECS}x8x${T}>) {
        %d_r = scf.for %v = %c0 to %vecs step %c1 iter_args(%dv = %d) -> (vector<${RT}x${VECS}x8x${T}>) {
          %x = vector.extract %w[%r, %v] : vector<8x${T_WEIGHT}> from vector<${RT}x${VECS}x8x${T_WEIGHT}>
          %q = vector.shape_cast %x : vector<8x${T_WEIGHT}> to vector<2x4x${T_WEIGHT}>
          %q0 = vector.extract %q[0] : vector<4x${T_WEIGHT}> from vector<2x4x${T_WEIGHT}>
          %q1 = vector.extract %q[1] : vector<4x${T_WEIGHT}> from vector<2x4x${T_WEIGHT}>
          %f0 = func.call @decode_e4m3x4(%q0) : (vector<4xi8>) -> vector<4xf32>
          %f1 = func.call @decode_e4m3x4(%q1) : (vector<4xi8>) -> vector<4xf32>
          %f = vector.shuffle %f0, %f1 [0, 1, 2, 3, 4, 5, 6, 7] : vector<4xf32>, vector<4xf32>
          %t = arith.truncf %f : vector<8xf32> to vector<8x${T}>
          %dv2 = vector.insert %t, %dv[%r, %v] : vector<8x${T}> into vector<${RT}x${VECS}x8x${T}>
          scf.yield %dv2 : vector<${RT}x${VECS}x8x${T}>
        } {gatejit.unroll}
        scf.yield %d_r : vector<${RT}x${VECS}x8x${T}>
      } {gatejit.unroll}
      %res = func.call @accumulate_decoded(%decoded, %h, %acc, %scales)
          : (vector<${RT}x${VECS}x8x${T}>, vector<${MT}x${VECS}x${H_LOADS}x8x${T}>, vector<${TILES}x4xf32>,
             vector<${RT}xf32>) -> vector<${TILES}x4xf32>
      return %res : vector<${TILES}x4xf32>
    }
